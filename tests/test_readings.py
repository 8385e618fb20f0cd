"""The readings registry: every reading named once, documented, and each example decided by its reading and
otherwise without it. No workspace and no store: the cases are built from passages (``case.case_of_passages``)."""

from __future__ import annotations

import pytest

from conftest import REPO, _shipped
from llmwiki.policy import ANSWER_POLICY
from llmwiki.read.readings import Decision, Step, decide, recording
from llmwiki.read.readings import comparisons, model, refusals, statements
from llmwiki.read.readings.case import case_of_passages
from llmwiki.read.readings.core import Reading
from llmwiki.read.readings.model import ModelCase
from llmwiki.read.readings.registry import ANSWER, LISTS, MODEL, STATEMENT, every_reading

ANSWER_EXAMPLES = [*refusals.EXAMPLES, *comparisons.EXAMPLES, *statements.EXAMPLES]


class _Models:
    """The shipped verifier; no ranker and no sentence embedder (the hand ranking alone)."""

    ranker = None
    similarity = None

    @property
    def verifier(self):
        from llmwiki.config import VerificationConfig

        return _shipped("nli", VerificationConfig().int8)


def _answer(example, *, without: Reading | None = None) -> Decision | None:
    case = case_of_passages(example.question, example.passages, services=_Models(), policy=ANSWER_POLICY)
    if without is not None:
        case.statement_readings = [item for item in STATEMENT if item is not without]
    return decide([item for item in ANSWER if item is not without], case)


def _named(name: str) -> Reading:
    return next(item for item in every_reading() if item.name == name)


def test_every_reading_has_one_name_a_kind_and_a_docstring():
    readings = every_reading()
    assert len({item.name for item in readings}) == len(readings)
    for item in readings:
        assert item.kind in {"refusal", "kind", "comparison", "yes/no", "answer", "model check"}, item
        assert len(item.summary.split()) >= 8, f"{item.name}: say in its docstring what kind of case it reads"
    assert {item.name for items in LISTS.values() for item in items} == {item.name for item in readings}


@pytest.mark.parametrize("example", ANSWER_EXAMPLES, ids=lambda example: f"{example.reading}: {example.question}")
def test_each_example_is_decided_by_its_reading_and_otherwise_without_it(example):
    decided = _answer(example)
    assert (decided.by, decided.outcome) == (example.reading, example.expected), decided.steps
    assert decided.steps[-1] == Step(decided.by, decided.outcome, decided.reason)  # the trail ends with the decision
    without = _answer(example, without=_named(example.reading))
    assert without is None or (without.by, without.outcome) != (example.reading, example.expected)
    assert without is None or without.outcome != example.expected or without.text != decided.text


@pytest.mark.parametrize("example", model.EXAMPLES, ids=lambda example: f"{example.reading}: {example.question}")
def test_each_model_check_example_is_decided_by_its_check_and_otherwise_without_it(example):
    case = ModelCase(example.question, example.reply, example.cited, policy=ANSWER_POLICY)
    decided = decide(MODEL, case)
    assert (decided.by, decided.outcome) == (example.reading, example.expected), decided.steps
    without = decide([item for item in MODEL if item.name != example.reading], ModelCase(example.question, example.reply, example.cited, policy=ANSWER_POLICY))
    assert without is None or (without.by, without.outcome) != (example.reading, example.expected)


def test_every_reading_of_the_answer_lists_has_an_example_or_says_why_not():
    covered = {example.reading for example in (*ANSWER_EXAMPLES, *model.EXAMPLES)}
    # Readings no small example reaches: a question about the wiki or a selection with no prose (the wiki as a whole, nothing to quote),
    # or a model reading the shipped one does not give on short passages (the rest): bench/readings.py counts them.
    unreached = {"question refused", "nothing selected", "the wiki as a whole", "nothing to quote",
                 "the statement", "comparison both ways", "contested yes"}
    assert {item.name for item in every_reading()} - covered == unreached


def test_recording_reads_every_reading_past_the_decision_and_leaves_the_answer_as_it_is():
    example = statements.EXAMPLES[2]  # "Was Volta born in Milan?": fact opposed
    plain = _answer(example)
    with recording() as recorded:
        again = _answer(example)
    assert (again.by, again.verdict, again.text) == (plain.by, plain.verdict, plain.text)
    answer_list = next(item for item in recorded if item.list_name == "")
    names = [name for name, _ in answer_list.decisions]
    assert names == [item.name for item in ANSWER]  # every reading read, also past the one that decided
    assert answer_list.decisions[answer_list.first][1].by == "fact opposed"


def test_the_readings_page_lists_every_reading_in_order():
    from llmwiki.reference import readings_page

    page = (REPO / "docs" / "readings.md").read_text(encoding="utf-8")
    assert page == readings_page(), "docs/readings.md is stale: run python -m llmwiki.reference"
    for item in every_reading():
        assert f"`{item.name}`" in page, item.name
    positions = [page.index(f"`{item.name}`") for item in STATEMENT]
    assert positions == sorted(positions)  # in the order they are read


def test_a_sentence_is_read_with_the_headings_above_its_chunk():
    """A manual states a setting's default under the setting's heading ("Retry interval": "The default value is 30
    seconds."): the headings above the chunk count as what its sentences are about, so the question is not refused
    for holding too little of it (control: the same sentence without its headings is refused)."""
    from dataclasses import replace

    passages = [("Widget manual", "The default value is 30 seconds. Setting the value to 0 turns the feature off."),
                ("Widget manual", "Logging writes one line per request to the log file. The log file grows without limit.")]
    question = "What is the default retry interval?"
    bare = case_of_passages(question, passages, services=_Models(), policy=ANSWER_POLICY)
    assert refusals.too_little_of_the_question.read(bare) is not None  # only "default" is held
    headed = case_of_passages(question, passages, services=_Models(), policy=ANSWER_POLICY)
    headed.candidates = [replace(candidate, section="Connections Retry interval" if candidate.chunk_id == 1 else "Logging")
                         for candidate in headed.candidates]
    assert refusals.too_little_of_the_question.read(headed) is None
    answer = decide(ANSWER, headed)
    assert answer is not None and not answer.refused and answer.text.startswith("The default value is 30 seconds.")


class _ModelsWithSimilarity(_Models):
    """The shipped verifier and sentence embedder."""

    @property
    def similarity(self):
        from llmwiki.config import VerificationConfig

        return _shipped("similarity", VerificationConfig().int8)


_REGEX = ("Regular expression HOWTO", "Repetitions such as * are greedy: the engine repeats them as many times as possible. "
          "The non-greedy quantifiers *?, +? and ?? match as little text as possible. Character classes are written in square brackets.")


def test_a_sentence_that_says_it_in_other_words_is_not_refused_for_holding_too_little_of_the_question():
    import dataclasses

    question = "Which regex quantifiers are lazy rather than greedy?"  # "regex", "lazy": words the passage never uses
    answered = decide(ANSWER, case_of_passages(question, (_REGEX,), services=_ModelsWithSimilarity(), policy=ANSWER_POLICY))
    assert answered.by == "best sentences" and answered.text.startswith("The non-greedy quantifiers *?, +? and ?? match as little text as possible.")
    without = dataclasses.replace(ANSWER_POLICY, paraphrase_cosine=None)  # control: the shares alone refuse it
    assert decide(ANSWER, case_of_passages(question, (_REGEX,), services=_ModelsWithSimilarity(), policy=without)).by == "too little of the question"
    offtopic = decide(ANSWER, case_of_passages("How do I bake sourdough bread at home?", (_REGEX,), services=_ModelsWithSimilarity(), policy=ANSWER_POLICY))
    assert offtopic.by == "too little of the question" and offtopic.refused  # another subject stays refused


def test_a_paraphrase_holds_the_numbers_the_question_writes_in_figures():
    question = "Which regex quantifiers from 1997 are lazy rather than greedy?"
    passage = ("Regular expression HOWTO", "Repetitions such as * are greedy: the engine repeats them as many times as possible. "
               "The non-greedy quantifiers *?, +? and ?? came in {year} and match as little text as possible.")
    other_year = case_of_passages(question, ((passage[0], passage[1].format(year=1999)),), services=_ModelsWithSimilarity(), policy=ANSWER_POLICY)
    assert max(other_year.cosines.values()) >= ANSWER_POLICY.paraphrase_cosine  # the embedder reads it as the same question...
    assert not other_year.paraphrased and decide(ANSWER, other_year).by == "too little of the question"  # ...but 1999 is not 1997
    same_year = case_of_passages(question, ((passage[0], passage[1].format(year=1997)),), services=_ModelsWithSimilarity(), policy=ANSWER_POLICY)
    assert same_year.paraphrased and decide(ANSWER, same_year).text.startswith("The non-greedy quantifiers")  # control


_COLLECTOR = ("Garbage collection", "CPython uses reference counting to find objects that nothing refers to. "
              "A cycle detector collects reference cycles from time to time. Memory is returned to the allocator.")


def test_a_phrase_that_says_how_not_what_weighs_nothing_in_the_share_a_sentence_must_hold():
    from llmwiki.text.questions import without_function_phrases

    assert without_function_phrases("objects no longer referred to, at least as well") == "objects referred to,"
    answered = decide(ANSWER, case_of_passages("Which mechanism finds objects no longer referred to?", (_COLLECTOR,), services=_Models(), policy=ANSWER_POLICY))
    assert answered.by == "best sentences" and answered.text.startswith("CPython uses reference counting")  # "longer" asks nothing
    control = decide(ANSWER, case_of_passages("Which mechanism finds objects longer than a page?", (_COLLECTOR,), services=_Models(), policy=ANSWER_POLICY))
    assert control.by == "too little of the question"  # "longer" as a word of its own still counts
    assert "longer" in control.text  # and the refusal names it among what no passage holds...
    refused = decide(ANSWER, case_of_passages("Which bakeries are no longer open?", (_COLLECTOR,), services=_Models(), policy=ANSWER_POLICY))
    assert refused.by == "too little of the question" and "bakeries" in refused.text and "longer" not in refused.text  # ...not in "no longer"
    weighed = case_of_passages("Which objects are no longer referred to, and which are longer?", (_COLLECTOR,), services=_Models(), policy=ANSWER_POLICY).weights
    assert "longer" in weighed and case_of_passages("Which objects are no longer referred to?", (_COLLECTOR,), services=_Models(),
                                                      policy=ANSWER_POLICY).weights.keys().isdisjoint({"longer"})  # only the phrase goes
