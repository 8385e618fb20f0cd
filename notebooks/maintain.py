import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="llmwiki · maintain")

with app.setup:
    import argparse
    import sys
    from pathlib import Path

    import marimo as mo
    import polars as pl

    from llmwiki import history
    from llmwiki.errors import LlmwikiError
    from llmwiki.maintain import delete_stale, plan_withdrawal, stale_pages, withdraw
    from llmwiki.workspace import Workspace

    _parser = argparse.ArgumentParser(description="Maintain an llmwiki workspace: withdraw sources, stale pages, history.")
    _parser.add_argument("--workspace", default=str(Path(__file__).resolve().parent.parent / "workspace"))
    _parser.add_argument("--preview", default=None, help="Source whose withdrawal to preview (headless runs).")
    args, _ = _parser.parse_known_args(sys.argv[1:])


@app.cell
def _():
    workspace = Workspace.open(args.workspace)
    mo.md(f"# Maintain\n\nWorkspace `{workspace.root}`")
    return (workspace,)


@app.cell
def _(workspace):
    _sources = [document.path for document in workspace.store.documents(kind="source")]
    source = mo.ui.dropdown(options=_sources, value=args.preview if args.preview in _sources else None, label="Source to withdraw")
    delete_file = mo.ui.switch(value=False, label="Delete the file (otherwise it moves to withdrawn/)")
    mo.vstack([mo.md("## Withdraw a source"), mo.hstack([source, delete_file], justify="start")])
    return delete_file, source


@app.cell
def _(source, workspace):
    mo.stop(source.value is None, mo.md("_Pick a source to see what its withdrawal would delete or mark stale._"))
    deleted, stale = plan_withdrawal(workspace, source.value)
    if not mo.running_in_notebook():
        print(f"preview {source.value}: {len(deleted)} page(s) deleted, {len(stale)} marked stale")
    _lines = [f"- delete `{page}`" for page in deleted] + [f"- mark stale `{page}`" for page in stale]
    withdraw_button = mo.ui.run_button(label=f"Withdraw {source.value}")
    mo.vstack([mo.callout(mo.md("**Preview**\n\n" + ("\n".join(_lines) or "No page depends on it.")), kind="warn"), withdraw_button])
    return (withdraw_button,)


@app.cell
def _(delete_file, source, withdraw_button, workspace):
    mo.stop(not withdraw_button.value)
    try:
        _report = withdraw(workspace, source.value, delete_file=delete_file.value)
        _view = mo.callout(mo.md("```\n" + _report.summary() + "\n```" + (f"\n\nCommit `{_report.commit[:10]}`" if _report.commit else "")), kind="success")
    except LlmwikiError as error:
        _view = mo.callout(mo.md(f"**Not withdrawn.** {error}"), kind="danger")
    _view
    return


@app.cell
def _(workspace):
    _stale = stale_pages(workspace)
    delete_stale_button = mo.ui.run_button(label=f"Delete the {len(_stale)} stale page(s)", disabled=not _stale)
    _table = mo.ui.table(pl.DataFrame({"page": [p for p, _ in _stale], "reason": [r or "" for _, r in _stale]}, schema={"page": pl.Utf8, "reason": pl.Utf8}), selection=None)
    mo.vstack([mo.md("## Stale pages"), _table, delete_stale_button])
    return (delete_stale_button,)


@app.cell
def _(delete_stale_button, workspace):
    mo.stop(not delete_stale_button.value)
    _pages, _commit = delete_stale(workspace)
    mo.callout(mo.md(f"Deleted {len(_pages)} stale page(s)."), kind="success")
    return


@app.cell
def _(workspace):
    _log = history.log(workspace.root, limit=30)
    _frame = pl.DataFrame({"commit": [c[:10] for c, _, _ in _log], "date": [d for _, d, _ in _log], "change": [s for _, _, s in _log]},
                          schema={"commit": pl.Utf8, "date": pl.Utf8, "change": pl.Utf8})
    _note = mo.md("_This workspace keeps no git history (made with --no-git, or the sample inside this repository)._") if not history.is_repository(workspace.root) else None
    mo.vstack([mo.md("## History"), _note, mo.ui.table(_frame, selection=None)])
    return


if __name__ == "__main__":
    app.run()
