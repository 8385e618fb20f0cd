"""What every NLI cross-encoder does around its model, whichever runtime scores it (``nli.NLIVerifier`` under
transformers, ``onnx_nli.OnnxNLIVerifier`` under ONNX Runtime): its label names read as columns, its probabilities
put in llmwiki's three (entailment, neutral, contradiction), and each distinct pair scored once."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from llmwiki.errors import VerifierError

_ALIASES = {
    "entailment": "entailment", "entail": "entailment", "entails": "entailment", "entailed": "entailment", "supports": "entailment", "supported": "entailment",
    "neutral": "neutral", "not_enough_info": "neutral", "nei": "neutral",
    "contradiction": "contradiction", "contradict": "contradiction", "contradicts": "contradiction", "refutes": "contradiction", "refuted": "contradiction",
    "not_entailment": "not_entailment", "non_entailment": "not_entailment", "not_entailed": "not_entailment", "notentailment": "not_entailment",
}


def label_columns(id2label: dict) -> dict[str, int]:
    """Map a model's id2label to {entailment, neutral, contradiction | not_entailment: index}."""
    mapping: dict[str, int] = {}
    for index, name in id2label.items():
        key = re.sub(r"[\s\-]+", "_", str(name).strip().lower())
        canonical = _ALIASES.get(key)
        if canonical is None:
            msg = (
                f"label {name!r} (id {index}) is not an NLI label. The model's config.json must name its labels "
                "entailment / neutral / contradiction (or entailment / not_entailment) in id2label."
            )
            raise VerifierError(msg)
        mapping[canonical] = int(index)
    if "entailment" not in mapping or not ({"neutral", "contradiction"} <= set(mapping) or "not_entailment" in mapping):
        raise VerifierError(f"labels {sorted(mapping)} lack entailment plus neutral/contradiction or not_entailment. Use a 2- or 3-way NLI model.")
    return mapping


def three_columns(probabilities: np.ndarray, columns: dict[str, int]) -> np.ndarray:
    """(n, 3) entailment, neutral, contradiction from a model's own columns; a two-label model's P(not entailment)
    is reported as neutral and 0 as contradiction."""
    result = np.zeros((len(probabilities), 3), dtype=np.float64)
    result[:, 0] = probabilities[:, columns["entailment"]]
    if "not_entailment" in columns:
        result[:, 1] = probabilities[:, columns["not_entailment"]]
    else:
        result[:, 1] = probabilities[:, columns["neutral"]]
        result[:, 2] = probabilities[:, columns["contradiction"]]
    return result


def each_pair_once(premises: Sequence[str], hypotheses: Sequence[str], score: Callable[[list[str], list[str]], np.ndarray]) -> np.ndarray:
    """score's (n, 3) rows for these pairs, each distinct pair scored once: chunks overlap, so a page's clauses often
    meet the same window twice. VerifierError when the two lists differ in length."""
    if len(premises) != len(hypotheses):
        raise VerifierError(f"{len(premises)} premises but {len(hypotheses)} hypotheses; give one premise per hypothesis.")
    unique = list(dict.fromkeys(zip(premises, hypotheses)))
    scores = score([premise for premise, _ in unique], [hypothesis for _, hypothesis in unique])
    row_of = {pair: row for row, pair in enumerate(unique)}
    return scores[[row_of[pair] for pair in zip(premises, hypotheses)]].reshape(-1, 3)
