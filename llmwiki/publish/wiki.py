"""The write path for wiki pages: one publish step, and ingest + generation as one unit.

    files --ingest--> stored documents and chunks --generate--> page texts --publish--> files, store, commit, snapshot

- ``ingest_paths``: ``llmwiki.ingest.sources`` stores the files, then every source
  whose pages are missing or were written from another version of it gets
  them (``pending_sources``): the ones just ingested, and any a crash or a
  failed model call left behind, so a rerun of ``llmwiki ingest`` finishes
  the job.
- ``regenerate_sources``: reads the current summary and concept pages,
  composes new texts (``llmwiki.generate``), publishes them.
- ``publish``: index and overview rebuilt, a log entry, atomic file writes,
  the store brought in line (``ingest.index_pages``), one git commit, all
  under the journal (``llmwiki.publish.journal``), which also takes the commit's
  snapshot. Maintenance and saved answers write through it too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from filelock import Timeout

from llmwiki.errors import WorkspaceError
from llmwiki import gitrepo
from llmwiki.backends import Backend
from llmwiki.ingest.chunking import TokenCounter
from llmwiki.failpoints import failpoint
from llmwiki.generate import GenerationError, GenerationReport, compose_pages, load_aliases, write_aliases
from llmwiki.ingest.sources import IngestReport, ProgressCallback, embed_and_checkpoint, index_pages, ingest_files, reindex_outdated_pages
from llmwiki.publish.journal import ACTIVE, Journal
from llmwiki.publish.journal import operation as journaled
from llmwiki.pages import ANSWERS, CITATION, CONCEPTS, SUMMARIES, read_page, restore, source_entries, source_paths, split_frontmatter, write_files
from llmwiki.records import Document, extractor_tag
from llmwiki.tracing import NULL_TRACER, Tracer
from llmwiki.services import Services
from llmwiki.workspace import COLLECTION_PAGES, INGEST_WAIT_S, Workspace

ALIASES_FILE = "aliases.generated.toml"


@dataclass(frozen=True)
class BuildReport(IngestReport):
    """An ingest, and the pages written after it (None: no source needed pages)."""

    generation: GenerationReport | None = None
    finished: tuple[str, ...] = field(default=())  # sources whose pages an earlier run left unwritten
    relocated: tuple[str, ...] = field(default=())  # pages whose citations were moved to the chunks that now hold their quotes
    quotes_gone: tuple[tuple[str, str], ...] = field(default=())  # (page, reason): marked stale, a quoted text no source holds now


def ingest_paths(
    workspace: Workspace,
    paths: Iterable[Path | str] | None = None,
    *,
    copy: bool = False,
    count_tokens: TokenCounter | None = None,
    on_progress: ProgressCallback | None = None,
    generate: bool = True,
    services: Services | None = None,
) -> BuildReport:
    """Ingest files and folders (default: sources/), then write the pages of every source that needs them.

    generate=False stores the files only (their pages come with the next ingest that generates).
    services: the backend that writes the pages, the tracer and the hybrid retrieval's embedder (``llmwiki.services``;
    by default built from the workspace's settings for this call).
    """
    services = services or Services(workspace)
    lock = workspace.ingest_lock()
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if on_progress is not None:
            on_progress(0, 0, "waiting for another ingest of this workspace to finish")
        try:
            lock.acquire()
        except Timeout as err:
            raise WorkspaceError(f"{workspace.root}: another ingest has held the workspace for {INGEST_WAIT_S // 60} minutes. "
                                 "Wait for it to finish (or stop it), then ingest again.") from err
    try:
        return _ingest_paths(workspace, paths, copy=copy, count_tokens=count_tokens, on_progress=on_progress, generate=generate, services=services)
    finally:
        lock.release()


def _ingest_paths(workspace: Workspace, paths, *, copy: bool, count_tokens, on_progress, generate: bool, services: Services) -> BuildReport:
    tracer = services.tracer
    report = ingest_files(workspace, paths, copy=copy, count_tokens=count_tokens, on_progress=on_progress, tracer=tracer)
    failpoint("ingest:stored")
    generation, finished = None, ()
    if generate:
        just_ingested = {outcome.path for outcome in report.outcomes if outcome.action in ("ingested", "updated", "re-extracted")}
        pending = pending_sources(workspace)
        finished = tuple(document.path for document in pending if document.path not in just_ingested)
        if pending:
            if on_progress is not None:
                on_progress(len(report.outcomes), len(report.outcomes), "writing wiki pages")
            generation = regenerate_sources(workspace, pending, backend=services.backend, tracer=tracer)
    changed = {outcome.path for outcome in report.outcomes if outcome.action in ("updated", "re-extracted")}
    if generation is not None:
        changed.update(generation.written)
    changed.update(reindex_outdated_pages(workspace))
    relocated, gone = _relocate(workspace, changed, written=set(generation.written) if generation else set())
    embed_and_checkpoint(workspace, report, embedder=services.embedder, on_progress=on_progress)
    return BuildReport(outcomes=report.outcomes, seconds=report.seconds, passed_over=report.passed_over, generation=generation, finished=finished, relocated=relocated, quotes_gone=gone)


def _relocate(workspace: Workspace, changed: set[str], *, written: set[str]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Point the citations of pages this ingest did not write at the chunks that now hold their quotes
    (``llmwiki.publish.relocate``); a page whose quote is gone is marked stale. One commit."""
    if not changed:
        return (), ()
    from llmwiki.publish.relocate import relocate_citations

    pages = sorted(path.relative_to(workspace.root).as_posix() for path in workspace.wiki_dir.rglob("*.md"))
    # Summary and concept pages are written again from their sources' new chunks (now, or by the next ingest that generates).
    pages = [page for page in pages if page not in written and page not in COLLECTION_PAGES and not page.startswith((f"{SUMMARIES}/", f"{CONCEPTS}/"))]
    with workspace.write_lock():
        texts, gone = relocate_citations(workspace, pages, changed_sources=changed)
        if texts:
            publish(workspace, dict(texts), operation="relocate", subject=f"citations of {len(texts)} page(s) moved to the chunks that now hold their quotes")
    reasons = []
    store = workspace.store
    for page, lost in sorted(gone.items()):
        reason = "cites text its source no longer holds: " + ", ".join(f"[c{old}] in {source}" for old, source in lost)
        document = store.document_by_path(page)
        if document is not None:
            store.mark_stale(document.id, reason)
        reasons.append((page, reason))
    return tuple(sorted(texts)), tuple(reasons)


def pending_sources(workspace: Workspace) -> list[Document]:
    """Ready sources with chunks whose summary page is missing, or was written from another version of the source.

    Only sources whose file this checkout holds: several checkouts can share one PostgreSQL
    store, and each writes (and lint asks for) the pages of its own sources, not another's.
    """
    pending = []
    for document, summary in workspace.store.source_summaries():
        if not (workspace.root / document.path).is_file():
            continue
        if summary is None or not (workspace.root / summary).is_file():
            pending.append(document)
            continue
        entries = source_entries(read_page(workspace.root, summary).meta)
        read_with = extractor_tag(document.parser)
        if not any(entry["path"] == document.path and entry.get("hash") == document.content_hash and entry.get("read") == read_with for entry in entries):
            pending.append(document)
    return pending


def regenerate_sources(workspace: Workspace, documents: Sequence[Document], *, backend: Backend, tracer: Tracer = NULL_TRACER, operation: str = "ingest") -> GenerationReport:
    """Write or update the pages of these sources, then overview, index, log; one commit.

    Holds the workspace's write lock throughout, so two processes never merge
    into the same concept page from stale copies.
    """
    with tracer.span("generate", kind=operation, sources=len(documents), backend=backend.name), workspace.write_lock():
        existing = {
            path.relative_to(workspace.root).as_posix(): path.read_text(encoding="utf-8")
            for folder in (SUMMARIES, CONCEPTS)
            for path in sorted((workspace.root / folder).glob("*.md"))
        }
        aliases_path = workspace.state_dir / ALIASES_FILE
        composition = compose_pages(
            workspace.store, documents, existing=existing, aliases=load_aliases(aliases_path),
            settings=workspace.config.wiki, backend=backend, tracer=tracer,
        )
        report = composition.report
        changed_sources = named_briefly([document.path for document in composition.sources]) or "nothing"
        with tracer.span("generate.write", files=len(composition.texts)):
            report.written, report.commit = publish(
                workspace, composition.texts, operation=operation, subject=changed_sources, deleted=report.deleted,
                notes=report.notes, also_commit=[document.path for document in composition.sources],
            )
        write_aliases(aliases_path, composition.aliases, composition.rejected)
        return report


def publish(workspace: Workspace, texts: dict[str, str | None], *, operation: str, subject: str, deleted: Sequence[str] = (), notes: Sequence[str] = (), also_commit: Sequence[str] = ()) -> tuple[list[str], str | None]:
    """The one write path for wiki pages: index, overview, log, atomic files, store, commit.

    Returns (written paths, commit id). Files are restored if the store update
    fails; the write is journaled (llmwiki.publish.journal), so a crash midway is
    rolled back by the next command's recovery.
    """
    journal = ACTIVE.get(workspace.root)
    if journal is not None:  # inside a maintenance operation, which journals and snapshots
        return _publish(workspace, journal, texts, operation=operation, subject=subject, deleted=deleted, notes=notes, also_commit=also_commit)
    sources = [path for path in also_commit if path.startswith("sources/")]
    with journaled(workspace, operation, keep_store_copy=False, locked=True, subject=subject, sources=sources) as journal:
        return _publish(workspace, journal, texts, operation=operation, subject=subject, deleted=deleted, notes=notes, also_commit=also_commit)


def _publish(workspace: Workspace, journal: Journal, texts, *, operation, subject, deleted, notes, also_commit) -> tuple[list[str], str | None]:
    root = workspace.root
    texts = dict(texts)
    texts.update(_collection_pages(root, texts))
    entry = [f"## {_now()} {operation}: {subject}", ""]
    entry += [f"- wrote {path}" for path, text in sorted(texts.items()) if text is not None and not path.endswith(("index.md", "overview.md"))]
    entry += [f"- deleted {path}" for path in deleted]
    entry += [f"- note: {note}" for note in notes]
    log_path = root / "wiki/log.md"
    log_text = log_path.read_text(encoding="utf-8") if log_path.exists() else "# Log\n"
    texts["wiki/log.md"] = log_text.rstrip() + "\n\n" + "\n".join(entry) + "\n"
    journal.record_paths(root, sorted(texts))
    with workspace.store.session():
        backups = write_files(root, texts)
        failpoint("publish:files")
        try:
            index_pages(workspace, texts)
        except BaseException:
            restore(root, backups)
            index_pages(workspace, {path: (None if data is None else "") for path, data in backups.items()})
            raise
    failpoint("publish:store")
    files = sorted(texts)
    commit = gitrepo.commit(root, f"{operation}: {subject}\n\n" + "\n".join(files), [*files, *also_commit])
    return sorted(path for path, text in texts.items() if text is not None), commit


def named_briefly(paths: Sequence[str], *, shown: int = 5, all_up_to: int = 10) -> str:
    """Paths for a commit's subject and the log: all of ten or fewer, else the first ``shown`` and how many more."""
    if len(paths) <= all_up_to:
        return ", ".join(paths)
    return f"{len(paths):,} sources: {', '.join(paths[:shown])} and {len(paths) - shown:,} more"


def _now() -> str:
    return datetime.now().isoformat(timespec="seconds")


def _collection_pages(root: Path, texts: dict[str, str | None]) -> dict[str, str]:
    """index.md and overview.md, from every page as it will be after this write."""
    pages: dict[str, dict] = {}
    for folder in (SUMMARIES, CONCEPTS, ANSWERS):
        for path in sorted((root / folder).glob("*.md")):
            relative = f"{folder}/{path.name}"
            if relative in texts:
                continue
            pages[relative] = split_frontmatter(path.read_text(encoding="utf-8"))[0]
    for relative, text in texts.items():
        if text is not None and relative.startswith((SUMMARIES, CONCEPTS, ANSWERS)):
            pages[relative] = split_frontmatter(text)[0]
        elif text is None:
            pages.pop(relative, None)
    summaries = {path: meta for path, meta in sorted(pages.items()) if path.startswith(SUMMARIES)}
    concepts = {path: meta for path, meta in sorted(pages.items()) if path.startswith(CONCEPTS)}
    answers = {path: meta for path, meta in sorted(pages.items()) if path.startswith(ANSWERS)}

    def describe(meta: dict) -> str:
        text = CITATION.sub("", str(meta.get("description", ""))).strip()
        return text if len(text) <= 140 else text[:139].rstrip() + "…"

    index = ["# Index", "", f"{len(summaries)} source summaries and {len(concepts)} concept pages. Maintained by llmwiki; edits here are overwritten.", "", "## Sources", ""]
    index += [f"- [{meta.get('title', Path(path).stem)}]({path.removeprefix('wiki/')}) — {describe(meta)}" for path, meta in summaries.items()]
    index += ["", "## Concepts", ""]
    index += [
        f"- [{meta.get('title', Path(path).stem)}]({path.removeprefix('wiki/')}) — from {len(meta.get('sources', []))} source(s)"
        + (f"; also: {', '.join(meta['aliases'])}" if meta.get("aliases") else "")
        for path, meta in concepts.items()
    ]
    if answers:
        index += ["", "## Saved answers", ""]
        index += [f"- [{meta.get('title', Path(path).stem)}]({path.removeprefix('wiki/')}) — {describe(meta)}" for path, meta in answers.items()]
    shared = sorted(concepts.items(), key=lambda item: (-len(item[1].get("sources", [])), item[0]))[:15]
    overview = ["# Overview", "", f"This wiki is built from {len(summaries)} sources and has {len(concepts)} concept pages.", "", "## Sources", ""]
    overview += [f"- [{meta.get('title', Path(path).stem)}]({path.removeprefix('wiki/')}): {describe(meta)}" for path, meta in summaries.items()]
    overview += ["", "## Main concepts", ""]
    overview += [f"- [{meta.get('title', Path(path).stem)}]({path.removeprefix('wiki/')}) ({len(meta.get('sources', []))} sources)" for path, meta in shared]
    return {"wiki/index.md": "\n".join(index) + "\n", "wiki/overview.md": "\n".join(overview) + "\n"}


def sources_for(workspace: Workspace, names: Sequence[str]) -> list[Document]:
    """Source documents named directly, or through a summary or concept page that cites them."""
    store = workspace.store
    found: dict[str, Document] = {}
    for name in names:
        relative = workspace.relative(workspace.root / name if not Path(name).is_absolute() else name, fix="Name a source (sources/...) or a generated page (wiki/...).")
        document = store.document_by_path(relative)
        if document is not None and document.kind == "source":
            found[document.path] = document
            continue
        if not (workspace.root / relative).is_file():
            raise GenerationError(f"{relative}: is not a file of this workspace (a folder, or gone). Give a source path (sources/...) or a generated page (wiki/...).")
        page = read_page(workspace.root, relative)
        cited = source_paths(page.meta)
        documents = [store.document_by_path(path) for path in cited]
        if not any(documents):
            raise GenerationError(f"{relative}: names no source of this workspace. Give a source path (sources/...) or a generated page.")
        found.update({document.path: document for document in documents if document is not None})
    return list(found.values())
