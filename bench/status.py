"""`llmwiki status` on a large verified wiki: the review summary read at once, beside reading it page by page.

    python bench/status.py [--pages 1000] [--sentences 6]

Builds a workspace of N summary pages (files and store rows), each with a stored verification of a few
sentences and some reviewer verdicts, then times, in one run:

- ``review.summary`` (what `llmwiki status` prints of review): every verification and verdict read at once,
  on one connection;
- the reference: the same figures read page by page (``stored_review`` for each page), as status did before;
- the whole `llmwiki status` command in a subprocess, beside `llmwiki --help` (the interpreter's and the CLI's
  start-up, which any command pays).

Goal: status under a second at 1,000 verified pages.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.records import Chunk, PageText  # noqa: E402
from llmwiki.review import stored_review, summary  # noqa: E402
from llmwiki.verify.page import SentenceScore, body_hash  # noqa: E402
from llmwiki.workspace import Workspace  # noqa: E402


def build(root: Path, pages: int, sentences: int) -> Workspace:
    workspace = Workspace.init(root, git=False)
    source_text = " ".join(f"Fact {index} holds for the kelp forest." for index in range(sentences))
    rows = [("sources/kelp.md", "source", "sha256:source", [PageText(1, source_text)], [Chunk(1, 0, len(source_text), source_text, 40)])]
    bodies = {}
    for number in range(pages):
        body = f"# Page {number}\n\n" + " ".join(f"Fact {index} holds for the kelp forest. [c1]" for index in range(sentences)) + "\n"
        bodies[f"wiki/summaries/p{number}.md"] = body
        path = root / f"wiki/summaries/p{number}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ntitle: Page {number}\ntype: summary\nsources:\n- path: sources/kelp.md\n---\n{body}", encoding="utf-8")
        rows.append((f"wiki/summaries/p{number}.md", "wiki", f"sha256:{number}", [PageText(1, body)], [Chunk(1, 0, len(body), body, 60)]))
    store = workspace.store
    store.bulk_load(rows)
    documents = {document.path: document for document in store.documents()}
    started = datetime.now()
    with store.session(), store.transaction():  # one transaction for the lot (each call joins it)
        _verify_all(store, documents, bodies, sentences, started)
    store.checkpoint()
    return workspace


def _verify_all(store, documents, bodies, sentences, started) -> None:
    for number, (path, body) in enumerate(bodies.items()):
        scores = [SentenceScore(f"Fact {index} holds for the kelp forest.", 0, 10, 0.9 if (index + number) % 5 else 0.2, 0.05, "Fact", "sources/kelp.md", 1, None)
                  for index in range(sentences)]
        store.save_verification(documents[path].id, body_hash=body_hash(body), source_hashes="{}", model="bench", threshold=0.5, started_at=started, scores=scores)
        if number % 10 == 0:
            store.record_verdicts(path, [{"seq": 0, "sentence": scores[0].sentence, "evidence": "Fact", "evidence_chunk_id": None, "verdict": "accept",
                                          "note": None, "reviewer": "bench", "model_score": 0.9, "features": None}], seen={})


def timed(function, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--sentences", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        workspace = build(Path(scratch) / "ws", args.pages, args.sentences)
        print(f"{args.pages} verified pages of {args.sentences} sentences built in {time.perf_counter() - started:.1f} s")
        at_once = timed(lambda: summary(workspace))
        pages = sorted(path.relative_to(workspace.root).as_posix() for path in (workspace.root / "wiki/summaries").glob("*.md"))
        one_by_one = timed(lambda: [stored_review(workspace, page) for page in pages], repeat=1)
        result = summary(workspace)
        print(f"review summary: {result.verified} pages verified, {result.supported_share:.0%} of their sentences supported")
        print(f"{'':34} {'seconds':>8} {'ratio':>7}")
        print(f"{'summary, read at once':34} {at_once:8.3f} {1.0:7.2f}")
        print(f"{'summary, page by page (reference)':34} {one_by_one:8.3f} {one_by_one / at_once:7.2f}")
        command = [sys.executable, "-m", "llmwiki"]
        status = timed(lambda: subprocess.run([*command, "status", "-w", str(workspace.root)], capture_output=True, check=True), repeat=2)
        start_up = timed(lambda: subprocess.run([*command, "--help"], capture_output=True, check=True), repeat=2)
        print(f"{'llmwiki status (subprocess)':34} {status:8.3f} {status / at_once:7.2f}")
        print(f"{'llmwiki --help (start-up, reference)':34} {start_up:8.3f} {start_up / at_once:7.2f}")
        print(f"status beyond start-up: {status - start_up:.3f} s (goal: under 1 s at 1,000 pages)")


if __name__ == "__main__":
    main()
