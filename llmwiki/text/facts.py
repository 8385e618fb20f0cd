"""Fact checks: does the evidence hold every fact a sentence asserts?

An NLI model reads the gist: "The five western provinces ... are Swahili
speaking" against "the five eastern provinces ... are Swahili speaking"
shares nearly every word, and a small model calls it entailed. A reviewer
needs the opposite answer, with the reason. So beside the model's
probability each sentence (each clause, when clauses are scored) is checked
against its anchor, the evidence window that best holds its wording:

- numbers and dates, normalised ("1,745" = "1745", "five" = "5",
  "sixteenth" = "16th" = "16", "3 million" = "3000000", "1800s" = "1800");
- names: capitalised words that the evidence's documents use as names (a
  capitalised word at the start of a sentence counts only when the context
  uses it capitalised mid-sentence). A name the anchor lacks is still found
  when the anchor refers back with a pronoun and the name stands earlier in
  the same chunk or in the document's title ("He was born in Como" supports
  "Volta was born in Como");
- polarity: a word both say that a negation governs in one and not the
  other ("did not turn down" against "turned down", whatever else either
  negates; a clause that ends on its negation governs its words, "... but
  formatted bytes literals are not", and "rather than" what it sets aside),
  a word whose WordNet
  antonym stands in the anchor where the word does not ("western" for
  "eastern", "lower" for "higher", "few" for "many": quantifiers count
  though they are stopwords; see ``lexicon``), the same in the one clause
  of a contrasting sentence that holds most of the claim ("coolest" for
  "warmest" in "The coolest month is June, while the warmest is January"),
  and a pronoun of the other gender than the anchor's ("she" where the
  evidence says "he").

The anchor is chosen by the sentence's other content words (its predicate),
not by its names and numbers, and shorter windows win ties: a name swapped
for another one from the same article would otherwise pull in the window
where that name happens to stand.

Everything here is pure: text in, ``FactCheck`` out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from llmwiki.text.segment import split_sentences
from llmwiki.policy import VERIFY_POLICY
from llmwiki.text import CLAUSE_BREAK, CONTRAST_BREAK, FORMS_OF_BE, FORMS_OF_DO, FORMS_OF_HAVE, GENDER, MODALS, NEGATIONS, OBJECT_PRONOUNS, POSSESSIVE_PRONOUNS, QUANTIFIERS, REFERRING_WORDS, STOPWORDS, alternation, stem, tokens
from llmwiki.text.lexicon import default_lexicon

# The anchor sentence is found in its context by its first characters (enough to be unique in a passage).
_ANCHOR_PREFIX = 40
_NUMBER = re.compile(r"^(\d[\d,]*(?:\.\d+)?)(st|nd|rd|th|s)?$")
_OPENING = re.compile(r"[.!?][\"')\]”’]*\s+(?=[\"'“(]?[A-Z])")
_UNITS = {"zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
          "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
          "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
          "hundred": 100, "dozen": 12}
_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
             "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17,
             "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50,
             "hundredth": 100, "thousandth": 1000}
_TENS = frozenset({"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"})
_ONES = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_ONES_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9}
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "trillion": 1_000_000_000_000}
# "one" and "first" are left out: "one of the", "the first to" are wording more often than facts.
def _number(token: str) -> str | None:
    match = _NUMBER.match(token)
    if match is None:
        word = token.lower()
        value = _UNITS.get(word, _ORDINALS.get(word))
        return None if value is None else str(value)
    digits = match.group(1).replace(",", "")
    if digits.endswith(".0"):
        digits = digits[:-2]
    return digits


# A span of years written short: "2018–19" is 2018 to 2019 (a season, an academic or a fiscal year), never the number 19.
_SHORT_SPAN = re.compile(r"\b(1[0-9]|20)(\d\d)(\s*[–—-]\s*)(\d\d)\b(?![.,]?\d)")


# A printed manual's cross-reference states no fact: "see practical guidelines (p. 95)", "(see page 12)".
_PAGES = r"(?:p|pp|page|pages)\.?\s*\d+(?:\s*[-–]\s*\d+)?"
_PAGE_REFERENCE = re.compile(rf"\s*\((?:see\s+)?{_PAGES}\)|\b(?:see|on)\s+{_PAGES}", re.IGNORECASE)


def _full_spans(text: str) -> str:
    """The text with each short span of years written out: "the 2018–19 academic year" -> "the 2018–2019 academic year"."""
    def written_out(match: re.Match) -> str:
        century, start, dash, end = match.groups()
        return match.group(0) if int(end) <= int(start) else f"{century}{start}{dash}{century}{end}"
    return _SHORT_SPAN.sub(written_out, text)


def _kind(value: str) -> str:
    """What a normalised number states, for telling a rival value from an unrelated one: a year or a quantity."""
    return "year" if value.isdigit() and len(value) == 4 and 1000 <= int(value) <= 2100 else "quantity"


def _countable(word: str) -> bool:
    """A number or ordinal, "first" and "one" included (in the same slot they state a count or a rank)."""
    return _number(word) is not None or word.lower() in ("first", "one", "last")


def numbers(words: Sequence[str]) -> dict[str, str]:
    """The numbers a token list states: {normalised value: as written}; a number followed by a scale word is multiplied out."""
    found: dict[str, str] = {}
    skip = -1
    for index, word in enumerate(words):
        if index == skip:
            continue
        value = _number(word)
        if value is None:
            continue
        following = words[index + 1].lower() if index + 1 < len(words) else ""
        if word.lower() in _TENS and (following in _ONES or following in _ONES_ORDINAL):  # "thirty-eighth", "twenty one"
            found.setdefault(str(int(value) + _ONES.get(following, _ONES_ORDINAL.get(following, 0))), f"{word}-{words[index + 1]}")
            skip = index + 1
            continue
        following = words[index + 1].lower() if index + 1 < len(words) else ""
        if following in _SCALES:
            try:
                scaled = float(value) * _SCALES[following]
                found.setdefault(str(int(scaled)) if scaled == int(scaled) else str(scaled), f"{word} {words[index + 1]}")
                continue
            except ValueError:
                pass
        found.setdefault(value, word)
    return found


def name_words(texts: Iterable[str]) -> frozenset[str]:
    """Lower-cased words that the texts write capitalised in mid-sentence: the names they use."""
    names = set()
    for text in texts:
        for sentence in split_sentences(text):
            for word in tokens(sentence)[1:]:
                if word[:1].isupper() and len(word) > 1 and word.lower() not in STOPWORDS:
                    names.add(word.lower())
    return frozenset(names)


def _content(words: Sequence[str]) -> list[str]:
    return [word for word in words if word.lower() not in STOPWORDS and word.lower() not in NEGATIONS and (len(word) > 2 or word[:1].isdigit())]


# Verbs that pass a negation on to the verb of their "to" clause: "does not allow us to mark", "do not need to be
# listed", "do not have to be comparable" say "not" of marking, listing, being comparable.
_PASS_NEGATION_ON = FORMS_OF_HAVE | {"allow", "allows", "allowed", "permit", "permits", "permitted", "let", "lets", "enable", "enables",
                                     "need", "needs", "needed", "require", "requires", "required", "want", "wants"}
# The object a "to" clause's verb may take first: "allow us to", not "have access to".
_TO_OBJECTS = OBJECT_PRONOUNS | {"me", "us", "you", "her", "it", "one"}


def _negated(words: Sequence[str], near: set[str], *, scope: int = VERIFY_POLICY.negation_scope) -> set[str]:
    """The stems in near that a negation governs: those of the scope words after it ("never accepted the offer":
    accept, offer), and where the first is a verb that passes the negation on (``_PASS_NEGATION_ON``) with "to" next
    or after a pronoun, that verb and the scope words of its "to" clause ("does not allow us to mark fields": allow,
    mark, fields; "do not have access to the text" is read as before)."""
    governed = set()
    for index, word in enumerate(words):
        if word.lower() in NEGATIONS:
            after = words[index + 1:]
            window = after[:scope]
            lowered = [other.lower() for other in after[:3]]
            if lowered and lowered[0] in _PASS_NEGATION_ON:
                to = 1 if lowered[1:2] == ["to"] else 2 if lowered[2:3] == ["to"] and lowered[1] in _TO_OBJECTS else None
                if to is not None:
                    clause = after[to + 1:]
                    if clause and clause[0].lower() in ("be", "been"):
                        clause = clause[1:]  # "need to be listed": listed
                    window = after[:1] + clause[:scope]
            governed |= {stem(other) for other in window if other.lower() not in STOPWORDS} & near
    return governed


# A clause that ends on its negation says "not" of what it names before it: "raw formatted strings are possible, but
# formatted bytes literals are not"; "Beetles are found in most habitats, but not in the polar regions" is read by the
# scope after the negation. What "rather than" or "instead of" names is set aside: "weeks that start on Sunday rather
# than Monday".
_CLAUSE_END = re.compile(rf"{CLAUSE_BREAK.pattern}|[.!?]|\b(?:and|so|therefore)\b", re.IGNORECASE)  # where a clause ends, or the next is joined on
_SET_ASIDE = re.compile(r"\b(?:rather than|instead of)\b", re.IGNORECASE)
_NEGATION_LINKS = FORMS_OF_BE | FORMS_OF_DO | FORMS_OF_HAVE | MODALS


def _negated_in(text: str, words: Sequence[str], near: set[str], *, scope: int = VERIFY_POLICY.negation_scope) -> set[str]:
    """``_negated`` over a text's words (``tokens(text)``), with what a clause ending on its negation ("..., but X are
    not") and what "rather than" sets aside govern: the stems of those clause words in near that the text says nowhere
    else ("raw formatted strings are possible, but formatted bytes literals are not" negates "bytes" and "literals",
    not "formatted"). Read on every claim and anchor a page's verification checks: a text with no negation and nothing
    set aside is not split into clauses."""
    governed = _negated(words, near, scope=scope)
    negates = any(word.lower() in NEGATIONS for word in words)
    if not near or not negates and _SET_ASIDE.search(text) is None:
        return governed
    spans = [match.span() for match in _CLAUSE_END.finditer(text)]
    starts, ends = [0, *(end for _, end in spans)], [*(start for start, _ in spans), len(text)]
    for start, end in zip(starts, ends):
        words = tokens(text[start:end])
        if len(words) >= 3 and words[-1].lower() in NEGATIONS and (words[-1].lower() != "not" or words[-2].lower() in _NEGATION_LINKS):
            governed |= _said_only_there(text, start, end, near)
    for match in _SET_ASIDE.finditer(text):
        end = next((start for start, _ in spans if start >= match.end()), len(text))
        governed |= _said_only_there(text, match.end(), end, near)
    return governed


def _said_only_there(text: str, start: int, end: int, near: set[str]) -> set[str]:
    """The stems in near of the content words of text[start:end] that the rest of the text does not hold."""
    inside = {stem(word) for word in tokens(text[start:end]) if word.lower() not in STOPWORDS} & near
    return inside - {stem(word) for word in tokens(text[:start] + " " + text[end:])}


# A superlative with what ranks it: "the second highest", "the 17th wealthiest", "one of the most populous", "the
# largest", "Egypt's largest". "The world's second highest level" is not "the world's highest level".
_SUPERLATIVE = re.compile(
    rf"\b(?:(?P<rank>(?:{alternation(_ORDINALS)}|\d+(?:st|nd|rd|th))[\s-]+)|(?P<among>one of the\s+)"
    rf"|(?:{alternation(POSSESSIVE_PRONOUNS | {'the', 'our'})})\s+|\w+['’]s\s+)(?P<word>most|least|best|worst|\w{{3,}}est)\b",
    re.IGNORECASE,
)


def _superlative_ranks(text: str) -> dict[str, set[str]]:
    """{superlative: the ranks the text gives it}: "" for the first ("the highest"), "second", "one of the"."""
    ranks: dict[str, set[str]] = {}
    for match in _SUPERLATIVE.finditer(text):
        rank = match.group("rank") or match.group("among") or ""
        ranks.setdefault(match.group("word").lower(), set()).add(" ".join(rank.lower().replace("-", " ").split()))
    return ranks


def _ranked_superlatives(claim: str, anchor: str) -> list[tuple[str, str]]:
    """(the claim's word, the anchor's ranked superlative) for each superlative both give, but ranked otherwise:
    the claim's "highest" where the anchor says only "second highest", or "second largest" where it says "largest".
    "One of the highest" asks less: any rank holds it ("the highest", "the third highest")."""
    anchor_ranks = _superlative_ranks(anchor)
    opposed = []
    for word, ranks in _superlative_ranks(claim).items():
        held = anchor_ranks.get(word)
        if held and not ranks & held and ranks != {"one of the"}:
            rank = min(ranks)
            opposed.append((rank.split()[0] if rank else word, f"{min(held)} {word}".strip()))
    return opposed


_OTHER = frozenset({"other", "others", "another"})
_THE_ONLY = POSSESSIVE_PRONOUNS | {"the"}  # "the only sitting president", "its only port"; not "digital only publications"


def _only_against_other(claim_words: Sequence[str], anchor_words: Sequence[str], *, reach: int = 4) -> list[tuple[str, str]]:
    """("other", "only") where the claim speaks of other things of a kind and the anchor of the only one: "Other US
    presidents have visited Cuba" against "... the only sitting U.S. President to visit the country". The kind is the
    last of the content words right after each ("presidents", "President"); "the only other republic" and "no other
    way" speak of no others."""
    claim_lower = [word.lower() for word in claim_words]

    def kind_after(words: Sequence[str], index: int) -> str | None:
        """The stem of the last word of the run of content words right after index: "other US presidents that" -> presid
        ("US" as written is no "us")."""
        run = []
        for word in words[index + 1: index + 1 + reach]:
            if (word.lower() in STOPWORDS and not word.isupper()) or word.lower() in _OTHER or _number(word) is not None:
                break
            run.append(word)
        return stem(run[-1]) if run else None

    only = {kind_after(anchor_words, place) for place, word in enumerate(anchor_words)
            if word.lower() == "only" and place and anchor_words[place - 1].lower() in _THE_ONLY} - {None}
    only -= {kind_after(anchor_words, place) for place, word in enumerate(anchor_words) if word.lower() in _OTHER}  # it speaks of others too
    for index, word in enumerate(claim_lower):
        if word not in _OTHER or (index and (claim_lower[index - 1] in ("each", "only") or claim_lower[index - 1] in NEGATIONS)):
            continue  # "each other" names no kind; "the only other republic" and "no other way" are not others
        if kind_after(claim_words, index) in only:
            return [(claim_words[index], "only")]
    return []


def _substitutions(claim_words: Sequence[str], anchor_words: Sequence[str]) -> dict[int, str]:
    """{claim position: anchor word} where the anchor has another word in the same slot: at least
    three of the two words either side agree ("the President of Good" / "the Era of Good"), and the
    word itself stands in no slot that fits as well (in "one of the founders of the Society of Como",
    "Society" also fits the slot of "founders", but it fits its own better)."""
    claim_lower = [word.lower() for word in claim_words]
    anchor_lower = [word.lower() for word in anchor_words]
    claim_stems = [stem(word) for word in claim_lower]
    anchor_stems = [stem(word) for word in anchor_lower]
    found = {}
    for i in range(len(claim_lower)):
        own = 0  # how well the word fits where the anchor has it
        other_slot = None
        for j in range(len(anchor_lower)):
            agree = sum(
                0 <= i + step < len(claim_lower) and 0 <= j + step < len(anchor_lower) and claim_lower[i + step] == anchor_lower[j + step]
                for step in (-2, -1, 1, 2)
            )
            if claim_stems[i] == anchor_stems[j]:
                own = max(own, agree)
            elif agree >= 3 and (other_slot is None or agree > other_slot[0]):
                other_slot = (agree, anchor_words[j])
        if other_slot is not None and other_slot[0] > own:
            found[i] = other_slot[1]
    return found


def _name_after_same_words(claim_words: Sequence[str], anchor_words: Sequence[str], index: int) -> bool:
    """Whether the anchor has another name where the claim has the one at index, after the same two words: "born in
    Paris on 15 December" against "born in Lyon" (``_substitutions`` asks for three of the four words either side,
    which a name that ends the claim does not have)."""
    if index < 2:
        return False
    before = [word.lower() for word in claim_words[index - 2: index]]
    named = stem(claim_words[index])
    return any([word.lower() for word in anchor_words[j - 2: j]] == before and anchor_words[j][:1].isupper()
               and anchor_words[j].lower() not in STOPWORDS and stem(anchor_words[j]) != named for j in range(2, len(anchor_words)))



class Opposition(NamedTuple):
    """A word of the claim that the evidence opposes: the claim's word, the evidence's, and the rule that found it:
    "antonym" (WordNet's opposite in the same place, or beside it), "superlative rank" ("highest" against "second
    highest"), "only and other" ("the only" against "other"), "contrasting clause" (the opposite in the clause the
    claim's words stand in) or "gender" ("she" where the evidence says "he")."""

    word: str
    other: str
    rule: str = "antonym"

@dataclass(frozen=True)
class FactCheck:
    """What a sentence asserts that its anchor window lacks or opposes."""

    anchor: str  # the evidence window the facts were checked against
    anchor_index: int  # its position in the windows given
    missing_names: tuple[str, ...] = ()
    missing_numbers: tuple[str, ...] = ()
    opposed: tuple[Opposition, ...] = ()  # the sentence's words the anchor opposes, each with the rule that found it
    negation: str | None = None  # "sentence" or "evidence": which side alone is negated
    coverage: float = 1.0  # share of the sentence's content words found in the anchor
    missing_words: tuple[str, ...] = field(default=())  # other content words the anchor lacks (paraphrase or change)
    unrivalled_numbers: tuple[str, ...] = field(default=())  # missing numbers the anchor states no other number of their kind in place of
    unrivalled_names: tuple[str, ...] = field(default=())  # missing names the anchor has no other word in the slot of, nor another name after the same two words
    replaced_words: tuple[tuple[str, str], ...] = field(default=())  # (the sentence's word, the anchor's) for other content words the anchor has another word in the slot of: "monarchy" where it says "republic"

    @property
    def contradicted(self) -> bool:
        """Whether the anchor says otherwise, not merely less: a fact opposed or negated, a name it has another word in
        the place of ("colonies in Canada" against "colonies in Asia"), or a number it lacks where it states another of
        the same kind (a year for a year: "in 2015" against "in 2017"). A year or a name it does not state at all
        ("Mosqueda got 62 percent in Tuesday's count" for "She was elected ... in 2017") is silence."""
        return bool(set(self.missing_names) - set(self.unrivalled_names) or set(self.missing_numbers) - set(self.unrivalled_numbers) or self.opposed or self.negation)

    @property
    def failed(self) -> bool:
        """Whether a fact the sentence asserts is absent from, or opposed by, its evidence."""
        return bool(self.missing_names or self.missing_numbers or self.opposed or self.negation)

    @property
    def flagged_words(self) -> tuple[str, ...]:
        """The sentence's words behind a failed check, for highlighting."""
        return (*self.missing_names, *self.missing_numbers, *(opposition.word for opposition in self.opposed))

    def reason(self) -> str | None:
        """One line a reviewer can act on, or None when every fact was found."""
        parts = []
        if self.missing_names:
            parts.append("names not in the excerpt: " + ", ".join(self.missing_names))
        if self.missing_numbers:
            parts.append("numbers not in the excerpt: " + ", ".join(self.missing_numbers))
        if self.opposed:
            parts.append("opposite of the excerpt: " + ", ".join(f"{word} (excerpt: {other})" for word, other, _ in self.opposed))
        if self.negation == "sentence":
            parts.append("negated, the excerpt is not")
        elif self.negation == "evidence":
            parts.append("the excerpt is negated, the sentence is not")
        return "; ".join(parts) or None


def _anchor_sentence(window: str, terms: set[str]) -> str:
    """The sentence of a window that shares most of the claim's stems (for polarity)."""
    best, best_overlap = "", -1
    for sentence in split_sentences(window):
        overlap = len(terms & {stem(word) for word in tokens(sentence)})
        if overlap > best_overlap:
            best, best_overlap = sentence, overlap
    return best


# Where a sentence sets one statement against another: "The coolest month is June, while the warmest is January".
def opposed_in_clause(claim: str, sentence: str) -> list[tuple[str, str]]:
    """(the claim's word, its opposite) where the sentence parts at a contrast and the one clause that holds most of
    the claim's stems holds the opposite of a claim word that only another clause holds: "Uruguay's warmest month is
    June" against "The coolest month is June, while the warmest is January" (warmest, coolest). The sentence as a
    whole holds "warmest", so the opposite read over the whole sentence finds nothing. Two clauses that hold as many
    of the claim's stems decide nothing."""
    clauses = [words for words in (tokens(part) for part in CONTRAST_BREAK.split(sentence)) if words]
    lexicon = default_lexicon()
    if len(clauses) < 2 or lexicon is None:
        return []  # read on every anchor sentence: most part at no contrast, and nothing more is asked of them
    claim_words = tokens(claim)
    terms = {stem(word) for word in _content(claim_words)}
    held = sorted(((len(terms & {stem(word) for word in words}), index) for index, words in enumerate(clauses)), reverse=True)
    if held[0][0] == held[1][0]:
        return []
    written = clauses[held[0][1]]
    clause = [word.lower() for word in written]
    elsewhere = {stem(word) for index, words in enumerate(clauses) if index != held[0][1] for word in words} & terms - {stem(word) for word in clause}
    if len(elsewhere) != 1:
        return []  # the claim joins what the clauses say ("built as a merchant ship, never carried cargo"), or asks none of it
    claim_lower = [word.lower() for word in claim_words]
    opposed = []
    for index, word in enumerate(claim_words):
        if stem(word) not in elsewhere:
            continue
        before, after = claim_lower[index - 1] if index else None, claim_lower[index + 1] if index + 1 < len(claim_lower) else None
        other = next((written[place] for place, other in enumerate(clause) if other not in claim_lower and lexicon.opposes(word, other)
                      and (place and clause[place - 1] == before or place + 1 < len(clause) and clause[place + 1] == after)), None)
        if other is not None:  # in the word's place: a word beside it the same ("warmest month", "coolest month")
            opposed.append((word, other))
    return opposed


def check_facts(claim: str, windows: Sequence[str], *, contexts: Sequence[str] | None = None, names: frozenset[str] | None = None) -> FactCheck:
    """Check a claim's numbers, names and polarity against the window that best holds its wording.

    windows: candidate evidence windows; contexts: for each, the text of its
    chunk, led by its document's title (a pronoun in the window may refer to
    a name there); names: the words the documents use as names (default: the
    claim's and windows' own).
    """
    if not windows:
        raise ValueError("check_facts needs at least one evidence window")
    as_given = windows  # the anchor is returned as the caller wrote it; the checks read "2018–19" as two years
    claim, windows = _full_spans(claim), [_full_spans(_PAGE_REFERENCE.sub("", window)) for window in windows]
    contexts = None if contexts is None else [_full_spans(context) for context in contexts]
    claim_words = tokens(claim)
    if names is None:
        names = name_words([claim, *windows])
    claim_numbers = numbers(claim_words)
    initial = {0}  # positions that open a sentence: there a capital letter says nothing ("...kingdom.) Well before this")
    for match in _OPENING.finditer(claim):
        initial.add(len(tokens(claim[: match.end()])))
    claim_names: list[tuple[int, str]] = []  # (position, as written): capitalised in the claim, past a sentence's first word or a known name
    for index, word in enumerate(claim_words):
        lowered = word.lower()
        if word[:1].isupper() and lowered not in STOPWORDS and (index not in initial or lowered in names) and _number(word) is None:
            claim_names.append((index, word))
    content = _content(claim_words)
    predicate = {stem(word) for word in content if word.lower() not in names and _number(word) is None}
    all_terms = {stem(word) for word in content}

    def rank(index: int) -> tuple:
        window_stems = {stem(word) for word in tokens(windows[index])}
        return (-len(predicate & window_stems), -len(all_terms & window_stems), len(windows[index]))

    anchor_index = min(range(len(windows)), key=rank)
    anchor = windows[anchor_index]
    anchor_words = tokens(anchor)
    anchor_stems = {stem(word) for word in anchor_words}
    anchor_numbers = numbers(anchor_words)
    missing_numbers = tuple(written for value, written in claim_numbers.items() if value not in anchor_numbers)
    refers_back = any(word.lower() in REFERRING_WORDS for word in anchor_words)
    context = contexts[anchor_index] if contexts is not None else ""
    before = context.split(anchor[:_ANCHOR_PREFIX])[0] if context and anchor[:_ANCHOR_PREFIX] in context else context
    earlier = {stem(word) for word in tokens(before)}
    substituted = _substitutions(claim_words, anchor_words)
    for index, other in substituted.items():  # "the first President" where the evidence says "the sixteenth President"
        word = claim_words[index]
        if _countable(word) and _countable(other) and (_number(word) != _number(other) or _number(word) is None) and word not in missing_numbers:
            missing_numbers += (word,)
    rival_kinds = {_kind(value) for value in anchor_numbers if value not in claim_numbers}
    in_other_slots = {claim_words[index] for index in substituted}  # "thirteenth" where the anchor says "thirtieth"
    unrivalled = tuple(written for value, written in claim_numbers.items()
                       if value not in anchor_numbers and _kind(value) not in rival_kinds and written not in in_other_slots)
    name_positions = {index for index, _ in claim_names}

    def shortened(index: int) -> bool:
        """A name the window may leave out of a full name it shortens: "Grover Cleveland" in the claim,
        "Cleveland" in the window (with "Grover" earlier in its chunk or its title, checked below)."""
        return any(other in name_positions and stem(claim_words[other]) in anchor_stems for other in (index - 1, index + 1))

    missing_names = tuple(dict.fromkeys(
        name for index, name in claim_names
        if (stem(name) not in anchor_stems and not ((refers_back or shortened(index)) and stem(name) in earlier))
        or (index in substituted and substituted[index].lower() not in REFERRING_WORDS)  # in the slot of another word, not of a "him" that means it
    ))
    missing = [word for word in content if stem(word) not in anchor_stems]
    lexicon = default_lexicon()
    opposed = []
    if lexicon is not None:
        claim_lower = {word.lower() for word in claim_words}
        missing_lower = {word.lower() for word in missing} | {word.lower() for word in claim_words if word.lower() in QUANTIFIERS} - {word.lower() for word in anchor_words}
        for index, word in enumerate(claim_words):
            if word.lower() in STOPWORDS and word.lower() not in QUANTIFIERS:
                continue
            if index in substituted and lexicon.opposes(word, substituted[index]):  # the opposite in the same slot
                opposed.append(Opposition(word, substituted[index], "antonym"))
            elif word.lower() in missing_lower:
                other = next((other for other in anchor_words if other.lower() not in claim_lower and lexicon.opposes(word, other)), None)
                if other is not None:
                    opposed.append(Opposition(word, other, "antonym"))
    missing_lowered = {word.lower() for word in missing_numbers}
    opposed += [Opposition(*pair, "superlative rank") for pair in _ranked_superlatives(claim, anchor) if pair[0].lower() not in missing_lowered]  # "second" may be a number already
    opposed += [Opposition(*pair, "only and other") for pair in _only_against_other(claim_words, anchor_words)]
    evidence_sentence = _anchor_sentence(anchor, all_terms)
    read = {opposition.word.lower() for opposition in opposed}
    opposed += [Opposition(*pair, "contrasting clause") for pair in opposed_in_clause(claim, evidence_sentence) if pair[0].lower() not in read]
    claim_genders = {GENDER[word.lower()]: word for word in claim_words if word.lower() in GENDER}
    anchor_genders = {GENDER[word.lower()]: word for word in anchor_words if word.lower() in GENDER}
    for gender, word in claim_genders.items():  # "she" where the evidence only says "he"
        if anchor_genders and gender not in anchor_genders:
            opposed.append(Opposition(word, next(iter(anchor_genders.values())), "gender"))
    negation = None
    # Which shared words are negated, not whether any is: "Fillmore did not turn down the honor, ... neither the
    # literary nor scientific attainment" negates "turn", which "Fillmore turned down the honor, ... neither the
    # literary nor ..." does not, though both hold a negation.
    evidence_words = tokens(evidence_sentence)
    shared = anchor_stems & {stem(word) for word in evidence_words} & all_terms
    claim_negated = _negated_in(claim, claim_words, shared)
    evidence_negated = _negated_in(evidence_sentence, evidence_words, shared)
    if claim_negated - evidence_negated:
        negation = "sentence"
    elif evidence_negated - claim_negated:
        negation = "evidence"
    flagged = {word.lower() for word in (*missing_names, *missing_numbers)} | {opposition.word.lower() for opposition in opposed}
    return FactCheck(
        anchor=as_given[anchor_index], anchor_index=anchor_index, missing_names=missing_names, missing_numbers=missing_numbers,
        opposed=tuple(opposed), negation=negation,
        coverage=(len(content) - len(missing)) / len(content) if content else 1.0,
        unrivalled_numbers=unrivalled,
        unrivalled_names=tuple(name for index, name in claim_names
                               if name in missing_names and index not in substituted and not _name_after_same_words(claim_words, anchor_words, index)),
        missing_words=tuple(dict.fromkeys(word for word in missing if word.lower() not in flagged and _number(word) is None)),
        replaced_words=tuple((claim_words[index], other) for index, other in substituted.items()
                             if claim_words[index] in missing and claim_words[index].lower() not in flagged and _number(claim_words[index]) is None
                             and index not in name_positions),
    )
