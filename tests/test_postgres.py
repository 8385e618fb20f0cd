"""What only the PostgreSQL store has: a server shared by processes and workspaces, search in the
server, the move of an existing workspace's store, and credentials kept out of the workspace.

The tests of search, ingest, answers, verification, withdrawal and selection run on both stores
(conftest.BOTH_STORES); these add the concurrency and the comparisons between the two.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conftest import KELP, VOLTA, point_at, services_for
from llmwiki.config import load_config, set_store_url
from llmwiki.errors import ConfigError, StoreConflictError
from llmwiki.records import Chunk, PageText
from llmwiki.read.search import search
from llmwiki.publish.wiki import ingest_paths
from llmwiki.workspace import Workspace

DOCS = {
    "kelp.md": KELP,
    "volta.md": VOLTA,
    "otters.md": "# Otters\n\nSea otters eat urchins, which protects the kelp. Otters use stones as tools.\n",
    "figures.md": "# Figures\n\nThe survey counted 1,234 urchins in 1800 at site t1 near Angoulême.\n",
}
QUERIES = [
    "kelp forest", "otters kelp", "kelp volta", "what did I say?", "narwhal", "1,234", "Angoulême", "urchins tools",
    "\"Kelp Forest\"", "-", "otters OR volta", "zinc copper discs pile",
    " ".join(f"unknown{number}" for number in range(40)) + " otters kelp urchins",  # past postgres_store._FEW_TERMS: places by a join
]


def _two_workspaces(tmp_path, url):
    made = {}
    for kind in ("duckdb", "postgresql"):
        root = tmp_path / kind
        Workspace.init(root)
        if kind == "postgresql":
            point_at(root, url)
        workspace = Workspace.open(root)
        for name, text in DOCS.items():
            (workspace.sources_dir / name).write_text(text, encoding="utf-8")
        ingest_paths(workspace)
        made[kind] = workspace
    return made


def test_search_reports_the_same_honest_cases_on_both_stores(tmp_path, postgres_url):
    both = _two_workspaces(tmp_path, postgres_url)
    assert type(both["postgresql"].store).__name__ == "PostgresStore"  # control: the second really is on the server
    for query in QUERIES:
        for scope in ("all", "sources", "wiki"):
            duck, server = (search(both[kind], query, scope=scope) for kind in ("duckdb", "postgresql"))
            assert (server.case, server.total_count, len(server.terms)) == (duck.case, duck.total_count, len(duck.terms)), (query, scope)
            assert server.matched_count == duck.matched_count, (query, scope, server.readout, duck.readout)
            assert server.widened == duck.widened, (query, scope)
            assert {hit.path for hit in server.hits} == {hit.path for hit in duck.hits}, (query, scope)


def test_a_long_question_ranks_as_its_known_terms_do(tmp_path, postgres_url):
    from llmwiki.store.postgres_store import _FEW_TERMS

    workspace = _two_workspaces(tmp_path, postgres_url)["postgresql"]
    known = "otters kelp urchins"
    long = " ".join(f"unknown{number}" for number in range(_FEW_TERMS + 8)) + " " + known  # places found by a join, not array_position
    short_result, long_result = (search(workspace, text, mode="any") for text in (known, long))
    assert len(long_result.terms) > _FEW_TERMS and short_result.hits
    # words no chunk holds have no postings: every chunk scores as for the known terms alone
    assert [(hit.path, round(hit.score, 9)) for hit in long_result.hits] == [(hit.path, round(hit.score, 9)) for hit in short_result.hits]


def test_a_write_is_seen_by_the_next_search_and_a_failed_document_is_not(tmp_path, postgres_url, count_tokens):
    from llmwiki.ingest.sources import ingest_file

    workspace = _two_workspaces(tmp_path, postgres_url)["postgresql"]
    assert search(workspace, "narwhal").case == "no_match"
    path = workspace.sources_dir / "narwhal.md"
    path.write_text("# Narwhal\n\nThe narwhal has a long tusk.\n", encoding="utf-8")
    ingest_file(workspace, path, count_tokens=count_tokens)
    assert [hit.path for hit in search(workspace, "narwhal").hits] == ["sources/narwhal.md"]
    path.write_bytes(b"\x00\x01\x02\x03" * 1000)
    assert ingest_file(workspace, path, count_tokens=count_tokens).action == "failed"
    assert search(workspace, "narwhal").case == "no_match"  # the failed document's old chunks are not offered
    assert search(workspace, "kelp").case == "matched"  # control


def test_term_counts_off_the_postings_equal_matching_every_chunk(tmp_path, postgres_url, count_tokens):
    from llmwiki.ingest.sources import ingest_file

    workspace = _two_workspaces(tmp_path, postgres_url)["postgresql"]
    store = workspace.store
    path = workspace.sources_dir / "more.md"
    path.write_text("# More\n\nOtters and kelp again, at t1 in 1800.\n", encoding="utf-8")
    ingest_file(workspace, path, count_tokens=count_tokens)
    path.write_bytes(b"\x00\x01\x02\x03" * 1000)
    assert ingest_file(workspace, path, count_tokens=count_tokens).action == "failed"  # its chunks stay, unsearchable
    words = ["otters", "kelp", "the", "1234", "t1", "1800", "angoulême", "narwhal", "urchins", "tools"]

    def by_matching(word):  # what the counts were: every searchable chunk's tsvector matched
        with store.connect() as conn:
            return conn.execute(
                "SELECT CASE WHEN numnode(plainto_tsquery('english', %(w)s)) = 0 THEN NULL ELSE (SELECT count(*) FROM chunks c "
                "JOIN documents d ON d.id = c.document_id WHERE d.status <> 'failed' AND c.tsv @@ plainto_tsquery('english', %(w)s)) END",
                {"w": word},
            ).fetchone()[0]

    counts = store.term_document_counts(words)
    assert counts == {word: by_matching(word) for word in words}
    assert counts["the"] is None and counts["narwhal"] == 0 and counts["otters"] >= 1 and counts["1234"] >= 1  # controls
    assert store.lexeme_document_counts(["otter", "kelp", "zzz"]) == {"otter": by_matching("otters"), "kelp": by_matching("kelp")}


def test_a_store_url_with_a_port_out_of_range_is_refused_when_read(tmp_path):
    config = tmp_path / "wiki_config.toml"
    config.write_text('[store]\nurl = "postgresql://127.0.0.1:99999/x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="port is not a number from 1 to 65535"):
        load_config(config)
    config.write_text('[store]\nurl = "postgresql://127.0.0.1:5432/x"\n', encoding="utf-8")
    assert load_config(config).store.url.endswith(":5432/x")  # the control


def test_a_url_with_a_password_is_refused_and_one_without_is_kept(tmp_path):
    config = tmp_path / "wiki_config.toml"
    config.write_text('[store]\nurl = "postgresql://analyst:secret@db.example.org/wiki"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="PGPASSWORD"):
        load_config(config)
    config.write_text('[store]\nurl = "mysql://analyst@db.example.org/wiki"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="not a PostgreSQL url"):
        load_config(config)
    config.write_text('[store]\nlock_timeout_s = 5\n', encoding="utf-8")
    set_store_url(config, "postgresql://analyst@db.example.org:5433/wiki")
    loaded = load_config(config)
    assert loaded.store.url == "postgresql://analyst@db.example.org:5433/wiki" and loaded.store.lock_timeout_s == 5
    set_store_url(config, None)
    assert load_config(config).store.url is None


def test_an_edit_based_on_an_old_version_is_refused(postgres_url):
    from llmwiki.store.postgres_store import PostgresStore

    store = PostgresStore(postgres_url)
    document = store.begin_document(path="wiki/a.md", kind="wiki", size_bytes=1, mtime=0.0)
    chunk = Chunk(id=0, document_id=document.id, page_number=1, start=0, end=5, token_count=2, breadcrumb=("A",), text="First")
    first = store.replace_content(document.id, content_hash="1", size_bytes=1, mtime=0.0, parser="md", title="A",
                                  pages=[PageText(1, "First")], chunks=[chunk], expected_version=0)
    assert first.version == 1
    with pytest.raises(StoreConflictError, match="based on 0"):
        store.replace_content(document.id, content_hash="2", size_bytes=1, mtime=0.0, parser="md", title="A",
                              pages=[PageText(1, "Second")], chunks=[chunk], expected_version=0)
    assert store.pages(document.id)[0].text == "First"  # nothing of the refused edit was written
    second = store.replace_content(document.id, content_hash="2", size_bytes=1, mtime=0.0, parser="md", title="A",
                                   pages=[PageText(1, "Second")], chunks=[chunk], expected_version=1)
    assert second.version == 2 and store.pages(document.id)[0].text == "Second"


WRITER = textwrap.dedent(
    """
    import sys
    from llmwiki.ingest.sources import ingest_files
    from llmwiki.workspace import Workspace
    workspace = Workspace.open(sys.argv[1])
    report = ingest_files(workspace, [workspace.sources_dir / sys.argv[2]])
    print(report.count("ingested"), report.count("failed"))
    """
)


@pytest.mark.slow
def test_four_processes_ingesting_into_one_postgresql_store_lose_nothing(tmp_path, postgres_url):
    workspace = Workspace.init(tmp_path / "ws")
    point_at(workspace.root, postgres_url)
    workspace = Workspace.open(workspace.root)
    expected = {}
    for writer in range(4):
        for index in range(10):
            path = workspace.sources_dir / f"w{writer}" / f"doc{index}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            text = f"# Writer {writer} document {index}\n\n" + f"Paragraph about topic{writer}x{index} and its many details.\n\n" * (5 + index * 8)
            path.write_text(text, encoding="utf-8")
            expected[f"sources/w{writer}/doc{index}.md"] = text
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(workspace.root), f"w{writer}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for writer in range(4)
    ]
    results = [process.communicate(timeout=600) + (process.returncode,) for process in processes]
    for stdout, stderr, returncode in results:
        assert returncode == 0, stderr
        assert stdout.split() == ["10", "0"]
    store = workspace.store
    documents = store.documents(kind="source")
    assert sorted(document.path for document in documents) == sorted(expected)  # none lost, none twice
    assert {document.status for document in documents} == {"ready"} and {document.version for document in documents} == {1}
    for document in documents:
        chunks = store.chunks(document.id)
        assert chunks and [chunk.text for chunk in chunks] == [chunk.text for chunk in sorted(chunks, key=lambda chunk: chunk.start)]
        assert len({chunk.start for chunk in chunks}) == len(chunks)  # no chunk written twice
    # Each writer's own word finds its own ten documents, and only those.
    for writer in range(4):
        result = search(workspace, f"topic{writer}x3")
        assert [hit.path for hit in result.hits] == [f"sources/w{writer}/doc3.md"]


@pytest.mark.duckdb_only  # the workspace starts on the embedded store and moves
def test_an_existing_workspace_moves_to_postgresql_with_every_count_equal(wiki, postgres_url):
    from click.testing import CliRunner

    from llmwiki.cli import cli
    from llmwiki.verify.page import verify_pages

    page = next(document.path for document in wiki.store.documents(kind="wiki") if document.path.startswith("wiki/summaries/"))
    verify_pages(wiki, [page], services_for(wiki).verifier)
    before = wiki.store.row_counts()
    assert before["page_verifications"] == 1 and before["doc_references"] > 0 and before["chunks"] > 0  # control: there is something to move
    answer_before = search(wiki, "kelp forest")
    result = CliRunner().invoke(cli, ["store", "migrate", "--to", postgres_url, "-w", str(wiki.root)])
    assert result.exit_code == 0, result.output
    assert "every count checked" in result.output
    moved = Workspace.open(wiki.root)
    assert moved.config.store.url == postgres_url and type(moved.store).__name__ == "PostgresStore"
    assert moved.store.row_counts() == before
    stored = moved.store.latest_verification(moved.store.document_by_path(page).id)
    assert stored is not None and stored[1]  # the verification came along with its sentences
    assert {hit.chunk_id for hit in search(moved, "kelp forest").hits} == {hit.chunk_id for hit in answer_before.hits}  # ids kept
    # A second move into the same (now full) database is refused and changes nothing.
    again = CliRunner().invoke(cli, ["store", "migrate", "--to", postgres_url, "-w", str(wiki.root)])
    assert again.exit_code != 0
    assert moved.store.row_counts() == before


def test_bm25_over_packed_postings_matches_the_formula_and_breaks_ties_by_chunk():
    import math

    import numpy as np

    from llmwiki.store.postgres_store import _POSTING, B, K1, _Postings

    # (term place, chunk, tf, length, flags): chunks 7 and 3 tie; chunk 9 is out of scope; chunk 5 is not admitted
    rows = [(1, 7, 2, 10, 3), (1, 3, 2, 10, 3), (2, 3, 1, 10, 3), (2, 7, 1, 10, 3), (1, 9, 5, 10, 2), (2, 5, 1, 20, 1), (1, 11, 1, 40, 3)]
    packed = np.array(rows, dtype=[(name, "<i8") for name in _POSTING.names]).astype(_POSTING)
    postings = _Postings(n=100.0, average_length=12.0, rows=packed)

    def expected(chunk):
        total = 0.0
        for term, other, tf, length, _ in rows:
            if other == chunk:
                df = sum(1 for row in rows if row[0] == term)  # df counts every searchable chunk, in scope or not
                total += math.log(1 + (100 - df + 0.5) / (df + 0.5)) * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / 12.0))
        return total

    chunks, scores, matched = postings.ranked(1, admitted_only=True)
    assert matched == 3 and chunks.tolist() == [3]  # 3 and 7 tie: the lower chunk id wins the one place
    chunks, scores, matched = postings.ranked(10, admitted_only=True)
    assert chunks.tolist() == [3, 7, 11] and np.allclose(scores, [expected(3), expected(7), expected(11)])
    chunks, _, matched = postings.ranked(10, admitted_only=False)
    assert matched == 4 and set(chunks.tolist()) == {3, 5, 7, 11}  # control: chunk 5 counts when not only the admitted do; 9 never (out of scope)
    empty = _Postings(n=1.0, average_length=1.0, rows=np.zeros(0, dtype=_POSTING))
    assert empty.ranked(10, admitted_only=False)[2] == 0


def test_stored_vectors_read_back_exactly(tmp_path, postgres_url):
    import numpy as np

    workspace = _two_workspaces(tmp_path, postgres_url)["postgresql"]
    store = workspace.store
    chunk_ids = [chunk_id for chunk_id, _ in store.chunks_missing_embeddings("probe")][:2]
    vectors = np.array([[0.1, -2.5, 3e-8, 1.0], [1 / 3, 0.0, -0.0, 65504.0]], dtype=np.float32)
    store.write_embeddings("probe", chunk_ids, vectors)
    read = store.embeddings("probe", chunk_ids)
    assert [row[0] for row in read] == chunk_ids and all(row[1] is False for row in read)  # sources, not wiki
    assert np.array_equal(np.stack([row[2] for row in read]), vectors)  # array_send read by numpy: the same float32 values
    assert store.embeddings("another model", chunk_ids) == []  # control: vectors are per model
