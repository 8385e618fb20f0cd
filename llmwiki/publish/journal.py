"""Crash safety for every write: a journal, and recovery at the next command.

Each write runs inside ``operation()``: under the workspace's write lock it
writes ``.llmwiki/journal.json`` (what runs, the commit it started from, the
files it will write or delete, the files it moves) before touching anything.
Maintenance operations (withdraw, edit, delete, lint repairs) also keep a copy
of the store as it was; a plain page write (``generate.publish`` for ingest,
regenerate, a saved answer) needs none, because its store change is the
re-indexing of the pages it writes. The operation ends with a git commit, the
commit's snapshot is taken, and the journal is removed. If the process dies
in between (kill -9, power loss), the journal stays, and ``recover()`` — run
when a workspace is opened — brings files and store back into agreement:

- the operation's commit landed: it had finished; only the snapshot is taken;
- it did not: the files it wrote are put back as they were (each was copied
  aside before being written; new ones are removed, moved ones move back;
  nothing else in the workspace is touched), and the store is loaded from the
  copy, or the pages are re-indexed; a restore is instead carried out again
  (it is idempotent). This works with or without git history.

An operation that fails with an exception is rolled back the same way at once.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from llmwiki import gitrepo
from llmwiki.ingest.sources import index_pages, rebuild_store
from llmwiki.errors import StoreDamagedError
from llmwiki.publish.snapshots import load_snapshot, recover_store, restore_to, store_problem, take_snapshot
from llmwiki.workspace import Workspace

JOURNAL_FILE = "journal.json"
BEFORE_FILE = "journal-before.duckdb"
KEPT_DIR = "journal-files"
ACTIVE: dict[Path, "Journal"] = {}  # workspace root -> the operation running in this process
RECOVERED: dict[Path, str] = {}  # workspace root -> what recovery did, in this process


@dataclass
class Journal:
    path: Path
    operation: str
    head: str | None
    details: dict = field(default_factory=dict)
    moves: list[tuple[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)  # recorded path that existed -> its copy

    def save(self) -> None:
        partial = self.path.with_suffix(".partial")
        state = {"operation": self.operation, "head": self.head, "details": self.details, "moves": self.moves, "paths": self.paths, "kept": self.kept}
        partial.write_text(json.dumps(state), encoding="utf-8")
        os.replace(partial, self.path)

    def record_paths(self, root: Path, paths) -> None:
        """Note files about to be written or deleted, copying the existing ones aside first,
        so a rollback can put back exactly what was there (uncommitted hand edits included)."""
        for path in dict.fromkeys(paths):
            if path in self.paths:
                continue
            if (root / path).is_file():
                copy = self.path.parent / KEPT_DIR / str(len(self.paths))
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / path, copy)
                self.kept[path] = copy.name
            self.paths.append(path)
        self.save()

    def record_move(self, source: str, target: str) -> None:
        """Note a file move before it happens, so a rollback can move it back."""
        self.moves.append((source, target))
        self.save()


@contextmanager
def operation(workspace: Workspace, name: str, *, keep_store_copy: bool = True, locked: bool = False, **details):
    """Run one write under the write lock with a journal; see the module docstring.

    locked: the caller already holds the workspace's write lock. The caller
    commits at the end; the snapshot for that commit is taken here.
    """
    with nullcontext() if locked else workspace.write_lock():
        _recover_locked(workspace)
        try:
            journal = Journal(workspace.state_dir / JOURNAL_FILE, name, gitrepo.head(workspace.root), details)
            ACTIVE[workspace.root] = journal
            before = workspace.state_dir / BEFORE_FILE
            for leftover in (before, before.with_name(before.name + ".wal")):  # a copy a crash cut short
                leftover.unlink(missing_ok=True)
            if keep_store_copy and workspace.store.supports_snapshots:  # a shared server store is not copied per operation
                if store_problem(workspace) is not None:  # a damaged store is replaced before anything copies it
                    recover_store(workspace)
                workspace.store.copy_to(before)
            journal.save()
            try:
                yield journal
            except BaseException:
                _roll_back(workspace, journal)
                _finish(workspace)
                raise
            head = gitrepo.head(workspace.root)
            if head and head != journal.head:
                take_snapshot(workspace, head)
            _finish(workspace)
        finally:
            ACTIVE.pop(workspace.root, None)


def open_workspace(path: Path | str | None = None, *, damaged_ok: bool = False) -> Workspace:
    """Open a workspace for use, as the CLI and notebooks do: the named one (or the one
    found from here), its store checked, then an interrupted operation finished or undone.

    A damaged store, or a missing one while the wiki has pages, raises
    StoreDamagedError naming the fix, unless damaged_ok (``status``, ``restore``
    and ``reindex`` handle it themselves; ``snapshots.store_problem`` says why).
    """
    workspace = Workspace.open(path) if path is not None else Workspace.find()
    problem = store_problem(workspace)
    if problem is not None:
        if damaged_ok:
            return workspace
        raise StoreDamagedError(problem)
    recover(workspace)
    return workspace


def recover(workspace: Workspace) -> str | None:
    """Finish or undo an operation a crash interrupted; returns what was done, or None.

    The CLI and the notebooks call this when they open a workspace (opening
    one changes nothing by itself). What was done is also kept in RECOVERED
    (root -> message) for them to show, and logged.
    """
    if workspace.root in ACTIVE or not (workspace.state_dir / JOURNAL_FILE).exists():
        return None  # none, or this process's own operation is running
    with workspace.write_lock():
        message = _recover_locked(workspace)
    if message:
        RECOVERED[workspace.root] = message
        logging.getLogger("llmwiki").info("%s: %s", workspace.root, message)  # the CLI and notebooks show RECOVERED themselves
    return message


def _recover_locked(workspace: Workspace) -> str | None:
    path = workspace.state_dir / JOURNAL_FILE
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        journal = Journal(path, raw["operation"], raw.get("head"), raw.get("details", {}), [tuple(move) for move in raw.get("moves", [])], list(raw.get("paths", [])), dict(raw.get("kept", {})))
    except (OSError, ValueError, KeyError, TypeError):
        journal = Journal(path, "unknown", None)
    lock = workspace.root / ".git" / "index.lock"
    if lock.exists():  # git was killed too; operations are serialised by the write lock we hold, so it is stale
        lock.unlink()
    head = gitrepo.head(workspace.root)
    if journal.operation == "restore" and head is not None and journal.details.get("target"):
        restore_to(workspace, journal.details["target"])
        _finish(workspace)
        return f"an interrupted restore to {journal.details['target'][:10]} was carried out again"
    if head is not None and journal.head is not None and head != journal.head:
        take_snapshot(workspace, head)
        _finish(workspace)
        return f"an interrupted {journal.operation} had already committed; its snapshot was taken"
    how = _roll_back(workspace, journal)
    _finish(workspace)
    hint = "; its sources are ingested, and the next `llmwiki ingest` writes their pages" if journal.details.get("sources") else ""
    return f"an interrupted {journal.operation} was rolled back ({how}){hint}"


def _roll_back(workspace: Workspace, journal: Journal) -> str:
    """Undo an operation that did not commit: moved files back, written files as they were, the store to match."""
    root = workspace.root
    if journal.operation == "unknown":  # the journal itself was damaged: trust the files
        rebuild_store(workspace)
        return "store rebuilt from the files"
    if journal.operation == "restore" and journal.head:  # every tracked file back as it was at the start
        gitrepo.restore_tree(root, journal.head)
    for source, target in reversed(journal.moves):
        if (root / target).exists() and not (root / source).exists():
            (root / source).parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / target, root / source)
    for path in journal.paths:
        if path in journal.kept:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            os.replace(workspace.state_dir / KEPT_DIR / journal.kept[path], root / path)
        else:
            (root / path).unlink(missing_ok=True)  # it did not exist before
    gitrepo.unstage(root, [*journal.paths, *(path for move in journal.moves for path in move)])
    before = workspace.state_dir / BEFORE_FILE
    if before.is_file():
        try:
            load_snapshot(workspace, before)
            return "files as they were, the store from the copy taken before it started"
        except StoreDamagedError:  # the copy (or the store it loads into) is unreadable: replace the store as `llmwiki restore` would
            recovery = recover_store(workspace)
            return f"files as they were; the copy taken before it started was unreadable, so {recovery.summary()[0].lower()}{recovery.summary()[1:]}"
    _reindex(workspace, journal.paths)
    return "pages as they were, re-indexed"


def _reindex(workspace: Workspace, paths) -> None:
    """Bring the store in line with these wiki pages as they are on disk."""
    pages = {path: ((workspace.root / path).read_text(encoding="utf-8") if (workspace.root / path).is_file() else None) for path in paths if path.startswith("wiki/")}
    with workspace.store.session():
        index_pages(workspace, pages)


def _finish(workspace: Workspace) -> None:
    (workspace.state_dir / JOURNAL_FILE).unlink(missing_ok=True)  # first: without it, what follows is only clean-up
    shutil.rmtree(workspace.state_dir / KEPT_DIR, ignore_errors=True)
    (workspace.state_dir / BEFORE_FILE).unlink(missing_ok=True)

