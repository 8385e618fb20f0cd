"""Readings that hold a model's yes or no to the extractive answer's evidence rule before it is shown.

A model (the openai backend, or the agentic chat) may answer a yes/no question "Yes" from a passage about something
else, or "No" from one silent on the year asked about. Its verdict stands only where a passage it cites is about what
the question names and speaks to what the question says of it, and, for a no, states the statement's numbers or
others of their kind in their place; otherwise the reply is shown as not settled, with the reason.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from llmwiki.policy import AnswerPolicy
from llmwiki.read.readings.core import Decision, reading, unsettled
from llmwiki.read.readings.evidence import holds_relation, relation_of
from llmwiki.text import stem
from llmwiki.text.facts import check_facts
from llmwiki.text.questions import question_words, kind_asked, kind_verdict, names_subject, question_subject, to_statement

MODEL_VERDICT = re.compile(r"^\W*(yes|no)\b[\s,.:;!—-]*", re.IGNORECASE)


class ModelCase:
    """A model's reply to a yes/no question, with the passages it cites (``answer.Citation``)."""

    def __init__(self, question: str, text: str, citations: Sequence, *, policy: AnswerPolicy):
        self.question, self.text, self.citations, self.policy = question, text, list(citations), policy

    @functools.cached_property
    def verdict(self) -> str | None:
        match = MODEL_VERDICT.match(self.text)
        return match.group(1).lower() if match else None

    @functools.cached_property
    def subject(self) -> list[str]:
        return question_subject(self.question)

    @functools.cached_property
    def statement(self) -> str:
        return to_statement(self.question)

    @functools.cached_property
    def about(self) -> list[str]:
        """The cited passages about what the question names (in the chunk, its section or its document's name)."""
        titled = [(citation, f"{citation.breadcrumb} {Path(citation.path).stem.replace('-', ' ')}") for citation in self.citations]
        return [f"{citation.text} {title}" for citation, title in titled if names_subject(self.subject, citation.text, title=title)]

    @functools.cached_property
    def relation(self) -> set[str]:
        return relation_of(self.statement, self.subject)

    @functools.cached_property
    def kinds(self) -> dict[str, str | None]:
        """{"yes" or "no": why} from the cited sentences that settle a statement saying only what kind its subject is
        (``questions.kind_verdict``); {} for any other statement."""
        from llmwiki.text.segment import sentence_spans

        if kind_asked(self.statement, self.subject) is None:
            return {}
        found: dict[str, str | None] = {}
        for passage in self.about:
            for start, end in sentence_spans(passage):
                if (settled := kind_verdict(self.statement, self.subject, " ".join(passage[start:end].split()))) is not None:
                    found.setdefault(*settled)
        return found

    @property
    def named(self) -> str:
        return " ".join(self.subject)


def _unsettled(case: ModelCase, reason: str) -> Decision:
    return unsettled(f" ({reason}); the model replied: {case.text}", reason=reason)


@reading("cites nothing", "model check")
def cites_nothing(case: ModelCase) -> Decision | None:
    """Not settled: the model's yes or no cites no passage."""
    return _unsettled(case, "the reply cites no passage") if not case.citations else None


@reading("cites nothing about the subject", "model check")
def cites_nothing_about_the_subject(case: ModelCase) -> Decision | None:
    """Not settled: no passage the model cites is about what the question names."""
    return _unsettled(case, f"no passage it cites is about {case.named}") if not case.about else None


@reading("cited kind", "model check")
def cited_kind(case: ModelCase) -> Decision | None:
    """A question on what kind of thing its subject is, held to the cited sentences that say what it is: the model's
    verdict stands where they agree with it, else the reply is not settled. "A kangaroo is a marsupial" answers "Is a
    kangaroo a reptile?" no."""
    if len(case.kinds) != 1:
        return None
    said, why = next(iter(case.kinds.items()))
    if said == case.verdict:
        return Decision(case.text, verdict=case.verdict, reason=f"a passage it cites on what {case.named} is answers {said}")
    return _unsettled(case, f"a passage it cites on what {case.named} is answers {said}" + (f", {why}" if why else ""))


@reading("cited passages silent", "model check")
def cited_passages_silent(case: ModelCase) -> Decision | None:
    """Not settled: no cited passage about the subject speaks to what the question says of it (``policy.no_relation_share``
    of the statement's other words, as the extractive answer asks of its sentences)."""
    if not case.relation or any(holds_relation(case.relation, text, case.policy) for text in case.about):
        return None
    unspoken = sorted(word for word in question_words(case.statement) if stem(word) in case.relation)
    return _unsettled(case, f"no passage it cites about {case.named or 'it'} speaks to {', '.join(unspoken[:4])}")


@reading("no without the number", "model check")
def no_without_the_number(case: ModelCase) -> Decision | None:
    """Not settled: a no, where every cited passage leaves one of the statement's numbers out with no other number of
    its kind in its place: a passage silent on the year denies nothing about it."""
    if case.verdict != "no":
        return None
    silent = [set(check_facts(case.statement, [passage]).unrivalled_numbers) for passage in case.about]
    left_out = sorted(set.intersection(*silent)) if silent else []
    return _unsettled(case, f"no passage it cites about {case.named or 'it'} states {', '.join(left_out)} or another in its place") if left_out else None


@reading("model verdict stands", "model check")
def model_verdict_stands(case: ModelCase) -> Decision | None:
    """The model's yes or no stands: a passage it cites is about the subject and speaks to what the question says."""
    return Decision(case.text, verdict=case.verdict, reason="a passage it cites is about the subject and speaks to the question")


class Cited(NamedTuple):
    """A passage a model's reply cites, as ``ModelCase`` reads it (``answer.Citation`` has these and more)."""

    path: str
    breadcrumb: str
    text: str


class ModelExample(NamedTuple):
    """A model's reply that a check decides: the question, the reply, the passages it cites, and what the answer
    comes to ("yes", "no" where the verdict stands, "unsettled" where it does not)."""

    reading: str
    question: str
    reply: str
    cited: tuple[Cited, ...]
    expected: str


_VOLTA = Cited("sources/volta.md", "Alessandro Volta", "Alessandro Volta was an Italian physicist. He invented the electric battery in 1800.")
_UNDATED = Cited("sources/volta.md", "Alessandro Volta", "Alessandro Volta was an Italian physicist. He invented the electric battery.")
_KANGAROO = Cited("sources/kangaroo.md", "Kangaroo", "The kangaroo is a marsupial from the family Macropodidae.")
_LEAGUE = Cited("sources/league.md", "The League of Nations", "In 1919, Canada joined the League of Nations independently of Britain.")

# Each check's cases: tests/test_readings.py reads each with the check (it decides, as expected) and without it.
EXAMPLES = [
    ModelExample("cites nothing", "Was Volta Italian?", "Yes, he was Italian.", (), "unsettled"),
    ModelExample("cites nothing about the subject", "Did the U.S. join the League of Nations?", "Yes [c1].", (_LEAGUE,), "unsettled"),
    ModelExample("cited kind", "Is a kangaroo a reptile?", "Yes [c1].", (_KANGAROO,), "unsettled"),
    ModelExample("cited kind", "Is a kangaroo a marsupial?", "Yes [c1].", (_KANGAROO,), "yes"),
    ModelExample("cited passages silent", "Did Volta teach at Pavia?", "Yes [c1].", (_VOLTA,), "unsettled"),
    ModelExample("no without the number", "Did Volta invent the electric battery in 1799?", "No [c1].", (_UNDATED,), "unsettled"),
    ModelExample("model verdict stands", "Did Volta invent the electric battery?", "Yes [c1].", (_VOLTA,), "yes"),
]
