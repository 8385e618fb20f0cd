from __future__ import annotations

import datetime as dt
import os

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO
from llmwiki.datasets import DatasetError, DatasetSource, flatten_dims, parse_dataset, parse_number, to_markdown

LONG = """---
type: dataset
category: rates
format: long
unit: percent
as_of: 2024-01-31
source: test
dimensions: [region]
---

| key | metric | region | value |
|-----|--------|--------|------:|
| bank a | deposit rate | north | 3.5 |
| bank a | deposit rate | south | 3.25 |
| bank b | deposit rate | north | (0.5) |
"""

MATRIX = """---
type: dataset
category: prices
format: matrix
unit: EUR
as_of: 2024-02-01
source: test
---

key | bread | milk
--- | ---: | ---:
Paris | 1,234.5 | 12%
Lyon |  | -3
"""


def write(folder, name, text):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


# -- numbers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "expected"),
    [("1,234", 1234.0), ("1,234,567.25", 1234567.25), ("12.5%", 12.5), ("(1,200)", -1200.0), ("-3", -3.0), ("\u22124.5", -4.5),
     ("$1,200", 1200.0), ("€ 3", 3.0), ("1e3", 1000.0), (".5", 0.5), ("**1,234**", 1234.0), ("", None), ("  ", None), ("-", None), ("n/a", None)],
)
def test_number_forms(cell, expected):
    assert parse_number(cell) == expected


@pytest.mark.parametrize("cell", ["abc", "12abc", "1,23", "1.2.3", "%", "()"])
def test_non_numbers_are_refused(cell):
    with pytest.raises(ValueError):
        parse_number(cell)


# -- both formats ------------------------------------------------------------------


def test_long_format_normalises_to_the_schema(tmp_path):
    frame = parse_dataset(LONG, tmp_path / "rates.md")
    assert frame.columns == ["category", "key", "metric", "value", "unit", "dims", "as_of", "source"]
    assert frame.schema["value"] == pl.Float64 and frame.schema["as_of"] == pl.Date
    assert frame.get_column("value").to_list() == [3.5, 3.25, -0.5]
    assert frame.row(1, named=True)["dims"] == [{"name": "region", "value": "south"}]
    assert set(frame.get_column("unit")) == {"percent"} and frame.get_column("as_of")[0] == dt.date(2024, 1, 31)


def test_matrix_without_outer_pipes_and_with_empty_cells(tmp_path):
    frame = parse_dataset(MATRIX, tmp_path / "prices.md")
    rows = {(row["key"], row["metric"]): row["value"] for row in frame.iter_rows(named=True)}
    assert rows == {("Paris", "bread"): 1234.5, ("Paris", "milk"): 12.0, ("Lyon", "bread"): None, ("Lyon", "milk"): -3.0}


def test_matrix_with_date_columns_uses_the_metric_from_frontmatter(tmp_path):
    text = "---\ntype: dataset\ncategory: cpi\nformat: matrix\nmetric: index\nunit: points\nsource: t\n---\n\n| region | 2023-01-01 | 2024-01-01 |\n|---|---|---|\n| EU | 100 | 103.4 |\n"
    frame = parse_dataset(text, tmp_path / "cpi.md")
    assert frame.get_column("metric").unique().to_list() == ["index"]
    assert frame.get_column("as_of").to_list() == [dt.date(2023, 1, 1), dt.date(2024, 1, 1)]


def test_escaped_pipes_stay_in_their_cell(tmp_path):
    text = LONG.replace("| bank b | deposit rate | north |", "| bank b \\| c | deposit rate | north |")
    frame = parse_dataset(text, tmp_path / "rates.md")
    assert "bank b | c" in frame.get_column("key").to_list()
    assert frame.get_column("value").to_list()[-1] == -0.5  # columns did not shift


# -- bad input: one DatasetError naming file, line and fix, each with a control ---

BAD = {
    "no frontmatter": (LONG.split("---\n", 2)[2], "no YAML frontmatter", 1),
    "two tables": (LONG + "\n| a | b |\n|---|---|\n| 1 | 2 |\n", "has 2 tables", None),
    "ragged row": (LONG.replace("| bank a | deposit rate | south | 3.25 |", "| bank a | deposit rate | south | 3.25 | extra |"), "row has 5 cells but the header has 4", 14),
    "non-numeric": (LONG.replace("| 3.25 |", "| high |"), "value 'high' in column 'value' is not a number", 14),
    "unknown format": (LONG.replace("format: long", "format: wide"), "unknown format 'wide'", 1),
    "duplicate": (LONG.replace("| bank a | deposit rate | south |", "| bank a | deposit rate | north |"), "duplicate value for key 'bank a'", 14),
    "no table": (LONG.split("| key |")[0] + "Just a note.\n", "has no Markdown table", 10),
    "repeated value column": (LONG.replace("| key | metric | region | value |\n|-----|--------|--------|------:|", "| key | metric | value | value |\n|-----|--------|--------|------:|"),
                              "column 'value' appears twice in the header (columns 3 and 4)", 11),
    "repeated matrix column": (MATRIX.replace("key | bread | milk", "key | bread | bread"), "column 'bread' appears twice in the header", 10),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_files_raise_one_error_with_file_line_and_fix(tmp_path, case):
    text, message, line = BAD[case]
    with pytest.raises(DatasetError) as caught:
        parse_dataset(text, tmp_path / "rates.md")
    error = caught.value
    assert message in str(error)
    assert "rates.md" in str(error)
    assert error.fix and error.fix in str(error)
    if line is not None:
        assert error.line == line and f"rates.md:{line}:" in str(error)
    assert len(parse_dataset(LONG, tmp_path / "rates.md")) == 3  # control: the valid file parses
    assert len(parse_dataset(MATRIX, tmp_path / "prices.md")) == 4


def test_a_bad_file_does_not_stop_the_others(tmp_path):
    folder = tmp_path / "datasets"
    write(folder, "rates", LONG)
    write(folder, "broken", BAD["ragged row"][0])
    source = DatasetSource(folder)
    assert source.categories() == ["rates"]
    assert [error.path.name for error in source.errors] == ["broken.md"]
    assert source.scan().collect().height == 3
    with pytest.raises(DatasetError, match="row has 5 cells"):
        source.read("broken")


# -- DatasetSource -----------------------------------------------------------------


def test_summary_counts_keys_rows_and_metrics_of_good_files_only(tmp_path):
    folder = tmp_path / "datasets"
    write(folder, "rates", LONG)
    write(folder, "broken", BAD["ragged row"][0])
    summary = DatasetSource(folder).summary()
    rates = DatasetSource(folder).read("rates")
    assert summary.get_column("category").to_list() == ["rates"]
    assert summary.row(0, named=True) == {"category": "rates", "keys": rates.get_column("key").n_unique(), "rows": rates.height,
                                          "metrics": ", ".join(rates.get_column("metric").unique(maintain_order=True).to_list())}
    assert DatasetSource(tmp_path / "empty").summary().height == 0


def test_flatten_dims_writes_each_row_s_dimensions_as_text(tmp_path):
    folder = tmp_path / "datasets"
    write(folder, "rates", LONG)
    frame = DatasetSource(folder).read("rates")
    flat = flatten_dims(frame)
    assert flat.schema["dims"] == pl.Utf8 and flat.height == frame.height
    for items, text in zip(frame.get_column("dims").to_list(), flat.get_column("dims").to_list()):
        assert text == "; ".join(f"{item['name']}={item['value']}" for item in items)
    assert any("region=" in text for text in flat.get_column("dims").to_list())


def test_query_filters_and_keys(tmp_path):
    folder = tmp_path / "datasets"
    write(folder, "rates", LONG)
    write(folder, "prices", MATRIX)
    source = DatasetSource(folder)
    assert source.categories() == ["prices", "rates"]
    assert source.keys("rates") == ["bank a", "bank b"]
    assert source.query("rates", key="bank a", dims={"region": "south"}).get_column("value").to_list() == [3.25]
    assert source.query("rates", dims={"region": "north"}).height == 2
    assert source.query(key="Paris", metric="milk").get_column("value").to_list() == [12.0]
    assert source.query("prices", as_of="2024-02-01").height == 4
    assert source.query("prices", as_of="2020-01-01").height == 0


def test_only_changed_files_are_parsed_again(tmp_path, monkeypatch):
    import llmwiki.datasets as module

    folder = tmp_path / "datasets"
    path = write(folder, "rates", LONG)
    source = DatasetSource(folder)
    calls = []
    real = module.parse_dataset
    monkeypatch.setattr(module, "parse_dataset", lambda text, p: calls.append(p) or real(text, p))
    source.read("rates")
    source.read("rates")
    assert len(calls) == 1
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # touched, same bytes
    source.read("rates")
    assert len(calls) == 1
    path.write_text(LONG.replace("3.5", "4.5"), encoding="utf-8")
    assert source.read("rates").get_column("value")[0] == 4.5
    assert len(calls) == 2


@pytest.mark.parametrize("name", ["../secret", "/etc/passwd", "a/b", "..", "", "x" * 200, "rates.md"])
def test_category_names_are_confined_to_the_folder(tmp_path, name):
    folder = tmp_path / "datasets"
    write(folder, "rates", LONG)
    source = DatasetSource(folder)
    with pytest.raises(DatasetError, match="not a dataset category name"):
        source.read(name)
    assert source.read("rates").height == 3  # control


def test_a_symlink_out_of_the_folder_is_refused(tmp_path):
    folder = tmp_path / "datasets"
    write(folder, "rates", LONG)
    outside = write(tmp_path / "elsewhere", "secret", LONG)
    os.symlink(outside, folder / "leak.md")
    source = DatasetSource(folder)
    with pytest.raises(DatasetError, match="outside the datasets folder"):
        source.read("leak")
    assert "leak" not in source.categories() and "rates" in source.categories()


def test_vocabulary_maps_names_and_aliases(tmp_path):
    folder = tmp_path / "datasets"
    write(folder, "rates", LONG)
    source = DatasetSource(folder, aliases={"interest": "rates", "first bank": "bank a"})
    vocabulary = source.vocabulary()
    assert vocabulary["rates"] == [("rates", None)]
    assert vocabulary["bank a"] == [("rates", "bank a")]
    assert vocabulary["interest"] == [("rates", None)]
    assert vocabulary["first bank"] == [("rates", "bank a")]


def test_sample_datasets_parse_and_match_the_sample_workspace():
    from llmwiki.services import Services
    from llmwiki.workspace import Workspace

    workspace = Workspace.open(REPO / "workspace")
    source = Services(workspace).datasets
    assert source.errors == []
    assert set(source.categories()) == {"scientists", "milestones"}
    assert source.query("scientists", key="Henri Becquerel", metric="died").get_column("value").to_list() == [1908.0]
    assert source.vocabulary()["si pioneers"] == [("scientists", None)]


# -- round trip ----------------------------------------------------------------------

cell_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=12).map(str.strip).filter(
    lambda text: text and "\\" not in text and not text.startswith(("-", "#", ">", "*", "+", "=", "`", "~")) and text.lower() not in {"n/a", "na", "null", "none", "?"}
)
rows = st.lists(
    st.tuples(cell_text, st.sampled_from(["rate", "count", "price"]), st.sampled_from(["north", "south", "east"]),
              st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, width=32))),
    min_size=1, max_size=15, unique_by=lambda row: (row[0], row[1], row[2]),
)


@settings(max_examples=100, deadline=None)
@given(rows=rows)
def test_tables_round_trip_through_markdown(tmp_path_factory, rows):
    frame = pl.DataFrame(
        {
            "category": ["gen"] * len(rows),
            "key": [row[0] for row in rows],
            "metric": [row[1] for row in rows],
            "value": [row[3] for row in rows],
            "unit": ["u"] * len(rows),
            "dims": [[{"name": "region", "value": row[2]}] for row in rows],
            "as_of": [dt.date(2024, 1, 1)] * len(rows),
            "source": ["s"] * len(rows),
        },
        schema=parse_dataset(LONG, tmp_path_factory.mktemp("x") / "r.md").schema,
    )
    text = to_markdown(frame, category="gen", unit="u", as_of=dt.date(2024, 1, 1), source="s", dimensions=["region"])
    parsed = parse_dataset(text, tmp_path_factory.mktemp("y") / "gen.md")
    assert parsed.equals(frame)
