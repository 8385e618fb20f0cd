from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from llmwiki.errors import StoreLockedError
from llmwiki.records import Chunk, PageText
from llmwiki.store import MIGRATIONS
from llmwiki.store.duckdb_store import DuckDBStore as Store


def test_migrations_are_recorded_and_applied_once(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    with store.connect() as conn:
        recorded = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        tables = {row[0] for row in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert recorded == [(index, migration.__name__) for index, migration in enumerate(MIGRATIONS, start=1)]
    assert {"documents", "document_pages", "chunks", "doc_references", "page_verifications", "verification_sentences"} <= tables
    with Store(tmp_path / "s.duckdb").connect() as conn:  # as if a new process opened the same file
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)


def test_a_store_from_before_migration_4_upgrades_and_keeps_its_verifications(tmp_path):
    path = tmp_path / "s.duckdb"
    with Store(path, migrations=MIGRATIONS[:3]).connect() as conn:  # a store written by the previous release
        conn.execute("INSERT INTO page_verifications (page_id, body_hash, source_hashes, model, threshold, started_at) VALUES (1, 'h', '{}', 'm', 0.5, now())")
        verification = conn.execute("SELECT max(id) FROM page_verifications").fetchone()[0]
        conn.execute("INSERT INTO verification_sentences VALUES (?, 0, 'A sentence.', 0, 11, 0.9, 0.1, 'An excerpt.', NULL, 1, NULL)", [verification])
    upgraded = Store(path).latest_verification(1)  # the new release opens it
    assert upgraded is not None and upgraded[0]["method"] == "sentence" and upgraded[1][0]["weakest_clause"] is None
    assert upgraded[1][0]["p_entailment"] == 0.9
    # and again in a later process: the ALTERs are in the file, not left in the WAL to replay
    assert Store(path).latest_verification(1)[0]["method"] == "sentence"


def test_a_store_from_before_migration_6_loses_the_postings_index_and_keeps_every_posting(tmp_path):
    def postings_indexes(conn):
        return [row[0] for row in conn.execute("SELECT index_name FROM duckdb_indexes() WHERE table_name = 'chunk_terms'").fetchall()]

    path = tmp_path / "s.duckdb"
    old = Store(path, migrations=MIGRATIONS[:5])
    with old.connect() as conn:  # today's writer also stores what the extractor read (migration 8): a column for it, for now
        conn.execute("ALTER TABLE documents ADD COLUMN extraction TEXT")
        conn.execute("CHECKPOINT")  # DuckDB 1.5 cannot replay an ALTER of this table from its WAL
    for name in ("otters", "kelp"):
        handle = old.begin_document(path=f"sources/{name}.md", kind="source", size_bytes=10, mtime=0.0)
        text = f"{name.title()} live along the coast. Sea {name} are common."
        old.replace_content(handle.id, content_hash=name, size_bytes=len(text), mtime=0.0, parser="md", title=None,
                            pages=[PageText(1, text)], chunks=[Chunk(page_number=1, start=0, end=len(text), text=text, token_count=8)])
    with old.connect() as conn:
        assert postings_indexes(conn) == ["chunk_terms_chunk"]  # control: the previous release had it
        before = conn.execute("SELECT chunk_id, term, tf FROM chunk_terms ORDER BY ALL").fetchall()
        conn.execute("ALTER TABLE documents DROP COLUMN extraction")  # the store as the release of migration 5 left it
        conn.execute("CHECKPOINT")
    upgraded = Store(path)
    with upgraded.connect() as conn:
        assert postings_indexes(conn) == []
        assert conn.execute("SELECT chunk_id, term, tf FROM chunk_terms ORDER BY ALL").fetchall() == before
    assert upgraded.remove_document("sources/kelp.md")  # a delete of some chunks' postings without the index
    upgraded.rebuild_search_index()
    with upgraded.connect() as conn:
        after = conn.execute("SELECT chunk_id, term, tf FROM chunk_terms").fetchall()
        assert sorted(after) == sorted(row for row in before if row[0] in {chunk_id for chunk_id, _, _ in after})
        assert {term for _, term, _ in after} >= {"otter", "coast"} and "kelp" not in {term for _, term, _ in after}
        assert [row[0] for row in after] == sorted(row[0] for row in after)  # a rebuild writes postings in chunk order
        assert postings_indexes(conn) == []  # and does not bring the index back


def _hold_lock_script(path, seconds: float) -> str:
    return textwrap.dedent(
        f"""
        import duckdb, sys, time
        conn = duckdb.connect({str(path)!r})
        print("locked", flush=True)
        time.sleep({seconds})
        conn.close()
        """
    )


def _start_holder(path, seconds):
    holder = subprocess.Popen([sys.executable, "-c", _hold_lock_script(path, seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    return holder


@pytest.mark.slow
def test_a_second_process_waits_for_the_lock_instead_of_crashing(tmp_path):
    path = tmp_path / "s.duckdb"
    Store(path).documents()  # create and migrate
    holder = _start_holder(path, 1.5)
    started = time.monotonic()
    try:
        documents = Store(path, lock_timeout_s=30).documents()
    finally:
        holder.wait()
    assert documents == []
    assert time.monotonic() - started > 0.5  # it really waited for the other process


@pytest.mark.slow
def test_lock_held_past_the_timeout_gives_a_clear_error(tmp_path):
    path = tmp_path / "s.duckdb"
    Store(path).documents()
    holder = _start_holder(path, 3)
    try:
        with pytest.raises(StoreLockedError, match="lock_timeout_s"):
            Store(path, lock_timeout_s=0.3).documents()
    finally:
        holder.wait()
    assert Store(path, lock_timeout_s=0.3).documents() == []  # control: free again, it opens


def _chunk(text: str) -> Chunk:
    return Chunk(page_number=1, start=0, end=len(text), text=text, token_count=len(text.split()))


def test_replace_content_is_all_or_nothing(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    document = store.begin_document(path="sources/a.md", kind="source", size_bytes=3, mtime=1.0)
    store.replace_content(document.id, content_hash="h1", size_bytes=3, mtime=1.0, parser="p", title="A",
                          pages=[PageText(1, "old text")], chunks=[_chunk("old text")])
    broken = Chunk(page_number=1, start=0, end=3, text=None, token_count=1)  # violates NOT NULL
    with pytest.raises(Exception):
        store.replace_content(document.id, content_hash="h2", size_bytes=3, mtime=2.0, parser="p", title="A",
                              pages=[PageText(1, "new text")], chunks=[_chunk("new text"), broken])
    assert [chunk.text for chunk in store.chunks(document.id)] == ["old text"]
    after = store.document_by_path("sources/a.md")
    assert (after.content_hash, after.version) == ("h1", 1)
    # Control: the same call with valid chunks goes through.
    store.replace_content(document.id, content_hash="h2", size_bytes=3, mtime=2.0, parser="p", title="A",
                          pages=[PageText(1, "new text")], chunks=[_chunk("new text")])
    assert [chunk.text for chunk in store.chunks(document.id)] == ["new text"]
    assert store.document_by_path("sources/a.md").version == 2


def test_parameterised_reads_do_not_search_for_a_pandas_that_is_not_installed(tmp_path, monkeypatch):
    """DuckDB's client looks for pandas on every bound parameter; where it is absent the store says so for the
    statement's length, so the import system is not searched hundreds of times a page, and leaves no trace."""
    import importlib.util

    from llmwiki.store import duckdb_store

    if importlib.util.find_spec("pandas") is not None:
        pytest.skip("pandas is installed here: DuckDB finds it and nothing is searched for")
    store = Store(tmp_path / "store.duckdb")
    store.begin_document(path="sources/a.md", kind="source", size_bytes=3, mtime=1.0)
    probes = []

    class Finder:
        def find_spec(self, name, path=None, target=None):
            if name == "pandas":
                probes.append(name)
            return None

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    assert store.document_by_path("sources/a.md") is not None  # a statement with a parameter
    assert probes == [] and "pandas" not in sys.modules  # nothing searched, and no entry left behind
    with store.connect() as conn:  # control: the same statement straight through DuckDB searches for pandas
        conn.execute("SELECT id FROM documents WHERE path = ?", ["sources/a.md"]).fetchone()
    assert probes
    monkeypatch.setattr(duckdb_store, "_PANDAS_INSTALLED", True)  # where pandas is installed, the guard steps aside
    probes.clear()
    store.document_by_path("sources/a.md")
    assert probes


def test_threads_opening_one_store_file_at_once_all_get_their_connection(tmp_path):
    """Two sessions of a served notebook open the store on their own threads at the same moment: DuckDB's one instance per
    file is made and dropped under a lock, not raced for ("Unique file handle conflict")."""
    import threading

    store = Store(tmp_path / "store.duckdb")
    store.migrate()
    problems: list[str] = []
    counts: list[int] = []

    def work() -> None:
        try:
            for _ in range(25):
                with store.session():
                    counts.append(len(store.documents()))
                store.damage()
        except Exception as err:  # noqa: BLE001 (any failure of a thread is the finding)
            problems.append(f"{type(err).__name__}: {err}")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == []
    assert len(counts) == 100  # the control: every thread's every session ran
