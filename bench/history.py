"""Maintenance benchmark: snapshot cost, restore by snapshot vs rebuild from files, lint.

    python bench/history.py [--corpus ../shared/data/cmu-qa/S08]

On a fresh workspace holding the CMU QA S08 articles: the ingest (with wiki
generation and its commit), the store snapshot taken at that commit (as a
share of the ingest), a withdrawal, then restoring the commit before it from
its snapshot and, with the snapshot deleted, by rebuilding the store from the
files (the reference). Both restores are checked against the state before
the withdrawal. Then one lint run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki import gitrepo as history  # noqa: E402
from llmwiki.publish.wiki import ingest_paths  # noqa: E402
from llmwiki.lint import lint  # noqa: E402
from llmwiki.maintain import consistency_problems, restore, withdraw  # noqa: E402
from llmwiki.publish.snapshots import snapshot_folder, snapshots, take_snapshot  # noqa: E402
from llmwiki.workspace import Workspace  # noqa: E402


def state(workspace) -> tuple:
    with workspace.store.connect() as conn:
        return (
            conn.execute("SELECT path, status, content_hash FROM documents ORDER BY path").fetchall(),
            conn.execute("SELECT count(*), sum(hash(text)) FROM chunks").fetchone(),
            conn.execute("SELECT count(*) FROM chunk_terms").fetchone(),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "data" / "cmu-qa" / "S08")
    args = parser.parse_args()
    articles = sorted((args.corpus / "data").glob("set*/a*.txt"))
    if not articles:
        sys.exit(f"{args.corpus}: no CMU QA articles (a*.txt) there; they live in ../shared/data/cmu-qa, see its README")
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Workspace.init(Path(scratch) / "ws")
        for index, article in enumerate(articles):
            shutil.copy(article, workspace.sources_dir / f"{article.parent.name}-{article.name}")
        started = time.perf_counter()
        report = ingest_paths(workspace)
        ingest_seconds = time.perf_counter() - started
        revision = history.head(workspace.root)
        kept = snapshots(workspace)[revision]
        kept.path.unlink()
        started = time.perf_counter()
        take_snapshot(workspace, revision)
        snapshot_seconds = time.perf_counter() - started
        store_mb = (workspace.state_dir / "store.duckdb").stat().st_size / 1e6
        print(f"corpus: {len(articles)} articles, {report.chunk_count} chunks; store {store_mb:.1f} MB, snapshot {snapshots(workspace)[revision].size_bytes / 1e6:.1f} MB")
        print(f"ingest with wiki generation and commit: {ingest_seconds:.1f} s; snapshot at the commit: {snapshot_seconds:.2f} s = {snapshot_seconds / ingest_seconds:.3f} x the ingest")
        before = state(workspace)
        source = sorted(document.path for document in workspace.store.documents(kind="source"))[0]
        started = time.perf_counter()
        withdrawn = withdraw(workspace, source)
        print(f"withdraw {source}: {len(withdrawn.deleted_pages)} page(s) deleted, {len(withdrawn.stale_pages)} stale, {time.perf_counter() - started:.2f} s")

        started = time.perf_counter()
        by_snapshot = restore(workspace, revision)
        snapshot_restore = time.perf_counter() - started
        same_after_snapshot = state(workspace) == before and not consistency_problems(workspace)
        withdraw(workspace, source)
        shutil.rmtree(snapshot_folder(workspace))
        started = time.perf_counter()
        by_rebuild = restore(workspace, revision)
        rebuild_restore = time.perf_counter() - started
        same_after_rebuild = state(workspace) == before and not consistency_problems(workspace)
        print(f"{'restore':<34}{'seconds':>9}{'x rebuild':>11}  same as before")
        print(f"{'from the snapshot (' + by_snapshot.method + ')':<34}{snapshot_restore:>9.2f}{snapshot_restore / rebuild_restore:>11.3f}  {same_after_snapshot}")
        print(f"{'rebuild from files (' + by_rebuild.method + ')':<34}{rebuild_restore:>9.2f}{1:>11.3f}  {same_after_rebuild}")

        started = time.perf_counter()
        linted = lint(workspace)
        print(f"lint: {linted.summary()} in {time.perf_counter() - started:.2f} s ({linted.pairs_scored} NLI pairs); notes: {'; '.join(linted.notes) or 'none'}")


if __name__ == "__main__":
    main()
