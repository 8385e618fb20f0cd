"""Verifier benchmark: WiCE dev (claim vs cited evidence), and throughput on a real page.

    python bench/verify.py [--data ../shared/data/wice/dev.jsonl] [--model llmwiki-default] [--limit 0]

Binary task as the LLM-AggreFact leaderboard scores WiCE: supported = positive,
partially_supported and not_supported = negative. For every claim the evidence
is pruned exactly as page verification prunes premises (windows of one to
three evidence sentences, the best by shared words), and a claim's score is
its best window's score. The threshold is chosen on one half of the claims
(best balanced accuracy) and balanced accuracy is reported on the other half,
both ways round (mean of the two); ROC AUC is on all claims.

Printed side by side in the same run: the configured verifier (the default is
llmwiki's trained model when its weights are installed, otherwise word
overlap), and two baselines: lexical overlap and MiniLM cosine.
Published WiCE test BAcc for reference: MiniCheck-Flan-T5-L 72.2, AlignScore
66.0, SummaC-ZS 62.8. Then pairs/s and sentences/s of verifying a real page.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.verify.nli import OverlapVerifier, SimilarityVerifier, load_verifier  # noqa: E402
from llmwiki.verify.page import prune_premises  # noqa: E402

PUBLISHED = {"MiniCheck-Flan-T5-L": 72.2, "AlignScore": 66.0, "SummaC-ZS": 62.8}


def roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    for value in np.unique(scores):  # average ranks of ties
        tied = scores == value
        ranks[tied] = ranks[tied].mean()
    positives = labels.sum()
    negatives = len(labels) - positives
    return float((ranks[labels == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def balanced_accuracy(labels: np.ndarray, predictions: np.ndarray) -> float:
    recall_positive = (predictions[labels == 1] == 1).mean()
    recall_negative = (predictions[labels == 0] == 0).mean()
    return float((recall_positive + recall_negative) / 2)


def best_threshold(labels: np.ndarray, scores: np.ndarray) -> float:
    candidates = np.unique(scores)
    return float(max(candidates, key=lambda threshold: balanced_accuracy(labels, (scores >= threshold).astype(int))))


def split_bacc(labels: np.ndarray, scores: np.ndarray) -> float:
    half = len(labels) // 2
    first, second = slice(0, half), slice(half, None)
    one = balanced_accuracy(labels[second], (scores[second] >= best_threshold(labels[first], scores[first])).astype(int))
    two = balanced_accuracy(labels[first], (scores[first] >= best_threshold(labels[second], scores[second])).astype(int))
    return (one + two) / 2


def claim_scores(verifier, claims, *, top_windows: int = 8) -> tuple[np.ndarray, int, float]:
    pairs, owners = [], []
    for index, claim in enumerate(claims):
        chunks = [(0, "evidence", 1, "\n".join(claim["evidence"]))]
        for window, _ in prune_premises(claim["claim"], chunks, top_chunks=1, top_windows=top_windows):
            pairs.append((window, claim["claim"]))
            owners.append(index)
    started = time.perf_counter()
    probabilities = verifier.score([premise for premise, _ in pairs], [hypothesis for _, hypothesis in pairs])
    seconds = time.perf_counter() - started
    scores = np.zeros(len(claims))
    for row, owner in enumerate(owners):
        scores[owner] = max(scores[owner], probabilities[row, 0])
    return scores, len(pairs), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "wice" / "dev.jsonl")
    parser.add_argument("--model", default="llmwiki-default", help="verifier: llmwiki-default, minilm-cosine, or an NLI model id/path")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--windows", type=int, default=8, help="premise windows per claim and per page sentence")
    parser.add_argument("--int8", action="store_true", help="quantize the NLI model's linear layers to int8 (CPU)")
    parser.add_argument("--max-length", type=int, default=256, help="NLI input length in tokens")
    parser.add_argument("--weights", type=Path, default=None, help="evaluate trained weights from this folder (as written by llmwiki.verify.train)")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: WiCE dev is absent (it lives in ../shared/data, see its README)")
    claims = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.limit:
        claims = claims[: args.limit]
    for claim in claims:  # evidence lines carry page furniture; keep sentences with words
        claim["evidence"] = [sentence for sentence in claim["evidence"] if re.search(r"[A-Za-z]{3}", sentence)]
    labels = np.array([1 if claim["label"] == "supported" else 0 for claim in claims])
    if args.weights is not None:
        from llmwiki.verify.nli import NLIVerifier
        from llmwiki.verify.train import load_shipped

        model, tokenizer = load_shipped(args.weights)
        configured = NLIVerifier(model, tokenizer=tokenizer, name=f"trained ({args.weights})", int8=args.int8, max_length=args.max_length)
    else:
        configured = load_verifier(args.model, int8=args.int8, max_length=args.max_length)
    systems = [("configured: " + configured.name, configured), ("baseline: lexical overlap", OverlapVerifier()), ("baseline: MiniLM cosine", SimilarityVerifier())]
    print(f"WiCE dev: {len(claims)} claims, {labels.sum()} supported (positive), {len(labels) - labels.sum()} not")
    print(f"{'verifier':<44}{'BAcc':>7}{'AUC':>7}{'pairs':>8}{'pairs/s':>9}")
    for name, verifier in systems:
        scores, pair_count, seconds = claim_scores(verifier, claims, top_windows=args.windows)
        print(f"{name:<44}{100 * split_bacc(labels, scores):>7.1f}{roc_auc(labels, scores):>7.3f}{pair_count:>8}{pair_count / max(seconds, 1e-9):>9.0f}")
    print("published WiCE test BAcc: " + ", ".join(f"{name} {value}" for name, value in PUBLISHED.items()))

    from llmwiki.ingest import ingest_paths
    from llmwiki.verify import verify_page
    from llmwiki.workspace import Workspace

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "ws"
        shutil.copytree(REPO / "workspace", root, ignore=shutil.ignore_patterns(".llmwiki", "wiki", ".git"))
        workspace = Workspace.init(root, git=False)
        ingest_paths(workspace)
        configured.score(["warm up"], ["warm up"])
        started = time.perf_counter()
        result = verify_page(workspace, "wiki/summaries/alessandro-volta.md", configured, force=True, premises_per_sentence=args.windows)
        seconds = time.perf_counter() - started
    print(f"page wiki/summaries/alessandro-volta.md with {configured.name}: {len(result.sentences)} sentences, {result.pairs_scored} pairs in {seconds:.2f} s "
          f"= {len(result.sentences) / seconds:.1f} sentences/s, {result.pairs_scored / seconds:.0f} pairs/s (target >= 50 sentences/s)")


if __name__ == "__main__":
    main()
