"""Rule readings measured where they were not written: the NLI pool's labelled pairs (no S08, no WiCE).

    python bench/readings.py [--pool ../shared/data/nli/pool.jsonl.gz] [--every 8]

A rule written after an S08 question must be read on another corpus before it
is trusted. Each pair of the pool is a premise and a hypothesis with a label
(entailment, neutral, contradiction, or "not entailed" for two-way sources);
taking the hypothesis as what an answer or a page says and the premise as its
source, each reading below is asked where it applies, and the labels of the
pairs it decides are counted:

- kinds: a hypothesis that says only what kind its subject is ("Hermit crabs
  are arachnids.") against a premise that opens by saying what the subject
  is (``questions.kind_verdict``): a yes should fall on entailments, a no on
  contradictions (or "not entailed").
- only: the only one of a kind against others of it (``FactCheck.opposed``
  holding "only"): should fall on contradictions.
- contrast: the opposite of a hypothesis word in the one clause of a
  contrasting sentence that holds most of the hypothesis, where another
  clause holds the word itself ("The coolest month is June, while the
  warmest is January" against "The warmest month is June";
  ``facts.opposed_in_clause``): should fall on contradictions.
- negation: the fact check's negation reading (``FactCheck.negation``), the
  reference the two above are compared with: the share of entailments among
  the pairs it flags is what a reading that denies costs; every Nth pair
  (``--every``), since it is read on every pair.

Printed: per reading and outcome, the number of pairs and their labels.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from llmwiki.text.questions import kind_verdict  # noqa: E402
from llmwiki.text import DETERMINERS, FORMS_OF_BE, tokens  # noqa: E402
from llmwiki.text.segment import split_sentences  # noqa: E402
from llmwiki.text.facts import check_facts, opposed_in_clause  # noqa: E402

LABELS = ("entailment", "neutral", "contradiction", "not entailed")


def subject_of(hypothesis: str) -> tuple[str, ...]:
    """The words before the hypothesis's first form of "be", without determiners (at most four): what it is about."""
    words = tokens(hypothesis)
    be = next((index for index, word in enumerate(words) if word.lower() in FORMS_OF_BE), None)
    if be is None or not 0 < be <= 4:
        return ()
    return tuple(word for word in words[:be] if word.lower() not in DETERMINERS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=Path, default=REPO.parent / "shared" / "data" / "nli" / "pool.jsonl.gz")
    parser.add_argument("--every", type=int, default=8, help="read the negation reference on every Nth pair")
    args = parser.parse_args()
    if not args.pool.is_file():
        sys.exit(f"{args.pool}: the NLI pool is absent (it lives in ../shared/data/nli, see its README)")
    counts: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    examples: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    with gzip.open(args.pool, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % 20_000 == 0:
                print(f"\r  {number:,} pairs read", end="", file=sys.stderr, flush=True)
            pair = json.loads(line)
            premise, hypothesis, label = pair["p"], pair["h"], LABELS[pair["y"]]
            found = []
            if (subject := subject_of(hypothesis)) and (settled := kind_verdict(hypothesis, subject, premise)) is not None:
                found.append(("kinds", f"{settled[0]} ({'WordNet' if settled[1] and settled[1].startswith('WordNet') else 'said' if settled[1] is None else 'adjective'})"))
            if " only " in f" {premise.lower()} " and any(word.lower() in ("other", "others", "another") for word in tokens(hypothesis)):
                if any(other == "only" for _, other in check_facts(hypothesis, [premise]).opposed):
                    found.append(("only", "no"))
            in_clause = {pair for sentence in split_sentences(premise) for pair in opposed_in_clause(hypothesis, sentence)}
            if in_clause and in_clause & set(check_facts(hypothesis, [premise]).opposed):
                found.append(("contrast", "no"))
            if number % args.every == 0 and (negation := check_facts(hypothesis, [premise]).negation) is not None:
                found.append(("negation", f"no ({negation} negated)"))
            for key in found:
                counts[key][label] += 1
                if len(examples[key, label]) < 2:
                    examples[key, label].append(f"{premise[:110]} || {hypothesis[:80]}")
    print(file=sys.stderr)
    print(f"Readings on the NLI pool ({args.pool.name}; the negation reference on every {args.every}th pair): pairs decided, by label")
    print(f"{'reading':<10}{'outcome':<24}{'pairs':>7}" + "".join(f"{label:>15}" for label in LABELS) + f"{'entailed share':>16}")
    for (reading, outcome), labels in sorted(counts.items()):
        total = sum(labels.values())
        print(f"{reading:<10}{outcome:<24}{total:>7}" + "".join(f"{labels[label]:>15}" for label in LABELS) + f"{labels['entailment'] / total:>16.3f}")
    for reading in sorted({"kinds", "only", "contrast", "negation"} - {reading for reading, _ in counts}):
        print(f"{reading:<10}{'(decides no pair)':<24}{0:>7}")
    print("examples (premise || hypothesis):")
    for (reading, outcome), labels in sorted(counts.items()):
        for label in LABELS:
            for example in examples.get(((reading, outcome), label), []):
                print(f"  {reading} {outcome}, {label}: {example}")


if __name__ == "__main__":
    main()
