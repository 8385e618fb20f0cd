"""What every reading is and returns, and the one loop that tries readings in order.

A reading is a named, pure function from one prepared case to a ``Decision`` (a verdict, a refusal, or an answer
without a verdict) or None, when the case is not the kind it reads. ``decide`` tries a list of readings in order and
returns the first decision with the trail of readings tried, so every answer can say which reading decided it and
why. Under ``recording()`` (the benches) every reading of the list is also read where an earlier one decided: what
the answer would have been without each reading is then the next decision in the list.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Step:
    """One reading tried for an answer: its name, what it came to ("yes", "no", "unsettled", "refused",
    "answered", or "passed" where the case was not its kind) and why, in words."""

    reading: str
    outcome: str
    reason: str = ""

    def as_json(self) -> dict:
        return {"reading": self.reading, "outcome": self.outcome, "reason": self.reason}


@dataclass(frozen=True)
class Decision:
    """What a reading settled. text: the reply as shown (the sentence it rests on quoted and cited); verdict: "yes" or
    "no" where it settles a yes/no question; refused: "the sources do not say"; reason: why, in words; by: the
    reading that decided (``decide`` fills it in; a reading that hands the case to another list keeps that one's);
    steps: the readings tried, in order, this one last."""

    text: str
    verdict: str | None = None
    refused: bool = False
    reason: str = ""
    by: str = ""
    steps: tuple[Step, ...] = field(default=(), compare=False)
    unsettled: bool = False  # a yes/no question the sources neither confirm nor deny (``unsettled``)

    @property
    def outcome(self) -> str:
        if self.refused:
            return "refused"
        return self.verdict or ("unsettled" if self.unsettled else "answered")


NOT_SETTLED = "The sources do not settle this"


def aside(reason: str) -> str:
    """A verdict's reason as the answer shows it after the quote: a sentence of its own in brackets ("(The passage
    says 1841, not 1850.)"), so that every part of an answer reads as a whole sentence."""
    reason = reason.strip().rstrip(".")
    return f"({reason[:1].upper()}{reason[1:]}.)" if reason else ""


def unsettled(rest: str, *, reason: str) -> Decision:
    """A yes/no question left unsettled: "The sources do not settle this" and ``rest`` (what the answer quotes)."""
    return Decision(f"{NOT_SETTLED}{rest}", reason=reason, unsettled=True)


@dataclass(frozen=True)
class Example:
    """A case a reading decides, written as an analyst would meet it: the question, the passages selected for it as
    (title, text), and what the answer comes to ("yes", "no", "unsettled", "refused", "answered"). Each reading's
    module keeps a table of these; ``tests/test_readings.py`` runs each one with the reading (it must decide, as
    expected) and without it (the answer must come out otherwise)."""

    reading: str
    question: str
    passages: tuple[tuple[str, str], ...]
    expected: str


@dataclass(frozen=True)
class Reading:
    """A named reading in a registry list. kind: what it reads ("refusal", "kind", "comparison", "yes/no",
    "answer", "model check"); read: the function, case -> Decision or None."""

    name: str
    kind: str
    read: Callable[..., Decision | None]

    @property
    def summary(self) -> str:
        """The first paragraph of the function's docstring: what kind of case it reads."""
        doc = inspect.getdoc(self.read) or ""
        return " ".join(doc.split("\n\n")[0].split())

    @property
    def module(self) -> str:
        return self.read.__module__


def reading(name: str, kind: str) -> Callable[[Callable[..., Decision | None]], Reading]:
    """Make a function a ``Reading`` named ``name``."""

    def wrap(function: Callable[..., Decision | None]) -> Reading:
        return Reading(name, kind, function)

    return wrap


@dataclass
class Recorded:
    """Under ``recording()``: one list's readings read on one case. decisions: each reading's decision or None, in the
    list's order (every reading read, also past the first decision); first: the place of the decision that stood."""

    list_name: str
    case: object
    decisions: list[tuple[str, Decision | None]]
    first: int


_RECORDER: contextvars.ContextVar[list[Recorded] | None] = contextvars.ContextVar("llmwiki_readings_recorder", default=None)


@contextlib.contextmanager
def recording() -> Iterator[list[Recorded]]:
    """Record every list of readings decided inside the block, each reading read on every case (``Recorded``): what
    ``bench/readings.py`` counts. The answers are the same as without it."""
    found: list[Recorded] = []
    token = _RECORDER.set(found)
    try:
        yield found
    finally:
        _RECORDER.reset(token)


def decide(readings: Sequence[Reading], case, *, list_name: str = "") -> Decision | None:
    """The first decision of the readings in order, with ``by`` and the steps tried before it; None when none decides."""
    steps: list[Step] = []
    recorder = _RECORDER.get()
    decided: Decision | None = None
    recorded: list[tuple[str, Decision | None]] = []
    first = -1
    for place, item in enumerate(readings):
        if decided is not None:
            if recorder is None:
                break
            try:  # past the decision, only for the record: a reading need not hold where an earlier one decided
                found = item.read(case)
            except Exception:  # noqa: BLE001 - a record, never an answer
                found = None
            recorded.append((item.name, found and (found if found.by else replace(found, by=item.name))))
            continue
        found = item.read(case)
        if found is None:
            steps.append(Step(item.name, "passed"))
            recorded.append((item.name, None))
            continue
        found = found if found.by else replace(found, by=item.name)
        # A decision handed on from another list carries that list's trail, its own last step included.
        own = found.steps or (Step(found.by, found.outcome, found.reason),)
        decided = replace(found, steps=(*steps, *own))
        recorded.append((item.name, found))
        first = place
    if recorder is not None:
        recorder.append(Recorded(list_name, case, recorded, first))
    return decided
