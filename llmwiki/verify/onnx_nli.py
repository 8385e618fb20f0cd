"""The shipped NLI model under ONNX Runtime: the same weights, without torch or transformers at run time.

Importing torch and transformers costs seconds before the first pair is scored (on this project's
2-core machine, about 5 s of the 13 s a `llmwiki verify PAGE` took), and most of a one-page check is
start-up. ONNX Runtime and the ``tokenizers`` library load in a fraction of that and score int8 pairs
as fast as torch does.

The ONNX file is made from the shipped weights once per install, on first use (torch exports the
model, ONNX Runtime quantizes its weights to int8), and kept in the user's cache folder
(``LLMWIKI_CACHE_DIR``, else ``$XDG_CACHE_HOME/llmwiki``, else ``~/.cache/llmwiki``) under a name
that holds the weights' sha256, so new weights get a new file. A file that cannot be read is made
again; where none can be written, the torch path is used, as it is for any other model a user
configures and wherever ``[verification] runtime = "torch"``.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from llmwiki.errors import VerifierError
from llmwiki.verify.pairs import each_pair_once, label_columns, three_columns

OPSET = 17
# Padded tokens per batch (pairs x the longest): 512 scored the Volta summary's and a reworded page's pairs 1.9x as fast as
# all of a call's pairs in one batch (at most 64), and 400 held-out NLI pairs 1.6x (128: 1.8x / 1.3x, 1024: 1.7x / 1.6x,
# 4096: 1.0x / 1.0x), on the project's 2-core CPU, where a small batch's activations stay in cache (two runs of 2026-12-03,
# the mean of their ratios). A speed setting for this kind of CPU, not a judgement: scores move only by int8 rounding.
TOKENS_PER_BATCH = 512
RUNTIMES = ("auto", "onnx", "torch")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

log = logging.getLogger("llmwiki")


def available() -> bool:
    """Whether ONNX Runtime is installed (found without importing it)."""
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None


def gpu_present() -> bool:
    """Whether an NVIDIA driver is loaded: there torch runs the model on the GPU, which ONNX Runtime's CPU build cannot.
    Read from the driver's files, as asking torch would import it."""
    return Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidia0").exists()


def wants_onnx(runtime: str, *, int8: bool) -> bool:
    """Whether the shipped model should run under ONNX Runtime: "onnx" always (an error when it is not installed);
    "auto" for int8 on a CPU when ONNX Runtime is installed; "torch" never."""
    if runtime not in RUNTIMES:
        raise VerifierError(f"[verification] runtime = {runtime!r} is not one of {', '.join(RUNTIMES)}. Set it in wiki_config.toml.")
    if runtime == "onnx":
        if not available():
            raise VerifierError('[verification] runtime = "onnx" needs ONNX Runtime: `pip install onnxruntime onnx`, or set runtime = "auto".')
        return True
    return runtime == "auto" and int8 and available() and not gpu_present()


def cache_dir() -> Path:
    """Where files made from the shipped weights are kept (LLMWIKI_CACHE_DIR, XDG_CACHE_HOME/llmwiki, ~/.cache/llmwiki)."""
    if os.environ.get("LLMWIKI_CACHE_DIR"):
        return Path(os.environ["LLMWIKI_CACHE_DIR"])
    base = Path(os.environ["XDG_CACHE_HOME"]) if os.environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "llmwiki"


def onnx_path(digest: str) -> Path:
    """The int8 ONNX file for the weights with this sha256."""
    return cache_dir() / "onnx" / f"nli-{digest[:16]}-opset{OPSET}-int8.onnx"


def export(weights: Path, target: Path) -> Path:
    """Write the shipped model (weights in ``weights``) as an int8 ONNX file at ``target``, atomically: a reader
    never sees half a file, and two processes exporting at once leave one whole file."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from llmwiki.verify.train import load_shipped

    model, tokenizer = load_shipped(weights)

    class Logits(torch.nn.Module):  # the exported graph takes the three inputs by position and returns the logits alone
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    example = tokenizer(["A premise of a few words."], ["A hypothesis."], return_tensors="pt")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        full, quantized = Path(scratch) / "fp32.onnx", Path(scratch) / "int8.onnx"
        with warnings.catch_warnings(), torch.inference_mode():  # the TorchScript exporter announces its successor
            warnings.simplefilter("ignore")
            torch.onnx.export(Logits(model.eval()), tuple(example[name] for name in _INPUTS), str(full), input_names=list(_INPUTS), output_names=["logits"],
                              dynamic_axes={**{name: {0: "batch", 1: "tokens"} for name in _INPUTS}, "logits": {0: "batch"}}, opset_version=OPSET, dynamo=False)
        advice = logging.Filter("onnxruntime")  # quantize_dynamic's advice to pre-process, on the root logger, is for image models
        logging.getLogger().addFilter(advice)
        try:
            quantize_dynamic(str(full), str(quantized), weight_type=QuantType.QInt8)
        finally:
            logging.getLogger().removeFilter(advice)
        os.replace(quantized, target)
    return target


class OnnxNLIVerifier:
    """The shipped NLI cross-encoder as an int8 ONNX model: the interface of ``NLIVerifier`` (name, version, score)."""

    prefers_clauses = True
    int8 = True
    runtime = "onnxruntime"

    def __init__(self, path: Path, tokenizer_file: Path, *, name: str, version: str, id2label: dict, max_length: int = 256, batch_size: int = 32) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only: ONNX Runtime's warnings name graph nodes, not anything a reviewer can act on
        self.model = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.name, self.version = name, version
        self.max_length, self.batch_size = max_length, batch_size
        self.tokenizer.enable_truncation(max_length, strategy="longest_first")  # as transformers truncates: the hypothesis is never dropped
        self.tokenizer.no_padding()  # score() pads each batch to its longest pair (the file pads to a fixed 128)
        self.columns = label_columns(id2label)
        self.contradictions = "contradiction" in self.columns

    def score(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        return each_pair_once(premises, hypotheses, self._score_unique)

    def _score_unique(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(zip(premises, hypotheses)))
        probabilities = np.zeros((len(encodings), len(self.columns)))
        for batch in token_batches([len(encoding.ids) for encoding in encodings], TOKENS_PER_BATCH, self.batch_size):
            width = len(encodings[batch[-1]].ids)  # the longest: batches hold pairs sorted by length
            inputs = {name: np.zeros((len(batch), width), dtype=np.int64) for name in _INPUTS}
            for row, index in enumerate(batch):
                encoding = encodings[index]
                inputs["input_ids"][row, :len(encoding.ids)] = encoding.ids  # padding id 0 and mask 0 after the pair, as BERT pads
                inputs["attention_mask"][row, :len(encoding.ids)] = 1
                inputs["token_type_ids"][row, :len(encoding.ids)] = encoding.type_ids
            logits = self.model.run(["logits"], inputs)[0].astype(np.float64)
            exponentials = np.exp(logits - logits.max(axis=1, keepdims=True))
            probabilities[batch] = exponentials / exponentials.sum(axis=1, keepdims=True)
        return three_columns(probabilities, self.columns)


def token_batches(lengths: Sequence[int], tokens: int, most: int) -> list[list[int]]:
    """Indices grouped into batches by token count: sorted by length, a batch closed before its padded size
    (pairs x longest) would pass ``tokens`` or it holds ``most`` pairs; a pair longer than ``tokens`` is a batch alone."""
    batches: list[list[int]] = []
    for index in sorted(range(len(lengths)), key=lambda index: lengths[index]):
        if batches and (len(batches[-1]) + 1) * lengths[index] <= tokens and len(batches[-1]) < most:
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


def load_onnx(weights: Path, *, name: str, max_length: int = 256) -> OnnxNLIVerifier | None:
    """The shipped model (weights checked against their sha256; VerifierError when absent or damaged) under ONNX
    Runtime, its ONNX file made on first use; None where no file can be made or read (the caller falls back to torch)."""
    from llmwiki.models import minilm_path
    from llmwiki.verify.train import LABELS, checked_digest

    digest = checked_digest(weights)
    base = minilm_path()
    model_max = json.loads((base / "tokenizer_config.json").read_text(encoding="utf-8")).get("model_max_length", max_length)
    path = onnx_path(digest)
    for attempt in range(2):  # a damaged file (a disk that filled up) is made again once
        if not path.is_file() or attempt:
            try:
                started = time.perf_counter()
                # a warning, so that the CLI (which configures no logging) shows why this first run waits
                log.warning("llmwiki: preparing the NLI model for ONNX Runtime, once per install (about 15 s); it is kept in %s", path.parent)
                export(weights, path)
                log.info("made %s from the shipped NLI weights in %.1f s", path, time.perf_counter() - started)
            except Exception as err:  # noqa: BLE001 - whatever the exporter or quantizer raises, torch still runs the model
                log.warning("cannot make the ONNX file of the NLI model in %s (%s); it runs under torch. Set LLMWIKI_CACHE_DIR to a writable folder.", path.parent, err)
                return None
        try:
            return OnnxNLIVerifier(path, base / "tokenizer.json", name=name, version=f"weights sha256 {digest[:12]}", id2label=LABELS,
                                   max_length=min(max_length, int(model_max or max_length)))
        except Exception as err:  # onnxruntime raises its own exception types for an unreadable model file
            if attempt:
                log.warning("cannot load %s (%s); the NLI model runs under torch", path, err)
                return None
            log.warning("%s cannot be read (%s); making it again", path, err)
    return None
