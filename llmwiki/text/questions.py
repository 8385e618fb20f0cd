"""What a question asks for, and which sentence answers it. Text in, text out (who an opening pronoun stands
for is read from the text before with a parser, ``parsing``).

An extractive answer is only as good as the sentence it puts first. Sharing
the question's words is not enough: "What was the name of James Watt's
mother?" shares "James Watt" with every sentence of his article. So each
candidate sentence is ranked by

- the question's content words it holds, weighted by how rare each is among
  the candidates (a word every candidate holds says nothing), and
- whether it holds what the question asks for, and that the question does
  not already say: a year or date for "when", a number for "how many/much",
  a name for "who" and "where", the head noun for "what/which X" (a
  "what color" question wants a sentence with a colour word in it).

Yes/no questions ("Was Lincoln the sixteenth President?") are turned into
the statement they ask about ("Lincoln was the sixteenth President") so the
verifier can score it against the best sentences (``answer``).

A sentence that opens with a pronoun ("He won the 1903 Nobel Prize") is
handed to the reader with its referent in brackets ("[Henri Becquerel] won
the 1903 Nobel Prize"): the quotation stays verbatim but for the bracket,
as in any edited quotation, and ``unbracket`` gives back the words quoted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from llmwiki.text import parsing
from llmwiki.text.segment import sentence_spans
from llmwiki.policy import ANSWER_POLICY
from llmwiki.text import (
    AUXILIARIES,
    DEMONSTRATIVES,
    DETERMINERS,
    FORMS_OF_BE,
    FORMS_OF_DO,
    GENDER,
    MONTHS,
    NEGATIONS,
    OPENING_PRONOUNS,
    PERSONAL_OPENERS,
    PERSONAL_PRONOUNS,
    POSSESSIVE_PRONOUNS,
    QUANTIFIERS,
    SPEAKERS,
    STOPWORDS,
    YEAR,
    stem,
    tokens,
)
from llmwiki.text.lexicon import default_kinds, default_lexicon

_BULLET = re.compile(r"^\s*(?:[*•]+|-\s)")


def _has_finite_verb(sentence: str) -> bool:
    """Whether a lower-case word marks a clause: an auxiliary ("is", "was", "has") or a past tense in -ed
    ("married", "succeeded"). A title, a name list or a reference line has none."""
    return any(word in AUXILIARIES or (len(word) > 4 and word.endswith("ed")) for word in re.findall(r"\b[a-z]+\b", sentence))


def reads_as_prose(sentence: str) -> bool:
    """Whether a sentence may answer a question: a line of names or a bulleted line (a reference, a link,
    a title) counts only when it holds a clause ("Cleveland was born in Caldwell, New Jersey to the Reverend
    Richard Cleveland and Anne Neal"; not "* Official site of the National Tourism Authority")."""
    words = sentence.split()
    names = sum(word[:1].isupper() for word in words) > 0.5 * len(words)
    return _has_finite_verb(sentence) or not (names or _BULLET.match(sentence))


_DATE = re.compile(rf"\b({YEAR})s?\b|\b({'|'.join(MONTHS)})\b|\b(century|centuries|decade)\b", re.IGNORECASE)
_QUANTITY = re.compile(r"\b\d[\d,.]*\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|billion|dozen|several)\b", re.IGNORECASE)
# What answers "why" (a cause or a purpose) and "how" (a means or a manner): cue words of English, not of one corpus.
_REASON = re.compile(r"\b(because|since|due to|owing to|thanks to|as a result|so that|in order to|so as to|caus(e|es|ed|ing)|reasons?|"
                     r"lead(s|ing)? to|led to|result(s|ed|ing)? (in|from)|therefore|thus|hence|allow(s|ed|ing)?|enabl(e|es|ed|ing))\b", re.IGNORECASE)
_MANNER = re.compile(r"\b(by \w+ing|by means of|using|through|via|with the help of)\b", re.IGNORECASE)
# What answers "which command / option / file ...": a name written as code or notation, the way "who" is answered by a
# capitalised name. The nouns that ask for one (a closed class of what software documentation names), and the forms
# such a name takes: a code span, an identifier with "_", "." or "()", an option ("-O", "--with-dtrace"), a quoted
# name ("fit.log") or an identifier in capitals (GNUTERM).
CODE_KINDS = frozenset({"command", "function", "method", "option", "file", "variable", "module", "class", "keyword", "setting", "flag", "switch",
                        "attribute", "parameter", "argument", "operator", "extension", "directory", "program", "terminal", "package", "library",
                        "field", "property", "macro", "exception", "statement", "symbol", "character", "key", "type", "format", "style", "value"})
_CODE_NAME = re.compile(r"`[^`]+`|\b\w+(?:[._]\w+)+\b|\w\(\)|(?<![\w-])--?[A-Za-z][\w-]*|[\"“'‘][^\"”'’\s]{2,}[\"”'’]|\b[A-Z][A-Z0-9_]{2,}\b")
_ASKS_MORE = re.compile(r"\b(list|describe|explain|why|how does|how did|how do|what are the|what were the|name the)\b", re.IGNORECASE)
_BRACKET = re.compile(r"\[([^\]\[]+?)\](?!\(|:|\[)")
# Verbs that frame an event question ("What happened in 1800?", "When did the report take place?")
# rather than name its topic: a sentence or chunk that says "happened" is no closer to the answer.
QUESTION_FRAME = frozenset({"happen", "occur"})
_FRAME_WORDS = re.compile(r"\b(happen(s|ed|ing)?|occur(s|red|ring)?|t(a|oo)ke?n? place)\b", re.IGNORECASE)


_TRUTH_FRAME = re.compile(r"^(is|was) it (true|the case|correct) that,?\s+", re.IGNORECASE)


# Phrases whose words say how, not what: "objects that are no longer reachable" is about reachable objects, not
# about anything "longer"; "at least", "as well", "so far", "of course", "at all" likewise.
_FUNCTION_PHRASES = re.compile(r"\b(?:no longer|any longer|at least|as well|so far|of course|at all|any more)\b", re.IGNORECASE)


def without_function_phrases(text: str) -> str:
    """The text without the phrases whose words say how, not what ("no longer", "at least", "as well")."""
    return " ".join(_FUNCTION_PHRASES.sub(" ", text).split())


def without_truth_frame(question: str) -> str:
    """"Is it true that otters eat urchins?" -> "otters eat urchins?": the frame asks nothing about "true"."""
    return _TRUTH_FRAME.sub("", question.strip())


# A yes/no question that opens with an adjunct before its auxiliary: "In 1900, was the bridge made of steel?".
# A second adjunct may follow, opened by a word that opens one: "In gnuplot 5, if I call fit, are all points weighted
# equally?" (an apposition is no adjunct: "Sibiu, a large city in Transylvania, was chosen ...").
_OPENS_ADJUNCT = r"(?:if|when|whenever|unless|while|once|after|before|since|until|because|although|though|as|in|on|at|by|with|without|for|from|during|under|according)"
_FRONTED = re.compile(rf"^(?P<adjunct>[^,?]{{2,80}}?(?:,\s+{_OPENS_ADJUNCT}\b[^,?]{{1,80}}?)?),\s+(?P<auxiliary>[A-Za-z]+)\b(?P<rest>[^?]*)\?\s*$", re.IGNORECASE)
# A question opened by one of these asks it, whatever commas follow: "Who, if anyone, was king?".
_WH_WORDS = frozenset({"who", "whom", "whose", "what", "which", "where", "why", "how"})
# Words that open a question without saying anything of it: "So, is it true ...?" is "Is it true ...?".
_DISCOURSE = frozenset({"so", "well", "ok", "okay", "now", "then", "and", "but", "also", "yes", "no", "hey", "oh", "right", "actually", "honestly"})


def adjunct_last(question: str) -> str:
    """A yes/no question read from its auxiliary, an adjunct before it moved to its end ("In 1900, was the bridge made
    of steel?" -> "Was the bridge made of steel in 1900?"; two of them keep their order: "In gnuplot 5, if I call fit,
    are ...?" -> "Are ... in gnuplot 5 if I call fit?") or, where it is a word that says nothing ("So, is ..."),
    dropped; any other question as it is. The statement it asks about then reads as a sentence."""
    match = _FRONTED.match(question.strip())
    if match is None or match.group("auxiliary").lower() not in AUXILIARIES:
        return question
    adjunct = " ".join(match.group("adjunct").replace(",", " ").split())  # two adjuncts read on, in their order
    first, *others = adjunct.split()
    if first.lower() in AUXILIARIES or first.lower() in _WH_WORDS:
        return question
    auxiliary, rest = match.group("auxiliary"), match.group("rest").rstrip()
    opened = f"{auxiliary[:1].upper()}{auxiliary[1:]}{rest}"
    if adjunct.lower() in _DISCOURSE:
        return f"{opened}?"
    if first.lower() in STOPWORDS or not others or not others[0][:1].isupper():  # "In 1900", "Today"; a name keeps its capitals ("Lake Geneva")
        first = first.lower()
    return f"{opened} {' '.join([first, *others])}?"


# Clauses that ask what happens when the reader sets nothing: "unless I say otherwise", "if I don't give one", "when I
# haven't set one", "without any setup", "without an error keyword", "out of the box". Documentation answers them with
# "by default" ("By default, arrows have one head"), never with the clause's own words.
_READER = r"(?:I|you|we|one|the user)"
_NOT_DONE = r"(?:don't|do not|didn't|did not|haven't|have not|never|doesn't|does not)"
_SETTING_KINDS = "|".join(sorted(CODE_KINDS | {"mode", "configuration", "setup", "options", "arguments", "keywords"}))
_CLAUSE = r"[^,?]*?(?=\s*(?:[,?]|$|\b(?:when|if|while|after|before|once|because)\b))"  # to the clause's end, not into the next
_DEFAULT_FRAMES = re.compile(
    rf",?\s*\bunless\s+(?:{_READER}\b{_CLAUSE}|(?:told|asked|specified|set|configured|given|changed|stated)\b{_CLAUSE}|[^,?]*?\b(?:otherwise|another(?: one)?|explicitly|differently)\b)"
    rf"|,?\s*\b(?:if|when|where)\s+{_READER}\s+(?:{_NOT_DONE}\b{_CLAUSE}|(?:give|set|specify|pass|choose|pick|use)\s+no\b{_CLAUSE}|leave\b[^,?]*?\b(?:alone|out|unset|empty|blank)\b{_CLAUSE})"
    rf"|,?\s*\bwithout\s+(?:any|my|your|our|extra|explicit|further|special|additional)\b{_CLAUSE}"
    rf"|,?\s*\bwithout\s+(?:a|an|the)\s+(?:[\w-]+\s+)?(?:{_SETTING_KINDS})\b"
    rf"|\s*\b(?:and|with)\s+no\s+(?:explicit|specific|particular)\s+[\w-]+"
    rf"|,?\s*\bout of the box\b",
    re.IGNORECASE)


def default_frame(question: str) -> str:
    """The question with the clause that asks what happens when the reader sets nothing read as "by default":
    "Where is the legend drawn if I don't position it myself?" -> "Where is the legend drawn by default?". A question
    without such a clause, or one that already says "default", as it is."""
    if re.search(r"\bdefault", question, re.IGNORECASE):
        return question
    stripped, count = _DEFAULT_FRAMES.subn("", question.strip())
    stripped = " ".join(stripped.split()).rstrip(" ,?")
    if not count or not question_words(stripped):
        return question
    return f"{stripped} by default?"


def without_frame(question: str) -> str:
    """The question with the verbs that frame an event taken out: "What happened in 1867?" -> "What in 1867?"."""
    stripped = " ".join(_FRAME_WORDS.sub(" ", question).split())
    return stripped if question_words(stripped) else question


@dataclass(frozen=True)
class QuestionShape:
    """What kind of answer a question wants."""

    kind: str  # yes_no | who | when | where | how_many | how_much | what | which | why | how | other
    statement: str | None = None  # yes/no: the statement the question asks about
    focus: tuple[str, ...] = ()  # what/which: the head noun's stems ("what color" -> ("color",))
    names: tuple[str, ...] = ()  # the names the question mentions, as written
    wants_more: bool = False  # "list", "describe", "why": more than a sentence or two

    @property
    def yes_no(self) -> bool:
        return self.kind == "yes_no"


def question_words(text: str) -> list[str]:
    """The words of a text that carry content: no stopwords, no auxiliaries, no question words."""
    return [word for word in _words(text) if word.lower() not in STOPWORDS and word.lower() not in AUXILIARIES and len(word) > 1]


def _words(text: str) -> list[str]:
    """``tokens``, without the comma a number token keeps when a clause ends on it ("In 1867, ...")."""
    return [word.rstrip(",") for word in tokens(text)]


def names_a_title(question: str, titles: Iterable[str]) -> bool:
    """Whether the question's content words hold a word of one of the titles: it asks about the subject of one of
    those documents ("Who assassinated Lincoln?" beside "Abraham Lincoln"; "What do beetles eat?" beside "Beetle";
    "the Voltaic Pile" beside "Volta": a word of four letters or more that the other begins with counts), not about
    something they mention in passing."""
    asked = {stem(word) for word in question_words(without_frame(question))}

    def same(first: str, second: str) -> bool:
        return first == second or min(len(first), len(second)) >= 4 and (first.startswith(second) or second.startswith(first))

    return any(same(word, named) for title in titles for named in {stem(word) for word in tokens(title)} for word in asked)


def question_names(question: str) -> tuple[str, ...]:
    """Capitalised words past the question's first word: the names it mentions."""
    words = tokens(question)
    return tuple(dict.fromkeys(word for word in words[1:] if word[:1].isupper() and word.lower() not in STOPWORDS and word.lower() not in AUXILIARIES))


_NAME_LINKS = frozenset({"of", "de", "von", "van"})  # inside a name: "the Bank of England", "Ludwig van Beethoven"


def _statement_parts(question: str) -> tuple[list[str], str, list[str]] | None:
    """(subject, auxiliary, the rest) of a yes/no question's words: "Was Lincoln the 16th President?" -> (["Lincoln"],
    "was", ["the", "16th", "President"]); "Isn't" and "Is not" give the auxiliary "is not". None when the question does
    not open with an auxiliary. The subject: "there" or "it", a run of capitalised words (with what it possesses), else
    the subject spaCy's parse finds (``_parsed_subject``: "Is polar bear a mammal?"), else a determiner and the words
    up to the next verb-like word (and a name after "of": ``_of_name``), else the first word."""
    words = without_truth_frame(question).rstrip("?").split()
    if not words or words[0].lower() not in AUXILIARIES:
        return None
    auxiliary, rest = words[0].lower(), words[1:]
    if rest[:1] and rest[0].lower() in NEGATIONS:  # "Isn't", "Wasn't" were split by tokens(); "Is not X" keeps "not" with the verb
        auxiliary, rest = f"{auxiliary} not", rest[1:]
    end = 0
    if rest and rest[0].lower() in ("there", "it"):
        end = 1
    elif rest and rest[0][:1].isupper():
        while end < len(rest) and (rest[end][:1].isupper() or (rest[end].lower() in _NAME_LINKS or rest[end].lower() == "the") and end + 1 < len(rest) and rest[end + 1][:1].isupper()):
            end += 1
        if rest[end - 1].endswith(("'s", "’s")):  # "Is Uruguay's warmest month June?": what the name has is the subject
            end = _possessed(rest, end)
    elif (parsed := _parsed_subject(words, rest)) is not None:
        end = parsed
    elif rest and rest[0].lower() in DETERMINERS:
        end = 2 if rest[0].lower() in ("all", "both") and len(rest) > 2 and rest[1].lower() in DETERMINERS else 1  # "all the soldiers"
        while (end < len(rest) and end < 4 and not rest[end].lower().endswith(("ed", "ing")) and rest[end].lower() not in AUXILIARIES
               and rest[end].lower() not in ("a", "an", "the", "in", "on", "at", "of", "to", "by", "for", "with")
               and rest[end + 1: end + 2] != ["than"] and rest[end].lower() not in ("more", "less", "fewer")):  # "the elephant heavier than ..."
            end += 1
        end = _of_name(rest, end)
    else:
        end = 1
    return rest[:end], auxiliary, rest[end:]


# The longest subject the parse may give: a longer one has taken in what the question says of it ("Were the two in a
# dispute over optical discoveries at the time?").
_PARSED_SUBJECT_WORDS = 6


def _parsed_subject(words: Sequence[str], rest: Sequence[str]) -> int | None:
    """Where the subject of a yes/no question that opens with no name ends, by the parse (``parsing.subject_end``):
    "Is polar bear a mammal?", "Can larger penguins dive deep?", "Will oil and gas probably remain ...?". None where
    the parse finds none, or one that reads as having taken in the predicate: longer than ``_PARSED_SUBJECT_WORDS``
    words, or a second noun phrase inside it not after a preposition ("the smallest penguin species the Little Blue
    Penguin"). Asked of the question without a truth frame, as ``_statement_parts`` splits it."""
    if len(words) != len(rest) + 1:  # "Is not ...": the parse reads the words as written
        return None
    end = parsing.subject_end(" ".join(words) + "?")
    if end is None or not 1 < end < len(words):
        return None
    subject = [word.lower() for word in words[1:end]]
    if len(subject) == 1 and subject[0] in DETERMINERS:
        return None  # "Are all Require directives treated ...?" parsed as "all" and a predicate noun: the noun is its head
    if len(subject) > _PARSED_SUBJECT_WORDS or any(word in DETERMINERS and subject[place - 1] not in _PREPOSITIONS for place, word in enumerate(subject) if place):
        return None
    return end - 1


def _of_name(words: Sequence[str], end: int) -> int:
    """Where a subject that a determiner opens ends when "of" and a name follow its head noun: the name belongs to it
    ("Is the capital of France Paris?", "Is the myth of Otter 's Ransom the starting point ...?", "Was the President of
    the United States ...?"). Leaves at least one word to say something of it."""
    if end + 1 >= len(words) or words[end].lower() != "of":
        return end
    start = end + 2 if words[end + 1].lower() == "the" else end + 1
    stop = start
    while stop < len(words) - 1 and (words[stop][:1].isupper() or words[stop] in ("'s", "’s") or words[stop].lower() in _NAME_LINKS and words[stop + 1][:1].isupper()):
        stop += 1
    if stop == start or not words[start][:1].isupper() or len(words) - stop == 1 and words[stop][:1].islower():
        return end  # "Is the leopard of the Felidae family?": one lower-case word left belongs to the name's phrase
    return stop


def _possessed(words: Sequence[str], start: int) -> int:
    """Where the noun phrase after a possessive name ends: its lower-case words up to a name, a determiner, an
    auxiliary or a word in -ed or -ing ("Canada's official language | Zulu", "Ford's wife | married before",
    "Ghana's head of state | John Agyekum Kufuor"), leaving at least one word to say something of it."""
    end = start
    while end < len(words) - 1:
        word = words[end].lower()
        if (words[end][:1].isupper() or word in DETERMINERS or word in AUXILIARIES or word.endswith(("ed", "ing"))
                or word == "of" and not (words[end + 1][:1].islower() and words[end + 1].lower() not in DETERMINERS)):
            break
        end += 1
    return end


def _sentence(words: Sequence[str]) -> str:
    sentence = " ".join(words)
    return sentence[:1].upper() + sentence[1:] + "."


_ASIDE = re.compile(r"\s*\([^()]*\)")


def to_statement(question: str) -> str:
    """The statement a yes/no question asks about: "Was Lincoln the 16th President?" -> "Lincoln was the 16th President."

    The auxiliary moves behind the subject (``_statement_parts``); "did/does/do" are
    dropped ("Did Lincoln sign the Act?" -> "Lincoln sign the Act."), and after "does" the verb
    takes its -s ("Does the interpreter offer ...?" -> "The interpreter offers ...": the NLI
    model reads "The interpreter offer Tab completion" as entailed 0.73, "offers" 0.91); an
    aside in parentheses is left out. Word order matters to the NLI model only; the fact
    checks read names, numbers and negations wherever they stand.
    """
    if len((plain := " ".join(_ASIDE.sub(" ", question).split())).split()) >= 3 and question_words(plain):
        question = plain  # "Is enhanced text mode (sub/superscripts) on by default?": the model reads an aside as a claim
    parts = _statement_parts(question)
    if parts is None:
        words = without_truth_frame(question).rstrip("?").split()
        if words:  # "Is it true that otters eat urchins?" asks "Otters eat urchins."
            return _sentence(words)
        return question.strip().rstrip("?") + "."
    subject, auxiliary, remainder = parts
    negated = remainder[:1] == ["not"]  # "Did he not die ...?" -> "He did not die ...", not "He not die ..."
    verb = [] if auxiliary in FORMS_OF_DO and not negated else [auxiliary]
    if auxiliary == "does" and not negated:
        remainder = _third_person(remainder)
    return _sentence([*subject, *verb, *remainder])


# Words that may stand between "does" and its verb: "Does gnuplot automatically grid ...?", "Does it still run?".
_BEFORE_VERB = frozenset({"still", "also", "ever", "always", "never", "only", "just", "really", "even", "actually", "usually", "normally"})
_IRREGULAR_THIRD = {"have": "has", "be": "is", "do": "does", "go": "goes"}
_BASE_IN_ED_ING = frozenset({"need", "feed", "seed", "embed", "exceed", "proceed", "succeed", "speed", "bleed", "breed", "shed", "bring", "sing", "ring", "string", "spring", "swing", "sting", "cling", "fling", "wring"})


def _adverb_in_ly(word: str) -> bool:
    """"automatically", "quickly"; not the verbs "apply", "reply", "rely", "rally"."""
    return len(word) >= 6 and word.endswith("ly") and not word.endswith("ply")


def _third_person(remainder: Sequence[str]) -> list[str]:
    """The words after the subject of a question that "does" opens, their verb in the third person singular:
    "offer ..." -> "offers ...", "automatically grid ..." -> "automatically grids ...". As they are where the first
    word past an adverb is no plain verb form (code, a name, a word in -ed or -ing, a function word): the subject
    may have taken the verb in ("Does the river flow ...?" read as "the river flow"), and the parse of so short a
    question is no surer."""
    remainder = list(remainder)
    at = 0
    while at < len(remainder) - 1 and (remainder[at].lower() in _BEFORE_VERB or _adverb_in_ly(remainder[at].lower())):
        at += 1
    verb = remainder[at] if at < len(remainder) else ""
    if (not re.fullmatch(r"[a-z]+", verb) or verb.endswith(("ed", "ing")) and verb not in _BASE_IN_ED_ING
            or verb in STOPWORDS and verb not in _IRREGULAR_THIRD):
        return remainder
    if verb in _IRREGULAR_THIRD:
        verb = _IRREGULAR_THIRD[verb]
    elif verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        verb += "es"
    elif verb.endswith("y") and len(verb) > 1 and verb[-2] not in "aeiou":
        verb = verb[:-1] + "ies"
    else:
        verb += "s"
    remainder[at] = verb
    return remainder


# Nouns that name a group rather than what its members are: "a group of aquatic, flightless birds" says birds.
_GROUP_NOUNS = frozenset({"group", "kind", "type", "sort", "species", "genus", "family", "member", "members", "one", "order", "class", "variety", "breed", "form"})
_WORDS_AND_MARKS = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*|[^\w\s]")  # "air-breathing" is one word
# Participles that open a phrase on the kind rather than name it: "fish characterized by ...", "a bird known as ...".
_PARTICIPLES = frozenset({"known", "found", "seen", "made", "built", "born", "called", "named", "given", "kept", "used"})
_PARENTHESIS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def kind_asked(statement: str, subject: Sequence[str]) -> str | None:
    """The kind a statement says its subject is, where that is all it says: ("A kangaroo is a reptile.", ("kangaroo",))
    -> "reptile"; "Otters are herbivores." -> "herbivores"; None for anything more ("A kangaroo is a fast reptile.",
    "Kangaroos live in Australia.") or a subject that is not the question's."""
    words = [word.lower() for word in tokens(statement)]
    be = next((index for index, word in enumerate(words) if word in FORMS_OF_BE), None)
    named = {stem(word) for word in tokens(" ".join(subject))}
    if be is None or not named or {stem(word) for word in words[:be] if word not in DETERMINERS} != named:
        return None
    kind = [word for word in words[be + 1:] if word not in ("a", "an", "the")]
    if len(kind) != 1 or kind[0] in STOPWORDS or not kind[0].isalpha():
        return None
    return kind[0]


def kind_said(sentence: str, subject: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """(the kind, the words before it) a sentence opens by saying its subject is, lower-cased: "A kangaroo is a
    marsupial from the family Macropodidae" -> ("marsupial", ()); "Otters are amphibious (or in one case aquatic)
    carnivorous mammals." -> ("mammals", ("amphibious", "carnivorous")); "Penguins (order Sphenisciformes) are a group
    of aquatic, flightless birds living ..." -> ("birds", ("aquatic", "flightless")). None where the sentence's
    subject is more or less than the question's ("Male kangaroos are ...", "Goannas, which eat kangaroos, are ..."),
    or it says what the subject is not, or one kind or another ("sad or tired"). The noun phrase after the verb ends
    at the first word that is no noun or adjective of it (a preposition, a conjunction, a relative pronoun, a
    participle, a mark other than a comma)."""
    words = [word.lower() for word in _WORDS_AND_MARKS.findall(_PARENTHESIS.sub(" ", sentence))]
    be = next((index for index, word in enumerate(words) if word in FORMS_OF_BE), None)
    named = {stem(word) for word in tokens(" ".join(subject))}
    if be is None or not named:
        return None
    before = [word for word in words[:be] if word not in ("'", "’")]
    if any(word in QUANTIFIERS or word in NEGATIONS or word in ("some", "any", "several") for word in before):
        return None  # "Some kangaroos are ..." says what some are, "No elephants are ..." what none is
    if {stem(word) for word in before if word not in DETERMINERS} != named:
        return None
    phrase: list[str] = []
    for word in words[be + 1:]:
        if word in ("a", "an", "the") and not phrase:
            continue
        if word == "of" and len(phrase) == 1 and phrase[0] in _GROUP_NOUNS:
            phrase = []  # "a group of ... birds", "one of the largest birds"
            continue
        if word == ",":
            if phrase:
                continue
            break
        if word in ("or", "nor"):
            return None  # "sad or tired" says neither
        if word in NEGATIONS or (word in STOPWORDS and word not in _GROUP_NOUNS) or not word.replace("-", "").isalpha() or (word.endswith("ing") and phrase):
            break
        phrase.append(word)
    if len(phrase) > 1 and (phrase[-1].endswith("ed") and not phrase[-1].endswith("eed") or phrase[-1] in _PARTICIPLES):
        phrase.pop()  # "elasmobranch fish characterized by ...": the kind is fish
    if not phrase or phrase[-1] in _GROUP_NOUNS:
        return None  # "a vulnerable species at high risk", "a family in the order Proboscidea": no kind said
    return phrase[-1], tuple(phrase[:-1])


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _tense_of_be(text: str) -> bool | None:
    """Whether the text's first form of "be" is past ("was", "were"); None without one."""
    word = next((word.lower() for word in tokens(text) if word.lower() in FORMS_OF_BE), None)
    return None if word is None else word in ("was", "were")


def kind_verdict(statement: str, subject: Sequence[str], sentence: str) -> tuple[str, str | None] | None:
    """("yes" or "no", why) where a sentence that opens by saying what the subject is (``kind_said``) settles a
    statement that says only what kind it is (``kind_asked``), by WordNet's kinds of living things
    (``lexicon.Kinds``): yes where the sentence's kind is the statement's or a kind of it ("A kangaroo is a marsupial"
    for "A kangaroo is a mammal": a marsupial is a kind of mammal), or a word before it is the statement's kind as an
    adjective ("carnivorous mammals": carnivores); no where the two are taxa neither of which holds the other (a
    marsupial is no reptile), or a word before it is the opposite of the statement's kind ("carnivorous" against
    "herbivores"). None where it does not say what the subject is, where WordNet relates neither, or where its tense
    is not the statement's ("Pluto was a planet" says nothing of what it is)."""
    kind = kind_asked(statement, subject)
    said = kind_said(sentence, subject) if kind is not None else None
    if said is None or _tense_of_be(sentence) != _tense_of_be(statement):
        return None
    kinds, lexicon = default_kinds(), default_lexicon()
    noun, before = said
    if stem(noun) == stem(kind) or any(len(stem(word)) >= 5 and stem(word) == stem(kind) for word in before):
        return "yes", None
    if kinds is not None and kinds.is_a(noun, kind):
        return "yes", f"WordNet: {_a(kinds.lemma(noun))} is a kind of {kinds.lemma(kind)}"
    if kinds is not None and kinds.excludes(noun, kind):
        return "no", f"WordNet: {_a(kinds.lemma(noun))} is not {_a(kinds.lemma(kind))}"
    opposed = next(((word, other) for word in before if lexicon is not None for other in lexicon.opposites(word) if stem(other) == stem(kind)), None)
    if opposed is not None:
        return "no", f"{opposed[0]}, not {opposed[1]}"
    return None


def _past_auxiliary(question: str) -> tuple[str, bool, list[str]] | None:
    """(the question without a truth frame, whether it had one, its words past the opening auxiliary or the frame, as
    written, quotes and brackets stripped); None when it neither opens with an auxiliary nor is framed."""
    statement = without_truth_frame(question)
    framed = statement != question.strip()
    words = [word.strip(",;:\"“”()") for word in statement.rstrip("?").split()]
    if not framed and (not words or words[0].lower() not in AUXILIARIES):
        return None
    return statement, framed, [word for word in words[0 if framed else 1:] if word]


def question_subject(question: str) -> tuple[str, ...]:
    """What a yes/no question is about: the words a sentence (or its document's title) must name before its yes or
    no counts. The names it opens with after the auxiliary and any determiner, as written ("Is the Giant Panda a
    mammal?" -> ("Giant", "Panda"); "Is Canada's official language Zulu?" -> ("Canada",)), else the head noun of
    its subject, lower-cased ("Does a polar bear live in the Arctic?" -> ("bear",); by the parse, else the first
    word); the object of its verb where its subject is the reader ("Can I import curses on Windows?" -> ("curses",));
    () when its subject is a pronoun ("Was he ...?": who is meant is settled elsewhere) or "there", or the
    question is not of a yes/no question's shape. "Is it true that S?" is about the subject of S, read from the parse
    where S opens with an adjunct ("Is it true that on March 1, 2017 Powell was named ...?" -> ("Powell",))."""
    if (past := _past_auxiliary(question)) is None:
        return ()
    statement, framed, words = past
    if framed and (after := parsing.subject_after_adjunct(statement)) is not None:
        return after  # "Is it true that on March 1, 2017 Powell was named ...?" is about Powell, not "On March"
    while words and words[0].lower() in _LEADING:
        words = words[1:]
    if words and words[0].lower() in SPEAKERS:  # "Can I import curses on Windows?" is about curses
        return parsing.object_head(to_statement(question)) or ()
    if not words or words[0].lower() in PERSONAL_PRONOUNS | DEMONSTRATIVES | {"there", "it"}:
        return ()
    run = []
    for word in words:
        if not word[:1].isupper() or word.lower() in DETERMINERS or word.lower() in AUXILIARIES:
            break
        run.append(word[:-2] if word.endswith(("'s", "’s")) else word)
        if word.endswith(("'s", "’s")):
            break
    if run:
        return tuple(run)
    head = parsing.subject_head(to_statement(question)) or parsing.subject_head(question.strip())
    if head is None:
        first = words[0].removesuffix("'s").removesuffix("’s")
        head = (first.lower(),) if first.isalpha() and first.lower() not in STOPWORDS and first.lower() not in AUXILIARIES else ()
    return head


def pronoun_subject(question: str) -> str | None:
    """The personal pronoun a yes/no question has for its subject, lower-cased ("Does it have a border with Norway?" ->
    "it", "Is it true that they ...?" -> "they"), which only the page or conversation it was asked beside can say who
    or what is, whatever else the question names; None when its subject is named, or for an "it" that stands for
    nothing ("Is it possible that there are more than 350,000 species?")."""
    if (past := _past_auxiliary(question)) is None:
        return None
    statement, framed, words = past
    pronoun = words[0].lower() if words else ""
    if pronoun not in PERSONAL_PRONOUNS or pronoun in POSSESSIVE_PRONOUNS:
        return None
    if pronoun == "it" and parsing.expletive_it(to_statement(statement if framed else question)):
        return None
    return pronoun


# What leads a subject phrase without being its name or head: "Are Various trees claimed to be ...?" is about trees.
_LEADING = DETERMINERS | QUANTIFIERS | {"various", "several", "certain", "both", "such", "other"}
# A word of code or notation ("f.close", "%", "-O", "::4"): matched as written, not by its letters' stem.
_CODE_LIKE = re.compile(r"[^\w'’-]|^-|\w[.]\w")
_NAME_PARTICLES = frozenset({"of", "de", "da", "del", "der", "van", "von", "the", "jr", "sr"})


def names_subject(subject: Sequence[str], text: str, *, title: str = "") -> bool:
    """Whether a text (or the title of its document) names what ``question_subject`` found. A name: each of its
    words of three letters or more, as written or, for words of five letters or more, by stem ("Calvin" of "Calvin
    Jr."; both words of "John Adams", which "Adam Curtis" does not name; a name read past a slip, "Monro", names
    "Monroe"), name particles aside; a name of shorter words ("U.S.") as written. A common
    noun: its head by stem ("Elephants" names "elephant"), and one of the words compounded into it unless the title
    names the head ("polar bear": "the Brown Bear and the Gray Wolf" in "Finland" does not name it; "Young bears
    stay with their mother" in "Polar bear" does). A word of code or notation ("x.f", "%", "-O") as written, in
    any case, without the backquotes of a code span. No subject: every text may speak to it."""
    if not subject:
        return True
    written = tokens(f"{text} {title}")
    held = {stem(word) for word in written}
    as_written = f"{text} {title}".replace("`", "").lower()
    if all(_CODE_LIKE.search(word) for word in subject):  # "x.f", "%", "-O": as written, a code span's quotes aside
        return all(word.lower() in as_written for word in subject)
    if subject[0][:1].isupper():
        words = [word for word in subject if word.isalpha() and len(word) >= 3 and word.lower() not in _NAME_PARTICLES]
        if not words:
            return " ".join(subject) in f"{text} {title}"
        lowered = {word.lower() for word in written}
        long_stems = {stem(word) for word in written if len(word) >= 5}  # "Monroe" for "Monro"; not "Adam" for "Adams"
        return all(word.lower() in lowered or len(word) >= 5 and stem(word) in long_stems for word in words)
    *modifiers, head = subject

    def holds(word: str) -> bool:
        return word.lower() in as_written if _CODE_LIKE.search(word) else stem(word) in held

    if not holds(head):
        return False
    return not modifiers or any(map(holds, modifiers)) or stem(head) in {stem(word) for word in tokens(title)}


# An "or" that offers alternatives to choose from ("Is Canada bigger or smaller than Egypt?", "Does an otter give birth
# or lay eggs?"), not one that ends a range or a count ("to live to 90 or more years", "18 or older", "true or not").
_ALTERNATIVES = re.compile(r"\bor\b(?! (?:more|less|fewer|so|not|later|earlier|older|younger|longer|above|below|over|under)\b)")


def shape(question: str) -> QuestionShape:
    """Classify a question by what it asks for."""
    text = " ".join(question.split())
    lowered = text.lower()
    words = lowered.rstrip("?").split()
    names = question_names(text)
    wants_more = bool(_ASKS_MORE.search(text))
    if not words:
        return QuestionShape("other")
    first = words[0]
    if first in AUXILIARIES and not _ALTERNATIVES.search(lowered):
        return QuestionShape("yes_no", statement=to_statement(text), names=names)
    if "how many" in lowered:
        return QuestionShape("how_many", names=names, wants_more=wants_more)
    if re.search(r"\bhow (much|long|old|far|tall|large|big|high|heavy)\b", lowered):
        return QuestionShape("how_much", names=names, wants_more=wants_more)
    if re.search(r"\b(when|what year|which year|what date|what century|what decade)\b", lowered):
        return QuestionShape("when", names=names, wants_more=wants_more)
    if re.search(r"\bwho(m|se)?\b", lowered):
        return QuestionShape("who", names=names, wants_more=wants_more)
    if re.search(r"\bwhere\b", lowered):
        return QuestionShape("where", names=names, wants_more=wants_more)
    if re.search(r"\bwhy\b", lowered):
        return QuestionShape("why", names=names, wants_more=True)
    match = re.search(r"\b(what|which)\b", lowered)
    if match:
        # The head noun: right after what/which ("what color", "which spice", "what kind of tree"), or in
        # "what is the X of ..." ("what was the name of James Watt's mother" -> mother). "What did X do"
        # names no head: the verb is not what the answer must hold.
        after = [word.strip(",.;:'\"") for word in text[match.end():].rstrip("?").split()]
        position = 0
        if after and after[0].lower() in AUXILIARIES:
            position = 1 if len(after) > 1 and after[1].lower() in DETERMINERS else len(after)
        focus: tuple[str, ...] = ()
        for place, word in enumerate(after[position:], start=position):
            lowered_word = word.lower()
            if lowered_word in DETERMINERS or lowered_word in ("name", "names", "kind", "kinds", "type", "types", "sort", "form", "of") or word[:1].isupper() or word.endswith(("'s", "’s")):
                continue
            if lowered_word not in STOPWORDS and lowered_word not in AUXILIARIES:
                following = stem(after[place + 1]) if place + 1 < len(after) else ""
                # "which environment variable": the kind asked for is the noun the head modifies, and counts too
                focus = (stem(lowered_word), following) if following in _CODE_KIND_STEMS else (stem(lowered_word),)
            break
        return QuestionShape(match.group(1), focus=focus, names=names, wants_more=wants_more)
    if re.search(r"\bhow\b", lowered):
        return QuestionShape("how", names=names, wants_more=True)
    return QuestionShape("other", names=names, wants_more=wants_more)


def _has_answer_type(kind: str, sentence: str, question_stems: set[str], focus: Sequence[str]) -> bool:
    """Whether the sentence holds something of the kind asked for that the question does not already say."""
    new_words = [word for word in _words(sentence) if stem(word) not in question_stems]
    new_text = " ".join(new_words)
    if kind == "when":
        return bool(_DATE.search(new_text))
    if kind in ("how_many", "how_much"):
        return bool(_QUANTITY.search(new_text))
    if kind in ("who", "where"):
        return any(word[:1].isupper() and len(word) > 1 and word.lower() not in STOPWORDS for word in new_words[1:])
    if kind == "why":
        return bool(_REASON.search(new_text))
    if kind == "how":
        return bool(_MANNER.search(new_text))
    if kind in ("what", "which") and focus:
        if set(focus) & {stem(word) for word in _words(sentence)}:
            return True
        return bool(set(focus) & _CODE_KIND_STEMS) and any(_new_code(match.group(), question_stems) for match in _CODE_NAME.finditer(sentence))
    return False


_CODE_KIND_STEMS = frozenset(stem(word) for word in CODE_KINDS)


def _new_code(name: str, question_stems: set[str]) -> bool:
    """Whether a name written as code says something the question does not: one of its words is not the question's."""
    return any(stem(word) not in question_stems for word in tokens(name))


def rank_sentences(question: str, candidates: Sequence[str], *, question_shape: QuestionShape | None = None, priors: Sequence[float] | None = None,
                   subjects: Sequence[str] | None = None, type_bonus: float = ANSWER_POLICY.answer_type_bonus) -> list[tuple[float, int]]:
    """(score, index) of each candidate sentence, best first.

    score = question words held (IDF over the candidates, as a share of the
    question's total; a name the question mentions weighs at least as much
    as its rarest other word, since every sentence of the right article
    holds it and it still decides between articles) + type_bonus when it holds
    the kind of thing asked for + a small prior (the selector's order).
    subjects: per candidate, its document's title: the names there count as
    held, since a sentence is about its article's subject even when it says
    "he".
    """
    question_shape = question_shape or shape(question)
    question_stems = {stem(word) for word in question_words(without_frame(question))}
    name_stems = {stem(name) for name in question_shape.names} & question_stems
    sentence_stems = [{stem(word) for word in _words(sentence)} for sentence in candidates]
    subject_stems = [{stem(word) for word in tokens(subject)} & name_stems for subject in subjects] if subjects is not None else [set()] * len(candidates)
    count = len(candidates)
    weights = {term: math.log(1 + count / (1 + sum(term in held for held in sentence_stems))) for term in question_stems}
    rarest = max((weight for term, weight in weights.items() if term not in name_stems), default=1.0)
    weights.update({term: max(weights[term], rarest) for term in name_stems})
    total = sum(weights.values()) or 1.0
    ranked = []
    for index, held in enumerate(sentence_stems):
        held = held | subject_stems[index]
        overlap = sum(weight for term, weight in weights.items() if term in held) / total
        typed = type_bonus if overlap > 0 and _has_answer_type(question_shape.kind, candidates[index], question_stems, question_shape.focus) else 0.0
        prior = priors[index] if priors is not None else 0.0
        ranked.append((overlap + typed + prior, index))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return ranked


_NAME_RUN = re.compile(r"\b((?:[A-Z][\w'’-]+)(?:[ ]+(?:(?:of|de|von|van|du|da|la|le)[ ]+)?[A-Z][\w'’-]+)*)")


_OPENER_FOLLOWERS = DEMONSTRATIVES | POSSESSIVE_PRONOUNS | {"to", "the", "a", "an", "in", "on", "at", "for", "with", "from", "by", "of"}


# Conjunctive adverbs (a closed class): a sentence that opens with one ("Furthermore, he ...") names no one there.
_CONNECTIVES = frozenset("""
moreover furthermore nevertheless nonetheless meanwhile therefore hence consequently accordingly besides instead
otherwise afterwards afterward later still indeed thereafter likewise conversely overall today
""".split())


def _is_opener(sentence: str, match: re.Match) -> bool:
    """A capitalised first word that opens a clause rather than naming anyone: "According to ...",
    "Following the ...", "Interestingly, ..." (-ing or -ly, then a comma or a function word).
    A conjunctive adverb ("Furthermore, ...") is taken off the run in ``_subject_names``."""
    word = match.group(1)
    if match.start() != 0 or " " in word or not word.lower().endswith(("ing", "ly")):
        return False
    rest = sentence[match.end():].lstrip()
    return rest.startswith(",") or rest.split(" ", 1)[0].lower() in _OPENER_FOLLOWERS
_PREPOSITIONS = frozenset("in on at by after before during since until from through under over among between within without for of to".split())


def _at_head(before: str) -> bool:
    """Whether a name after this text is the sentence's subject: past an opening phrase closed by a
    comma that names no one ("According to this legend, Cook ..."), nothing but function words, numbers
    and conjunctive adverbs ("In 1896 Becquerel ..."), or a short opening prepositional phrase ("In this
    book Darwin ..."). A name after a verb or a common noun is in the predicate ("He fared poorly in
    French", "His family moved North"): there the subject is someone else."""
    opening, _, rest = before.rpartition(",")
    opening_words = re.findall(r"[\w'’-]+", opening)
    if opening_words[:1] and opening_words[0].lower() in PERSONAL_PRONOUNS or any(word[:1].isupper() for word in opening_words[1:]):
        return False  # not an opening phrase but a clause or a list of names ("He went to Lyon, France")
    words = re.findall(r"[\w'’-]+", rest)
    content = [word for word in words if word.lower() not in STOPWORDS and word.lower() not in _CONNECTIVES and not word[:1].isdigit()]
    if not content:
        return True
    return words[0].lower() in _PREPOSITIONS and len(content) <= 2 and not any(word.lower() in PERSONAL_PRONOUNS for word in words)


def _subject_names(text: str) -> tuple[str, str | None] | None:
    """(the first name of the text's last sentence, or a list "A and [someone] B" when two names
    are joined there), or None when that sentence names no one."""
    spans = sentence_spans(text)
    if not spans:
        return None
    sentence = text[spans[-1][0]:spans[-1][1]]
    for match in _NAME_RUN.finditer(sentence):
        if _is_opener(sentence, match):
            continue
        run = match.group(1).split()
        if match.start() == 0 and run[0].lower() in _CONNECTIVES:  # "Later Cleveland won": the name after the adverb
            run = run[1:]
        words = [word for word in run if word.lower() not in STOPWORDS and word.lower() not in OPENING_PRONOUNS]
        if words and words[0] == run[0] and _at_head(sentence[:match.start()]):
            joined = re.match(r"(?:,)?[ ]+and[ ]+(?:[a-z]+[ ]+){0,2}?" + _NAME_RUN.pattern[2:], sentence[match.end():])
            start = match.start() + match.group(1).index(run[0])
            both = sentence[start:match.end() + joined.end()] if joined else None
            return " ".join(words), both
    return None


def last_person(text: str) -> str | None:
    """The subject of the text's last sentence, when it is a name (its first run of capitalised words
    that is not a common word nor a clause opener like "According"): who "he" or "she" in the next
    sentence most likely is."""
    found = _subject_names(text)
    return found[0] if found else None


def last_people(text: str) -> str | None:
    """Two names joined by "and" at the head of the text's last sentence ("Captain James Cook and
    naturalist Sir Joseph Banks were exploring ..."): who "they" in the next sentence most likely are."""
    found = _subject_names(text)
    return found[1] if found else None


def _other_person(preceding: str, title: str) -> str | None:
    """Who an opening "she" most likely is when the article's subject is not a woman: the first person the
    sentence before names, else the one before that, the article's own subject aside ("In 1764, Watt married his
    cousin Margaret Miller ... She died in childbirth" -> Margaret Miller; "The current office-holder is President
    Tarja Halonen. She began ..." -> Tarja Halonen). None when the subject is a woman (the text before says she/her
    more than he/his and the title names a person) or the text names no one else (or there is no parser)."""
    named = parsing.people(preceding)
    if not named:
        return None
    genders = [GENDER[word] for word in re.findall(r"[a-z]+", preceding.lower()) if word in GENDER]
    if genders.count("f") > genders.count("m") and parsing.people(title, sentences=1):
        return None
    others = [name for name in named if not set(name.split()) <= set(title.split())]
    return others[0] if others else None


def resolve_opening_pronoun(sentence: str, referent: str, *, preceding: str = "") -> str:
    """"He won ..." -> "[Henri Becquerel] won ..."; "His father ..." -> "[Henri Becquerel's] father ..."; else unchanged.

    referent: the document's title, what "it", "they" and "this" refer to
    when the sentence before offers nothing else;
    "he" and "she" refer to the last name in the preceding text when there is
    one (in an article on kangaroos, "He asked a local" is Cook), else to the title,
    which also stands for a name it holds ("Adams" in an article on John Adams);
    "she", when the article is not about a woman, first to another person named
    just before (``_other_person``: "Watt married Margaret Miller. She died ...");
    "they" to two names joined by "and" at the head of the sentence before, when
    there are ("Cook and Banks were exploring. They asked a local ..."), else to
    that sentence's plural subject ("Most owls feed on rodents. They nest ...");
    "it" and "its" to that sentence's singular subject when it names a thing the
    title does not ("The building by the Swiss architects is a landmark. It was
    completed in 2000"), and an "it" that stands for nothing ("It is said he
    kept ...", ``parsing.expletive_it``) is left as it is.
    """
    match = re.match(r"^([A-Z][a-z]*)\b", sentence)
    if match is None:
        return sentence
    pronoun = match.group(1).lower()
    if pronoun not in OPENING_PRONOUNS:
        return sentence
    if pronoun in ("she", "her") and (other := _other_person(preceding, referent)):
        referent = other
    elif pronoun in PERSONAL_OPENERS:
        person = last_person(preceding)
        person = person and re.sub(r"['’]s?$", "", person)  # "Lincoln's rhetoric ... His command": Lincoln
        if person and not set(person.split()) <= set(referent.split()) and parsing.names_person(preceding, person) is not False:
            referent = person  # not a surname the title holds ("Adams" in "John Adams"), and a person, not "Largely" or "Congress"
    elif pronoun in ("they", "their"):  # people named together just before, else the plural subject there, else the title
        referent = last_people(preceding) or parsing.plural_subject(preceding, head_only=pronoun == "their") or referent
    elif pronoun in ("it", "its"):
        if pronoun == "it" and parsing.expletive_it(sentence):
            return sentence  # "It is said he kept ...": no one belongs in its place
        subject = parsing.singular_subject(preceding)
        if subject and not {stem(word) for word in tokens(subject)} & {stem(word) for word in tokens(referent)}:
            referent = subject  # what the sentence before is about ("The building ... It was completed"), unless the title ("The gray wolf ...")
    if not referent:
        return sentence
    referent = referent[:1].upper() + referent[1:]
    if pronoun == "their" and referent.endswith("s"):
        return f"[{referent}']" + sentence[match.end():]  # [Penguins'] wings
    if pronoun in ("this", "these") and len(sentence.split()) > 1 and sentence.split()[1].lower() not in AUXILIARIES:
        return sentence  # "This species ...", "This SystemTap script ..." name their own subject
    return f"[{referent}{OPENING_PRONOUNS[pronoun]}]" + sentence[match.end():]




def opens_with_pronoun(text: str) -> bool:
    """Whether an answer starts with an unresolved pronoun (an "it" that stands for nothing is none)."""
    first = re.match(r"^\W*([A-Za-z]+)", text)
    if first is None or first.group(1).lower() not in PERSONAL_PRONOUNS:
        return False
    return not (first.group(1).lower() == "it" and parsing.expletive_it(text[first.start(1):]))  # "It is said ..." refers to nothing


_BINDING = frozenset({"who", "whom", "whose"})


def unnamed_person(question: str) -> str | None:
    """The he/she (him, his, her) of a question that names no one ("When did he publish a collection?"), which only
    the page it was asked beside can say who is; None when it names someone, or when "who" asks for the person the
    pronoun stands for ("Who lost control of his party?")."""
    words = re.findall(r"[A-Za-z]+", question)
    if not words or words[0].lower() in _BINDING or question_names(question):
        return None
    return next((word.lower() for word in words if word.lower() in GENDER and not word.lower().endswith("self")), None)


def has_pronoun(text: str) -> bool:
    """Whether the text says he, she, it, they (or their other forms) anywhere."""
    return any(word.lower() in PERSONAL_PRONOUNS for word in re.findall(r"[A-Za-z]+", text))


def opening_referent(text: str) -> str | None:
    """The referent an edited quotation put in for its opening pronoun ("[The building] was completed ..." -> "The
    building"), or None when it opens as written."""
    match = _BRACKET.match(text)
    return match.group(1) if match else None


def debracket(text: str) -> str:
    """An edited quotation as plain text, its inserted referents kept: "[Liechtenstein] is ..." -> "Liechtenstein is ...",
    what an NLI model should read in place of "It is ..."."""
    return _BRACKET.sub(r"\1", text)


def unbracket(text: str) -> str:
    """An edited quotation's inserted referents removed again, for checks against the source."""
    return _BRACKET.sub("", text)
