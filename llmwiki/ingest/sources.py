"""Ingestion: files in a workspace become stored documents, pages and chunks.

For each file: confine the path to the workspace, hash the bytes, skip it when
the stored document has the same hash, otherwise record it as ``processing``,
extract and chunk it outside any transaction, and swap the new pages and
chunks in with one transaction that also marks it ``ready``. A file that
fails is recorded ``failed`` with the reason; the content stored for its
previous version stays where it was. One bad file never stops a scan.

The source and its chunks are committed here, before anything (a wiki page,
an index) is generated from them. This module knows nothing of generation:
``llmwiki.publish.wiki.ingest_paths`` runs ingest, then generation, as one unit.

Wiki pages are documents too: ``index_pages`` brings the store in line with
pages as written (their chunks, references and derivation), and
``rebuild_store`` refills an emptied store from every file in the workspace.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from llmwiki.ingest.chunking import TokenCounter, chunk_pages
from llmwiki.embeddings import Embedder
from llmwiki.errors import IngestError, NotADocument, StoreError, WorkspaceError
from llmwiki.ingest.extract import EXTRACTORS, extract, extraction_report, read_by_older_extractor
from llmwiki.failpoints import failpoint
from llmwiki.pages import SUMMARIES, source_paths, split_frontmatter
from llmwiki.records import Document
from llmwiki.store.contract import ContentSwap
from llmwiki.tracing import NULL_TRACER, Tracer
from llmwiki.workspace import COLLECTION_PAGES, STATE_DIRNAME, Workspace

ProgressCallback = Callable[[int, int, str], None]


SHOWN = 5  # the skipped files and passed-over file types a report names; the rest are counted


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one file: ingested, updated, re-extracted (same bytes, a newer extractor), unchanged, failed,
    refused or skipped."""

    path: str
    action: str
    chunk_count: int = 0
    reason: str | None = None
    seconds: float = 0.0
    notes: tuple[str, ...] = ()  # warnings the parser gave while reading the file


@dataclass(frozen=True)
class IngestReport:
    outcomes: tuple[FileOutcome, ...] = field(default=())
    seconds: float = 0.0
    passed_over: tuple[tuple[str, int], ...] = ()  # (extension, files) a folder scan found and no extractor reads, most first

    def count(self, action: str) -> int:
        return sum(1 for outcome in self.outcomes if outcome.action == action)

    @property
    def problems(self) -> list[FileOutcome]:
        return [outcome for outcome in self.outcomes if outcome.action in ("failed", "refused")]

    @property
    def skipped(self) -> list[FileOutcome]:
        """Files that hold no document of their own (a page that only redirects to another, a site's error page)."""
        return [outcome for outcome in self.outcomes if outcome.action == "skipped"]

    @property
    def chunk_count(self) -> int:
        return sum(outcome.chunk_count for outcome in self.outcomes)

    def problem_lines(self) -> list[tuple[str, str]]:
        """(action, line) of each problem and skipped file to show: of the files refused or failed for one reason (a
        folder outside the workspace, scanned PDFs without OCR), the first ``SHOWN``, then one line counting the rest,
        the reason once; of the skipped (a site's pages that only redirect, each to its own page, and its error
        page), the first ``SHOWN`` and a count."""
        lines: list[tuple[str, str]] = []
        alike: dict[tuple[str, str], int] = {}
        for outcome in [*self.problems, *self.skipped]:
            reason = outcome.reason or ""
            if outcome.action == "skipped":
                key = ("skipped", " more pages that hold no document of their own")
            else:
                key = (outcome.action, reason.removeprefix(outcome.path) if outcome.path and reason.startswith(outcome.path) else f": {reason}")
            alike[key] = alike.get(key, 0) + 1
            if alike[key] <= SHOWN:
                lines.append((outcome.action, reason))
        lines += [(action, f"{count - SHOWN}{rest}" if action == "skipped" else f"{count - SHOWN} more file(s) the same way{rest}")
                  for (action, rest), count in alike.items() if count > SHOWN]
        return lines

    def summary(self) -> str:
        """One line: how many files were ingested, updated, unchanged, failed."""
        parts = [
            f"{self.count(action)} {action}"
            for action in ("ingested", "updated", "re-extracted", "unchanged", "failed", "refused", "skipped")
            if self.count(action)
        ]
        line = f"{len(self.outcomes)} files: {', '.join(parts) or 'nothing to do'}; {self.chunk_count} chunks written in {self.seconds:.1f} s"
        if self.passed_over:
            shown = ", ".join(f"{count} {extension}" for extension, count in self.passed_over[:SHOWN])
            more = len(self.passed_over) - SHOWN
            line += f"; not read, no extractor for their type: {shown}" + (f" and {more} more type{'s' if more > 1 else ''}" if more > 0 else "")
        return line


def content_hash(data: bytes) -> str:
    """The sha256 of a file's bytes, as stored in documents.content_hash."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def discover(workspace: Workspace, paths: Iterable[Path | str]) -> tuple[list[Path], list[tuple[Path, str]], Counter[str]]:
    """Expand folders into the supported files under them, sorted; files pass as they are. Returns (files, problems,
    passed over): what cannot be read as a file (a link that loops or points nowhere, a folder that cannot be listed)
    is a problem with its reason, never an exception that stops the rest; the files of a folder that no extractor
    reads are counted by extension (a saved site's images and stylesheets, or a format llmwiki does not read). The
    walk keeps its own stack (no recursion, so a thousand nested folders are walked like one), does not follow links
    to folders (a link into itself would never end), and leaves out hidden files and folders."""
    found: list[Path] = []
    problems: list[tuple[Path, str]] = []
    passed_over: Counter[str] = Counter()
    for path in map(Path, paths):
        if not path.is_dir() or path.is_symlink():
            found.append(path)
            continue
        stack = [path]
        while stack:
            folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
            except OSError as err:
                problems.append((folder, f"cannot be listed ({err.strerror or err}). Check the folder's permissions"))
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                candidate = Path(entry.path)
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(candidate)
                        continue
                    if Path(entry.name).suffix.lower() not in EXTRACTORS:
                        passed_over[Path(entry.name).suffix.lower() or "(no extension)"] += 1
                        continue
                    resolved = candidate.resolve(strict=True)
                except (OSError, RuntimeError) as err:
                    problems.append((candidate, f"is a link that loops or points nowhere ({getattr(err, 'strerror', None) or err}). Remove the link, or replace it with the file"))
                    continue
                if not resolved.is_file():
                    continue
                collection = workspace.root in resolved.parents and resolved.relative_to(workspace.root).as_posix() in COLLECTION_PAGES
                if not collection:
                    found.append(candidate)
    return sorted(found), problems, passed_over


def _shown(workspace: Workspace, path: Path) -> str:
    """A path as reports name it: relative to the workspace where it lies inside."""
    try:
        return path.absolute().relative_to(workspace.root).as_posix()
    except ValueError:
        return str(path)


def import_file(workspace: Workspace, path: Path, *, folder: str = "") -> Path:
    """Copy a file from outside the workspace into sources/ (under ``folder``, a relative path such as "manual/ch1"),
    refusing to overwrite other content."""
    return import_bytes(workspace, path.name, path.read_bytes(), again="copy it again", folder=folder)


def import_bytes(workspace: Workspace, name: str, data: bytes, *, again: str = "upload it again", folder: str = "") -> Path:
    """An uploaded file (its name and bytes) into sources/ (under ``folder``), refusing to overwrite other content."""
    target = _import_target(workspace, name, folder=folder)
    if target.exists():
        if target.read_bytes() != data:
            raise WorkspaceError(f"{target}: already exists with other content. Rename {name} and {again}.")
        return target
    temporary = target.with_name(f".{target.name}.partial")
    temporary.write_bytes(data)
    temporary.replace(target)
    return target


def _import_target(workspace: Workspace, name: str, *, folder: str = "") -> Path:
    """sources/<folder>/<name>, for a plain file name (no folders, no hidden or empty names) and a folder of plain names."""
    plain = name.replace("\\", "/").rsplit("/", 1)[-1]
    if not plain or plain != name or plain.startswith(".") or "\x00" in plain:
        raise WorkspaceError(f"{name!r}: is not a plain file name. Rename the file (letters, digits, no folders, not starting with a dot) and add it again.")
    parts = [part for part in folder.replace("\\", "/").split("/") if part]
    if any(part in (".", "..") or part.startswith(".") or "\x00" in part for part in parts):
        raise WorkspaceError(f"{folder!r}: is not a plain folder path. Copy from a folder whose sub-folders are not hidden.")
    target_folder = workspace.sources_dir.joinpath(*parts)
    target_folder.mkdir(parents=True, exist_ok=True)
    return target_folder / plain


def ingest_file(workspace: Workspace, path: Path | str, *, count_tokens: TokenCounter | None = None) -> FileOutcome:
    """Ingest one file; never raises for bad input, the outcome says what happened."""
    return ingest_many(workspace, [Path(path)], count_tokens=count_tokens)[0]


@dataclass
class _Read:
    """A file read, hashed and extracted (or its failure), waiting to be stored."""

    relative: str
    size_bytes: int
    mtime: float
    started: float
    digest: str | None = None
    extraction: object | None = None  # an Extraction
    chunks: list = field(default_factory=list)
    failure: IngestError | None = None  # stored as the document's error; the outcome says it with the fix
    reread: str | None = None  # the older extractor that read the same bytes before
    touch_only: int | None = None  # an unchanged file whose modification time moved: the document id to note it on


def _read_file(workspace: Workspace, path: Path, known: Callable[[str], Document | None], count_tokens: TokenCounter | None) -> FileOutcome | _Read:
    """What a file holds, read without the store (which is only asked what it stored for the path before): a final
    outcome (refused, unchanged, skipped), or a _Read for ``_store_read``. Extraction and chunking, the slow part, happen here."""
    started = time.perf_counter()
    try:
        relative = workspace.relative(path)
    except WorkspaceError as err:
        return FileOutcome(path=str(path), action="refused", reason=str(err))
    absolute = workspace.root / relative
    if not absolute.is_file():
        return FileOutcome(path=relative, action="refused", reason=f"{relative}: does not exist or is not a file. Check the path.")
    if absolute.suffix.lower() not in EXTRACTORS:
        supported = ", ".join(sorted(EXTRACTORS))
        return FileOutcome(path=relative, action="refused", reason=f"{relative}: has an unsupported file type. Convert it to one of {supported}.")
    stat = absolute.stat()
    limit_bytes = workspace.config.ingest.max_file_mb * 1024 * 1024
    if stat.st_size > limit_bytes:
        error = IngestError(relative, f"is {stat.st_size / 1024 / 1024:.0f} MB, over the {workspace.config.ingest.max_file_mb:g} MB limit",
                            "Split it into smaller files, or raise [ingest] max_file_mb in wiki_config.toml")
        return _Read(relative, stat.st_size, stat.st_mtime, started, failure=error)
    data = absolute.read_bytes()
    digest = content_hash(data)
    existing = known(relative)
    reread = None
    if existing is not None and existing.status == "ready" and existing.content_hash == digest:
        if not read_by_older_extractor(relative, existing.parser):
            if existing.mtime != stat.st_mtime:
                return _Read(relative, len(data), stat.st_mtime, started, touch_only=existing.id)
            return FileOutcome(path=relative, action="unchanged", seconds=time.perf_counter() - started)
        reread = existing.parser or "an extractor before versions"
    read = _Read(relative, len(data), stat.st_mtime, started, digest=digest, reread=reread)
    try:
        read.extraction = extract(data, Path(relative), folder=absolute.parent)
        if count_tokens is None:
            from llmwiki.models import minilm_token_counter

            count_tokens = minilm_token_counter()
        settings = workspace.config.chunking
        read.chunks = chunk_pages(read.extraction.pages, max_tokens=settings.max_tokens, overlap_tokens=settings.overlap_tokens,
                                  min_tokens=settings.min_tokens, count_tokens=count_tokens)
    except NotADocument as err:
        if existing is None:  # nothing stored from it: skipped, no document
            return FileOutcome(path=relative, action="skipped", reason=str(err), seconds=time.perf_counter() - started)
        # A document stored from the file before is marked failed, its content kept until the user withdraws it.
        read.failure = IngestError(relative, err.problem, f"What was stored from it is kept; `llmwiki withdraw {relative}` removes it")
    except IngestError as err:
        read.failure = err
    except Exception as err:  # an extractor bug must not stop a scan
        read.failure = IngestError(relative, f"could not be read ({type(err).__name__}: {err})", "Check the file; if it opens elsewhere, report this as a bug")
    return read


def _store_reads(workspace: Workspace, reads: Sequence[_Read]) -> list[FileOutcome]:
    """Store what ``_read_file`` read, in the open session: each document's row, then the new pages and chunks of all of
    them in one transaction (``Store.replace_contents``), or the failure recorded. One outcome per read, in order."""
    from llmwiki.models import english_words

    store = workspace.store
    outcomes: list[FileOutcome | None] = [None] * len(reads)
    swaps, placed = [], []
    for position, read in enumerate(reads):
        if read.touch_only is not None:
            store.mark_ready_unchanged(read.touch_only, mtime=read.mtime)
            outcomes[position] = FileOutcome(path=read.relative, action="unchanged", seconds=time.perf_counter() - read.started)
            continue
        document = store.begin_document(path=read.relative, kind=workspace.kind_of(read.relative), size_bytes=read.size_bytes, mtime=read.mtime)
        if read.failure is not None:
            store.fail_document(document.id, read.failure.reason)
            outcomes[position] = FileOutcome(path=read.relative, action="failed", reason=str(read.failure), seconds=time.perf_counter() - read.started)
            continue
        extraction = read.extraction
        swaps.append(ContentSwap(document.id, read.digest, read.size_bytes, read.mtime, extraction.parser, extraction.title, extraction.pages,
                                 read.chunks, json.dumps(extraction_report(extraction, common_words=english_words()))))
        placed.append(position)
    for position, stored in zip(placed, store.replace_contents(swaps)):
        read = reads[position]
        action = "ingested" if stored.version == 1 else "re-extracted" if read.reread else "updated"
        outcomes[position] = FileOutcome(path=read.relative, action=action, chunk_count=len(read.chunks), seconds=time.perf_counter() - read.started,
                                         notes=read.extraction.notes)
    return outcomes


# Files read ahead of a write: the store's connection is opened once per group (opening one costs ~30 ms) and is not held
# while files are read and extracted, so other processes get in between groups.
_GROUP_FILES = 64
_GROUP_SECONDS = 2.0


def ingest_many(workspace: Workspace, paths: Sequence[Path], *, count_tokens: TokenCounter | None = None,
                on_file: Callable[[int, FileOutcome], None] | None = None) -> list[FileOutcome]:
    """Ingest files (already discovered), one outcome each in the order given; never raises for bad input.

    Files are read and extracted outside any connection, and stored in groups, each in one session of the store.
    on_file(index, outcome) is called as each file's outcome is known (for progress, traces and failpoints).
    """
    store = workspace.store
    with store.session():
        stored = {document.path: document for document in store.documents()} if len(paths) > 1 else None
    known = stored.get if stored is not None else store.document_by_path
    outcomes: dict[int, FileOutcome] = {}
    waiting: list[tuple[int, _Read]] = []
    since = time.perf_counter()

    def settle(index: int, outcome: FileOutcome) -> None:
        outcomes[index] = outcome
        if on_file is not None:
            on_file(index, outcome)

    def store_waiting() -> None:
        with store.session():
            stored = _store_reads(workspace, [read for _, read in waiting])
        for (index, _), outcome in zip(waiting, stored):
            settle(index, outcome)
        waiting.clear()

    for index, path in enumerate(paths):
        result = _read_file(workspace, Path(path), known, count_tokens)
        if isinstance(result, FileOutcome):
            settle(index, result)
            continue
        if not waiting:
            since = time.perf_counter()
        waiting.append((index, result))
        if len(waiting) >= _GROUP_FILES or time.perf_counter() - since >= _GROUP_SECONDS:
            store_waiting()
    if waiting:
        store_waiting()
    return [outcomes[index] for index in range(len(paths))]


def ingest_files(
    workspace: Workspace,
    paths: Iterable[Path | str] | None = None,
    *,
    copy: bool = False,
    count_tokens: TokenCounter | None = None,
    on_progress: ProgressCallback | None = None,
    tracer: Tracer = NULL_TRACER,
) -> IngestReport:
    """Ingest files and folders (default: sources/) into the store, continuing past bad files.

    No page is written here; see ``llmwiki.publish.wiki.ingest_paths`` for ingest with generation.
    """
    with tracer.span("ingest") as span:
        report = _ingest_files(workspace, paths, copy=copy, count_tokens=count_tokens, on_progress=on_progress, tracer=tracer)
        span.set(files=len(report.outcomes), chunks=report.chunk_count, **{action: report.count(action) for action in ("ingested", "updated", "re-extracted", "unchanged", "failed", "refused")})
    return report


def _ingest_files(workspace: Workspace, paths, *, copy: bool, count_tokens, on_progress, tracer: Tracer) -> IngestReport:
    started = time.perf_counter()
    requested = [workspace.sources_dir] if paths is None else list(paths)
    files, problems, passed_over = discover(workspace, requested)
    outcomes = [FileOutcome(path=_shown(workspace, path), action="refused", reason=f"{_shown(workspace, path)}: {reason}.") for path, reason in problems]
    folders = sorted((Path(path) for path in requested if Path(path).is_dir()), key=lambda folder: -len(Path(folder).parts))
    readable: list[Path] = []
    for path in files:
        if copy and not _inside(workspace, path) and path.is_file():
            # A copied folder keeps its structure under sources/<its name>/, so two notes.md in two sub-folders are two sources.
            root = next((folder for folder in folders if folder in path.parents), None)
            under = (Path(root.name) / path.parent.relative_to(root)).as_posix() if root is not None else ""
            try:
                path = import_file(workspace, path, folder=under)
            except (WorkspaceError, OSError) as err:
                outcomes.append(FileOutcome(path=str(path), action="refused", reason=str(err)))
                continue
        readable.append(path)
    settled = 0

    def on_file(index: int, outcome: FileOutcome) -> None:
        nonlocal settled
        settled += 1
        with tracer.span("ingest.file", path=outcome.path, action=outcome.action, chunks=outcome.chunk_count, seconds=round(outcome.seconds, 4)):
            pass  # the file's own time is its outcome's (read and stored in groups, not in one block)
        if on_progress is not None:
            on_progress(settled, len(readable), str(readable[index]))
        failpoint("ingest:file")

    if on_progress is not None:
        on_progress(0, len(readable), str(readable[0]) if readable else "")
    outcomes += ingest_many(workspace, readable, count_tokens=count_tokens, on_file=on_file)
    if on_progress is not None:
        on_progress(len(readable), len(readable), "")
    return IngestReport(outcomes=tuple(outcomes), seconds=time.perf_counter() - started, passed_over=tuple(sorted(passed_over.items(), key=lambda item: (-item[1], item[0]))))


def embed_and_checkpoint(workspace: Workspace, report: IngestReport, *, embedder: Embedder | None = None, on_progress: ProgressCallback | None = None) -> None:
    """After a batch: embed new chunks with embedder (hybrid retrieval: ``Services.embedder``; None: nothing to embed),
    fold the write-ahead log into the file."""
    if embedder is not None:
        from llmwiki.embeddings import embed_missing

        embed_missing(
            workspace.store,
            embedder,
            on_progress=None if on_progress is None else lambda done, total: on_progress(done, total, "embedding chunks"),
        )
    if any(outcome.action in ("ingested", "updated", "re-extracted", "failed") for outcome in report.outcomes):
        workspace.store.checkpoint()


_LINKED_PAGE = re.compile(r"\]\((?:\.\./)?((?:concepts|summaries|answers)/[^)]+\.md)\)")


def index_pages(workspace: Workspace, texts: dict[str, str | None]) -> None:
    """Bring the store in line with written wiki pages (None: deleted): chunks, references, derivation."""
    store = workspace.store
    written = []
    for relative, text in sorted(texts.items()):
        if relative in COLLECTION_PAGES:
            continue  # read whole by the chat selector, not searched chunk by chunk
        if text is None or not (workspace.root / relative).exists():
            store.remove_document(relative)
            continue
        written.append(workspace.root / relative)
    for outcome in ingest_many(workspace, written):
        if outcome.action == "failed":
            raise IngestError(outcome.path, f"the written page could not be indexed ({outcome.reason})", "Fix the page and run `llmwiki reindex`")
    by_path = {document.path: document for document in store.documents()}
    for relative, text in texts.items():
        if text is None or relative not in by_path:
            continue
        meta, body = split_frontmatter(text)
        cites = [by_path[path].id for path in source_paths(meta) if path in by_path]
        links_to = [by_path[f"wiki/{target}"].id for target in _LINKED_PAGE.findall(body) if f"wiki/{target}" in by_path]
        derived_from = cites[0] if relative.startswith(SUMMARIES) and cites else None
        store.set_page_references(by_path[relative].id, cites=cites, links_to=links_to, derived_from=derived_from)


def reindex_outdated_pages(workspace: Workspace) -> list[str]:
    """Wiki pages an older extractor read, indexed again as they are written (their chunks get new ids); returns them."""
    store = workspace.store
    outdated = [document.path for document in store.documents(kind="wiki")
                if read_by_older_extractor(document.path, document.parser) and (workspace.root / document.path).is_file()]
    if outdated:
        with store.session():
            index_pages(workspace, {path: (workspace.root / path).read_text(encoding="utf-8") for path in outdated})
    return outdated


def rebuild_store(workspace: Workspace, *, on_progress: ProgressCallback | None = None) -> dict[str, int]:
    """Empty the store and refill it from the files: sources re-extracted, wiki pages re-indexed.

    No model is called. Returns counts of what was indexed.
    """
    store = workspace.store
    if not store.rebuilds_from_files:
        msg = (
            f"{store.path}: a shared PostgreSQL store is not emptied and rebuilt from one workspace's files "
            "(other workspaces' documents are in it too). Bring it back from the server's backups (pg_dump, point-in-time recovery); "
            "`llmwiki ingest` brings this workspace's files up to date."
        )
        raise StoreError(msg)
    store.clear()
    report = ingest_files(workspace, on_progress=on_progress)
    pages = {
        path.relative_to(workspace.root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(workspace.wiki_dir.rglob("*.md"))
        if path.relative_to(workspace.root).as_posix() not in COLLECTION_PAGES
    }
    with store.session():
        index_pages(workspace, pages)
    store.checkpoint()
    return {"sources": report.count("ingested") + report.count("updated"), "failed": report.count("failed"), "pages": len(pages)}


def _inside(workspace: Workspace, path: Path) -> bool:
    try:
        relative = path.resolve().relative_to(workspace.root)
    except ValueError:
        return False
    return not (relative.parts and relative.parts[0] == STATE_DIRNAME)
