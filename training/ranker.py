"""Train the answer ranker on CMU QA S08: the shipped NLI verifier fine-tuned to tell which sentence holds the answer.

    python -m training.ranker [--data ../shared/data/cmu-qa/S08] [--workspace /tmp/llmwiki-ranker-workspace]
                                   [--recollect] [--out llmwiki/read/ranker/weights] [--sets set1,set2,set3] [--hold-out SET]
                                   [--epochs 1] [--lr 3e-5]

Data: every fact question of S08 (reference neither yes nor no) is asked of a
workspace of all four sets, as an analyst would ask it; the sentences the
extractive answer chooses from are labelled by whether they hold a
reference answer as the answer would show them (an opening "he" resolved).
Pairs: (title: sentence, question), up to 3 positives per question (label
entailment) and 8 negatives (the 6 best-ranked by hand that hold no
reference, and 2 others; label not-entailment), trained with the
verifier's loss from its shipped weights (``llmwiki.verify.train``).

--written TSV adds questions written here from real documentation (corpus, question, references; in
training/data/, never the realdocs question sets, which are for measuring), asked of the realdocs
workspace that bench/realdocs.py builds. Measured, not shipped: see docs/experiments.md.

--hold-out SET trains on the other sets and prints how the held-out set's
questions rank (hand ranking against hand + ranker) instead of writing
weights; bench/ranker.py does this for each set. Without it the model is
trained on --sets (default sets 1-3: bench/qa.py asks set 4's questions as
off-topic ones, of a workspace without set 4, so the shipped model must not
have seen them) and written to --out (fp16, SHA256SUMS, training.json).
One epoch takes about 2-3 minutes on a 2-core CPU.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

from llmwiki.read.ranker import MAX_LENGTH, RANKED, SIMILARITY_WEIGHT, WEIGHT, WEIGHTS_DIR, ranker_input
from llmwiki.read.ranker.cmuqa import contains_reference, load_questions, reference_kind

SETS = ("set1", "set2", "set3", "set4")
POSITIVES = 3
HARD_NEGATIVES = 6
OTHER_NEGATIVES = 2


def build_workspace(data: Path, folder: Path, sets: tuple[str, ...] = SETS):
    """A workspace of the S08 articles of ``sets`` (all four by default), kept in ``folder`` between runs."""
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.workspace import Workspace

    if (folder / "wiki" / "index.md").is_file():
        return Workspace.open(folder)
    shutil.rmtree(folder, ignore_errors=True)
    workspace = Workspace.init(folder, git=False)
    for name in sets:
        for article in sorted((data / "data" / name).glob("a*.txt")):
            shutil.copyfile(article, workspace.sources_dir / f"{name}-{article.name}")
    ingest_paths(workspace)
    return workspace


def collect(workspace, questions: list[dict]) -> list[dict]:
    """Per fact question: its candidates' ranker inputs, whether each holds a reference as shown, and the hand ranking."""
    from llmwiki.read.candidates import candidate_sentences, shown

    rows = []
    for number, entry in enumerate(questions, start=1):
        if number % 25 == 0 or number == len(questions):
            print(f"\r  collected {number} of {len(questions)} questions", end="", file=sys.stderr, flush=True)
        candidates, ranking = candidate_sentences(workspace, entry["question"])
        rows.append({"question": entry["question"], "set": entry["set"], "inputs": [ranker_input(candidate.sentence, candidate.referent) for candidate in candidates],
                     "labels": [contains_reference(shown(candidate), entry) for candidate in candidates], "ranking": [index for _, index in ranking],
                     "scores": [score for score, _ in ranking], "antecedents": [candidate.quoted_before for candidate in candidates]})
    print(file=sys.stderr)
    return rows


def collected(data: Path, workspace_folder: Path, *, again: bool = False) -> list[dict]:
    """``collect`` over every S08 fact question, kept beside the workspace (collecting takes minutes).
    The kept pairs hold the hand ranking of the code that collected them: ``again`` after changing
    selection or ranking."""
    cache = workspace_folder / "ranker-pairs.json"
    if cache.is_file() and not again:
        print(f"  pairs reused from {cache} (--recollect after a change to selection or ranking)", file=sys.stderr)
        return json.loads(cache.read_text(encoding="utf-8"))
    workspace = build_workspace(data, workspace_folder)
    rows = collect(workspace, [entry for entry in load_questions(data) if reference_kind(entry) == "fact"])
    cache.write_text(json.dumps(rows), encoding="utf-8")
    return rows


def load_written(path: Path) -> list[dict]:
    """Questions written here from real documentation (``training/data/realdocs_questions.tsv``: corpus, question,
    references separated by " | "), as ``load_questions`` gives S08's: the corpus is the set."""
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            corpus, question, references = line.split("\t")[:3]
            entries.append({"question": question.strip(), "set": corpus.strip(), "answers": [reference.strip() for reference in references.split("|")]})
    return entries


def collected_written(path: Path, workspace_folder: Path, *, again: bool = False) -> list[dict]:
    """``collect`` over the written questions, asked of the realdocs workspace that ``bench/realdocs.py`` builds, kept
    beside it."""
    from llmwiki.workspace import Workspace

    cache = workspace_folder / f"ranker-{path.stem}-pairs.json"
    questions = path.read_text(encoding="utf-8")
    kept = json.loads(cache.read_text(encoding="utf-8")) if cache.is_file() and not again else {}
    if kept.get("questions") == questions:  # the rows of these very questions
        return kept["rows"]
    if not (workspace_folder / "wiki" / "index.md").is_file():
        sys.exit(f"{workspace_folder}: no realdocs workspace; build it with: python bench/realdocs.py --workspace {workspace_folder}")
    rows = collect(Workspace.open(workspace_folder), load_written(path))
    cache.write_text(json.dumps({"questions": questions, "rows": rows}), encoding="utf-8")
    return rows


def training_pairs(rows: list[dict], *, seed: int = 7) -> list[tuple[str, str, int]]:
    """(premise, question, label): 0 = holds the answer, 3 = does not (the verifier's two-way label)."""
    rng = random.Random(seed)
    pairs = []
    for row in rows:
        positives = [index for index in row["ranking"] if row["labels"][index]]
        if not positives:
            continue
        negatives = [index for index in row["ranking"] if not row["labels"][index]]
        chosen = negatives[:HARD_NEGATIVES] + rng.sample(negatives[HARD_NEGATIVES:], min(OTHER_NEGATIVES, len(negatives[HARD_NEGATIVES:])))
        pairs += [(row["inputs"][index], row["question"], 0) for index in positives[:POSITIVES]]
        pairs += [(row["inputs"][index], row["question"], 3) for index in chosen]
    return pairs


def train(pairs: list[tuple[str, str, int]], *, epochs: float = 1.0, lr: float = 3e-5, batch_size: int = 16, seed: int = 7, threads: int = 0):
    """(model, tokenizer): the shipped verifier fine-tuned on the pairs."""
    import torch

    from llmwiki.verify.train import WEIGHTS_DIR as VERIFIER_WEIGHTS
    from llmwiki.verify.train import load_shipped, loss_for

    if not pairs:
        raise ValueError("no training pairs: none of the questions has a candidate sentence holding its reference")
    torch.manual_seed(seed)
    if threads:
        torch.set_num_threads(threads)
    rng = random.Random(seed)
    model, tokenizer = load_shipped(VERIFIER_WEIGHTS)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    steps = max(1, int(len(pairs) * epochs) // batch_size)
    order: list[int] = []
    while len(order) < steps * batch_size:
        shuffled = list(range(len(pairs)))
        rng.shuffle(shuffled)
        order += shuffled
    started = time.perf_counter()
    for step in range(steps):
        batch = [pairs[index] for index in order[step * batch_size:(step + 1) * batch_size]]
        encoded = tokenizer([pair[0] for pair in batch], [pair[1] for pair in batch], truncation="longest_first", max_length=MAX_LENGTH, padding=True, return_tensors="pt")
        loss = loss_for(model(**encoded).logits, torch.tensor([pair[2] for pair in batch]))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        if step % 10 == 0 or step == steps - 1:
            rate = (step + 1) * batch_size / (time.perf_counter() - started)
            print(f"\r  step {step + 1} of {steps}, loss {loss.item():.3f}, {rate:.0f} pairs/s", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    model.eval()
    return model, tokenizer


def _shown(order: list[int], row: dict) -> list[int]:
    """The first two places as an answer fills them (``answer.fill_places``): distinct sentences, a sentence that points
    back ("This is ...") shown with the one before it, its label already counting both, so it fills both places. Rows
    collected with ``points_back`` instead of the antecedents' text stand for each antecedent by its place; rows
    collected before either have none."""
    from llmwiki.read.candidates import fill_places

    antecedents = row.get("antecedents")
    if antecedents is None:
        points_back = row.get("points_back") or [False] * len(row["inputs"])
        antecedents = [f"(the sentence before {index})" if back else "" for index, back in enumerate(points_back)]
    places = fill_places([row["inputs"][index] for index in order], [antecedents[index] for index in order], 2)
    return [order[place] for place in places]


def hits(rows: list[dict], ranker=None, *, ranked: int = RANKED, weight: float = WEIGHT, cosines: list[dict[int, float]] | None = None,
         similarity_weight: float = SIMILARITY_WEIGHT) -> dict[str, float]:
    """Share of questions whose first one and first two distinct sentences hold a reference: by hand, or reranked
    (by the ranker, and by cosines, one ``ranker.similarities`` per row, when given)."""
    from llmwiki.read.ranker import answer_probabilities, rerank

    first = two = 0
    for row, row_cosines in zip(rows, cosines or [None] * len(rows)):
        ranking = list(zip(row["scores"], row["ranking"]))
        probabilities = answer_probabilities(ranker, row["question"], row["inputs"], ranking, ranked=ranked)
        order = [index for _, index in rerank(ranking, probabilities, row_cosines, weight=weight, similarity_weight=similarity_weight)]
        shown = _shown(order, row)
        first += any(row["labels"][index] for index in shown[:1])
        two += any(row["labels"][index] for index in shown)
    return {"questions": len(rows), "top1": first / max(len(rows), 1), "top2": two / max(len(rows), 1)}


def main(argv=None) -> None:
    from llmwiki.verify.nli import NLIVerifier
    from llmwiki.verify.train import save_shipped

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "cmu-qa" / "S08")
    parser.add_argument("--workspace", type=Path, default=Path("/tmp/llmwiki-ranker-workspace"), help="where the S08 workspace and the collected pairs are kept")
    parser.add_argument("--recollect", action="store_true", help="ask the questions again instead of reusing the kept pairs")
    parser.add_argument("--out", type=Path, default=WEIGHTS_DIR)
    parser.add_argument("--hold-out", choices=SETS, help="train on the other sets and report this one's ranking; writes nothing")
    parser.add_argument("--sets", type=lambda text: tuple(text.split(",")), default=SETS[:3],
                        help="the sets trained on (default set1,set2,set3: bench/qa.py asks set 4's questions of a workspace without its articles, as off-topic ones)")
    parser.add_argument("--written", type=Path, action="append", default=[],
                        help="also train on questions written from real documentation (e.g. training/data/realdocs_paraphrased.tsv), asked of --written-workspace")
    parser.add_argument("--written-workspace", type=Path, default=Path("/tmp/llmwiki-bench-realdocs"), help="the workspace bench/realdocs.py builds")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if not (args.data / "question_answer_pairs.txt").is_file():
        sys.exit(f"{args.data}: CMU QA S08 is absent (it lives in ../shared/data, see its README); give --data")
    rows = collected(args.data, args.workspace, again=args.recollect)
    training = [row for row in rows if row["set"] in args.sets and row["set"] != args.hold_out]
    training += [row for path in args.written for row in collected_written(path, args.written_workspace)]
    pairs = training_pairs(training, seed=args.seed)
    print(f"{len(training)} questions, {len(pairs)} pairs", file=sys.stderr)
    started = time.perf_counter()
    model, tokenizer = train(pairs, epochs=args.epochs, lr=args.lr, seed=args.seed)
    seconds = time.perf_counter() - started
    if args.hold_out:
        held = [row for row in rows if row["set"] == args.hold_out]
        ranker = NLIVerifier(model, tokenizer=tokenizer, name="held-out", int8=True, max_length=MAX_LENGTH)
        print(json.dumps({"held_out": args.hold_out, "hand": hits(held), "ranker": hits(held, ranker)}))
        return
    sums = save_shipped(model, args.out)
    report = {"base": "llmwiki-nli (llmwiki/verify/weights)", "data": f"CMU QA S08 {', '.join(args.sets)}, fact questions" + "".join(f"; {path.name}" for path in args.written), "questions": len(training), "pairs": len(pairs),
              "epochs": args.epochs, "lr": args.lr, "batch_size": 16, "max_length": MAX_LENGTH, "seed": args.seed, "seconds": round(seconds, 1), "sha256": sums}
    (args.out / "training.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
