"""The sentences an extractive answer is made of: each prose sentence of the selected chunks, as a candidate.

A candidate knows its chunk (what it cites), its passage (what the refusal readings read), its document's title and
the headings above its chunk, and the sentence before it where it opens by pointing back ("This is for camouflage.")
or with a pronoun for a thing. ``hand_ranking`` orders them by ``questions.rank_sentences``; ``shown`` is a sentence as
the readings read it (an opening pronoun resolved), ``quote`` as an answer quotes it, and ``fill_places`` which of the
ranked sentences an answer quotes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from llmwiki.pages import CITATION
from llmwiki.policy import ANSWER_POLICY, AnswerPolicy
from llmwiki.read.select import Selection, select
from llmwiki.text import DEMONSTRATIVES, OPENING_PRONOUNS, PERSONAL_OPENERS, alternation, parsing, stem, tokens
from llmwiki.text.questions import CODE_KINDS, last_people, rank_sentences, reads_as_prose, resolve_opening_pronoun, shape
from llmwiki.workspace import Workspace

# A sentence that opens by pointing back at the one before ("This is for camouflage.", "Such a method ...").
_REFERS_BACK = re.compile(rf"^{alternation(word.title() for word in DEMONSTRATIVES | {'such'})}\b")
# ... or that names a thing of a manual by pointing back at it past its opening ("Python 3.10 adds a new function:
# `inspect.get_annotations()`. In Python 3.10 and newer, calling this function is the best practice ...").
_NAMES_BACK = re.compile(rf"\b(?:this|these)\s+{alternation(CODE_KINDS)}s?\b")
# A sentence that opens with a pronoun for a thing, which may point at a code block or a table before it ("This", "It",
# "They", "Its"; not "He" or "She").
_POINTING = re.compile(rf"^(?:{alternation(set(OPENING_PRONOUNS) - PERSONAL_OPENERS)})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    sentence: str
    chunk_id: int
    order: int  # the item's place in the selection
    passage: str  # the chunk's text: what the refusal rule reads
    referent: str  # the document's title: what an opening "it" or "they" refers to
    chunk_text: str = ""
    offset: int = 0  # where the sentence starts in chunk_text
    section: str = ""  # the headings above the sentence (the chunk's breadcrumb, and one inside it): what a manual's sentence is about

    @property
    def preceding(self) -> str:
        """The chunk's text before the sentence: who an opening "he" or "she" is (read only for quoted sentences)."""
        return CITATION.sub("", self.chunk_text[: self.offset])[-400:]

    @property
    def antecedent(self) -> str:
        """The sentence before, when this one opens by pointing back at it ("All penguins are countershaded ... This is
        for camouflage."): the answer quotes the two together, since "[Penguin] is for camouflage" is not what the source
        says. '' when the sentence stands alone, or the one before is not prose in the same chunk."""
        return self._antecedent[0]

    @property
    def antecedent_preceding(self) -> str:
        """The chunk's text before the antecedent: who the antecedent's own opening "he" is ('' without an antecedent)."""
        return self._antecedent[1]

    @property
    def _antecedent(self) -> tuple[str, str]:
        """(the antecedent, the chunk's text before it: who the antecedent's own opening "he" is), or ('', '')."""
        return self._before if _REFERS_BACK.match(self.sentence) or _NAMES_BACK.search(self.sentence) else ("", "")

    @functools.cached_property
    def points_at_a_block(self) -> bool:
        """Whether the sentence opens with "This", "It" or "They" right after a code block or a table, which is what it
        points at ("```>>> import fibo```" / "This is often used ..."): no title stands in for it, and no sentence is
        quoted before it."""
        from llmwiki.text.segment import CODE, ROW

        last = self._last_before[1]
        return bool(_POINTING.match(self.sentence)) and last is not None and last.kind in (CODE, ROW)

    @property
    def quoted_before(self) -> str:
        """The sentence an answer quotes before this one: its antecedent, or the sentence before where this one opens with
        a pronoun for a thing ("The x11 terminal ... It also has some extra icons"): what "it" stands for is the reader's
        to see, not a referent in brackets the answer guessed (the document's title is rarely what "it" means in a
        manual). The readings read the sentence with the referent in brackets (``shown``); '' where neither."""
        return self.antecedent or (self._before[0] if opens_with_a_thing(self.sentence, self.preceding) else "")

    @property
    def quoted_before_preceding(self) -> str:
        """The chunk's text before ``quoted_before``: what that sentence's own opening pronoun stands for."""
        return self._before[1] if self.quoted_before else ""

    @functools.cached_property
    def _last_before(self):
        """(the chunk's text before the sentence, its last segment or None): read once for both ``_before`` and
        ``points_at_a_block``."""
        return _last_segment(CITATION.sub("", self.chunk_text[: self.offset]))

    @functools.cached_property
    def _before(self) -> tuple[str, str]:
        """(the sentence before, when it is prose in the same chunk; the chunk's text before that), or ('', '')."""
        return _prose_before(*self._last_before)


def _last_segment(text: str):
    """(the text without its trailing white space, its last segment or None)."""
    from llmwiki.text.segment import segments

    before = text.rstrip()
    parts = segments(before)
    return before, (parts[-1] if parts else None)


def sentence_before(text: str) -> tuple[str, str]:
    """(the last sentence of the text, when it is prose; the text before it, its last 400 characters), or ('', ''). A
    code block, a heading, a table row or a list of links before is no sentence to quote ("``` time = weekdate_iso(year,
    week) ``` This function converts ..." quotes the sentence alone)."""
    return _prose_before(*_last_segment(text))


def _prose_before(before: str, last) -> tuple[str, str]:
    if last is None or not last.is_prose:
        return "", ""
    start, end = last.start, last.end
    sentence = " ".join(before[start:end].split())
    if len(sentence.split()) < 4 or not reads_as_prose(sentence) or sentence.startswith(("#", "|", "- [")):
        return "", ""
    return sentence, before[:start][-400:]


def opens_with_a_thing(sentence: str, preceding: str) -> bool:
    """Whether the sentence opens with a pronoun for a thing the text before names: "It ..." (not an "it" that stands
    for nothing, "It is said ..."), "Its ...", "They/Their ..." unless two people are named just before."""
    match = re.match(r"^([A-Z][a-z]*)\b", sentence)
    word = match.group(1).lower() if match else ""
    if word == "its" or (word == "it" and not parsing.expletive_it(sentence)):
        return True
    return word in ("they", "their") and not last_people(preceding)


def quotable(sentence: str) -> bool:
    """Whether a prose segment (its whitespace joined) may be quoted as an answer's sentence: four words or more, not
    a heading, a table row, a link or a question; whole, since a piece of a sentence (the rest beside a code block or
    a page break) is never quoted as one; at most 80 words and read as prose, not an infobox, a run of names or a
    reference line."""
    from llmwiki.text.segment import is_whole_sentence

    words = len(sentence.split())
    if words < 4 or words > 80 or sentence.startswith(("#", "|", "- [", "[")) or sentence.endswith("?") or "](" in sentence:
        return False
    return is_whole_sentence(sentence) and reads_as_prose(sentence)


def selection_candidates(workspace: Workspace, selection: Selection) -> list[Candidate]:
    """Sentences of the selected chunks, sources first: wiki text quotes sources, and citations must lead to them.
    Wiki chunks are used only where no source chunk was selected (a page written by hand, an overview). Only prose
    (``llmwiki.text.segment``): a heading, a code block, a table row or a list of links is never quoted as a sentence."""
    from llmwiki.text.segment import HEADING, segments

    items = [item for item in selection.items if item.chunk_id is not None]
    sources = [item for item in items if item.kind == "source"]
    chosen = sources or items
    titles = {item.path: item.title for item in chosen if item.title}  # the selector read them with the chunks
    unknown = {item.path for item in chosen if item.path and item.path not in titles}
    if unknown:  # a selection built by hand, or an untitled document: asked of the store
        with workspace.store.session():
            titles |= {path: document.title for path in unknown if (document := workspace.store.document_by_path(path)) and document.title}
    titles = {path: " ".join((titles.get(path) or Path(path or "").stem).replace("_", " ").split()) for path in {item.path for item in chosen}}
    candidates = []
    for order, item in enumerate(chosen):
        passage = " ".join(CITATION.sub("", item.text).split())
        segment_offset = 0
        for segment in CITATION.split(item.text):  # wiki text ends each quoted sentence with its citation: split there first
            segment_offset = item.text.find(segment, segment_offset)
            if segment.isdigit():
                continue
            heading = ""  # the last heading inside the chunk above the sentence: a short section shares a chunk
            for part in segments(segment):
                if part.kind == HEADING:
                    heading = segment[part.start:part.end].lstrip("#").strip()
                if not part.is_prose:
                    continue
                start, end = part.start, part.end
                sentence = " ".join(segment[start:end].split())
                if not quotable(sentence):
                    continue
                candidates.append(Candidate(sentence, item.chunk_id, order, passage, titles[item.path], item.text, segment_offset + start,
                                            " ".join([*item.breadcrumb, heading] if heading and heading not in item.breadcrumb else item.breadcrumb)))
    return candidates


def hand_ranking(question: str, candidates: Sequence[Candidate], question_shape, *, policy: AnswerPolicy = ANSWER_POLICY) -> list[tuple[float, int]]:
    """(score, index) of each distinct candidate sentence by ``questions.rank_sentences``, best first; the selector's
    order counts a little. A sentence that overlapping chunks of a document hold twice is ranked once, where it scores
    best: a repeat would take a place among the sentences the ranker reorders and the yes/no verdict reads."""
    priors = [policy.selector_prior / (1 + candidate.order) for candidate in candidates]
    ranking = rank_sentences(question_shape.statement or question, [candidate.sentence for candidate in candidates], question_shape=question_shape,
                             priors=priors, subjects=[candidate.referent for candidate in candidates], type_bonus=policy.answer_type_bonus)
    first_places: dict[tuple[str, str], tuple[float, int]] = {}  # in the order first seen: best first
    for score, index in ranking:
        first_places.setdefault((candidates[index].sentence, candidates[index].referent), (score, index))
    return list(first_places.values())


def candidate_sentences(workspace: Workspace, question: str) -> tuple[list[Candidate], list[tuple[float, int]]]:
    """The sentences an extractive answer to ``question`` chooses from, and their hand ranking: what the answer
    ranker is trained on (``training.ranker``)."""
    candidates = selection_candidates(workspace, select(workspace, question))
    return candidates, hand_ranking(question, candidates, shape(question))


def fill_places(sentences: Sequence[str], antecedents: Iterable[str], count: int) -> list[int]:
    """Which of the ranked sentences (best first) an answer of ``count`` sentences quotes, by place: each sentence once,
    and one quoted after the sentence before it (``Candidate.quoted_before`` not '') fills two places; a sentence
    that would overfill the answer gives way to the next that fits, and the first is always quoted. What the answer
    shows and what bench/ranker.py counts (``ranker.train.hits``)."""
    chosen: list[int] = []
    quoted: set[str] = set()
    filled = 0
    for place, (sentence, antecedent) in enumerate(zip(sentences, antecedents)):
        cost = 2 if antecedent else 1
        if sentence in quoted or antecedent in quoted or (chosen and filled + cost > count):
            continue
        chosen.append(place)
        quoted |= {sentence, antecedent} - {""}
        filled += cost
        if filled >= count:
            break
    return chosen


def shown(candidate: Candidate) -> str:
    """The candidate sentence as the readings read it, without its citation: after the sentence it points back at, or
    with an opening pronoun resolved ("[The building] was completed ..." is about the building, not the article's
    subject)."""
    if candidate.antecedent:
        return f"{resolve_opening_pronoun(candidate.antecedent, candidate.referent, preceding=candidate.antecedent_preceding)} {candidate.sentence}"
    if candidate.points_at_a_block:
        return candidate.sentence
    return resolve_opening_pronoun(candidate.sentence, candidate.referent, preceding=candidate.preceding)


def quote(candidate: Candidate) -> str:
    """The candidate as an answer quotes it, with its citation: after the sentence it points back at or whose thing its
    "it" stands for (``Candidate.quoted_before``), else as shown (a person's name in brackets for "he" or "she"). The
    sentence before may open with a pronoun too: an "it" for a thing is quoted after the sentence before it in turn
    (three sentences: a guess from a bracket, "[Value] indicates ...", misleads); a "they" or "he" is resolved from
    the text before it, or to the title where the passage names what the title names ("beetles" in "Beetle"), else
    left as written."""
    before = candidate.quoted_before
    if not before:
        return f"{shown(candidate)} [c{candidate.chunk_id}]"
    preceding = candidate.quoted_before_preceding
    if opens_with_a_thing(before, preceding) and not before.startswith(("They", "Their")):
        earlier, _ = sentence_before(preceding)  # "`__file__` is optional. It indicates the pathname ... It might be missing ..."
        if earlier and earlier.split(" ", 1)[0].lower() not in OPENING_PRONOUNS:  # a third pronoun in a row: resolved as before
            return f"{earlier} {before} {candidate.sentence} [c{candidate.chunk_id}]"
    referent = candidate.referent if _names_the_title(candidate.passage, candidate.referent) else ""
    return f"{resolve_opening_pronoun(before, referent, preceding=preceding)} {candidate.sentence} [c{candidate.chunk_id}]"


def _names_the_title(passage: str, title: str) -> bool:
    """Whether the passage names what the title names: the title's last word (its head: "wolf" in "Gray wolf",
    "Becquerel" in "Henri Becquerel"), in any form ("beetles" for "Beetle"). A manual's title ("Gnuplot
    documentation") is seldom named in its passages, and is seldom what their "it" means."""
    words = tokens(title)
    return bool(words) and stem(words[-1]) in {stem(word) for word in tokens(passage)}
