"""The store contract: every public operation of ``Store``, on both databases, with the same assertions.

Each test runs once on the embedded DuckDB store and once on a PostgreSQL database of the session's
throwaway server (skipped, saying why, where PostgreSQL is not installed; .ci/run installs it). What
only one kind of store can do (snapshots, the server's search) is tested in test_store.py,
test_recovery.py and test_postgres.py.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from llmwiki.errors import StoreConflictError
from llmwiki.records import Chunk, PageText
from llmwiki.store import CONTENT_TABLES, COPIED_TABLES, MIGRATIONS, Store, open_store


@pytest.fixture(params=["duckdb", "postgresql"])
def store(request, tmp_path) -> Store:
    if request.param == "duckdb":
        return open_store(path=tmp_path / "store.duckdb")
    return open_store(path=None, url=request.getfixturevalue("postgres_url"))


def _chunk(text: str, *, page: int = 1, breadcrumb: tuple[str, ...] = ()) -> Chunk:
    return Chunk(page_number=page, start=0, end=len(text), text=text, token_count=len(text.split()), breadcrumb=breadcrumb)


def _stored(store: Store, path: str, texts: list[str], *, kind: str = "source", title: str | None = None):
    handle = store.begin_document(path=path, kind=kind, size_bytes=10, mtime=1.0)
    return store.replace_content(handle.id, content_hash=f"hash of {path}", size_bytes=10, mtime=1.0, parser="md", title=title,
                                 pages=[PageText(1, " ".join(texts))], chunks=[_chunk(text, breadcrumb=("Top", "Part")) for text in texts])


@dataclass(frozen=True)
class _Score:
    """What save_verification reads of a sentence score (verify.page.SentenceScore's fields)."""

    sentence: str
    start: int = 0
    end: int = 10
    p_entailment: float = 0.9
    p_contradiction: float = 0.05
    excerpt: str | None = "An excerpt."
    excerpt_path: str | None = None
    excerpt_page: int | None = 1
    excerpt_chunk_id: int | None = None
    weakest_clause: str | None = None
    score: float | None = 0.8
    reason: str | None = None
    flagged: tuple[str, ...] = ()


def test_both_adapters_implement_the_whole_contract():
    from llmwiki.store.duckdb_store import DuckDBStore
    from llmwiki.store.postgres_store import PostgresStore

    for adapter in (DuckDBStore, PostgresStore):
        assert issubclass(adapter, Store) and not inspect.isabstract(adapter), adapter
        assert {adapter.supports_snapshots, adapter.searches_in_server} == {True, False}  # each has one of the two
    assert DuckDBStore.rebuilds_from_files and not PostgresStore.rebuilds_from_files

    class Partial(Store):  # the control: an adapter that leaves a hook out cannot be made
        pass

    assert inspect.isabstract(Partial)


def test_every_public_operation_is_exercised_here():
    """A new Store method without a contract test here fails this test."""
    source = Path(__file__).read_text(encoding="utf-8")
    operations = [name for name, member in inspect.getmembers(Store) if not name.startswith("_") and callable(member)]
    assert "save_verification" in operations and "documents" in operations  # control: the list is the contract's
    assert [name for name in operations if f".{name}(" not in source] == []


def test_migrations_are_recorded_by_name_and_a_second_open_applies_none(store):
    store.migrate()
    assert store.migration_names() == [migration.__name__ for migration in MIGRATIONS]
    assert store.exists()
    again = open_store(path=store.path, url=store.path if store.searches_in_server else None)
    again.migrate()
    assert again.migration_names() == store.migration_names()


def test_documents_are_claimed_filled_and_read_back(store):
    handle = store.begin_document(path="sources/otters.md", kind="source", size_bytes=12, mtime=3.0)
    assert (handle.status, handle.version, handle.title) == ("processing", 0, None)
    again = store.begin_document(path="sources/otters.md", kind="source", size_bytes=12, mtime=3.0)
    assert again.id == handle.id  # the same row is claimed again, not a second one
    document = store.replace_content(handle.id, content_hash="h1", size_bytes=12, mtime=3.0, parser="md", title="Otters",
                                     pages=[PageText(1, "Sea otters eat urchins."), PageText(2, "They use stones.")],
                                     chunks=[_chunk("Sea otters eat urchins.", breadcrumb=("Otters", "Food")), _chunk("They use stones.", page=2)])
    assert (document.status, document.version, document.title, document.content_hash) == ("ready", 1, "Otters", "h1")
    assert isinstance(document.updated_at, datetime) and document.updated_at >= document.created_at
    assert store.document_by_path("sources/otters.md") == document
    assert store.document_by_path("sources/none.md") is None
    assert [page.text for page in store.pages(document.id)] == ["Sea otters eat urchins.", "They use stones."]
    chunks = store.chunks(document.id)
    assert [(chunk.text, chunk.page_number, chunk.breadcrumb) for chunk in chunks] == [
        ("Sea otters eat urchins.", 1, ("Otters", "Food")), ("They use stones.", 2, ())]
    assert store.chunk_texts([chunks[1].id, 999_999]) == {chunks[1].id: "They use stones."}
    assert store.chunk_texts([]) == {}
    assert store.citation_targets([chunks[0].id]) == {chunks[0].id: ("sources/otters.md", 1, "Otters > Food")}
    assert store.citation_targets([]) == {}
    store.mark_ready_unchanged(document.id, mtime=9.0)
    assert store.document_by_path("sources/otters.md").mtime == 9.0


def test_listings_counts_and_summaries(store):
    source = _stored(store, "sources/kelp.md", ["Kelp grows fast.", "Urchins graze on kelp."], title="Kelp")
    page = _stored(store, "wiki/summaries/kelp.md", ["Kelp grows fast [c1]."], kind="wiki", title="Kelp")
    empty = store.begin_document(path="sources/empty.md", kind="source", size_bytes=0, mtime=0.0)
    store.fail_document(empty.id, "no text. Add text to the file.")
    assert [document.path for document in store.documents()] == ["sources/empty.md", "sources/kelp.md", "wiki/summaries/kelp.md"]
    assert [document.path for document in store.documents(kind="wiki")] == ["wiki/summaries/kelp.md"]
    assert store.document_by_path("sources/empty.md").status == "failed"
    assert [(count.kind, count.status, count.document_count) for count in store.status_counts()] == [
        ("source", "failed", 1), ("source", "ready", 1), ("wiki", "ready", 1)]
    assert store.totals() == {"documents": 3, "pages": 2, "chunks": 3, "tokens": 3 + 4 + 4}
    store.set_page_references(page.id, cites=[source.id], links_to=[], derived_from=source.id)
    assert [(document.path, summary) for document, summary in store.source_summaries()] == [("sources/kelp.md", "wiki/summaries/kelp.md")]
    counts = store.row_counts()
    assert set(counts) == set(COPIED_TABLES) and counts["documents"] == 3 and counts["chunks"] == 3 and counts["doc_references"] == 1


def test_a_stale_mark_holds_its_reason_until_the_page_is_rewritten(store):
    page = _stored(store, "wiki/concepts/kelp.md", ["Kelp is a seaweed."], kind="wiki")
    assert store.stale_reason(page.id) is None
    store.mark_stale(page.id, "rests on sources/kelp.md, withdrawn")
    assert store.stale_reason(page.id) == "rests on sources/kelp.md, withdrawn"
    assert store.document_by_path("wiki/concepts/kelp.md").stale_since is not None


def test_references_are_replaced_each_once_and_skip_withdrawn_targets(store):
    kelp = _stored(store, "sources/kelp.md", ["Kelp grows fast."])
    otters = _stored(store, "sources/otters.md", ["Otters eat urchins."])
    page = _stored(store, "wiki/concepts/kelp.md", ["Kelp grows fast."], kind="wiki")
    other = _stored(store, "wiki/concepts/otters.md", ["Otters eat urchins."], kind="wiki")
    store.set_page_references(page.id, cites=[kelp.id, kelp.id, otters.id], links_to=[other.id, page.id], derived_from=None)
    assert store.references(page.id) == [("cites", "sources/kelp.md"), ("cites", "sources/otters.md"), ("links_to", "wiki/concepts/otters.md")]
    assert store.remove_document("sources/otters.md") and not store.remove_document("sources/otters.md")
    assert store.references(page.id) == [("cites", "sources/kelp.md"), ("links_to", "wiki/concepts/otters.md")]  # the edge went with it
    store.set_page_references(page.id, cites=[kelp.id, otters.id], links_to=[], derived_from=kelp.id)  # otters is gone meanwhile
    assert store.references(page.id) == [("cites", "sources/kelp.md")]
    assert store.document_by_path("wiki/concepts/kelp.md").derived_from == kelp.id


def test_a_content_write_based_on_another_version_or_to_a_gone_document_is_refused(store):
    page = _stored(store, "wiki/a.md", ["First version."], kind="wiki")
    with pytest.raises(StoreConflictError, match="changed by someone else"):
        store.replace_content(page.id, content_hash="2", size_bytes=1, mtime=0.0, parser="md", title=None,
                              pages=[PageText(1, "Second.")], chunks=[_chunk("Second.")], expected_version=page.version - 1)
    assert [chunk.text for chunk in store.chunks(page.id)] == ["First version."]  # nothing was written
    written = store.replace_content(page.id, content_hash="2", size_bytes=1, mtime=0.0, parser="md", title=None,  # control
                                    pages=[PageText(1, "Second.")], chunks=[_chunk("Second.")], expected_version=page.version)
    assert written.version == page.version + 1 and [chunk.text for chunk in store.chunks(page.id)] == ["Second."]
    store.remove_document("wiki/a.md")
    with pytest.raises(StoreConflictError, match="is gone"):
        store.replace_content(page.id, content_hash="3", size_bytes=1, mtime=0.0, parser="md", title=None, pages=[], chunks=[])


def test_a_failed_write_leaves_the_document_as_it_was(store):
    page = _stored(store, "sources/a.md", ["old text"])
    broken = Chunk(page_number=1, start=0, end=3, text=None, token_count=1)  # violates NOT NULL
    with pytest.raises(Exception):
        store.replace_content(page.id, content_hash="new", size_bytes=3, mtime=2.0, parser="p", title="A",
                              pages=[PageText(1, "new text")], chunks=[_chunk("new text"), broken])
    assert [chunk.text for chunk in store.chunks(page.id)] == ["old text"]
    assert store.document_by_path("sources/a.md").content_hash == "hash of sources/a.md"


def test_text_with_a_nul_byte_is_stored_and_read_back_readable(store):
    document = _stored(store, "sources/nul.md", ["Before\x00after the NUL."])
    text = store.chunks(document.id)[0].text
    assert text.startswith("Before") and text.endswith("after the NUL.") and len(text) == len("Before\x00after the NUL.")


def test_a_verification_replaces_the_previous_one_and_a_gone_page_gets_none(store):
    source = _stored(store, "sources/kelp.md", ["Kelp grows fast."])
    page = _stored(store, "wiki/concepts/kelp.md", ["Kelp grows fast."], kind="wiki")
    chunk_id = store.chunks(source.id)[0].id
    first = store.save_verification(page.id, body_hash="b1", source_hashes="{}", model="m", threshold=0.5, started_at=datetime.now(),
                                    scores=[_Score("Kelp grows fast.", excerpt_path="sources/kelp.md", excerpt_chunk_id=chunk_id, flagged=("fast",))])
    second = store.save_verification(page.id, body_hash="b2", source_hashes=json.dumps({"sources/kelp.md": "h"}), model="m", threshold=0.6,
                                     started_at=datetime.now(), scores=[_Score("Kelp grows fast.", excerpt_path="sources/kelp.md"), _Score("Kelp is red.", score=0.1, reason="not said")],
                                     method="clauses")
    assert second != first
    header, sentences = store.latest_verification(page.id)
    assert (header["id"], header["body_hash"], header["threshold"], header["method"]) == (second, "b2", 0.6, "clauses")
    assert header["finished_at"] is not None
    assert [(row["sentence"], row["excerpt_path"], row["score"], row["reason"], row["flagged"]) for row in sentences] == [
        ("Kelp grows fast.", "sources/kelp.md", 0.8, None, ()), ("Kelp is red.", None, 0.1, "not said", ())]
    assert store.row_counts()["page_verifications"] == 1  # replaced, not added
    store.save_verification(page.id, body_hash="b3", source_hashes="{}", model="m", threshold=0.5, started_at=datetime.now(), scores=[])
    assert store.latest_verification(page.id)[1] == []
    assert store.latest_verification(source.id) is None
    everything = store.latest_verifications()  # every page's latest at once: the same as asked page by page
    assert set(everything) == {"wiki/concepts/kelp.md"} and everything["wiki/concepts/kelp.md"] == store.latest_verification(page.id)
    store.remove_document("wiki/concepts/kelp.md")
    assert store.latest_verification(page.id) is None  # it went with the page
    with pytest.raises(StoreConflictError, match="is gone"):
        store.save_verification(page.id, body_hash="b4", source_hashes="{}", model="m", threshold=0.5, started_at=datetime.now(), scores=[_Score("x")])
    assert store.row_counts()["page_verifications"] == 0  # nothing stored for the page that is gone


def test_many_documents_are_swapped_in_at_once_with_what_their_extractor_read(store):
    from llmwiki.store.contract import ContentSwap

    handles = [store.begin_document(path=f"sources/{name}.md", kind="source", size_bytes=10, mtime=1.0) for name in ("kelp", "otter")]
    report = json.dumps({"extractor": "markdown 2", "sentences": 1})
    documents = store.replace_contents([
        ContentSwap(handles[0].id, "h-kelp", 10, 1.0, "markdown 2 (utf-8)", "Kelp", [PageText(1, "Kelp grows fast.")], [_chunk("Kelp grows fast.")], report),
        ContentSwap(handles[1].id, "h-otter", 10, 1.0, "markdown 2 (utf-8)", "Otter", [PageText(1, "Otters eat urchins.")], [_chunk("Otters eat urchins.")]),
    ])
    assert [(document.path, document.status, document.version) for document in documents] == [("sources/kelp.md", "ready", 1), ("sources/otter.md", "ready", 1)]
    assert [chunk.text for chunk in store.chunks(handles[1].id)] == ["Otters eat urchins."]
    assert store.extraction_reports() == {"sources/kelp.md": {"extractor": "markdown 2", "sentences": 1}}  # the otter gave none
    assert store.replace_contents([]) == []  # the control: nothing to swap, nothing done


def test_a_rewritten_page_loses_its_verification(store):
    page = _stored(store, "wiki/a.md", ["One."], kind="wiki")
    store.save_verification(page.id, body_hash="b", source_hashes="{}", model="m", threshold=0.5, started_at=datetime.now(), scores=[_Score("One.")])
    assert store.latest_verification(page.id) is not None  # control
    store.replace_content(page.id, content_hash="2", size_bytes=1, mtime=0.0, parser="md", title=None, pages=[PageText(1, "Two.")], chunks=[_chunk("Two.")])
    assert store.latest_verification(page.id) is None


def test_embeddings_are_written_replaced_and_listed_as_missing(store):
    document = _stored(store, "sources/a.md", ["Alpha text.", "Beta text."])
    first, second = (chunk.id for chunk in store.chunks(document.id))
    assert store.chunks_missing_embeddings("probe") == [(first, "Alpha text."), (second, "Beta text.")]
    store.write_embeddings("probe", [first, 999_999], [[1.0, 0.0], [0.0, 1.0]])  # a chunk that is gone is left out
    assert store.chunks_missing_embeddings("probe") == [(second, "Beta text.")]
    assert store.chunks_missing_embeddings("other model") == [(first, "Alpha text."), (second, "Beta text.")]
    store.write_embeddings("probe", [first], [[0.5, 0.5]])
    assert store.row_counts()["chunk_embeddings"] == 1  # replaced
    columns, rows = store.table_rows("chunk_embeddings")
    assert columns[:2] == ["chunk_id", "model"]
    [(chunk_id, model, vector)] = [row[:3] for row in rows]
    assert (chunk_id, model, [round(value, 6) for value in vector]) == (first, "probe", [0.5, 0.5])
    store.remove_document("sources/a.md")
    assert store.row_counts()["chunk_embeddings"] == 0  # they went with the chunks
    with pytest.raises(ValueError):
        store.table_rows("schema_migrations")


def test_bulk_load_rebuild_and_clear(store):
    store.bulk_load([("sources/a.md", "source", "ha", [PageText(1, "Alpha.")], [_chunk("Alpha one."), _chunk("Alpha two.")]),
                     ("wiki/b.md", "wiki", "hb", [PageText(1, "Beta.")], [_chunk("Beta.")])])
    assert store.totals()["chunks"] == 3 and store.document_by_path("wiki/b.md").kind == "wiki"
    assert [chunk.text for chunk in store.chunks(store.document_by_path("sources/a.md").id)] == ["Alpha one.", "Alpha two."]
    store.rebuild_search_index()
    store.checkpoint()
    assert store.totals()["chunks"] == 3  # a rebuild of the postings keeps every chunk
    with store.session(), store.transaction():  # several writes as one, inside one session
        store.mark_stale(store.document_by_path("wiki/b.md").id, "grouped")
    assert store.stale_reason(store.document_by_path("wiki/b.md").id) == "grouped"
    store.clear()
    assert {table: count for table, count in store.row_counts().items() if table in CONTENT_TABLES} == dict.fromkeys(CONTENT_TABLES, 0)
    assert store.migration_names() == [migration.__name__ for migration in MIGRATIONS]  # the schema stays


def test_a_transaction_rolls_back_every_write_in_it(store):
    _stored(store, "sources/a.md", ["Alpha."])
    with pytest.raises(RuntimeError), store.transaction():
        store.remove_document("sources/a.md")
        raise RuntimeError("undo")
    assert store.document_by_path("sources/a.md") is not None


def test_a_session_holds_one_connection_for_its_steps(store):
    with store.session():
        with store.connect() as first, store.connect() as second:
            assert first is second
    with store.connect() as first, store.connect() as second:  # the control: outside a session, each step has its own
        assert first is not second


def _decision(seq: int, verdict: str, **extra) -> dict:
    return {"seq": seq, "sentence": f"Sentence {seq}.", "evidence": "An excerpt.", "evidence_chunk_id": None, "verdict": verdict,
            "note": None, "reviewer": "ana", "model_score": 0.4, "features": (0.4, 0.1, 0.0, 0.0, 0.0, 0.0, 0.9), **extra}


def test_verdicts_are_kept_by_page_and_a_decision_on_an_unseen_verdict_is_refused(store):
    page = _stored(store, "wiki/concepts/kelp.md", ["Kelp grows fast."], kind="wiki")
    [first] = store.record_verdicts(page.path, [_decision(0, "accept")], seen={0: None})
    [verdict] = store.verdicts(page.path)
    assert (verdict.id, verdict.verdict, verdict.reviewer, verdict.features[-1], verdict.evidence) == (first, "accept", "ana", 0.9, "An excerpt.")
    with pytest.raises(StoreConflictError, match="just decided by ana"):  # bo had not seen ana's verdict
        store.record_verdicts(page.path, [_decision(0, "reject", reviewer="bo", note="wrong year")], seen={0: None})
    assert len(store.verdicts(page.path)) == 1  # nothing was written
    store.record_verdicts(page.path, [_decision(0, "reject", reviewer="bo", note="wrong year\x00"), _decision(1, "accept")], seen={0: first, 1: None})
    latest = store.verdicts(page.path)
    assert [(row.seq, row.verdict, row.reviewer) for row in latest] == [(0, "accept", "ana"), (0, "reject", "bo"), (1, "accept", "ana")]
    assert latest[1].note.startswith("wrong year")
    assert store.verdicts("wiki/other.md") == [] and len(store.verdicts()) == 3
    store.replace_content(page.id, content_hash="2", size_bytes=1, mtime=0.0, parser="md", title=None, pages=[PageText(1, "Two.")], chunks=[_chunk("Two.")])
    store.clear()
    assert len(store.verdicts(page.path)) == 3  # a re-index or a rebuild from the files keeps what reviewers decided


def test_contested_claims_are_recorded_once_and_resolved_once(store):
    contest_id, new = store.save_contest(key="k1", page_a="wiki/a.md", sentence_a="Kelp is red.", source_a="sources/a.md",
                                         page_b="wiki/b.md", sentence_b="Kelp is green.", source_b="sources/b.md", score=0.8)
    again, new_again = store.save_contest(key="k1", page_a="wiki/a.md", sentence_a="Kelp is red.", source_a="sources/a.md",
                                          page_b="wiki/b.md", sentence_b="Kelp is green.", source_b="sources/b.md", score=0.9)
    assert new and not new_again and again == contest_id
    [open_one] = store.contests(status="open")
    assert (open_one.score, open_one.page_b, open_one.status) == (0.9, "wiki/b.md", "open")
    assert store.contests(page_path="wiki/b.md") == [open_one] and store.contests(page_path="wiki/c.md") == []
    resolved = store.resolve_contest(contest_id, status="kept_a", note="b misread", reviewer="ana")
    assert (resolved.status, resolved.reviewer, resolved.note) == ("kept_a", "ana", "b misread") and resolved.resolved_at is not None
    assert store.contests(status="open") == []
    with pytest.raises(StoreConflictError, match="resolved already by ana"):
        store.resolve_contest(contest_id, status="both", note=None, reviewer="bo")
    with pytest.raises(StoreConflictError, match="does not exist"):
        store.resolve_contest(999, status="both", note=None, reviewer="bo")
    store.save_contest(key="k1", page_a="wiki/a.md", sentence_a="Kelp is red.", source_a=None, page_b="wiki/b.md", sentence_b="Kelp is green.",
                       source_b=None, score=0.9)
    assert store.contests()[0].status == "kept_a"  # found again by a later lint: it stays resolved


def test_rechecked_sentences_are_recorded_in_order(store):
    store.record_rechecks([])  # nothing to record: nothing happens
    store.record_rechecks([{"page_path": "wiki/a.md", "seq": 1, "sentence": "Kelp is red.", "source": "sources/a.md", "was_supported": True, "now_supported": False},
                           {"page_path": "wiki/b.md", "seq": 0, "sentence": "Kelp is green.", "source": "sources/a.md", "was_supported": False, "now_supported": True}])
    assert [(row.page_path, row.seq, row.was_supported, row.now_supported) for row in store.rechecks()] == [("wiki/a.md", 1, True, False), ("wiki/b.md", 0, False, True)]
    assert [row.sentence for row in store.rechecks("wiki/b.md")] == ["Kelp is green."]
    store.clear()
    assert len(store.rechecks()) == 2  # kept through a rebuild, with the verdicts
