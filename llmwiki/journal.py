"""Crash safety for maintenance operations: a journal, and recovery at the next command.

A maintenance operation (withdraw, edit, delete, lint repairs, restore) runs
inside ``operation()``: under the workspace's write lock it writes
``.llmwiki/journal.json`` (what runs, the commit it started from, files it
moved) and a copy of the store as it was. It ends with a git commit, then the
journal is removed. If the process dies in between (kill -9, power loss), the
journal stays, and ``recover()`` — run when a workspace is opened — puts the
workspace back in a state where files and store agree:

- the operation's commit landed: it had finished; only the snapshot is taken;
- it did not: files go back to the last commit, moved files move back, and
  the store is loaded from the copy taken at the start (a restore is instead
  carried out again: it is idempotent);
- a workspace without git history: the store is rebuilt from the files.

An operation that fails with an exception is rolled back the same way at once.
"""

from __future__ import annotations

import json
import logging
import os
import signal
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

JOURNAL_FILE = "journal.json"
BEFORE_FILE = "journal-before.duckdb"
ACTIVE: set[Path] = set()  # workspaces with an operation running in this process
RECOVERED: dict[Path, str] = {}  # workspace root -> what recovery did, in this process


def failpoint(name: str) -> None:
    """Die here, as kill -9 would, when LLMWIKI_FAILPOINT names this point (crash tests)."""
    if os.environ.get("LLMWIKI_FAILPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


@dataclass
class Journal:
    path: Path
    operation: str
    head: str | None
    details: dict = field(default_factory=dict)
    moves: list[tuple[str, str]] = field(default_factory=list)

    def save(self) -> None:
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps({"operation": self.operation, "head": self.head, "details": self.details, "moves": self.moves}), encoding="utf-8")
        os.replace(partial, self.path)

    def record_move(self, source: str, target: str) -> None:
        """Note a file move before it happens, so a rollback can move it back."""
        self.moves.append((source, target))
        self.save()


@contextmanager
def operation(workspace, name: str, *, keep_store_copy: bool = True, **details):
    """Run one maintenance operation under the write lock with a journal; see the module docstring.

    The caller commits at the end; the snapshot for that commit is taken here.
    """
    from llmwiki import history
    from llmwiki.snapshots import copy_store, take_snapshot

    with workspace.write_lock():
        _recover_locked(workspace)
        ACTIVE.add(workspace.root)
        try:
            journal = Journal(workspace.state_dir / JOURNAL_FILE, name, history.head(workspace.root), details)
            before = workspace.state_dir / BEFORE_FILE
            before.unlink(missing_ok=True)
            if keep_store_copy:
                copy_store(workspace, before)
            journal.save()
            try:
                yield journal
            except BaseException:
                _roll_back(workspace, journal)
                _finish(workspace)
                raise
            head = history.head(workspace.root)
            if head and head != journal.head:
                take_snapshot(workspace, head)
            _finish(workspace)
        finally:
            ACTIVE.discard(workspace.root)


def recover(workspace) -> str | None:
    """Finish or undo an operation a crash interrupted; returns what was done, or None.

    What was done is also kept in RECOVERED (root -> message) for the CLI and
    notebooks to show, and logged.
    """
    if workspace.root in ACTIVE or not (workspace.state_dir / JOURNAL_FILE).exists():
        return None  # none, or this process's own operation is running
    with workspace.write_lock():
        message = _recover_locked(workspace)
    if message:
        RECOVERED[workspace.root] = message
        logging.getLogger("llmwiki").warning("%s: %s", workspace.root, message)
    return message


def _recover_locked(workspace) -> str | None:
    from llmwiki import history
    from llmwiki.snapshots import take_snapshot

    path = workspace.state_dir / JOURNAL_FILE
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        journal = Journal(path, raw["operation"], raw.get("head"), raw.get("details", {}), [tuple(move) for move in raw.get("moves", [])])
    except (OSError, ValueError, KeyError, TypeError):
        journal = Journal(path, "unknown", None)
    lock = workspace.root / ".git" / "index.lock"
    if lock.exists():  # git was killed too; operations are serialised by the write lock we hold, so it is stale
        lock.unlink()
    head = history.head(workspace.root)
    if journal.operation == "restore" and head is not None and journal.details.get("target"):
        from llmwiki.maintain import _restore

        _restore(workspace, journal.details["target"])
        _finish(workspace)
        return f"an interrupted restore to {journal.details['target'][:10]} was carried out again"
    if head is not None and journal.head is not None and head != journal.head:
        take_snapshot(workspace, head)
        _finish(workspace)
        return f"an interrupted {journal.operation} had already committed; its snapshot was taken"
    how = _roll_back(workspace, journal)
    _finish(workspace)
    return f"an interrupted {journal.operation} was rolled back ({how})"


def _roll_back(workspace, journal: Journal) -> str:
    from llmwiki import history
    from llmwiki.snapshots import load_snapshot, rebuild_store

    root = workspace.root
    for source, target in reversed(journal.moves):
        if (root / target).exists() and not (root / source).exists():
            (root / source).parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / target, root / source)
    before = workspace.state_dir / BEFORE_FILE
    if journal.head is not None and history.head(root) == journal.head:
        history.restore_tree(root, journal.head)
        if before.is_file():
            load_snapshot(workspace, before)
            return "files from the last commit, store from the copy taken before it started"
    rebuild_store(workspace)
    return "store rebuilt from the files"


def _finish(workspace) -> None:
    (workspace.state_dir / JOURNAL_FILE).unlink(missing_ok=True)
    (workspace.state_dir / BEFORE_FILE).unlink(missing_ok=True)

