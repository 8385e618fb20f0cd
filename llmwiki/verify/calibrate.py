"""One calibrated score from the NLI probability and the fact checks.

A sentence's raw P(entailment) says whether the gist follows; the fact
checks (``facts``) say whether each name, number and polarity it asserts is
in its evidence. A logistic regression combines them into one probability
that the sentence is supported, fitted by ``bench/verify.py --fit`` on
changed-fact claims the project makes from CMU QA S08 articles (sets 1-2;
sets 3-4 and WiCE are left for measuring) and kept per verifier in
``calibration.json``. The NLI probability's weight is kept non-negative, so
the score rises with it: a threshold on the score means what it says; likewise
coverage only raises it, contradiction and failed facts only lower it (SIGNS).

Whatever the probabilities, a sentence with an asserted fact absent from,
or opposed by, its evidence is not supported: its score is held to at most
``FACT_FAILED_CAP``. A verifier without fitted weights gets the raw
probability under the same cap.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from llmwiki.text.facts import FactCheck

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
FEATURES = ("p_entailment", "p_contradiction", "missing_name", "missing_number", "opposed", "negation", "coverage")
FACT_FAILED_CAP = 0.1


def _fact_failed(values: Sequence[float]) -> bool:
    return any(values[index] for index in range(2, 6))


def sentence_features(clauses: Sequence[tuple[float, float, FactCheck]]) -> list[float]:
    """The calibration's inputs for a sentence from its clauses' (P(entailment), P(contradiction), fact check),
    in FEATURES order: the weakest clause's entailment, the strongest contradiction, whether any clause
    failed each fact check, and the lowest coverage. A sentence is as supported as its weakest clause,
    and every fact it asserts must be found."""
    checks = [check for _, _, check in clauses]
    return [min(entailment for entailment, _, _ in clauses), max(contradiction for _, contradiction, _ in clauses),
            float(any(check.missing_names for check in checks)), float(any(check.missing_numbers for check in checks)),
            float(any(check.opposed for check in checks)), float(any(check.negation is not None for check in checks)),
            min(check.coverage for check in checks)]


@dataclass(frozen=True)
class Calibration:
    model: str
    weights: tuple[float, ...]  # one per FEATURES
    intercept: float

    def score(self, values: Sequence[float]) -> float:
        """P(supported) for one clause's features, in [0, 1]."""
        logit = self.intercept + sum(weight * value for weight, value in zip(self.weights, values))
        score = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit))))
        return min(score, FACT_FAILED_CAP) if _fact_failed(values) else score


class Uncalibrated:
    """The rule for a verifier with no fitted calibration: the raw probability, capped when a fact fails."""

    def __init__(self, model: str) -> None:
        self.model = model

    def score(self, values: Sequence[float]) -> float:
        return min(values[0], FACT_FAILED_CAP) if _fact_failed(values) else values[0]


def load_calibration(model: str, path: Path = CALIBRATION_FILE) -> Calibration | Uncalibrated:
    """The fitted calibration for a verifier by name, or the unfitted rule."""
    if path.is_file():
        entry = json.loads(path.read_text(encoding="utf-8")).get("models", {}).get(model)
        if entry is not None and tuple(entry["features"]) == FEATURES:
            return Calibration(model, tuple(entry["weights"]), entry["intercept"])
    return Uncalibrated(model)


# The direction each feature may push the score: more entailment or coverage never lowers it,
# contradiction or a failed fact never raises it. The fit is held to these signs.
SIGNS = (1, -1, -1, -1, -1, -1, 1)


def fit(rows: np.ndarray, labels: np.ndarray, *, model: str, l2: float = 1.0, iterations: int = 100) -> Calibration:
    """Logistic regression by projected Newton steps with an L2 penalty, each weight held to its sign in SIGNS."""
    design = np.hstack([rows, np.ones((len(rows), 1))])
    weights = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        predicted = 1.0 / (1.0 + np.exp(-np.clip(design @ weights, -50, 50)))
        gradient = design.T @ (predicted - labels) + penalty * weights
        hessian = (design * (predicted * (1 - predicted))[:, None]).T @ design + np.diag(penalty + 1e-9)
        weights -= np.linalg.solve(hessian, gradient)
        for index, sign in enumerate(SIGNS):
            weights[index] = max(weights[index] * sign, 0.0) * sign
    return Calibration(model, tuple(float(value) for value in weights[:-1]), float(weights[-1]))


def save_calibration(calibration: Calibration, *, note: str, path: Path = CALIBRATION_FILE) -> None:
    """Add or replace one verifier's calibration in the file."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"models": {}}
    data["models"][calibration.model] = {"features": list(FEATURES), "weights": [round(value, 5) for value in calibration.weights],
                                         "intercept": round(calibration.intercept, 5), "fitted_on": note}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Refit:
    """A calibration refitted on reviewers' verdicts, and how often each calibration agrees with held-out verdicts."""

    calibration: Calibration | None  # None: not enough verdicts, or not kept
    verdicts: int
    held_out: int
    shipped_agreement: float | None
    fitted_agreement: float | None
    kept: bool
    why: str = ""

    def summary(self) -> str:
        if self.shipped_agreement is None:
            return f"Not recalibrated: {self.why}."
        change = f"agreement with {self.held_out} held-out verdicts {self.shipped_agreement:.0%} -> {self.fitted_agreement:.0%}"
        if self.kept:
            return f"Calibrated on {self.verdicts - self.held_out} of your verdicts: {change}; this workspace now uses it."
        return f"Refitted on {self.verdicts - self.held_out} of your verdicts, not kept: {change} (the shipped calibration stays)."


def agreement(calibration, rows: np.ndarray, labels: np.ndarray, threshold: float) -> float:
    """The share of verdicts (1 accept, 0 reject) a calibration's scores agree with at the threshold."""
    predicted = np.array([calibration.score(row) >= threshold for row in rows], dtype=float)
    return float((predicted == labels).mean()) if len(labels) else 0.0


def refit(rows: np.ndarray, labels: np.ndarray, held_out: np.ndarray, *, shipped, model: str, threshold: float, min_verdicts: int) -> Refit:
    """Fit a calibration on the verdicts not held out and keep it only if it agrees with the held-out ones more
    often than the shipped calibration does. rows: features (FEATURES order); labels: 1 accepted, 0 rejected."""
    count = len(labels)
    accepted, rejected = int(labels.sum()), int(count - labels.sum())
    minimum_each = max(5, min_verdicts // 10)
    if count < min_verdicts or accepted < minimum_each or rejected < minimum_each:
        why = f"{count} verdicts with scores ({accepted} accepted, {rejected} rejected); it needs {min_verdicts}, at least {minimum_each} of each kind"
        return Refit(None, count, 0, None, None, False, why)
    train = ~held_out
    fitted = fit(rows[train], labels[train], model=model)
    before = agreement(shipped, rows[held_out], labels[held_out], threshold)
    after = agreement(fitted, rows[held_out], labels[held_out], threshold)
    kept = after > before
    return Refit(fitted if kept else None, count, int(held_out.sum()), before, after, kept)
