"""Watch a workspace's sources/ and ingest what changes, re-checking the pages that rest on it.

``watchfiles`` (Rust's notify) reports changes in debounced batches; each
batch is one ingest of the files changed in it (the wiki pages of new or
changed sources written as ``llmwiki ingest`` writes them), then the re-check
of verified pages that rest on changed sources (``review.recheck_sources``).
Batches run one at a time: a change that arrives during an ingest is in the
next batch. A file deleted from sources/ is not withdrawn on its own (that
deletes pages): the batch says to run ``llmwiki withdraw``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from llmwiki.review import Recheck, recheck_sources
from llmwiki.publish.wiki import BuildReport, ingest_paths
from llmwiki.services import Services
from llmwiki.workspace import Workspace


@dataclass(frozen=True)
class WatchBatch:
    """One batch of changes and what was done about them."""

    changed: tuple[str, ...]  # workspace-relative paths ingested
    removed: tuple[str, ...]  # files gone from sources/ (withdraw them by hand)
    report: BuildReport | None
    recheck: Recheck | None = None
    notes: tuple[str, ...] = field(default=())


def _relevant(path: Path) -> bool:
    """A file of sources/ an ingest reads: not hidden, not an editor's temporary file."""
    name = path.name
    return not (name.startswith((".", "~")) or name.endswith(("~", ".swp", ".tmp", ".part", ".crdownload")))


def watch_sources(workspace: Workspace, on_batch: Callable[[WatchBatch], None], *, stop: threading.Event | None = None,
                  debounce_ms: int = 1600, services: Services | None = None, ready: Callable[[], None] | None = None) -> None:
    """Ingest each debounced batch of changes in sources/ until stop is set (or KeyboardInterrupt); on_batch gets
    every batch's outcome. services: the backend, tracer and embedder of each ingest and the verifier of the re-checks
    (loaded at the first re-check), for the whole watch (by default built from the workspace's settings)."""
    import watchfiles

    services = services or Services(workspace)
    sources = workspace.sources_dir
    if ready is not None:
        ready()
    for changes in watchfiles.watch(sources, debounce=debounce_ms, stop_event=stop, raise_interrupt=False, recursive=True):
        present, removed = set(), set()
        for change, name in changes:
            path = Path(name)
            if not _relevant(path):
                continue
            if change == watchfiles.Change.deleted or not path.exists():
                removed.add(path)
            elif path.is_file():
                present.add(path)
        if not present and not removed:
            continue
        report = ingest_paths(workspace, sorted(present), services=services) if present else None
        changed_sources = [outcome.path for outcome in report.outcomes if outcome.action == "updated"] if report else []
        recheck = recheck_sources(workspace, changed_sources, services.load_verifier) if changed_sources else None
        relative_removed = tuple(sorted(path.relative_to(workspace.root).as_posix() for path in removed if path.is_relative_to(workspace.root)))
        notes = tuple(f"{path} was removed from sources/; withdraw its pages with `llmwiki withdraw {path}`" for path in relative_removed)
        changed = tuple(sorted(path.relative_to(workspace.root).as_posix() for path in present))
        on_batch(WatchBatch(changed=changed, removed=relative_removed, report=report, recheck=recheck, notes=notes))
