"""The yes/no readings of a statement against the sentences about its subject, scored once (``case.StatementCase``).

A yes needs a sentence that supports the statement, speaks to what it says, and none as close that opposes it. A
no needs the closest sentence to state otherwise (a fact opposed or negated, another number of its kind or another
word in a name's place: ``FactCheck.contradicted``; or the model's contradiction, where the sentence leaves none of
the statement's numbers out) and to speak to what the statement says: a sentence that merely fails to support it is
no "no", and a year or a name it leaves out is no denial. Anything else is not settled, quoting the closest
sentence. A sentence about someone else is never read: "In 1919, Canada joined the League of Nations" denies nothing
about the U.S.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llmwiki.read.candidates import quote
from llmwiki.read.readings.core import Decision, Example, aside, reading, unsettled
from llmwiki.read.readings.evidence import speaks_to, why_not

if TYPE_CHECKING:
    from llmwiki.read.readings.case import StatementCase


@reading("supported", "yes/no")
def supported(case: StatementCase) -> Decision | None:
    """A yes: the best sentence's calibrated score reaches ``policy.yes_threshold``, it holds what the statement says
    of its subject, no sentence as close opposes it (by a fact check, or by the model's contradiction where that is
    stronger than the support), and no word of the statement stands replaced in it by another."""
    if not case.would_be_yes:
        return None
    best = case.best
    return Decision(f"Yes — {quote(best.candidate)}", verdict="yes", reason=f"the sentence supports it (score {best.score:.2f}, entailment {best.entailment:.2f})")


@reading("contested yes", "yes/no")
def contested_yes(case: StatementCase) -> Decision | None:
    """A no: a sentence that holds as many of the statement's words as the best, speaks to it, and which the model
    reads as contradicting it more strongly than the best reads as supporting it. "Wilson said that the committee
    system was fundamentally undemocratic" (contradiction 0.59) against "Wilson also believed that the Committee
    System facilitated corruption" (entailment 0.35), for "Wilson supported the committee system"."""
    if case.contested is None:
        return None
    return _denial(case, case.contested)


@reading("fact opposed", "yes/no")
def fact_opposed(case: StatementCase) -> Decision | None:
    """A no: the sentence that holds most of the statement's words states otherwise by the fact check (an opposite,
    a negation, another number of its kind or another name in a name's place, with the rule that found it) and
    speaks to what the statement says."""
    closest = case.closest
    if not closest.check.contradicted or not speaks_to(case.statement, case.subject, closest.check, closest.candidate, policy=case.policy):
        return None
    return _denial(case, closest)


@reading("model contradiction", "yes/no")
def model_contradiction(case: StatementCase) -> Decision | None:
    """A no: the model reads the closest sentence as contradicting the statement (``policy.no_contradiction``), the
    sentence leaves none of the statement's numbers out (one silent on a year does not deny it) and it speaks to
    what the statement says."""
    closest = case.closest
    if not case.model_denies(closest) or not speaks_to(case.statement, case.subject, closest.check, closest.candidate, policy=case.policy):
        return None
    return _denial(case, closest)


@reading("not settled", "yes/no")
def not_settled(case: StatementCase) -> Decision | None:
    """Neither a yes nor a no: the answer quotes the sentence that holds most of the statement's words."""
    return unsettled(f" — the closest passage: {quote(case.closest.candidate)}", reason="no sentence supports it, and none that speaks to it states otherwise")


def _denial(case: StatementCase, item) -> Decision:
    why = why_not(item.check, case.statement)
    if not item.check.contradicted:
        why = "; ".join(filter(None, ("the passage contradicts it", why)))
    rules = sorted({opposition.rule for opposition in item.check.opposed})  # which rule found each opposite
    return Decision(f"No — {quote(item.candidate)} {aside(why)}", verdict="no", reason=why + (f" (found by: {', '.join(rules)})" if rules else ""))


_VOLTA = ("Alessandro Volta", "Alessandro Volta was an Italian physicist. He invented the electric battery in 1800. Volta was born in Como.")

# Each reading's cases: tests/test_readings.py reads each with the reading (it decides, as expected) and without it.
EXAMPLES = [
    Example("supported", "Was Volta born in Como?", (_VOLTA,), "yes"),
    Example("supported", "Did Volta invent the electric battery?", (_VOLTA,), "yes"),
    Example("fact opposed", "Was Volta born in Milan?", (_VOLTA,), "no"),
    Example("fact opposed", "Did Volta invent the battery in 1850?", (_VOLTA,), "no"),
    Example("fact opposed", "Do penguins have many natural predators on land?",
            (("Penguin", "Penguins have few natural predators on land. A leopard seal is a natural predator of penguins at sea."),), "no"),
    Example("model contradiction", "Was Volta a German physicist?", (_VOLTA,), "no"),
    Example("not settled", "Was Volta born in Como in 1745?", (_VOLTA,), "unsettled"),
    Example("not settled", "Did Volta invent the telephone?", (_VOLTA,), "unsettled"),
]
