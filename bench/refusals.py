"""Refusals and yes/no verdicts on questions the workspace cannot answer: S08 folds, and corpora the rules never saw.

    python bench/refusals.py [--data ../shared/data] [--cache /tmp/llmwiki-bench-refusals] [--every 1] [--only s08,cranfield,wice,sample]

S08 folds (where the thresholds are fitted): each set's questions are asked
of a workspace of the other three (four workspaces, kept in --cache), so
every S08 question is once off-topic (its article is absent) and three times
answerable. The corpus is interlinked: "What is the largest city in
Romania?" asked without the Romania article still finds Romania in passing
in other articles, which is what a refusal must tell apart from an answer.
Printed per held-out set and over all: off-topic questions refused (target
>= 0.90), off-topic questions given a yes/no verdict (target 0: a "yes" or
"no" from a sentence about something else reads as checked), answerable
questions refused (target <= 0.05), answerable fact questions answered with
a reference, and the balanced accuracy of verdicts on answerable yes/no
questions (a question left unsettled counts as wrong), with its two sides: the
share of yes references answered yes and of no references answered no; and the
share of answerable yes/no questions given the wrong verdict (a "yes" where the
reference says no, or the other way round), which the balanced accuracy counts
the same as "not settled" though a reader trusts it more.

Held out (no rule was fitted on them; all should be refused):
- cranfield: the 225 Cranfield queries (aeronautics) asked of the workspace
  without set 4;
- wice: the WiCE dev claims, asked as "Is it true that CLAIM?", of the same
  workspace (claims about people, events and companies, cited in Wikipedia);
- sample: the S08 questions about articles the sample workspace (workspace/)
  does not hold, asked of it; the questions about the six it holds are its
  answerable ones (in HTML, PDF, DOCX and text, not S08's plain text).

Held out, answerable: wice-evidence asks each WiCE dev claim as "Is it true
that CLAIM?" of a workspace holding the 349 claims' evidence pages (sources
only), and prints per WiCE label the share answered yes, answered no and
refused. A yes should follow support: high for "supported", low for
"not_supported", whose evidence fails to support the claim without
contradicting it, so a no is not owed there.

The answer ranker was trained on sets 1-3, so its P is in-sample for their
answerable questions and the answerable figures may flatter the rule a little.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.read.answer import answer_question  # noqa: E402
from llmwiki.text.questions import shape  # noqa: E402
from llmwiki.services import Services  # noqa: E402
from llmwiki.backends import ExtractiveBackend  # noqa: E402
from llmwiki.pages import CITATION  # noqa: E402
from llmwiki.read.ranker import DEFAULT_RANKER, DEFAULT_SIMILARITY, load_ranker, load_similarity  # noqa: E402
from llmwiki.read.ranker.cmuqa import contains_reference, load_questions, normalise, reference_kind  # noqa: E402
from training.ranker import SETS, build_workspace  # noqa: E402

CORPORA = ("s08", "cranfield", "wice", "sample", "wice-evidence")


@dataclass
class Tally:
    """What one workspace's questions came to."""

    offtopic: int = 0
    offtopic_refused: int = 0
    offtopic_verdicts: int = 0
    answerable: int = 0
    answerable_refused: int = 0
    fact: int = 0
    fact_right: int = 0
    yes_asked: int = 0
    yes_right: int = 0
    no_asked: int = 0
    no_right: int = 0
    wrong_verdicts: int = 0  # a yes where the reference says no, or a no where it says yes: worse than "not settled"

    def add(self, other: Tally) -> Tally:
        return Tally(**{name: getattr(self, name) + getattr(other, name) for name in self.__dataclass_fields__})

    def row(self, label: str) -> str:
        def share(part: int, whole: int) -> str:
            return f"{part / whole:.3f} ({whole})" if whole else "-"

        balanced = f"{(self.yes_right / self.yes_asked + self.no_right / self.no_asked) / 2:.3f} ({self.yes_asked}+{self.no_asked})" if self.yes_asked and self.no_asked else "-"
        sides = f"{self.yes_right / self.yes_asked:.3f} / {self.no_right / self.no_asked:.3f}" if self.yes_asked and self.no_asked else "-"
        wrong = f"{self.wrong_verdicts / (self.yes_asked + self.no_asked):.3f}" if self.yes_asked + self.no_asked else "-"
        return (f"{label:<12}{share(self.offtopic_refused, self.offtopic):>18}{self.offtopic_verdicts:>11}{share(self.answerable_refused, self.answerable):>20}"
                f"{share(self.fact_right, self.fact):>16}{balanced:>18}{sides:>16}{wrong:>15}")


HEADER = f"{'':<12}{'off-topic refused':>18}{'verdicts':>11}{'answerable refused':>20}{'fact right':>16}{'yes/no balanced':>18}{'yes / no right':>16}{'wrong verdict':>15}"


def answer_row(question: str, answer) -> dict:
    """What --answers writes of an answer: enough to diff two runs (the deciding reading where there is one)."""
    row = {key: value for key, value in answer.as_json().items() if key in ("answer", "verdict", "refused", "decided_by")}
    return {"question": question, **row}


def ask(workspace, entries: list[dict], label: str, models) -> Tally:
    """Ask each entry's question; an entry with answerable=False should be refused."""
    tally = Tally()
    if "nli" not in models:  # one model for every workspace asked; each keeps its own score cache
        models["nli"] = Services(workspace).nli
    services = Services(workspace, nli=models["nli"], backend=models["backend"], ranker=models["ranker"], similarity=models["similarity"])
    for number, entry in enumerate(entries, start=1):
        if number % 50 == 0 or number == len(entries):
            print(f"\r  {label}: asked {number} of {len(entries)} questions", end="", file=sys.stderr, flush=True)
        answer = answer_question(workspace, entry["question"], services=services)
        models["answered"].append(answer_row(f"{label}: {entry['question']}", answer))
        if not entry["answerable"]:
            tally.offtopic += 1
            tally.offtopic_refused += answer.refused
            tally.offtopic_verdicts += answer.verdict is not None
            if answer.verdict is not None and models["show"]:
                print(f"\n    {label} verdict off-topic: {entry['question']} -> {' '.join(answer.text.split())[:160]}", file=sys.stderr)
            continue
        tally.answerable += 1
        tally.answerable_refused += answer.refused
        if answer.refused and models["show"]:
            print(f"\n    {label} answerable refused: {entry['question']} -> {' '.join(answer.text.split())[:200]}", file=sys.stderr)
        kind = reference_kind(entry)
        if kind == "fact":
            tally.fact += 1
            tally.fact_right += contains_reference(CITATION.sub(" ", answer.text), entry)
        elif kind == "yes_no":
            reference = "yes" if sum(normalise(answer).startswith("yes") for answer in entry["answers"]) * 2 >= len(entry["answers"]) else "no"
            if reference == "yes":
                tally.yes_asked += 1
                tally.yes_right += answer.verdict == "yes"
            else:
                tally.no_asked += 1
                tally.no_right += answer.verdict == "no"
            tally.wrong_verdicts += answer.verdict is not None and answer.verdict != reference
            if answer.verdict != reference and models["show"]:
                print(f"\n    {label} {reference} reference, {answer.verdict or 'unsettled'}: {entry['question']} -> {' '.join(answer.text.split())[:200]}", file=sys.stderr)
    print(file=sys.stderr)
    return tally


def cranfield_queries(folder: Path) -> list[str]:
    text = (folder / "cran.qry").read_text(encoding="latin-1")
    return [" ".join(match.split()) for match in re.findall(r"^\.W\n(.*?)(?=^\.I\s|\Z)", text, flags=re.MULTILINE | re.DOTALL)]


def wice_questions(path: Path) -> list[str]:
    """Each distinct claim as a yes/no question: "Is it true that CLAIM?" (its final stop dropped)."""
    claims = dict.fromkeys(json.loads(line)["claim"].strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    return [f"Is it true that {claim.rstrip('.')}?" for claim in claims if claim]


def wice_workspace(path: Path, folder: Path):
    """A workspace holding the evidence pages of the WiCE dev claims (one source each, titled by its page's title),
    sources only, kept between runs; and the claims, each with its label."""
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.workspace import Workspace

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not (folder / "ingested").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        workspace = Workspace.init(folder, git=False)
        for number, row in enumerate(rows):
            lines = [line.strip() for line in row["evidence"] if line.strip()]
            title = lines[0].removeprefix("(meta data) TITLE:").strip() if lines and lines[0].startswith("(meta data)") else f"Evidence {number}"
            body = "\n\n".join(line for line in lines if not line.startswith("(meta data)"))
            (workspace.sources_dir / f"evidence-{number:03d}.md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
        ingest_paths(workspace, generate=False)
        (folder / "ingested").write_text("", encoding="utf-8")
    return Workspace.open(folder), [(row["claim"].strip(), row["label"]) for row in rows]


def ask_claims(workspace, claims: list[tuple[str, str]], models) -> dict[str, dict[str, int]]:
    """Each claim as "Is it true that CLAIM?" of the workspace holding its evidence: per label, how many were asked,
    answered yes, answered no and refused."""
    services = Services(workspace, nli=models["nli"], backend=models["backend"], ranker=models["ranker"], similarity=models["similarity"])
    counts: dict[str, dict[str, int]] = {}
    for number, (claim, label) in enumerate(claims, start=1):
        if number % 50 == 0 or number == len(claims):
            print(f"\r  wice evidence: asked {number} of {len(claims)} claims", end="", file=sys.stderr, flush=True)
        answer = answer_question(workspace, f"Is it true that {claim.rstrip('.')}?", services=services)
        models["answered"].append(answer_row(f"wice-evidence: {claim}", answer))
        row = counts.setdefault(label, {"asked": 0, "yes": 0, "no": 0, "refused": 0})
        row["asked"] += 1
        row["refused"] += answer.refused
        if answer.verdict in ("yes", "no"):
            row[answer.verdict] += 1
        if models["show"] and label in ("supported", "not_supported") and (answer.verdict == "yes") != (label == "supported"):
            print(f"\n    wice evidence {label}, {answer.verdict or ('refused' if answer.refused else 'unsettled')}: {claim} -> {' '.join(answer.text.split())[:200]}", file=sys.stderr)
    print(file=sys.stderr)
    return counts


def sample_workspace(folder: Path):
    """The sample workspace (workspace/) ingested into folder, kept between runs."""
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.workspace import Workspace

    if (folder / "wiki" / "index.md").is_file():
        return Workspace.open(folder)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(REPO / "workspace", folder, ignore=shutil.ignore_patterns(".llmwiki", "wiki"))
    config = folder / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('folder = "../datasets"', f'folder = "{REPO / "datasets"}"'), encoding="utf-8")
    workspace = Workspace.init(folder, git=False)
    ingest_paths(workspace)
    return workspace


def sample_articles(data: Path) -> set[str]:
    """The S08 articles (as load_questions names them) that the sample workspace holds, read by title."""
    stems = {path.stem for path in (REPO / "workspace" / "sources").iterdir()}
    held = set()
    for line in (data / "question_answer_pairs.txt").read_bytes().decode("latin-1").splitlines()[1:]:
        parts = line.split("\t")
        if len(parts) >= 6 and parts[0].strip().lower().replace("_", "-") in stems:
            folder, name = parts[5].strip().split("/")[-2:]
            held.add(f"sources/{folder}-{name}.txt")
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/llmwiki-bench-refusals"), help="where the workspaces are built and kept")
    parser.add_argument("--every", type=int, default=1, help="ask every Nth question (1: all)")
    parser.add_argument("--only", default=",".join(CORPORA), help=f"which of {', '.join(CORPORA)} to run")
    parser.add_argument("--show", action="store_true", help="print each off-topic question that got a verdict, each answerable question refused, and each answerable yes/no question answered otherwise than its reference")
    parser.add_argument("--answers", type=Path, help="write every answer with its question (JSON lines) here, to diff two runs")
    parser.add_argument("--yes-no-only", action="store_true", help="ask only the S08 questions shaped as yes/no (the verdict rules' figures, in a third of the time)")
    args = parser.parse_args()
    s08 = args.data / "cmu-qa" / "S08"
    if not (s08 / "question_answer_pairs.txt").is_file():
        sys.exit(f"{s08}: CMU QA S08 is absent (it lives in ../shared/data, see its README)")
    only = set(args.only.split(","))
    questions = load_questions(s08)[:: args.every]
    if args.yes_no_only:
        questions = [entry for entry in questions if shape(entry["question"]).yes_no]
    models = {"backend": ExtractiveBackend(), "ranker": load_ranker(DEFAULT_RANKER), "similarity": load_similarity(DEFAULT_SIMILARITY), "show": args.show,
              "answered": []}
    rows: list[tuple[str, Tally]] = []
    if "s08" in only:
        folds = []
        for held_out in SETS:
            workspace = build_workspace(s08, args.cache / f"without-{held_out}", tuple(name for name in SETS if name != held_out))
            entries = [dict(entry, answerable=entry["set"] != held_out) for entry in questions]
            folds.append((f"without {held_out}", ask(workspace, entries, f"without {held_out}", models)))
        total = Tally()
        for _, tally in folds:
            total = total.add(tally)
        rows += folds + [("S08 folds", total)]
    held_out_rows = []
    if only & {"cranfield", "wice"}:
        workspace = build_workspace(s08, args.cache / "without-set4", SETS[:3])
        if "cranfield" in only and (args.data / "cranfield" / "cran.qry").is_file():
            entries = [{"question": query, "answerable": False, "answers": []} for query in cranfield_queries(args.data / "cranfield")[:: args.every]]
            held_out_rows.append(("cranfield", ask(workspace, entries, "cranfield", models)))
        if "wice" in only and (args.data / "wice" / "dev.jsonl").is_file():
            entries = [{"question": question, "answerable": False, "answers": []} for question in wice_questions(args.data / "wice" / "dev.jsonl")[:: args.every]]
            held_out_rows.append(("wice", ask(workspace, entries, "wice", models)))
    if "sample" in only:
        workspace = sample_workspace(args.cache / "sample")
        held = sample_articles(s08)
        entries = [dict(entry, answerable=entry["article"] in held) for entry in questions]
        held_out_rows.append(("sample", ask(workspace, entries, "sample", models)))
    if held_out_rows:
        total = Tally()
        for _, tally in held_out_rows:
            total = total.add(tally)
        rows += held_out_rows + [("held out", total)]
    if rows:
        print(f"Refusals and verdicts ({len(questions)} S08 questions; 'verdicts': off-topic questions given a yes or a no)")
        print(HEADER)
        for label, tally in rows:
            print(tally.row(label))
        print("targets: off-topic refused >= 0.90, verdicts 0, answerable refused <= 0.05, yes/no balanced >= 0.75 (thresholds fitted on the S08 folds only)")
    if "wice-evidence" in only and (args.data / "wice" / "dev.jsonl").is_file():
        workspace, claims = wice_workspace(args.data / "wice" / "dev.jsonl", args.cache / "wice-evidence")
        models.setdefault("nli", Services(workspace).nli)
        counts = ask_claims(workspace, claims[:: args.every], models)
        print("\nWiCE dev claims asked of their own evidence pages (\"Is it true that CLAIM?\"; held out): yes / no / refused")
        for label in ("supported", "partially_supported", "not_supported"):
            row = counts.get(label)
            if row:
                print(f"  {label:<20} {row['yes'] / row['asked']:.3f} / {row['no'] / row['asked']:.3f} / {row['refused'] / row['asked']:.3f} ({row['asked']})")
        print("  a yes should follow support: high for supported, low for not_supported (which its evidence does not contradict, so no is not owed)")
    if args.answers:
        args.answers.write_text("".join(json.dumps(row) + "\n" for row in models["answered"]), encoding="utf-8")


if __name__ == "__main__":
    main()
