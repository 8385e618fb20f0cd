import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="llmwiki · maintain")

with app.setup:
    import argparse

    import altair as alt
    import marimo as mo
    import polars as pl

    from llmwiki import gitrepo as history
    from llmwiki.errors import LlmwikiError
    from llmwiki.lint import findings_table, lint, repair
    from llmwiki.maintain import delete_stale, page_history, plan_withdrawal, restore, stale_pages, withdraw
    from llmwiki.notebook_args import inline_chart_data, parse_notebook_args, progress_by_stage
    from llmwiki.publish.journal import open_workspace
    from llmwiki.services import Services

    _parser = argparse.ArgumentParser(description="Maintain an llmwiki workspace: withdraw sources, stale pages, history.")
    _parser.add_argument("--workspace", default=None, help="The workspace folder (or LLMWIKI_WORKSPACE).")
    _parser.add_argument("--preview", default=None, help="Source whose withdrawal to preview (headless runs).")
    _parser.add_argument("--lint", action="store_true", help="Run lint without pressing its button (headless runs).")
    args = parse_notebook_args(_parser)
    inline_chart_data()


@app.cell
def _():
    workspace = open_workspace(args.workspace)
    services = Services(workspace)  # lint's verifier and backend, loaded on the first lint of this kernel
    mo.md(f"# Maintain\n\nWorkspace `{workspace.root}`")
    return services, workspace


@app.cell
def _(workspace):
    _sources = [document.path for document in workspace.store.documents(kind="source")]
    source = mo.ui.dropdown(options=_sources, value=args.preview if args.preview in _sources else None, label="Source to withdraw")
    delete_file = mo.ui.switch(value=False, label="Delete the file (otherwise it moves to withdrawn/)")
    mo.vstack([mo.md("## Withdraw a source"), mo.hstack([source, delete_file], justify="start")])
    return delete_file, source


@app.cell
def _(source, workspace):
    mo.stop(source.value is None, mo.md("_Pick a source to see what its withdrawal would delete, rewrite or mark stale._"))
    _plan = plan_withdrawal(workspace, source.value)
    if not mo.running_in_notebook():
        print(f"preview {source.value}: {len(_plan.deleted)} page(s) deleted, {len(_plan.rewritten)} rewritten, {len(_plan.stale)} marked stale")
    _lines = [f"- {line}" for line in _plan.lines()]
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
def _():
    lint_button = mo.ui.run_button(label="Run lint (scores sentence pairs with the NLI model)")
    mo.vstack([mo.md("## Lint\n\nBroken links, stale pages, contradictions between concept pages that share a source, data gaps, missing cross-references, orphans, thin pages."), lint_button])
    return (lint_button,)


@app.cell
def _(lint_button, services, workspace):
    mo.stop(not (lint_button.value or args.lint), mo.md("_Press the button to lint the wiki._"))
    with progress_by_stage("Linting") as _progress:  # counts: pages checked, then sentence pairs scored by the NLI model
        lint_report = lint(workspace, services=services, on_progress=_progress)
    lint_rows = pl.DataFrame(findings_table(lint_report), schema={"severity": pl.Utf8, "kind": pl.Utf8, "pages": pl.Utf8, "detail": pl.Utf8, "sentences": pl.Utf8, "action": pl.Utf8})
    if not mo.running_in_notebook():
        print(f"lint: {lint_report.summary()}")
    return lint_report, lint_rows


@app.cell
def _(lint_report, lint_rows):
    _counts = lint_rows.group_by("kind", "severity").len("findings")
    _chart = alt.Chart(_counts).mark_bar().encode(
        x=alt.X("findings:Q", title="findings"),
        y=alt.Y("kind:N", sort="-x", title=None),
        color=alt.Color("severity:N", scale=alt.Scale(domain=["error", "warning", "info"], range=["#c0392b", "#e67e22", "#7f8c8d"])),
        tooltip=["kind", "severity", "findings"],
    ).properties(height=alt.Step(22), title="Findings by kind") if lint_rows.height else mo.md("_No findings._")
    repair_button = mo.ui.run_button(label="Write repairs into the pages (contradiction warnings, data-gap TODOs)", disabled=not lint_rows.height)
    _shown = [mo.md(f"**{lint_report.summary()}**")]
    if lint_report.notes:
        _shown.append(mo.md("\n".join(f"- {note}" for note in lint_report.notes)))
    mo.vstack([*_shown, _chart, mo.ui.table(lint_rows, selection=None, page_size=15), repair_button])
    return (repair_button,)


@app.cell
def _(lint_report, repair_button, workspace):
    mo.stop(not repair_button.value)
    _pages, _commit = repair(workspace, lint_report)
    mo.callout(mo.md(f"Repaired {len(_pages)} page(s)" + (f"; commit `{_commit[:10]}`" if _commit else "") + "."), kind="success")
    return


@app.cell
def _(workspace):
    if history.is_repository(workspace.root):
        _entries = page_history(workspace, limit=30)
        _frame = pl.DataFrame({"commit": [e.commit[:10] for e in _entries], "date": [e.date[:19].replace("T", " ") for e in _entries],
                               "change": [e.subject for e in _entries], "store snapshot": ["yes" if e.snapshot else "" for e in _entries]},
                              schema={"commit": pl.Utf8, "date": pl.Utf8, "change": pl.Utf8, "store snapshot": pl.Utf8})
        history_table = mo.ui.table(_frame, selection="single", label="Pick a commit to go back to")
        _note = mo.md("Restoring is a new commit: files come back as they were; the store from its snapshot when one was kept, else rebuilt from the files.")
    else:
        history_table = mo.ui.table(pl.DataFrame({"commit": []}, schema={"commit": pl.Utf8}), selection=None)
        _note = mo.md("_This workspace keeps no git history (made with --no-git, or the sample inside this repository)._")
    if not mo.running_in_notebook():
        print(f"history: {len(history_table.data)} change(s)")
    mo.vstack([mo.md("## History"), _note, history_table])
    return (history_table,)


@app.cell
def _(history_table):
    _picked = history_table.value
    mo.stop(_picked is None or len(_picked) == 0)
    restore_target = _picked["commit"][0]
    restore_button = mo.ui.run_button(label=f"Restore the workspace to {restore_target}")
    restore_button
    return restore_button, restore_target


@app.cell
def _(restore_button, restore_target, workspace):
    mo.stop(not restore_button.value)
    try:
        _report = restore(workspace, restore_target)
        _view = mo.callout(mo.md("```\n" + _report.summary() + "\n```"), kind="success")
    except LlmwikiError as error:
        _view = mo.callout(mo.md(f"**Not restored.** {error}"), kind="danger")
    _view
    return


if __name__ == "__main__":
    app.run()
