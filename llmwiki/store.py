"""The DuckDB store: the one module that opens connections and holds SQL.

Several processes share one workspace (two notebooks and a CLI, say), and
DuckDB lets only one process open a database file at a time. So connections
are short-lived: every operation opens the file, does its work in one
transaction and closes it. A process that finds the file locked waits with
backoff until ``lock_timeout_s`` and only then gives up with
``StoreLockedError``.

Schema changes go only through the migrations in ``MIGRATIONS``, each
recorded by name in ``schema_migrations`` (so a reordered or renamed list is
noticed, not silently re-applied). Copies of the whole store (the snapshots
at each commit), loading one back, and emptying the store for a rebuild are
``Store`` methods too, so no other module knows a table name.

A damaged file (truncated, zeroed, overwritten) raises ``StoreDamagedError``
with the fix, whenever DuckDB notices it: when the file is opened, or when a
query reads a damaged block. ``Store(":memory:")`` keeps one in-memory
database for the life of the object (tests).

Bulk rows go in as Arrow tables that the SQL names directly (DuckDB's
replacement scans), hence locals that look unused.

Foreign keys are enforced here in code rather than by DuckDB: DuckDB's
constraint checks refuse some valid delete-then-insert sequences inside one
transaction, and every write of child rows happens in the same transaction
as its parent's.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from llmwiki.errors import StoreConflictError, StoreDamagedError, StoreError, StoreLockedError
from llmwiki.records import Chunk, Document, PageText

_LOCK_MESSAGE = re.compile(r"Could not set lock on file|Conflicting lock is held", re.IGNORECASE)
MEMORY = ":memory:"
# Tables a copy of the store carries but a load or a rebuild leaves as they are.
_SCHEMA_TABLES = ("schema_migrations",)
_ANALYZER_TABLES = ("search_stopwords", "search_state")
# The tables that hold a wiki's content, parents first (what a move to another store copies), and the id
# sequences of three of them; both stores have these.
CONTENT_TABLES = ("documents", "document_pages", "chunks", "doc_references", "page_verifications", "verification_sentences", "chunk_embeddings")
SEQUENCES = (("document_ids", "documents"), ("chunk_ids", "chunks"), ("verification_ids", "page_verifications"))
# Checkpointing on every close rewrote a whole row group (0.3 s at 100k chunks)
# after each small write. The write-ahead log is as durable as the file, so
# closes skip the checkpoint; DuckDB checkpoints once the log passes the
# threshold (small, since every open replays the log), and batch operations call Store.checkpoint() when they finish.
_CONNECT_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "checkpoint_threshold": "2MB",
}

# The search analyzer, in SQL so that chunks and queries go through the same
# code: thousands separators are dropped ("1,234" -> "1234"), words are runs of
# Unicode letters and digits (so "t1", "1911" and "Angoulême" stay whole), the
# English stopword list of DuckDB's FTS extension is removed, and the rest is
# stemmed with its Porter stemmer.
_WORDS_SQL = (  # thousands separators dropped (twice, for 1,234,567) only in texts that have one: most have none;
    # split at runs of anything but letters and digits (10% faster than extracting the runs), the empty ends dropped
    "list_filter(string_split_regex(lower(CASE WHEN regexp_matches({text}, '\\d,\\d') THEN regexp_replace(regexp_replace({text}, '(\\d),(\\d{{3}})', '\\1\\2', 'g'), "
    "'(\\d),(\\d{{3}})', '\\1\\2', 'g') ELSE {text} END), '[^\\p{{L}}\\p{{N}}]+'), word -> word <> '')"
)


def fts_extension_path() -> Path:
    """The fts extension file shipped by the duckdb-extension-fts package."""
    import duckdb_extension_fts

    folder = Path(duckdb_extension_fts.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    path = folder / "fts.duckdb_extension"
    if not path.is_file():
        msg = (
            f"{path}: DuckDB's full-text extension for duckdb {duckdb.__version__} is missing. "
            f"Install the matching package: pip install duckdb-extension-fts=={duckdb.__version__}"
        )
        raise StoreError(msg)
    return path


def load_fts(conn: duckdb.DuckDBPyConnection) -> None:
    """Load the fts extension from its package file, never from the network (once per connection)."""
    loaded = conn.execute("SELECT count(*) FROM duckdb_extensions() WHERE extension_name = 'fts' AND loaded").fetchone()[0]
    if not loaded:
        conn.execute(f"LOAD '{fts_extension_path()}'")


def m001_initial(conn: duckdb.DuckDBPyConnection) -> None:
    conn.execute(
        """
        CREATE SEQUENCE document_ids START 1;
        CREATE TABLE documents (
            id BIGINT PRIMARY KEY DEFAULT nextval('document_ids'),
            kind VARCHAR NOT NULL CHECK (kind IN ('source', 'wiki')),
            path VARCHAR NOT NULL UNIQUE,
            title VARCHAR,
            status VARCHAR NOT NULL CHECK (status IN ('pending', 'processing', 'ready', 'failed')),
            error VARCHAR,
            content_hash VARCHAR,
            size_bytes BIGINT,
            mtime DOUBLE,
            version INTEGER NOT NULL DEFAULT 0,
            parser VARCHAR,
            stale_since TIMESTAMP,
            stale_reason VARCHAR,
            derived_from BIGINT,
            created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
            updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp
        );
        CREATE TABLE document_pages (
            document_id BIGINT NOT NULL,
            page_number INTEGER NOT NULL,
            text VARCHAR NOT NULL
        );
        CREATE INDEX document_pages_document ON document_pages (document_id);
        CREATE SEQUENCE chunk_ids START 1;
        CREATE TABLE chunks (
            id BIGINT PRIMARY KEY DEFAULT nextval('chunk_ids'),
            document_id BIGINT NOT NULL,
            seq INTEGER NOT NULL,
            page_number INTEGER NOT NULL,
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            token_count INTEGER NOT NULL,
            breadcrumb VARCHAR NOT NULL,
            text VARCHAR NOT NULL
        );
        CREATE INDEX chunks_document ON chunks (document_id);
        CREATE TABLE doc_references (
            from_id BIGINT NOT NULL,
            to_id BIGINT NOT NULL,
            kind VARCHAR NOT NULL CHECK (kind IN ('cites', 'links_to'))
        );
        CREATE SEQUENCE verification_ids START 1;
        CREATE TABLE page_verifications (
            id BIGINT PRIMARY KEY DEFAULT nextval('verification_ids'),
            page_id BIGINT NOT NULL,
            body_hash VARCHAR NOT NULL,
            source_hashes VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            threshold DOUBLE NOT NULL,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP
        );
        CREATE TABLE verification_sentences (
            verification_id BIGINT NOT NULL,
            seq INTEGER NOT NULL,
            sentence VARCHAR NOT NULL,
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            p_entailment DOUBLE NOT NULL,
            p_contradiction DOUBLE NOT NULL,
            best_excerpt VARCHAR,
            excerpt_document_id BIGINT,
            excerpt_page INTEGER,
            excerpt_chunk_id BIGINT
        );
        """
    )


def fts_english_stopwords() -> list[str]:
    """The stopword list DuckDB's FTS uses for 'english', read from a throwaway index."""
    probe = duckdb.connect(config=_CONNECT_CONFIG)
    try:
        load_fts(probe)
        probe.execute("CREATE TABLE probe (id INTEGER, text VARCHAR); INSERT INTO probe VALUES (1, 'x')")
        probe.execute("PRAGMA create_fts_index('probe', 'id', 'text', stopwords='english')")
        return [row[0] for row in probe.execute("SELECT sw FROM fts_main_probe.stopwords ORDER BY sw").fetchall()]
    finally:
        probe.close()


def m002_search_index(conn: duckdb.DuckDBPyConnection) -> None:
    stopwords = fts_english_stopwords()
    conn.execute(
        """
        CREATE TABLE search_stopwords (word VARCHAR PRIMARY KEY);
        CREATE TABLE chunk_terms (chunk_id BIGINT NOT NULL, term VARCHAR NOT NULL, tf INTEGER NOT NULL);
        CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);
        CREATE TABLE search_state (key VARCHAR PRIMARY KEY, value BIGINT NOT NULL);
        INSERT INTO search_state VALUES ('generation', 0);
        """
    )
    conn.execute("INSERT INTO search_stopwords SELECT DISTINCT unnest(?)", [stopwords])
    _index_chunks(conn, "TRUE")


def _postings_sql(chunk_filter: str) -> str:
    """The postings (chunk_id, term, tf) of the chunks matching chunk_filter, as a query.

    The words are split out once (materialized), each distinct word is stemmed once (not
    once per occurrence), and the words are counted per (chunk, term) in one aggregation:
    1.5 s for 100,000 chunks, against 2.5 s when words were first counted per chunk and
    the counts summed per term again. The texts are copied out first: DuckDB scans a table
    one row group (122,880 rows) per thread, so splitting 100,000 chunks' words straight
    off the table ran on one core (0.86 s), and off the copy on every core (0.46 s on two).
    """
    words = _WORDS_SQL.format(text="text")
    return f"""
        WITH texts AS MATERIALIZED (SELECT id, text FROM chunks WHERE {chunk_filter}),
             words AS MATERIALIZED (SELECT id, unnest({words}) AS word FROM texts),
             stems AS MATERIALIZED (SELECT word, stem(word, 'porter') AS term FROM (SELECT DISTINCT word FROM words)
                                    WHERE word NOT IN (SELECT word FROM search_stopwords))
        SELECT id AS chunk_id, term, count(*)::INTEGER AS tf FROM words JOIN stems USING (word) GROUP BY id, term
        """


def _index_chunks(conn: duckdb.DuckDBPyConnection, chunk_filter: str, parameters: Sequence = (), *, table: str = "chunk_terms") -> None:
    """Write postings for the chunks matching chunk_filter (a SQL condition on chunks), in chunk order."""
    load_fts(conn)
    conn.execute(f"INSERT INTO {table} {_postings_sql(chunk_filter)} ORDER BY chunk_id", list(parameters))
    _bump_generation(conn)


def _delete_content(conn: duckdb.DuckDBPyConnection, document_id: int) -> None:
    """A document's chunks with their postings and embeddings, its pages, and its verification."""
    conn.execute("DELETE FROM chunk_terms WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = ?)", [document_id])
    conn.execute("DELETE FROM chunk_embeddings WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = ?)", [document_id])
    conn.execute("DELETE FROM chunks WHERE document_id = ?", [document_id])
    conn.execute("DELETE FROM document_pages WHERE document_id = ?", [document_id])
    _delete_verifications(conn, document_id)


def _delete_verifications(conn: duckdb.DuckDBPyConnection, page_id: int) -> None:
    conn.execute("DELETE FROM verification_sentences WHERE verification_id IN (SELECT id FROM page_verifications WHERE page_id = ?)", [page_id])
    conn.execute("DELETE FROM page_verifications WHERE page_id = ?", [page_id])


def _new_lineage(conn: duckdb.DuckDBPyConnection) -> None:
    """A new store, or every posting replaced (a rebuild, a restore, a clear): a new random lineage
    mark, so no in-memory search copy or cache of the postings before it is merged into (``search_digest``)."""
    conn.execute("INSERT OR REPLACE INTO search_state VALUES ('lineage', floor(random() * 4294967296)::BIGINT + 1)")
    _bump_generation(conn)


def _bump_generation(conn: duckdb.DuckDBPyConnection) -> None:
    # A random step, not +1: two histories of one store (a restored snapshot written on) never share a
    # generation, so a search cache written at one digest is never taken for another (search.py).
    conn.execute("UPDATE search_state SET value = value + 1 + floor(random() * 4294967296)::BIGINT WHERE key = 'generation'")


def m003_chunk_embeddings(conn: duckdb.DuckDBPyConnection) -> None:
    conn.execute(
        """
        CREATE TABLE chunk_embeddings (
            chunk_id BIGINT NOT NULL,
            model VARCHAR NOT NULL,
            vector FLOAT[] NOT NULL
        );
        CREATE INDEX chunk_embeddings_chunk ON chunk_embeddings (chunk_id);
        """
    )


def m004_verification_clauses(conn: duckdb.DuckDBPyConnection) -> None:
    """How a verification scored its sentences ('sentence': whole sentences; 'clauses': each clause,
    the weakest counts) and, per sentence, the clause that scored lowest."""
    conn.execute(
        """
        ALTER TABLE page_verifications ADD COLUMN method VARCHAR;
        UPDATE page_verifications SET method = 'sentence';
        ALTER TABLE verification_sentences ADD COLUMN weakest_clause VARCHAR;
        """
    )


def m005_verification_facts(conn: duckdb.DuckDBPyConnection) -> None:
    """Per sentence, the calibrated score (NLI probability and fact checks; p_entailment stays the raw
    model probability), the reason its facts failed and the words behind it (JSON list)."""
    conn.execute(
        """
        ALTER TABLE verification_sentences ADD COLUMN score DOUBLE;
        ALTER TABLE verification_sentences ADD COLUMN reason VARCHAR;
        ALTER TABLE verification_sentences ADD COLUMN flagged VARCHAR;
        """
    )


def m006_postings_without_art_index(conn: duckdb.DuckDBPyConnection) -> None:
    """chunk_terms loses its ART index on chunk_id: it cost 0.84 s of a 100,000-chunk rebuild (at
    commit) and slowed every write, while a delete of one document's postings ran faster without
    it (2.6 ms against 18 ms: DuckDB prunes the scan by the ids' min/max; a rebuild writes the
    postings in chunk order, and later ones arrive in it)."""
    conn.execute("DROP INDEX IF EXISTS chunk_terms_chunk")


MIGRATIONS: list[Callable[[duckdb.DuckDBPyConnection], None]] = [
    m001_initial, m002_search_index, m003_chunk_embeddings, m004_verification_clauses, m005_verification_facts,
    m006_postings_without_art_index,
]

DOCUMENT_COLUMNS = (
    "id, kind, path, title, status, error, content_hash, size_bytes, mtime, version, parser, "
    "stale_since, derived_from, created_at, updated_at"
)


def document_from_row(row: tuple) -> Document:
    """A Document from a row of DOCUMENT_COLUMNS."""
    return Document(*row)


# Pure pieces both stores share: what a row means, the rules around a write, and the SQL that reads
# the same in DuckDB and PostgreSQL (no parameters, so no placeholder style to differ).

SOURCE_SUMMARIES_SQL = f"""
    SELECT {", ".join(f"source.{column.strip()}" for column in DOCUMENT_COLUMNS.split(","))},
           (SELECT min(page.path) FROM documents page WHERE page.kind = 'wiki' AND page.derived_from = source.id)
    FROM documents source
    WHERE source.kind = 'source' AND source.status = 'ready'
      AND EXISTS (SELECT 1 FROM chunks WHERE chunks.document_id = source.id)
    ORDER BY source.path
"""
TOTALS_SQL = """
    SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM document_pages),
           (SELECT count(*) FROM chunks), (SELECT coalesce(sum(token_count), 0) FROM chunks)
"""

def checked_version(row: tuple | None, document_id: int, expected_version: int | None) -> None:
    """Refuse a content write to a document that is gone, or (with expected_version) that another
    process has changed since; row is the document's (version, path)."""
    if row is None:
        msg = f"document {document_id} is gone (withdrawn meanwhile); nothing was written"
        raise StoreConflictError(msg)
    if expected_version is not None and row[0] != expected_version:
        msg = f"{row[1]}: changed by someone else (version {row[0]}, this edit was based on {expected_version}); reload it and edit again"
        raise StoreConflictError(msg)


def reference_edges(page_id: int, cites: Sequence[int], links_to: Sequence[int]) -> list[tuple[int, int, str]]:
    """A page's outgoing (from, to, kind) edges, each once, without links to itself."""
    return [(page_id, target, "cites") for target in dict.fromkeys(cites)] + [
        (page_id, target, "links_to") for target in dict.fromkeys(links_to) if target != page_id
    ]


def sentence_columns(scores) -> list[list]:
    """Verification sentence scores as columns (seq, sentence, start, end, p_entailment, p_contradiction,
    excerpt, excerpt path, page, chunk id, weakest clause, score, reason, flagged as JSON): one insert for all rows."""
    rows = [
        (seq, score.sentence, score.start, score.end, score.p_entailment, score.p_contradiction,
         score.excerpt, score.excerpt_path, score.excerpt_page, score.excerpt_chunk_id, score.weakest_clause,
         score.score, score.reason, json.dumps(list(score.flagged)))
        for seq, score in enumerate(scores)
    ]
    return [list(column) for column in zip(*rows)]


_VERIFICATION_KEYS = ("id", "body_hash", "source_hashes", "model", "threshold", "started_at", "finished_at", "method")
_SENTENCE_KEYS = ("sentence", "start", "end", "p_entailment", "p_contradiction", "excerpt", "excerpt_path", "excerpt_page", "excerpt_chunk_id",
                  "weakest_clause", "score", "reason", "flagged")


def verification_record(header: tuple, rows: Sequence[tuple]) -> tuple[dict, list[dict]]:
    """A stored verification's header and sentence rows (in the columns both stores select) as dicts."""
    sentences = [dict(zip(_SENTENCE_KEYS, row)) for row in rows]
    for sentence in sentences:
        sentence["flagged"] = tuple(json.loads(sentence["flagged"])) if sentence["flagged"] else ()
    return dict(zip(_VERIFICATION_KEYS, header)), sentences


def chunk_from_row(row: tuple) -> Chunk:
    """A Chunk from (id, document_id, page_number, start_offset, end_offset, token_count, breadcrumb, text)."""
    return Chunk(id=row[0], document_id=row[1], page_number=row[2], start=row[3], end=row[4], token_count=row[5],
                 breadcrumb=tuple(part for part in row[6].split(" > ") if part), text=row[7])


@dataclass(frozen=True)
class StatusCount:
    kind: str
    status: str
    document_count: int


class Store:
    """A DuckDB database file, opened briefly for each operation."""

    _migrated: set[Path] = set()
    _migrate_lock = threading.Lock()
    local = True  # a file of this workspace's own: snapshots at commits, rebuilds from its files, an in-process search index
    _sessions = threading.local()  # per thread: store path -> the session's connection
    _open_transactions = threading.local()  # per thread: ids of connections inside BEGIN

    def __init__(self, path: Path | str, *, lock_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.lock_timeout_s = lock_timeout_s
        self._memory: duckdb.DuckDBPyConnection | None = None
        if str(path) == MEMORY:
            self._memory = duckdb.connect(MEMORY, config=_CONNECT_CONFIG)
            migrate(self._memory)

    @property
    def in_memory(self) -> bool:
        return self._memory is not None

    def exists(self) -> bool:
        """Whether the store file is there (a deleted store is re-created empty on the next write)."""
        return self.in_memory or self.path.is_file()

    def damaged(self, err: BaseException) -> StoreDamagedError:
        """The one error for a store DuckDB cannot read, with the fix."""
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        msg = (
            f"{self.path}: the store is damaged ({detail}). Run `llmwiki restore` to load the latest snapshot "
            "(or rebuild from the files when none is usable); `llmwiki reindex` rebuilds from the files."
        )
        return StoreDamagedError(msg)

    # -- connections ---------------------------------------------------------

    def _open(self) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.02
        while True:
            try:
                conn = duckdb.connect(str(self.path), config=_CONNECT_CONFIG)
                conn.execute("PRAGMA disable_checkpoint_on_shutdown")
                return conn
            except (duckdb.SerializationException, duckdb.InternalException) as err:
                raise self.damaged(err) from err
            except duckdb.IOException as err:
                if not _LOCK_MESSAGE.search(str(err)):
                    if _is_damage(err) and self.path.is_file():
                        raise self.damaged(err) from err
                    msg = f"{self.path}: cannot open the store ({err}). Check the file's permissions and free disk space."
                    raise StoreError(msg) from err
                if time.monotonic() >= deadline:
                    msg = (
                        f"{self.path}: another process kept the store locked for {self.lock_timeout_s:.0f} s "
                        f"({err}). Wait for it to finish, or raise [store] lock_timeout_s in wiki_config.toml."
                    )
                    raise StoreLockedError(msg) from err
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.5)

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A migrated connection that is closed on exit; hold it briefly.

        Inside ``session()`` on this thread, the session's connection is reused.
        """
        if self._memory is not None:
            yield self._memory
            return
        shared = Store._sessions.__dict__.get(str(self.path))
        if shared is not None:
            yield shared
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._open()
        try:
            self._migrate_once(conn)
            yield conn
        except (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException) as err:
            if _is_damage(err):
                raise self.damaged(err) from err
            raise
        finally:
            conn.close()

    @contextmanager
    def session(self) -> Iterator[None]:
        """Keep one connection open for the length of one operation (on this thread).

        Opening the file costs tens of milliseconds (the write-ahead log is
        replayed), so an operation of many small steps (a file's ingest, a
        batch of page writes) holds one connection; other processes wait for
        it as they would for any writer.
        """
        key = str(self.path)
        if self._memory is not None or key in Store._sessions.__dict__:
            yield
            return
        with self.connect() as conn:
            Store._sessions.__dict__[key] = conn
            try:
                yield
            finally:
                del Store._sessions.__dict__[key]

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection inside BEGIN/COMMIT; any exception rolls everything back.

        Inside another transaction on the same connection (a caller grouping several store writes
        into one, e.g. a withdrawal's cascade), it joins that one.
        """
        with self.connect() as conn:
            if id(conn) in Store._open_transactions.__dict__:
                yield conn
                return
            conn.execute("BEGIN TRANSACTION")
            Store._open_transactions.__dict__[id(conn)] = True
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
            finally:
                Store._open_transactions.__dict__.pop(id(conn), None)

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (after a batch of writes)."""
        with self.connect() as conn:
            conn.execute("CHECKPOINT")

    def migrate(self) -> None:
        """Create the schema or bring it up to date now (every first connection of a process does)."""
        with self.connect():
            return

    def forget_migrated(self) -> None:
        """After the file was replaced (a recovered store): migrate again on the next connection."""
        Store._migrated.discard(self.path.resolve())

    def _migrate_once(self, conn: duckdb.DuckDBPyConnection) -> None:
        key = self.path.resolve()
        if key in Store._migrated:
            return
        with Store._migrate_lock:
            migrate(conn)
            Store._migrated.add(key)

    # -- whole-store copies (snapshots), loads and rebuilds ------------------------

    def migration_names(self) -> list[str]:
        """The migrations this store has applied, in order."""
        with self.connect() as conn:
            return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY version").fetchall()]

    @staticmethod
    def migrations_in(path: Path) -> list[str]:
        """The migrations recorded in another store file (a snapshot), read-only; StoreDamagedError if unreadable."""
        try:
            other = duckdb.connect(str(path), read_only=True, config=_CONNECT_CONFIG)
        except duckdb.Error as err:
            raise Store(path).damaged(err) from err
        try:
            return [row[0] for row in other.execute("SELECT name FROM schema_migrations ORDER BY version").fetchall()]
        except duckdb.Error as err:
            raise Store(path).damaged(err) from err
        finally:
            other.close()

    def copy_to(self, target: Path) -> None:
        """A consistent copy of the whole store in a new database file (one transaction; readers may go on)."""
        with self.connect() as conn:
            name = conn.execute("SELECT current_database()").fetchone()[0]
            conn.execute(f"ATTACH '{_quoted(target)}' AS llmwiki_copy")
            try:
                conn.execute(f'COPY FROM DATABASE "{name}" TO llmwiki_copy')
            finally:
                conn.execute("DETACH llmwiki_copy")

    def load_from(self, path: Path) -> None:
        """Replace every table's rows with those of a copy (``copy_to``), in one transaction.

        The search generation moves forward, so every in-memory search index rebuilds.
        """
        with self.session(), self.connect() as conn:  # ATTACH outside the transaction, on the session's connection
            conn.execute(f"ATTACH '{_quoted(path)}' AS llmwiki_snapshot (READ_ONLY)")
            try:
                with self.transaction():
                    generation = conn.execute("SELECT value FROM search_state WHERE key = 'generation'").fetchone()[0]
                    for table in _tables(conn, leave=_SCHEMA_TABLES):
                        conn.execute(f'DELETE FROM main."{table}"')
                        conn.execute(f'INSERT INTO main."{table}" BY NAME SELECT * FROM llmwiki_snapshot.main."{table}"')
                    _advance_sequences(conn)
                    conn.execute("UPDATE search_state SET value = greatest(value, ?) WHERE key = 'generation'", [generation])
                    _new_lineage(conn)  # every posting replaced, whatever the counts say; the generation moves past both histories
            except duckdb.Error as err:
                if _is_damage(err):
                    raise Store(path).damaged(err) from err
                raise
            finally:
                conn.execute("DETACH llmwiki_snapshot")

    def clear(self) -> None:
        """Delete every document, chunk, posting, embedding and verification (before a rebuild from the files)."""
        with self.transaction() as conn:
            for table in _tables(conn, leave=(*_SCHEMA_TABLES, *_ANALYZER_TABLES)):
                conn.execute(f'DELETE FROM "{table}"')
            _new_lineage(conn)

    def table_rows(self, table: str, *, batch: int = 10_000) -> tuple[list[str], Iterator[tuple]]:
        """(column names, rows) of one of the store's own tables, for copying into another store."""
        if table not in CONTENT_TABLES:
            raise ValueError(f"unknown table {table!r}")
        with self.connect() as conn:
            columns = [row[0] for row in conn.execute(f'DESCRIBE "{table}"').fetchall()]

        def rows() -> Iterator[tuple]:
            with self.connect() as conn:
                cursor = conn.execute(f'SELECT * FROM "{table}"')
                while chunk := cursor.fetchmany(batch):
                    yield from chunk

        return columns, rows()

    def row_counts(self) -> dict[str, int]:
        """Rows per copied table (documents, pages, chunks, references, verifications, sentences, embeddings)."""
        with self.connect() as conn:
            return {table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in CONTENT_TABLES}

    # -- documents -----------------------------------------------------------

    def document_by_path(self, path: str) -> Document | None:
        """The document stored under a workspace-relative path, if any."""
        with self.connect() as conn:
            row = conn.execute(f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE path = ?", [path]).fetchone()
        return document_from_row(row) if row else None

    def documents(self, *, kind: str | None = None) -> list[Document]:
        """All documents, optionally of one kind, ordered by path."""
        with self.connect() as conn:
            rows = conn.execute(
                f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE ? IS NULL OR kind = ? ORDER BY path",
                [kind, kind],
            ).fetchall()
        return [document_from_row(row) for row in rows]

    def source_summaries(self) -> list[tuple[Document, str | None]]:
        """Every ready source that has chunks, with the path of the summary page derived from it (None: none)."""
        with self.connect() as conn:
            rows = conn.execute(SOURCE_SUMMARIES_SQL).fetchall()
        return [(document_from_row(row[:-1]), row[-1]) for row in rows]

    def begin_document(self, *, path: str, kind: str, size_bytes: int, mtime: float) -> Document:
        """Record that a file is being processed, creating its row if new."""
        with self.transaction() as conn:
            row = conn.execute("SELECT id FROM documents WHERE path = ?", [path]).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO documents (kind, path, status, size_bytes, mtime) VALUES (?, ?, 'processing', ?, ?)",
                    [kind, path, size_bytes, mtime],
                )
            else:
                conn.execute(
                    "UPDATE documents SET status = 'processing', updated_at = current_timestamp WHERE id = ?",
                    [row[0]],
                )
            row = conn.execute(f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE path = ?", [path]).fetchone()
        return document_from_row(row)

    def fail_document(self, document_id: int, reason: str) -> None:
        """Mark a document failed with its reason; its stored content is kept."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE documents SET status = 'failed', error = ?, updated_at = current_timestamp WHERE id = ?",
                [reason, document_id],
            )
            _bump_generation(conn)

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
    ) -> Document:
        """Swap in a document's new pages and chunks and mark it ready, atomically.

        With ``expected_version``, an edit based on another version is refused (StoreConflictError).
        """
        with self.transaction() as conn:
            checked_version(conn.execute("SELECT version, path FROM documents WHERE id = ?", [document_id]).fetchone(), document_id, expected_version)
            _delete_content(conn, document_id)  # a rewritten page's verification no longer applies either
            page_table = pa.table(  # noqa: F841 - DuckDB reads it by name
                {
                    "document_id": pa.array([document_id] * len(pages), pa.int64()),
                    "page_number": pa.array([page.number for page in pages], pa.int32()),
                    "text": pa.array([page.text for page in pages], pa.string()),
                }
            )
            conn.execute("INSERT INTO document_pages SELECT * FROM page_table")
            chunk_table = pa.table(  # noqa: F841 - DuckDB reads it by name
                {
                    "document_id": pa.array([document_id] * len(chunks), pa.int64()),
                    "seq": pa.array(range(len(chunks)), pa.int32()),
                    "page_number": pa.array([chunk.page_number for chunk in chunks], pa.int32()),
                    "start_offset": pa.array([chunk.start for chunk in chunks], pa.int32()),
                    "end_offset": pa.array([chunk.end for chunk in chunks], pa.int32()),
                    "token_count": pa.array([chunk.token_count for chunk in chunks], pa.int32()),
                    "breadcrumb": pa.array([chunk.breadcrumb_text for chunk in chunks], pa.string()),
                    "text": pa.array([chunk.text for chunk in chunks], pa.string()),
                }
            )
            conn.execute(
                "INSERT INTO chunks (document_id, seq, page_number, start_offset, end_offset, token_count, breadcrumb, text) "
                "SELECT * FROM chunk_table"
            )
            _index_chunks(conn, "document_id = ?", [document_id])
            conn.execute(
                """
                UPDATE documents
                SET status = 'ready', error = NULL, content_hash = ?, size_bytes = ?, mtime = ?,
                    parser = ?, title = ?, version = version + 1, updated_at = current_timestamp
                WHERE id = ?
                """,
                [content_hash, size_bytes, mtime, parser, title, document_id],
            )
            row = conn.execute(f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = ?", [document_id]).fetchone()
        return document_from_row(row)

    def bulk_load(self, documents: Sequence[tuple[str, str, str, Sequence[PageText], Sequence[Chunk]]]) -> None:
        """Store many (path, kind, content_hash, pages, chunks) in one transaction, indexed once.

        For building large workspaces (benchmarks, restores); paths must be new.
        """
        with self.transaction() as conn:
            first_new_chunk = conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]
            page_columns: dict[str, list] = {"document_id": [], "page_number": [], "text": []}
            chunk_columns: dict[str, list] = {key: [] for key in ("document_id", "seq", "page_number", "start_offset", "end_offset", "token_count", "breadcrumb", "text")}
            for path, kind, digest, pages, chunks in documents:
                document_id = conn.execute(
                    "INSERT INTO documents (kind, path, status, content_hash, version, parser) VALUES (?, ?, 'ready', ?, 1, 'bulk') RETURNING id",
                    [kind, path, digest],
                ).fetchone()[0]
                for page in pages:
                    page_columns["document_id"].append(document_id)
                    page_columns["page_number"].append(page.number)
                    page_columns["text"].append(page.text)
                for seq, chunk in enumerate(chunks):
                    for key, value in zip(chunk_columns, (document_id, seq, chunk.page_number, chunk.start, chunk.end, chunk.token_count, chunk.breadcrumb_text, chunk.text)):
                        chunk_columns[key].append(value)
            page_table = pa.table(page_columns)  # noqa: F841 - DuckDB reads it by name
            chunk_table = pa.table(chunk_columns)  # noqa: F841 - DuckDB reads it by name
            conn.execute("INSERT INTO document_pages SELECT * FROM page_table")
            conn.execute(
                "INSERT INTO chunks (document_id, seq, page_number, start_offset, end_offset, token_count, breadcrumb, text) "
                "SELECT * FROM chunk_table"
            )
            _index_chunks(conn, "id > ?", [first_new_chunk])

    def mark_ready_unchanged(self, document_id: int, *, mtime: float) -> None:
        """A file touched but not changed: note its mtime, keep everything else."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE documents SET status = 'ready', error = NULL, mtime = ? WHERE id = ?",
                [mtime, document_id],
            )

    def chunks_missing_embeddings(self, model: str) -> list[tuple[int, str]]:
        """(chunk id, text) of chunks that have no embedding from model, by id."""
        with self.connect() as conn:
            return conn.execute(
                """
                SELECT id, text FROM chunks
                WHERE id NOT IN (SELECT chunk_id FROM chunk_embeddings WHERE model = ?)
                ORDER BY id
                """,
                [model],
            ).fetchall()

    def write_embeddings(self, model: str, chunk_ids: Sequence[int], vectors) -> None:
        """Store embeddings of chunks (rows of vectors) for model, replacing older ones."""
        embedding_table = pa.table({  # noqa: F841 - DuckDB reads it by name
            "chunk_id": pa.array(list(chunk_ids), pa.int64()),
            "model": pa.array([model] * len(chunk_ids), pa.string()),
            "vector": pa.array([list(map(float, vector)) for vector in vectors], pa.list_(pa.float32())),
        })
        with self.transaction() as conn:
            conn.execute("DELETE FROM chunk_embeddings WHERE model = ? AND chunk_id IN (SELECT chunk_id FROM embedding_table)", [model])
            conn.execute("INSERT INTO chunk_embeddings SELECT chunk_id, model, vector FROM embedding_table WHERE chunk_id IN (SELECT id FROM chunks)")
            _bump_generation(conn)

    def rebuild_search_index(self) -> None:
        """Recompute every posting from the chunks' text, in one transaction."""
        with self.transaction() as conn:
            rebuild_search_index(conn)

    def remove_document(self, path: str) -> bool:
        """Delete a document and everything stored for it; False when there was none."""
        with self.transaction() as conn:
            row = conn.execute("SELECT id FROM documents WHERE path = ?", [path]).fetchone()
            if row is None:
                return False
            document_id = row[0]
            _delete_content(conn, document_id)
            conn.execute("DELETE FROM doc_references WHERE from_id = ? OR to_id = ?", [document_id, document_id])
            conn.execute("DELETE FROM documents WHERE id = ?", [document_id])
            _bump_generation(conn)
        return True

    def mark_stale(self, document_id: int, reason: str) -> None:
        """Mark a page stale (it rests partly on withdrawn material); it stays searchable, labelled."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE documents SET stale_since = coalesce(stale_since, current_timestamp), stale_reason = ? WHERE id = ?",
                [reason, document_id],
            )
            _bump_generation(conn)

    def stale_reason(self, document_id: int) -> str | None:
        """Why a page is stale (None when it is not)."""
        with self.connect() as conn:
            row = conn.execute("SELECT stale_reason FROM documents WHERE id = ?", [document_id]).fetchone()
        return row[0] if row else None

    def set_page_references(self, page_id: int, *, cites: Sequence[int], links_to: Sequence[int], derived_from: int | None) -> None:
        """Replace a page's outgoing reference edges and its derivation, in one transaction."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM doc_references WHERE from_id = ?", [page_id])
            edges = reference_edges(page_id, cites, links_to)
            if edges:
                conn.executemany("INSERT INTO doc_references VALUES (?, ?, ?)", edges)
            conn.execute("UPDATE documents SET derived_from = ? WHERE id = ?", [derived_from, page_id])

    def references(self, document_id: int) -> list[tuple[str, str]]:
        """(kind, target path) of a document's outgoing references."""
        with self.connect() as conn:
            return conn.execute(
                """
                SELECT doc_references.kind, documents.path FROM doc_references
                JOIN documents ON documents.id = doc_references.to_id
                WHERE doc_references.from_id = ? ORDER BY 1, 2
                """,
                [document_id],
            ).fetchall()

    def save_verification(self, page_id: int, *, body_hash: str, source_hashes: str, model: str, threshold: float, started_at, scores, method: str = "sentence") -> int:
        """Store a page's verification (replacing the previous one) in one transaction."""
        with self.transaction() as conn:
            _delete_verifications(conn, page_id)
            verification_id = conn.execute(
                "INSERT INTO page_verifications (page_id, body_hash, source_hashes, model, threshold, started_at, finished_at, method) "
                "VALUES (?, ?, ?, ?, ?, ?, current_timestamp, ?) RETURNING id",
                [page_id, body_hash, source_hashes, model, threshold, started_at, method],
            ).fetchone()[0]
            columns = sentence_columns(scores)
            if columns:  # one statement for all rows (executemany costs milliseconds per row)
                conn.execute(
                    """
                    INSERT INTO verification_sentences
                    SELECT ?, rows.seq, rows.sentence, rows.start_offset, rows.end_offset, rows.p_entailment, rows.p_contradiction,
                           rows.excerpt, documents.id, rows.excerpt_page, rows.excerpt_chunk_id, rows.weakest_clause,
                           rows.score, rows.reason, rows.flagged
                    FROM (SELECT unnest(?::INTEGER[]) AS seq, unnest(?::VARCHAR[]) AS sentence, unnest(?::INTEGER[]) AS start_offset,
                                 unnest(?::INTEGER[]) AS end_offset, unnest(?::DOUBLE[]) AS p_entailment, unnest(?::DOUBLE[]) AS p_contradiction,
                                 unnest(?::VARCHAR[]) AS excerpt, unnest(?::VARCHAR[]) AS excerpt_path, unnest(?::INTEGER[]) AS excerpt_page,
                                 unnest(?::BIGINT[]) AS excerpt_chunk_id, unnest(?::VARCHAR[]) AS weakest_clause,
                                 unnest(?::DOUBLE[]) AS score, unnest(?::VARCHAR[]) AS reason, unnest(?::VARCHAR[]) AS flagged) AS rows
                    LEFT JOIN documents ON documents.path = rows.excerpt_path
                    """,
                    [verification_id, *columns],
                )
        return verification_id

    def latest_verification(self, page_id: int) -> tuple[dict, list[dict]] | None:
        """A page's stored verification: (header, sentence rows), or None."""
        with self.connect() as conn:
            header = conn.execute(
                "SELECT id, body_hash, source_hashes, model, threshold, started_at, finished_at, method FROM page_verifications WHERE page_id = ? ORDER BY id DESC LIMIT 1",
                [page_id],
            ).fetchone()
            if header is None:
                return None
            rows = conn.execute(
                """
                SELECT sentence, start_offset, end_offset, p_entailment, p_contradiction, best_excerpt,
                       documents.path, excerpt_page, excerpt_chunk_id, weakest_clause, score, reason, flagged
                FROM verification_sentences LEFT JOIN documents ON documents.id = verification_sentences.excerpt_document_id
                WHERE verification_id = ? ORDER BY seq
                """,
                [header[0]],
            ).fetchall()
        return verification_record(header, rows)

    def citation_targets(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, int, str]]:
        """chunk id -> (document path, page number, breadcrumb) for the ids that exist."""
        if not chunk_ids:
            return {}
        with self.connect() as conn:
            rows = conn.execute(
                """
                SELECT chunks.id, documents.path, chunks.page_number, chunks.breadcrumb
                FROM chunks JOIN documents ON documents.id = chunks.document_id
                WHERE chunks.id IN (SELECT unnest(?))
                """,
                [list(chunk_ids)],
            ).fetchall()
        return {row[0]: (row[1], row[2], row[3]) for row in rows}

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, str]:
        """chunk id -> text, for the ids that exist."""
        if not chunk_ids:
            return {}
        with self.connect() as conn:
            rows = conn.execute("SELECT id, text FROM chunks WHERE id IN (SELECT unnest(?))", [list(chunk_ids)]).fetchall()
        return dict(rows)

    # -- reading content -----------------------------------------------------

    def chunks(self, document_id: int) -> list[Chunk]:
        """A document's stored chunks in reading order."""
        with self.connect() as conn:
            rows = conn.execute(
                """
                SELECT id, document_id, page_number, start_offset, end_offset, token_count, breadcrumb, text
                FROM chunks WHERE document_id = ? ORDER BY seq
                """,
                [document_id],
            ).fetchall()
        return [chunk_from_row(row) for row in rows]

    def pages(self, document_id: int) -> list[PageText]:
        """A document's stored page texts in page order."""
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT page_number, text FROM document_pages WHERE document_id = ? ORDER BY page_number",
                [document_id],
            ).fetchall()
        return [PageText(number=row[0], text=row[1]) for row in rows]

    def status_counts(self) -> list[StatusCount]:
        """How many documents there are of each kind and status."""
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT kind, status, count(*) FROM documents GROUP BY ALL ORDER BY kind, status"
            ).fetchall()
        return [StatusCount(*row) for row in rows]

    def totals(self) -> dict[str, int]:
        """Counts of documents, pages and chunks, for reports."""
        with self.connect() as conn:
            documents, pages, chunks, tokens = conn.execute(TOTALS_SQL).fetchone()
        return {"documents": documents, "pages": pages, "chunks": chunks, "tokens": int(tokens)}


def migrate(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply the migrations this database lacks, by name; returns the names applied."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    applied = {row[0] for row in conn.execute("SELECT name FROM schema_migrations").fetchall()}
    unknown = applied - {migration.__name__ for migration in MIGRATIONS}
    if unknown:
        msg = f"this store was written by a newer llmwiki (it has migrations this version does not know: {', '.join(sorted(unknown))}). Upgrade llmwiki."
        raise StoreError(msg)
    newly_applied = []
    for migration in MIGRATIONS:
        if migration.__name__ in applied:
            continue
        conn.execute("BEGIN TRANSACTION")
        try:
            migration(conn)
            conn.execute(
                "INSERT INTO schema_migrations SELECT coalesce(max(version), 0) + 1, ?, ? FROM schema_migrations",
                [migration.__name__, datetime.now()],
            )
        except duckdb.Error as err:
            conn.execute("ROLLBACK")
            msg = f"migration {migration.__name__} failed: {err}. The store was left as it was; report this as a bug."
            raise StoreError(msg) from err
        conn.execute("COMMIT")
        newly_applied.append(migration.__name__)
    if "m002_search_index" in newly_applied:  # a new store: its own lineage (search_digest)
        _new_lineage(conn)
    if newly_applied:  # schema changes go into the file now: DuckDB 1.5 fails to replay an ALTER TABLE from the WAL
        conn.execute("CHECKPOINT")
    return newly_applied


def _is_damage(err: BaseException) -> bool:
    """Whether a DuckDB error means the file itself is unreadable (not a lock, not a bug in a query)."""
    text = str(err)
    return isinstance(err, (duckdb.SerializationException, duckdb.InternalException)) or any(
        sign in text for sign in ("Corrupt database file", "not a valid DuckDB database file", "Could not read enough bytes", "checksum", "Failed to read")
    )


def _tables(conn: duckdb.DuckDBPyConnection, *, leave: Sequence[str]) -> list[str]:
    """The store's own tables, by name, except those in leave."""
    rows = conn.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name"
    ).fetchall()
    return [row[0] for row in rows if row[0] not in leave]


def _advance_sequences(conn: duckdb.DuckDBPyConnection) -> None:
    """Move each id sequence past the largest id now in its table (a loaded copy may hold higher ids)."""
    for sequence, table in SEQUENCES:
        largest = conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
        following = conn.execute(f"SELECT nextval('{sequence}')").fetchone()[0]
        if following <= largest:
            conn.execute(f"SELECT max(nextval('{sequence}')) FROM range(?)", [largest - following + 1])


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


# -- search (the scoring itself lives in llmwiki.search) ----------------------


def search_digest(conn: duckdb.DuckDBPyConnection) -> tuple[int, int, int, int, int, int]:
    """The searchable state in six numbers: (generation, chunks, max chunk id, postings, embeddings,
    lineage). The lineage mark is drawn when the store is created and again whenever every posting is
    replaced (``rebuild_search_index``, ``load_from``, ``clear``), which can leave the counts as they
    were: a copy of the postings from another lineage is loaded anew, never merged into. Within one
    lineage chunk ids only grow, so a copy from an earlier state can be brought up to date by merging.
    0: a store from before lineage marks (copies of it are used only at exactly its digest)."""
    return conn.execute(
        """
        SELECT (SELECT value FROM search_state WHERE key = 'generation'), count(*), coalesce(max(id), 0),
               (SELECT count(*) FROM chunk_terms), (SELECT count(*) FROM chunk_embeddings),
               coalesce((SELECT value FROM search_state WHERE key = 'lineage'), 0)
        FROM chunks
        """
    ).fetchone()


def search_chunk_flags(conn: duckdb.DuckDBPyConnection) -> pa.Table:
    """Every chunk's id with the flags a search filters on (searchable, is_wiki, stale), by id."""
    return conn.execute(
        """
        SELECT chunks.id, documents.status <> 'failed' AS searchable, documents.kind = 'wiki' AS is_wiki,
               documents.stale_since IS NOT NULL AS stale
        FROM chunks JOIN documents ON documents.id = chunks.document_id
        ORDER BY chunks.id
        """
    ).to_arrow_table()


def search_chunk_display(conn: duckdb.DuckDBPyConnection, *, after_chunk_id: int, preview_chars: int) -> pa.Table:
    """Display fields of the chunks with an id above after_chunk_id, by id (the text cut, not normalised)."""
    return conn.execute(
        """
        SELECT document_id, page_number, breadcrumb, left(text, ?) AS preview
        FROM chunks WHERE id > ? ORDER BY id
        """,
        [preview_chars + 1, after_chunk_id],
    ).to_arrow_table()


def search_documents(conn: duckdb.DuckDBPyConnection) -> dict[int, tuple[str, str | None]]:
    """Every document's id -> (path, title), for search hits."""
    return {row[0]: (row[1], row[2]) for row in conn.execute("SELECT id, path, title FROM documents").fetchall()}


def search_postings(conn: duckdb.DuckDBPyConnection, *, after_chunk_id: int = 0, by_term: bool = False) -> pa.Table:
    """Postings (chunk_id, term, tf) of the chunks with an id above after_chunk_id; sorted by term when by_term."""
    return conn.execute(
        f"SELECT chunk_id, term, tf FROM chunk_terms WHERE chunk_id > ?{' ORDER BY term' if by_term else ''}", [after_chunk_id]
    ).to_arrow_table()


def search_embeddings(conn: duckdb.DuckDBPyConnection, *, model: str, after_chunk_id: int = 0) -> tuple[list[int], list[list[float]]]:
    """(chunk ids, vectors) of the stored embeddings from model, chunk ids above after_chunk_id."""
    rows = conn.execute(
        "SELECT chunk_id, vector FROM chunk_embeddings WHERE model = ? AND chunk_id > ? ORDER BY chunk_id",
        [model, after_chunk_id],
    ).fetchall()
    return [row[0] for row in rows], [row[1] for row in rows]


def search_stopwords(conn: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The stopwords the index leaves out."""
    return frozenset(row[0] for row in conn.execute("SELECT word FROM search_stopwords").fetchall())


def analyze(conn: duckdb.DuckDBPyConnection, text: str) -> list[str]:
    """The distinct search terms of a text, through the index's SQL analyzer (for tests and checks)."""
    load_fts(conn)
    words = _WORDS_SQL.format(text="text")
    row = conn.execute(
        f"""
        SELECT list_transform(list_filter(words, word -> NOT list_contains(stopwords, word)), word -> stem(word, 'porter'))
        FROM (SELECT {words} AS words, (SELECT list(word) FROM search_stopwords) AS stopwords FROM (SELECT ?::VARCHAR AS text))
        """,
        [text],
    ).fetchone()
    return list(dict.fromkeys(row[0]))


def rebuild_search_index(conn: duckdb.DuckDBPyConnection) -> None:
    """Recompute every posting from the chunks' text (after an analyzer change).

    Into a new table that then takes the old one's place: deleting millions of postings
    row by row cost more at commit than computing them again. In chunk order, so a scan for
    some chunks' postings (a delete, the postings after an id) skips the rest by min/max.
    """
    # The table and its indexes as the migrations left them, read from the catalog rather than written twice.
    table = conn.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 'chunk_terms'").fetchone()[0]
    indexes = [row[0] for row in conn.execute("SELECT sql FROM duckdb_indexes() WHERE table_name = 'chunk_terms'").fetchall()]
    conn.execute(table.replace("chunk_terms", "chunk_terms_rebuilt", 1))
    _index_chunks(conn, "TRUE", table="chunk_terms_rebuilt")
    conn.execute("DROP TABLE chunk_terms")
    conn.execute("ALTER TABLE chunk_terms_rebuilt RENAME TO chunk_terms")
    for index in indexes:
        conn.execute(index)
    _new_lineage(conn)
