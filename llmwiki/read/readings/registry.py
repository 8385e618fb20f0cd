"""The readings, in the order they are read: each list is the order, and the only place it is written.

``SELECTION`` is read on every question before any backend answers; ``ANSWER`` on the extractive backend's
candidate sentences (``case.Case``), where a yes/no question's statement is read by ``STATEMENT``
(``case.StatementCase``); ``MODEL`` holds a model's yes or no to the evidence rule (``model.ModelCase``).
``REFUSALS`` and ``COMPARISONS`` name the groups ``ANSWER`` is made of. ``docs/readings.md`` is generated
from these lists (``python -m llmwiki.reference``), with each reading's figures from ``bench/readings.py``.
"""

from __future__ import annotations

from llmwiki.read.readings import comparisons, model, refusals, statements
from llmwiki.read.readings.core import Reading

SELECTION: list[Reading] = [refusals.question_refused, refusals.nothing_selected]

REFUSALS: list[Reading] = [
    refusals.nothing_to_quote,
    refusals.names_absent,
    refusals.too_little_of_the_question,
]

COMPARISONS: list[Reading] = [comparisons.comparison_in_a_sentence, comparisons.comparison_both_ways]

STATEMENT: list[Reading] = [
    statements.supported,
    statements.contested_yes,
    statements.fact_opposed,
    statements.model_contradiction,
    statements.not_settled,
]

ANSWER: list[Reading] = [
    refusals.the_wiki_as_a_whole,
    *REFUSALS,
    comparisons.comparison_in_a_sentence,  # before the model is asked, which barely tells the two orders apart
    refusals.not_about_the_subject,
    comparisons.comparison_both_ways,
    refusals.the_statement,
    refusals.best_sentences,
]

MODEL: list[Reading] = [
    model.cites_nothing,
    model.cites_nothing_about_the_subject,
    model.cited_kind,
    model.cited_passages_silent,
    model.no_without_the_number,
    model.model_verdict_stands,
]

LISTS: dict[str, list[Reading]] = {"selection": SELECTION, "answer": ANSWER, "statement": STATEMENT, "model": MODEL}


def every_reading() -> list[Reading]:
    """Every reading once, in the order of the lists."""
    return list({item.name: item for items in LISTS.values() for item in items}.values())
