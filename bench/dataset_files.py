"""Dataset parsing benchmark: 200 generated files of 1,000 rows each.

    python bench/dataset_files.py [--files 200] [--rows 1000]

Prints files/s and rows/s of a full parse, a cached re-query, and a filtered
query over all files, beside a reference in the same run: polars reading the
same rows from CSV files (no Markdown, no validation). Targets: full parse
under 5 s, cached re-query under 50 ms.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import polars as pl  # noqa: E402

from llmwiki.datasets import DatasetSource  # noqa: E402


def write_files(folder: Path, files: int, rows: int) -> None:
    generator = random.Random(3)
    regions = ["north", "south", "east", "west"]
    for index in range(files):
        lines = [
            "---", "type: dataset", f"category: cat{index:03d}", "format: long", "unit: EUR",
            "as_of: 2024-01-31", "source: generated", "dimensions: [region]", "---", "",
            "| key | metric | region | value |", "|---|---|---|---:|",
        ]
        csv = ["key,metric,region,value"]
        for row in range(rows):
            key, metric, region = f"item{row // 8}", f"m{row % 2}", regions[(row // 2) % 4]
            value = f"{generator.uniform(-1e6, 1e6):,.2f}"
            lines.append(f"| {key} | {metric} | {region} | {value} |")
            csv.append(f'{key},{metric},{region},"{value.replace(",", "")}"')
        (folder / f"cat{index:03d}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / f"cat{index:03d}.csv").write_text("\n".join(csv) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rows", type=int, default=1000)
    args = parser.parse_args()
    total_rows = args.files * args.rows
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_files(folder, args.files, args.rows)

        started = time.perf_counter()
        reference = pl.concat([pl.read_csv(path) for path in sorted(folder.glob("*.csv"))])
        csv_seconds = time.perf_counter() - started

        source = DatasetSource(folder)
        started = time.perf_counter()
        frame = source.scan().collect()
        parse_seconds = time.perf_counter() - started
        assert frame.height == total_rows == reference.height, (frame.height, reference.height)

        started = time.perf_counter()
        filtered = source.query(key="item7", metric="m1", dims={"region": "south"})
        query_seconds = time.perf_counter() - started
        started = time.perf_counter()
        again = source.query(key="item7", metric="m1", dims={"region": "south"})
        requery_seconds = time.perf_counter() - started
        assert filtered.equals(again) and filtered.height == args.files

    print(f"{args.files} files x {args.rows} rows = {total_rows} rows")
    print(f"{'step':<46}{'seconds':>9}{'files/s':>10}{'rows/s':>12}")
    print(f"{'reference: polars read_csv of the same rows':<46}{csv_seconds:>9.2f}{args.files / csv_seconds:>10.0f}{total_rows / csv_seconds:>12.0f}")
    print(f"{'llmwiki: parse + validate every Markdown file':<46}{parse_seconds:>9.2f}{args.files / parse_seconds:>10.0f}{total_rows / parse_seconds:>12.0f}")
    print(f"parse / read_csv: {parse_seconds / csv_seconds:.1f}x")
    print(f"filtered query over all files, first after parse: {query_seconds * 1000:.1f} ms; cached re-query: {requery_seconds * 1000:.1f} ms")
    print(f"targets: full parse < 5 s: {'met' if parse_seconds < 5 else 'MISSED'}; cached re-query < 50 ms: {'met' if requery_seconds < 0.05 else 'MISSED'}")


if __name__ == "__main__":
    main()
