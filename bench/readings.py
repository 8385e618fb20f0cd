"""Each reading's measured effect: the answers it decides, how many are right, and how many the answer without it gets right.

    python bench/readings.py [--data ../shared/data] [--only pool,wice,s08,realdocs] [--every-pair 100] [--every-question 2] [--write]

The readings are iterated from the registry (``llmwiki.read.readings.registry``), never found by their words: every
answer is made under ``readings.recording()``, which reads every reading of each list, also past the one that
decided, so the answer without a reading is the next decision in its list. Four corpora, each with what a right
answer is:

- pool: the NLI pool's labelled pairs (no S08, no WiCE), every Nth (``--every-pair``), asked as "Is it true that
  HYPOTHESIS?" of the premise alone: entailment wants a yes, contradiction a no, neutral neither, "not entailed"
  anything but a yes.
- wice: WiCE dev claims asked of their own evidence page: supported wants a yes, not supported anything but a yes
  (its evidence does not contradict it: a no is not owed); partly supported claims are left out.
- s08: CMU QA S08 questions of sets 1-3 asked of their workspace (bench/qa.py's), every Nth (``--every-question``):
  a yes/no question wants its reference, a fact question an answer holding a reference; questions on set 4 (not
  in the workspace) want a refusal. The readings were written after S08 questions: it is the corpus they were
  fitted on.
- realdocs: the realdocs question sets asked of bench/realdocs.py's workspace, as its scorer scores them.

Printed per reading, in registry order, per corpus: decided / right / right without it; then each reading that
decides nothing, or is right less often than the answer without it, on every corpus but S08: what the issue of
the registry removes. --write keeps the figures in docs/readings-figures.json and rewrites docs/readings.md.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import gzip
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from llmwiki.policy import ANSWER_POLICY  # noqa: E402
from llmwiki.read.readings import Decision, decide, recording  # noqa: E402
from llmwiki.read.readings.case import case_of_passages  # noqa: E402
from llmwiki.read.readings.registry import ANSWER, LISTS, every_reading  # noqa: E402

CORPORA = ("pool", "wice", "s08", "realdocs")
WRITTEN_ON = "s08"  # where the readings were written: their figures there do not count for keeping them
POOL_LABELS = ("entailment", "neutral", "contradiction", "not entailed")

Judge = Callable[[str | None, bool, str], bool]  # (verdict, refused, text) -> right


class Tally:
    """Per reading: answers it decided, how many were right, how many the answer without it got right."""

    def __init__(self) -> None:
        self.decided: collections.Counter = collections.Counter()
        self.right: collections.Counter = collections.Counter()
        self.without_right: collections.Counter = collections.Counter()
        self.asked = 0
        self.answers_right = 0

    def add(self, decided_by: str, verdict: str | None, refused: bool, text: str, recorded, judge: Judge) -> None:
        self.asked += 1
        right = judge(verdict, refused, text)
        self.answers_right += right
        self.decided[decided_by] += 1
        self.right[decided_by] += right
        without = without_it(decided_by, recorded)
        self.without_right[decided_by] += judge(without.verdict, without.refused, without.text) if without is not None else judge(None, True, "")


def without_it(name: str, recorded) -> Decision | None:
    """The decision the answer would have come to with the reading ``name`` left out of its list: the next decision
    recorded in the list where it decided (None when no reading after it decides)."""
    for item in recorded:
        if item.first >= 0 and item.decisions[item.first][0] == name:
            return next((decision for _, decision in item.decisions[item.first + 1:] if decision is not None), None)
    return None


class Models:
    """The shipped verifier for cases read without a workspace (no ranker, no sentence embedder: one passage)."""

    ranker = None
    similarity = None

    def __init__(self) -> None:
        from llmwiki.config import VerificationConfig
        from llmwiki.verify.nli import load_verifier

        shipped = VerificationConfig()
        self.verifier = load_verifier(shipped.model, int8=shipped.int8, max_length=shipped.max_length, runtime=shipped.runtime)


def ask_passages(tally: Tally, question: str, passages: list[tuple[str, str]], judge: Judge, models: Models) -> None:
    with recording() as recorded:
        decision = decide(ANSWER, case_of_passages(question, passages, services=models, policy=ANSWER_POLICY), list_name="answer")
    tally.add(decision.by, decision.verdict, decision.refused, decision.text, recorded, judge)


def ask_workspace(tally: Tally, workspace, question: str, judge: Judge, services) -> None:
    from llmwiki.read.answer import answer_question

    with recording() as recorded:
        answer = answer_question(workspace, question, services=services)
    tally.add(answer.decided_by, answer.verdict, answer.refused, answer.text, recorded, judge)


def pool(path: Path, every: int, models: Models) -> Tally:
    tally = Tally()
    wants = {"entailment": lambda verdict, refused, text: verdict == "yes", "contradiction": lambda verdict, refused, text: verdict == "no",
             "neutral": lambda verdict, refused, text: verdict is None, "not entailed": lambda verdict, refused, text: verdict != "yes"}
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % every:
                continue
            pair = json.loads(line)
            hypothesis = pair["h"].strip().rstrip(".")
            ask_passages(tally, f"Is it true that {hypothesis[:1].lower() + hypothesis[1:]}?", [("", pair["p"])], wants[POOL_LABELS[pair["y"]]], models)
            if tally.asked % 100 == 0:
                print(f"\r  pool: {tally.asked} pairs", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return tally


def wice(path: Path, models: Models) -> Tally:
    tally = Tally()
    for line in path.read_text(encoding="utf-8").splitlines():
        claim = json.loads(line)
        if claim["label"] == "partially_supported":
            continue
        evidence = [sentence for sentence in claim["evidence"] if not sentence.startswith("(meta data)")]
        title = next((sentence.split("TITLE:", 1)[1].strip() for sentence in claim["evidence"] if "TITLE:" in sentence), "")
        text = claim["claim"].strip().rstrip(".")
        judge = (lambda verdict, refused, text: verdict == "yes") if claim["label"] == "supported" else (lambda verdict, refused, text: verdict != "yes")
        ask_passages(tally, f"Is it true that {text[:1].lower() + text[1:]}?", [(title, "\n\n".join(evidence))], judge, models)
        if tally.asked % 50 == 0:
            print(f"\r  wice: {tally.asked} claims", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return tally


def s08(data: Path, every: int) -> Tally:
    import qa  # bench/qa.py: its workspace and its scorer

    from llmwiki.pages import CITATION
    from llmwiki.read.ranker.cmuqa import contains_reference, load_questions, normalise, reference_kind
    from llmwiki.services import Services

    workspace, _ = qa.build(data, Path("/tmp/llmwiki-bench-qa"), False)
    services = Services(workspace)
    tally = Tally()
    for number, entry in enumerate(load_questions(data)[::every], start=1):
        kind = reference_kind(entry) if entry["set"] in qa.ANSWERABLE_SETS else "off-topic"
        if kind == "off-topic":
            judge = lambda verdict, refused, text: refused  # noqa: E731
        elif kind == "yes_no":  # as bench/qa.py reads the reference: yes where most answers say yes
            reference = "yes" if sum(normalise(answer).startswith("yes") for answer in entry["answers"]) * 2 >= len(entry["answers"]) else "no"
            judge = lambda verdict, refused, text, reference=reference: verdict == reference  # noqa: E731
        elif kind == "fact":
            judge = lambda verdict, refused, text, entry=entry: not refused and contains_reference(CITATION.sub(" ", text), entry)  # noqa: E731
        else:
            continue  # neither a fact nor a yes/no reference (bench/qa.py counts neither)
        ask_workspace(tally, workspace, entry["question"], judge, services)
        if number % 50 == 0:
            print(f"\r  s08: {number} questions", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return tally


def realdocs(data: Path) -> Tally:
    import realdocs as bench  # bench/realdocs.py: its workspace and its question sets

    from llmwiki.services import Services
    from llmwiki.workspace import Workspace

    path = Path("/tmp/llmwiki-bench-realdocs")
    bench.build(data, path, rebuild=False)
    workspace = Workspace.open(path)
    services = Services(workspace)
    tally = Tally()
    norm = lambda text: re.sub(r"\s+", " ", (text or "").lower())  # noqa: E731
    for rows in bench.question_sets(data).values():
        for row in rows:
            if row["kind"] == "fact":
                judge = lambda verdict, refused, text, row=row: not refused and any(norm(reference) in norm(text) for reference in row["references"])  # noqa: E731
            elif row["kind"] == "yesno":
                judge = lambda verdict, refused, text, row=row: verdict == row["references"][0]  # noqa: E731
            else:
                judge = lambda verdict, refused, text: refused  # noqa: E731
            ask_workspace(tally, workspace, row["question"], judge, services)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--only", default=",".join(CORPORA), help=f"which of {', '.join(CORPORA)} to run")
    parser.add_argument("--every-pair", type=int, default=100, help="ask every Nth pair of the NLI pool")
    parser.add_argument("--every-question", type=int, default=2, help="ask every Nth S08 question")
    parser.add_argument("--write", action="store_true", help="keep the figures in docs/readings-figures.json and rewrite docs/readings.md")
    args = parser.parse_args()
    only = [name for name in CORPORA if name in args.only.split(",")]
    paths = {"pool": args.data / "nli" / "pool.jsonl.gz", "wice": args.data / "wice" / "dev.jsonl", "s08": args.data / "cmu-qa" / "S08",
             "realdocs": args.data / "realdocs"}
    tallies: dict[str, Tally] = {}
    models = None
    for name in only:
        if not paths[name].exists():
            print(f"{name}: {paths[name]} is absent (it lives in ../shared/data, see its README); skipped")
            continue
        if name in ("pool", "wice") and models is None:
            models = Models()
        tallies[name] = (pool(paths[name], args.every_pair, models) if name == "pool" else wice(paths[name], models) if name == "wice"
                         else s08(paths[name], args.every_question) if name == "s08" else realdocs(paths[name]))
    corpora = list(tallies)
    print("Readings, in the order they are read; per corpus: decided / right / right without it")
    print(f"{'reading':<34}" + "".join(f"{name:>22}" for name in corpora))
    for list_name, readings in LISTS.items():
        print(f"-- {list_name}")
        for item in readings:
            print(f"{item.name:<34}" + "".join(f"{f'{t.decided[item.name]} / {t.right[item.name]} / {t.without_right[item.name]}':>22}" for t in tallies.values()))
    print(f"{'answers right (of asked)':<34}" + "".join(f"{f'{t.answers_right} of {t.asked}':>22}" for t in tallies.values()))
    others = [name for name in corpora if name != WRITTEN_ON]
    # No corpus here reaches these: a setting (the blacklist), a question about the wiki itself, a model's verdict (no
    # generating backend runs offline). They are kept without figures, not removed for deciding nothing.
    unreachable = {item.name for item in (*LISTS["selection"], *LISTS["model"])} | {"the wiki as a whole", "the statement"}
    removable = [item.name for item in every_reading() if others and item.name not in unreachable and all(
        tallies[name].decided[item.name] == 0 or tallies[name].right[item.name] < tallies[name].without_right[item.name] for name in others)]
    print(f"decides nothing, or is right less often than the answer without it, on every corpus but {WRITTEN_ON} ({', '.join(others)}):")
    print("  " + (", ".join(removable) or "none"))
    print(f"not reached by these corpora (a setting, a question about the wiki, a model's verdict): {', '.join(sorted(unreachable - {'the statement'}))}")
    if args.write:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        figures = {"date": datetime.date.today().isoformat(), "commit": commit, "corpora": corpora,
                   "readings": {item.name: {name: {"decided": t.decided[item.name], "right": t.right[item.name], "without_right": t.without_right[item.name]}
                                            for name, t in tallies.items()} for item in every_reading()}}
        (REPO / "docs" / "readings-figures.json").write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        from llmwiki.reference import main as write_references

        write_references([])


if __name__ == "__main__":
    main()
