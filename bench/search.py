"""Search benchmark on Cranfield-1400, beside reference BM25 engines in the same run.

    python bench/search.py [--data ../shared/data/cranfield] [--latency-chunks 100000] [--no-hybrid] [--no-postgres]

Quality (225 queries, graded judgments; gain = 5 - grade, grade -1 = 0):
nDCG@10, MAP and recall@100 of
  - llmwiki BM25, as the product searches (chunks with all terms first, the rest of the ranking filling the places)
  - llmwiki BM25, any term (ranking over every chunk with a query term)
  - llmwiki hybrid: its BM25 ranking fused with MiniLM cosine (reciprocal rank fusion), on DuckDB and on PostgreSQL
  - DuckDB match_bm25 (the fts extension, its defaults, disjunctive)
  - bm25s (PyStemmer English, its English stopwords)
  - SQLite FTS5 (porter unicode61; each word quoted, joined with OR; bm25())
  - llmwiki on PostgreSQL (``[store] url``): the same product search run in the
    server, ranked by BM25 and by ts_rank_cd (a throwaway server on
    loopback; skipped, saying why, where PostgreSQL is not installed)
An ablation row shows what keeping digits searchable costs on Cranfield.
Latency (p50/p95 over the 225 queries) on a corpus of --latency-chunks chunks
built from Cranfield sentences, the index build time of each engine, and the
time to add one document to that corpus and answer the next query.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.records import Chunk, PageText  # noqa: E402
from llmwiki.read.search import SearchIndex, search_cache_path  # noqa: E402
from llmwiki.store.duckdb_store import DuckDBStore, fts_english_stopwords, load_fts  # noqa: E402


def parse_blocks(text: str) -> list[dict[str, str]]:
    records = []
    for block in re.split(r"^\.I\s+", text, flags=re.MULTILINE)[1:]:
        identifier, _, rest = block.partition("\n")
        fields = dict(re.findall(r"^\.([A-Z])\n(.*?)(?=^\.[A-Z]\n|\Z)", rest, flags=re.MULTILINE | re.DOTALL))
        records.append({"id": identifier.strip(), **{key: value.strip() for key, value in fields.items()}})
    return records


def load_cranfield(folder: Path):
    documents = parse_blocks((folder / "cran.all.1400").read_text(encoding="latin-1"))
    queries = parse_blocks((folder / "cran.qry").read_text(encoding="latin-1"))
    judgments: dict[int, dict[int, int]] = {}
    for line in (folder / "cranqrel").read_text().split("\n"):
        parts = line.split()
        if len(parts) >= 3:
            position, document, grade = int(parts[0]), int(parts[1]), int(parts[2])
            gain = 5 - grade if 1 <= grade <= 4 else 0
            judgments.setdefault(position, {})[document] = gain
    texts = {int(doc["id"]): f"{doc.get('T', '')}\n\n{doc.get('W', '')}".strip() for doc in documents}
    query_texts = [" ".join(query["W"].split()) for query in queries]
    return texts, query_texts, judgments


def ndcg_at(ranking: list[int], gains: dict[int, int], k: int = 10) -> float:
    dcg = sum(gains.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranking[:k]))
    ideal = sorted((gain for gain in gains.values() if gain > 0), reverse=True)[:k]
    idcg = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def average_precision(ranking: list[int], gains: dict[int, int]) -> float:
    relevant = {doc for doc, gain in gains.items() if gain > 0}
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for rank, doc in enumerate(ranking, start=1):
        if doc in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


def recall_at(ranking: list[int], gains: dict[int, int], k: int = 100) -> float:
    relevant = {doc for doc, gain in gains.items() if gain > 0}
    return len(relevant & set(ranking[:k])) / len(relevant) if relevant else 0.0


def evaluate(rankings: list[list[int]], judgments) -> tuple[float, float, float]:
    positions = range(1, len(rankings) + 1)
    ndcg = statistics.mean(ndcg_at(rankings[p - 1], judgments.get(p, {})) for p in positions)
    mean_ap = statistics.mean(average_precision(rankings[p - 1], judgments.get(p, {})) for p in positions)
    recall = statistics.mean(recall_at(rankings[p - 1], judgments.get(p, {})) for p in positions)
    return ndcg, mean_ap, recall


def bench_documents(texts: dict[str, str], chunks_per_document: int) -> list[tuple]:
    """(path, kind, hash, pages, chunks) for bulk_load: chunks_per_document chunks each, one text a chunk."""
    items = list(texts.items())
    documents = []
    for first in range(0, len(items), chunks_per_document):
        group = items[first:first + chunks_per_document]
        page_text = "\n\n".join(text for _, text in group)
        chunks, position = [], 0
        for _, text in group:
            chunks.append(Chunk(page_number=1, start=position, end=position + len(text), text=text, token_count=len(text.split())))
            position += len(text) + 2
        path = group[0][0] if chunks_per_document == 1 else f"doc{first // chunks_per_document:05d}.md"
        documents.append((path, "source", f"h{first}", [PageText(1, page_text)], chunks))
    return documents


def timed_load(store, texts: dict[str, str], chunks_per_document: int):
    """(store, seconds to bulk-load the texts into it)."""
    documents = bench_documents(texts, chunks_per_document)
    started = time.perf_counter()
    store.bulk_load(documents)
    return store, time.perf_counter() - started


def build_store(folder: Path, texts: dict[str, str], *, chunks_per_document: int = 1) -> tuple[DuckDBStore, float]:
    """A DuckDB store whose documents hold chunks_per_document chunks each, one text a chunk."""
    return timed_load(DuckDBStore(folder / "store.duckdb", lock_timeout_s=60), texts, chunks_per_document)


def fts5_engine(texts: dict[str, str], stopwords: set[str]):
    connection = sqlite3.connect(":memory:")
    started = time.perf_counter()
    connection.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, text, tokenize='porter unicode61')")
    connection.executemany("INSERT INTO docs VALUES (?, ?)", texts.items())
    connection.commit()
    build = time.perf_counter() - started

    def query(text: str, limit: int) -> list[str]:
        words = [word for word in re.findall(r"\w+", text.lower()) if word not in stopwords]
        if not words:
            return []
        expression = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
        rows = connection.execute("SELECT path FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", [expression, limit]).fetchall()
        return [row[0] for row in rows]

    return query, build


def bm25s_engine(texts: dict[str, str]):
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    paths = list(texts)
    started = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(list(texts.values()), stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    build = time.perf_counter() - started

    def query(text: str, limit: int) -> list[str]:
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            return []
        results, scores = retriever.retrieve(tokens, k=min(limit, len(paths)), show_progress=False)
        return [paths[index] for index, score in zip(results[0], scores[0]) if score > 0]

    return query, build


def duckdb_fts_engine(store: DuckDBStore):
    started = time.perf_counter()
    with store.connect() as conn:
        load_fts(conn)  # from its package file: a fresh clone has nothing installed in ~/.duckdb
        conn.execute("PRAGMA create_fts_index('chunks', 'id', 'text', stemmer='porter', stopwords='english', overwrite=1)")
    store.checkpoint()
    build = time.perf_counter() - started

    def query(text: str, limit: int) -> list[str]:
        with store.connect() as conn:
            load_fts(conn)
            rows = conn.execute(
                """
                SELECT documents.path FROM (
                    SELECT document_id, fts_main_chunks.match_bm25(id, ?) AS score FROM chunks
                ) AS scored JOIN documents ON documents.id = scored.document_id
                WHERE score IS NOT NULL ORDER BY score DESC LIMIT ?
                """,
                [text, limit],
            ).fetchall()
        return [row[0] for row in rows]

    return query, build


def llmwiki_engine(store, mode: str):
    index = SearchIndex(store)

    def query(text: str, limit: int) -> list[str]:
        return [hit.path for hit in index.search(text, limit=limit, mode=mode).hits]

    return query, index


def build_postgres_store(url: str, texts: dict[str, str], *, chunks_per_document: int = 1):
    """The same documents as build_store, in a PostgreSQL store; (store, seconds)."""
    from llmwiki.store.postgres_store import PostgresStore

    return timed_load(PostgresStore(url, lock_timeout_s=60), texts, chunks_per_document)


def postgres_engine(store, ranking: str):
    from llmwiki.read.search import ServerSearch

    index = ServerSearch(store)

    def query(text: str, limit: int) -> list[str]:
        return [hit.path for hit in index.search(text, limit=limit, ranking=ranking).hits]

    return query


def start_postgres():
    """A throwaway server, or None (saying why) when PostgreSQL is not installed here."""
    from llmwiki.pgserver import ServerUnavailable, start_cluster

    try:
        return start_cluster()
    except ServerUnavailable as err:
        print(f"PostgreSQL rows skipped: {err}")
        return None


def timed(query, queries: list[str], limit: int = 10) -> tuple[float, float]:
    durations = []
    for text in queries:
        started = time.perf_counter()
        query(text, limit)
        durations.append((time.perf_counter() - started) * 1000)
    durations.sort()
    return durations[len(durations) // 2], durations[int(len(durations) * 0.95) - 1]


def latency_corpus(texts: dict[int, str], size: int, seed: int = 7) -> dict[str, str]:
    sentences = [sentence.strip() for text in texts.values() for sentence in re.split(r"(?<=\.)\s+", " ".join(text.split())) if len(sentence.split()) > 3]
    generator = random.Random(seed)
    corpus = {}
    for index in range(size):
        start = generator.randrange(len(sentences))
        corpus[f"c{index:06d}"] = " ".join(sentences[(start + offset) % len(sentences)] for offset in range(3))
    return corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "cranfield")
    parser.add_argument("--latency-chunks", type=int, default=100_000)
    parser.add_argument("--no-hybrid", action="store_true")
    parser.add_argument("--no-postgres", action="store_true", help="leave out the PostgreSQL store's rows")
    args = parser.parse_args()
    if not (args.data / "cran.all.1400").is_file():
        sys.exit(f"{args.data}: Cranfield is absent (it lives in ../shared/data, see its README)")
    texts, queries, judgments = load_cranfield(args.data)
    stopwords = set(fts_english_stopwords())
    print(f"Cranfield: {len(texts)} documents, {len(queries)} queries")
    cluster = None if args.no_postgres else start_postgres()
    try:
        run(args, texts, queries, judgments, stopwords, cluster)
    finally:
        if cluster is not None:
            from llmwiki.store.postgres_store import PostgresStore

            PostgresStore.close_pools()
            cluster.stop()


def run(args, texts, queries, judgments, stopwords, cluster) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        store, _ = build_store(Path(scratch) / "quality", {str(doc_id): text for doc_id, text in texts.items()})
        engines = {
            "llmwiki BM25 (product: all, then filled)": llmwiki_engine(store, "auto")[0],
            "llmwiki BM25 (any term)": llmwiki_engine(store, "any")[0],
            "DuckDB match_bm25 (disjunctive)": duckdb_fts_engine(store)[0],
            "bm25s": bm25s_engine({str(doc_id): text for doc_id, text in texts.items()})[0],
            "SQLite FTS5 (OR)": fts5_engine({str(doc_id): text for doc_id, text in texts.items()}, stopwords)[0],
        }
        # Ablation: the same engine on text with digits removed, i.e. what keeping
        # numbers searchable ("1911", "t1", "1,234") costs on this collection.
        digitless, _ = build_store(Path(scratch) / "digitless", {str(doc_id): re.sub(r"[0-9]", " ", text) for doc_id, text in texts.items()})
        engines["ablation: llmwiki any term, digits removed"] = llmwiki_engine(digitless, "any")[0]
        if cluster is not None:
            server_store, _ = build_postgres_store(cluster.create_database("quality"), {str(doc_id): text for doc_id, text in texts.items()})
            engines["llmwiki on PostgreSQL (product, BM25)"] = postgres_engine(server_store, "bm25")
            engines["llmwiki on PostgreSQL (product, ts_rank_cd)"] = postgres_engine(server_store, "ts_rank_cd")
        rankings = {name: [[int(path) for path in engine(query, 100)] for query in queries] for name, engine in engines.items()}
        strict_found = sum(1 for query in queries if not SearchIndex(store).search(query, limit=1, mode="all").hits)
        if not args.no_hybrid:
            from llmwiki.embeddings import SentenceTransformerEmbedder, embed_missing

            hybrid = SearchIndex(store)
            encode_rates, hybrid_latency = {}, {}
            embedders = {}
            for precision in ("float32", "int8"):
                embedder = embedders[precision] = SentenceTransformerEmbedder(int8=precision == "int8")
                started = time.perf_counter()
                encoded = embed_missing(store, embedder)
                encode_rates[precision] = encoded / (time.perf_counter() - started)
                for label, mode in (("product", "auto"), ("any term", "any")):
                    rankings[f"llmwiki hybrid ({label}) + MiniLM {precision}"] = [
                        [int(hit.path) for hit in hybrid.search(query, limit=100, mode=mode, embedder=embedder).hits] for query in queries
                    ]
                hybrid_query = lambda text, limit, embedder=embedder: hybrid.search(text, limit=limit, embedder=embedder)  # noqa: E731
                hybrid_latency[precision] = timed(hybrid_query, queries)
            if cluster is not None:  # the default precision only: the server path fuses the same way
                from llmwiki.read.search import ServerSearch

                int8 = embedders["int8"]
                embed_missing(server_store, int8)
                server_hybrid = ServerSearch(server_store)
                rankings["llmwiki on PostgreSQL hybrid (product) + MiniLM int8"] = [
                    [int(hit.path) for hit in server_hybrid.search(query, limit=100, embedder=int8).hits] for query in queries
                ]
                hybrid_latency["PostgreSQL int8"] = timed(lambda text, limit: server_hybrid.search(text, limit=limit, embedder=int8), queries)
    reference = evaluate(rankings["DuckDB match_bm25 (disjunctive)"], judgments)
    print(f"\n{'engine':<46}{'nDCG@10':>9}{'MAP':>8}{'R@100':>8}{'nDCG/ref':>10}")
    for name, ranking in rankings.items():
        ndcg, mean_ap, recall = evaluate(ranking, judgments)
        print(f"{name:<46}{ndcg:>9.3f}{mean_ap:>8.3f}{recall:>8.3f}{ndcg / reference[0]:>10.3f}")
    print(f"queries with no chunk holding every term (product search widens): {strict_found} of {len(queries)}")
    if cluster is not None:
        product = evaluate(rankings["llmwiki BM25 (product: all, then filled)"], judgments)[0]
        server = evaluate(rankings["llmwiki on PostgreSQL (product, BM25)"], judgments)[0]
        print(f"PostgreSQL product search nDCG@10 / DuckDB product search: {server / product:.3f} (within 3%: {abs(server / product - 1) <= 0.03})")
        if not args.no_hybrid:
            duck_hybrid = evaluate(rankings["llmwiki hybrid (product) + MiniLM int8"], judgments)[0]
            server_hybrid = evaluate(rankings["llmwiki on PostgreSQL hybrid (product) + MiniLM int8"], judgments)[0]
            print(f"PostgreSQL hybrid nDCG@10 / DuckDB hybrid: {server_hybrid / duck_hybrid:.3f} (within 3%: {abs(server_hybrid / duck_hybrid - 1) <= 0.03})")
    if not args.no_hybrid:
        print(
            f"hybrid cost: MiniLM embedded {encoded} chunks (sorted by length, batches of 64) at {encode_rates['float32']:.0f}/s in float32, "
            f"{encode_rates['int8']:.0f}/s in int8 ({encode_rates['int8'] / encode_rates['float32']:.2f}x) on this CPU; hybrid query p50 / p95 "
            + ", ".join(f"{precision} {p50:.1f} / {p95:.1f} ms" for precision, (p50, p95) in hybrid_latency.items())
            + " (1,400 chunks, query embedding included)"
        )

    size = args.latency_chunks
    corpus = latency_corpus(texts, size)
    print(f"\nLatency corpus: {size} chunks of 3 Cranfield sentences")
    with tempfile.TemporaryDirectory() as scratch:
        store, load_seconds = build_store(Path(scratch) / "latency", corpus, chunks_per_document=100)
        product, index = llmwiki_engine(store, "auto")
        started = time.perf_counter()
        product("warm up", 10)
        snapshot_seconds = time.perf_counter() - started  # every posting from SQL (no cache yet); writes the cache
        started = time.perf_counter()
        SearchIndex(store).search("warm up", limit=10)  # as the next process would: from the cache beside the store
        cached_seconds = time.perf_counter() - started
        started = time.perf_counter()
        store.rebuild_search_index()
        store.checkpoint()
        product("warm up again", 10)
        rebuild_seconds = time.perf_counter() - started
        fts5, fts5_build = fts5_engine(corpus, stopwords)
        bm25s_query, bm25s_build = bm25s_engine(corpus)
        duck, duck_build = duckdb_fts_engine(store)
        results = {
            "llmwiki BM25 (product)": (timed(product, queries), rebuild_seconds),
            "SQLite FTS5 (OR, stopwords removed)": (timed(fts5, queries), fts5_build),
            "bm25s": (timed(bm25s_query, queries), bm25s_build),
            "DuckDB match_bm25 (first 30 queries)": (timed(duck, queries[:30]), duck_build),
        }
        if cluster is not None:
            server_store, server_build = build_postgres_store(cluster.create_database("latency"), corpus, chunks_per_document=100)
            started = time.perf_counter()
            server_store.vacuum()  # what autovacuum does soon after a bulk load (index-only scans of the postings)
            server_build += time.perf_counter() - started
            server_query = postgres_engine(server_store, "bm25")
            server_query("warm up", 10)
            results["llmwiki on PostgreSQL (product, BM25)"] = (timed(server_query, queries), server_build)
        fts5_p50, fts5_build = results["SQLite FTS5 (OR, stopwords removed)"][0][0], results["SQLite FTS5 (OR, stopwords removed)"][1]
        print(f"{'engine':<40}{'p50 ms':>9}{'p95 ms':>9}{'p50/FTS5':>10}{'build s':>9}{'build/FTS5':>12}")
        for name, ((p50, p95), build) in results.items():
            print(f"{name:<40}{p50:>9.1f}{p95:>9.1f}{p50 / fts5_p50:>10.2f}{build:>9.2f}{build / fts5_build:>12.2f}")
        print(f"llmwiki: bulk load + postings of {size} chunks {load_seconds:.1f} s; first query in a process: {snapshot_seconds:.2f} s loading from SQL, "
              f"{cached_seconds:.2f} s from the cache file ({search_cache_path(store.path).stat().st_size / 2**20:.0f} MiB); "
              f"in-process copy {index._snapshot.memory_bytes / 2**20:.0f} MiB")

        # One more document (10 chunks) into the big workspace, then the next query. Its chunks are drawn
        # from the same sentences as the corpus, so each also carries a word no other chunk has: querying
        # its text alone ties with the older copies of the same sentences (ids first), which at a million
        # chunks hid it behind them and read as a stale index when it was not.
        document = {key: f"{piece} Freshnessmark{index}" for index, (key, piece) in enumerate(latency_corpus(texts, 10, seed=99).items())}
        text = "\n\n".join(document.values())
        started = time.perf_counter()
        handle = store.begin_document(path="new/document.md", kind="source", size_bytes=len(text), mtime=0.0)
        chunks, position = [], 0
        for piece in document.values():
            start = text.index(piece, position)
            chunks.append(Chunk(page_number=1, start=start, end=start + len(piece), text=piece, token_count=len(piece.split())))
            position = start + len(piece)
        store.replace_content(handle.id, content_hash="new", size_bytes=len(text), mtime=0.0, parser="bench", title=None, pages=[PageText(1, text)], chunks=chunks)
        found = product(f"{next(iter(document.values()))}", 10)
        update_seconds = time.perf_counter() - started
        print(
            f"add one document (10 chunks) and answer the next query: {update_seconds:.2f} s = "
            f"{update_seconds / rebuild_seconds:.3f} x a full rebuild ({rebuild_seconds:.1f} s); "
            f"new document found: {'new/document.md' in found}"
        )


if __name__ == "__main__":
    main()
