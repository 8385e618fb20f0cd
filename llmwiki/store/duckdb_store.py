"""The embedded DuckDB store: the default, one file in the workspace's ``.llmwiki/``.

What it adds to the contract, and why:

- Short connections. Several processes share one workspace (two notebooks and
  a CLI, say), and DuckDB lets only one process open a file at a time, so every
  operation opens the file, does its work in one transaction and closes it. A
  process that finds the file locked waits with backoff until
  ``lock_timeout_s`` and only then gives up with ``StoreLockedError``.
- Whole-store copies (the snapshots at each commit), loading one back, and
  recovery of a damaged file: a damaged file (truncated, zeroed, overwritten)
  raises ``StoreDamagedError`` with the fix, whenever DuckDB notices it.
- Search postings split and stemmed in SQL by DuckDB's FTS extension (loaded
  from the file its package ships, never from the network) and read by
  ``llmwiki.read.search`` into an in-process copy, through ``PostingsReader``; a
  generation counter and a lineage mark tell that copy when to refresh.
- Bulk rows go in as Arrow tables that the SQL names directly (DuckDB's
  replacement scans), hence locals that look unused.

``DuckDBStore(":memory:")`` keeps one in-memory database for the life of the
object (tests).
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import sys
import threading
import time
import uuid
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from llmwiki.errors import StoreDamagedError, StoreError, StoreLockedError
from llmwiki.store.contract import ContentRows, Store
from llmwiki.store.dialect import DUCKDB
from llmwiki.store.schema import MIGRATIONS, REVIEW_TABLES, SEQUENCES

_LOCK_MESSAGE = re.compile(r"Could not set lock on file|Conflicting lock is held", re.IGNORECASE)
# DuckDB keeps one database instance per file for the process, made by the first connection and dropped with the last;
# two threads opening or closing at once race on it ("Unique file handle conflict: Cannot attach ... already attached").
# Opening and closing are serialised here, as two sessions of a served notebook do them on their own threads.
_INSTANCE_LOCK = threading.Lock()
MEMORY = ":memory:"
# Tables a copy of the store carries but a load leaves as they are: the schema, and what reviewers decided
# (a restore to an earlier commit brings pages back, not the judgements made since).
_KEPT_ON_LOAD = ("schema_migrations", *REVIEW_TABLES)
# Checkpointing on every close rewrote a whole row group (0.3 s at 100k chunks)
# after each small write. The write-ahead log is as durable as the file, so
# closes skip the checkpoint; DuckDB checkpoints once the log passes the
# threshold (small, since every open replays the log), and batch operations call checkpoint() when they finish.
_CONNECT_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "checkpoint_threshold": "2MB",
}

# DuckDB's Python client looks for pandas on each parameter it binds (is it a DataFrame, pandas.NA?) and, where
# pandas is not installed, asks Python's import system again every time: about 300 failed imports, 0.09 s, per page
# verification. Where pandas is absent, a statement with parameters runs with sys.modules naming it absent (the
# import fails at once); the entry is removed afterwards, so a pandas installed later imports as usual.
_PANDAS_INSTALLED = importlib.util.find_spec("pandas") is not None


@contextmanager
def _pandas_known_absent() -> Iterator[None]:
    if _PANDAS_INSTALLED or "pandas" in sys.modules:
        yield
        return
    sys.modules["pandas"] = None
    try:
        yield
    finally:
        if sys.modules.get("pandas", 0) is None:
            del sys.modules["pandas"]


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


def _write_postings(conn: duckdb.DuckDBPyConnection, chunk_filter: str, parameters: Sequence = (), *, table: str = "chunk_terms") -> None:
    """Write postings for the chunks matching chunk_filter (a SQL condition on chunks), in chunk order."""
    load_fts(conn)
    conn.execute(f"INSERT INTO {table} {_postings_sql(chunk_filter)} ORDER BY chunk_id", list(parameters))
    _bump_generation(conn)


def _new_lineage(conn: duckdb.DuckDBPyConnection) -> None:
    """A new store, or every posting replaced (a rebuild, a restore, a clear): a new random lineage
    mark, so no in-memory search copy or cache of the postings before it is merged into (``PostingsReader.digest``)."""
    conn.execute("INSERT OR REPLACE INTO search_state VALUES ('lineage', floor(random() * 4294967296)::BIGINT + 1)")
    _bump_generation(conn)


def _bump_generation(conn: duckdb.DuckDBPyConnection) -> None:
    # A random step, not +1: two histories of one store (a restored snapshot written on) never share a
    # generation, so a search cache written at one digest is never taken for another (search.py).
    conn.execute("UPDATE search_state SET value = value + 1 + floor(random() * 4294967296)::BIGINT WHERE key = 'generation'")


# DuckDB writes three 4 KiB header blocks when it creates a file.
_HEADER_BYTES = 3 * 4096


def _file_state(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime) of a file, or None when there is none: whether it changed between two looks."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _being_created(path: Path) -> bool:
    """Whether the store file is one another process is creating right now: shorter than DuckDB's headers and written
    in the last few seconds. Two processes that open a new workspace at once meet such a file, which reads as "not a
    valid DuckDB database file" for a moment; it is waited for like a lock, not reported as damage."""
    try:
        stat = path.stat()
    except OSError:
        return False
    return stat.st_size < _HEADER_BYTES and time.time() - stat.st_mtime < 5


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


def damaged(path: Path, err: BaseException) -> StoreDamagedError:
    """The one error for a store file DuckDB cannot read, with the fix."""
    detail = str(err).splitlines()[0] if str(err) else type(err).__name__
    msg = (
        f"{path}: the store is damaged ({detail}). Run `llmwiki restore` to load the latest snapshot "
        "(or rebuild from the files when none is usable); `llmwiki reindex` rebuilds from the files."
    )
    return StoreDamagedError(msg)


def _file_identity(path: Path) -> list:
    """What changes whenever the store file or its write-ahead log changes: (inode, size, mtime, CRC-32 of the bytes) of
    each. The checksum catches bytes changed in place with the size and time kept (bit rot, a copy over a live file);
    it reads the file once, at disk speed (8 ms for 19 MB), where DuckDB's check copies every table."""
    identity = []
    for candidate in (path, path.with_name(path.name + ".wal")):
        try:
            stat = candidate.stat()
            checksum = 0
            with candidate.open("rb") as handle:
                while block := handle.read(1 << 20):
                    checksum = zlib.crc32(block, checksum)
            identity.append([stat.st_ino, stat.st_size, stat.st_mtime_ns, checksum])
        except FileNotFoundError:
            identity.append(None)
    return identity


def _copy_database(conn: duckdb.DuckDBPyConnection, target: str) -> None:
    """Copy the connection's database into target (a quoted file path, or ':memory:'); a read that fails (a damaged
    block) leaves the connection usable: the aborted transaction is rolled back before the copy is detached."""
    name = conn.execute("SELECT current_database()").fetchone()[0]
    alias = _alias("llmwiki_copy")  # connections of one process share the database's catalog: each attach is named apart
    conn.execute(f"ATTACH {target} AS {alias}")
    try:
        conn.execute(f'COPY FROM DATABASE "{name}" TO {alias}')
    except duckdb.Error:
        try:
            conn.execute("ROLLBACK")
        except duckdb.Error:
            pass
        raise
    finally:
        try:
            conn.execute(f"DETACH {alias}")
        except duckdb.Error:
            pass


def _alias(prefix: str) -> str:
    """A name for an attached database that no other thread of this process uses at the same time."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


class DuckDBStore(Store):
    """A DuckDB database file, opened briefly for each operation."""

    dialect = DUCKDB
    supports_snapshots = True
    rebuilds_from_files = True
    searches_in_server = False
    _database_errors = (duckdb.Error,)
    _sessions = threading.local()  # per thread: store path -> the session's connection
    _open_transactions = threading.local()  # per thread: ids of connections inside BEGIN

    def __init__(self, path: Path | str, *, lock_timeout_s: float = 30.0, migrations: Sequence = MIGRATIONS) -> None:
        super().__init__(lock_timeout_s=lock_timeout_s, migrations=migrations)
        self.path = Path(path)
        self._memory: duckdb.DuckDBPyConnection | None = None
        if str(path) == MEMORY:
            self._memory = duckdb.connect(MEMORY, config=_CONNECT_CONFIG)
            self._ensure_migrated(self._memory)

    def __repr__(self) -> str:
        return f"DuckDBStore({str(self.path)!r})"

    @property
    def in_memory(self) -> bool:
        return self._memory is not None

    def exists(self) -> bool:
        """Whether the store file is there (a deleted store is re-created empty on the next write)."""
        return self.in_memory or self.path.is_file()

    def damaged(self, err: BaseException) -> StoreDamagedError:
        """The one error for a store DuckDB cannot read, with the fix; the stamp of its last sound check is dropped, so
        the next check (status, restore, any open) reads the whole file again and says the same."""
        self.path.with_name(self.path.name + ".checked").unlink(missing_ok=True)
        return damaged(self.path, err)

    def damage(self) -> str | None:
        """Why the store file cannot be used (the one error, with the fix), or None when it is sound.

        The one definition of "damaged" that status, open, restore and every journaled operation share: the whole
        database must copy into memory as a snapshot copies it (``copy_to``: every table, every row; DuckDB checks
        each block's checksum as it reads it, so zeroed, overwritten or missing blocks are caught where a snapshot or a
        journal copy would meet them; the file's length is no test, since DuckDB may leave free blocks at the end
        uncounted on disk). The full read is skipped while the file and its log are as they were at the last sound check (a
        stamp beside the store), so only the first open after a write pays for it.
        """
        if self.in_memory or not self.path.is_file():
            return None
        stamp_path = self.path.with_name(self.path.name + ".checked")
        stamp = json.dumps(_file_identity(self.path))
        try:
            if stamp_path.read_text(encoding="utf-8") == stamp:
                return None
        except OSError:
            pass
        try:
            with self.connect() as conn:
                _copy_database(conn, "':memory:'")
        except StoreDamagedError as err:
            return str(err)
        except duckdb.Error as err:
            if _is_damage(err):
                return str(self.damaged(err))
            raise
        try:
            stamp_path.write_text(json.dumps(_file_identity(self.path)), encoding="utf-8")
        except OSError:
            pass
        return None

    def _execute(self, conn, sql: str, parameters: Sequence | dict = ()):
        if not parameters:
            return super()._execute(conn, sql, parameters)
        with _pandas_known_absent():  # the one place the shared SQL is bound: every store method's statements
            return super()._execute(conn, sql, parameters)

    # -- connections ---------------------------------------------------------

    def _open(self) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.02
        while True:
            seen = _file_state(self.path)
            try:
                with _INSTANCE_LOCK:
                    conn = duckdb.connect(str(self.path), config=_CONNECT_CONFIG)
                conn.execute("PRAGMA disable_checkpoint_on_shutdown")
                return conn
            except (duckdb.SerializationException, duckdb.InternalException) as err:
                raise self.damaged(err) from err
            except duckdb.IOException as err:
                if _file_state(self.path) != seen and time.monotonic() < deadline:
                    continue  # the file changed while it was read (another process finished creating it): read it again
                creating = _being_created(self.path)
                if not _LOCK_MESSAGE.search(str(err)) and not creating:
                    if _is_damage(err) and self.path.is_file():
                        raise self.damaged(err) from err
                    msg = f"{self.path}: cannot open the store ({err}). Check the file's permissions and free disk space."
                    raise StoreError(msg) from err
                if creating and time.monotonic() >= deadline:
                    raise self.damaged(err) from err
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
        shared = DuckDBStore._sessions.__dict__.get(str(self.path))
        if shared is not None:
            yield shared
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():  # a new file (its inode may be a deleted one's): check its schema
            self._migrated_key = None
        conn = self._open()
        try:
            self._ensure_migrated(conn)
            yield conn
        except (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException) as err:
            if _is_damage(err):
                raise self.damaged(err) from err
            raise
        finally:
            with _INSTANCE_LOCK:
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
        if self._memory is not None or key in DuckDBStore._sessions.__dict__:
            yield
            return
        with self.connect() as conn:
            DuckDBStore._sessions.__dict__[key] = conn
            try:
                yield
            finally:
                del DuckDBStore._sessions.__dict__[key]

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection inside BEGIN/COMMIT; any exception rolls everything back.

        The store's own writes inside it run on its connection (a session for its length), so a caller
        grouping several writes (a withdrawal's cascade) makes them one; a transaction inside another joins it.
        """
        with self.session(), self.connect() as conn:
            if id(conn) in DuckDBStore._open_transactions.__dict__:
                yield conn
                return
            with self._atomic(conn):
                yield conn

    @contextmanager
    def _atomic(self, conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
        conn.execute("BEGIN TRANSACTION")
        DuckDBStore._open_transactions.__dict__[id(conn)] = True
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")
        finally:
            DuckDBStore._open_transactions.__dict__.pop(id(conn), None)

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (after a batch of writes)."""
        with self.connect() as conn:
            conn.execute("CHECKPOINT")

    # -- migrations ----------------------------------------------------------

    def _schema_key(self) -> object:
        if self._memory is not None:
            return "memory"
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_dev, stat.st_ino)

    @contextmanager
    def _migration_guard(self, conn) -> Iterator[None]:
        yield  # a process has the file to itself while it is open; threads wait on Store._migration_lock

    def _after_migrations(self, conn, applied: Sequence[str]) -> None:
        if "m002_search_index" in applied:  # a new store: its own lineage (PostingsReader.digest)
            _new_lineage(conn)
        if applied:  # schema changes go into the file now: DuckDB 1.5 fails to replay an ALTER TABLE from the WAL
            conn.execute("CHECKPOINT")

    def _analyzer_stopwords(self) -> Sequence[str]:
        return fts_english_stopwords()

    # -- what differs in the writes -------------------------------------------

    def _insert_content(self, conn, documents: ContentRows) -> None:
        page_columns: dict[str, list] = {"document_id": [], "page_number": [], "text": []}
        chunk_columns: dict[str, list] = {key: [] for key in ("document_id", "seq", "page_number", "start_offset", "end_offset", "token_count", "breadcrumb", "text")}
        for document_id, pages, chunks in documents:
            for page in pages:
                page_columns["document_id"].append(document_id)
                page_columns["page_number"].append(page.number)
                page_columns["text"].append(page.text)
            for seq, chunk in enumerate(chunks):
                for key, value in zip(chunk_columns, (document_id, seq, chunk.page_number, chunk.start, chunk.end, chunk.token_count, chunk.breadcrumb_text, chunk.text)):
                    chunk_columns[key].append(value)
        page_table = pa.table(page_columns, schema=pa.schema([("document_id", pa.int64()), ("page_number", pa.int32()), ("text", pa.string())]))  # noqa: F841
        chunk_table = pa.table(chunk_columns, schema=pa.schema(  # noqa: F841 - DuckDB reads it by name
            [("document_id", pa.int64()), ("seq", pa.int32()), ("page_number", pa.int32()), ("start_offset", pa.int32()), ("end_offset", pa.int32()),
             ("token_count", pa.int32()), ("breadcrumb", pa.string()), ("text", pa.string())]))
        conn.execute("INSERT INTO document_pages SELECT * FROM page_table")
        conn.execute(
            "INSERT INTO chunks (document_id, seq, page_number, start_offset, end_offset, token_count, breadcrumb, text) SELECT * FROM chunk_table"
        )

    def _index_postings(self, conn, chunk_filter: str, parameters: Sequence = ()) -> None:
        _write_postings(conn, chunk_filter, parameters)

    def _postings_deleted(self, conn, document_id: int) -> None:
        conn.execute("DELETE FROM chunk_terms WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = ?)", [document_id])

    def _search_changed(self, conn) -> None:
        _bump_generation(conn)

    def _postings_replaced(self, conn) -> None:
        _new_lineage(conn)

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
        """Recompute every posting from the chunks' text, in one transaction.

        Into a new table that then takes the old one's place: deleting millions of postings
        row by row cost more at commit than computing them again. In chunk order, so a scan for
        some chunks' postings (a delete, the postings after an id) skips the rest by min/max.
        """
        with self.transaction() as conn:
            # The table and its indexes as the migrations left them, read from the catalog rather than written twice.
            table = conn.execute("SELECT sql FROM duckdb_tables() WHERE table_name = 'chunk_terms'").fetchone()[0]
            indexes = [row[0] for row in conn.execute("SELECT sql FROM duckdb_indexes() WHERE table_name = 'chunk_terms'").fetchall()]
            conn.execute(table.replace("chunk_terms", "chunk_terms_rebuilt", 1))
            _write_postings(conn, "TRUE", table="chunk_terms_rebuilt")
            conn.execute("DROP TABLE chunk_terms")
            conn.execute("ALTER TABLE chunk_terms_rebuilt RENAME TO chunk_terms")
            for index in indexes:
                conn.execute(index)
            _new_lineage(conn)

    # -- whole-store copies (snapshots) and loads ------------------------------------

    @staticmethod
    def migrations_in(path: Path) -> list[str]:
        """The migrations recorded in another store file (a snapshot), read-only; StoreDamagedError if unreadable."""
        try:
            conn = duckdb.connect(str(path), read_only=True, config=_CONNECT_CONFIG)
        except duckdb.Error as err:
            raise damaged(path, err) from err
        try:
            return [row[0] for row in conn.execute("SELECT name FROM schema_migrations ORDER BY version").fetchall()]
        except duckdb.Error as err:
            raise damaged(path, err) from err
        finally:
            conn.close()

    def copy_to(self, target: Path) -> None:
        """A consistent copy of the whole store in a new database file (one transaction; readers may go on)."""
        with self.connect() as conn:
            _copy_database(conn, f"'{_quoted(target)}'")

    def load_from(self, path: Path) -> None:
        """Replace every table's rows with those of a copy (``copy_to``), in one transaction.

        The search generation moves forward, so every in-memory search index rebuilds.
        """
        with self.session(), self.connect() as conn:  # ATTACH outside the transaction, on the session's connection
            snapshot = _alias("llmwiki_snapshot")
            conn.execute(f"ATTACH '{_quoted(path)}' AS {snapshot} (READ_ONLY)")
            try:
                with self.transaction():
                    generation = conn.execute("SELECT value FROM search_state WHERE key = 'generation'").fetchone()[0]
                    for table in _tables(conn, leave=_KEPT_ON_LOAD):
                        conn.execute(f'DELETE FROM main."{table}"')
                        conn.execute(f'INSERT INTO main."{table}" BY NAME SELECT * FROM {snapshot}.main."{table}"')
                    _advance_sequences(conn)
                    conn.execute("UPDATE search_state SET value = greatest(value, ?) WHERE key = 'generation'", [generation])
                    _new_lineage(conn)  # every posting replaced, whatever the counts say; the generation moves past both histories
            except duckdb.Error as err:
                if _is_damage(err):
                    raise damaged(path, err) from err
                raise
            finally:
                conn.execute(f"DETACH {snapshot}")

    # -- search (the scoring itself lives in llmwiki.read.search) ----------------------

    @contextmanager
    def postings(self) -> Iterator[PostingsReader]:
        """The search postings and what a search shows, read on one connection (one consistent state)."""
        with self.connect() as conn:
            yield PostingsReader(conn)


class PostingsReader:
    """What ``llmwiki.read.search`` reads of a DuckDB store to keep its in-process copy of the postings."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self._conn = conn

    def digest(self) -> tuple[int, int, int, int, int, int]:
        """The searchable state in six numbers: (generation, chunks, max chunk id, postings, embeddings,
        lineage). The lineage mark is drawn when the store is created and again whenever every posting is
        replaced (``rebuild_search_index``, ``load_from``, ``clear``), which can leave the counts as they
        were: a copy of the postings from another lineage is loaded anew, never merged into. Within one
        lineage chunk ids only grow, so a copy from an earlier state can be brought up to date by merging.
        0: a store from before lineage marks (copies of it are used only at exactly its digest)."""
        return self._conn.execute(
            """
            SELECT (SELECT value FROM search_state WHERE key = 'generation'), count(*), coalesce(max(id), 0),
                   (SELECT count(*) FROM chunk_terms), (SELECT count(*) FROM chunk_embeddings),
                   coalesce((SELECT value FROM search_state WHERE key = 'lineage'), 0)
            FROM chunks
            """
        ).fetchone()

    def chunk_flags(self) -> pa.Table:
        """Every chunk's id with the flags a search filters on (searchable, is_wiki, stale), by id."""
        return self._conn.execute(
            """
            SELECT chunks.id, documents.status <> 'failed' AS searchable, documents.kind = 'wiki' AS is_wiki,
                   documents.stale_since IS NOT NULL AS stale
            FROM chunks JOIN documents ON documents.id = chunks.document_id
            ORDER BY chunks.id
            """
        ).to_arrow_table()

    def chunk_display(self, *, after_chunk_id: int, preview_chars: int) -> pa.Table:
        """Display fields of the chunks with an id above after_chunk_id, by id (the text cut, not normalised)."""
        return self._conn.execute(
            "SELECT document_id, page_number, breadcrumb, left(text, ?) AS preview FROM chunks WHERE id > ? ORDER BY id",
            [preview_chars + 1, after_chunk_id],
        ).to_arrow_table()

    def documents(self) -> dict[int, tuple[str, str | None]]:
        """Every document's id -> (path, title), for search hits."""
        return {row[0]: (row[1], row[2]) for row in self._conn.execute("SELECT id, path, title FROM documents").fetchall()}

    def postings(self, *, after_chunk_id: int = 0, by_term: bool = False) -> pa.Table:
        """Postings (chunk_id, term, tf) of the chunks with an id above after_chunk_id; sorted by term when by_term."""
        return self._conn.execute(
            f"SELECT chunk_id, term, tf FROM chunk_terms WHERE chunk_id > ?{' ORDER BY term' if by_term else ''}", [after_chunk_id]
        ).to_arrow_table()

    def embeddings(self, *, model: str, after_chunk_id: int = 0) -> tuple[list[int], list[list[float]]]:
        """(chunk ids, vectors) of the stored embeddings from model, chunk ids above after_chunk_id."""
        rows = self._conn.execute(
            "SELECT chunk_id, vector FROM chunk_embeddings WHERE model = ? AND chunk_id > ? ORDER BY chunk_id",
            [model, after_chunk_id],
        ).fetchall()
        return [row[0] for row in rows], [row[1] for row in rows]

    def stopwords(self) -> frozenset[str]:
        """The stopwords the index leaves out."""
        return frozenset(row[0] for row in self._conn.execute("SELECT word FROM search_stopwords").fetchall())

    def analyze(self, text: str) -> list[str]:
        """The distinct search terms of a text, through the index's SQL analyzer (for tests and checks)."""
        load_fts(self._conn)
        words = _WORDS_SQL.format(text="text")
        row = self._conn.execute(
            f"""
            SELECT list_transform(list_filter(words, word -> NOT list_contains(stopwords, word)), word -> stem(word, 'porter'))
            FROM (SELECT {words} AS words, (SELECT list(word) FROM search_stopwords) AS stopwords FROM (SELECT ?::VARCHAR AS text))
            """,
            [text],
        ).fetchone()
        return list(dict.fromkeys(row[0]))
