import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="llmwiki · datasets")

with app.setup:
    import argparse

    import altair as alt
    import marimo as mo
    import polars as pl

    from llmwiki.datasets import flatten_dims
    from llmwiki.notebook_args import inline_chart_data, parse_notebook_args
    from llmwiki.publish.journal import open_workspace
    from llmwiki.services import Services

    _parser = argparse.ArgumentParser(description="Browse the Markdown datasets of an llmwiki workspace.")
    _parser.add_argument("--workspace", default=None, help="The workspace folder (or LLMWIKI_WORKSPACE).")
    _parser.add_argument("--category", default=None, help="Category to open first.")
    args = parse_notebook_args(_parser)
    inline_chart_data()


@app.cell
def _():
    workspace = open_workspace(args.workspace)
    source = Services(workspace).datasets  # its parse cache lives as long as the kernel
    _errors = [mo.callout(mo.md(f"Skipped: {error}"), kind="warn") for error in source.errors]
    _summary = source.summary()
    mo.vstack([mo.md(f"# Datasets\n\nFolder `{workspace.datasets_dir}`"), *_errors, mo.ui.table(_summary, selection=None, label="Categories") if _summary.height else mo.md("")])
    return (source,)


@app.cell
def _(source):
    _categories = source.categories()
    _first = args.category if args.category in _categories else (_categories[0] if _categories else None)
    category = mo.ui.dropdown(options=_categories, value=_first, label="Category")
    category
    return (category,)


@app.cell
def _(category, source):
    mo.stop(category.value is None, mo.md("_No dataset files yet: add `datasets/<category>.md` (see datasets/README.md)._"))
    frame = source.read(category.value)
    keys = mo.ui.multiselect(options=frame.get_column("key").unique(maintain_order=True).to_list(), label="Keys")
    metrics = mo.ui.multiselect(options=frame.get_column("metric").unique(maintain_order=True).to_list(), label="Metrics")
    mo.hstack([keys, metrics], justify="start")
    return frame, keys, metrics


@app.cell
def _(category, frame, keys, metrics, source):
    selected = source.query(category.value, key=keys.value or None, metric=metrics.value or None)
    flat = flatten_dims(selected)
    if not mo.running_in_notebook():
        print(f"{category.value}: {selected.height} of {frame.height} rows")
    mo.vstack([mo.md(f"{selected.height} of {frame.height} rows"), mo.ui.table(flat, selection=None)])
    return (flat,)


@app.cell
def _(flat):
    mo.stop(flat.is_empty())
    _data = flat.with_columns(pl.when(pl.col("dims") == "").then(pl.col("metric")).otherwise(pl.col("metric") + " · " + pl.col("dims")).alias("series"))
    # One chart per metric: values of different metrics (a birth year, a count) are never added or share an axis;
    # series of one metric (its dims) stand side by side, not stacked. "~g": 1745, not "1,745".
    _charts = []
    for _metric in _data.get_column("metric").unique(maintain_order=True).to_list():
        _part = _data.filter(pl.col("metric") == _metric)
        _unit = _part.get_column("unit").drop_nulls().first() or ""
        _charts.append(mo.ui.altair_chart(
            alt.Chart(_part, title=f"{_metric}" + (f" ({_unit})" if _unit else ""))
            .mark_bar()
            .encode(x=alt.X("value:Q", title=_unit or _metric, axis=alt.Axis(format="~g")), y=alt.Y("key:N", title=None), yOffset="series:N",
                    color=alt.Color("series:N", title="series"), tooltip=["key", "metric", "dims", alt.Tooltip("value:Q", format="~g"), "unit", "as_of"])
            .properties(height=alt.Step(14))
        ))
    mo.vstack(_charts)
    return


if __name__ == "__main__":
    app.run()
