"""Ingestion: files in a workspace become stored documents, pages and chunks.

For each file: confine the path to the workspace, hash the bytes, skip it when
the stored document has the same hash, otherwise record it as ``processing``,
extract and chunk it outside any transaction, and swap the new pages and
chunks in with one transaction that also marks it ``ready``. A file that
fails is recorded ``failed`` with the reason; the content stored for its
previous version stays where it was. One bad file never stops a scan.

The source and its chunks are committed here, before anything (a wiki page,
an index) is generated from them.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from llmwiki.chunking import TokenCounter, chunk_pages
from llmwiki.errors import IngestError, WorkspaceError
from llmwiki.extract import EXTRACTORS, extract
from llmwiki.workspace import COLLECTION_PAGES, STATE_DIRNAME, Workspace

ProgressCallback = Callable[[int, int, str], None]


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one file: ingested, updated, unchanged, failed, refused or skipped."""

    path: str
    action: str
    chunk_count: int = 0
    reason: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class IngestReport:
    outcomes: tuple[FileOutcome, ...] = field(default=())
    seconds: float = 0.0
    generation: object | None = None  # generate.GenerationReport when pages were written

    def count(self, action: str) -> int:
        return sum(1 for outcome in self.outcomes if outcome.action == action)

    @property
    def problems(self) -> list[FileOutcome]:
        return [outcome for outcome in self.outcomes if outcome.action in ("failed", "refused")]

    @property
    def chunk_count(self) -> int:
        return sum(outcome.chunk_count for outcome in self.outcomes)

    def summary(self) -> str:
        """One line: how many files were ingested, updated, unchanged, failed."""
        parts = [
            f"{self.count(action)} {action}"
            for action in ("ingested", "updated", "unchanged", "failed", "refused", "skipped")
            if self.count(action)
        ]
        return f"{len(self.outcomes)} files: {', '.join(parts) or 'nothing to do'}; {self.chunk_count} chunks written in {self.seconds:.1f} s"


def content_hash(data: bytes) -> str:
    """The sha256 of a file's bytes, as stored in documents.content_hash."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def discover(workspace: Workspace, paths: Iterable[Path | str]) -> list[Path]:
    """Expand folders into the supported files under them, sorted; files pass as they are."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                hidden = any(part.startswith(".") for part in candidate.relative_to(path).parts)
                resolved = candidate.resolve()
                collection = workspace.root in resolved.parents and resolved.relative_to(workspace.root).as_posix() in COLLECTION_PAGES
                if candidate.is_file() and not hidden and not collection and candidate.suffix.lower() in EXTRACTORS:
                    found.append(candidate)
        else:
            found.append(path)
    return found


def import_file(workspace: Workspace, path: Path) -> Path:
    """Copy a file from outside the workspace into sources/, refusing to overwrite other content."""
    target = workspace.sources_dir / path.name
    if target.exists():
        if target.read_bytes() != path.read_bytes():
            msg = f"{target}: already exists with other content. Rename {path.name} and copy it again."
            raise WorkspaceError(msg)
        return target
    workspace.sources_dir.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.partial")
    shutil.copyfile(path, temporary)
    temporary.replace(target)
    return target


def ingest_file(workspace: Workspace, path: Path | str, *, count_tokens: TokenCounter | None = None) -> FileOutcome:
    """Ingest one file; never raises for bad input, the outcome says what happened."""
    with workspace.store.session():
        return _ingest_file(workspace, path, count_tokens=count_tokens)


def _ingest_file(workspace: Workspace, path: Path | str, *, count_tokens: TokenCounter | None) -> FileOutcome:
    started = time.perf_counter()
    path = Path(path)
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

    store = workspace.store
    stat = absolute.stat()
    existing = store.document_by_path(relative)
    limit_bytes = workspace.config.ingest.max_file_mb * 1024 * 1024
    if stat.st_size > limit_bytes:
        error = IngestError(
            relative,
            f"is {stat.st_size / 1024 / 1024:.0f} MB, over the {workspace.config.ingest.max_file_mb:g} MB limit",
            "Split it into smaller files, or raise [ingest] max_file_mb in wiki_config.toml",
        )
        document = store.begin_document(path=relative, kind=workspace.kind_of(relative), size_bytes=stat.st_size, mtime=stat.st_mtime)
        store.fail_document(document.id, error.reason)
        return FileOutcome(path=relative, action="failed", reason=str(error), seconds=time.perf_counter() - started)

    data = absolute.read_bytes()
    digest = content_hash(data)
    if existing is not None and existing.status == "ready" and existing.content_hash == digest:
        if existing.mtime != stat.st_mtime:
            store.mark_ready_unchanged(existing.id, mtime=stat.st_mtime)
        return FileOutcome(path=relative, action="unchanged", seconds=time.perf_counter() - started)

    document = store.begin_document(path=relative, kind=workspace.kind_of(relative), size_bytes=len(data), mtime=stat.st_mtime)
    try:
        extraction = extract(data, Path(relative))
        if count_tokens is None:
            from llmwiki.models import minilm_token_counter

            count_tokens = minilm_token_counter()
        settings = workspace.config.chunking
        chunks = chunk_pages(
            extraction.pages,
            max_tokens=settings.max_tokens,
            overlap_tokens=settings.overlap_tokens,
            min_tokens=settings.min_tokens,
            count_tokens=count_tokens,
        )
    except IngestError as err:
        store.fail_document(document.id, err.reason)
        return FileOutcome(path=relative, action="failed", reason=str(err), seconds=time.perf_counter() - started)
    except Exception as err:  # an extractor bug must not stop a scan
        reason = f"could not be read ({type(err).__name__}: {err}). Check the file; if it opens elsewhere, report this as a bug"
        store.fail_document(document.id, reason)
        return FileOutcome(path=relative, action="failed", reason=f"{relative}: {reason}", seconds=time.perf_counter() - started)

    stored = store.replace_content(
        document.id,
        content_hash=digest,
        size_bytes=len(data),
        mtime=stat.st_mtime,
        parser=extraction.parser,
        title=extraction.title,
        pages=extraction.pages,
        chunks=chunks,
    )
    action = "ingested" if stored.version == 1 else "updated"
    return FileOutcome(path=relative, action=action, chunk_count=len(chunks), seconds=time.perf_counter() - started)


def ingest_paths(
    workspace: Workspace,
    paths: Iterable[Path | str] | None = None,
    *,
    copy: bool = False,
    count_tokens: TokenCounter | None = None,
    on_progress: ProgressCallback | None = None,
    generate: bool = True,
    backend=None,
) -> IngestReport:
    """Ingest files and folders (default: sources/), continuing past bad files.

    With generate (the default), every source that was ingested or updated
    then gets its wiki pages, after its chunks are committed.
    """
    tracer = workspace.tracer()
    with tracer.span("ingest") as span:
        report = _ingest_paths(workspace, paths, copy=copy, count_tokens=count_tokens, on_progress=on_progress, generate=generate, backend=backend, tracer=tracer)
        span.set(files=len(report.outcomes), chunks=report.chunk_count, **{action: report.count(action) for action in ("ingested", "updated", "unchanged", "failed", "refused")})
    return report


def _ingest_paths(workspace, paths, *, copy, count_tokens, on_progress, generate, backend, tracer) -> IngestReport:
    started = time.perf_counter()
    requested = [workspace.sources_dir] if paths is None else list(paths)
    files = discover(workspace, requested)
    outcomes = []
    for done, path in enumerate(files):
        if copy and not _inside(workspace, path) and path.is_file():
            try:
                path = import_file(workspace, path)
            except (WorkspaceError, OSError) as err:
                outcomes.append(FileOutcome(path=str(path), action="refused", reason=str(err)))
                continue
        if on_progress is not None:
            on_progress(done, len(files), str(path))
        with tracer.span("ingest.file", path=str(path)) as file_span:
            outcome = ingest_file(workspace, path, count_tokens=count_tokens)
            file_span.set(action=outcome.action, chunks=outcome.chunk_count)
        outcomes.append(outcome)
    if on_progress is not None:
        on_progress(len(files), len(files), "")
    generation = None
    changed = [outcome.path for outcome in outcomes if outcome.action in ("ingested", "updated") and workspace.kind_of(outcome.path) == "source"]
    if generate and changed:
        from llmwiki.generate import regenerate_sources

        documents = [workspace.store.document_by_path(path) for path in changed]
        if on_progress is not None:
            on_progress(len(files), len(files), "writing wiki pages")
        generation = regenerate_sources(workspace, documents, backend=backend or workspace.backend(), tracer=tracer)
    if workspace.config.retrieval.hybrid:
        from llmwiki.embeddings import default_embedder, embed_missing

        embed_missing(
            workspace.store,
            default_embedder(workspace.config.retrieval.embedding_model),
            on_progress=None if on_progress is None else lambda done, total: on_progress(done, total, "embedding chunks"),
        )
    if any(outcome.action in ("ingested", "updated", "failed") for outcome in outcomes):
        workspace.store.checkpoint()
    return IngestReport(outcomes=tuple(outcomes), seconds=time.perf_counter() - started, generation=generation)


def _inside(workspace: Workspace, path: Path) -> bool:
    try:
        relative = path.resolve().relative_to(workspace.root)
    except ValueError:
        return False
    return not (relative.parts and relative.parts[0] == STATE_DIRNAME)
