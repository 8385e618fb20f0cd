import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="llmwiki · ingest")

with app.setup:
    import argparse
    from pathlib import Path

    import marimo as mo
    import polars as pl

    from llmwiki.errors import LlmwikiError
    from llmwiki.ingest.extract import sections_of
    from llmwiki.ingest.sources import import_bytes
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.notebook_args import parse_notebook_args
    from llmwiki.publish.journal import open_workspace
    from llmwiki.services import Services

    _parser = argparse.ArgumentParser(description="Ingest sources into an llmwiki workspace.")
    _parser.add_argument("--workspace", default=None, help="The workspace folder (or LLMWIKI_WORKSPACE).")
    _parser.add_argument("--run", action="store_true", help="Ingest sources/ at once (headless runs).")
    args = parse_notebook_args(_parser)


@app.cell
def _():
    workspace = open_workspace(args.workspace)
    services = Services(workspace)  # the backend, tracer and embedder of every ingest in this kernel
    mo.md(f"# Ingest\n\nWorkspace `{workspace.root}`. Drop files into `sources/` or upload them here, then press **Ingest**.")
    return services, workspace


@app.cell
def _():
    upload = mo.ui.file(label="Add files to sources/", multiple=True, filetypes=[".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx"])
    write_wiki = mo.ui.switch(value=True, label="Write wiki pages")
    ingest_button = mo.ui.run_button(label="Ingest")
    mo.hstack([upload, write_wiki, ingest_button], justify="start")
    return ingest_button, upload, write_wiki


@app.cell
def _(upload, workspace):
    uploaded, _refused = [], []
    for _file in upload.value or []:
        try:
            uploaded.append(import_bytes(workspace, _file.name, _file.contents).name)
        except LlmwikiError as _error:  # another file of that name, or a name that is not a plain file name
            _refused.append(str(_error))
    _notes = ([mo.md(f"Added to sources/: {', '.join(uploaded)}")] if uploaded else []) + [mo.callout(mo.md(_reason), kind="warn") for _reason in _refused]
    mo.vstack(_notes) if _notes else None
    return (uploaded,)


@app.cell
def _(ingest_button, services, uploaded, workspace, write_wiki):
    mo.stop(not (ingest_button.value or args.run), mo.md("_Press **Ingest** to ingest what is new or changed in sources/._"))
    _files = [path for path in workspace.sources_dir.rglob("*") if path.is_file() and not path.name.startswith(".")]
    with mo.status.progress_bar(total=max(len(_files), 1), title="Ingesting", remove_on_exit=True) as _bar:
        _last = {"done": 0}

        def _progress(done, total, path):
            if done > _last["done"]:
                _bar.update(increment=done - _last["done"], subtitle=Path(path).name)
                _last["done"] = done

        try:
            report = ingest_paths(workspace, on_progress=_progress, generate=write_wiki.value, services=services)
        except LlmwikiError as error:
            report = None
            mo.output.replace(mo.callout(mo.md(f"**Ingest stopped.** {error}"), kind="danger"))
    if report is not None and not mo.running_in_notebook():
        print(report.summary())
        for _action, _line in report.problem_lines():
            print(f"{_action}: {_line}")
    return (report,)


@app.cell
def _(report):
    mo.stop(report is None)
    _generation = report.generation
    _pages = _generation.pages if _generation else []
    _lines = [f"**{report.summary()}**"]
    if _generation is not None:
        _lines.append(f"Wiki: {len(_pages)} pages written, {len(_generation.deleted)} deleted" + (f", commit `{_generation.commit[:10]}`" if _generation.commit else ""))
        _lines += [f"- note: {note}" for note in _generation.notes]
    _lines += [f"- **{action}**: {line}" if action != "skipped" else f"- skipped: {line}" for action, line in report.problem_lines()]
    mo.callout(mo.md("\n\n".join(_lines)), kind="warn" if report.problems else "success")
    return


@app.cell
def _(report, workspace):
    _ = report
    extraction_reports = workspace.store.extraction_reports()
    _rows = []
    for _document in workspace.store.documents(kind="source"):
        _read = extraction_reports.get(_document.path, {})
        _rows.append({"path": _document.path, "status": _document.status, "extractor": _document.parser or "", "sections": _read.get("sections", 0),
                      "sentences": _read.get("sentences", 0), "code blocks": _read.get("code_blocks", 0), "table rows": _read.get("table_rows", 0),
                      "left out (chars)": sum(_read.get("dropped", {}).values()), "reason": _document.error or ""})
    documents = pl.DataFrame(_rows, schema={"path": pl.Utf8, "status": pl.Utf8, "extractor": pl.Utf8, "sections": pl.Int64, "sentences": pl.Int64,
                                            "code blocks": pl.Int64, "table rows": pl.Int64, "left out (chars)": pl.Int64, "reason": pl.Utf8})
    if not mo.running_in_notebook():
        print(f"documents: {documents.height} ({documents.filter(pl.col('status') == 'failed').height} failed)")
    mo.vstack([mo.md("## Sources and what was read from them"), mo.ui.table(documents, selection=None)])
    return (extraction_reports,)


@app.cell
def _(extraction_reports):
    source_picker = mo.ui.dropdown(options=sorted(extraction_reports), label="Show what was read from")
    source_picker
    return (source_picker,)


@app.cell
def _(extraction_reports, source_picker, workspace):
    mo.stop(not source_picker.value)
    _document = workspace.store.document_by_path(source_picker.value)
    _sections = sections_of(workspace.store.pages(_document.id)) if _document is not None else []
    _read = extraction_reports.get(source_picker.value, {})
    _text = mo.accordion({f"{_index + 1}. {_heading}": mo.plain_text(_body) for _index, (_heading, _body) in enumerate(_sections)}) if _sections else mo.md("_No text was kept._")
    _left_out = pl.DataFrame([{"reason": _reason, "page": _page, "text": _sample} for _reason, _sample, _page in _read.get("dropped_examples", [])],
                             schema={"reason": pl.Utf8, "page": pl.Int64, "text": pl.Utf8})
    _counts = ", ".join(f"{_reason}: {_characters:,} characters" for _reason, _characters in _read.get("dropped", {}).items()) or "nothing"
    mo.hstack([
        mo.vstack([mo.md(f"### Kept, by section ({len(_sections)})\n\nRead by `{_read.get('extractor', '?')}`"), _text]),
        mo.vstack([mo.md(f"### Left out as page furniture\n\n{_counts}"), mo.ui.table(_left_out, selection=None)]),
    ], widths=[3, 2], align="start")
    return


@app.cell
def _(report, workspace):
    _ = report
    _log = workspace.root / "wiki" / "log.md"
    _tail = "\n".join(_log.read_text(encoding="utf-8").splitlines()[-25:]) if _log.exists() else "(no log yet)"
    mo.accordion({"Log (last lines)": mo.md(_tail)})
    return


if __name__ == "__main__":
    app.run()
