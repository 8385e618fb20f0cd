"""Store snapshots at commits, and the two ways to bring the store back.

Every write to the wiki is a git commit in the workspace; the DuckDB store
(``.llmwiki/store.duckdb``) is not in git. So at each commit the store is
copied to ``.llmwiki/snapshots/<commit>.duckdb`` (DuckDB's ``COPY FROM
DATABASE``, inside one transaction, so the copy is consistent even while
other connections exist), keeping the newest ``[history] keep_snapshots``.

Restoring the store:

- ``load_snapshot``: a usable snapshot (same schema migrations, readable)
  replaces every table's rows in one transaction: versions, stale marks and
  stored verifications come back exactly.
- ``rebuild_store``: without one, the store is rebuilt from the files
  (sources re-extracted, wiki pages re-indexed; no model call). That loses
  what only the store knew, and ``REBUILD_LOSSES`` says what.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from llmwiki.errors import LlmwikiError

REBUILD_LOSSES = (
    "page version numbers start again at 1",
    "stale marks (and their reasons) are gone",
    "stored verifications are gone (run `llmwiki verify --all`)",
    "failure records of sources that failed are re-created by re-extraction",
)
_KEPT_TABLES = ("schema_migrations",)


class SnapshotError(LlmwikiError):
    """A snapshot could not be written or read."""


@dataclass(frozen=True)
class Snapshot:
    commit: str
    path: Path
    size_bytes: int


def snapshot_folder(workspace) -> Path:
    return workspace.state_dir / "snapshots"


def take_snapshot(workspace, commit: str | None) -> Snapshot | None:
    """Copy the store as it is now, under the commit's id; prune old snapshots."""
    if not commit or not workspace.config.history.snapshots:
        return None
    folder = snapshot_folder(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{commit}.duckdb"
    if target.is_file():  # taken when the commit was made; the store then is what it stands for
        return Snapshot(commit, target, target.stat().st_size)
    partial = folder / f".{commit}.partial"
    for leftover in (partial, partial.with_name(partial.name + ".wal")):
        leftover.unlink(missing_ok=True)
    copy_store(workspace, partial)
    os.replace(partial, target)  # a crash before this leaves only a .partial, never a half snapshot
    prune(workspace)
    return Snapshot(commit, target, target.stat().st_size)


def copy_store(workspace, target: Path) -> None:
    """A consistent copy of the store in a new database file (one transaction; other readers may go on)."""
    with workspace.store.connect() as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(f"ATTACH '{_quoted(target)}' AS llmwiki_copy")
        try:
            conn.execute(f'COPY FROM DATABASE "{name}" TO llmwiki_copy')
        finally:
            conn.execute("DETACH llmwiki_copy")


def prune(workspace) -> list[Path]:
    """Delete all but the newest keep_snapshots snapshots; returns what was deleted."""
    folder = snapshot_folder(workspace)
    snapshots = sorted(folder.glob("*.duckdb"), key=lambda path: path.stat().st_mtime, reverse=True)
    removed = snapshots[workspace.config.history.keep_snapshots:]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def snapshots(workspace) -> dict[str, Snapshot]:
    """commit id -> snapshot, for every snapshot on disk."""
    folder = snapshot_folder(workspace)
    return {path.stem: Snapshot(path.stem, path, path.stat().st_size) for path in folder.glob("*.duckdb")} if folder.is_dir() else {}


def usable(workspace, commit: str) -> tuple[Path | None, str]:
    """(snapshot path, '') when the commit has a snapshot this store can load, else (None, why not)."""
    path = snapshot_folder(workspace) / f"{commit}.duckdb"
    if not path.is_file():
        return None, "no snapshot was kept for that commit"
    try:
        snapshot = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as err:
        return None, f"the snapshot cannot be opened ({err})"
    try:
        theirs = snapshot.execute("SELECT list(version ORDER BY version) FROM schema_migrations").fetchone()[0]
    except duckdb.Error as err:
        return None, f"the snapshot is damaged ({err})"
    finally:
        snapshot.close()
    with workspace.store.connect() as conn:
        ours = conn.execute("SELECT list(version ORDER BY version) FROM schema_migrations").fetchone()[0]
    if theirs != ours:
        return None, f"the snapshot has schema migrations {theirs}, this llmwiki has {ours}"
    return path, ""


def load_snapshot(workspace, path: Path) -> None:
    """Replace every table's rows with the snapshot's, in one transaction."""
    store = workspace.store
    with store.session(), store.connect() as conn:  # ATTACH outside the transaction, on the session's connection
        conn.execute(f"ATTACH '{_quoted(path)}' AS llmwiki_snapshot (READ_ONLY)")
        try:
            with store.transaction():
                generation = conn.execute("SELECT value FROM search_state WHERE key = 'generation'").fetchone()[0]
                tables = [row[0] for row in conn.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name"
                ).fetchall() if row[0] not in _KEPT_TABLES]
                for table in tables:
                    conn.execute(f'DELETE FROM main."{table}"')
                    conn.execute(f'INSERT INTO main."{table}" BY NAME SELECT * FROM llmwiki_snapshot.main."{table}"')
                _advance_sequences(conn)
                # The in-memory search index notices any change of generation and rebuilds.
                conn.execute("UPDATE search_state SET value = greatest(value, ?) + 1 WHERE key = 'generation'", [generation])
        finally:
            conn.execute("DETACH llmwiki_snapshot")


def _advance_sequences(conn) -> None:
    """Move each id sequence past the largest id now in its table (a rebuilt store starts low)."""
    for sequence, table in (("document_ids", "documents"), ("chunk_ids", "chunks"), ("verification_ids", "page_verifications")):
        largest = conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
        following = conn.execute(f"SELECT nextval('{sequence}')").fetchone()[0]
        if following <= largest:
            conn.execute(f"SELECT max(nextval('{sequence}')) FROM range(?)", [largest - following + 1])


def rebuild_store(workspace, *, on_progress=None) -> dict[str, int]:
    """Empty the store and rebuild it from the files: sources re-extracted, wiki pages re-indexed.

    No model is called. Returns counts of what was indexed.
    """
    from llmwiki.generate import index_pages
    from llmwiki.ingest import ingest_paths
    from llmwiki.workspace import COLLECTION_PAGES

    store = workspace.store
    with store.transaction() as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'"
        ).fetchall() if row[0] not in (*_KEPT_TABLES, "search_stopwords", "search_state")]
        for table in tables:
            conn.execute(f'DELETE FROM "{table}"')
        conn.execute("UPDATE search_state SET value = value + 1 WHERE key = 'generation'")
    report = ingest_paths(workspace, generate=False, on_progress=on_progress)
    pages = {
        path.relative_to(workspace.root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(workspace.wiki_dir.rglob("*.md"))
        if path.relative_to(workspace.root).as_posix() not in COLLECTION_PAGES
    }
    with store.session():
        index_pages(workspace, pages)
    store.checkpoint()
    return {"sources": report.count("ingested") + report.count("updated"), "failed": report.count("failed"), "pages": len(pages)}


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
