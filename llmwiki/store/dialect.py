"""What the SQL of the two stores differs in, as one small object per database.

The queries and migrations of ``llmwiki.store`` are written once, in the
DuckDB spelling with ``?`` placeholders; each database's ``Dialect`` renders
them (placeholders, the clock, a foreign key, a row lock) and binds their
parameters (PostgreSQL's text cannot hold NUL). Everything else both
databases read alike: ``TEXT``, ``DOUBLE PRECISION``, ``REAL[]``,
``INSERT ... ON CONFLICT``, ``RETURNING``, ``= ANY(?)`` over a list, and
``unnest`` of several lists side by side in a select list.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """How one database spells the few things the shared SQL leaves open."""

    name: str  # "duckdb" or "postgresql"
    placeholder: str  # what a "?" becomes
    now: str  # the current local time, as a TIMESTAMP column takes it
    cascades: bool  # foreign keys delete a parent's rows with it (else the store deletes them in code)
    row_lock: str  # appended to a SELECT that claims rows until the transaction ends
    keeps_nul: bool  # text may hold U+0000

    def render(self, sql: str) -> str:
        """The shared SQL in this database's spelling (``{now}`` filled in, placeholders swapped)."""
        return _render(self, sql)

    def references(self, parent: str) -> str:
        """The column clause tying a row to its parent table (empty where the store enforces it in code)."""
        return f" REFERENCES {parent} (id) ON DELETE CASCADE" if self.cascades else ""

    def bind(self, parameters):
        """Parameters as this database can store them: NUL made U+FFFD where text cannot hold it."""
        if self.keeps_nul or isinstance(parameters, dict):
            return parameters
        return [_text_safe(value) for value in parameters]


@functools.lru_cache(maxsize=512)
def _render(dialect: Dialect, sql: str) -> str:
    sql = sql.replace("{now}", dialect.now)
    if dialect.placeholder == "?":
        return sql
    return sql.replace("%", "%%").replace("?", dialect.placeholder)


def _text_safe(value):
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, list):
        return [_text_safe(item) for item in value]
    return value


DUCKDB = Dialect(name="duckdb", placeholder="?", now="now()", cascades=False, row_lock="", keeps_nul=True)
POSTGRESQL = Dialect(name="postgresql", placeholder="%s", now="localtimestamp", cascades=True, row_lock=" FOR UPDATE", keeps_nul=False)
