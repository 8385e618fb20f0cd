"""The store: a wiki's documents, chunks, references and verifications, behind one contract.

    contract.Store          what every caller takes: each operation written once, in shared SQL
      duckdb_store          the embedded default, one file in .llmwiki/ (snapshots, in-process search)
      postgres_store        a shared PostgreSQL database, ``[store] url`` (search in the server)
    schema                  the numbered migrations, each written once for both databases
    dialect                 what the two databases spell differently (placeholders, clock, keys, locks)

This package is the only place with SQL and the only one that imports
DuckDB (``tests/test_layers.py`` checks both). What only one kind of store can
do is asked of the store (``store.supports_snapshots``), never read off its
type.
"""

from __future__ import annotations

from pathlib import Path

from llmwiki.store.contract import BM25_B, BM25_K1, DOCUMENT_COLUMNS, ContestRow, RecheckRow, StatusCount, Store, VerdictRow
from llmwiki.store.schema import CONTENT_TABLES, COPIED_TABLES, MIGRATIONS, REVIEW_TABLES

__all__ = ["BM25_B", "BM25_K1", "CONTENT_TABLES", "COPIED_TABLES", "REVIEW_TABLES", "DOCUMENT_COLUMNS", "MIGRATIONS", "StatusCount", "Store", "VerdictRow", "ContestRow", "RecheckRow", "open_store"]


def open_store(*, path: Path | str, url: str | None = None, lock_timeout_s: float = 30.0) -> Store:
    """The PostgreSQL database url names, else the DuckDB file at path."""
    if url:
        from llmwiki.store.postgres_store import PostgresStore

        return PostgresStore(url, lock_timeout_s=lock_timeout_s)
    from llmwiki.store.duckdb_store import DuckDBStore

    return DuckDBStore(path, lock_timeout_s=lock_timeout_s)
