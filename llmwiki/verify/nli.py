"""Sentence-pair scoring: P(entailment, neutral, contradiction) for (premise, hypothesis).

``NLIVerifier`` loads any Hugging Face sequence-classification NLI model, by
hub id (for users with hub access) or local path, through transformers. Labels
are mapped by their ``id2label`` names, in any order or casing; a two-label
model (entailment / not entailment) reports P(not entailment) as neutral and
0 as contradiction. Long pairs are truncated from the longer side so the
hypothesis is never dropped.

The default is llmwiki's own NLI model ("llmwiki-nli": MiniLM fine-tuned
by ``llmwiki.verify.train``, weights in ``weights/``, see MODEL.md). Two
non-NLI scorers serve as baselines and stand-ins: ``OverlapVerifier`` (the
share of the sentence's words found in the premise, "lexical-overlap", the
fallback of an install without the weights) and ``SimilarityVerifier``
(cosine of MiniLM embeddings, "minilm-cosine"); every report names the scorer
it used.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from llmwiki.errors import VerifierError
from llmwiki.models import quiet_loading
from llmwiki.text import content_words
from llmwiki.verify.pairs import each_pair_once, label_columns, three_columns

DEFAULT_MODEL = "llmwiki-default"
NLI_MODEL = "llmwiki-nli"  # llmwiki's own trained NLI model (weights in llmwiki/verify/weights, see MODEL.md)
SIMILARITY_MODEL = "minilm-cosine"
OVERLAP_MODEL = "lexical-overlap"



class Verifier(Protocol):
    name: str

    def score(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """(n, 3) probabilities: entailment, neutral, contradiction, one row per pair."""
        ...


class NLIVerifier:
    """A Hugging Face NLI cross-encoder on CPU or GPU, batched."""

    prefers_clauses = True  # page verification scores each clause (see llmwiki.verify.page.clauses)

    def __init__(self, model, *, device: str | None = None, max_length: int = 256, batch_size: int = 32, tokenizer=None, name: str | None = None, int8: bool = False,
                 version: str | None = None) -> None:
        """model: a hub id or local path, or an already loaded model (with its tokenizer).

        version: which weights, for the reviewer (the shipped model: its weights' sha256); by
        default the hub commit a downloaded model came from, where transformers recorded it.

        int8: on a CPU, quantize the linear layers' weights to int8 (dynamic
        quantization): faster, with slightly different scores.
        """
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        quiet_loading()
        if tokenizer is not None:
            self.name, self.model, self.tokenizer = name or "custom", model, tokenizer
        else:
            self.name = name or str(model)
            try:
                self.tokenizer = AutoTokenizer.from_pretrained(str(model))
                self.model = AutoModelForSequenceClassification.from_pretrained(str(model))
            except (OSError, ValueError) as err:
                msg = f"cannot load the NLI model {model!r} ({err}). Give a local folder saved with save_pretrained, or a hub id when the hub can be reached (HF_HUB_OFFLINE is set in tests)."
                raise VerifierError(msg) from err
        import torch

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.int8 = False
        if int8 and self.device == "cpu":
            from llmwiki.models import quantized_int8

            quantized = quantized_int8(self.model, what="the NLI model")
            if quantized is not None:
                self.model, self.int8 = quantized, True
        self.columns = label_columns(self.model.config.id2label)
        commit = getattr(self.model.config, "_commit_hash", None)
        self.version = version or (f"commit {commit[:12]}" if isinstance(commit, str) else None)
        self.contradictions = "contradiction" in self.columns  # a real P(contradiction), which lint needs; 2-way models have none
        self.max_length = min(max_length, getattr(self.tokenizer, "model_max_length", max_length) or max_length)
        self.batch_size = batch_size

    def score(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        return each_pair_once(premises, hypotheses, self._score_unique)

    def _score_unique(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        import torch

        # Batches of similar length pad less: on a CPU that is most of the cost.
        order = sorted(range(len(premises)), key=lambda index: len(premises[index]) + len(hypotheses[index]))
        rows = []
        for start in range(0, len(order), self.batch_size):
            batch_order = order[start:start + self.batch_size]
            batch = self.tokenizer(
                [premises[index] for index in batch_order], [hypotheses[index] for index in batch_order],
                truncation="longest_first", max_length=self.max_length, padding=True, return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                rows.append(torch.softmax(self.model(**batch).logits.float(), dim=-1).cpu().numpy())
        probabilities = np.zeros((len(premises), len(self.columns)))
        if rows:
            probabilities[order] = np.concatenate(rows)
        return three_columns(probabilities, self.columns)


class SimilarityVerifier:
    """Cosine similarity of MiniLM embeddings in [0, 1] as "entailment": a stand-in, not NLI."""

    name = SIMILARITY_MODEL
    contradictions = False  # its contradiction column is always 0

    def __init__(self, embedder=None) -> None:
        from llmwiki.embeddings import SentenceTransformerEmbedder

        self.embedder = embedder or SentenceTransformerEmbedder()

    def score(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        if not premises:
            return np.zeros((0, 3))
        unique = list(dict.fromkeys([*premises, *hypotheses]))
        vectors = dict(zip(unique, self.embedder.encode(unique)))
        similarity = np.array([float(vectors[p] @ vectors[h]) for p, h in zip(premises, hypotheses)])
        entail = np.clip((similarity + 1) / 2, 0, 1)
        return np.stack([entail, 1 - entail, np.zeros_like(entail)], axis=1)


class OverlapVerifier:
    """Share of the hypothesis's words (3+ letters) found in the premise, as "entailment".

    Not NLI: it cannot see negation or paraphrase (held-out NLI pairs: AUC
    0.641 against the shipped model's 0.946), though on WiCE, whose supported
    claims reuse their source's words, it ranks well (BAcc 67.2, AUC 0.740;
    bench/verify.py). The fallback when the trained weights are not installed.
    """

    name = OVERLAP_MODEL
    contradictions = False

    def score(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        rows = []
        for premise, hypothesis in zip(premises, hypotheses):
            words = content_words(hypothesis)
            share = len(words & content_words(premise)) / max(len(words), 1)
            rows.append([share, 1 - share, 0.0])
        return np.array(rows, dtype=np.float64).reshape(-1, 3)


def shipped_weights() -> Path | None:
    """The folder of llmwiki's own trained NLI weights, when this install has them."""
    folder = Path(__file__).parent / "weights"
    return folder if (folder / "SHA256SUMS").is_file() else None


def load_verifier(model: str = DEFAULT_MODEL, *, int8: bool = False, max_length: int = 256, runtime: str = "auto") -> Verifier:
    """The configured verifier: "llmwiki-default" (llmwiki's NLI model, or word overlap in an
    install without its weights), "llmwiki-nli", "lexical-overlap", "minilm-cosine", or any
    NLI model id or path.

    int8 and max_length apply to NLI models (see NLIVerifier). runtime, for llmwiki's own model:
    "auto" runs it int8 under ONNX Runtime on a CPU where that is installed (see onnx_nli: the
    same weights, seconds less start-up), "onnx" always, "torch" never.
    """
    from llmwiki.verify import onnx_nli

    use_onnx = onnx_nli.wants_onnx(runtime, int8=int8)  # a runtime that is not one of the three is an error for every model
    if model == DEFAULT_MODEL:
        model = NLI_MODEL if shipped_weights() is not None else OVERLAP_MODEL
    if model == SIMILARITY_MODEL:
        return SimilarityVerifier()
    if model == OVERLAP_MODEL:
        return OverlapVerifier()
    if model == NLI_MODEL:
        from llmwiki.verify.train import WEIGHTS_DIR

        if use_onnx and (verifier := onnx_nli.load_onnx(shipped_weights() or WEIGHTS_DIR, name=NLI_MODEL, max_length=max_length)) is not None:
            return verifier
        return load_trained(shipped_weights() or WEIGHTS_DIR, name=NLI_MODEL, int8=int8, max_length=max_length)
    return NLIVerifier(model, int8=int8, max_length=max_length)


def load_trained(folder: Path, *, name: str, int8: bool = False, max_length: int = 256) -> NLIVerifier:
    """A cross-encoder llmwiki trained (fp16 weights in ``folder`` over the packaged MiniLM, checksums checked;
    the verifier's and the answer ranker's), named by its weights' sha256 for the reviewer."""
    from llmwiki.verify.train import load_shipped

    quiet_loading()
    loaded, tokenizer = load_shipped(folder)  # absent or damaged weights: an error saying what to do
    digest = (folder / "SHA256SUMS").read_text(encoding="utf-8").split()[0]
    return NLIVerifier(loaded, tokenizer=tokenizer, name=name, int8=int8, max_length=max_length, version=f"weights sha256 {digest[:12]}")


def describe(verifier) -> str:
    """The verifier as a reviewer should see it: its name, which weights, int8 where quantized, and onnxruntime where it runs there."""
    details = [detail for detail in (getattr(verifier, "version", None), "int8" if getattr(verifier, "int8", False) else None,
                                     getattr(verifier, "runtime", None)) if detail]
    return verifier.name + (f" ({', '.join(details)})" if details else "")


def not_nli_note(verifier) -> str | None:
    """What to tell a reviewer whose scores do not come from an NLI model, else None."""
    if verifier.name not in (OVERLAP_MODEL, SIMILARITY_MODEL):
        return None
    ours = 'model = "llmwiki-nli" for llmwiki\'s own NLI model' if shipped_weights() is not None else "model (llmwiki's own NLI model is not installed: python -m llmwiki.verify.train)"
    return f"Scores are {verifier.name}, not NLI entailment: it cannot see negation or paraphrase. For entailment set [verification] {ours}, or an NLI model id or path."
