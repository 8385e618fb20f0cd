"""The answer ranker, measured on questions it was not trained on: CMU QA S08, leaving one set out at a time.

    python bench/ranker.py [--data ../shared/data/cmu-qa/S08] [--workspace /tmp/llmwiki-ranker-workspace] [--recollect]
                           [--epochs 1] [--ranked 12] [--weights 0.5,1,2,4,100] [--similarity all-MiniLM-L6-v2|none]

For each set, the ranker is trained (``training.ranker``, from the
shipped verifier) on the other sets' fact questions, and the held-out set's
questions are ranked by hand (``questions.rank_sentences``) and by hand +
weight x P(holds the answer) over the hand ranking's best RANKED sentences.
Printed per set and over all sets: the share of fact questions whose first
sentence, and first two sentences (what an answer shows), hold a reference,
with the ceiling (a reference among the sentences the ranker reorders);
then the same with the question/sentence cosine of --similarity added
(weight SIMILARITY_WEIGHT), alone and beside the ranker at the shipped weight.
bench/qa.py's fact figures use the shipped ranker, trained on all of S08, so
they are in-sample; these are the figures to expect on other questions.
Training takes 2-3 minutes per set on a 2-core CPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.read.ranker import DEFAULT_SIMILARITY, MAX_LENGTH, RANKED, SIMILARITY_WEIGHT, WEIGHT, load_similarity, similarities  # noqa: E402
from training.ranker import SETS, collected, hits, train, training_pairs  # noqa: E402
from llmwiki.verify.nli import NLIVerifier  # noqa: E402


class _Cached:
    """A ranker that scores each (sentence, question) pair once, so several weights can be tried."""

    def __init__(self, ranker) -> None:
        self.ranker, self.seen = ranker, {}

    def score(self, premises, hypotheses):
        import numpy as np

        missing = [(p, h) for p, h in zip(premises, hypotheses) if (p, h) not in self.seen]
        if missing:
            for pair, row in zip(missing, self.ranker.score([p for p, _ in missing], [h for _, h in missing])):
                self.seen[pair] = row
        return np.array([self.seen[(p, h)] for p, h in zip(premises, hypotheses)])


def pair(first: float, second: float) -> str:
    return f"{first:.3f} / {second:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "cmu-qa" / "S08")
    parser.add_argument("--workspace", type=Path, default=Path("/tmp/llmwiki-ranker-workspace"))
    parser.add_argument("--recollect", action="store_true", help="ask the questions again instead of reusing the pairs kept in --workspace")
    parser.add_argument("--epochs", type=float, default=1.0, help="training epochs per held-out set (the shipped model: 1)")
    parser.add_argument("--ranked", type=int, default=RANKED, help="how many of the hand ranking's best sentences the model reorders")
    parser.add_argument("--weights", default=f"0.5,1,{WEIGHT:g},4,100", help="weights of P(holds the answer) to compare")
    parser.add_argument("--similarity", default=DEFAULT_SIMILARITY, help='the sentence embedder whose cosines join the ranking ("none": skip)')
    args = parser.parse_args()
    if not (args.data / "question_answer_pairs.txt").is_file():
        sys.exit(f"{args.data}: CMU QA S08 is absent (it lives in ../shared/data, see its README)")
    weights = [float(weight) for weight in args.weights.split(",")]
    rows = collected(args.data, args.workspace, again=args.recollect)
    totals: dict[str, list[float]] = {}
    print(f"fact questions of S08, each set ranked by a model trained on the others (reorders the best {args.ranked} by hand)\n")
    embedder = load_similarity(args.similarity)
    weights_shown = weights + (["similarity", "ranker+similarity"] if embedder is not None else [])
    print(f"{'held out':<9} {'questions':>9} {'ceiling':>8} {'hand top-1':>11} {'hand top-2':>11} "
          + " ".join(f"{(f'w={w:g}' if isinstance(w, float) else w) + ' top-1/2':>17}" for w in weights_shown))
    for held_out in SETS:
        held = [row for row in rows if row["set"] == held_out]
        pairs = training_pairs([row for row in rows if row["set"] != held_out])
        if not held or not pairs:
            continue
        model, tokenizer = train(pairs, epochs=args.epochs)
        ranker = _Cached(NLIVerifier(model, tokenizer=tokenizer, name="held-out", int8=True, max_length=MAX_LENGTH))
        ceiling = sum(any(row["labels"][index] for index in row["ranking"][:args.ranked]) for row in held) / len(held)
        hand = hits(held)
        figures = [hits(held, ranker, ranked=args.ranked, weight=weight) for weight in weights]
        if embedder is not None:
            cosines = [similarities(embedder, row["question"], row["inputs"], list(zip(row["scores"], row["ranking"])), ranked=args.ranked) for row in held]
            figures += [hits(held, None, ranked=args.ranked, cosines=cosines), hits(held, ranker, ranked=args.ranked, cosines=cosines)]
        line = [len(held), ceiling, hand["top1"], hand["top2"]] + [value for figure in figures for value in (figure["top1"], figure["top2"])]
        totals[held_out] = line
        print(f"{held_out:<9} {len(held):>9} {ceiling:>8.3f} {hand['top1']:>11.3f} {hand['top2']:>11.3f} "
              + " ".join(f"{pair(figure['top1'], figure['top2']):>17}" for figure in figures), flush=True)
    count = sum(line[0] for line in totals.values())
    mean = [sum(line[position] * line[0] for line in totals.values()) / count for position in range(1, len(next(iter(totals.values()))))]
    print(f"{'all':<9} {count:>9} {mean[0]:>8.3f} {mean[1]:>11.3f} {mean[2]:>11.3f} "
          + " ".join(f"{pair(mean[3 + 2 * k], mean[4 + 2 * k]):>17}" for k in range(len(weights_shown))))
    print(f"\nshipped: weight {WEIGHT:g}, the best {RANKED}; top-2 is what an answer of two sentences holds (bench/qa.py counts the same on whole answers)")
    if embedder is not None:
        print(f"similarity: cosine of {embedder.name} at weight {SIMILARITY_WEIGHT:g}, alone (hand + similarity) and with the ranker at weight {WEIGHT:g} (shipped)")


if __name__ == "__main__":
    main()
