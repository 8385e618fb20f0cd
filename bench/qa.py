"""Question answering on the real CMU QA S08 corpus, with the extractive backend.

    python bench/qa.py [--data ../shared/data/cmu-qa/S08] [--every 1] [--cache /tmp/llmwiki-bench-qa] [--rebuild]
                       [--ranker llmwiki-ranker|none] [--similarity all-MiniLM-L6-v2|none]

Builds a workspace (ingest + wiki generation) from the articles of sets 1-3
and asks every distinct question of the corpus. Questions on sets 1-3 are
answerable; questions on set 4 (other articles, not in the workspace) are
off-topic and should be refused. Printed, each beside its reference in the
same run:

- fact questions (reference neither yes nor no): the share of answers that
  contain a reference answer (lower case, punctuation and citation marks dropped), overall and
  by the questioner's difficulty, beside the same share for the selected
  context, the ceiling of any answer that quotes the candidate sentences (one
  of them, or two in a row of one chunk, holds a reference: what a perfect
  ranking would reach), the top-1 and top-4 chunks of a plain BM25 search of
  the sources, then answer and top-1 chunk by the questioner's difficulty and by what
  the question asks for (``questions.shape``: who, when, how many, ...);
- yes/no questions: the share given a verdict, and the share of verdicts
  that match the reference;
- refusals: of off-topic questions (should be all) and of answerable ones
  (should be few);
- answers that open with an unresolved pronoun; citations that lead to a
  source chunk holding the quoted sentence;
- selection hit rate (the selection holds a chunk of the right article)
  beside plain BM25 top-4;
- seconds per question, in-process (median, p95).

The workspace is kept in --cache between runs (a build takes minutes);
--rebuild makes it again after a change to ingest or generation.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.read.answer import answer_question  # noqa: E402
from llmwiki.read.candidates import candidate_sentences  # noqa: E402
from llmwiki.read.candidates import shown as as_shown  # noqa: E402
from llmwiki.backends import ExtractiveBackend  # noqa: E402
from llmwiki.pages import CITATION  # noqa: E402
from llmwiki.text.questions import opens_with_pronoun, shape, unbracket  # noqa: E402
from llmwiki.read.ranker import DEFAULT_RANKER, DEFAULT_SIMILARITY, load_ranker, load_similarity  # noqa: E402
from llmwiki.read.ranker.cmuqa import contains_reference, load_questions, normalise, reference_kind  # noqa: E402
from llmwiki.read.search import search  # noqa: E402
from llmwiki.services import Services  # noqa: E402
from llmwiki.verify.nli import describe  # noqa: E402
from llmwiki.workspace import Workspace  # noqa: E402

ANSWERABLE_SETS = ("set1", "set2", "set3")


def build(data: Path, cache: Path, rebuild: bool) -> tuple[Workspace, float | None]:
    from llmwiki.publish.wiki import ingest_paths

    if cache.exists() and not rebuild and (cache / "wiki" / "index.md").is_file():
        return Workspace.open(cache), None
    shutil.rmtree(cache, ignore_errors=True)
    workspace = Workspace.init(cache, git=False)
    for folder in ANSWERABLE_SETS:
        for article in sorted((data / "data" / folder).glob("a*.txt")):
            shutil.copyfile(article, workspace.sources_dir / f"{folder}-{article.name}")
    started = time.perf_counter()
    ingest_paths(workspace)
    return workspace, time.perf_counter() - started


def answer_row(question: str, answer) -> dict:
    """What --answers writes of an answer: enough to diff two runs (the deciding reading where there is one)."""
    row = {key: value for key, value in answer.as_json().items() if key in ("answer", "verdict", "refused", "decided_by")}
    return {"question": question, **row}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "cmu-qa" / "S08")
    parser.add_argument("--every", type=int, default=1, help="ask every Nth question (1: all)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/llmwiki-bench-qa"), help="where the workspace is built and kept")
    parser.add_argument("--rebuild", action="store_true", help="build the workspace again")
    parser.add_argument("--show", type=int, default=0, help="print N wrong fact answers and yes/no verdicts, for reading")
    parser.add_argument("--ranker", default="llmwiki-ranker", help='the answer ranker ("none": the hand ranking alone; see bench/ranker.py)')
    parser.add_argument("--similarity", default=DEFAULT_SIMILARITY, help='the sentence embedder that compares questions with sentences ("none": without it)')
    parser.add_argument("--answers", type=Path, help="write every answer with its question (JSON lines) here, to diff two runs")
    args = parser.parse_args()
    if not (args.data / "question_answer_pairs.txt").is_file():
        sys.exit(f"{args.data}: CMU QA S08 is absent (it lives in ../shared/data, see its README)")
    workspace, build_seconds = build(args.data, args.cache, args.rebuild)
    questions = load_questions(args.data)[:: args.every]
    services = Services(workspace, backend=ExtractiveBackend(), ranker=load_ranker(args.ranker, int8=workspace.config.verification.int8),
                        similarity=load_similarity(args.similarity, int8=workspace.config.verification.int8))
    services.verifier.score(["warm up"], ["warm up"])
    if services.ranker is not None:
        services.ranker.score(["warm up"], ["warm up"])
    if services.similarity is not None:
        services.similarity.encode(["warm up"])
    counts: dict[str, int] = defaultdict(int)
    by_difficulty: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # answered right, top-1 right, asked
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # the same by what the question asks for (who, when, ...)
    seconds = []
    answered: list[dict] = []
    shown = 0
    for number, entry in enumerate(questions, start=1):
        if number % 50 == 0 or number == len(questions):
            print(f"\r  asked {number} of {len(questions)} questions", end="", file=sys.stderr, flush=True)
        began = time.perf_counter()
        answer = answer_question(workspace, entry["question"], services=services)
        seconds.append(time.perf_counter() - began)
        answered.append(answer_row(entry["question"], answer))
        if entry["set"] not in ANSWERABLE_SETS:
            counts["offtopic"] += 1
            counts["offtopic_refused"] += answer.refused
            continue
        kind = reference_kind(entry)
        counts["answerable"] += 1
        counts["answerable_refused"] += answer.refused
        counts["pronoun_start"] += opens_with_pronoun(answer.text)
        paths = [item.path for item in answer.selection.items if item.chunk_id is not None]
        counts["selection_hit"] += entry["article"] in paths
        baseline = search(workspace, entry["question"], scope="sources", limit=4)
        counts["bm25_top4_hit"] += any(hit.path == entry["article"] for hit in baseline.hits)
        for citation in answer.citations:
            counts["citations"] += 1
            counts["citations_to_sources"] += citation.path.startswith("sources/")
        for sentence, chunk_id in re.findall(r"(.+?) \[c(\d+)\]", CITATION.sub(lambda m: f" [c{m.group(1)}]", answer.text)):
            quoted = " ".join(unbracket(sentence.split(" — ", 1)[-1]).split()).strip()
            chunk = next((citation.text for citation in answer.citations if citation.chunk_id == int(chunk_id)), "")
            counts["quotes"] += 1
            counts["quotes_found"] += " ".join(quoted.replace("[", "").split())[-60:] in " ".join(chunk.split())
        if kind == "fact":
            counts["fact"] += 1
            # Citation marks are read past, as a reader does: a reference of two sentences is held by an
            # answer that quotes both ("A. [c1] B. [c1]"), and a wiki page's text carries marks too.
            right = contains_reference(CITATION.sub(" ", answer.text), entry)
            context = CITATION.sub(" ", " ".join(item.text for item in answer.selection.items))
            texts = workspace.store.chunk_texts([hit.chunk_id for hit in baseline.hits])
            top1 = bool(baseline.hits) and contains_reference(texts.get(baseline.hits[0].chunk_id, ""), entry)
            top4 = contains_reference(" ".join(texts.values()), entry)
            counts["fact_right"] += right
            counts["fact_context"] += contains_reference(context, entry)
            counts["fact_top1"] += top1
            counts["fact_top4"] += top4
            # What any answer that quotes one or two of the candidate sentences could reach: the ceiling of ranking.
            candidates, _ = candidate_sentences(workspace, entry["question"])
            texts = [as_shown(candidate) for candidate in candidates]
            pairs = [f"{first} {second}" for first, second, a, b in zip(texts, texts[1:], candidates, candidates[1:]) if a.chunk_id == b.chunk_id]
            counts["fact_candidates"] += any(contains_reference(text, entry) for text in texts + pairs)
            for row in (by_difficulty[entry["difficulty"]], by_kind[shape(entry["question"]).kind]):
                row[0] += right
                row[1] += top1
                row[2] += 1
            if args.show and not right and contains_reference(context, entry) and shown < args.show:
                shown += 1
                print(f"\nQ: {entry['question']}\n  ref: {entry['answers']}\n  got: {answer.text[:300]}", file=sys.stderr)
        elif kind == "yes_no":
            counts["yes_no"] += 1
            reference = "yes" if sum(normalise(answer).startswith("yes") for answer in entry["answers"]) * 2 >= len(entry["answers"]) else "no"
            counts["yes_no_verdict"] += answer.verdict is not None
            counts["yes_no_right"] += answer.verdict == reference
            counts[f"verdict_{reference}"] += answer.verdict is not None
            counts[f"right_{reference}"] += answer.verdict == reference
            counts[f"reference_{reference}"] += 1
            if args.show and answer.verdict != reference and shown < args.show:
                shown += 1
                print(f"\nQ: {entry['question']} (reference {reference}, verdict {answer.verdict})\n  got: {answer.text[:300]}", file=sys.stderr)
    print(file=sys.stderr)

    def share(part: str, whole: str) -> str:
        return f"{counts[part] / max(counts[whole], 1):.3f}"

    built = f"built (ingest + wiki) in {build_seconds:.1f} s" if build_seconds is not None else f"reused from {args.cache}"
    print(f"CMU QA S08: workspace of sets 1-3 {built}; {len(questions)} questions ({counts['answerable']} answerable, {counts['offtopic']} off-topic on set 4)")
    ranker, similarity = services.ranker, services.similarity
    if ranker is None:
        print("answer ranker: none (the hand ranking alone)")
    elif args.ranker == DEFAULT_RANKER:
        print(f"answer ranker: {describe(ranker)}, trained on S08 sets 1-3: the fact figures below are in-sample (bench/ranker.py: held out)")
    else:
        print(f"answer ranker: {describe(ranker)}")
    print(f"question/sentence similarity: {similarity.name if similarity is not None else 'none'}")
    print(f"{'measure':<66}{'value':>8}")
    print(f"fact questions ({counts['fact']}): answer / selected context / BM25 top-1 chunk / BM25 top-4 chunks contain a reference answer")
    print(f"{'  answer (extractive, product)':<66}{share('fact_right', 'fact'):>8}")
    print(f"{'  selected context':<66}{share('fact_context', 'fact'):>8}")
    print(f"{'  ceiling: one candidate sentence or two in a row (perfect ranking)':<66}{share('fact_candidates', 'fact'):>8}")
    print(f"{'  reference: BM25 top-1 source chunk':<66}{share('fact_top1', 'fact'):>8}")
    print(f"{'  reference: BM25 top-4 source chunks':<66}{share('fact_top4', 'fact'):>8}")
    for difficulty, (right, top1, asked) in sorted(by_difficulty.items()):
        print(f"{f'  difficulty {difficulty} ({asked}): answer / top-1 chunk':<66}{right / asked:>8.3f} {top1 / asked:.3f}")
    for kind, (right, top1, asked) in sorted(by_kind.items(), key=lambda item: -item[1][2]):
        print(f"{f'  asks {kind} ({asked}): answer / top-1 chunk':<66}{right / asked:>8.3f} {top1 / asked:.3f}")
    print(f"yes/no questions ({counts['yes_no']}; reference yes {counts['reference_yes']}, no {counts['reference_no']})")
    print(f"{'  given a yes/no verdict':<66}{share('yes_no_verdict', 'yes_no'):>8}")
    print(f"{'  verdict matches the reference (of those given)':<66}{share('yes_no_right', 'yes_no_verdict'):>8}")
    print(f"{'  right when the reference is yes / no (of those given)':<66}{share('right_yes', 'verdict_yes'):>8} {share('right_no', 'verdict_no')}")
    print(f"{'  reference: always yes (share of yes references)':<66}{share('reference_yes', 'yes_no'):>8}")
    print(f"{'off-topic questions refused (set 4 asked of sets 1-3)':<66}{share('offtopic_refused', 'offtopic'):>8}")
    print(f"{'answerable questions refused':<66}{share('answerable_refused', 'answerable'):>8}")
    print(f"{'answers opening with an unresolved pronoun':<66}{counts['pronoun_start']:>8}")
    print(f"{'citations to source chunks (not wiki pages)':<66}{share('citations_to_sources', 'citations'):>8}")
    print(f"{'quoted sentences found in the chunk they cite':<66}{share('quotes_found', 'quotes'):>8}")
    print(f"{'selection holds a chunk of the right article':<66}{share('selection_hit', 'answerable'):>8}")
    print(f"{'  reference: BM25 top-4 source chunks hold the article':<66}{share('bm25_top4_hit', 'answerable'):>8}")
    seconds.sort()
    print(f"seconds per question, in-process: median {statistics.median(seconds):.3f}, p95 {seconds[int(len(seconds) * 0.95) - 1]:.3f}")
    if args.answers:
        args.answers.write_text("".join(json.dumps(row) + "\n" for row in answered), encoding="utf-8")
    print("targets: fact >= 0.72 and top-1 + 0.05; yes/no verdicts >= 0.90, right >= 0.70; off-topic refused >= 0.90, answerable refused <= 0.05; 0 pronoun starts; median < 0.5 s")


if __name__ == "__main__":
    main()
