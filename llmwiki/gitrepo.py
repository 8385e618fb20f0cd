"""The workspace's history: every write is a git commit in the workspace.

A workspace made by ``llmwiki init`` is its own git repository; one without
a ``.git`` folder (the sample inside this project's repository, say) is
written without commits. Git is called as a subprocess with a fixed author,
so commits work on machines with no git identity configured.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from llmwiki.errors import LlmwikiError

_IDENTITY = ["-c", "user.name=llmwiki", "-c", "user.email=llmwiki@localhost", "-c", "commit.gpgsign=false"]
_IGNORED = ".llmwiki/\n"


class HistoryError(LlmwikiError):
    """A git command in the workspace failed."""


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    result = subprocess.run(["git", *_IDENTITY, *args], cwd=root, capture_output=True, text=True, input=stdin)
    if result.returncode != 0:
        msg = f"{root}: git {' '.join(args[:2])} failed: {result.stderr.strip() or result.stdout.strip()}. Check the workspace's git repository (git status)."
        raise HistoryError(msg)
    return result.stdout


def is_repository(root: Path) -> bool:
    """Whether the workspace keeps history (has its own .git)."""
    return (root / ".git").exists()


def init_repository(root: Path) -> bool:
    """Make the workspace a git repository with a first commit; False when git is missing."""
    if is_repository(root):
        return True
    if shutil.which("git") is None:
        return False
    _git(root, "init", "--quiet")
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_IGNORED, encoding="utf-8")
    _git(root, "add", "--all")
    _git(root, "commit", "--quiet", "--allow-empty", "-m", "init: llmwiki workspace")
    return True


def commit(root: Path, message: str, paths: Iterable[str]) -> str | None:
    """Commit the given paths (added, changed or deleted); returns the commit id, or None."""
    if not is_repository(root):
        return None
    paths = sorted(set(paths))
    indexed = set(_batched(root, ["ls-files", "--"], paths).splitlines())
    # in HEAD too: a deletion already staged (as a restore leaves it) is no longer in the index
    committed = set(_batched(root, ["ls-tree", "-r", "--name-only", "HEAD", "--"], paths).splitlines()) if head(root) else set()
    paths = [path for path in paths if (root / path).exists() or path in indexed | committed]  # a file never committed and now gone has nothing to record
    if not paths:
        return None
    staged = [path for path in paths if (root / path).exists() or path in indexed]
    if staged:  # thousands of paths go on stdin: a command line has a length limit ("Argument list too long")
        _git(root, "add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul", stdin="\0".join(staged))
    if not _batched(root, ["status", "--porcelain", "--"], paths).strip():
        return None
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as written:  # a message has a length limit as an argument too
        written.write(message)
    try:
        _git(root, "commit", "--quiet", "--file", written.name, "--pathspec-from-file=-", "--pathspec-file-nul", stdin="\0".join(paths))
    finally:
        Path(written.name).unlink(missing_ok=True)
    return _git(root, "rev-parse", "HEAD").strip()


def _batched(root: Path, command: list[str], paths: list[str], *, size: int = 500) -> str:
    """A read-only git command over many paths, a few hundred at a time (its output joined)."""
    return "".join(_git(root, *command, *paths[start:start + size]) for start in range(0, len(paths), size))


def log(root: Path, *, path: str | None = None, limit: int = 50) -> list[tuple[str, str, str]]:
    """(commit id, ISO date, subject) of recent commits, newest first."""
    if not is_repository(root):
        return []
    arguments = ["log", f"-{limit}", "--format=%H%x09%aI%x09%s"]
    if path:
        arguments += ["--", path]
    return [tuple(line.split("\t", 2)) for line in _git(root, *arguments).splitlines() if line]


def head(root: Path) -> str | None:
    """The current commit id, or None without history."""
    if not is_repository(root):
        return None
    return _git(root, "rev-parse", "HEAD").strip()


def resolve(root: Path, revision: str) -> str:
    """A full commit id for a revision (id, prefix, HEAD~2, ...); HistoryError names the fix when unknown.

    A revision by date or reflog entry ("HEAD@{10 years ago}", "main@{2}") is refused: git resolves a date before
    the first commit to the first commit, so a mistyped date would quietly restore an empty workspace."""
    if "@{" in revision:
        raise HistoryError(f"{revision}: a revision by date or reflog entry is not restored (git may read it as a commit you did not mean). "
                           "Name the commit: `llmwiki history` lists them with their dates.")
    result = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], cwd=root, capture_output=True, text=True)
    if result.returncode != 0 or not revision.strip() or revision.startswith("-"):
        raise HistoryError(f"{root}: no revision {revision!r} in the workspace's history. `llmwiki history` lists the commits.")
    return result.stdout.strip()


def restore_tree(root: Path, commit: str) -> None:
    """Make every tracked file as it was at commit (files added since are removed); changed_since_head lists what moved."""
    _git(root, "restore", f"--source={commit}", "--staged", "--worktree", "--", ".")


def changed_since_head(root: Path) -> list[str]:
    """Tracked paths whose working copy differs from the last commit."""
    return [line for line in _git(root, "diff", "--name-only", "--no-renames", "HEAD", "--").splitlines() if line]


def statuses_since_head(root: Path) -> dict[str, str]:
    """Tracked paths that differ from the last commit, each with how: "added", "deleted" or "modified"."""
    names = {"A": "added", "D": "deleted"}
    found = {}
    for line in _git(root, "diff", "--name-status", "--no-renames", "HEAD", "--").splitlines():
        status, _, path = line.partition("\t")
        if path:
            found[path] = names.get(status[:1], "modified")
    return found


def unstage(root: Path, paths: Iterable[str]) -> None:
    """Make the index agree with HEAD for these paths, leaving the files as they are."""
    paths = sorted(set(paths))
    if paths and is_repository(root):
        _git(root, "reset", "--quiet", "HEAD", "--", *paths)
