"""The verifier's score cache on disk: NLI probabilities per pair in an SQLite file beside the store.

``llmwiki.verify.cache`` decides what is cached and keys it; this module only
keeps rows. The file is a cache: one that cannot be read (damaged, locked past
the timeout, a read-only folder) is set aside for the process, so callers
score everything, as without it.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

_SCHEMA = "CREATE TABLE IF NOT EXISTS scores (key BLOB PRIMARY KEY, entailment REAL, neutral REAL, contradiction REAL)"
_BATCH = 500  # keys per lookup: below SQLite's variable limit


class ScoreCache:
    """(premise, hypothesis) -> probabilities for one model, in an SQLite file shared by processes."""

    def __init__(self, path: Path, model: str) -> None:
        self.path = Path(path)
        self.model = model
        self._lock = threading.Lock()
        self._broken = False

    def key(self, premise: str, hypothesis: str) -> bytes:
        return hashlib.sha256(f"{self.model}\0{premise}\0{hypothesis}".encode("utf-8", "surrogatepass")).digest()[:16]

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=5.0)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(_SCHEMA)
        return conn

    def _give_up(self, err: Exception) -> None:
        if not self._broken:
            log.info("the score cache %s cannot be used (%s); scoring without it", self.path, err)
        self._broken = True

    def get(self, keys: Sequence[bytes]) -> dict[bytes, tuple[float, float, float]]:
        if self._broken or not keys:
            return {}
        found: dict[bytes, tuple[float, float, float]] = {}
        try:
            with self._lock, self._connect() as conn:
                for start in range(0, len(keys), _BATCH):
                    batch = list(keys[start:start + _BATCH])
                    rows = conn.execute(f"SELECT key, entailment, neutral, contradiction FROM scores WHERE key IN ({','.join('?' * len(batch))})", batch)
                    found.update((bytes(key), (e, n, c)) for key, e, n, c in rows)
        except (sqlite3.Error, OSError) as err:
            self._give_up(err)
            return {}
        return found

    def put(self, rows: dict[bytes, tuple[float, float, float]]) -> None:
        if self._broken or not rows:
            return
        try:
            with self._lock, self._connect() as conn:
                conn.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)", [(key, *values) for key, values in rows.items()])
        except (sqlite3.Error, OSError) as err:
            self._give_up(err)
