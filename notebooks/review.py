import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="llmwiki · review")

with app.setup:
    import argparse

    import altair as alt
    import marimo as mo
    import polars as pl

    from llmwiki.review import decide, page_under_wiki, resolve, review_queue, reviewer_name, stored_review
    from llmwiki.verify import flagged_spans, mark, pages_needing_verification, source_at_chunk, verify_pages, wiki_pages
    from llmwiki.verify.nli import describe, not_nli_note
    from llmwiki.notebook_args import inline_chart_data, parse_notebook_args, progress_by_stage
    from llmwiki.errors import LlmwikiError
    from llmwiki.publish.journal import open_workspace
    from llmwiki.services import Services

    _parser = argparse.ArgumentParser(description="Review wiki pages: sentence scores against their sources, and the reviewers' verdicts.")
    _parser.add_argument("--workspace", default=None, help="The workspace folder (or LLMWIKI_WORKSPACE).")
    _parser.add_argument("--verify", action="store_true", help="Verify the chosen pages at once (headless runs).")
    _parser.add_argument("--page", action="append", default=None, help="Page to review (repeatable; default: all).")
    _parser.add_argument("--accept", action="append", default=[], metavar="PAGE:N", help="Accept sentence N of PAGE (headless; repeatable).")
    _parser.add_argument("--reject", action="append", default=[], metavar="PAGE:N", help="Reject sentence N of PAGE (headless; repeatable).")
    _parser.add_argument("--note", default=None, help="The note that goes with --reject.")
    _parser.add_argument("--reviewer", default=None, help="Who decides (default: git config user.name).")
    _parser.add_argument("--resolve", action="append", default=[], metavar="ID:KEEP", help="Resolve contested claim ID keeping a, b or both (headless).")
    args = parse_notebook_args(_parser)
    inline_chart_data()


@app.cell
def _():
    get_decisions, set_decisions = mo.state(0)  # moved by every verdict or resolution: the tables below read the store again
    get_outcome, set_outcome = mo.state("")  # what the last click decided, in one sentence
    return get_decisions, get_outcome, set_decisions, set_outcome


@app.cell
def _():
    workspace = open_workspace(args.workspace)
    pages_available = wiki_pages(workspace)
    verifier = Services(workspace).verifier  # loaded once per kernel; its name is the one every score below carries
    _needing = pages_needing_verification(workspace, pages_available)
    pages_needing = _needing
    mo.md(f"# Review\n\nWorkspace `{workspace.root}` · {len(pages_available)} pages, {len(_needing)} with no or an outdated verification · "
          f"verifier **{describe(verifier)}** ({workspace.config.verification.model} in wiki_config.toml)")
    return pages_available, pages_needing, verifier, workspace


@app.cell
def _(pages_available, pages_needing, workspace):
    pages = mo.ui.multiselect(options=pages_available, value=args.page or pages_needing or pages_available,
                              label=f"Pages (preselected: the {len(pages_needing)} with no or an outdated verification)" if pages_needing and not args.page else "Pages")
    threshold = mo.ui.slider(0.0, 1.0, step=0.05, value=workspace.config.verification.threshold, label="Supported at score ≥", show_value=True)
    verify_button = mo.ui.run_button(label="Verify selected pages")
    show = mo.ui.radio(options=["all sentences", "unsupported only", "unreviewed only", "outdated pages only"], value="all sentences", label="Show", inline=True)
    mo.vstack([pages, mo.hstack([threshold, verify_button], justify="start"), show])
    return pages, show, threshold, verify_button


@app.cell
def _(pages, verifier, verify_button, workspace):
    _run = verify_button.value or args.verify  # stored scores show below at once; Verify only re-scores
    verified, _failures = [], []
    if _run:
        with progress_by_stage(f"Verifying with {verifier.name}") as _progress:
            verified, _failures = verify_pages(workspace, pages.value, verifier, on_progress=lambda done, total, page: _progress(done, total, "pages"))
        if not mo.running_in_notebook():
            print(f"verified {len(verified)} pages with {verifier.name}, {len(_failures)} failed")
    _notes = [] if _run else [mo.md("_Stored scores are shown below; press **Verify** to score new or changed pages._")]
    _notes += [mo.callout(mo.md(f"**{page}**: {reason}"), kind="warn") for page, reason in _failures]
    _notes += [mo.callout(mo.md(f"**{result.page}** was checked without its missing sources: {', '.join(result.missing_sources)}."), kind="warn")
               for result in verified if result.missing_sources]
    if (_note := not_nli_note(verifier)) is not None:
        _notes.insert(0, mo.callout(mo.md(_note), kind="info"))
    mo.vstack(_notes) if _notes else mo.md("")
    return (verified,)


@app.cell
def _(verified, verifier, workspace):
    _ = verified
    headless_decisions = []  # what --accept, --reject and --resolve did (headless runs)
    _reviewer = reviewer_name(workspace, args.reviewer)
    for _flag, _values in (("accept", args.accept), ("reject", args.reject)):
        for _value in _values:
            _page, _, _number = _value.rpartition(":")
            _review = stored_review(workspace, page_under_wiki(workspace, _page))
            if _review is None:
                raise SystemExit(f"{_page}: not verified yet; pass --verify")
            decide(workspace, _review, **{_flag: [int(_number)]}, note=args.note, reviewer=_reviewer)
            headless_decisions.append(f"{_flag}ed {_page} sentence {_number}")
    for _value in args.resolve:
        _id, _, _keep = _value.partition(":")
        resolve(workspace, int(_id), keep=_keep, note=args.note, reviewer=_reviewer, verifier=verifier)
        headless_decisions.append(f"resolved contested claim {_id}: {_keep}")
    if headless_decisions and not mo.running_in_notebook():
        print("decisions: " + "; ".join(headless_decisions))
    return (headless_decisions,)


@app.cell
def _(get_decisions, headless_decisions, pages, show, threshold, verified, workspace):
    _ = verified, headless_decisions, get_decisions()
    _rows = []
    _outdated = []
    scored = {}  # (page, sentence) -> its stored score, for opening the source at its chunk
    reviews = {}  # page -> its review (verdicts beside scores), read when this table was made
    with workspace.store.session():  # one connection for every page's stored review (not a connection a lookup)
        for _page in pages.value:
            _review = stored_review(workspace, _page)
            if _review is not None:
                reviews[_page] = _review
    for _page, _review in reviews.items():
        _stored = _review.verification
        if _stored.outdated:
            _outdated.append(_page)
        for _reviewed in _review.sentences:
            _sentence = _reviewed.score
            scored[(_page, _sentence.sentence)] = _sentence
            _by = f" ({_reviewed.verdict.reviewer}{': ' + _reviewed.verdict.note if _reviewed.verdict.note else ''})" if _reviewed.verdict is not None else ""
            _rows.append({
                "page": _page, "#": _reviewed.number, "sentence": _sentence.sentence, "score": round(_sentence.value, 3),
                "supported": _reviewed.supported(threshold.value), "model supported": _sentence.supported(threshold.value),
                "review": _reviewed.state + _by,
                "why": _sentence.why(threshold.value) or "", "p_entailment": round(_sentence.p_entailment, 3), "p_contradiction": round(_sentence.p_contradiction, 3),
                "weakest clause": _sentence.weakest_clause or "", "best excerpt": _sentence.excerpt or "", "source": f"{_sentence.excerpt_path} p.{_sentence.excerpt_page}" if _sentence.excerpt_path else "",
                "chunk": f"c{_sentence.excerpt_chunk_id}" if _sentence.excerpt_chunk_id is not None else "", "outdated": _stored.outdated,
            })
    sentences = pl.DataFrame(_rows, schema={"page": pl.Utf8, "#": pl.Int64, "sentence": pl.Utf8, "score": pl.Float64, "supported": pl.Boolean,
                                            "model supported": pl.Boolean, "review": pl.Utf8, "why": pl.Utf8,
                                            "p_entailment": pl.Float64, "p_contradiction": pl.Float64, "weakest clause": pl.Utf8, "best excerpt": pl.Utf8,
                                            "source": pl.Utf8, "chunk": pl.Utf8, "outdated": pl.Boolean}).sort("score")
    if not mo.running_in_notebook():
        print(f"sentences: {sentences.height} rows, {sentences.filter(pl.col('supported')).height} supported at {threshold.value:g}, outdated pages: {len(_outdated)}, "
              f"reviewed: {sentences.filter(pl.col('review').str.starts_with('accepted') | pl.col('review').str.starts_with('rejected')).height}")
    _shown = [mo.md("## Sentences, weakest first (score: NLI and fact checks, calibrated; why: what the excerpt lacks or opposes)")]
    if _outdated:
        _shown.append(mo.callout(mo.md("Outdated (the page or a source changed since): " + ", ".join(f"`{p}`" for p in _outdated)), kind="warn"))
    _filters = {"unsupported only": ~pl.col("supported"), "outdated pages only": pl.col("outdated"),
                "unreviewed only": pl.col("review").str.starts_with("unreviewed") | pl.col("review").str.starts_with("changed since")}
    _listed = sentences.filter(_filters[show.value]) if show.value in _filters else sentences
    _shown.append(mo.md(f"{_listed.height} of {sentences.height} sentences shown ({sentences.filter(pl.col('supported')).height} supported at {threshold.value:g})"))
    sentence_table = mo.ui.table(_listed, selection="single", page_size=15, label="Select a sentence to open its source at the chunk of its best excerpt")
    _shown.append(sentence_table)
    if _listed.height:
        _shown.append(mo.download(data=_listed.write_csv().encode("utf-8"), filename="verification.csv", mimetype="text/csv", label="Download these rows (CSV)"))
    mo.vstack(_shown)
    return reviews, scored, sentence_table, sentences


@app.cell
def _(scored, sentence_table, threshold, workspace):
    mo.stop(not len(sentence_table.value) and sentence_table.data.is_empty())
    _row = (sentence_table.value if len(sentence_table.value) else sentence_table.data).row(0, named=True)  # default: the weakest shown
    _sentence = scored[(_row["page"], _row["sentence"])]
    _source = source_at_chunk(workspace, _sentence)
    _verdict = "supported" if _sentence.supported(threshold.value) else f"not supported: {_sentence.why(threshold.value)}"
    _parts = [mo.md(f"**{_row['page']}** · score {_sentence.value:.2f}, {_verdict}"),
              mo.md("> " + mark(_sentence.sentence, flagged_spans(_sentence.sentence, _sentence.flagged)))]
    if _source is None:
        _parts.append(mo.md("_Its source or chunk is no longer stored (re-ingested since): verify the page again._" if _sentence.excerpt_chunk_id is not None else "_No excerpt was stored for it._"))
    else:
        _where = f"`{_source.path}` p.{_source.page}" + (f" · {_source.breadcrumb}" if _source.breadcrumb else "") + f" · chunk c{_source.chunk_id}"
        _parts += [mo.md(f"**Source at the chunk** {_where}" + ("" if _source.excerpt else " (the best excerpt no longer matches its text)")),
                   mo.callout(mo.md(_source.marked()), kind="neutral")]
        _around = {name: mo.md(text) for name, text in (("The chunk before it", _source.before), ("The chunk after it", _source.after)) if text}
        if _around:
            _parts.append(mo.accordion(_around))
    if not mo.running_in_notebook():
        print(f"source at chunk: {_row['page']} -> " + (f"{_source.path} c{_source.chunk_id}, excerpt {'marked' if _source.excerpt else 'not found'}" if _source else "none"))
    mo.vstack(_parts)
    return


@app.cell
def _(workspace):
    reviewer = mo.ui.text(value=reviewer_name(workspace), label="Reviewer")
    note = mo.ui.text(value="", label="Note (why)", full_width=True)
    return note, reviewer


@app.cell
def _(note, reviewer, reviews, sentence_table, set_decisions, set_outcome, workspace):
    mo.stop(sentence_table.data.is_empty())
    _row = (sentence_table.value if len(sentence_table.value) else sentence_table.data).row(0, named=True)

    def _decide(verdict: str) -> None:
        """The decision is taken in the click's callback, once per click (a cell re-run never takes it again)."""
        try:
            decide(workspace, reviews[_row["page"]], **{verdict: [_row["#"]]}, note=note.value or None, reviewer=reviewer.value)
            set_outcome(f"**{_row['page']}** sentence {_row['#']}: {verdict}ed by {reviewer.value}.")
        except LlmwikiError as error:  # one clear sentence: a number gone, another reviewer's verdict since, a bad note
            set_outcome(f"Not recorded: {error}")
        set_decisions(lambda version: version + 1)

    accept_button = mo.ui.button(label="Accept sentence", on_click=lambda _: _decide("accept"))
    reject_button = mo.ui.button(label="Reject sentence", on_click=lambda _: _decide("reject"))
    mo.vstack([mo.md(f"## Decide sentence {_row['#']} of `{_row['page']}`\n\n> {_row['sentence']}\n\nNow: **{_row['review']}** · model score {_row['score']:.2f}"),
               mo.hstack([reviewer, note], justify="start"), mo.hstack([accept_button, reject_button], justify="start")])
    return


@app.cell
def _(get_outcome):
    _outcome = get_outcome()
    mo.stop(not _outcome)
    mo.callout(mo.md(_outcome), kind="danger" if _outcome.startswith("Not ") else "success")
    return


@app.cell
def _(get_decisions, headless_decisions, workspace):
    _ = get_decisions(), headless_decisions
    queue = review_queue(workspace)
    contests = {f"#{contest.id}: {contest.page_a} / {contest.page_b}": contest for contest in workspace.store.contests(status="open")}
    _table = pl.DataFrame([{"kind": item.kind, "page": item.page, "since": item.since, "reason": item.reason,
                            "contested claim": f"#{item.contest_id}" if item.contest_id is not None else "", "sentence": str(item.sentence or "")} for item in queue],
                          schema={"kind": pl.Utf8, "page": pl.Utf8, "since": pl.Utf8, "reason": pl.Utf8, "contested claim": pl.Utf8, "sentence": pl.Utf8})
    if not mo.running_in_notebook():
        print(f"queue: {len(queue)} item(s) ({', '.join(sorted({item.kind for item in queue})) or 'none'}); contested open: {len(contests)}")
    mo.vstack([mo.md(f"## Review queue, oldest first ({len(queue)} waiting)"), mo.ui.table(_table, selection=None, page_size=10) if len(queue) else mo.md("_Nothing waits for a reviewer._")])
    return (contests,)


@app.cell
def _(contests, note, reviewer, set_decisions, set_outcome, verifier, workspace):
    mo.stop(not contests)
    contest_choice = mo.ui.dropdown(options=list(contests), value=list(contests)[0], label="Contested claim")
    keep = mo.ui.radio(options={"keep a (reject b)": "a", "keep b (reject a)": "b", "keep both as contested": "both"}, value="keep both as contested", label="Resolution", inline=True)

    def _resolve() -> None:
        """Resolved in the click's callback, once per click."""
        try:
            _resolved = resolve(workspace, contests[contest_choice.value].id, keep=keep.value, note=note.value or None, reviewer=reviewer.value,
                                verifier=verifier)
            set_outcome(f"Contested claim {_resolved.id} resolved: **{_resolved.status}** by {reviewer.value}.")
        except LlmwikiError as error:
            set_outcome(f"Not resolved: {error}")
        set_decisions(lambda version: version + 1)

    resolve_button = mo.ui.button(label="Resolve", on_click=lambda _: _resolve())
    return contest_choice, keep, resolve_button


@app.cell
def _(contest_choice, contests, keep, resolve_button):
    _contest = contests[contest_choice.value]
    _sides = mo.md(f"**a** `{_contest.page_a}`: {_contest.sentence_a}\n\n**b** `{_contest.page_b}`: {_contest.sentence_b}\n\nP(contradiction) {_contest.score:.2f}")
    mo.vstack([mo.md("## Resolve a contested claim"), contest_choice, _sides, mo.hstack([keep, resolve_button], justify="start")])
    return


@app.cell
def _(sentences, threshold):
    mo.stop(sentences.is_empty(), mo.md("_No stored verification for these pages yet._"))
    _histogram = (
        alt.Chart(sentences)
        .mark_bar()
        .encode(x=alt.X("score:Q", bin=alt.Bin(maxbins=20, extent=[0, 1]), scale=alt.Scale(domain=[0, 1]), title="score (calibrated)"),
                y=alt.Y("count():Q", title="sentences"), color=alt.Color("supported:N"))
    )
    _rule = alt.Chart(pl.DataFrame({"threshold": [threshold.value]})).mark_rule(strokeDash=[4, 4], color="black").encode(x="threshold:Q")
    _share = (
        sentences.group_by("page").agg(pl.col("supported").mean().alias("supported share"), pl.len().alias("sentences")).sort("supported share")
    )
    _bars = alt.Chart(_share).mark_bar().encode(x=alt.X("supported share:Q", scale=alt.Scale(domain=[0, 1])), y=alt.Y("page:N", sort="x", title=None), tooltip=["page", "supported share", "sentences"])
    mo.vstack([mo.md("## Scores"), mo.ui.altair_chart(_histogram + _rule), mo.md("## Supported share per page"), mo.ui.altair_chart(_bars)])
    return


if __name__ == "__main__":
    app.run()
