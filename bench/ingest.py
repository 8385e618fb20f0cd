"""Ingest benchmark on the real CMU QA S08 corpus (about 50 Wikipedia articles).

    python bench/ingest.py [--data ../shared/data/cmu-qa/S08]

Prints documents, chunks, seconds and chunks per second for a full ingest into
a fresh workspace, the time of each step (extract, chunk, store), a re-ingest
of the unchanged corpus, and, as a reference in the same run, the bare cost
of reading and decoding the same files. Then the extractive wiki generation
for every source: drafting time per source and the whole write (pages,
index, store, commit). Targets: ingest under 20 s; generation under 1 s per
source. Last, concurrent ingest (no generation) by 1, 2 and 4 writer
processes, each with its share of the files, into a PostgreSQL store (a
throwaway server; skipped where PostgreSQL is not installed, or with
--no-postgres) beside the same into the embedded DuckDB store, whose file
lock lets one writer in at a time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.backends import ExtractiveBackend  # noqa: E402
from llmwiki.ingest.chunking import chunk_pages  # noqa: E402
from llmwiki.config import CONFIG_FILENAME, set_store_url  # noqa: E402
from llmwiki.ingest.extract import decode_text, extract  # noqa: E402
from llmwiki.publish.wiki import regenerate_sources  # noqa: E402
from llmwiki.publish.wiki import ingest_paths  # noqa: E402
from llmwiki.models import minilm_token_counter  # noqa: E402
from llmwiki.workspace import Workspace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "cmu-qa" / "S08")
    parser.add_argument("--no-postgres", action="store_true", help="leave out the concurrent-writer rows")
    args = parser.parse_args()
    articles = sorted((args.data / "data").glob("set*/a*.txt"))
    if not articles:
        sys.exit(f"no articles under {args.data}/data: the CMU QA corpus lives in ../shared/data (see its README)")

    with tempfile.TemporaryDirectory() as scratch:
        workspace = Workspace.init(Path(scratch) / "ws")
        for article in articles:
            target = workspace.sources_dir / f"{article.parent.name}-{article.name}"
            shutil.copyfile(article, target)
        files = sorted(workspace.sources_dir.iterdir())
        total_bytes = sum(path.stat().st_size for path in files)

        load_started = time.perf_counter()
        count_tokens = minilm_token_counter()
        load_seconds = time.perf_counter() - load_started

        decode_started = time.perf_counter()
        for path in files:
            decode_text(path.read_bytes(), path)
        decode_seconds = time.perf_counter() - decode_started

        extract_started = time.perf_counter()
        extractions = [extract(path.read_bytes(), path) for path in files]
        extract_seconds = time.perf_counter() - extract_started

        chunk_started = time.perf_counter()
        settings = workspace.config.chunking
        chunk_total = sum(
            len(chunk_pages(extraction.pages, max_tokens=settings.max_tokens, overlap_tokens=settings.overlap_tokens,
                            min_tokens=settings.min_tokens, count_tokens=count_tokens))
            for extraction in extractions
        )
        chunk_seconds = time.perf_counter() - chunk_started

        ingest_started = time.perf_counter()
        report = ingest_paths(workspace, count_tokens=count_tokens, generate=False)
        ingest_seconds = time.perf_counter() - ingest_started
        totals = workspace.store.totals()

        again_started = time.perf_counter()
        again = ingest_paths(workspace, count_tokens=count_tokens, generate=False)
        again_seconds = time.perf_counter() - again_started

        sources = workspace.store.documents(kind="source")
        generation_started = time.perf_counter()
        generation = regenerate_sources(workspace, sources, backend=ExtractiveBackend())
        generation_seconds = time.perf_counter() - generation_started
        per_source = sorted(generation.seconds_per_source.values())
        pages = [path for path in generation.written if path.startswith(("wiki/summaries/", "wiki/concepts/"))]

    store_seconds = max(ingest_seconds - extract_seconds - chunk_seconds, 0.0)
    print(f"corpus: {len(files)} files, {total_bytes / 1024:.0f} KiB, from {args.data}")
    print(f"{'step':<34}{'seconds':>10}{'x decode':>10}")
    rows = [
        ("reference: read + decode only", decode_seconds),
        ("extract (text, pages, blocks)", extract_seconds),
        ("chunk (MiniLM token budget)", chunk_seconds),
        ("store (estimated: ingest - others)", store_seconds),
        ("full ingest", ingest_seconds),
        ("re-ingest, nothing changed", again_seconds),
    ]
    for label, seconds in rows:
        print(f"{label:<34}{seconds:>10.2f}{seconds / decode_seconds:>10.1f}")
    print(f"tokenizer load: {load_seconds:.2f} s (once per process)")
    print(
        f"documents {totals['documents']}, pages {totals['pages']}, chunks {totals['chunks']} "
        f"(chunker alone: {chunk_total}), tokens {totals['tokens']}"
    )
    print(f"full ingest: {ingest_seconds:.2f} s, {totals['chunks'] / ingest_seconds:.0f} chunks/s, "
          f"{len(files) / ingest_seconds:.1f} documents/s; target < 20 s: {'met' if ingest_seconds < 20 else 'MISSED'}")
    print(
        f"wiki generation (extractive) for {len(per_source)} sources: draft per source median {statistics.median(per_source) * 1000:.0f} ms, "
        f"max {per_source[-1] * 1000:.0f} ms; all pages written, indexed and committed in {generation_seconds:.1f} s "
        f"({generation_seconds / len(per_source):.2f} s per source, {len(pages)} pages); target < 1 s per source: "
        f"{'met' if generation_seconds / len(per_source) < 1 else 'MISSED'}"
    )
    built = ingest_seconds + generation_seconds
    print(f"ingest + wiki for {len(files)} articles: {built:.1f} s = x{built / ingest_seconds:.1f} the ingest without generation "
          f"(extraction, chunking, storage: {ingest_seconds:.1f} s); target < 20 s: {'met' if built < 20 else 'MISSED'}")
    print(f"outcomes: {report.summary()}")
    print(f"re-ingest: {again.summary()}")
    if not args.no_postgres:
        concurrent_writers(articles)


WRITER = """
import sys
from llmwiki.ingest.sources import ingest_files
from llmwiki.workspace import Workspace
workspace = Workspace.open(sys.argv[1])
report = ingest_files(workspace, [workspace.sources_dir / sys.argv[2]])
sys.exit(1 if report.count("failed") else 0)
"""


def concurrent_writers(articles: list[Path]) -> None:
    """Wall time and chunks/s for 1, 2 and 4 processes ingesting their shares of the files at once."""
    import subprocess

    from llmwiki.pgserver import ServerUnavailable, start_cluster
    from llmwiki.store.postgres_store import PostgresStore

    try:
        cluster = start_cluster()
    except ServerUnavailable as err:
        print(f"concurrent writers skipped: {err}")
        return
    try:
        print(f"\nconcurrent ingest of {len(articles)} files (no generation), each writer a process with its share")
        print(f"{'store':<12}{'writers':>8}{'seconds':>9}{'chunks/s':>10}{'x 1 writer':>11}")
        for store_kind in ("duckdb", "postgresql"):
            single = None
            for writers in (1, 2, 4):
                with tempfile.TemporaryDirectory() as scratch:
                    workspace = Workspace.init(Path(scratch) / "ws")
                    if store_kind == "postgresql":
                        set_store_url(workspace.root / CONFIG_FILENAME, cluster.create_database(f"writers{writers}"))
                        workspace = Workspace.open(workspace.root)
                    for index, article in enumerate(articles):
                        target = workspace.sources_dir / f"w{index % writers}" / f"{article.parent.name}-{article.name}"
                        target.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(article, target)
                    workspace.store.migrate()
                    started = time.perf_counter()
                    processes = [subprocess.Popen([sys.executable, "-c", WRITER, str(workspace.root), f"w{writer}"], cwd=REPO) for writer in range(writers)]
                    failed = [process.wait() for process in processes]
                    seconds = time.perf_counter() - started
                    chunks = workspace.store.totals()["chunks"]
                    single = single or seconds
                    note = "" if not any(failed) else "  (a writer failed)"
                    print(f"{store_kind:<12}{writers:>8}{seconds:>9.1f}{chunks / seconds:>10.0f}{single / seconds:>11.2f}{note}")
                    PostgresStore.close_pools()
        print("(each writer loads the tokenizer first, ~1-2 s; on 2 cores, 4 writers contend for CPU as much as for the store)")
    finally:
        PostgresStore.close_pools()
        cluster.stop()


if __name__ == "__main__":
    main()
