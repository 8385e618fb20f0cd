"""Store snapshots at commits, and the ways to bring the store back.

Every write to the wiki is a git commit in the workspace; the DuckDB store
(``.llmwiki/store.duckdb``) is not in git. So at each commit the store is
copied to ``.llmwiki/snapshots/<commit>.duckdb`` (``Store.copy_to``: one
transaction, consistent even while other connections exist), keeping the
newest ``[history] keep_snapshots``.

Bringing the store back:

- ``load_snapshot``: a usable snapshot (same schema migrations, readable)
  replaces every table's rows in one transaction: versions, stale marks and
  stored verifications come back exactly.
- ``rebuild_store`` (``llmwiki.ingest.sources``): without one, the store is rebuilt
  from the files (no model call); ``REBUILD_LOSSES`` says what that loses.
- ``restore_to``: files and store back to a commit (the body of ``llmwiki
  restore``, idempotent, so recovery can carry an interrupted one out again).
- ``recover_store``: a damaged store file is moved aside and replaced by the
  snapshot of HEAD, else rebuilt from the files.

No SQL here: every read and write of the store is a ``Store`` method.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from llmwiki import gitrepo
from llmwiki.config import CONFIG_FILENAME, load_config
from llmwiki.errors import LlmwikiError, StoreDamagedError
from llmwiki.failpoints import failpoint
from llmwiki.ingest.sources import ProgressCallback, rebuild_store
from llmwiki.workspace import Workspace

REBUILD_LOSSES = (
    "page version numbers start again at 1",
    "stale marks (and their reasons) are gone",
    "stored verifications are gone (run `llmwiki verify --all`)",
    "failure records of sources that failed are re-created by re-extraction",
)


class SnapshotError(LlmwikiError):
    """A snapshot could not be written or read."""


@dataclass(frozen=True)
class Snapshot:
    commit: str
    path: Path
    size_bytes: int


def snapshot_folder(workspace: Workspace) -> Path:
    return workspace.state_dir / "snapshots"


def take_snapshot(workspace: Workspace, commit: str | None) -> Snapshot | None:
    """Copy the store as it is now, under the commit's id; prune old snapshots."""
    if not commit or not workspace.config.history.snapshots or not workspace.store.supports_snapshots:  # a server store has the server's backups
        return None
    folder = snapshot_folder(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{commit}.duckdb"
    if target.is_file():  # taken when the commit was made; the store then is what it stands for
        return Snapshot(commit, target, target.stat().st_size)
    partial = folder / f".{commit}.partial"
    for leftover in (partial, partial.with_name(partial.name + ".wal")):
        leftover.unlink(missing_ok=True)
    workspace.store.copy_to(partial)
    os.replace(partial, target)  # a crash before this leaves only a .partial, never a half snapshot
    prune(workspace)
    return Snapshot(commit, target, target.stat().st_size)


def prune(workspace: Workspace) -> list[Path]:
    """Delete all but the newest keep_snapshots snapshots; returns what was deleted."""
    folder = snapshot_folder(workspace)
    kept = sorted(folder.glob("*.duckdb"), key=lambda path: path.stat().st_mtime, reverse=True)
    removed = kept[workspace.config.history.keep_snapshots:]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def snapshots(workspace: Workspace) -> dict[str, Snapshot]:
    """commit id -> snapshot, for every snapshot on disk."""
    folder = snapshot_folder(workspace)
    return {path.stem: Snapshot(path.stem, path, path.stat().st_size) for path in folder.glob("*.duckdb")} if folder.is_dir() else {}


def usable(workspace: Workspace, commit: str) -> tuple[Path | None, str]:
    """(snapshot path, '') when the commit has a snapshot this store can load, else (None, why not)."""
    path = snapshot_folder(workspace) / f"{commit}.duckdb"
    if not path.is_file():
        return None, "no snapshot was kept for that commit"
    try:
        theirs = workspace.store.migrations_in(path)
    except StoreDamagedError as err:
        return None, f"the snapshot is damaged ({str(err).split(': ', 1)[-1]})"
    ours = workspace.store.migration_names()
    if theirs != ours:
        return None, f"the snapshot has schema migrations {theirs}, this llmwiki has {ours}"
    return path, ""


def load_snapshot(workspace: Workspace, path: Path) -> None:
    """Replace every table's rows with the snapshot's, in one transaction."""
    workspace.store.load_from(path)


@dataclass
class RestoreReport:
    target: str
    method: str = ""  # "snapshot" or "rebuild"
    why_rebuilt: str = ""
    changed_files: list[str] = field(default_factory=list)
    losses: tuple[str, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    commit: str | None = None
    store_recovery: str = ""  # what was done first about a damaged store, if anything
    left: str | None = None  # the commit the workspace was at before: restoring it undoes this restore
    sources_removed: list[str] = field(default_factory=list)  # source files that did not exist at the target commit
    sources_returned: list[str] = field(default_factory=list)  # source files the target commit had and the workspace had not

    def summary(self) -> str:
        lines = [self.store_recovery] if self.store_recovery else []
        lines.append(f"Restored the workspace to {self.target[:10]}: {len(self.changed_files)} file(s) changed.")
        lines += [f"    source removed (it came after {self.target[:10]}): {path}" for path in self.sources_removed]
        lines += [f"    source brought back: {path}" for path in self.sources_returned]
        if self.method == "snapshot":
            lines.append("Store: loaded from the snapshot taken at that commit (versions, stale marks and verifications as they were).")
        else:
            lines.append(f"Store: rebuilt from the files ({self.why_rebuilt}); {self.counts.get('sources', 0)} sources re-extracted, {self.counts.get('pages', 0)} pages re-indexed.")
            lines += [f"    lost: {loss}" for loss in self.losses]
        lines.append(f"commit {self.commit[:10]}" if self.commit else "No file differed; nothing to commit.")
        if self.commit and self.left:
            lines.append(f"To undo it: llmwiki restore {self.left[:10]}")
        return "\n".join(lines)


def restore_to(workspace: Workspace, target: str) -> RestoreReport:
    """Files and store back to a commit, as a new forward commit; idempotent, so an
    interrupted restore is carried out again by recovery."""
    root = workspace.root
    report = RestoreReport(target=target, left=gitrepo.head(root))
    gitrepo.restore_tree(root, target)
    log_path = root / "wiki/log.md"
    if log_path.exists():  # the log as it was then, plus this restore
        stamp = datetime.now().isoformat(timespec="seconds").replace("T", " ")
        log_path.write_text(log_path.read_text(encoding="utf-8").rstrip() + f"\n\n## {stamp} restore: to {target[:10]}\n", encoding="utf-8")
    report.changed_files = gitrepo.changed_since_head(root)  # also right when an interrupted restore is carried out again
    statuses = gitrepo.statuses_since_head(root)
    report.sources_removed = sorted(path for path, how in statuses.items() if path.startswith("sources/") and how == "deleted")
    report.sources_returned = sorted(path for path, how in statuses.items() if path.startswith("sources/") and how == "added")
    failpoint("restore:files")
    workspace = Workspace(root=root, config=load_config(root / CONFIG_FILENAME))  # the settings as they were then
    snapshot, why = usable(workspace, target)
    if snapshot is not None:
        load_snapshot(workspace, snapshot)
        report.method = "snapshot"
    else:
        report.method, report.why_rebuilt, report.losses = "rebuild", why, REBUILD_LOSSES
        report.counts = rebuild_store(workspace)
    failpoint("restore:store")
    subject = next((entry[2] for entry in gitrepo.log(root, limit=1000) if entry[0] == target), "")
    report.commit = gitrepo.commit(root, f"restore: to {target[:10]} ({subject})\n\nstore: {report.method}", report.changed_files)
    if report.commit:
        take_snapshot(workspace, report.commit)
    return report


# -- a damaged or missing store ---------------------------------------------------------


def store_problem(workspace: Workspace) -> str | None:
    """Why the store cannot be used as it is (damaged, or missing while the wiki has pages), with the fix; None when it can."""
    store = workspace.store
    if not store.supports_snapshots:  # a server store: connection problems name themselves at the first query
        return None
    if not store.exists():
        pages = sum(1 for path in workspace.wiki_dir.rglob("*.md") if path.parent != workspace.wiki_dir)
        if pages:  # without pages, a store not made yet is a workspace not ingested yet
            return (
                f"{store.path}: the store is missing while the wiki holds {pages} page(s). "
                "Run `llmwiki restore` to load the latest snapshot, or `llmwiki reindex` to rebuild it from the files."
            )
        return None
    return store.damage()  # the whole file read (or its stamp unchanged since it last was)


@dataclass
class StoreRecovery:
    method: str  # "snapshot" or "rebuild"
    moved_to: Path | None
    commit: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    losses: tuple[str, ...] = ()

    def summary(self) -> str:
        first = f"The damaged store was moved to {self.moved_to}." if self.moved_to else "The store was missing."
        if self.method == "snapshot":
            return f"{first} Store: loaded from the snapshot of HEAD ({(self.commit or '')[:10]}); nothing was lost."
        lost = "".join(f"\n    lost: {loss}" for loss in self.losses)
        return f"{first} Store: rebuilt from the files; {self.counts.get('sources', 0)} sources re-extracted, {self.counts.get('pages', 0)} pages re-indexed.{lost}"


def recover_store(workspace: Workspace, *, on_progress: ProgressCallback | None = None) -> StoreRecovery:
    """Replace a damaged or missing store: the snapshot of HEAD when one is usable (nothing lost), else a
    rebuild from the files. The damaged file is kept aside in .llmwiki/damaged/, never deleted."""
    store = workspace.store
    moved_to = None
    if store.path.exists():
        folder = workspace.state_dir / "damaged"
        folder.mkdir(parents=True, exist_ok=True)
        moved_to = folder / f"store-{datetime.now():%Y%m%d-%H%M%S}.duckdb"
        os.replace(store.path, moved_to)
        wal = store.path.with_name(store.path.name + ".wal")
        if wal.exists():
            os.replace(wal, moved_to.with_name(moved_to.name + ".wal"))
    store.migrate()  # a fresh, empty store
    head = gitrepo.head(workspace.root)
    snapshot, _ = usable(workspace, head) if head else (None, "")
    if snapshot is not None and not [path for path in gitrepo.changed_since_head(workspace.root) if path.startswith(("wiki/", "sources/"))]:
        load_snapshot(workspace, snapshot)
        return StoreRecovery("snapshot", moved_to, commit=head)
    counts = rebuild_store(workspace, on_progress=on_progress)
    return StoreRecovery("rebuild", moved_to, counts=counts, losses=REBUILD_LOSSES)
