from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import from_template

from llmwiki.ingest.sources import ingest_file
from llmwiki.read.search import SearchIndex, search, search_cache_path
from llmwiki.store.duckdb_store import load_fts

DOCS = {
    "sources/otters.md": "# Otters\n\nSea otters float on kelp and eat urchins. Otters live in holts.\n",
    "sources/volta.md": "# Volta\n\nVolta stacked zinc and copper discs into a pile in 1800. The pile made current.\n",
    "sources/figures.md": "# Figures\n\nThe budget was 1,234 euros for model t1 in Angoulême.\n",
    "sources/kelp.md": "# Kelp\n\nKelp forests shelter fish. Urchins graze kelp when otters are absent.\n",
    "wiki/concepts/otter.md": "# Otter (concept)\n\nAn otter is a semi-aquatic mammal; sea otters eat urchins.\n",
}


def build_corpus(workspace, count_tokens, docs):
    for relative, text in docs.items():
        path = workspace.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        assert ingest_file(workspace, path, count_tokens=count_tokens).action == "ingested"
    return workspace


@pytest.fixture
def corpus(workspace, count_tokens, tmp_path_factory):
    return from_template("search-corpus", workspace, lambda made: build_corpus(made, count_tokens, DOCS), tmp_path_factory)


def paths(result) -> list[str]:
    return [hit.path for hit in result.hits]


def test_all_term_matches_rank_first_and_the_rest_fill_the_places(corpus):
    result = search(corpus, "otters urchins kelp")
    assert result.case == "matched" and not result.widened
    assert set(paths(result)[:2]) == {"sources/otters.md", "sources/kelp.md"}  # every term: first
    assert result.matched_count == 2 and result.filled == len(result.hits) - 2 > 0
    assert "sources/volta.md" not in paths(result)  # no query term: never a filler
    assert "all terms matched: 2 of" in result.readout and f"then {result.filled} with some of the terms" in result.readout
    strict = search(corpus, "otters urchins kelp", mode="all")  # mode="all" never fills
    assert set(paths(strict)) == {"sources/otters.md", "sources/kelp.md"} and strict.filled == 0


def test_search_widens_to_any_term_and_says_so(corpus):
    result = search(corpus, "zinc holts")  # no chunk has both
    assert result.widened
    assert set(paths(result)) == {"sources/volta.md", "sources/otters.md"}
    assert "widened to any of them" in result.readout
    assert "2 of 5 chunks matched, 2 shown" in result.readout
    control = search(corpus, "zinc copper")  # both in one chunk: no widening
    assert not control.widened and paths(control) == ["sources/volta.md"]


def test_the_three_readout_cases(corpus):
    no_terms = search(corpus, "what did I say?")
    assert no_terms.case == "no_terms" and no_terms.terms == () and not no_terms.hits
    assert "no searchable terms" in no_terms.readout
    no_match = search(corpus, "quasar nebula")
    assert no_match.case == "no_match" and no_match.matched_count == 0 and no_match.total_count == 5
    assert "No chunk of the 5" in no_match.readout
    matched = search(corpus, "kelp", limit=1)
    assert matched.case == "matched" and matched.matched_count == 2 and len(matched.hits) == 1
    assert "2 of 5 chunks matched, 1 shown" in matched.readout


def test_scope_filters_wiki_and_sources(corpus):
    wiki = search(corpus, "urchins", scope="wiki")
    sources = search(corpus, "urchins", scope="sources")
    everything = search(corpus, "urchins", scope="all")
    assert paths(wiki) == ["wiki/concepts/otter.md"] and wiki.total_count == 1
    assert "wiki/concepts/otter.md" not in paths(sources) and len(sources.hits) == 2 and sources.total_count == 4
    assert set(paths(everything)) == set(paths(wiki)) | set(paths(sources))
    assert all(hit.kind == "wiki" for hit in wiki.hits)


def test_digits_codes_and_accented_words_are_searchable(corpus):
    for query in ("1,234", "1234", "t1", "Angoulême", "1800"):
        result = search(corpus, query)
        assert result.hits, query
    assert paths(search(corpus, "1,234")) == ["sources/figures.md"]
    assert paths(search(corpus, "Angoulême")) == ["sources/figures.md"]
    assert search(corpus, "Angouleme").case == "no_match"  # accents are kept, not stripped


def test_failed_documents_are_never_returned(corpus, count_tokens):
    assert "sources/kelp.md" in paths(search(corpus, "kelp forests"))
    (corpus.root / "sources/kelp.md").write_bytes(b"\x00\x01\x02\x03" * 1000)
    assert ingest_file(corpus, corpus.root / "sources/kelp.md", count_tokens=count_tokens).action == "failed"
    result = search(corpus, "kelp")
    assert "sources/kelp.md" not in paths(result)
    assert paths(result) == ["sources/otters.md"]  # control: the other kelp chunk is still found
    assert result.total_count == 4


@pytest.mark.duckdb_only  # the in-process index (reloads, DuckDB's analyzer, embeddings); PostgreSQL: tests/test_postgres.py
def test_an_insert_is_seen_by_the_next_search(corpus, count_tokens):
    index = SearchIndex.for_store(corpus.store)
    assert search(corpus, "narwhal").case == "no_match"
    reloads = index.reload_count
    search(corpus, "otters")
    assert index.reload_count == reloads  # nothing changed: the in-memory copy is reused
    path = corpus.sources_dir / "narwhal.md"
    path.write_text("# Narwhal\n\nThe narwhal has a long tusk.\n", encoding="utf-8")
    ingest_file(corpus, path, count_tokens=count_tokens)
    assert paths(search(corpus, "narwhal")) == ["sources/narwhal.md"]
    assert index.reload_count == reloads + 1


def test_hits_carry_page_breadcrumb_chunk_id_and_a_bounded_preview(corpus):
    corpus_hit = search(corpus, "zinc").hits[0]
    assert corpus_hit.breadcrumb == ("Volta",) and corpus_hit.page == 1
    assert corpus_hit.chunk_id > 0 and corpus_hit.label.startswith("sources/volta.md p.1 › Volta")
    long_path = corpus.sources_dir / "long.md"
    long_path.write_text("# Long\n\n" + "The walrus rests on ice floes. " * 100, encoding="utf-8")
    from llmwiki.models import minilm_token_counter

    ingest_file(corpus, long_path, count_tokens=minilm_token_counter())
    preview = search(corpus, "walrus").hits[0].preview
    assert len(preview) <= 400 and preview.endswith("…")


@pytest.mark.duckdb_only  # the in-process index (reloads, DuckDB's analyzer, embeddings); PostgreSQL: tests/test_postgres.py
def test_ranking_matches_duckdb_match_bm25(workspace, count_tokens):
    """Same analyzer, same formula: our scores are DuckDB's times ln(10).

    DuckDB's tokenizer splits "1,234" in two where ours keeps one number, so
    the document with thousands separators is left out of this comparison.
    """
    corpus = build_corpus(workspace, count_tokens, {k: v for k, v in DOCS.items() if "figures" not in k})
    with corpus.store.connect() as conn:
        load_fts(conn)
        conn.execute(
            "PRAGMA create_fts_index('chunks', 'id', 'text', stemmer='porter', stopwords='english', "
            "ignore='[^\\p{L}\\p{N}]+', strip_accents=0, lower=1, overwrite=1)"
        )
        for query in ("otters urchins kelp", "pile current zinc", "sea otters"):
            reference = conn.execute(
                "SELECT id, fts_main_chunks.match_bm25(id, ?) AS score FROM chunks WHERE score IS NOT NULL ORDER BY score DESC",
                [query],
            ).fetchall()
            ours = search(corpus, query, limit=10)
            widened_any = {hit.chunk_id: hit.score for hit in ours.hits}
            if not ours.widened:  # strict results are a subset of the disjunctive ones
                assert set(widened_any) <= {row[0] for row in reference}
            for chunk_id, score in widened_any.items():
                expected = dict(reference)[chunk_id] * math.log(10)
                assert score == pytest.approx(expected, rel=1e-4), query


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=300))
def test_any_string_is_a_valid_query(corpus, query):
    result = search(corpus, query)
    assert result.readout
    assert result.case in ("no_terms", "no_match", "matched")
    assert len(result.hits) <= 10


@pytest.mark.parametrize(
    "query",
    ['"unbalanced quote', "'; DROP TABLE chunks; --", "otters AND NOT kelp*", "🦦 otters 🦦", "x" * 10_000, "\x00otters\x00", "", "   "],
)
def test_odd_queries_get_a_readout_not_an_error(corpus, query):
    result = search(corpus, query)
    assert result.readout
    with corpus.store.connect() as conn:
        assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] == 5  # nothing was harmed


@pytest.mark.duckdb_only  # the in-process index (reloads, DuckDB's analyzer, embeddings); PostgreSQL: tests/test_postgres.py
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cn")), max_size=200))
def test_python_query_analyzer_matches_the_sql_index_analyzer(workspace, text):
    """Same terms from both analyzers, for every character this Python's Unicode tables know.

    (Code points assigned after Python's Unicode version, e.g. CJK Extension H
    in 3.11, are letters to DuckDB's RE2 but not to Python, so they are left out.)
    """
    from llmwiki.read.search import analyze as analyze_query

    import unicodedata

    text = unicodedata.normalize("NFC", text.replace("\x00", ""))
    with workspace.store.postings() as reader:
        assert analyze_query(text, reader.stopwords()) == reader.analyze(text)


@pytest.mark.duckdb_only  # the in-process index (reloads, DuckDB's analyzer, embeddings); PostgreSQL: tests/test_postgres.py
def test_incremental_refresh_scores_like_a_fresh_load(corpus, count_tokens):
    warm = SearchIndex.for_store(corpus.store)
    search(corpus, "otters")  # load the in-memory copy
    path = corpus.sources_dir / "more.md"
    path.write_text("# More otters\n\nOtters and kelp again, with urchins.\n", encoding="utf-8")
    ingest_file(corpus, path, count_tokens=count_tokens)
    (corpus.root / "sources/kelp.md").write_bytes(b"\x00\x01" * 4000)  # a document leaves the index
    ingest_file(corpus, corpus.root / "sources/kelp.md", count_tokens=count_tokens)
    (corpus.root / "sources/otters.md").write_text("# Otters\n\nOtters crack urchins on their bellies.\n", encoding="utf-8")
    assert ingest_file(corpus, corpus.root / "sources/otters.md", count_tokens=count_tokens).action == "updated"  # chunks replaced
    incremental = warm.search("otters kelp urchins", mode="any")
    assert warm._snapshot.incremental_loads >= 1
    fresh = fresh_index(corpus.store).search("otters kelp urchins", mode="any")
    assert [(hit.chunk_id, round(hit.score, 5)) for hit in incremental.hits] == [(hit.chunk_id, round(hit.score, 5)) for hit in fresh.hits]
    assert "sources/more.md" in paths(incremental) and "sources/kelp.md" not in paths(incremental)


def fresh_index(store) -> SearchIndex:
    """A new process's index with no cache to start from: it loads every posting from SQL."""
    search_cache_path(store.path).unlink(missing_ok=True)
    return SearchIndex(store)


def ranked(result) -> list[tuple]:
    return [(hit.chunk_id, hit.path, round(hit.score, 6), hit.preview) for hit in result.hits]


QUERIES = ("otters kelp urchins", "volta pile 1800", "angoulême budget", "mammal")


@pytest.mark.duckdb_only  # the cache of the in-process copy; PostgreSQL searches in the server
def test_a_new_process_starts_from_the_search_cache_and_answers_as_a_full_load(corpus):
    first = fresh_index(corpus.store)
    expected = [ranked(first.search(query, mode="any")) for query in QUERIES]
    assert first._snapshot.full_loads == 1 and search_cache_path(corpus.store.path).is_file()  # a full load writes the cache
    second = SearchIndex(corpus.store)  # the next process
    assert [ranked(second.search(query, mode="any")) for query in QUERIES] == expected
    assert second._snapshot.cache_reads == 1 and second._snapshot.full_loads == 0  # from the cache, not from SQL
    assert second._snapshot.memory_bytes > 0


@pytest.mark.duckdb_only
def test_a_search_cache_from_an_earlier_state_is_brought_up_to_date_by_merging(corpus, count_tokens):
    fresh_index(corpus.store).search("otters")  # the cache, at this state
    path = corpus.sources_dir / "narwhal.md"
    path.write_text("# Narwhal\n\nThe narwhal has a long tusk, like otters have whiskers.\n", encoding="utf-8")
    ingest_file(corpus, path, count_tokens=count_tokens)  # written by another process: the cache is now behind
    (corpus.root / "sources/kelp.md").write_bytes(b"\x00\x01" * 4000)  # and a document leaves the index
    ingest_file(corpus, corpus.root / "sources/kelp.md", count_tokens=count_tokens)
    later = SearchIndex(corpus.store)
    assert paths(later.search("narwhal")) == ["sources/narwhal.md"]
    assert (later._snapshot.cache_reads, later._snapshot.full_loads, later._snapshot.incremental_loads) == (1, 0, 1)
    answers = [ranked(later.search(query, mode="any")) for query in QUERIES]
    assert answers == [ranked(fresh_index(corpus.store).search(query, mode="any")) for query in QUERIES]
    assert "sources/kelp.md" not in {hit[1] for answer in answers for hit in answer}


@pytest.mark.duckdb_only
@pytest.mark.parametrize("replace", ["rebuild", "clear"])
def test_a_search_cache_of_another_lineage_is_never_merged_into(corpus, count_tokens, replace):
    fresh_index(corpus.store).search("otters")  # the cache, before every posting is replaced
    if replace == "rebuild":
        corpus.store.rebuild_search_index()  # the same postings again: only the lineage mark tells
    else:
        corpus.store.clear()  # emptied (before a rebuild from the files): chunk ids may come back with other texts
        path = corpus.sources_dir / "narwhal.md"
        path.write_text("# Narwhal\n\nThe narwhal has a long tusk.\n", encoding="utf-8")
        ingest_file(corpus, path, count_tokens=count_tokens)
    later = SearchIndex(corpus.store)
    answers = [ranked(later.search(query, mode="any")) for query in (*QUERIES, "narwhal")]
    assert (later._snapshot.cache_reads, later._snapshot.full_loads) == (0, 1)
    assert answers == [ranked(fresh_index(corpus.store).search(query, mode="any")) for query in (*QUERIES, "narwhal")]


@pytest.mark.duckdb_only
@pytest.mark.parametrize("damage", [b"", b"not a zip file at all", None])
def test_a_damaged_search_cache_is_ignored_and_rewritten(corpus, damage):
    expected = [ranked(fresh_index(corpus.store).search(query, mode="any")) for query in QUERIES]
    cache = search_cache_path(corpus.store.path)
    if damage is None:  # a cache cut short (a crash while another writer had it half-written would leave a .partial instead)
        cache.write_bytes(cache.read_bytes()[: cache.stat().st_size // 2])
    else:
        cache.write_bytes(damage)
    index = SearchIndex(corpus.store)
    assert [ranked(index.search(query, mode="any")) for query in QUERIES] == expected
    assert index._snapshot.cache_reads == 0 and index._snapshot.full_loads == 1
    assert SearchIndex(corpus.store).search("otters").hits and np.load(cache)["digest"].size == 6  # rewritten whole


@pytest.mark.duckdb_only
def test_every_write_moves_the_generation_by_a_random_step(corpus, count_tokens):
    def generation():
        with corpus.store.connect() as conn:
            return conn.execute("SELECT value FROM search_state WHERE key = 'generation'").fetchone()[0]

    steps = []
    for name in ("a", "b", "c"):
        before = generation()
        path = corpus.sources_dir / f"{name}.md"
        path.write_text(f"# {name}\n\nA note about {name} and otters.\n", encoding="utf-8")
        ingest_file(corpus, path, count_tokens=count_tokens)
        steps.append(generation() - before)
    assert all(step >= 1 for step in steps) and len(set(steps)) == 3  # forward, never the same step twice (w.h.p.)


class WordHashEmbedder:
    """A fake embedder: bag of words hashed into 64 dimensions, with synonyms folded."""

    name = "fake-bow"
    SYNONYMS = {"car": "automobile", "vehicle": "automobile"}

    def encode(self, texts):
        import numpy as np

        vectors = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").split():
                word = self.SYNONYMS.get(word, word)
                vectors[row, sum(map(ord, word)) % 64] += 1
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


def test_hybrid_fuses_embeddings_and_says_so(corpus, count_tokens):
    from llmwiki.embeddings import embed_missing

    path = corpus.sources_dir / "garage.md"
    path.write_text("# Garage\n\nThe automobile would not start in the cold.\n", encoding="utf-8")
    ingest_file(corpus, path, count_tokens=count_tokens)
    embedder = WordHashEmbedder()
    index = SearchIndex.for_store(corpus.store)
    # Control: BM25 alone finds no chunk with "car".
    assert index.search("car", mode="any").case == "no_match"
    assert embed_missing(corpus.store, embedder) == 6
    result = index.search("car", embedder=embedder)
    assert result.case == "no_match" and result.hits, "closest-by-meaning hits shown"
    assert result.hits[0].path == "sources/garage.md"
    assert "closest by meaning" in result.readout
    fused = index.search("otters urchins", embedder=embedder)
    assert fused.ranking == "hybrid" and "embedding similarity" in fused.readout
    assert set(paths(fused)) >= {"sources/otters.md", "wiki/concepts/otter.md"}
    assert embed_missing(corpus.store, embedder) == 0  # nothing left to embed


def test_hybrid_search_follows_new_vectors_and_leaves_out_a_failed_document(corpus, count_tokens):
    from llmwiki.embeddings import embed_missing

    embedder = WordHashEmbedder()
    index = SearchIndex.for_store(corpus.store)
    garage = corpus.sources_dir / "garage.md"
    garage.write_text("# Garage\n\nThe automobile would not start in the cold.\n", encoding="utf-8")
    ingest_file(corpus, garage, count_tokens=count_tokens)
    embed_missing(corpus.store, embedder)
    assert paths(index.search("car", embedder=embedder))[0] == "sources/garage.md"
    depot = corpus.sources_dir / "depot.md"
    depot.write_text("# Depot\n\nEvery vehicle waits here overnight.\n", encoding="utf-8")
    ingest_file(corpus, depot, count_tokens=count_tokens)
    assert "sources/depot.md" not in paths(index.search("car", embedder=embedder))  # control: no vector yet, no lexical match
    embed_missing(corpus.store, embedder)
    assert "sources/depot.md" in paths(index.search("car", embedder=embedder))[:2]  # the next search holds the new vectors
    garage.write_bytes(b"\x00\x01\x02\x03" * 1000)
    assert ingest_file(corpus, garage, count_tokens=count_tokens).action == "failed"
    closest = paths(index.search("car", embedder=embedder))
    assert "sources/garage.md" not in closest and closest[0] == "sources/depot.md"
    wiki_only = index.search("urchins", scope="wiki", embedder=embedder)
    assert wiki_only.ranking == "hybrid" and wiki_only.hits and all(hit.kind == "wiki" for hit in wiki_only.hits)


@pytest.mark.duckdb_only
def test_chunks_are_embedded_in_order_of_length(corpus):
    from llmwiki.embeddings import embed_missing

    class Recording(WordHashEmbedder):
        def __init__(self):
            self.batches = []

        def encode(self, texts):
            self.batches.append(list(texts))
            return super().encode(texts)

    embedder = Recording()
    assert embed_missing(corpus.store, embedder, batch_size=2) == 5
    lengths = [len(text) for batch in embedder.batches for text in batch]
    assert lengths == sorted(lengths)  # batches pad texts of about one length
    by_id = [len(text) for _, text in corpus.store.chunks_missing_embeddings("another model")]
    assert by_id != sorted(by_id)  # control: the store's own order (by id) is not by length


@pytest.mark.duckdb_only  # the in-process index (reloads, DuckDB's analyzer, embeddings); PostgreSQL: tests/test_postgres.py
@pytest.mark.parametrize("int8", [False, True], ids=["float32", "int8"])
def test_real_minilm_embedder_loads_offline_and_ranks_a_paraphrase(workspace, count_tokens, int8):
    from llmwiki.embeddings import SentenceTransformerEmbedder, embed_missing

    docs = {
        "sources/volta.md": "# Volta\n\nVolta invented the electric battery, a pile of zinc and copper discs.\n",
        "sources/kelp.md": "# Kelp\n\nKelp forests grow along cold rocky coasts and shelter fish.\n",
    }
    build_corpus(workspace, count_tokens, docs)
    embedder = SentenceTransformerEmbedder(int8=int8)
    vectors = embedder.encode(["a battery", "an electric cell"])
    assert vectors.shape == (2, 384)
    assert abs(float((vectors[0] ** 2).sum()) - 1) < 1e-4
    embed_missing(workspace.store, embedder)
    result = SearchIndex.for_store(workspace.store).search("who made the first electrochemical cell", embedder=embedder, mode="any")
    assert result.hits[0].path == "sources/volta.md"
    # int8 vectors are stored under their own name: a query in one precision is never compared with chunks in the other.
    assert embedder.name == ("all-MiniLM-L6-v2 (int8)" if int8 else "all-MiniLM-L6-v2") and embedder.int8 == int8
    other = SentenceTransformerEmbedder(int8=not int8)
    assert embed_missing(workspace.store, other) == len(workspace.store.chunks_missing_embeddings("nothing yet"))
    closeness = float((embedder.encode(["a battery"]) * other.encode(["a battery"])).sum())
    assert 0.8 < closeness < 1.0 - 1e-6  # close, and not the same vectors


@pytest.mark.duckdb_only
def test_a_rebuild_that_leaves_the_counts_as_they_were_still_reloads_every_posting(corpus, count_tokens):
    warm = SearchIndex(corpus.store)
    warm.search("otters")
    path = corpus.sources_dir / "seal.md"
    path.write_text("# Seal\n\nSeals rest on rocks near otters.\n", encoding="utf-8")
    ingest_file(corpus, path, count_tokens=count_tokens)
    warm.search("otters")
    assert (warm._snapshot.full_loads, warm._snapshot.incremental_loads) == (1, 1)  # control: a write is merged in
    corpus.store.rebuild_search_index()  # the same analyzer, so the same counts: only the rebuild mark tells
    assert warm.search("otters").hits and (warm._snapshot.full_loads, warm._snapshot.incremental_loads) == (2, 1)


def test_positions_of_chunk_ids_by_table_and_by_binary_search_agree():
    from llmwiki.read.search import _positions

    rng = np.random.default_rng(7)
    dense = np.unique(rng.integers(1, 5_000, size=3_000))  # ids as a store assigns them, some deleted
    sparse = np.unique(rng.integers(1, 10**12, size=3_000))  # too sparse for a table: the binary search
    for chunk_ids in (dense, sparse):
        ids = rng.choice(chunk_ids, size=10_000)
        positions = _positions(chunk_ids, ids)
        assert positions.dtype == np.int32
        assert (chunk_ids[positions] == ids).all()
        assert (positions == np.searchsorted(chunk_ids, ids)).all()
    assert len(_positions(dense, dense[:0])) == 0
