import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium", app_title="llmwiki · ask")

with app.setup:
    import argparse

    import marimo as mo
    import polars as pl

    from llmwiki.publish.answers import save_answer
    from llmwiki.read.answer import answer_question
    from llmwiki.read.chat import agentic_answer
    from llmwiki.read.conversation import Conversation
    from llmwiki.errors import LlmwikiError
    from llmwiki.notebook_args import parse_notebook_args
    from llmwiki.publish.journal import open_workspace
    from llmwiki.services import Services

    _parser = argparse.ArgumentParser(description="Ask questions of an llmwiki workspace.")
    _parser.add_argument("--workspace", default=None, help="The workspace folder (or LLMWIKI_WORKSPACE).")
    _parser.add_argument("--question", default="", help="Answer this question at once (headless runs).")
    _parser.add_argument("--save", action="store_true", help="Save the answer as a wiki page (headless runs).")
    args = parse_notebook_args(_parser)


@app.cell
def _():
    workspace = open_workspace(args.workspace)
    services = Services(workspace)  # the backend now; the ranker, embedder and verifier on the first question that needs them, once per kernel
    backend = services.backend
    mo.md(f"# Ask the wiki\n\nWorkspace `{workspace.root}` · backend **{backend.name}** ({backend.model})")
    return backend, services, workspace


@app.cell
def _(workspace):
    _pages = sorted(path.relative_to(workspace.root).as_posix() for path in (workspace.root / "wiki").rglob("*.md"))
    question = mo.ui.text_area(value=args.question, placeholder="Ask a question about your sources…", label="Question", full_width=True)
    open_page = mo.ui.dropdown(options=_pages, value=None, label="Open page (optional)")
    return open_page, question


@app.cell
def _(backend):
    agentic = mo.ui.switch(value=False, label="Agentic (tools)", disabled=not backend.generates)
    strict = mo.ui.switch(value=backend.generates, label="Strict (hold the answer until it rests on a tool result)", disabled=not backend.generates)
    ask_button = mo.ui.run_button(label="Ask")
    return agentic, ask_button, strict


@app.cell
def _(agentic, ask_button, backend, open_page, question, strict):
    _why = [] if backend.generates else [mo.md(
        f"_Agentic and Strict need a generating backend with tool calls; this workspace answers with **{backend.name}** "
        '(set `[llm] backend = "openai"` in wiki_config.toml to use them)._')]
    mo.vstack([question, mo.hstack([open_page, agentic, strict, ask_button], justify="start"), *_why])
    return


@app.cell
def _():
    conversation = Conversation()
    get_answers, set_answers = mo.state([])
    return conversation, get_answers, set_answers


@app.cell
def _(agentic, ask_button, conversation, open_page, question, services, set_answers, strict, workspace):
    mo.stop(not (ask_button.value or args.question), mo.md("_Type a question and press **Ask**._"))
    mo.stop(not question.value.strip(), mo.callout(mo.md("The question is empty."), kind="warn"))
    try:
        with mo.status.spinner(title="Selecting context and answering…"):
            if agentic.value:
                answer = agentic_answer(workspace, question.value, services=services, strict=strict.value, conversation=conversation)
            else:
                answer = answer_question(workspace, question.value, open_page=open_page.value, services=services, conversation=conversation)
    except LlmwikiError as error:
        answer = None
        mo.output.replace(mo.callout(mo.md(f"**Could not answer.** {error}"), kind="danger"))
    if answer is not None:
        conversation.add(question.value, answer)
        set_answers(lambda previous: previous + [answer])
        if not mo.running_in_notebook():
            print(f"readout: {answer.selection.readout}")
            print(("refused: " if answer.refused else "answer: ") + answer.text)
            if answer.verdict:
                print(f"verdict: {answer.verdict}")
            print(f"decided by: {answer.decided_by}")
            print(f"citations: {len(answer.citations)}")
            for _citation in answer.citations:
                print(f"  [c{_citation.chunk_id}] {_citation.label}")
    return (answer,)


@app.cell
def _(answer):
    mo.stop(answer is None)
    _readout = mo.callout(mo.md(f"**Selection.** {answer.selection.readout}"), kind="neutral")
    if answer.refused:  # a refusal is shown as one: nothing is cited and nothing can be saved
        _body = mo.callout(mo.md(f"**No answer.** {answer.text}"), kind="warn")
    elif answer.verdict:
        _body = mo.vstack([mo.md(f"### {answer.verdict.capitalize()}"), mo.md(answer.text)])
    else:
        _body = mo.md(answer.text)
    _parts = [_readout, _body]
    if answer.read_as_note:
        _parts.insert(1, mo.callout(mo.md(answer.read_as_note), kind="info"))
    if answer.tool_steps:
        _parts.append(mo.md("\n".join(f"- `{step}`" for step in answer.tool_steps)))
    if answer.decided_by:  # which reading decided, and the readings tried before it (docs/readings.md)
        _trail = "\n".join(f"{_number}. **{_step.reading}**: {_step.outcome}" + (f" ({_step.reason})" if _step.reason else "")
                            for _number, _step in enumerate(answer.steps, start=1))
        _parts.append(mo.accordion({f"Why this answer: decided by {answer.decided_by}": mo.md(_trail or "No reading was tried.")}))
    mo.vstack(_parts)
    return


@app.cell
def _(answer):
    mo.stop(answer is None or not answer.citations)
    citations = mo.ui.table(
        pl.DataFrame({"citation": [f"c{c.chunk_id}" for c in answer.citations], "document": [c.path for c in answer.citations],
                      "page": [c.page for c in answer.citations], "section": [c.breadcrumb for c in answer.citations]}),
        selection="single", label="Citations (select one to open the cited chunk)",
    )
    citations
    return (citations,)


@app.cell
def _(answer, citations, workspace):
    mo.stop(answer is None or not answer.citations)
    _rows = citations.value.to_dicts() if len(citations.value) else [{"citation": f"c{answer.citations[0].chunk_id}"}]
    _chunk_id = int(_rows[0]["citation"][1:])
    _text = workspace.store.chunk_texts([_chunk_id]).get(_chunk_id, "(the chunk no longer exists)")
    _label = next((c.label for c in answer.citations if c.chunk_id == _chunk_id), "")
    mo.callout(mo.vstack([mo.md(f"**Cited chunk c{_chunk_id}** · {_label}"), mo.md(_text)]), kind="neutral")  # open, not folded: selecting a row shows it
    return


@app.cell
def _(answer):
    _why = None if answer is not None and not answer.refused and answer.citations else (
        "nothing to save yet" if answer is None else "the last answer is a refusal" if answer.refused else "the last answer cites nothing")
    save_button = mo.ui.run_button(label="Save last answer as page" if _why is None else f"Save last answer as page ({_why})", disabled=_why is not None)
    save_button
    return (save_button,)


@app.cell
def _(get_answers, save_button, services, workspace):
    mo.stop(not (save_button.value or args.save))
    _answers = get_answers()
    mo.stop(not _answers, mo.callout(mo.md("There is no answer to save yet."), kind="warn"))
    try:
        saved_path, _commit = save_answer(workspace, _answers[-1], services=services)  # a refusal is refused here, with the reason
        if not mo.running_in_notebook():
            print(f"saved: {saved_path}")
        _message = mo.callout(mo.md(f"Saved as `{saved_path}`" + (f" (commit `{_commit[:10]}`)" if _commit else "") + ". Review its sentences in the **review** notebook."), kind="success")
    except LlmwikiError as error:
        saved_path = None
        _message = mo.callout(mo.md(f"**Not saved.** {error}"), kind="danger")
    _message
    return (saved_path,)


@app.cell
def _(saved_path):
    mo.stop(saved_path is None)
    verify_button = mo.ui.run_button(label=f"Verify {saved_path}")
    verify_button
    return (verify_button,)


@app.cell
def _(saved_path, services, verify_button, workspace):
    from llmwiki.verify import VerificationError, verify_page
    from llmwiki.verify.nli import describe

    mo.stop(saved_path is None or not (verify_button.value or (args.save and not mo.running_in_notebook())))
    _verifier = services.verifier
    try:
        with mo.status.spinner(title=f"Verifying with {_verifier.name}…"):
            _result = verify_page(workspace, saved_path, _verifier, premises_per_sentence=workspace.config.verification.premises_per_sentence)
        _threshold = workspace.config.verification.threshold
        if not mo.running_in_notebook():
            print(f"verified: {len(_result.sentences)} sentences, {_result.supported_share(_threshold):.0%} supported ({_verifier.name})")
        _table = pl.DataFrame([{"sentence": s.sentence, "score": round(s.value, 3), "supported": s.supported(_threshold), "why": s.why(_threshold) or "",
                                "p_entailment": round(s.p_entailment, 3), "best excerpt": s.excerpt or ""} for s in _result.sentences])
        _view = mo.vstack([mo.md(f"**{_result.supported_share(_threshold):.0%}** of {len(_result.sentences)} sentences supported at {_threshold:g} ({describe(_verifier)})"), mo.ui.table(_table, selection=None)])
    except VerificationError as error:
        _view = mo.callout(mo.md(f"**Not verified.** {error}"), kind="warn")
    _view
    return


@app.cell
def _(get_answers):
    _history = get_answers()
    mo.stop(len(_history) < 2)
    mo.accordion({f"Earlier questions ({len(_history) - 1})": mo.md("\n\n".join(f"**{a.question}**\n\n{a.text}" for a in _history[:-1]))})
    return


if __name__ == "__main__":
    app.run()
