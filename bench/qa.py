"""Question answering on the real CMU QA S08 corpus, with the extractive backend.

    python bench/qa.py [--data ../shared/data/cmu-qa/S08] [--limit 0]

Builds a workspace from the S08 articles (ingest + wiki generation), then asks
every distinct question in question_answer_pairs.txt and prints:
- selection hit rate: the share of questions whose selected context holds a
  chunk of the right article: a chunk of the article itself, or of a wiki
  page derived from it (its summary), or, counted separately, of any wiki
  page that cites it (concept pages quote several articles);
- the share of answers with at least one citation, among questions where
  anything was selected;
- median and p95 seconds per question;
and, as a reference in the same run, the hit rate of a plain BM25 search of
the raw sources (top 4 chunks, no wiki).
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

from llmwiki.answer import answer_question  # noqa: E402
from llmwiki.backends import ExtractiveBackend  # noqa: E402
from llmwiki.ingest import ingest_paths  # noqa: E402
from llmwiki.search import search  # noqa: E402
from llmwiki.workspace import Workspace  # noqa: E402


def load_questions(data: Path) -> list[tuple[str, str]]:
    """(question, article source path in the workspace), distinct questions, file order."""
    text = (data / "question_answer_pairs.txt").read_bytes().decode("latin-1").replace("\r\n", "\n").replace("\r", "\n")
    seen = {}
    for line in text.split("\n")[1:]:
        parts = line.split("\t")
        if len(parts) < 6 or not parts[1].strip() or not parts[5].strip():
            continue
        question, article = parts[1].strip(), parts[5].strip()  # e.g. data/set3/a4
        folder, name = article.split("/")[-2:]
        seen.setdefault(question, f"sources/{folder}-{name}.txt")
    return list(seen.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "cmu-qa" / "S08")
    parser.add_argument("--limit", type=int, default=0, help="ask only the first N questions (0: all)")
    args = parser.parse_args()
    articles = sorted((args.data / "data").glob("set*/a*.txt"))
    if not articles:
        sys.exit(f"no articles under {args.data}/data: the CMU QA corpus lives in ../shared/data (see its README)")
    questions = load_questions(args.data)
    if args.limit:
        questions = questions[: args.limit]

    with tempfile.TemporaryDirectory() as scratch:
        workspace = Workspace.init(Path(scratch) / "ws", git=False)
        for article in articles:
            shutil.copyfile(article, workspace.sources_dir / f"{article.parent.name}-{article.name}")
        started = time.perf_counter()
        ingest_paths(workspace)
        build_seconds = time.perf_counter() - started
        store = workspace.store
        derived: dict[str, set[str]] = {}  # wiki page -> sources it is derived from (summary)
        citing: dict[str, set[str]] = {}  # wiki page -> sources it cites
        for document in store.documents(kind="wiki"):
            targets = {path for kind, path in store.references(document.id) if kind == "cites"}
            citing[document.path] = targets
            if document.path.startswith("wiki/summaries/"):
                derived[document.path] = targets

        backend = ExtractiveBackend()
        strict_hits = lenient_hits = baseline_hits = selected = cited = 0
        seconds = []
        for question, article in questions:
            began = time.perf_counter()
            answer = answer_question(workspace, question, backend=backend)
            seconds.append(time.perf_counter() - began)
            paths = [item.path for item in answer.selection.items if item.chunk_id is not None]
            strict_hits += any(path == article or article in derived.get(path, ()) for path in paths)
            lenient_hits += any(path == article or article in citing.get(path, ()) for path in paths)
            if answer.selection.items:
                selected += 1
                cited += bool(answer.citations) or any(item.kind.startswith("dataset") for item in answer.selection.items)
            baseline = search(workspace, question, scope="sources", limit=4)
            baseline_hits += any(hit.path == article for hit in baseline.hits)

    count = len(questions)
    print(f"corpus: {len(articles)} articles; workspace built (ingest + wiki) in {build_seconds:.1f} s; {count} distinct questions")
    print(f"{'measure':<62}{'value':>8}")
    print(f"{'selection holds the article or its summary (strict)':<62}{strict_hits / count:>8.3f}")
    print(f"{'selection holds the article or any page citing it':<62}{lenient_hits / count:>8.3f}")
    print(f"{'reference: BM25 top-4 raw source chunks hold the article':<62}{baseline_hits / count:>8.3f}")
    print(f"{'answers with a citation, when anything was selected':<62}{cited / max(selected, 1):>8.3f}")
    print(f"{'questions with anything selected':<62}{selected / count:>8.3f}")
    seconds.sort()
    print(f"seconds per question (extractive): median {statistics.median(seconds):.3f}, p95 {seconds[int(len(seconds) * 0.95) - 1]:.3f}")
    print("targets: hit rate >= 0.90; citations 1.00 when selected; median < 0.5 s")


if __name__ == "__main__":
    main()
