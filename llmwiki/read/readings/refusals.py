"""Readings that refuse ("the sources do not say"), and the answer readings around them.

A refusal reading finds that the selection does not answer the question: it names something no passage mentions,
it holds too little of the question's weighted words, the sentences that share its words are about something else,
or it says "he" or "it" of subjects that differ. Each says why in words the analyst can act on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmwiki.read.candidates import fill_places, quote
from llmwiki.read.readings.core import Decision, Example, reading
from llmwiki.text import stem
from llmwiki.text.questions import question_words, without_function_phrases, without_truth_frame

if TYPE_CHECKING:
    from llmwiki.read.readings.case import Case

NOT_SUPPORTED = "The sources do not say."


def refusal(reason: str) -> Decision:
    return Decision(f"{NOT_SUPPORTED} ({reason}.)", refused=True, reason=reason)


@reading("the wiki as a whole", "answer")
def the_wiki_as_a_whole(case: Case) -> Decision | None:
    """A question about the wiki as a whole ("What is this wiki about?"), or one answered by dataset rows alone: the
    selection holds no sentence to quote, only the overview and index (or the rows), which the answer shows."""
    if case.candidates or not (case.collection or case.has_tables):
        return None
    return Decision("\n\n".join(case.collection), reason="the question is about the wiki as a whole")


@reading("nothing to quote", "refusal")
def nothing_to_quote(case: Case) -> Decision | None:
    """Refused: no selected chunk holds a prose sentence to answer with."""
    return refusal("nothing selected holds a sentence to answer with") if not case.candidates else None


@reading("names absent", "refusal")
def names_absent(case: Case) -> Decision | None:
    """Refused: a name the question mentions stands in no selected passage (for a yes/no question, none of them
    does: "Is Canada's official language Zulu?" is answered no, not refused)."""
    absent = case.absent_names
    if not absent or (case.yes_no and len(absent) < len(case.names)):
        return None
    return refusal(f"no selected passage mentions {', '.join(absent)}")


@reading("too little of the question", "refusal")
def too_little_of_the_question(case: Case) -> Decision | None:
    """Refused: the best sentence and the best passage hold too little of the question's terms, each weighted by its
    rarity in the store (a word every chunk has says little; one the store has never seen says the question is about
    something else): ``policy.min_shares_about_title`` when the question names the subject of a selected document,
    else ``policy.min_shares_else``; unless the sentence embedder reads one of the best sentences as saying it in
    other words (cosine with the question at least ``policy.paraphrase_cosine``)."""
    if not sum(case.weights.values()):
        return None
    min_sentence, min_passage = case.minimum_shares
    if max(case.sentence_shares) >= min_sentence and case.best_passage_share >= min_passage:
        return None
    if case.paraphrased:
        return None  # a sentence says it in other words: "the non-greedy quantifiers *?, ..." for "match as little as possible"
    missing = [word for word in question_words(without_function_phrases(without_truth_frame(case.question))) if stem(word) not in case.held]  # not "true", "longer"
    return refusal("no selected passage holds enough of the question" + (f" (nothing on {', '.join(missing[:5])})" if missing else ""))


@reading("not about the subject", "refusal")
def not_about_the_subject(case: Case) -> Decision | None:
    """Refused: every sentence that matched a yes/no question is about something other than what it names: neither
    a yes nor a no."""
    from llmwiki.read.search import preview

    if not case.yes_no or case.judged:
        return None
    first = case.ranked[0]
    return refusal(f"no selected sentence is about {' '.join(case.subject)}; the closest: \"{preview(first.sentence, 90)}\" ({first.referent})")


@reading("the statement", "yes/no")
def the_statement(case: Case) -> Decision | None:
    """A yes/no question's statement read against the sentences about its subject: the first of the statement
    readings (``registry.STATEMENT``) that decides."""
    return case.settled if case.yes_no and case.judged else None


@reading("best sentences", "answer")
def best_sentences(case: Case) -> Decision | None:
    """A question that is not yes/no: the best-ranked sentences, the first one that may lead (it holds enough of the
    question itself), each cited; ``answer_sentences`` of them, more for a question that asks for a list."""
    if case.yes_no or not any(case.may_lead):
        return None
    count = max(case.answer_sentences, case.policy.listing_sentences) if case.shape.wants_more else case.answer_sentences
    order = [index for _, index in case.ranking]
    lead = next(index for index in order if case.may_lead[index])  # the best sentence holds the share, so one may lead
    ranked = [case.candidates[lead]] + [candidate for index, candidate in zip(order, case.ranked) if index != lead]
    # The sentence before each is looked up (a parse, for an opening "it") only for the sentences reached, not all ranked.
    chosen = [ranked[place] for place in fill_places([candidate.sentence for candidate in ranked], (candidate.quoted_before for candidate in ranked), count)]
    return Decision(" ".join(quote(candidate) for candidate in chosen), reason=f"{len(chosen)} best-ranked sentence(s) quoted")


# -- readings of the selection, before any sentence is read (every backend) ----------------

NOTHING_SELECTED = "The sources do not say: nothing in the wiki or the sources matches this question. "


@reading("question refused", "refusal")
def question_refused(selection) -> Decision | None:
    """Refused before anything is read: the question names a term of the ``[chat] blacklist``."""
    return Decision(selection.refused, refused=True, reason="a blacklisted term") if selection.refused else None


@reading("nothing selected", "refusal")
def nothing_selected(selection) -> Decision | None:
    """Refused: the selector found nothing in the wiki, the sources or the datasets that matches the question."""
    return Decision(NOTHING_SELECTED + selection.readout, refused=True, reason="nothing matches the question") if selection.empty else None


_LIGHTHOUSE = ("Berlenga lighthouse", "The lighthouse on Berlenga Island was built in 1841 to guide ships past the rocks. Its keepers rowed out at dawn.")
_INDONESIA = ("Indonesia", "Indonesia is a republic with a presidential system. Jakarta is its capital.")

# Each reading's cases: tests/test_readings.py reads each with the reading (it decides, as expected) and without it.
EXAMPLES = [
    Example("names absent", "Who founded Rome?", (_LIGHTHOUSE,), "refused"),
    Example("too little of the question", "What colour are the shutters of the old mill painted?", (_LIGHTHOUSE,), "refused"),
    Example("not about the subject", "Is Berlin the capital of Indonesia?", (_INDONESIA,), "refused"),
    Example("best sentences", "When was the lighthouse built?", (_LIGHTHOUSE,), "answered"),
]
