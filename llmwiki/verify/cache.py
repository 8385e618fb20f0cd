"""NLI scores kept across runs: a reviewer who re-verifies a page after editing one sentence waits for that sentence.

Page verification, lint and yes/no answers score (premise window, claim) pairs
with the NLI model, and most pairs come back unchanged from one run to the
next: the page's other sentences, the same source windows. ``CachedVerifier``
wraps a verifier and keeps each pair's three probabilities in
``.llmwiki/scores.sqlite``, keyed by the model as the reviewer sees it (name,
weights, int8), its input length and the pair's text, so a changed model or
setting never reads another's scores. Only the pairs not seen before reach the
model, in one batch.

The file is a cache: one that cannot be read (damaged, locked past the
timeout, a read-only folder) is set aside for this process and the model
scores everything, as without it; nothing else depends on it, so deleting it
loses nothing but time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from llmwiki.store.score_cache import ScoreCache

CACHE_FILE = "scores.sqlite"


class CachedVerifier:
    """A verifier whose scores are kept in a ``ScoreCache``; everything else (name, version, labels) is the verifier's."""

    def __init__(self, verifier, cache: ScoreCache) -> None:
        self.verifier = verifier
        self.cache = cache
        self.hits = 0  # pairs answered from the cache in this process, for the bench and the tests
        self.misses = 0

    def __getattr__(self, name: str):
        return getattr(self.verifier, name)

    def score(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        if len(premises) != len(hypotheses):
            return self.verifier.score(premises, hypotheses)  # the verifier's own error
        keys = [self.cache.key(premise, hypothesis) for premise, hypothesis in zip(premises, hypotheses)]
        known = self.cache.get(list(dict.fromkeys(keys)))
        first: dict[bytes, int] = {}  # a pair asked twice in one call is scored once
        for index, key in enumerate(keys):
            if key not in known:
                first.setdefault(key, index)
        missing = list(first.values())
        result = np.zeros((len(keys), 3), dtype=np.float64)
        if missing:
            scored = self.verifier.score([premises[index] for index in missing], [hypotheses[index] for index in missing])
            fresh = {keys[index]: tuple(float(value) for value in row) for index, row in zip(missing, scored)}
            self.cache.put(fresh)
            known = {**known, **fresh}
        for index, key in enumerate(keys):
            result[index] = known[key]
        self.misses += len(missing)
        self.hits += len(keys) - len(missing)
        return result


def cached(verifier, state_dir: Path):
    """The verifier with its scores kept in ``state_dir/scores.sqlite``: NLI models only (word overlap and cosine
    cost less to compute than to look up)."""
    if not hasattr(verifier, "model") or not hasattr(verifier, "tokenizer"):
        return verifier
    from llmwiki.verify.nli import describe

    model = f"{describe(verifier)} max_length={getattr(verifier, 'max_length', '')}"
    folder = Path(verifier.name)
    try:  # a local folder trained again keeps its name: its files' sizes and times tell the weights apart
        if folder.is_dir():
            model += " " + ",".join(f"{path.name}:{path.stat().st_size}:{path.stat().st_mtime_ns}" for path in sorted(folder.iterdir()) if path.is_file())
    except OSError:
        pass
    return CachedVerifier(verifier, ScoreCache(Path(state_dir) / CACHE_FILE, model))
