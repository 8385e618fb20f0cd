"""Sentence splitting: llmwiki's rule splitter (chunking.sentence_spans) beside pysbd, on WiCE's evidence.

    python bench/sentences.py [--data ../shared/data/wice/dev.jsonl]

WiCE gives each claim's cited web page as a list of sentences, split by its
authors. Runs of consecutive prose sentences (ending in . ! ? or a closing
quote, at least four words, not metadata or headings) are joined with one
space into paragraphs; each splitter then has to find the joins again.
Printed: boundary precision, recall and F1, the share of paragraphs split
exactly right, and time per paragraph as a ratio to the rule splitter.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.text.segment import sentence_spans  # noqa: E402


def paragraphs(path: Path, *, longest: int = 8) -> list[tuple[str, set[int]]]:
    """(paragraph text, the offsets where a gold sentence ends inside it)."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        evidence = json.loads(line)["evidence"]
        run: list[str] = []
        for sentence in [*evidence, ""]:
            sentence = " ".join(sentence.split())
            prose = len(sentence.split()) >= 4 and sentence.rstrip("\"'”’)").endswith((".", "!", "?")) and not sentence.startswith(("(meta", "#", "*", "-", "|"))
            if prose and len(run) < longest:
                run.append(sentence)
                continue
            if len(run) >= 2:
                text, ends, offset = " ".join(run), set(), 0
                for piece in run[:-1]:
                    offset += len(piece)
                    ends.add(offset)
                    offset += 1
                found.append((text, ends))
            run = [sentence] if prose else []
    return found


def rule_ends(text: str) -> set[int]:
    return {end for _, end in sentence_spans(text)[:-1]}


def pysbd_splitter():
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def ends(text: str) -> set[int]:
        spans = segmenter.segment(text)
        return {span.start + len(span.sent.rstrip()) for span in spans[:-1]}

    return ends


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/wice/dev.jsonl")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: WiCE dev is not there. Pass --data PATH to wice/dev.jsonl.")
    items = paragraphs(args.data)
    boundaries = sum(len(ends) for _, ends in items)
    print(f"WiCE dev evidence: {len(items)} paragraphs of 2-8 gold sentences, {boundaries} sentence boundaries inside them")
    print(f"{'splitter':<36}{'precision':>10}{'recall':>8}{'F1':>7}{'exact':>8}{'time ratio':>12}")
    reference_time = None
    for name, splitter in (("llmwiki rules (chunking.sentence_spans)", rule_ends), ("pysbd 0.3 (English, char spans)", pysbd_splitter())):
        started = time.perf_counter()
        predicted = [splitter(text) for text, _ in items]
        seconds = time.perf_counter() - started
        reference_time = reference_time or seconds
        hits = sum(len(guess & gold) for guess, (_, gold) in zip(predicted, items))
        made = sum(len(guess) for guess in predicted)
        precision, recall = hits / max(made, 1), hits / max(boundaries, 1)
        f1 = 2 * precision * recall / max(precision + recall, 1e-9)
        exact = sum(guess == gold for guess, (_, gold) in zip(predicted, items)) / len(items)
        print(f"{name:<36}{precision:>10.3f}{recall:>8.3f}{f1:>7.3f}{exact:>8.3f}{seconds / reference_time:>12.2f}")


if __name__ == "__main__":
    main()
