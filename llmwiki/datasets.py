"""Markdown datasets: ``datasets/<category>.md`` parsed into one polars schema.

A dataset file is YAML frontmatter plus exactly one Markdown table::

    ---
    type: dataset
    category: scientists
    format: long            # or matrix
    unit: year
    as_of: 2008-04-01
    source: Wikipedia (GFDL), CMU QA S08 articles
    dimensions: [event]     # long format: columns that qualify a value
    ---

    | key   | metric | event               | value |
    |-------|--------|---------------------|-------|
    | Volta | year   | invented the pile   | 1800  |

``long`` has one row per value (key, metric, value and dimension columns;
optional ``unit`` and ``as_of`` columns override the frontmatter per row).
``matrix`` has keys as rows and metrics as columns; when every metric column
is a date, the columns are dates of one ``metric`` named in the frontmatter.

Both normalise to: category, key, metric, value (Float64), unit,
dims (list of {name, value} structs, a map that concatenates across files),
as_of (Date), source.

Tables are read by a real CommonMark parser with the GFM table extension
(pulldown-cmark through pyromark), never by splitting on "|", so escaped
pipes stay inside their cell; the raw line of each row is still
checked for its cell count, because the table rule pads or drops cells of a
ragged row without a word. Every problem raises one ``DatasetError`` naming
the file, the line and the fix.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyromark
import yaml

from llmwiki.errors import LlmwikiError
from llmwiki.pages import read_frontmatter

CATEGORY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
_NULL_CELLS = frozenset({"", "-", "—", "–", "n/a", "na", "null", "none", "?"})
_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][+-]?\d+)?$")
_CURRENCY = "$€£¥₹"

SCHEMA = {
    "category": pl.Utf8,
    "key": pl.Utf8,
    "metric": pl.Utf8,
    "value": pl.Float64,
    "unit": pl.Utf8,
    "dims": pl.List(pl.Struct({"name": pl.Utf8, "value": pl.Utf8})),
    "as_of": pl.Date,
    "source": pl.Utf8,
}


class DatasetError(LlmwikiError):
    """A dataset file is malformed; names the file, the line and the fix."""

    def __init__(self, path: Path | str, problem: str, fix: str, *, line: int | None = None) -> None:
        self.path = Path(path)
        self.line = line
        self.problem = problem
        self.fix = fix
        where = f"{self.path}:{line}" if line else str(self.path)
        super().__init__(f"{where}: {problem}. {fix}")


def parse_number(cell: str) -> float | None:
    """A cell's number: thousands separators, percentages, (negatives), currency; None when empty."""
    text = cell.strip().strip("*_`").replace("\u2212", "-").replace("\u00a0", "").replace(" ", "")
    if text.lower() in _NULL_CELLS:
        return None
    negative = text.startswith("(") and text.endswith(")")
    if negative:
        text = text[1:-1]
    text = text.rstrip("%").lstrip(_CURRENCY)
    if text.startswith(("-", "+")) and len(text) > 1 and text[1] in _CURRENCY:
        text = text[0] + text[2:]
    if not text or not _NUMBER.match(text) or not any(char.isdigit() for char in text):
        raise ValueError(cell)
    value = float(text.replace(",", ""))
    return -value if negative else value


def _parse_date(value, path: Path, what: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip())
    except ValueError:
        raise DatasetError(path, f"{what} {value!r} is not a date", "Write it as YYYY-MM-DD") from None


def _split_row(line: str) -> list[str]:
    cells = _UNESCAPED_PIPE.split(line.strip())
    if cells and cells[0].strip() == "":
        cells = cells[1:]
    if cells and cells[-1].strip() == "" and line.rstrip().endswith("|") and not line.rstrip().endswith("\\|"):
        cells = cells[:-1]
    return cells


@dataclass(frozen=True)
class _Table:
    header: list[str]
    rows: list[tuple[int, list[str]]]  # (line number in the file, cells)


def _read_table(body: str, path: Path, line_offset: int) -> _Table:
    """The one GFM table of a Markdown body, cells as text, rows with their line numbers.

    pulldown-cmark (through pyromark) parses the Markdown: it is a CommonMark
    parser written in Rust, ~3x faster than markdown-it-py on large tables.
    """
    encoded = body.encode("utf-8")  # pulldown-cmark reports byte offsets
    line_starts = [0] + [match.end() for match in re.finditer(b"\n", encoded)]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset) + line_offset

    table_starts: list[int] = []
    rows: list[tuple[int, None]] = []  # byte offset where each row of the first table starts
    for event, span in pyromark.events_with_range(body, options=pyromark.Options.ENABLE_TABLES):
        if "Start" in event:
            kind = event["Start"]
            if kind in ("TableHead", "TableRow"):
                if len(table_starts) == 1:
                    rows.append((span["start"], None))
            elif isinstance(kind, dict) and "Table" in kind:
                table_starts.append(span["start"])
    if not table_starts:
        raise DatasetError(path, "has no Markdown table after its frontmatter", "Add one table with a header row and a |---| separator row",
                           line=line_offset + 1)
    if len(table_starts) > 1:
        lines = ", ".join(str(line_of(start)) for start in table_starts)
        raise DatasetError(path, f"has {len(table_starts)} tables (at lines {lines})", "Keep exactly one table per dataset file; move the others to their own category files")
    def raw_cells(start: int) -> list[str]:
        end = encoded.find(b"\n", start)
        return [cell.strip().replace("\\|", "|") for cell in _split_row(encoded[start:end if end >= 0 else len(encoded)].decode("utf-8"))]

    # Cells are taken as written between unescaped pipes (data, not formatting:
    # "_0_" stays "_0_"), on the rows the parser found; a row whose cell count
    # differs from the header's is an error, as the table rule would pad or drop it.
    header = raw_cells(rows[0][0])
    seen: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        if name.lower() in seen:
            raise DatasetError(path, f"column {name!r} appears twice in the header (columns {seen[name.lower()]} and {position})",
                               "Give every column its own name: a second value column is dropped, a repeated metric is ambiguous",
                               line=line_of(rows[0][0]))
        seen[name.lower()] = position
    body_rows = []
    for start, _ in rows[1:]:
        line = line_of(start)
        raw = raw_cells(start)
        if len(raw) != len(header):
            raise DatasetError(
                path,
                f"row has {len(raw)} cells but the header has {len(header)}",
                "Give every row one cell per column (leave a cell empty for a missing value; escape a literal pipe as \\|)",
                line=line,
            )
        body_rows.append((line, raw))
    return _Table(header=header, rows=body_rows)


def parse_dataset(text: str, path: Path) -> pl.DataFrame:
    """Parse one dataset file's text into the normalised schema; raises DatasetError."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    frontmatter = read_frontmatter(text)
    if not frontmatter.found:
        raise DatasetError(path, "has no YAML frontmatter", "Start the file with ---, type: dataset, category, format, unit, as_of, source, then ---", line=1)
    if frontmatter.error is not None:
        fix = "Write key: value lines between the --- lines" if frontmatter.error == "not a mapping" else "Fix the YAML between the --- lines"
        raise DatasetError(path, f"has frontmatter that is {frontmatter.error}", fix, line=1)
    meta = frontmatter.meta
    if meta.get("type") != "dataset":
        raise DatasetError(path, f"frontmatter type is {meta.get('type')!r}, not 'dataset'", "Add type: dataset to the frontmatter", line=1)
    table_format = meta.get("format")
    if table_format not in ("long", "matrix"):
        raise DatasetError(path, f"has an unknown format {table_format!r}", "Set format: long (one value per row) or format: matrix (keys by metrics)", line=1)
    category = str(meta.get("category") or path.stem)
    unit = None if meta.get("unit") is None else str(meta["unit"])
    source = None if meta.get("source") is None else str(meta["source"])
    as_of = _parse_date(meta["as_of"], path, "as_of") if meta.get("as_of") is not None else None
    table = _read_table(frontmatter.body, path, frontmatter.lines)
    header = table.header
    lowered = [cell.lower() for cell in header]

    def number(cell: str, line: int, column: str) -> float | None:
        try:
            return parse_number(cell)
        except ValueError:
            raise DatasetError(path, f"value {cell!r} in column {column!r} is not a number", "Write a number such as 1234, 1,234.5, -3, (12) or 4.5%, or leave the cell empty", line=line) from None

    lines: list[int] = []
    keys: list[str] = []
    metrics: list[str] = []
    values: list[float | None] = []
    units: list[str | None] = []
    dates: list[dt.date | None] = []
    dimension_values: dict[str, list[str]] = {}
    if table_format == "long":
        for required in ("key", "metric", "value"):
            if required not in lowered:
                raise DatasetError(path, f"long table has no {required!r} column", "Long tables need key, metric and value columns", line=frontmatter.lines)
        declared = [str(name) for name in (meta.get("dimensions") or [])]
        reserved = {"key", "metric", "value", "unit", "as_of"}
        dimension_columns = declared or [name for name in header if name.lower() not in reserved]
        for name in dimension_columns:
            if name not in header:
                raise DatasetError(path, f"dimension {name!r} is not a column", "List in dimensions: only column names of the table", line=1)
        index = {name: lowered.index(name) for name in ("key", "metric", "value")}
        unit_index = lowered.index("unit") if "unit" in lowered else None
        date_index = lowered.index("as_of") if "as_of" in lowered else None
        dimension_values = {name: [] for name in dimension_columns}
        dimension_index = {name: header.index(name) for name in dimension_columns}
        for line, cells in table.rows:
            lines.append(line)
            keys.append(cells[index["key"]])
            metrics.append(cells[index["metric"]])
            values.append(number(cells[index["value"]], line, header[index["value"]]))
            units.append((cells[unit_index] or unit) if unit_index is not None else unit)
            dates.append(_parse_date(cells[date_index], path, f"line {line}: as_of") if date_index is not None and cells[date_index] else as_of)
            for name, position in dimension_index.items():
                dimension_values[name].append(cells[position])
    else:
        if len(header) < 2:
            raise DatasetError(path, "matrix table needs a key column and at least one metric column", "Put keys in the first column and one metric per further column", line=frontmatter.lines)
        columns = header[1:]
        dated = all(_is_date(column) for column in columns)
        if dated and not meta.get("metric"):
            raise DatasetError(path, "matrix columns are dates but the frontmatter names no metric", "Add metric: NAME to the frontmatter", line=1)
        for line, cells in table.rows:
            for column, cell in zip(columns, cells[1:]):
                lines.append(line)
                keys.append(cells[0])
                metrics.append(str(meta["metric"]) if dated else column)
                values.append(number(cell, line, column))
                units.append(unit)
                dates.append(dt.date.fromisoformat(column) if dated else as_of)
    for line, key in zip(lines, keys):
        if not key:
            raise DatasetError(path, "row has an empty key", "Give every row a key", line=line)

    frame = pl.DataFrame(
        {"_line": lines, "key": keys, "metric": metrics, "value": values, "unit": units, "as_of": dates, **{f"_dim{i}": column for i, column in enumerate(dimension_values.values())}},
        schema={"_line": pl.Int64, "key": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64, "unit": pl.Utf8, "as_of": pl.Date, **{f"_dim{i}": pl.Utf8 for i in range(len(dimension_values))}},
    )
    if dimension_values:
        parts = [
            pl.when(pl.col(f"_dim{i}") != "").then(pl.struct(pl.lit(name).alias("name"), pl.col(f"_dim{i}").alias("value")))
            for i, name in enumerate(dimension_values)
        ]
        dims = pl.concat_list(parts).list.drop_nulls()
    else:
        dims = pl.lit([], dtype=SCHEMA["dims"])
    frame = frame.with_columns(dims.cast(SCHEMA["dims"]).alias("dims"), pl.lit(category).alias("category"), pl.lit(source, dtype=pl.Utf8).alias("source"))
    duplicated = frame.select(pl.struct("key", "metric", "dims", "as_of").is_duplicated().alias("duplicated"), "_line", "key", "metric")
    if duplicated.get_column("duplicated").any():
        clashes = duplicated.filter(pl.col("duplicated"))
        first, second = clashes.row(0, named=True), clashes.row(1, named=True)
        raise DatasetError(
            path,
            f"duplicate value for key {second['key']!r}, metric {second['metric']!r} (first at line {first['_line']})",
            "Remove one of the two rows, or tell them apart with a dimension column",
            line=second["_line"],
        )
    return frame.select(list(SCHEMA))


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text.strip())
    except ValueError:
        return False
    return True


def to_markdown(frame: pl.DataFrame, *, category: str, unit: str | None, as_of: dt.date | None, source: str | None, dimensions: Iterable[str] = ()) -> str:
    """Write a long-format dataset file from the normalised schema (the inverse of parse_dataset)."""
    dimensions = list(dimensions)
    meta = {"type": "dataset", "category": category, "format": "long", "unit": unit, "as_of": as_of, "source": source, "dimensions": dimensions}
    header = ["key", "metric", *dimensions, "value"]

    def escape(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in frame.iter_rows(named=True):
        dims = {item["name"]: item["value"] for item in row["dims"] or []}
        value = "" if row["value"] is None else repr(row["value"])
        cells = [row["key"], row["metric"], *(dims.get(name, "") for name in dimensions), value]
        lines.append("| " + " | ".join(escape(cell) for cell in cells) + " |")
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n\n" + "\n".join(lines) + "\n"


class DatasetSource:
    """The datasets of one folder: parsed lazily, cached by file stamp and hash."""

    def __init__(self, folder: Path | str, *, aliases: dict[str, str] | None = None) -> None:
        self.folder = Path(folder)
        self.aliases = dict(aliases or {})
        self._cache: dict[str, tuple[tuple, str, pl.DataFrame | DatasetError]] = {}
        self._lock = threading.Lock()

    def path_of(self, category: str) -> Path:
        """The file of a category, refusing names that could leave the folder."""
        if not isinstance(category, str) or not CATEGORY_NAME.match(category):
            raise DatasetError(self.folder / str(category), f"{category!r} is not a dataset category name", "Use letters, digits, '-' and '_' only (the file is datasets/<category>.md)")
        path = self.folder / f"{category}.md"
        resolved_folder = self.folder.resolve()
        if path.exists() and resolved_folder not in path.resolve().parents:
            raise DatasetError(path, "points outside the datasets folder (a symbolic link)", "Replace the link with the file itself")
        return path

    def missing_folder(self) -> DatasetError | None:
        """The error to show when the datasets folder is not there (a wrong ``[datasets] folder``); None when it is."""
        if self.folder.is_dir():
            return None
        return DatasetError(self.folder, "the datasets folder does not exist",
                            "Create it, or set [datasets] folder in wiki_config.toml to the folder that holds the <category>.md files")

    def _files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(path for path in self.folder.glob("*.md") if CATEGORY_NAME.match(path.stem) and path.name.lower() != "readme.md")

    def _load(self, path: Path) -> pl.DataFrame | DatasetError:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            cached = self._cache.get(path.stem)
            if cached and cached[0] == stamp:
                return cached[2]
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if cached and cached[1] == digest:
                self._cache[path.stem] = (stamp, digest, cached[2])
                return cached[2]
            try:
                if self.folder.resolve() not in path.resolve().parents:
                    raise DatasetError(path, "points outside the datasets folder (a symbolic link)", "Replace the link with the file itself")
                try:
                    text = data.decode("utf-8-sig")
                except UnicodeDecodeError as err:
                    raise DatasetError(path, "is not UTF-8 text", "Re-save it as UTF-8") from err
                result: pl.DataFrame | DatasetError = parse_dataset(text, path)
            except DatasetError as err:
                result = err
            self._cache[path.stem] = (stamp, digest, result)
            return result

    @property
    def errors(self) -> list[DatasetError]:
        """The files that failed to parse (the others still load)."""
        return [result for result in (self._load(path) for path in self._files()) if isinstance(result, DatasetError)]

    def categories(self) -> list[str]:
        """Categories whose files parse, sorted."""
        return [path.stem for path in self._files() if not isinstance(self._load(path), DatasetError)]

    def read(self, category: str) -> pl.DataFrame:
        """One category's rows (eager); raises DatasetError when its file is bad or missing."""
        path = self.path_of(category)
        if not path.is_file():
            known = ", ".join(self.categories()) or "none"
            raise DatasetError(path, f"no dataset named {category!r}", f"Known categories: {known}")
        result = self._load(path)
        if isinstance(result, DatasetError):
            raise result
        return result

    def summary(self) -> pl.DataFrame:
        """One row per good category: its keys and rows counted, its metrics in file order."""
        rows = []
        for name in self.categories():
            frame = self.read(name)
            rows.append({"category": name, "keys": frame.get_column("key").n_unique(), "rows": frame.height,
                         "metrics": ", ".join(frame.get_column("metric").unique(maintain_order=True).to_list())})
        return pl.DataFrame(rows, schema={"category": pl.Utf8, "keys": pl.Int64, "rows": pl.Int64, "metrics": pl.Utf8})

    def keys(self, category: str) -> list[str]:
        """The distinct keys of a category, in file order."""
        return self.read(category).get_column("key").unique(maintain_order=True).to_list()

    def scan(self) -> pl.LazyFrame:
        """Every good dataset as one LazyFrame (bad files are left out; see errors)."""
        frames = [result for result in (self._load(path) for path in self._files()) if isinstance(result, pl.DataFrame)]
        if not frames:
            return pl.DataFrame(schema=SCHEMA).lazy()
        return pl.concat(frames, how="vertical").lazy()

    def query(
        self,
        category: str | None = None,
        *,
        key: str | Iterable[str] | None = None,
        metric: str | Iterable[str] | None = None,
        dims: dict[str, str] | None = None,
        as_of: dt.date | str | None = None,
    ) -> pl.DataFrame:
        """Rows filtered by category, key(s), metric(s), dimension values and date."""
        frame = self.read(category).lazy() if category is not None else self.scan()
        if key is not None:
            frame = frame.filter(pl.col("key").is_in([key] if isinstance(key, str) else list(key)))
        if metric is not None:
            frame = frame.filter(pl.col("metric").is_in([metric] if isinstance(metric, str) else list(metric)))
        for name, value in (dims or {}).items():
            wanted = pl.struct(pl.lit(str(name)).alias("name"), pl.lit(str(value)).alias("value"))
            frame = frame.filter(pl.col("dims").list.contains(wanted))
        if as_of is not None:
            frame = frame.filter(pl.col("as_of") == (dt.date.fromisoformat(as_of) if isinstance(as_of, str) else as_of))
        return frame.collect()

    def vocabulary(self) -> dict[str, list[tuple[str, str | None]]]:
        """Lower-cased names a question may use -> [(category, key or None)], aliases included.

        A key that appears in several categories maps to each of them.
        """
        names: dict[str, list[tuple[str, str | None]]] = {}

        def add(name: str, target: tuple[str, str | None]) -> None:
            entries = names.setdefault(name.lower(), [])
            if target not in entries:
                entries.append(target)

        for category in self.categories():
            add(category, (category, None))
            add(category.replace("-", " ").replace("_", " "), (category, None))
            for key in self.keys(category):
                add(key, (category, key))
        for alias, target in self.aliases.items():
            for entry in names.get(target.lower(), []):
                add(alias, entry)
        return names


def flatten_dims(frame: pl.DataFrame) -> pl.DataFrame:
    """The dims column (a list of name/value structs) as text, "name=value; name=value", for tables and CSV."""
    return frame.with_columns(
        pl.col("dims").map_elements(lambda items: "; ".join(f"{item['name']}={item['value']}" for item in items), return_dtype=pl.Utf8).alias("dims")
    )
