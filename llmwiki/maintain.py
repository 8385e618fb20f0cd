"""Wiki maintenance: withdrawing a source, with the derivation cascade.

``withdraw`` follows derivation to a fixpoint: a page is derived from the
sources (and pages) listed in its frontmatter ``sources``. When a source is
withdrawn,

- its chunks, postings, embeddings and references leave the store;
- a page whose every source is now gone is deleted (its summary, a saved
  answer resting only on deleted pages, ...), and so on until nothing changes;
- a page with other sources left is kept but marked stale in the store
  (``stale_since`` and the reason), stays searchable with a stale label, and
  the report lists its sentences whose best support (from a stored
  verification) came from the withdrawn source.

The file itself moves to ``withdrawn/`` (so a later scan of sources/ does
not bring it back) or, with ``delete_file``, is deleted. Index, overview and
log are rewritten and everything is one git commit.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from llmwiki.errors import LlmwikiError
from llmwiki.pages import split_frontmatter


class MaintenanceError(LlmwikiError):
    """A maintenance operation was refused; nothing was changed."""


@dataclass
class WithdrawalReport:
    source: str
    deleted_pages: list[str] = field(default_factory=list)
    stale_pages: list[str] = field(default_factory=list)
    affected_sentences: dict[str, list[str]] = field(default_factory=dict)
    file_action: str = ""
    commit: str | None = None

    def summary(self) -> str:
        lines = [f"Withdrew {self.source} ({self.file_action})."]
        lines += [f"deleted {page} (derived only from withdrawn material)" for page in self.deleted_pages]
        for page in self.stale_pages:
            sentences = self.affected_sentences.get(page, [])
            lines.append(f"stale {page} (other sources remain; {len(sentences)} verified sentence(s) rested on {self.source})")
            lines += [f"    - {sentence}" for sentence in sentences]
        return "\n".join(lines)


def _page_sources(root: Path) -> dict[str, list[str]]:
    """Every wiki page -> the paths it is derived from (frontmatter sources, 'chat' left out)."""
    derived = {}
    for folder in ("wiki/summaries", "wiki/concepts", "wiki/answers"):
        for path in sorted((root / folder).glob("*.md")):
            meta, _ = split_frontmatter(path.read_text(encoding="utf-8"))
            derived[path.relative_to(root).as_posix()] = [
                entry["path"] for entry in meta.get("sources", []) if isinstance(entry, dict) and entry.get("path") not in (None, "chat")
            ]
    return derived


def plan_withdrawal(workspace, source: str) -> tuple[list[str], list[str]]:
    """(pages to delete, pages to mark stale) if source were withdrawn; changes nothing."""
    relative = workspace.relative(workspace.root / source) if not Path(source).is_absolute() else workspace.relative(source)
    document = workspace.store.document_by_path(relative)
    if document is None:
        raise MaintenanceError(f"{relative}: no such document in the store. `llmwiki status` lists them.")
    if document.kind != "source":
        raise MaintenanceError(f"{relative}: is a wiki page, not a source. Withdraw the source it was derived from, or delete the page.")
    derived = _page_sources(workspace.root)
    removed = {relative}
    deleted: list[str] = []
    changed = True
    while changed:  # fixpoint: pages resting only on removed material go too
        changed = False
        for page, sources in derived.items():
            if page in removed or not sources:
                continue
            if all(path in removed for path in sources):
                removed.add(page)
                deleted.append(page)
                changed = True
    stale = [page for page, sources in derived.items() if page not in removed and any(path in removed for path in sources)]
    return deleted, stale


def withdraw(workspace, source: str, *, delete_file: bool = False) -> WithdrawalReport:
    """Withdraw a source and follow its derivations; see the module docstring."""
    from llmwiki import history
    from llmwiki.generate import publish
    from llmwiki.verify import load_verification

    with workspace.write_lock():
        relative = workspace.relative(workspace.root / source) if not Path(source).is_absolute() else workspace.relative(source)
        deleted, stale = plan_withdrawal(workspace, relative)
        report = WithdrawalReport(source=relative, deleted_pages=deleted, stale_pages=stale)
        for page in stale:
            stored = load_verification(workspace, page)
            if stored is not None:
                report.affected_sentences[page] = [s.sentence for s in stored.sentences if s.excerpt_path == relative]
        store = workspace.store
        reason = f"source {relative} was withdrawn"
        with store.session():
            store.remove_document(relative)
            for page in stale:
                document = store.document_by_path(page)
                if document is not None:
                    store.mark_stale(document.id, reason)
        source_file = workspace.root / relative
        moved_to = None
        if source_file.exists():
            if delete_file:
                source_file.unlink()
                report.file_action = "file deleted"
            else:
                moved_to = workspace.root / "withdrawn" / Path(relative).relative_to("sources") if relative.startswith("sources/") else workspace.root / "withdrawn" / Path(relative).name
                moved_to.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(source_file), str(moved_to))
                report.file_action = f"file moved to {moved_to.relative_to(workspace.root).as_posix()}"
        else:
            report.file_action = "file already gone"
        notes = [f"stale {page}: {reason}" for page in stale]
        _, report.commit = publish(workspace, {page: None for page in deleted}, operation="withdraw", subject=relative, deleted=deleted, notes=notes,
                                   also_commit=[relative] + ([moved_to.relative_to(workspace.root).as_posix()] if moved_to else []))
        if report.commit is None and history.is_repository(workspace.root):
            report.commit = history.commit(workspace.root, f"withdraw: {relative}", [relative])
    return report


class EditConflictError(MaintenanceError):
    """The page changed since the version the edit was based on."""


def edit_page(workspace, page_path: str, body: str, *, expected_version: int) -> tuple[int, str | None]:
    """Replace a page's body (frontmatter kept), refusing an edit based on an old version.

    Returns (new version, commit). The page is re-indexed, its references
    rebuilt, and its stored verification dropped, through the same write path
    as generation; index and log are updated.
    """
    import difflib
    from datetime import datetime

    from llmwiki.generate import publish
    from llmwiki.pages import render_page

    with workspace.write_lock():
        relative = workspace.relative(workspace.root / page_path)
        path = workspace.root / relative
        document = workspace.store.document_by_path(relative)
        if not relative.startswith("wiki/") or document is None or not path.is_file():
            raise MaintenanceError(f"{relative}: no such wiki page (it may have been deleted meanwhile). Reload the page list and start from the current page.")
        meta, current = split_frontmatter(path.read_text(encoding="utf-8"))
        if document.version != expected_version:
            changes = "".join(difflib.unified_diff(current.splitlines(keepends=True), body.splitlines(keepends=True), "current", "your edit", n=1))
            raise EditConflictError(
                f"{relative}: changed since version {expected_version} (now version {document.version}); your edit was not saved. "
                f"Start again from the current page. Differences between the current page and your edit:\n{changes}"
            )
        meta = dict(meta, updated=datetime.now().isoformat(timespec="seconds"), edited=True)
        _, commit = publish(workspace, {relative: render_page(meta, body)}, operation="edit", subject=relative)
        return workspace.store.document_by_path(relative).version, commit


def stale_pages(workspace) -> list[tuple[str, str | None]]:
    """(page, reason) of every page marked stale."""
    return [(document.path, workspace.store.stale_reason(document.id)) for document in workspace.store.documents(kind="wiki") if document.stale_since is not None]


def delete_stale(workspace) -> tuple[list[str], str | None]:
    """Delete every stale page (files, store rows, index entries); returns (pages, commit)."""
    from llmwiki.generate import publish

    with workspace.write_lock():
        pages = [page for page, _ in stale_pages(workspace)]
        if not pages:
            return [], None
        _, commit = publish(workspace, {page: None for page in pages}, operation="delete stale pages", subject=f"{len(pages)} page(s)", deleted=pages)
        return pages, commit
