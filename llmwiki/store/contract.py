"""The store contract: every operation callers use, written once over both databases.

``Store`` is what every caller takes. Its public methods are the operations
on documents, chunks, references and verifications, each written once in
the shared SQL that ``Dialect`` renders for DuckDB or PostgreSQL. An adapter
(``DuckDBStore``, ``PostgresStore``) supplies only what truly differs, as the
underscored hooks at the end of the class: connections and locking, bulk
loading of rows, the search postings, and the migration lock. What only one
kind of store can do is asked of the store as a capability
(``supports_snapshots``, ``rebuilds_from_files``, ``searches_in_server``),
never inferred from its type.

Every write runs in one transaction. A content write to a document that is
gone, or (with ``expected_version``) that another process changed since, is
refused with ``StoreConflictError``; so is a verification of a page that no
longer exists: nothing is stored for it, on either database.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from llmwiki.errors import StoreConflictError, StoreError
from llmwiki.records import Chunk, Document, PageText
from llmwiki.store.dialect import Dialect
from llmwiki.store.schema import CONTENT_TABLES, COPIED_TABLES, MIGRATIONS, Migration

DOCUMENT_COLUMNS = (
    "id, kind, path, title, status, error, content_hash, size_bytes, mtime, version, parser, "
    "stale_since, derived_from, created_at, updated_at"
)
# Okapi BM25's textbook parameters (not fitted here), as DuckDB's match_bm25 uses them: the in-process
# search (llmwiki.read.search) and the server's (PostgresStore.search_chunks) both rank with these.
BM25_K1 = 1.2
BM25_B = 0.75
_CHUNK_COLUMNS = "id, document_id, page_number, start_offset, end_offset, token_count, breadcrumb, text"
_VERIFICATION_KEYS = ("id", "body_hash", "source_hashes", "model", "threshold", "started_at", "finished_at", "method")
_SENTENCE_KEYS = ("sentence", "start", "end", "p_entailment", "p_contradiction", "excerpt", "excerpt_path", "excerpt_page", "excerpt_chunk_id",
                  "weakest_clause", "score", "reason", "flagged", "features")
_VERDICT_COLUMNS = "id, page_path, seq, sentence, evidence, evidence_chunk_id, verdict, note, reviewer, decided_at, model_score, features"
_RECHECK_COLUMNS = "id, page_path, seq, sentence, source, was_supported, now_supported, found_at"
_CONTEST_COLUMNS = "id, key, page_a, sentence_a, source_a, page_b, sentence_b, source_b, score, status, note, reviewer, found_at, resolved_at"


@dataclass(frozen=True)
class StatusCount:
    kind: str
    status: str
    document_count: int


def document_from_row(row: tuple) -> Document:
    """A Document from a row of DOCUMENT_COLUMNS."""
    return Document(*row)


def chunk_from_row(row: tuple) -> Chunk:
    """A Chunk from (id, document_id, page_number, start_offset, end_offset, token_count, breadcrumb, text)."""
    return Chunk(id=row[0], document_id=row[1], page_number=row[2], start=row[3], end=row[4], token_count=row[5],
                 breadcrumb=tuple(part for part in row[6].split(" > ") if part), text=row[7])


def reference_edges(page_id: int, cites: Sequence[int], links_to: Sequence[int]) -> list[tuple[int, int, str]]:
    """A page's outgoing (from, to, kind) edges, each once, without links to itself."""
    return [(page_id, target, "cites") for target in dict.fromkeys(cites)] + [
        (page_id, target, "links_to") for target in dict.fromkeys(links_to) if target != page_id
    ]


def sentence_columns(scores) -> list[list]:
    """Verification sentence scores as columns (seq, sentence, start, end, p_entailment, p_contradiction,
    excerpt, excerpt path, page, chunk id, weakest clause, score, reason, flagged as JSON, features as JSON): one insert for all rows."""
    rows = [
        (seq, score.sentence, score.start, score.end, score.p_entailment, score.p_contradiction,
         score.excerpt, score.excerpt_path, score.excerpt_page, score.excerpt_chunk_id, score.weakest_clause,
         score.score, score.reason, json.dumps(list(score.flagged)), json.dumps(list(score.features)) if getattr(score, "features", None) else None)
        for seq, score in enumerate(scores)
    ]
    return [list(column) for column in zip(*rows)]


def verification_record(header: tuple, rows: Sequence[tuple]) -> tuple[dict, list[dict]]:
    """A stored verification's header and sentence rows as dicts."""
    sentences = [dict(zip(_SENTENCE_KEYS, row)) for row in rows]
    for sentence in sentences:
        sentence["flagged"] = tuple(json.loads(sentence["flagged"])) if sentence["flagged"] else ()
        sentence["features"] = tuple(json.loads(sentence["features"])) if sentence["features"] else None
    return dict(zip(_VERIFICATION_KEYS, header)), sentences


@dataclass(frozen=True)
class VerdictRow:
    """A reviewer's verdict on one sentence of a page, as stored."""

    id: int
    page_path: str
    seq: int  # the sentence's place among the page's verified sentences when it was judged
    sentence: str
    evidence: str | None  # the best excerpt the reviewer saw
    evidence_chunk_id: int | None
    verdict: str  # "accept" or "reject"
    note: str | None
    reviewer: str
    decided_at: datetime
    model_score: float | None
    features: tuple[float, ...] | None

    @classmethod
    def from_row(cls, row: tuple) -> VerdictRow:
        values = list(row)
        values[-1] = tuple(json.loads(values[-1])) if values[-1] else None
        return cls(*values)


@dataclass(frozen=True)
class RecheckRow:
    """A sentence whose model verdict changed when a source it rests on changed (it waits for a reviewer)."""

    id: int
    page_path: str
    seq: int
    sentence: str
    source: str
    was_supported: bool
    now_supported: bool
    found_at: datetime


@dataclass(frozen=True)
class ContestRow:
    """A contradiction between two pages' sentences, kept until a reviewer resolves it."""

    id: int
    key: str
    page_a: str
    sentence_a: str
    source_a: str | None
    page_b: str
    sentence_b: str
    source_b: str | None
    score: float
    status: str  # "open", "kept_a", "kept_b" or "both"
    note: str | None
    reviewer: str | None
    found_at: datetime
    resolved_at: datetime | None


def checked_version(row: tuple | None, document_id: int, expected_version: int | None) -> None:
    """Refuse a content write to a document that is gone, or (with expected_version) that another
    process has changed since; row is the document's (version, path)."""
    if row is None:
        msg = f"document {document_id} is gone (withdrawn meanwhile); nothing was written"
        raise StoreConflictError(msg)
    if expected_version is not None and row[0] != expected_version:
        msg = f"{row[1]}: changed by someone else (version {row[0]}, this edit was based on {expected_version}); reload it and edit again"
        raise StoreConflictError(msg)


@dataclass(frozen=True)
class ContentSwap:
    """A document's new content, as ``replace_contents`` swaps it in."""

    document_id: int
    content_hash: str
    size_bytes: int
    mtime: float
    parser: str
    title: str | None
    pages: Sequence[PageText]
    chunks: Sequence[Chunk]
    extraction: str | None = None


# Rows of many documents' content, as the adapters bulk-load them: (document id, pages, chunks).
ContentRows = Sequence[tuple[int, Sequence[PageText], Sequence[Chunk]]]


class Store(ABC):
    """A wiki's documents, chunks, references and verifications in one database.

    Callers hold a connection briefly (``connect``), group an operation's small steps on one
    (``session``) and make several writes one (``transaction``); every public method below does its
    own work in one transaction and may be called inside either.
    """

    dialect: ClassVar[Dialect]
    # Capabilities: what a caller may ask of this kind of store.
    supports_snapshots: ClassVar[bool]  # whole-store copies at commits, loads of them, recovery of a damaged file
    rebuilds_from_files: ClassVar[bool]  # emptied and refilled from its one workspace's files (reindex, restore)
    searches_in_server: ClassVar[bool]  # search runs in the database, not over an in-process copy of the postings
    _database_errors: ClassVar[tuple[type[BaseException], ...]]
    _migration_lock = threading.Lock()  # one migration at a time in this process

    path: Any  # what messages name: the file, or the url
    lock_timeout_s: float

    def __init__(self, *, lock_timeout_s: float, migrations: Sequence = MIGRATIONS) -> None:
        self.lock_timeout_s = lock_timeout_s
        self.migrations = tuple(migrations)
        self._migrated_key: object = None

    # -- connections (adapters) ------------------------------------------------

    @abstractmethod
    def connect(self) -> AbstractContextManager:
        """A migrated connection, released on exit (the session's, inside ``session()``); hold it briefly."""

    @abstractmethod
    def session(self) -> AbstractContextManager[None]:
        """Keep one connection for the length of one operation (on this thread)."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager:
        """A connection inside one transaction; exceptions roll it back. The store's methods called inside
        it run on its connection, so several writes become one; nested, it joins the open one."""

    @abstractmethod
    def exists(self) -> bool:
        """Whether the store is there (a missing file is created empty on the next connection)."""

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database (after a batch of writes); a server manages its own."""

    def _execute(self, conn, sql: str, parameters: Sequence | dict = ()):
        """Run one statement of the shared SQL on conn, rendered and bound for this database."""
        return conn.execute(self.dialect.render(sql), self.dialect.bind(parameters))

    def _one(self, sql: str, parameters: Sequence = ()) -> tuple | None:
        with self.connect() as conn:
            return self._execute(conn, sql, parameters).fetchone()

    def _all(self, sql: str, parameters: Sequence = ()) -> list[tuple]:
        with self.connect() as conn:
            return self._execute(conn, sql, parameters).fetchall()

    # -- schema ------------------------------------------------------------------

    def migrate(self) -> None:
        """Create the schema or bring it up to date now (every first connection does)."""
        with self.connect():
            return

    def migration_names(self) -> list[str]:
        """The migrations this store has applied, in order."""
        return [row[0] for row in self._all("SELECT name FROM schema_migrations ORDER BY version")]

    def _ensure_migrated(self, conn) -> None:
        """Apply the migrations a freshly opened connection's database lacks (once per database this
        object has seen: ``_schema_key`` changes when the file is replaced)."""
        key = self._schema_key()
        if key == self._migrated_key:
            return
        with self._migration_lock, self._migration_guard(conn):
            self._execute(conn, "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMP NOT NULL)")
            applied = {row[0] for row in self._execute(conn, "SELECT name FROM schema_migrations").fetchall()}
            unknown = applied - {migration.__name__ for migration in self.migrations}
            if unknown:
                msg = f"{self.path}: this store was written by a newer llmwiki (it has migrations this version does not know: {', '.join(sorted(unknown))}). Upgrade llmwiki."
                raise StoreError(msg)
            newly_applied = []
            for migration in self.migrations:
                if migration.__name__ in applied:
                    continue
                try:
                    with self._atomic(conn):
                        migration(Migration(self.dialect, lambda sql, parameters=(): self._execute(conn, sql, parameters),
                                            lambda: self._index_postings(conn, "TRUE"), self._analyzer_stopwords))
                        self._execute(conn, "INSERT INTO schema_migrations SELECT coalesce(max(version), 0) + 1, ?, ? FROM schema_migrations",
                                      [migration.__name__, datetime.now()])
                except self._database_errors as err:
                    msg = f"{self.path}: migration {migration.__name__} failed: {err}. The store was left as it was; report this as a bug."
                    raise StoreError(msg) from err
                newly_applied.append(migration.__name__)
            self._after_migrations(conn, newly_applied)
        self._migrated_key = self._schema_key()

    # -- whole-store views -------------------------------------------------------

    def row_counts(self) -> dict[str, int]:
        """Rows per copied table (documents, pages, chunks, references, verifications, sentences, embeddings, verdicts, contested claims)."""
        with self.connect() as conn:
            return {table: self._execute(conn, f"SELECT count(*) FROM {table}").fetchone()[0] for table in COPIED_TABLES}

    def table_rows(self, table: str, *, batch: int = 10_000) -> tuple[list[str], Iterator[tuple]]:
        """(column names, rows) of one copied table, for copying into another store."""
        if table not in COPIED_TABLES:
            raise ValueError(f"unknown table {table!r}")
        with self.connect() as conn:
            cursor = self._execute(conn, f"SELECT * FROM {table} LIMIT 0")
            columns = [column[0] for column in cursor.description]

        def rows() -> Iterator[tuple]:
            with self.connect() as conn:
                cursor = self._execute(conn, f"SELECT * FROM {table}")
                while chunk := cursor.fetchmany(batch):
                    yield from chunk

        return columns, rows()

    def clear(self) -> None:
        """Delete every document, chunk, posting, embedding and verification (before a rebuild from the files);
        what reviewers decided stays (no file holds it)."""
        with self.transaction() as conn:
            for table in ("chunk_terms", *reversed(CONTENT_TABLES)):
                self._execute(conn, f"DELETE FROM {table}")
            self._postings_replaced(conn)

    def totals(self) -> dict[str, int]:
        """Counts of documents, pages and chunks, for reports."""
        documents, pages, chunks, tokens = self._one(
            """
            SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM document_pages),
                   (SELECT count(*) FROM chunks), (SELECT coalesce(sum(token_count), 0) FROM chunks)
            """
        )
        return {"documents": documents, "pages": pages, "chunks": chunks, "tokens": int(tokens)}

    def status_counts(self) -> list[StatusCount]:
        """How many documents there are of each kind and status."""
        rows = self._all("SELECT kind, status, count(*) FROM documents GROUP BY kind, status ORDER BY kind, status")
        return [StatusCount(*row) for row in rows]

    # -- documents -----------------------------------------------------------------

    def document_by_path(self, path: str) -> Document | None:
        """The document stored under a workspace-relative path, if any."""
        row = self._one(f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE path = ?", [path])
        return document_from_row(row) if row else None

    def extraction_reports(self, *, kind: str = "source") -> dict[str, dict]:
        """path -> what the extractor read (``llmwiki.ingest.extract.extraction_report``), for documents that have one."""
        rows = self._all("SELECT path, extraction FROM documents WHERE kind = ? AND extraction IS NOT NULL ORDER BY path", [kind])
        return {path: json.loads(report) for path, report in rows}

    def documents(self, *, kind: str | None = None) -> list[Document]:
        """All documents, optionally of one kind, ordered by path."""
        rows = self._all(f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE ?::TEXT IS NULL OR kind = ? ORDER BY path", [kind, kind])
        return [document_from_row(row) for row in rows]

    def source_summaries(self) -> list[tuple[Document, str | None]]:
        """Every ready source that has chunks, with the path of the summary page derived from it (None: none)."""
        columns = ", ".join(f"source.{column.strip()}" for column in DOCUMENT_COLUMNS.split(","))
        rows = self._all(
            f"""
            SELECT {columns},
                   (SELECT min(page.path) FROM documents page WHERE page.kind = 'wiki' AND page.derived_from = source.id)
            FROM documents source
            WHERE source.kind = 'source' AND source.status = 'ready'
              AND EXISTS (SELECT 1 FROM chunks WHERE chunks.document_id = source.id)
            ORDER BY source.path
            """
        )
        return [(document_from_row(row[:-1]), row[-1]) for row in rows]

    def begin_document(self, *, path: str, kind: str, size_bytes: int, mtime: float) -> Document:
        """Record that a file is being processed, creating its row if new."""
        with self.transaction() as conn:
            row = self._execute(
                conn,
                f"""
                INSERT INTO documents (kind, path, status, size_bytes, mtime) VALUES (?, ?, 'processing', ?, ?)
                ON CONFLICT (path) DO UPDATE SET status = 'processing', updated_at = {{now}}
                RETURNING {DOCUMENT_COLUMNS}
                """,
                [kind, path, size_bytes, mtime],
            ).fetchone()
        return document_from_row(row)

    def fail_document(self, document_id: int, reason: str) -> None:
        """Mark a document failed with its reason; its stored content is kept (and no longer searched)."""
        with self.transaction() as conn:
            self._execute(conn, "UPDATE documents SET status = 'failed', error = ?, updated_at = {now} WHERE id = ?", [reason, document_id])
            self._search_changed(conn)

    def replace_content(
        self,
        document_id: int,
        *,
        content_hash: str,
        size_bytes: int,
        mtime: float,
        parser: str,
        title: str | None,
        pages: Sequence[PageText],
        chunks: Sequence[Chunk],
        expected_version: int | None = None,
        extraction: str | None = None,
    ) -> Document:
        """Swap in a document's new pages and chunks and mark it ready, atomically.

        With ``expected_version``, an edit based on another version is refused (StoreConflictError).
        ``extraction``: what the extractor read (JSON, ``llmwiki.ingest.extract.extraction_report``).
        """
        return self.replace_contents([ContentSwap(document_id, content_hash, size_bytes, mtime, parser, title, pages, chunks, extraction)],
                                     expected_version=expected_version)[0]

    def replace_contents(self, swaps: Sequence[ContentSwap], *, expected_version: int | None = None) -> list[Document]:
        """``replace_content`` for many documents in one transaction, their postings indexed at once (an ingest stores
        the files it read in groups: one statement per table, not one per file)."""
        ids = [swap.document_id for swap in swaps]
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        with self.transaction() as conn:
            for swap in swaps:
                row = self._execute(conn, f"SELECT version, path FROM documents WHERE id = ?{self.dialect.row_lock}", [swap.document_id]).fetchone()
                checked_version(row, swap.document_id, expected_version)
                self._delete_content(conn, swap.document_id)  # a rewritten page's verification no longer applies either
            self._insert_content(conn, [(swap.document_id, swap.pages, swap.chunks) for swap in swaps])
            self._index_postings(conn, f"document_id IN ({marks})", ids)
            documents = []
            for swap in swaps:
                row = self._execute(
                    conn,
                    f"""
                    UPDATE documents
                    SET status = 'ready', error = NULL, content_hash = ?, size_bytes = ?, mtime = ?,
                        parser = ?, title = ?, extraction = ?, version = version + 1, updated_at = {{now}}
                    WHERE id = ?
                    RETURNING {DOCUMENT_COLUMNS}
                    """,
                    [swap.content_hash, swap.size_bytes, swap.mtime, swap.parser, swap.title, swap.extraction, swap.document_id],
                ).fetchone()
                documents.append(document_from_row(row))
        return documents

    def bulk_load(self, documents: Sequence[tuple[str, str, str, Sequence[PageText], Sequence[Chunk]]]) -> None:
        """Store many (path, kind, content_hash, pages, chunks) in one transaction, indexed once.

        For building large workspaces (benchmarks, restores); paths must be new.
        """
        with self.transaction() as conn:
            first_new_chunk = self._execute(conn, "SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]
            rows = []
            for path, kind, digest, pages, chunks in documents:
                document_id = self._execute(
                    conn, "INSERT INTO documents (kind, path, status, content_hash, version, parser) VALUES (?, ?, 'ready', ?, 1, 'bulk') RETURNING id",
                    [kind, path, digest],
                ).fetchone()[0]
                rows.append((document_id, pages, chunks))
            self._insert_content(conn, rows)
            self._index_postings(conn, "id > ?", [first_new_chunk])

    def mark_ready_unchanged(self, document_id: int, *, mtime: float) -> None:
        """A file touched but not changed: note its mtime, keep everything else."""
        with self.transaction() as conn:
            self._execute(conn, "UPDATE documents SET status = 'ready', error = NULL, mtime = ? WHERE id = ?", [mtime, document_id])

    def remove_document(self, path: str) -> bool:
        """Delete a document and everything stored for it; False when there was none."""
        with self.transaction() as conn:
            row = self._execute(conn, f"SELECT id FROM documents WHERE path = ?{self.dialect.row_lock}", [path]).fetchone()
            if row is None:
                return False
            self._delete_content(conn, row[0])
            self._execute(conn, "DELETE FROM doc_references WHERE from_id = ? OR to_id = ?", [row[0], row[0]])
            self._execute(conn, "DELETE FROM documents WHERE id = ?", [row[0]])
            self._search_changed(conn)
        return True

    def mark_stale(self, document_id: int, reason: str) -> None:
        """Mark a page stale (it rests partly on withdrawn material); it stays searchable, labelled."""
        with self.transaction() as conn:
            self._execute(conn, "UPDATE documents SET stale_since = coalesce(stale_since, {now}), stale_reason = ? WHERE id = ?", [reason, document_id])
            self._search_changed(conn)

    def stale_reason(self, document_id: int) -> str | None:
        """Why a page is stale (None when it is not)."""
        row = self._one("SELECT stale_reason FROM documents WHERE id = ?", [document_id])
        return row[0] if row else None

    # -- references --------------------------------------------------------------------

    def set_page_references(self, page_id: int, *, cites: Sequence[int], links_to: Sequence[int], derived_from: int | None) -> None:
        """Replace a page's outgoing reference edges and its derivation, in one transaction; targets
        withdrawn meanwhile are left out rather than failing the page."""
        with self.transaction() as conn:
            self._execute(conn, f"SELECT 1 FROM documents WHERE id = ?{self.dialect.row_lock}", [page_id])
            self._execute(conn, "DELETE FROM doc_references WHERE from_id = ?", [page_id])
            edges = reference_edges(page_id, cites, links_to)
            if edges:
                self._execute(
                    conn,
                    """
                    INSERT INTO doc_references
                    SELECT edges.from_id, edges.to_id, edges.kind
                    FROM (SELECT unnest(?::BIGINT[]) AS from_id, unnest(?::BIGINT[]) AS to_id, unnest(?::TEXT[]) AS kind) AS edges
                    WHERE edges.to_id IN (SELECT id FROM documents)
                    """,
                    [[edge[0] for edge in edges], [edge[1] for edge in edges], [edge[2] for edge in edges]],
                )
            self._execute(conn, "UPDATE documents SET derived_from = ? WHERE id = ?", [derived_from, page_id])

    def references(self, document_id: int) -> list[tuple[str, str]]:
        """(kind, target path) of a document's outgoing references."""
        return [tuple(row) for row in self._all(
            """
            SELECT doc_references.kind, documents.path FROM doc_references
            JOIN documents ON documents.id = doc_references.to_id
            WHERE doc_references.from_id = ? ORDER BY 1, 2
            """,
            [document_id],
        )]

    # -- verifications -----------------------------------------------------------------

    def save_verification(self, page_id: int, *, body_hash: str, source_hashes: str, model: str, threshold: float, started_at, scores,
                          method: str = "sentence") -> int:
        """Store a page's verification, replacing the previous one, in one transaction (under a row lock on
        the page where the database has them: two reviewers verifying at once leave one). A page that is
        gone (withdrawn meanwhile) gets none: StoreConflictError."""
        with self.transaction() as conn:
            if self._execute(conn, f"SELECT 1 FROM documents WHERE id = ?{self.dialect.row_lock}", [page_id]).fetchone() is None:
                msg = f"page {page_id} is gone (withdrawn by another process); its verification was not stored"
                raise StoreConflictError(msg)
            self._delete_verifications(conn, page_id)
            verification_id = self._execute(
                conn,
                "INSERT INTO page_verifications (page_id, body_hash, source_hashes, model, threshold, started_at, finished_at, method) "
                "VALUES (?, ?, ?, ?, ?, ?, {now}, ?) RETURNING id",
                [page_id, body_hash, source_hashes, model, threshold, started_at, method],
            ).fetchone()[0]
            columns = sentence_columns(scores)
            if columns:  # one statement for all rows (executemany costs milliseconds per row)
                self._execute(
                    conn,
                    """
                    INSERT INTO verification_sentences
                        (verification_id, seq, sentence, start_offset, end_offset, p_entailment, p_contradiction, best_excerpt,
                         excerpt_document_id, excerpt_page, excerpt_chunk_id, weakest_clause, score, reason, flagged, features)
                    SELECT ?, r.seq, r.sentence, r.start_offset, r.end_offset, r.p_entailment, r.p_contradiction, r.excerpt,
                           documents.id, r.excerpt_page, r.excerpt_chunk_id, r.weakest_clause, r.score, r.reason, r.flagged, r.features
                    FROM (SELECT unnest(?::INTEGER[]) AS seq, unnest(?::TEXT[]) AS sentence, unnest(?::INTEGER[]) AS start_offset,
                                 unnest(?::INTEGER[]) AS end_offset, unnest(?::DOUBLE PRECISION[]) AS p_entailment,
                                 unnest(?::DOUBLE PRECISION[]) AS p_contradiction, unnest(?::TEXT[]) AS excerpt, unnest(?::TEXT[]) AS excerpt_path,
                                 unnest(?::INTEGER[]) AS excerpt_page, unnest(?::BIGINT[]) AS excerpt_chunk_id, unnest(?::TEXT[]) AS weakest_clause,
                                 unnest(?::DOUBLE PRECISION[]) AS score, unnest(?::TEXT[]) AS reason, unnest(?::TEXT[]) AS flagged,
                                 unnest(?::TEXT[]) AS features) AS r
                    LEFT JOIN documents ON documents.path = r.excerpt_path
                    """,
                    [verification_id, *columns],
                )
        return verification_id

    def latest_verification(self, page_id: int) -> tuple[dict, list[dict]] | None:
        """A page's stored verification: (header, sentence rows), or None."""
        with self.connect() as conn:
            header = self._execute(
                conn,
                "SELECT id, body_hash, source_hashes, model, threshold, started_at, finished_at, method FROM page_verifications "
                "WHERE page_id = ? ORDER BY id DESC LIMIT 1",
                [page_id],
            ).fetchone()
            if header is None:
                return None
            rows = self._execute(
                conn,
                """
                SELECT sentence, start_offset, end_offset, p_entailment, p_contradiction, best_excerpt,
                       documents.path, excerpt_page, excerpt_chunk_id, weakest_clause, score, reason, flagged, features
                FROM verification_sentences LEFT JOIN documents ON documents.id = verification_sentences.excerpt_document_id
                WHERE verification_id = ? ORDER BY seq
                """,
                [header[0]],
            ).fetchall()
        return verification_record(header, rows)

    def latest_verifications(self) -> dict[str, tuple[dict, list[dict]]]:
        """Every page's stored verification, by page path, in two queries: (header, sentence rows) as ``latest_verification``."""
        with self.connect() as conn:
            headers = self._execute(
                conn,
                "SELECT v.id, v.body_hash, v.source_hashes, v.model, v.threshold, v.started_at, v.finished_at, v.method, d.path "
                "FROM page_verifications v JOIN documents d ON d.id = v.page_id "
                "WHERE v.id IN (SELECT max(id) FROM page_verifications GROUP BY page_id)",
            ).fetchall()
            rows = self._execute(
                conn,
                """
                SELECT verification_id, sentence, start_offset, end_offset, p_entailment, p_contradiction, best_excerpt,
                       documents.path, excerpt_page, excerpt_chunk_id, weakest_clause, score, reason, flagged, features
                FROM verification_sentences LEFT JOIN documents ON documents.id = verification_sentences.excerpt_document_id
                WHERE verification_id IN (SELECT max(id) FROM page_verifications GROUP BY page_id) ORDER BY verification_id, seq
                """,
            ).fetchall()
        by_verification: dict[int, list[tuple]] = {}
        for row in rows:
            by_verification.setdefault(row[0], []).append(row[1:])
        return {header[-1]: verification_record(header[:-1], by_verification.get(header[0], [])) for header in headers}

    # -- what reviewers decide ----------------------------------------------------------------

    def record_verdicts(self, page_path: str, decisions: Sequence[dict], *, seen: dict[int, int | None]) -> list[int]:
        """Store reviewers' verdicts on sentences of a page in one transaction; returns their ids.

        decisions: dicts of seq, sentence, evidence, evidence_chunk_id, verdict, note, reviewer, model_score, features.
        seen: for each seq, the id of the latest verdict the reviewer saw (None: none). When another verdict was
        recorded since, nothing is written (StoreConflictError, naming who decided what): two reviewers deciding
        one sentence at once do not overwrite each other unseen.
        """
        with self.transaction() as conn:
            self._execute(conn, f"SELECT 1 FROM documents WHERE path = ?{self.dialect.row_lock}", [page_path])  # one page's decisions at a time
            for decision in decisions:
                latest = self._execute(
                    conn, f"SELECT {_VERDICT_COLUMNS} FROM sentence_verdicts WHERE page_path = ? AND seq = ? ORDER BY id DESC LIMIT 1",
                    [page_path, decision["seq"]],
                ).fetchone()
                latest_id = latest[0] if latest else None
                if latest_id != seen.get(decision["seq"]):
                    other = VerdictRow.from_row(latest)
                    msg = (f"{page_path}: sentence {decision['seq'] + 1} was just decided by {other.reviewer} ({other.verdict}"
                           f"{': ' + other.note if other.note else ''}, {other.decided_at:%Y-%m-%d %H:%M}); nothing was recorded. "
                           "Look at their verdict, then decide again.")
                    raise StoreConflictError(msg)
            ids = []
            for decision in decisions:
                features = decision.get("features")
                ids.append(self._execute(
                    conn,
                    "INSERT INTO sentence_verdicts (page_path, seq, sentence, evidence, evidence_chunk_id, verdict, note, reviewer, decided_at, model_score, features) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, {now}, ?, ?) RETURNING id",
                    [page_path, decision["seq"], decision["sentence"], decision.get("evidence"), decision.get("evidence_chunk_id"), decision["verdict"],
                     decision.get("note"), decision["reviewer"], decision.get("model_score"), json.dumps(list(features)) if features else None],
                ).fetchone()[0])
        return ids

    def verdicts(self, page_path: str | None = None) -> list[VerdictRow]:
        """Every verdict recorded (on one page, or all), oldest first: the latest per sentence is in force."""
        rows = self._all(f"SELECT {_VERDICT_COLUMNS} FROM sentence_verdicts WHERE ?::TEXT IS NULL OR page_path = ? ORDER BY id", [page_path, page_path])
        return [VerdictRow.from_row(row) for row in rows]

    def record_rechecks(self, rows: Sequence[dict]) -> None:
        """Record sentences whose model verdict changed at a re-check (dicts of page_path, seq, sentence, source,
        was_supported, now_supported), in one transaction."""
        if not rows:
            return
        with self.transaction() as conn:
            for row in rows:
                self._execute(conn, "INSERT INTO sentence_rechecks (page_path, seq, sentence, source, was_supported, now_supported, found_at) "
                              "VALUES (?, ?, ?, ?, ?, ?, {now})",
                              [row["page_path"], row["seq"], row["sentence"], row["source"], bool(row["was_supported"]), bool(row["now_supported"])])

    def rechecks(self, page_path: str | None = None) -> list[RecheckRow]:
        """The re-checked sentences whose model verdict changed (on one page, or all), oldest first."""
        rows = self._all(f"SELECT {_RECHECK_COLUMNS} FROM sentence_rechecks WHERE ?::TEXT IS NULL OR page_path = ? ORDER BY id", [page_path, page_path])
        return [RecheckRow(*row) for row in rows]

    def save_contest(self, *, key: str, page_a: str, sentence_a: str, source_a: str | None, page_b: str, sentence_b: str, source_b: str | None,
                     score: float) -> tuple[int, bool]:
        """Record a contradiction found between two pages' sentences, once per key: (its id, whether it is new).
        One already recorded keeps its status (a resolved one stays resolved), and its score is brought up to date."""
        with self.transaction() as conn:
            row = self._execute(conn, "SELECT id FROM contested_claims WHERE key = ?", [key]).fetchone()
            if row is not None:
                self._execute(conn, "UPDATE contested_claims SET score = ? WHERE id = ?", [score, row[0]])
                return row[0], False
            contest_id = self._execute(
                conn,
                "INSERT INTO contested_claims (key, page_a, sentence_a, source_a, page_b, sentence_b, source_b, score, status, found_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', {now}) RETURNING id",
                [key, page_a, sentence_a, source_a, page_b, sentence_b, source_b, score],
            ).fetchone()[0]
        return contest_id, True

    def contests(self, *, status: str | None = None, page_path: str | None = None) -> list[ContestRow]:
        """The recorded contradictions, oldest first: of one status ("open", ...), and/or about one page."""
        rows = self._all(
            f"SELECT {_CONTEST_COLUMNS} FROM contested_claims WHERE (?::TEXT IS NULL OR status = ?) AND (?::TEXT IS NULL OR page_a = ? OR page_b = ?) ORDER BY id",
            [status, status, page_path, page_path, page_path],
        )
        return [ContestRow(*row) for row in rows]

    def resolve_contest(self, contest_id: int, *, status: str, note: str | None, reviewer: str) -> ContestRow:
        """Resolve an open contradiction (kept_a, kept_b or both); one another reviewer resolved meanwhile is
        refused (StoreConflictError, naming their resolution)."""
        with self.transaction() as conn:
            row = self._execute(conn, f"SELECT {_CONTEST_COLUMNS} FROM contested_claims WHERE id = ?{self.dialect.row_lock}", [contest_id]).fetchone()
            if row is None:
                msg = f"contested claim {contest_id} does not exist; `llmwiki review --queue` lists the open ones"
                raise StoreConflictError(msg)
            current = ContestRow(*row)
            if current.status != "open":
                msg = f"contested claim {contest_id} was resolved already by {current.reviewer} ({current.status}{': ' + current.note if current.note else ''}); nothing was changed"
                raise StoreConflictError(msg)
            row = self._execute(
                conn, f"UPDATE contested_claims SET status = ?, note = ?, reviewer = ?, resolved_at = {{now}} WHERE id = ? RETURNING {_CONTEST_COLUMNS}",
                [status, note, reviewer, contest_id],
            ).fetchone()
        return ContestRow(*row)

    # -- content ---------------------------------------------------------------------------

    def citation_targets(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, int, str]]:
        """chunk id -> (document path, page number, breadcrumb) for the ids that exist."""
        if not chunk_ids:
            return {}
        rows = self._all(
            """
            SELECT chunks.id, documents.path, chunks.page_number, chunks.breadcrumb
            FROM chunks JOIN documents ON documents.id = chunks.document_id
            WHERE chunks.id = ANY(?::BIGINT[])
            """,
            [[int(chunk_id) for chunk_id in chunk_ids]],
        )
        return {row[0]: (row[1], row[2], row[3]) for row in rows}

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        """chunk id -> text, for the ids that exist."""
        if not chunk_ids:
            return {}
        return dict(self._all("SELECT id, text FROM chunks WHERE id = ANY(?::BIGINT[])", [[int(chunk_id) for chunk_id in chunk_ids]]))

    def chunks(self, document_id: int) -> list[Chunk]:
        """A document's stored chunks in reading order."""
        return [chunk_from_row(row) for row in self._all(f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE document_id = ? ORDER BY seq", [document_id])]

    def pages(self, document_id: int) -> list[PageText]:
        """A document's stored page texts in page order."""
        rows = self._all("SELECT page_number, text FROM document_pages WHERE document_id = ? ORDER BY page_number", [document_id])
        return [PageText(number=row[0], text=row[1]) for row in rows]

    def chunks_missing_embeddings(self, model: str) -> list[tuple[int, str]]:
        """(chunk id, text) of chunks that have no embedding from model, by id."""
        return [tuple(row) for row in self._all(
            "SELECT id, text FROM chunks WHERE NOT EXISTS (SELECT 1 FROM chunk_embeddings e WHERE e.chunk_id = chunks.id AND e.model = ?) ORDER BY id",
            [model],
        )]

    @abstractmethod
    def write_embeddings(self, model: str, chunk_ids: Sequence[int], vectors) -> None:
        """Store embeddings of chunks (rows of vectors) for model, replacing older ones; chunks gone meanwhile are left out."""

    @abstractmethod
    def rebuild_search_index(self) -> None:
        """Recompute every search posting from the chunks' text (after an analyzer change)."""

    # -- shared pieces of the writes above ------------------------------------------------------

    def _delete_content(self, conn, document_id: int) -> None:
        """A document's chunks with their postings and embeddings, its pages, and its verification."""
        self._postings_deleted(conn, document_id)
        if not self.dialect.cascades:  # else the foreign keys take them with the chunks
            self._execute(conn, "DELETE FROM chunk_embeddings WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = ?)", [document_id])
        self._execute(conn, "DELETE FROM chunks WHERE document_id = ?", [document_id])
        self._execute(conn, "DELETE FROM document_pages WHERE document_id = ?", [document_id])
        self._delete_verifications(conn, document_id)

    def _delete_verifications(self, conn, page_id: int) -> None:
        self._execute(conn, "DELETE FROM verification_sentences WHERE verification_id IN (SELECT id FROM page_verifications WHERE page_id = ?)", [page_id])
        self._execute(conn, "DELETE FROM page_verifications WHERE page_id = ?", [page_id])

    # -- what the adapters supply ----------------------------------------------------------------

    @abstractmethod
    def _schema_key(self) -> object:
        """What identifies the database the migrations were checked on (a file's identity, a url)."""

    @abstractmethod
    def _migration_guard(self, conn) -> AbstractContextManager:
        """Held while migrations are checked and applied: no other process migrates meanwhile."""

    @abstractmethod
    def _atomic(self, conn) -> AbstractContextManager:
        """One migration's transaction on conn."""

    def _after_migrations(self, conn, applied: Sequence[str]) -> None:
        """What a database needs once migrations were applied (nothing by default)."""

    def _analyzer_stopwords(self) -> Sequence[str]:
        """The stopwords the in-process analyzer leaves out (only DuckDB's postings need them)."""
        return ()

    @abstractmethod
    def _insert_content(self, conn, documents: ContentRows) -> None:
        """Insert the pages and chunks of documents (their rows exist; chunk seq follows the list order)."""

    @abstractmethod
    def _index_postings(self, conn, chunk_filter: str, parameters: Sequence = ()) -> None:
        """Write the search postings of the chunks matching chunk_filter (a condition on chunks' columns)."""

    @abstractmethod
    def _postings_deleted(self, conn, document_id: int) -> None:
        """Forget a document's search postings, before its chunks are deleted."""

    def _search_changed(self, conn) -> None:
        """A write changed what search shows (a status, a stale mark, a deletion): nothing to do where the
        database searches itself; an in-process copy of the postings must notice."""

    def _postings_replaced(self, conn) -> None:
        """Every posting was replaced (a clear, a load): an in-process copy must load anew, not merge."""
        self._search_changed(conn)

