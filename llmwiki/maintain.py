"""Wiki maintenance: withdrawing a source (with the derivation cascade), safe
edits and deletion, history and restore. Each write operation runs under the
journal of ``llmwiki.publish.journal``, so a crash midway is finished or rolled back.

``withdraw`` follows derivation to a fixpoint: a page is derived from the
sources (and pages) listed in its frontmatter ``sources``. When a source is
withdrawn,

- its chunks, postings, embeddings and references leave the store;
- a page whose every source is now gone is deleted (its summary, a saved
  answer resting only on deleted pages, ...), and so on until nothing changes;
- a page with other sources left whose part from the withdrawn source is a
  section of its own (a concept page gathers one section per source) loses
  that section and the source in its frontmatter, and is otherwise kept as
  it was; every remaining page loses its links to deleted pages (the link
  text stays), so a withdrawal never leaves a broken link;
- any other page with other sources left is kept but marked stale in the store
  (``stale_since`` and the reason), stays searchable with a stale label, and
  the report lists its sentences whose best support (from a stored
  verification) came from the withdrawn source.

The file itself moves to ``withdrawn/`` (so a later scan of sources/ does
not bring it back) or, with ``delete_file``, is deleted. Index, overview and
log are rewritten and everything is one git commit.
"""

from __future__ import annotations

import difflib
import posixpath
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from llmwiki import gitrepo
from llmwiki.errors import LlmwikiError
from llmwiki.failpoints import failpoint
from llmwiki.ingest.sources import content_hash
from llmwiki.publish.journal import operation
from llmwiki.pages import render_page, source_paths, split_frontmatter
from llmwiki.publish.snapshots import RestoreReport, StoreRecovery, recover_store, restore_to, snapshots, store_problem
from llmwiki.verify.page import load_verification
from llmwiki.publish.wiki import publish
from llmwiki.workspace import COLLECTION_PAGES, Workspace


class MaintenanceError(LlmwikiError):
    """A maintenance operation was refused; nothing was changed."""


@dataclass
class WithdrawalReport:
    source: str
    deleted_pages: list[str] = field(default_factory=list)
    stale_pages: list[str] = field(default_factory=list)
    rewritten_pages: list[str] = field(default_factory=list)  # kept without the withdrawn source's section, or without links to deleted pages
    affected_sentences: dict[str, list[str]] = field(default_factory=dict)
    file_action: str = ""
    commit: str | None = None

    def summary(self) -> str:
        lines = [f"Withdrew {self.source} ({self.file_action})."]
        lines += [f"deleted {page} (derived only from withdrawn material)" for page in self.deleted_pages]
        lines += [f"rewrote {page} (without what came from {self.source}, or its links to deleted pages)" for page in self.rewritten_pages]
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
            derived[path.relative_to(root).as_posix()] = source_paths(meta)
    return derived


_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")


def _without_withdrawn(workspace: Workspace, page: str, text: str, removed: set[str], deleted: set[str]) -> tuple[str, bool]:
    """(the page's text without the sections of removed sources and without links to deleted pages, whether what
    came from removed sources is gone from it entirely)."""
    from llmwiki.generate import join_sections, split_sections, with_citations

    meta, body = split_frontmatter(text)
    preamble, sections = split_sections(body)
    clean = not (set(source_paths(meta)) & removed)
    changed = False
    if sections and set(sections) & removed:
        body = join_sections(preamble, {path: section for path, section in sections.items() if path not in removed})
        meta = dict(meta, sources=[entry for entry in meta.get("sources", []) if not (isinstance(entry, dict) and entry.get("path") in removed)])
        clean = changed = True
    folder = posixpath.dirname(page)

    def unlink(match: re.Match) -> str:
        target = posixpath.normpath(posixpath.join(folder, match.group(2).split("#")[0]))
        return match.group(1) if target in deleted else match.group(0)

    unlinked = _LINK.sub(unlink, body)
    if not changed and unlinked == body:
        return text, clean
    return with_citations(workspace.store, meta, unlinked, page), clean


@dataclass(frozen=True)
class WithdrawalPlan:
    """What withdrawing a source does, page by page: what `withdraw --dry-run` prints and `withdraw` carries out."""

    source: str
    deleted: tuple[str, ...]  # pages resting only on withdrawn material
    rewritten: tuple[str, ...]  # pages kept without the withdrawn source's section, or without links to deleted pages
    stale: tuple[str, ...]  # pages kept as they are and marked stale: part of what they say came from the source

    def lines(self) -> list[str]:
        """One line per page, saying what the run will do to it."""
        return ([f"would delete {page}" for page in self.deleted] + [f"would rewrite {page} (its part from {self.source} or its links to deleted pages removed)" for page in self.rewritten]
                + [f"would mark stale {page}" for page in self.stale])


def plan_withdrawal(workspace: Workspace, source: str) -> WithdrawalPlan:
    """What withdrawing source would do to each page (``WithdrawalPlan``); changes nothing."""
    relative = workspace.relative(workspace.root / source if not Path(source).is_absolute() else source, fix=workspace.SOURCE_FIX)
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
    rewritten = []
    for page in sorted(derived):
        if page in removed:
            continue
        original = (workspace.root / page).read_text(encoding="utf-8")
        text, clean = _without_withdrawn(workspace, page, original, removed, set(deleted))
        if text != original:
            rewritten.append(page)
        if clean and page in stale:
            stale.remove(page)
    return WithdrawalPlan(source=relative, deleted=tuple(deleted), rewritten=tuple(rewritten), stale=tuple(stale))


def withdraw(workspace: Workspace, source: str, *, delete_file: bool = False) -> WithdrawalReport:
    """Withdraw a source and follow its derivations; see the module docstring."""
    relative = workspace.relative(workspace.root / source if not Path(source).is_absolute() else source, fix=workspace.SOURCE_FIX)
    plan_withdrawal(workspace, relative)  # refuses an unknown or non-source id before anything is touched
    with operation(workspace, "withdraw", source=relative) as journal:
        plan = plan_withdrawal(workspace, relative)
        deleted, stale = list(plan.deleted), list(plan.stale)
        report = WithdrawalReport(source=relative, deleted_pages=deleted, stale_pages=stale)
        removed = {relative, *deleted}
        texts: dict[str, str | None] = {page: None for page in deleted}
        originals = {page: (workspace.root / page).read_text(encoding="utf-8") for page in _page_sources(workspace.root) if page not in removed}
        for page in stale:
            stored = load_verification(workspace, page)
            if stored is not None:
                report.affected_sentences[page] = [s.sentence for s in stored.sentences if s.excerpt_path == relative]
        store = workspace.store
        reason = f"source {relative} was withdrawn"
        with store.session(), store.transaction():  # the cascade and the stale marks: one transaction
            store.remove_document(relative)
            for page, original in originals.items():
                if page in plan.rewritten:  # written again now that the source's chunks are gone from the store
                    texts[page], _ = _without_withdrawn(workspace, page, original, removed, set(deleted))
                    report.rewritten_pages.append(page)
            for page in stale:
                document = store.document_by_path(page)
                if document is not None:
                    store.mark_stale(document.id, reason)
        failpoint("withdraw:store")
        source_file = workspace.root / relative
        moved_to = None
        if source_file.exists():
            if delete_file:
                journal.record_paths(workspace.root, [relative])
                source_file.unlink()
                report.file_action = "file deleted"
            else:
                moved_to = workspace.root / "withdrawn" / Path(relative).relative_to("sources") if relative.startswith("sources/") else workspace.root / "withdrawn" / Path(relative).name
                journal.record_move(relative, moved_to.relative_to(workspace.root).as_posix())
                moved_to.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(source_file), str(moved_to))
                report.file_action = f"file moved to {moved_to.relative_to(workspace.root).as_posix()}"
        else:
            report.file_action = "file already gone"
        failpoint("withdraw:files")
        notes = [f"stale {page}: {reason}" for page in stale]
        _, report.commit = publish(workspace, texts, operation="withdraw", subject=relative, deleted=deleted, notes=notes,
                                   also_commit=[relative] + ([moved_to.relative_to(workspace.root).as_posix()] if moved_to else []))
        if report.commit is None and gitrepo.is_repository(workspace.root):
            report.commit = gitrepo.commit(workspace.root, f"withdraw: {relative}", [relative])
        failpoint("withdraw:commit")
    return report


class EditConflictError(MaintenanceError):
    """The page changed since the version the edit was based on."""


def _existing_page(workspace: Workspace, page_path: str):
    relative = workspace.relative(workspace.root / page_path, fix=workspace.PAGE_FIX)
    document = workspace.store.document_by_path(relative)
    if not relative.startswith("wiki/") or relative in COLLECTION_PAGES or document is None or not (workspace.root / relative).is_file():
        raise MaintenanceError(f"{relative}: no such wiki page (it may have been deleted meanwhile). Reload the page list and start from the current page.")
    return relative, document


def page_version(workspace: Workspace, page_path: str) -> int:
    """The version a later save_page must name as expected_version."""
    return _existing_page(workspace, page_path)[1].version


def save_page(workspace: Workspace, page_path: str, body: str, *, expected_version: int) -> tuple[int, str | None]:
    """Replace a page's body (frontmatter kept), refusing an edit based on an old version.

    Returns (new version, commit). The page is re-indexed, its references
    rebuilt, and its stored verification dropped, through the same write path
    as generation; index and log are updated.
    """
    if "\x00" in body:
        raise MaintenanceError(f"{page_path}: the new body contains NUL bytes. Remove them and save again.")
    with operation(workspace, "edit", page=page_path):
        relative, document = _existing_page(workspace, page_path)
        meta, current = split_frontmatter((workspace.root / relative).read_text(encoding="utf-8"))
        if document.version != expected_version:
            changes = "".join(difflib.unified_diff(current.splitlines(keepends=True), body.splitlines(keepends=True), "current", "your edit", n=1))
            raise EditConflictError(
                f"{relative}: changed since version {expected_version} (now version {document.version}); your edit was not saved. "
                f"Start again from the current page. Differences between the current page and your edit:\n{changes}"
            )
        meta = dict(meta, updated=datetime.now().isoformat(timespec="seconds"), edited=True)
        _, commit = publish(workspace, {relative: render_page(meta, body)}, operation="edit", subject=relative)
        return workspace.store.document_by_path(relative).version, commit


def delete_pages(workspace: Workspace, pages: list[str], *, operation_name: str = "delete pages") -> tuple[list[str], str | None]:
    """Delete wiki pages (files, store rows, index entries) in one commit; returns (pages, commit)."""
    relatives = [_existing_page(workspace, page)[0] for page in pages]
    if not relatives:
        return [], None
    with operation(workspace, operation_name, pages=relatives):
        _, commit = publish(workspace, {page: None for page in relatives}, operation=operation_name, subject=f"{len(relatives)} page(s)", deleted=relatives)
    return relatives, commit


def stale_pages(workspace: Workspace) -> list[tuple[str, str | None]]:
    """(page, reason) of every page marked stale."""
    return [(document.path, workspace.store.stale_reason(document.id)) for document in workspace.store.documents(kind="wiki") if document.stale_since is not None]


def delete_stale(workspace: Workspace) -> tuple[list[str], str | None]:
    """Delete every stale page (files, store rows, index entries); returns (pages, commit)."""
    return delete_pages(workspace, [page for page, _ in stale_pages(workspace)], operation_name="delete stale pages")


# -- history and restore -------------------------------------------------------

@dataclass(frozen=True)
class HistoryEntry:
    commit: str
    date: str
    subject: str
    snapshot: bool


def page_history(workspace: Workspace, page: str | None = None, *, limit: int = 50) -> list[HistoryEntry]:
    """Commits that changed the workspace (or one page), newest first, with whether a store snapshot is kept."""
    if not gitrepo.is_repository(workspace.root):
        raise MaintenanceError(f"{workspace.root}: keeps no history (not a git repository). Create workspaces with `llmwiki init` (without --no-git).")
    path = workspace.relative(workspace.root / page, fix=workspace.PAGE_FIX) if page else None
    kept = snapshots(workspace)
    return [HistoryEntry(commit, date, subject, commit in kept) for commit, date, subject in gitrepo.log(workspace.root, path=path, limit=limit)]


def restore(workspace: Workspace, revision: str) -> RestoreReport:
    """Bring files and store back to a commit, as a new forward commit; see RestoreReport."""
    if not gitrepo.is_repository(workspace.root):
        raise MaintenanceError(f"{workspace.root}: keeps no history (not a git repository), so there is nothing to restore.")
    target = gitrepo.resolve(workspace.root, revision)
    if not workspace.store.rebuilds_from_files:
        msg = (
            f"{workspace.root}: its store is a shared PostgreSQL database ({workspace.store.path}), which `llmwiki restore` does not roll back "
            "under the other workspaces. Restore the database from the server's backups; `git restore` brings this workspace's files back."
        )
        raise MaintenanceError(msg)
    recovery = recover_store(workspace) if store_problem(workspace) else None  # a damaged store is replaced first
    with operation(workspace, "restore", target=target):
        report = restore_to(workspace, target)
    if recovery is not None:
        report.store_recovery = recovery.summary()
    return report


def recover(workspace: Workspace) -> StoreRecovery | None:
    """Replace a damaged or missing store (latest usable snapshot of HEAD, else a rebuild); None when it is sound."""
    if store_problem(workspace) is None:
        return None
    with workspace.write_lock():
        return recover_store(workspace)


def consistency_problems(workspace: Workspace) -> list[str]:
    """Where files and store disagree (empty when they agree): what a crash must never leave behind."""
    root = workspace.root
    problems = []
    documents = {document.path: document for document in workspace.store.documents()}
    for path in sorted(workspace.wiki_dir.rglob("*.md")):
        relative = path.relative_to(root).as_posix()
        if relative in COLLECTION_PAGES:
            continue
        document = documents.get(relative)
        if document is None:
            problems.append(f"{relative}: a page file the store does not know")
        elif document.content_hash != content_hash(path.read_bytes()):
            problems.append(f"{relative}: the file differs from what the store indexed")
    for relative, document in documents.items():
        if not (root / relative).is_file() and (document.kind == "wiki" or document.status == "ready"):
            problems.append(f"{relative}: in the store but its file is gone")
    if gitrepo.is_repository(root):
        problems += [f"{path}: changed but not committed" for path in gitrepo.changed_since_head(root) if path.startswith("wiki/")]
    return problems


# -- moving the store to a PostgreSQL server -----------------------------------------


@dataclass(frozen=True)
class StoreMove:
    url: str
    counts: dict[str, int]
    kept: Path  # the embedded store, left where it was

    def summary(self) -> str:
        rows = ", ".join(f"{count} {table.replace('_', ' ')}" for table, count in self.counts.items())
        return (
            f"Moved the store to {self.url}: {rows} (every count checked).\n"
            f"wiki_config.toml now says [store] url = \"{self.url}\"; the embedded store stays at {self.kept} "
            "(delete it once you no longer need to go back: remove the url line to use it again)."
        )


def move_store(workspace: Workspace, url: str, *, on_table=None) -> StoreMove:
    """Copy the workspace's embedded store into an empty PostgreSQL database (documents, pages, chunks,
    references, verifications, embeddings; ids kept, so citations hold), check every count, and point
    wiki_config.toml at it. Nothing is written to the config unless every count agrees."""
    from llmwiki.config import CONFIG_FILENAME, StoreConfig, set_store_url
    from llmwiki.store import COPIED_TABLES, open_store

    try:
        StoreConfig(url=url)
    except ValueError as err:
        raise MaintenanceError(f"{url}: {err.errors()[0]['msg'].removeprefix('Value error, ')}.") from None
    source = workspace.store
    if source.searches_in_server:
        raise MaintenanceError(f"{workspace.root}: its store is already on a server ({source.path}).")
    target = open_store(path=None, url=url, lock_timeout_s=workspace.config.store.lock_timeout_s)
    with workspace.write_lock():
        expected = source.row_counts()
        copied = target.load_tables([(table, *source.table_rows(table)) for table in COPIED_TABLES], on_table=on_table)
        found = target.row_counts()
        wrong = {table: (expected[table], found[table]) for table in COPIED_TABLES if not expected[table] == copied[table] == found[table]}
        if wrong:
            target.clear()
            problems = ", ".join(f"{table}: {want} in the workspace, {got} on the server" for table, (want, got) in wrong.items())
            raise MaintenanceError(f"{url}: the copy does not match ({problems}); the server's copy was emptied and the workspace still uses its own store.")
        set_store_url(workspace.root / CONFIG_FILENAME, url)
        if gitrepo.is_repository(workspace.root):
            gitrepo.commit(workspace.root, f"store: moved to {url}", [CONFIG_FILENAME])
    return StoreMove(url, found, source.path)
