"""Refusals on questions the workspace cannot answer, each S08 set in turn: CMU QA S08, leaving one set out at a time.

    python bench/refusals.py [--data ../shared/data/cmu-qa/S08] [--cache /tmp/llmwiki-bench-refusals] [--every 1]

bench/qa.py asks set 4's questions of a workspace of sets 1-3 as its
off-topic questions: 98 questions, on the set the refusal thresholds were
first read from. Here each set's questions are asked of a workspace of the
other three (four workspaces, kept in --cache), so every S08 question is
once off-topic (its article is absent) and three times answerable. The
corpus is interlinked: "What is the largest city in Romania?" asked without
the Romania article still finds Romania in passing in other articles, which
is what a refusal must tell apart from an answer. Printed per held-out set
and over all: off-topic questions refused (target >= 0.90), answerable
questions refused (target <= 0.05), and answerable fact questions answered
with a reference, so a stricter rule shows what it costs. The answer ranker
was trained on sets 1-3, so its P is in-sample for their answerable
questions and the answerable figures may flatter the rule a little.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.answer import answer_question  # noqa: E402
from llmwiki.backends import ExtractiveBackend  # noqa: E402
from llmwiki.pages import CITATION  # noqa: E402
from llmwiki.ranker import DEFAULT_RANKER, DEFAULT_SIMILARITY, load_ranker, load_similarity  # noqa: E402
from llmwiki.ranker.cmuqa import contains_reference, load_questions, reference_kind  # noqa: E402
from llmwiki.ranker.train import SETS, build_workspace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "cmu-qa" / "S08")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/llmwiki-bench-refusals"), help="where the four workspaces are built and kept")
    parser.add_argument("--every", type=int, default=1, help="ask every Nth question (1: all)")
    args = parser.parse_args()
    if not (args.data / "question_answer_pairs.txt").is_file():
        sys.exit(f"{args.data}: CMU QA S08 is absent (it lives in ../shared/data, see its README)")
    questions = load_questions(args.data)[:: args.every]
    ranker = load_ranker(DEFAULT_RANKER)
    similarity = load_similarity(DEFAULT_SIMILARITY)
    backend = ExtractiveBackend()
    # per held-out set: off-topic refused, off-topic asked, answerable refused, answerable asked, fact right, fact asked
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    for held_out in SETS:
        workspace = build_workspace(args.data, args.cache / f"without-{held_out}", tuple(name for name in SETS if name != held_out))
        verifier = workspace.verifier()
        row = counts[held_out]
        for number, entry in enumerate(questions, start=1):
            if number % 50 == 0 or number == len(questions):
                print(f"\r  without {held_out}: asked {number} of {len(questions)} questions", end="", file=sys.stderr, flush=True)
            answer = answer_question(workspace, entry["question"], backend=backend, verifier=verifier, ranker=ranker, similarity=similarity)
            if entry["set"] == held_out:
                row[0] += answer.refused
                row[1] += 1
                continue
            row[2] += answer.refused
            row[3] += 1
            if reference_kind(entry) == "fact":
                row[4] += contains_reference(CITATION.sub(" ", answer.text), entry)
                row[5] += 1
        print(file=sys.stderr)
    print(f"CMU QA S08, each set's questions asked of a workspace of the other three ({len(questions)} questions)")
    print(f"{'held out':<10}{'off-topic refused':>22}{'answerable refused':>22}{'fact answers right':>22}")
    total = [0] * 6
    for held_out in SETS:
        row = counts[held_out]
        total = [a + b for a, b in zip(total, row)]
        print(f"{held_out:<10}{f'{row[0] / max(row[1], 1):.3f} ({row[1]})':>22}{f'{row[2] / max(row[3], 1):.3f} ({row[3]})':>22}{f'{row[4] / max(row[5], 1):.3f} ({row[5]})':>22}")
    print(f"{'all':<10}{f'{total[0] / max(total[1], 1):.3f} ({total[1]})':>22}{f'{total[2] / max(total[3], 1):.3f} ({total[3]})':>22}{f'{total[4] / max(total[5], 1):.3f} ({total[5]})':>22}")
    print("targets: off-topic refused >= 0.90, answerable refused <= 0.05")


if __name__ == "__main__":
    main()
