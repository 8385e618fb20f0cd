"""History, snapshots, restore, and crash safety (kill -9) of maintenance operations."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

from llmwiki import gitrepo as history
from llmwiki.publish.wiki import ingest_paths
from llmwiki.errors import LlmwikiError
from llmwiki.maintain import consistency_problems, page_history, page_version, restore, save_page, withdraw
from llmwiki.read.search import search
from llmwiki.publish.snapshots import snapshots
from llmwiki.workspace import Workspace





def store_state(workspace, *, exact: bool = True) -> dict:
    """What the store holds, in comparable form; exact adds what only a snapshot can bring back."""
    with workspace.store.connect() as conn:
        columns = "path, kind, status, content_hash" + (", version, stale_reason" if exact else "")
        state = {
            "documents": conn.execute(f"SELECT {columns} FROM documents ORDER BY path").fetchall(),
            "chunks": conn.execute("SELECT d.path, c.seq, c.text FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY 1, 2").fetchall(),
            "references": conn.execute(
                "SELECT a.path, b.path, r.kind FROM doc_references r JOIN documents a ON a.id = r.from_id JOIN documents b ON b.id = r.to_id ORDER BY 1, 2, 3"
            ).fetchall(),
            "postings": conn.execute("SELECT count(*) FROM chunk_terms").fetchone()[0],
        }
        if exact:
            state["verifications"] = conn.execute("SELECT count(*) FROM page_verifications").fetchone()[0]
    return state


def files(workspace) -> dict[str, bytes]:
    root = workspace.root
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file() and not {".git", ".llmwiki"} & set(path.relative_to(root).parts) and path.name != "log.md"
    }


def change_everything(workspace) -> None:
    """Withdraw a source (a page deleted, one stale), then edit the other summary."""
    withdraw(workspace, "sources/a.md")
    page = "wiki/summaries/b.md"
    save_page(workspace, page, "# Coast survey\n\nSurveyors counted otters in 1999.\n", expected_version=page_version(workspace, page))


def test_commits_keep_store_snapshots_pruned_to_the_configured_number(reef):
    head = history.head(reef.root)
    assert head in snapshots(reef)  # the ingest's commit has its snapshot
    entries = page_history(reef)
    assert entries[0].commit == head and entries[0].snapshot
    assert [entry.subject for entry in page_history(reef, "wiki/summaries/a.md")][-1].startswith("ingest")
    config = reef.root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("keep_snapshots = 10", "keep_snapshots = 2"), encoding="utf-8")
    workspace = Workspace.open(reef.root)
    for year in (1999, 2000, 2001):
        page = "wiki/summaries/b.md"
        save_page(workspace, page, f"# Coast survey\n\nSurveyors counted otters in {year}.\n", expected_version=page_version(workspace, page))
    kept = snapshots(workspace)
    assert len(kept) == 2 and history.head(workspace.root) in kept and head not in kept


def test_restore_from_a_snapshot_brings_back_files_and_store_exactly(reef):
    workspace = reef
    before_files, before_store, revision = files(workspace), store_state(workspace), history.head(workspace.root)
    change_everything(workspace)
    (workspace.sources_dir / "c.md").write_text("# Tides\n\nThe tide turns twice a day at the reef.\n", encoding="utf-8")
    ingest_paths(workspace, [workspace.sources_dir / "c.md"])  # a source that came after the revision restored
    assert store_state(workspace) != before_store and files(workspace) != before_files  # the change was real
    assert search(workspace, "divers spring", scope="sources").matched_count == 0

    report = restore(workspace, revision[:8])

    assert report.method == "snapshot" and report.commit
    # It says which sources it removed or brought back, and how to undo it.
    assert report.sources_returned == ["sources/a.md"] and report.sources_removed == ["sources/c.md"]
    assert "source brought back: sources/a.md" in report.summary() and f"To undo it: llmwiki restore {report.left[:10]}" in report.summary()
    assert files(workspace) == before_files
    assert store_state(workspace) == before_store  # versions and stale marks too
    assert search(workspace, "divers spring", scope="sources").matched_count == 1
    assert consistency_problems(workspace) == []
    subjects = [entry.subject for entry in page_history(workspace)]
    assert subjects[0].startswith("restore: to") and any(subject.startswith("withdraw") for subject in subjects)  # forward, nothing rewritten
    assert "restore: to" in (workspace.root / "wiki/log.md").read_text(encoding="utf-8")


def test_restore_without_a_snapshot_rebuilds_the_store_from_files_and_says_what_is_lost(reef):
    workspace = reef
    before_files, before_store, revision = files(workspace), store_state(workspace, exact=False), history.head(workspace.root)
    change_everything(workspace)
    shutil.rmtree(workspace.state_dir / "snapshots")

    report = restore(workspace, revision)

    assert report.method == "rebuild" and "no snapshot" in report.why_rebuilt
    assert any("verification" in loss for loss in report.losses) and "lost:" in report.summary()
    assert files(workspace) == before_files
    assert store_state(workspace, exact=False) == before_store
    assert consistency_problems(workspace) == []
    assert workspace.store.document_by_path("wiki/concepts/kelp-forest.md").stale_since is None


def test_restoring_an_unknown_revision_changes_nothing(reef):
    before_files, before_store, head = files(reef), store_state(reef), history.head(reef.root)
    with pytest.raises(LlmwikiError, match="no revision 'no-such-rev'.*llmwiki history"):
        restore(reef, "no-such-rev")
    with pytest.raises(LlmwikiError, match="no revision"):
        restore(reef, "--all")
    assert history.head(reef.root) == head and files(reef) == before_files and store_state(reef) == before_store


def test_an_operation_that_fails_is_rolled_back(reef, monkeypatch):
    import llmwiki.publish.wiki

    before_files, before_store = files(reef), store_state(reef)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(llmwiki.publish.wiki, "write_files", broken)
    with pytest.raises(OSError):
        withdraw(reef, "sources/a.md")
    assert files(reef) == before_files and store_state(reef) == before_store  # the source moved back, store as before
    assert consistency_problems(reef) == []


def _llmwiki(root, *arguments, failpoint: str | None = None):
    environment = dict(os.environ, LLMWIKI_FAILPOINT=failpoint or "")
    return subprocess.run([sys.executable, "-m", "llmwiki", *arguments, "-w", str(root)], capture_output=True, text=True, env=environment, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("point", ["withdraw:store", "withdraw:files", "withdraw:commit"])
def test_kill_9_during_a_withdrawal_leaves_a_consistent_workspace(reef, point):
    before_files, before_store, head = files(reef), store_state(reef), history.head(reef.root)

    killed = _llmwiki(reef.root, "withdraw", "sources/a.md", failpoint=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    after = _llmwiki(reef.root, "status")
    assert after.returncode == 0, after.stderr
    assert "interrupted withdraw" in after.stderr
    workspace = Workspace.open(reef.root)
    assert consistency_problems(workspace) == []
    if point == "withdraw:commit":  # the commit had landed: the withdrawal stands
        assert history.head(workspace.root) != head
        assert not (workspace.root / "wiki/summaries/a.md").exists() and (workspace.root / "withdrawn/a.md").exists()
        assert workspace.store.document_by_path("sources/a.md") is None
        # The shared concept page was rewritten without a's section (b still feeds it), so it is not stale.
        shared = workspace.root / "wiki/concepts/kelp-forest.md"
        assert "summaries/a.md" not in shared.read_text(encoding="utf-8") and "summaries/b.md" in shared.read_text(encoding="utf-8")
        assert workspace.store.document_by_path("wiki/concepts/kelp-forest.md").stale_since is None
    else:  # it had not: everything is as before
        assert history.head(workspace.root) == head
        assert files(workspace) == before_files and store_state(workspace) == before_store
    again = _llmwiki(reef.root, "status")
    assert "interrupted" not in again.stderr  # recovered once, for good


@pytest.mark.slow
@pytest.mark.parametrize("point", ["restore:files", "restore:store"])
def test_kill_9_during_a_restore_is_carried_out_again(reef, point):
    before_files, before_store, revision = files(reef), store_state(reef), history.head(reef.root)
    change_everything(reef)

    killed = _llmwiki(reef.root, "restore", revision, failpoint=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    after = _llmwiki(reef.root, "status")
    assert after.returncode == 0 and "interrupted restore" in after.stderr, after.stderr
    workspace = Workspace.open(reef.root)
    assert files(workspace) == before_files and store_state(workspace) == before_store
    assert consistency_problems(workspace) == []
    assert page_history(workspace)[0].subject.startswith("restore: to")


def test_consistency_check_sees_a_page_edited_behind_the_stores_back(reef):
    assert consistency_problems(reef) == []  # control
    page = reef.root / "wiki/summaries/b.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nA hand edit.\n", encoding="utf-8")
    problems = consistency_problems(reef)
    assert any("differs from what the store indexed" in problem for problem in problems)
    assert any("not committed" in problem for problem in problems)


@pytest.mark.slow
def test_cli_history_edit_delete_and_restore(reef, tmp_path):
    root = reef.root
    body = tmp_path / "body.md"
    body.write_text("# Coast survey\n\nSurveyors counted otters in 1999.\n", encoding="utf-8")
    version = page_version(reef, "wiki/summaries/b.md")
    edited = _llmwiki(root, "edit", "wiki/summaries/b.md", "--body-file", str(body), "--expected-version", str(version))
    assert edited.returncode == 0 and f"version {version + 1}" in edited.stdout, edited.stderr
    stale = _llmwiki(root, "edit", "wiki/summaries/b.md", "--body-file", str(body), "--expected-version", str(version))
    assert stale.returncode == 1 and "changed since version" in stale.stderr
    deleted = _llmwiki(root, "delete", "wiki/summaries/b.md")
    assert deleted.returncode == 0 and not (root / "wiki/summaries/b.md").exists()
    gone = _llmwiki(root, "edit", "wiki/summaries/b.md", "--body-file", str(body))
    assert gone.returncode == 1 and "no such wiki page" in gone.stderr
    listed = _llmwiki(root, "history")
    assert listed.returncode == 0 and "delete pages" in listed.stdout and "edit: wiki/summaries/b.md" in listed.stdout
    restored = _llmwiki(root, "restore", "HEAD~2")
    assert restored.returncode == 0 and "snapshot" in restored.stdout, restored.stderr
    assert "otters returned" in (root / "wiki/summaries/b.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_recovery_clears_a_git_lock_left_by_a_killed_git(reef):
    before_files, head = files(reef), history.head(reef.root)
    killed = _llmwiki(reef.root, "withdraw", "sources/a.md", failpoint="withdraw:files")
    assert killed.returncode == -signal.SIGKILL
    (reef.root / ".git" / "index.lock").write_text("", encoding="utf-8")  # as a git killed mid-write leaves it
    after = _llmwiki(reef.root, "status")
    assert after.returncode == 0 and "rolled back" in after.stderr, after.stderr
    assert not (reef.root / ".git" / "index.lock").exists()
    assert history.head(reef.root) == head and files(reef) == before_files


@pytest.mark.slow
def test_kill_9_while_ingest_writes_pages_is_rolled_back_and_the_next_ingest_finishes(reef):
    before_files, before_store, head = files(reef), store_state(reef), history.head(reef.root)
    (reef.root / "sources/c.md").write_text("# Tide pools\n\nThe Tide Pool holds anemones. Children visit the Tide Pool at low tide.\n", encoding="utf-8")
    killed = _llmwiki(reef.root, "ingest", failpoint="publish:files")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (reef.root / "wiki/summaries/c.md").exists()  # the crash left a page behind, not yet indexed or committed

    after = _llmwiki(reef.root, "status")
    assert after.returncode == 0 and "interrupted ingest was rolled back" in after.stderr and "next `llmwiki ingest` writes their pages" in after.stderr, after.stderr
    workspace = Workspace.open(reef.root)
    assert consistency_problems(workspace) == [] and history.head(workspace.root) == head
    assert not (workspace.root / "wiki/summaries/c.md").exists()
    assert {path: data for path, data in files(workspace).items() if path != "sources/c.md"} == before_files
    assert store_state(workspace)["references"] == before_store["references"]
    finished = _llmwiki(reef.root, "ingest")
    assert finished.returncode == 0 and (workspace.root / "wiki/summaries/c.md").exists(), finished.stderr
    assert "Finished 1 source(s) an earlier run left without pages: sources/c.md" in finished.stdout
    assert consistency_problems(workspace) == [] and history.changed_since_head(workspace.root) == []


def test_a_rollback_keeps_an_uncommitted_hand_edit(reef, monkeypatch):
    import llmwiki.publish.wiki

    page = reef.root / "wiki/summaries/b.md"
    edited = page.read_text(encoding="utf-8") + "\nA hand edit, not committed.\n"
    page.write_text(edited, encoding="utf-8")
    original = llmwiki.publish.wiki.index_pages
    monkeypatch.setattr(llmwiki.publish.wiki, "index_pages", lambda workspace, texts: (_ for _ in ()).throw(OSError("disk full")) if "wiki/summaries/b.md" in texts and texts["wiki/summaries/b.md"] else original(workspace, texts))
    with pytest.raises(OSError):
        save_page(reef, "wiki/summaries/b.md", "# Coast survey\n\nReplaced.\n", expected_version=page_version(reef, "wiki/summaries/b.md"))
    assert page.read_text(encoding="utf-8") == edited  # the failed save put back what was on disk, not the last commit


def test_a_damaged_snapshot_is_not_loaded_the_store_is_rebuilt_and_the_report_says_why(reef):
    before_files, before_store, revision = files(reef), store_state(reef, exact=False), history.head(reef.root)
    change_everything(reef)
    snapshots(reef)[revision].path.write_bytes(b"not a database" * 100)
    report = restore(reef, revision)
    assert report.method == "rebuild" and ("cannot be opened" in report.why_rebuilt or "damaged" in report.why_rebuilt)
    assert files(reef) == before_files and store_state(reef, exact=False) == before_store


def test_a_revision_by_date_or_reflog_is_refused_and_a_commit_id_is_not(tmp_path):
    from llmwiki import gitrepo as history
    from llmwiki.gitrepo import HistoryError
    from llmwiki.workspace import Workspace

    workspace = Workspace.init(tmp_path / "ws")
    head = history.head(workspace.root)
    for revision in ("HEAD@{10 years ago}", "main@{2}", "@{yesterday}"):
        with pytest.raises(HistoryError, match="by date or reflog"):
            history.resolve(workspace.root, revision)
    assert history.resolve(workspace.root, "HEAD") == head  # the control


def test_a_commit_of_thousands_of_files_with_a_long_message_is_one_commit(tmp_path):
    # A command line has a length limit (E2BIG: "Argument list too long"); a site of thousands of pages must not meet it.
    from llmwiki import gitrepo

    assert gitrepo.init_repository(tmp_path)
    folder = tmp_path / "sources" / ("a-folder-with-a-rather-long-name-as-generated-sites-have-" * 2)
    folder.mkdir(parents=True)
    paths = []
    for number in range(3000):
        path = folder / f"page-{number:05d}-with-a-long-generated-name-as-api-docs-have.html"
        path.write_text(f"<p>page {number}</p>", encoding="utf-8")
        paths.append(path.relative_to(tmp_path).as_posix())
    message = "ingest: " + ", ".join(paths)  # far past the 128 KiB one argument may hold
    assert len(message) > 131072
    commit = gitrepo.commit(tmp_path, message, paths)
    assert commit is not None and commit == gitrepo.head(tmp_path)
    listed = subprocess.run(["git", "show", "--name-only", "--format=%s", "HEAD"], cwd=tmp_path, capture_output=True, text=True).stdout.splitlines()
    assert listed[0].startswith("ingest: sources/") and len([line for line in listed[1:] if line.endswith(".html")]) == 3000
    assert gitrepo.commit(tmp_path, "nothing changed", paths) is None  # control: nothing to commit, no commit
