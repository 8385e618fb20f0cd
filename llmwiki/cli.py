"""The ``llmwiki`` command: a thin layer that turns library calls into text.

Only this module (and the notebooks) print. Library errors arrive as
``LlmwikiError`` and leave as one line on stderr with exit status 1.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from llmwiki.errors import LlmwikiError

if TYPE_CHECKING:
    from llmwiki.services import Services
    from llmwiki.workspace import Workspace


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """`llmwiki ... | head`: the reader has what it wanted, so exit 0 (rich exits 1)."""
        self.quiet = True
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0)


def _width(stream) -> int | None:
    """A terminal's own width; piped or redirected, lines as long as their text (a table is never squeezed to "s…")."""
    return None if stream.isatty() else 4096


# Text from documents, paths and settings is printed as it is: these consoles read no markup ("# The [/api/v1]
# endpoint" or a folder named "a[" is text, not a style tag); styles are given with ``style=``.
console = _Console(soft_wrap=True, markup=False, highlight=False, width=_width(sys.stdout))
errors = _Console(stderr=True, soft_wrap=True, markup=False, highlight=False, width=_width(sys.stderr))


def _folded(table: Table) -> Table:
    """The table with long cells wrapped onto more lines rather than cut to "s…": in an 80-column terminal every value
    stays readable in full."""
    for column in table.columns:
        column.overflow = "fold"
        column.min_width = max(column.min_width or 0, min(len(str(column.header)), 12))
    return table


def _workspace(path: str | None, *, damaged_ok: bool = False) -> Workspace:
    """The workspace, its store checked and any interrupted operation finished or undone."""
    from llmwiki.publish.journal import RECOVERED, open_workspace

    workspace = open_workspace(path or None, damaged_ok=damaged_ok)
    if workspace.root in RECOVERED:
        errors.print(f"Note: {RECOVERED.pop(workspace.root)}.")
    return workspace


def _services(workspace: Workspace) -> Services:
    """The models and services of this command, built here at the edge and handed to the steps (``llmwiki.services``)."""
    from llmwiki.services import Services

    return Services(workspace)


workspace_option = click.option(
    "--workspace",
    "-w",
    "workspace_path",
    type=click.Path(file_okay=False),
    default=None,
    help="Workspace folder (default: $LLMWIKI_WORKSPACE, or the nearest folder with a wiki_config.toml).",
)


@click.group()
@click.version_option(package_name="llmwiki")
def cli() -> None:
    """llmwiki: ingest documents, keep a Markdown wiki, ask cited questions, verify pages."""


@cli.command()
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--no-git", is_flag=True, help="Do not make the workspace a git repository (no history of writes).")
def init(path: str, no_git: bool) -> None:
    """Create a workspace at PATH (existing files are kept)."""
    from llmwiki.workspace import Workspace

    workspace = Workspace.init(path, git=not no_git)
    workspace.store.migrate()
    console.print(f"Workspace ready at {workspace.root}")
    console.print(f"Put documents in {workspace.sources_dir}, then run: llmwiki ingest -w {workspace.root}")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@workspace_option
@click.option("--copy", is_flag=True, help="Copy files from outside the workspace into sources/ first.")
@click.option("--no-wiki", is_flag=True, help="Only extract, chunk and index; write no wiki pages.")
def ingest(paths: tuple[str, ...], workspace_path: str | None, copy: bool, no_wiki: bool) -> None:
    """Ingest files or folders (default: the workspace's sources/), then write the wiki pages of every
    source that lacks them (also those an interrupted run left without)."""
    from llmwiki.publish.wiki import ingest_paths

    workspace = _workspace(workspace_path)
    services = _services(workspace)
    with Progress(
        TextColumn("ingest", style="bold"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),
        console=errors,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=None)

        def on_progress(done: int, total: int, path: str) -> None:
            progress.update(task, completed=done, total=total, description=Path(path).name)

        # A relative path names a file here, else one in the workspace ("wiki/answers/x.md" from anywhere).
        named = [path if Path(path).exists() or Path(path).is_absolute() or not (workspace.root / path).exists() else workspace.root / path for path in paths]
        report = ingest_paths(workspace, named or None, copy=copy, on_progress=on_progress, generate=not no_wiki, services=services)
    _print_ingest(workspace, report)
    if report.generation is not None:
        _hold(workspace, report.generation.pages, services)
    _recheck(workspace, report, services)
    totals = workspace.store.totals()
    console.print(f"Store: {totals['documents']} documents, {totals['pages']} pages, {totals['chunks']} chunks, {totals['tokens']} tokens")
    if report.problems:
        sys.exit(2)


@cli.command()
@workspace_option
@click.option("--debounce-ms", type=click.IntRange(50, 60_000), default=1600, show_default=True, help="Wait this long for changes to settle before an ingest.")
def watch(workspace_path: str | None, debounce_ms: int) -> None:
    """Ingest files as they change in sources/ (one run at a time), re-checking the verified pages on them; Ctrl-C stops."""
    from llmwiki.watch import watch_sources

    workspace = _workspace(workspace_path)
    services = _services(workspace)

    def on_batch(batch) -> None:
        if batch.report is not None:
            _print_ingest(workspace, batch.report)
            if batch.report.generation is not None:
                _hold(workspace, batch.report.generation.pages, services)
        if batch.recheck is not None:
            for line in batch.recheck.lines():
                console.print(line)
            console.print(batch.recheck.summary())
        for note in batch.notes:
            errors.print(f"note: {note}")

    try:
        watch_sources(workspace, on_batch, debounce_ms=debounce_ms, services=services, ready=lambda: console.print(f"Watching {workspace.sources_dir} (Ctrl-C stops)"))
    except KeyboardInterrupt:
        pass
    console.print("Stopped watching.")


@cli.command("mcp")
@workspace_option
@click.option("--http", "http", default=None, metavar="HOST:PORT", help="Serve streamable HTTP on this address (loopback only, unless --allow-remote) instead of stdio.")
@click.option("--allow-remote", is_flag=True, help="Allow --http on an address that is not loopback (the server has no authentication).")
@click.option("--allow-writes", is_flag=True, help="Also offer the write tools: save_answer and ingest (of a file already in sources/).")
def mcp_command(workspace_path: str | None, http: str | None, allow_remote: bool, allow_writes: bool) -> None:
    """Serve the workspace to agents over the Model Context Protocol: search, read, ask, verify_text (stdio by default)."""
    from llmwiki.mcp_server import http_address, serve

    if http is not None:
        http_address(http, allow_remote=allow_remote)  # a bad address is refused before the workspace is opened
    workspace = _workspace(workspace_path)
    if http is not None:
        errors.print(f"Serving {workspace.root} over MCP at http://{http}/mcp" + (" (write tools on)" if allow_writes else ""))
    serve(workspace, allow_writes=allow_writes, http=http, allow_remote=allow_remote)


def _print_ingest(workspace: Workspace, report) -> None:
    for outcome in report.outcomes:
        if outcome.action in ("ingested", "updated"):
            console.print(f"  {outcome.action:<9} {outcome.path} ({outcome.chunk_count} chunks)")
        for note in outcome.notes:
            errors.print(f"  note      {outcome.path}: {note}")
    for action, line in report.problem_lines():  # a folder's files refused for one reason: the first few, the rest counted
        errors.print(f"  {action:<9} {line}", style=None if action == "skipped" else "red")
    reread = report.count("re-extracted")
    if reread:
        errors.print(f"note: {reread} source(s) were read by an older extractor and were read again with this release's; "
                     "the pages written from them are rewritten and their verifications are outdated")
    console.print(report.summary())
    if getattr(report, "finished", ()):
        console.print(f"Finished {len(report.finished)} source(s) an earlier run left without pages: {', '.join(report.finished)}")
    if report.generation is not None:
        _print_generation(report.generation)
    if getattr(report, "relocated", ()):
        console.print(f"Citations of {len(report.relocated)} page(s) now name the chunks that hold their quotes: {', '.join(report.relocated)}")
    for page, reason in getattr(report, "quotes_gone", ()):
        errors.print(f"  stale     {page}: {reason}")


def _recheck(workspace: Workspace, report, services: Services) -> None:
    """Verify again the pages resting on sources this ingest changed, and say what changed."""
    from llmwiki.review import recheck_sources

    changed = [outcome.path for outcome in report.outcomes if outcome.action == "updated"]
    if not changed:
        return
    recheck = recheck_sources(workspace, changed, services.load_verifier)
    for line in recheck.lines():
        console.print(line)
    console.print(recheck.summary())


def _hold(workspace: Workspace, pages, services: Services) -> None:
    """[review] hold: verify the pages a model just wrote and hold those it says to, saying which."""
    from llmwiki.review import apply_hold

    held = apply_hold(workspace, list(pages), model_written=getattr(services.backend, "generates", False), verifier=services.load_verifier)
    if held:
        console.print(f"Held {len(held)} page(s) for review ([review] hold); `llmwiki review --queue` lists them: {', '.join(held)}")


def _print_generation(generation) -> None:
    console.print(f"Wiki: {len(generation.pages)} pages written, {len(generation.deleted)} deleted; index, overview and log updated"
                  + (f"; commit {generation.commit[:10]}" if generation.commit else ""))
    for note in generation.notes:
        console.print(f"  note: {note}")


@cli.command()
@click.argument("names", nargs=-1)
@workspace_option
@click.option("--all", "everything", is_flag=True, help="Regenerate the pages of every ready source.")
def regenerate(names: tuple[str, ...], workspace_path: str | None, everything: bool) -> None:
    """Rewrite the wiki pages of sources (named directly or by one of their pages)."""
    from llmwiki.publish.wiki import regenerate_sources, sources_for

    workspace = _workspace(workspace_path)
    if everything:
        documents = [document for document in workspace.store.documents(kind="source") if document.status == "ready"]
    elif names:
        documents = sources_for(workspace, names)
    else:
        raise click.UsageError("name a source or page, or pass --all")
    services = _services(workspace)
    generation = regenerate_sources(workspace, documents, backend=services.backend, tracer=services.tracer, operation="regenerate")
    _print_generation(generation)
    _hold(workspace, generation.pages, services)


@cli.command()
@click.argument("question", required=False)
@workspace_option
@click.option("--open", "open_page", default=None, help="A wiki page open beside the question (its text comes first).")
@click.option("--agentic", is_flag=True, help="Let the model search and read with tools (needs [llm] backend = \"openai\").")
@click.option("--stream", is_flag=True, help="Agentic: show tokens as they come instead of holding the answer (strict) until the run ends.")
@click.option("--save", is_flag=True, help="Save the answer as a wiki page (wiki/answers/).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as one JSON object (question, answer, verdict, refused, citations, decided_by, steps).")
@click.option("--why", is_flag=True, help="Also show which reading decided the answer and the readings tried before it (docs/readings.md).")
@click.option("--batch", "batch_file", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Answer one question per line of FILE ('-' for standard input), in order; with --json one object per line.")
def ask(question: str | None, workspace_path: str | None, open_page: str | None, agentic: bool, stream: bool, save: bool, as_json: bool, why: bool,
        batch_file: str | None) -> None:
    """Answer a question from the wiki (or the sources) with citations."""
    from llmwiki.publish.answers import save_answer
    from llmwiki.read.answer import answer_question
    from llmwiki.read.chat import agentic_answer

    if (question is None) == (batch_file is None):
        raise click.UsageError("give one QUESTION, or --batch FILE with one question per line")
    workspace = _workspace(workspace_path)
    if open_page is not None:  # a page that is not there is an error, not a note in the readout
        relative = workspace.relative(workspace.root / open_page, fix=workspace.PAGE_FIX)
        if not relative.startswith("wiki/") or not (workspace.root / relative).is_file():
            raise click.BadParameter(f"{open_page}: no such wiki page. {workspace.PAGE_FIX}", param_hint="--open")
        open_page = relative
    services = _services(workspace)  # each model loaded once for all the questions of this command
    if batch_file is not None:
        if save or agentic:
            raise click.UsageError("--batch answers questions as they are; it does not save them or run tools (ask them one at a time for that)")
        try:
            with click.open_file(batch_file, encoding="utf-8", errors="replace") as lines:
                questions = [line.strip() for line in lines]
        except OSError as err:
            raise click.BadParameter(f"{batch_file}: cannot be read ({err.strerror or err}). Give a text file with one question per line, or - for standard input.",
                                     param_hint="--batch") from None
        for number, item in enumerate(questions, start=1):
            errors.print(f"{number}/{len(questions)} {item}")  # progress on stderr; stdout stays one answer a line
            if not item:  # answer line N is always question line N: a blank line gets a line saying so
                blank = f"line {number} is blank: no question to answer"
                click.echo(json.dumps({"question": "", "line": number, "error": blank}) if as_json else f"Q: (none)\n{blank}\n")
                continue
            answer = answer_question(workspace, item, open_page=open_page, services=services)
            if as_json:
                click.echo(json.dumps(answer.as_json(), ensure_ascii=False))
            else:
                console.print(f"Q: {item}\n{answer.text}\n" + (f"{answer.why}\n" if why else ""))
        return
    streamed = []

    def on_token(token: str) -> None:
        streamed.append(token)
        click.echo(token, nl=False)

    quiet = on_token if not as_json else None
    if agentic:
        answer = agentic_answer(workspace, question, services=services, strict=not stream, on_token=quiet)
    else:
        answer = answer_question(workspace, question, open_page=open_page, services=services, on_token=quiet if services.backend.generates else None)
    saved = None
    if save:
        if answer.refused:
            raise click.ClickException(f"not saved: the answer is a refusal ({answer.text}); there is nothing cited to keep as a page.")
        saved = save_answer(workspace, answer, services=services)
    if as_json:
        click.echo(json.dumps(answer.as_json() | ({"saved_as": saved[0]} if saved else {}), ensure_ascii=False))
        return
    for step in answer.tool_steps:
        console.print(f"tool: {step}", style="dim")
    if not agentic:
        console.print(answer.selection.readout, style="dim")
    if answer.read_as_note:
        errors.print(answer.read_as_note)
    if streamed:
        click.echo()
    else:
        console.print(("Refused: " if answer.refused else "") + answer.text)
    if answer.citations:
        console.print("\nCitations:")
        for citation in answer.citations:
            console.print(f"  [c{citation.chunk_id}] {citation.label}")
    if answer.unknown_citations:
        console.print(f"  ({len(answer.unknown_citations)} citation(s) of passages that were not given were removed)")
    if why:
        console.print(f"\nWhy: {answer.why}")
    if saved:
        path, commit = saved
        console.print(f"Saved as {path}" + (f" (commit {commit[:10]})" if commit else ""))


@cli.command()
@click.argument("pages", nargs=-1)
@workspace_option
@click.option("--all", "everything", is_flag=True, help="Verify every summary, concept and answer page.")
@click.option("--changed", is_flag=True, help="Verify pages with no verification or an outdated one.")
@click.option("--force", is_flag=True, help="Score again even when the page and its sources are unchanged.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=None, help="Supported at or above this score (default: [verification] threshold).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per page as it is verified: every sentence with the model's score, the reviewer's verdict, reason and excerpt.")
@click.option("--fail-under", type=click.FloatRange(0, 1), default=None, help="Exit 1, naming them, when a page's supported share (reviewers' verdicts first) is under this (a CI gate).")
@click.option("--recalibrate", is_flag=True, help="Refit this workspace's calibration from its reviewers' verdicts (kept only if it agrees with them more often).")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True, help="Verify in this many processes, each loading the model once (pays on a wiki of many pages and cores).")
def verify(pages, workspace_path, everything, changed, force, threshold, as_json, fail_under, recalibrate, jobs) -> None:
    """Score each sentence of wiki pages against their sources (local NLI model and fact checks)."""
    from llmwiki.review import review_of
    from llmwiki.verify import pages_needing_verification, verify_page, wiki_pages
    from llmwiki.verify.nli import describe, not_nli_note

    workspace = _workspace(workspace_path)
    services = _services(workspace)
    if recalibrate:
        from llmwiki.review import recalibrate_from_verdicts

        verifier = services.verifier
        outcome = recalibrate_from_verdicts(workspace, verifier.name)
        console.print(outcome.summary() + (" Score the pages with it: llmwiki verify --all --force." if outcome.kept else ""))
        if not (pages or everything or changed):
            return
    threshold = workspace.config.verification.threshold if threshold is None else threshold
    if everything or changed:
        names = pages_needing_verification(workspace) if changed else wiki_pages(workspace)
    elif pages:
        from llmwiki.review import page_under_wiki

        names = [page_under_wiki(workspace, page) for page in pages]
    else:
        raise click.UsageError("name pages, or pass --all or --changed")
    verifier = services.verifier
    if (note := not_nli_note(verifier)) is not None:
        errors.print(f"note: {note}")
    reviews, failures = [], []

    def outcomes():
        """(page, its verification or None, why it failed or None), as each page finishes."""
        if jobs > 1 and len(names) > 1:
            from llmwiki.verify import load_verification
            from llmwiki.verify.parallel import verify_in_processes

            for name, error, reused in verify_in_processes(workspace.root, names, jobs=min(jobs, len(names)), force=force):
                stored = None if error else load_verification(workspace, name)
                yield name, (dataclasses.replace(stored, reused=reused) if stored is not None else None), error
            return
        for name in names:
            try:
                yield name, verify_page(workspace, name, verifier, force=force, premises_per_sentence=workspace.config.verification.premises_per_sentence), None
            except LlmwikiError as err:
                yield name, None, str(err)

    with Progress(TextColumn("verify", style="bold"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.description}", markup=False), console=errors, transient=True) as progress:
        task = progress.add_task("", total=len(names))
        for done, (name, result, error) in enumerate(outcomes(), start=1):
            progress.update(task, completed=done, description=name)
            if error is not None or result is None:
                error = error or "its verification was not stored; verify it again"
                failures.append((name, error))
                if as_json:
                    click.echo(json.dumps({"page": name, "error": error}, ensure_ascii=False))
                continue
            review = review_of(workspace, name, result)
            reviews.append(review)
            if as_json:  # one object per page as it finishes
                click.echo(json.dumps(review.as_json(threshold), ensure_ascii=False, default=str))
        progress.update(task, completed=len(names))
    place = {name: index for index, name in enumerate(names)}
    reviews.sort(key=lambda review: place.get(review.page, len(place)))  # the table in the order asked, whichever process finished first
    below = [(review.page, review.supported_share(threshold)) for review in reviews if fail_under is not None and review.supported_share(threshold) < fail_under]
    if not as_json:
        table = Table(title=f"Verification ({describe(verifier)}, threshold {threshold:g})")
        table.add_column("page")
        for column in ("sentences", "supported", "model", "reviewed", "re-scored", "outdated", "not checked"):
            table.add_column(column)
        for review in reviews:
            result = review.verification
            reviewed = sum(row.state in ("accepted", "rejected") for row in review.sentences)
            changed_since = review.count("changed since")
            table.add_row(review.page + (" [held]" if review.held else ""), str(len(result.sentences)), f"{review.supported_share(threshold):.0%}",
                          f"{review.model_share(threshold):.0%}", f"{reviewed}" + (f" ({changed_since} changed since)" if changed_since else ""),
                          "no" if result.reused else "yes", "yes" if result.outdated else "no",
                          ", ".join(f"{label} {count}" for label, count in result.not_checked) or "-")
        console.print(_folded(table))
        for review in reviews:
            for row in review.sentences:
                sentence = row.score
                if row.state == "accepted":
                    continue
                if row.state == "rejected":
                    console.print(f"{review.page}: sentence {row.number} rejected by {row.verdict.reviewer}{': ' + row.verdict.note if row.verdict.note else ''} "
                                  f"(model {sentence.value:.2f}): {sentence.sentence}")
                elif (why := sentence.why(threshold)) is not None:
                    before = f" (reviewed before, changed since: {row.verdict.verdict}ed by {row.verdict.reviewer})" if row.state == "changed since" else ""
                    console.print(f"{review.page}: sentence {row.number} unsupported ({sentence.value:.2f}){before}: {sentence.sentence}\n    why: {why}\n"
                                  f"    excerpt ({sentence.excerpt_path}, chunk {sentence.excerpt_chunk_id}): {sentence.excerpt}")
            for contest in review.contests:
                console.print(f"{review.page}: contested claim {contest.id} ({contest.status}) between {contest.page_a} and {contest.page_b}: "
                              f"\"{contest.sentence_a}\" / \"{contest.sentence_b}\"")
        for review in reviews:
            if review.verification.unknown_citations:
                errors.print(f"note: {review.page} cites chunks that do not exist: {', '.join(review.verification.unknown_citations)}; "
                             "cite a chunk id the sources hold (search for the passage), or remove the mark.")
            if review.verification.missing_sources:
                errors.print(f"note: {review.page} was checked without its missing sources {', '.join(review.verification.missing_sources)}; ingest them and verify again.")
        for page, reason in failures:
            errors.print(Text.assemble(("failed", "red"), f" {reason}"))
    if below:
        for page, share in below:
            errors.print(f"under {fail_under:.0%}: {page} ({share:.0%} supported)")
        errors.print(f"{len(below)} page(s) under the --fail-under share; review them (`llmwiki review PAGE`) or correct them.")
        sys.exit(1)
    if failures:
        sys.exit(2)


@cli.command()
@click.argument("page", required=False)
@workspace_option
@click.option("--accept", "accepted", multiple=True, help="Sentence numbers to accept as supported (3, or 3,4).")
@click.option("--reject", "rejected", multiple=True, help="Sentence numbers to reject as unsupported.")
@click.option("--note", default=None, help="Why (kept with the rejections, or with the acceptances when nothing is rejected).")
@click.option("--reviewer", default=None, help="Who decides (default: git config user.name).")
@click.option("--release", is_flag=True, help="Release a page held for review: it becomes evidence again.")
@click.option("--queue", is_flag=True, help="List what waits for a reviewer, oldest first: held pages, contested claims, reviewed sentences changed since.")
@click.option("--contest", "contest_id", type=int, default=None, help="Resolve this contested claim (with --keep).")
@click.option("--keep", type=click.Choice(["a", "b", "both"]), default=None, help="With --contest: keep side a or b (the other is rejected), or both as contested.")
@click.option("--unreviewed", is_flag=True, help="List only the sentences no reviewer has decided (or that changed since).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the page's sentences with scores and verdicts, or the queue).")
def review(page, workspace_path, accepted, rejected, note, reviewer, release, queue, contest_id, keep, unreviewed, as_json) -> None:
    """Review a page's sentences: list them with the model's score and the reviewers' verdicts, accept or reject them."""
    from llmwiki import review as reviewing

    workspace = _workspace(workspace_path)
    if queue:
        items = reviewing.review_queue(workspace)
        if as_json:
            click.echo(json.dumps([item.as_json() for item in items], ensure_ascii=False))
            return
        if not items:
            console.print("Nothing waits for a reviewer.")
        for item in items:
            where = f" #{item.contest_id}" if item.contest_id is not None else (f" sentence {item.sentence}" if item.sentence else "")
            console.print(f"{item.since or '-':19}  {item.kind}{where}  {item.page}: {item.reason}")
        return
    name = reviewing.reviewer_name(workspace, reviewer)
    if contest_id is not None:
        if keep is None:
            raise click.UsageError("--contest needs --keep a, b or both")
        resolved = reviewing.resolve(workspace, contest_id, keep=keep, note=note, reviewer=name, verifier=_services(workspace).verifier)
        console.print(f"contested claim {resolved.id}: {resolved.status} ({name})")
        return
    if page is None:
        raise click.UsageError("name a page (wiki/concepts/NAME.md), or pass --queue")
    numbers = {flag: _sentence_numbers(values, flag) for flag, values in (("--accept", accepted), ("--reject", rejected))}
    relative = reviewing.page_under_wiki(workspace, page)
    reviewed = reviewing.review_page(workspace, relative, _services(workspace).verifier)
    if numbers["--accept"] or numbers["--reject"]:
        recorded = reviewing.decide(workspace, reviewed, accept=numbers["--accept"], reject=numbers["--reject"], note=note, reviewer=name)
        console.print(f"{relative}: {len(recorded)} verdict(s) recorded by {name}")
        reviewed = reviewing.review_of(workspace, relative, reviewed.verification)
    if release:
        commit = reviewing.release(workspace, relative, reviewer=name)
        console.print(f"{relative}: released by {name}" + (f" (commit {commit[:10]})" if commit else ""))
        reviewed = reviewing.review_of(workspace, relative, reviewed.verification)
    threshold = workspace.config.verification.threshold
    if as_json:
        click.echo(json.dumps(reviewed.as_json(threshold), ensure_ascii=False, default=str))
        return
    table = Table(title=f"{relative}: {reviewed.supported_share(threshold):.0%} supported (model alone {reviewed.model_share(threshold):.0%})"
                  + (f"; held: {reviewed.held}" if reviewed.held else ""))
    for column in ("#", "model", "review", "sentence"):
        table.add_column(column)
    for row in reviewed.sentences:
        if unreviewed and row.state in ("accepted", "rejected"):
            continue
        model = f"{row.score.value:.2f} {'ok' if row.score.supported(threshold) else 'unsupported'}"
        state = row.state if row.verdict is None else f"{row.state} ({row.verdict.reviewer}{': ' + row.verdict.note if row.verdict.note else ''})"
        table.add_row(str(row.number), model, state, row.score.sentence + (f"\n  why: {row.score.why(threshold)}" if row.score.why(threshold) else ""))
    console.print(_folded(table))
    for contest in reviewed.contests:
        console.print(f"contested claim {contest.id} ({contest.status}): {contest.page_a}: \"{contest.sentence_a}\" / {contest.page_b}: \"{contest.sentence_b}\""
                      f" — resolve with `llmwiki review --contest {contest.id} --keep a|b|both`")


def _sentence_numbers(values: tuple[str, ...], flag: str) -> list[int]:
    numbers = []
    for value in values:
        for part in value.replace(" ", ",").split(","):
            if not part:
                continue
            if not part.isdigit():
                raise click.BadParameter(f"{part!r}: give sentence numbers as listed by `llmwiki review PAGE` (3, or 3,4)", param_hint=flag)
            numbers.append(int(part))
    return numbers


@cli.command()
@click.argument("source")
@workspace_option
@click.option("--delete-file", is_flag=True, help="Delete the source file (default: move it to withdrawn/).")
@click.option("--dry-run", is_flag=True, help="Only say what the run would do to each page (delete, rewrite, mark stale).")
def withdraw(source: str, workspace_path: str | None, delete_file: bool, dry_run: bool) -> None:
    """Withdraw a source: its pages go, pages resting partly on it are marked stale."""
    from llmwiki.maintain import plan_withdrawal, withdraw as run_withdrawal

    workspace = _workspace(workspace_path)
    if dry_run:
        console.print("\n".join(plan_withdrawal(workspace, source).lines()) or "No page depends on it.")
        return
    report = run_withdrawal(workspace, source, delete_file=delete_file)
    console.print(report.summary())
    if report.commit:
        console.print(f"commit {report.commit[:10]}")


@cli.command()
@workspace_option
@click.option("--delete", is_flag=True, help="Delete the stale pages (one commit).")
def stale(workspace_path: str | None, delete: bool) -> None:
    """List pages marked stale by a withdrawal, or delete them."""
    from llmwiki.maintain import delete_stale, stale_pages

    workspace = _workspace(workspace_path)
    if delete:
        pages, commit = delete_stale(workspace)
        console.print(f"Deleted {len(pages)} stale page(s)" + (f"; commit {commit[:10]}" if commit else "") + ".")
        return
    found = stale_pages(workspace)
    for page, reason in found:
        console.print(f"{page}: {reason}")
    console.print(f"{len(found)} stale page(s).")


@cli.command()
@click.argument("page")
@workspace_option
@click.option("--body-file", type=click.Path(dir_okay=False, exists=True), help="Read the new body from this file instead of opening $EDITOR.")
@click.option("--expected-version", type=int, default=None, help="The version your edit is based on (default: the current one, read before the editor opens).")
def edit(page: str, workspace_path: str | None, body_file: str | None, expected_version: int | None) -> None:
    """Replace a page's body (its frontmatter is kept); refused if the page changed meanwhile."""
    from llmwiki.maintain import page_version, save_page
    from llmwiki.pages import split_frontmatter

    workspace = _workspace(workspace_path)
    version = page_version(workspace, page) if expected_version is None else expected_version
    if body_file:
        body = _read_text_file(Path(body_file))
    else:
        current = split_frontmatter((workspace.root / workspace.relative(workspace.root / page, fix=workspace.PAGE_FIX)).read_text(encoding="utf-8"))[1]
        body = click.edit(current, extension=".md")
        if body is None or body == current:
            console.print("No change; nothing saved.")
            return
    new_version, commit = save_page(workspace, page, body, expected_version=version)
    console.print(f"Saved {page} as version {new_version}" + (f"; commit {commit[:10]}" if commit else "") + ".")
    from llmwiki.review import release_if_passing

    released = release_if_passing(workspace, page, verifier=_services(workspace).load_verifier)
    if released is not None:
        console.print(released)


def _read_text_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise click.ClickException(f"{path}: is not UTF-8 text ({err}). Save it as UTF-8 and try again.") from err


@cli.command()
@click.argument("pages", nargs=-1, required=True)
@workspace_option
def delete(pages: tuple[str, ...], workspace_path: str | None) -> None:
    """Delete wiki pages (file, index entry, search rows) in one commit."""
    from llmwiki.maintain import delete_pages

    deleted, commit = delete_pages(_workspace(workspace_path), list(pages))
    console.print(f"Deleted {len(deleted)} page(s)" + (f"; commit {commit[:10]}" if commit else "") + ".")


@cli.command("lint")
@workspace_option
@click.option("--fix", is_flag=True, help="Write contradiction warnings and data-gap TODOs into the pages (one commit); resolved gaps become links.")
@click.option("--severity", type=click.Choice(["error", "warning", "info"]), default="info", show_default=True, help="Show findings of this severity and worse.")
def lint_command(workspace_path: str | None, fix: bool, severity: str) -> None:
    """Check the wiki: broken links, stale pages, contradictions, gaps, orphans, thin pages."""
    from llmwiki.lint import SEVERITIES, lint, repair

    workspace = _workspace(workspace_path)
    with Progress(TextColumn("lint:", style="bold"), TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=errors, transient=True) as progress:
        task = progress.add_task("pages", total=None)
        report = lint(workspace, services=_services(workspace), on_progress=lambda done, total, stage: progress.update(task, completed=done, total=total, description=stage))
    shown = SEVERITIES[: SEVERITIES.index(severity) + 1]
    for finding in report.findings:
        if finding.severity not in shown:
            continue
        console.print(f"[{finding.severity}] {finding.kind}: {finding.detail}")
        for sentence in finding.sentences:
            console.print(f"    \"{sentence}\"")
        console.print(f"    fix: {finding.action}")
    for note in report.notes:
        console.print(f"Note: {note}")
    console.print(report.summary() + (f"; {report.pairs_scored} sentence pairs scored" if report.pairs_scored else ""))
    if fix:
        pages, commit = repair(workspace, report)
        console.print(f"Repaired {len(pages)} page(s)" + (f"; commit {commit[:10]}" if commit else "") + ".")
    if report.by_severity()["error"]:
        sys.exit(2)


@cli.command("history")
@click.argument("page", required=False)
@workspace_option
@click.option("--limit", type=int, default=30, show_default=True)
def history_command(page: str | None, workspace_path: str | None, limit: int) -> None:
    """List the workspace's changes (or one page's), newest first; S marks a kept store snapshot."""
    from llmwiki.maintain import page_history

    entries = page_history(_workspace(workspace_path), page, limit=limit)
    for entry in entries:
        console.print(f"{entry.commit[:10]}  {entry.date[:19].replace('T', ' ')}  {'S' if entry.snapshot else ' '}  {entry.subject}")
    console.print(f"{len(entries)} change(s). Go back with: llmwiki restore COMMIT")


@cli.command("restore")
@click.argument("revision", required=False)
@workspace_option
def restore_command(revision: str | None, workspace_path: str | None) -> None:
    """Bring files and store back to REVISION, as a new commit (nothing is rewritten).

    Without REVISION, only a damaged or missing store is replaced: by the
    snapshot of HEAD when one is usable, else rebuilt from the files.
    """
    from llmwiki.maintain import recover, restore

    workspace = _workspace(workspace_path, damaged_ok=True)
    if revision is None:
        recovery = recover(workspace)
        if recovery is None:
            raise click.UsageError("the store is sound; name a REVISION to go back to (`llmwiki history` lists them)")
        console.print(recovery.summary())
        return
    report = restore(workspace, revision)
    console.print(report.summary())


@cli.command()
@workspace_option
def trace(workspace_path: str | None) -> None:
    """Show the spans of the last traced run (.llmwiki/traces/spans.jsonl)."""
    from llmwiki.tracing import last_run

    workspace = _workspace(workspace_path)
    spans = last_run(workspace.state_dir / "traces")
    if not spans:
        console.print("No traces yet. Ingest or regenerate something first.")
        return
    depth = {}
    table = Table(title=f"Run {spans[0]['run_id']} ({spans[0]['started_at']})")
    for column in ("operation", "ms", "model", "tokens in/out", "details"):
        table.add_column(column)
    skip = {"run_id", "span_id", "parent_id", "operation", "started_at", "duration_ms", "model", "prompt_tokens", "completion_tokens"}
    for span in spans:
        depth[span["span_id"]] = depth.get(span.get("parent_id"), -1) + 1
        tokens = f"{span.get('prompt_tokens', '')}/{span.get('completion_tokens', '')}" if "prompt_tokens" in span else ""
        details = ", ".join(f"{key}={value}" for key, value in span.items() if key not in skip)
        table.add_row("  " * depth[span["span_id"]] + span["operation"], f"{span['duration_ms']:.1f}", str(span.get("model", "")), tokens, details[:120])
    console.print(_folded(table))


@cli.command()
@workspace_option
@click.option("--documents", "per_document", is_flag=True, help="Also list what was read from each source: extractor, sections, sentences, code, tables, furniture left out.")
def status(workspace_path: str | None, per_document: bool) -> None:
    """Documents by kind and status, what the extractors read, and every failure with its reason."""
    workspace = _workspace(workspace_path)  # a damaged or missing store ends here, in one line with the fix
    store = workspace.store
    table = Table(title=f"Documents in {workspace.root}")
    for column in ("kind", "status", "documents"):
        table.add_column(column)
    counts = store.status_counts()
    for row in counts:
        table.add_row(row.kind, row.status, str(row.document_count))
    if counts:
        console.print(_folded(table))
    else:
        console.print("No documents yet. Put files in sources/ and run `llmwiki ingest`.")
    failed = [document for document in store.documents() if document.status == "failed"]
    for document in failed:
        console.print(Text.assemble(("failed", "red"), f" {document.path}: {document.error}"))
    totals = store.totals()
    console.print(f"{totals['documents']} documents, {totals['pages']} pages, {totals['chunks']} chunks")
    _print_extraction(store.extraction_reports(), per_document=per_document)
    from llmwiki.review import summary

    reviewed = summary(workspace)
    if reviewed.pages:
        console.print(f"Review: {reviewed.verified} of {reviewed.pages} pages verified, {reviewed.supported_share:.0%} of their sentences supported "
                      f"(reviewers' verdicts first); {reviewed.unreviewed} unsupported sentence(s) unreviewed, {reviewed.contested} contested claim(s) open, "
                      f"{reviewed.queued} item(s) queued ({reviewed.held} page(s) held)")


def _print_extraction(reports: dict[str, dict], *, per_document: bool) -> None:
    """What the extractors read: one line over all sources, and with per_document a row for each."""
    if not reports:
        return
    keys = ("sections", "sentences", "code_blocks", "table_rows")
    total = {key: sum(report.get(key, 0) for report in reports.values()) for key in keys}
    dropped: dict[str, int] = {}
    for report in reports.values():
        for reason, characters in report.get("dropped", {}).items():
            dropped[reason] = dropped.get(reason, 0) + characters
    kept = sum(report.get("characters", 0) for report in reports.values())
    left_out = sum(dropped.values())
    reasons = ", ".join(f"{reason} {characters:,}" for reason, characters in sorted(dropped.items(), key=lambda item: -item[1])[:4])
    console.print(f"Read from {len(reports)} sources: {total['sections']:,} sections, {total['sentences']:,} sentences, {total['code_blocks']:,} code blocks, "
                  f"{total['table_rows']:,} table rows; {left_out:,} characters left out as page furniture "
                  f"({left_out / max(kept + left_out, 1):.1%}{': ' + reasons if reasons else ''})")
    if not per_document:
        return
    table = Table(title="What was read from each source")
    for column in ("source", "extractor", "sections", "sentences", "code", "table rows", "left out"):
        table.add_column(column, overflow="fold")
    for path, report in reports.items():
        out = report.get("dropped", {})
        shown = ", ".join(f"{reason} {characters:,}" for reason, characters in sorted(out.items(), key=lambda item: -item[1])[:2]) or "nothing"
        table.add_row(path, report.get("extractor", ""), str(report.get("sections", 0)), str(report.get("sentences", 0)),
                      str(report.get("code_blocks", 0)), str(report.get("table_rows", 0)), shown)
    console.print(_folded(table))


@cli.command("search")
@click.argument("query")
@workspace_option
@click.option("--scope", type=click.Choice(["all", "wiki", "sources"]), default="all", show_default=True, help="Which chunks to search.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="How many hits to show (default: [retrieval] search_limit).")
def search_command(query: str, workspace_path: str | None, scope: str, limit: int | None) -> None:
    """Full-text search (BM25): all words first, any word when nothing has them all."""
    from llmwiki.read.search import search

    workspace = _workspace(workspace_path)
    result = search(workspace, query, scope=scope, limit=limit, embedder=_services(workspace).embedder)
    console.print(result.readout)
    for rank, hit in enumerate(result.hits, start=1):
        console.print(Text.assemble("\n", (f"{rank}. {hit.label}", "bold"), f"  (score {hit.score:.2f}, chunk {hit.chunk_id})"))
        console.print(f"   {hit.preview}")


@cli.command()
@workspace_option
@click.option("--model", default=None, help="Sentence-transformers model id or path (default: [retrieval] embedding_model).")
def embed(workspace_path: str | None, model: str | None) -> None:
    """Compute embeddings for chunks that lack them (used when [retrieval] hybrid = true)."""
    from llmwiki.embeddings import SentenceTransformerEmbedder, embed_missing

    workspace = _workspace(workspace_path)
    embedder = SentenceTransformerEmbedder(model or workspace.config.retrieval.embedding_model, int8=workspace.config.retrieval.embedding_int8)
    with Progress(TextColumn("embed", style="bold"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=errors, transient=True) as progress:
        task = progress.add_task("", total=None)
        count = embed_missing(workspace.store, embedder, on_progress=lambda done, total: progress.update(task, completed=done, total=total))
    workspace.store.checkpoint()
    console.print(f"Embedded {count} chunks with {embedder.name}.")
    if not workspace.config.retrieval.hybrid:
        console.print("Search uses them once [retrieval] hybrid = true is set in wiki_config.toml.")


@cli.command()
@workspace_option
def reindex(workspace_path: str | None) -> None:
    """Rebuild the full-text postings of every chunk from its stored text.

    A damaged or missing store is replaced first (the snapshot of HEAD, else a rebuild from the files).
    """
    from llmwiki.maintain import recover

    workspace = _workspace(workspace_path, damaged_ok=True)
    recovery = recover(workspace)
    if recovery is not None:
        console.print(recovery.summary())
    workspace.store.rebuild_search_index()
    console.print(f"Search index rebuilt: {workspace.store.totals()['chunks']} chunks.")


@cli.group("store")
def store_group() -> None:
    """The workspace's store: move it to a PostgreSQL server."""


@store_group.command("migrate")
@click.option("--to", "url", required=True, metavar="postgresql://USER@HOST:PORT/DATABASE",
              help="An empty PostgreSQL database (password from PGPASSWORD or ~/.pgpass, never in the url).")
@workspace_option
def store_migrate(url: str, workspace_path: str | None) -> None:
    """Copy this workspace's embedded store into PostgreSQL, check every count, and point wiki_config.toml at it."""
    from llmwiki.maintain import move_store

    workspace = _workspace(workspace_path)
    with console.status("Copying the store…") as status:
        moved = move_store(workspace, url, on_table=lambda table: status.update(f"Copying {table.replace('_', ' ')}…"))
    console.print(moved.summary())


@cli.command("datasets")
@click.argument("category", required=False)
@workspace_option
@click.option("--key", "keys", multiple=True, help="Only these keys (repeatable).")
@click.option("--metric", "metrics", multiple=True, help="Only these metrics (repeatable).")
@click.option("--dim", "dims", multiple=True, metavar="NAME=VALUE", help="Only rows with this dimension value (repeatable).")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV instead of a table.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON records instead of a table.")
def datasets_command(category, workspace_path, keys, metrics, dims, as_csv, as_json) -> None:
    """List dataset categories, or print one category's rows (filtered)."""
    from llmwiki.datasets import flatten_dims

    workspace = _workspace(workspace_path)
    source = _services(workspace).datasets
    if (missing := source.missing_folder()) is not None:
        raise missing
    for error in source.errors:
        errors.print(f"skipped: {error}")
    if category is None and not (keys or metrics or dims):
        summary = source.summary()
        table = Table(title=f"Datasets in {workspace.datasets_dir}")
        for column in summary.columns:
            table.add_column(column)
        for row in summary.iter_rows():
            table.add_row(*map(str, row))
        console.print(_folded(table))
        return
    wanted_dims = {}
    for item in dims:
        name, separator, value = item.partition("=")
        if not separator:
            raise click.BadParameter(f"{item!r}: write NAME=VALUE", param_hint="--dim")
        wanted_dims[name] = value
    frame = source.query(category, key=keys or None, metric=metrics or None, dims=wanted_dims or None)
    flat = flatten_dims(frame)
    if as_csv:
        click.echo(flat.write_csv(), nl=False)
    elif as_json:
        click.echo(frame.write_json())
    else:
        table = Table()
        for column in flat.columns:
            table.add_column(column, justify="right" if column == "value" else "left")
        for row in flat.iter_rows():
            table.add_row(*("" if cell is None else str(cell) for cell in row))
        console.print(_folded(table))
        console.print(f"{frame.height} rows")


def main() -> None:
    """Entry point: run the CLI, turning LlmwikiError into one line and exit 1."""
    try:
        cli(standalone_mode=False)
    except click.exceptions.Abort:
        errors.print("Aborted.")
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except LlmwikiError as err:
        errors.print(f"Error: {err}")
        sys.exit(1)
    except BrokenPipeError:  # `llmwiki ... | head` (output not written through rich)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes stdout at exit
        sys.exit(0)


if __name__ == "__main__":
    main()
