"""Crashes in the middle of an ingest, and a damaged or missing store: every case ends in a workspace
the next command finishes or recovers, compared with an undamaged control."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import pytest

from llmwiki import gitrepo as history
from llmwiki.errors import StoreDamagedError
from llmwiki.publish.journal import open_workspace
from llmwiki.maintain import consistency_problems
from llmwiki.pages import split_frontmatter
from llmwiki.publish.wiki import ingest_paths, pending_sources
from llmwiki.workspace import Workspace

SOURCES = {
    "kelp.md": "# Kelp Forest\n\nThe Kelp Forest grows off the coast of Monterey. Sea otters live in the Kelp Forest and eat urchins.\n\nGiant kelp can grow half a metre a day.\n",
    "tides.md": "# Tide Pools\n\nThe Tide Pool holds anemones and crabs. Children visit the Tide Pool at low tide.\n\nSea otters rarely visit the Tide Pool.\n",
    "reef.md": "# Coral Reef\n\nThe Coral Reef lies far to the south. Parrotfish graze on the Coral Reef and make sand.\n\nWarm water bleaches the Coral Reef.\n",
}
TIME_FIELDS = ("created", "updated")


def _llmwiki(root, *arguments, failpoint: str | None = None):
    environment = dict(os.environ, LLMWIKI_FAILPOINT=failpoint or "")
    return subprocess.run([sys.executable, "-m", "llmwiki", *arguments, "-w", str(root)], capture_output=True, text=True, env=environment, timeout=300)


def _new(tmp_path, name: str) -> Workspace:
    workspace = Workspace.init(tmp_path / name)
    for file_name, text in SOURCES.items():
        (workspace.sources_dir / file_name).write_text(text, encoding="utf-8")
    return workspace


def _state(workspace: Workspace) -> dict:
    """What a user would compare: documents (path, status, hash), chunk counts, and every page without its timestamps."""
    store = workspace.store
    documents = sorted((document.path, document.kind, document.status, document.content_hash if document.kind == "source" else "") for document in store.documents())
    pages = {}
    for path in sorted(workspace.wiki_dir.rglob("*.md")):
        relative = path.relative_to(workspace.root).as_posix()
        if relative == "wiki/log.md":
            continue
        meta, body = split_frontmatter(path.read_text(encoding="utf-8"))
        pages[relative] = ({key: value for key, value in meta.items() if key not in TIME_FIELDS}, body)
    return {"documents": documents, "chunks": store.totals()["chunks"], "pages": pages}


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    workspace = _new(tmp_path_factory.mktemp("clean"), "ws")
    ingest_paths(workspace)
    return _state(workspace)


@pytest.mark.slow
@pytest.mark.parametrize("point", ["ingest:file", "ingest:stored", "generate:source", "publish:files", "publish:store"])
def test_a_killed_ingest_is_finished_by_the_next_one(tmp_path, clean, point):
    workspace = _new(tmp_path, "ws")
    killed = _llmwiki(workspace.root, "ingest", failpoint=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    finished = _llmwiki(workspace.root, "ingest")
    assert finished.returncode == 0, finished.stderr
    workspace = Workspace.open(workspace.root)
    assert _state(workspace) == clean  # same documents, chunks and pages as one clean run; nothing duplicated
    assert consistency_problems(workspace) == [] and pending_sources(workspace) == []
    assert history.changed_since_head(workspace.root) == []  # sources and pages committed
    assert _llmwiki(workspace.root, "ingest").stdout.count("Finished") == 0  # a third run has nothing left to do


@pytest.mark.slow
def test_lint_names_a_source_left_without_its_summary_and_the_fix(tmp_path):
    workspace = _new(tmp_path, "ws")
    killed = _llmwiki(workspace.root, "ingest", failpoint="ingest:stored")
    assert killed.returncode == -signal.SIGKILL
    linted = _llmwiki(workspace.root, "lint")
    assert linted.returncode != 0
    for name in SOURCES:
        assert f"sources/{name} is ingested but has no summary page" in linted.stdout
    assert "run `llmwiki ingest`" in linted.stdout
    assert _llmwiki(workspace.root, "ingest").returncode == 0
    again = _llmwiki(workspace.root, "lint")  # the control: once finished, no such error
    assert "has no summary page" not in again.stdout


def test_a_summary_written_from_an_older_version_of_its_source_is_pending(tmp_path):
    workspace = _new(tmp_path, "ws")
    ingest_paths(workspace)
    assert pending_sources(workspace) == []
    (workspace.sources_dir / "kelp.md").write_text(SOURCES["kelp.md"] + "\nOtters hold hands while they sleep.\n", encoding="utf-8")
    ingest_paths(workspace, generate=False)
    assert [document.path for document in pending_sources(workspace)] == ["sources/kelp.md"]
    report = ingest_paths(workspace)
    assert pending_sources(workspace) == [] and report.generation is not None and report.finished == ("sources/kelp.md",)


def test_a_source_this_checkout_does_not_hold_is_not_pending_here(tmp_path):
    """Checkouts sharing one store each write the pages of their own sources."""
    workspace = _new(tmp_path, "ws")
    ingest_paths(workspace, generate=False)
    assert sorted(document.path for document in pending_sources(workspace)) == sorted(f"sources/{name}" for name in SOURCES)  # control
    moved = tmp_path / "elsewhere.md"
    (workspace.sources_dir / "kelp.md").rename(moved)  # as if another checkout had ingested it
    assert "sources/kelp.md" not in [document.path for document in pending_sources(workspace)]
    report = ingest_paths(workspace, paths=[])
    assert not (workspace.wiki_dir / "summaries" / "kelp.md").exists() and report.generation is not None
    moved.rename(workspace.sources_dir / "kelp.md")  # the file is here again: its pages are due
    assert "sources/kelp.md" in [document.path for document in pending_sources(workspace)]


# -- a damaged store ---------------------------------------------------------------------


def _damage(path, how: str) -> None:
    size = path.stat().st_size
    with path.open("r+b") as handle:
        if how == "truncate":
            handle.truncate(size // 2)
        elif how == "zero":
            handle.write(b"\0" * size)
        else:  # overwrite the header and the first blocks with other bytes
            handle.write(bytes(range(256)) * (min(size, 1 << 20) // 256))


@pytest.fixture
def built(tmp_path):
    workspace = _new(tmp_path, "ws")
    ingest_paths(workspace)
    workspace.store.checkpoint()  # everything in the file, nothing left in the write-ahead log
    return workspace


@pytest.mark.slow
@pytest.mark.parametrize("how", ["truncate", "zero", "overwrite"])
def test_a_damaged_store_gives_one_line_with_the_fix_in_every_command(built, how):
    store_file = built.store.path
    _damage(store_file, how)
    for arguments in (("status",), ("search", "otters"), ("ask", "Who eats urchins?"), ("lint",), ("ingest",)):
        result = _llmwiki(built.root, *arguments)
        assert result.returncode != 0, arguments
        assert "Traceback" not in result.stderr, (arguments, result.stderr)
        assert "the store is damaged" in result.stderr and "llmwiki restore" in result.stderr, (arguments, result.stderr)
    with pytest.raises(StoreDamagedError, match="llmwiki reindex"):
        open_workspace(built.root)


@pytest.mark.slow
def test_an_undamaged_store_opens_and_answers(built):
    """The control beside the damage tests."""
    assert _llmwiki(built.root, "status").returncode == 0
    result = _llmwiki(built.root, "search", "otters")
    assert result.returncode == 0 and "kelp" in result.stdout.lower()
    assert open_workspace(built.root).root == built.root


@pytest.mark.slow
@pytest.mark.parametrize("how", ["truncate", "zero", "overwrite"])
@pytest.mark.parametrize("command", ["restore", "reindex"])
def test_restore_and_reindex_recover_a_damaged_store_on_their_own(built, how, command):
    before = _state(built)
    _damage(built.store.path, how)
    result = _llmwiki(built.root, command)
    assert result.returncode == 0, result.stderr
    assert "The damaged store was moved to" in result.stdout
    assert "snapshot of HEAD" in result.stdout  # every write took a snapshot, so nothing is lost
    assert list((built.state_dir / "damaged").glob("store-*.duckdb"))  # kept aside, not deleted
    assert _state(Workspace.open(built.root)) == before
    assert _llmwiki(built.root, "status").returncode == 0
    assert history.changed_since_head(built.root) == []


@pytest.mark.slow
def test_without_a_snapshot_the_store_is_rebuilt_from_the_files_and_the_losses_named(built):
    before = _state(built)
    shutil.rmtree(built.state_dir / "snapshots")
    _damage(built.store.path, "truncate")
    result = _llmwiki(built.root, "restore")
    assert result.returncode == 0, result.stderr
    assert "rebuilt from the files" in result.stdout and "lost: page version numbers start again at 1" in result.stdout
    assert _state(Workspace.open(built.root)) == before


@pytest.mark.slow
def test_restore_to_a_revision_first_recovers_a_damaged_store(built):
    head = history.head(built.root)
    (built.sources_dir / "extra.md").write_text("# Extra\n\nThe Extra Reef is new. Divers like the Extra Reef.\n", encoding="utf-8")
    ingest_paths(built)
    _damage(built.store.path, "zero")
    result = _llmwiki(built.root, "restore", head)
    assert result.returncode == 0, result.stderr
    assert "The damaged store was moved to" in result.stdout and f"Restored the workspace to {head[:10]}" in result.stdout
    workspace = Workspace.open(built.root)
    assert consistency_problems(workspace) == [] and not (workspace.root / "wiki/summaries/extra.md").exists()


def test_a_restore_that_fails_changes_nothing(built, monkeypatch):
    import llmwiki.publish.snapshots

    head = history.head(built.root)
    (built.sources_dir / "extra.md").write_text("# Extra\n\nThe Extra Reef is new. Divers like the Extra Reef.\n", encoding="utf-8")
    ingest_paths(built)
    before = _state(built)
    files_before = {path: path.read_bytes() for path in built.wiki_dir.rglob("*.md")}
    new_head = history.head(built.root)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(llmwiki.publish.snapshots, "load_snapshot", broken)
    monkeypatch.setattr(llmwiki.publish.snapshots, "rebuild_store", broken)
    from llmwiki.maintain import restore

    with pytest.raises(OSError, match="disk full"):
        restore(built, head)
    assert {path: path.read_bytes() for path in built.wiki_dir.rglob("*.md")} == files_before  # the log too: no "restore: to" line
    assert _state(built) == before and history.head(built.root) == new_head
    assert history.changed_since_head(built.root) == []


@pytest.mark.slow
def test_status_on_a_workspace_whose_store_is_missing_names_the_fix(built):
    built.store.path.unlink()
    result = _llmwiki(built.root, "status")
    assert result.returncode == 1 and "the store is missing while the wiki holds" in result.stderr and "llmwiki restore" in result.stderr
    recovered = _llmwiki(built.root, "restore")
    assert recovered.returncode == 0 and "The store was missing" in recovered.stdout, recovered.stderr
    assert _llmwiki(built.root, "status").returncode == 0


@pytest.mark.slow
def test_a_fresh_workspace_without_a_store_is_not_called_damaged(tmp_path):
    """The control: sources dropped in, never ingested, no store yet is normal."""
    workspace = _new(tmp_path, "ws")
    workspace.store.path.unlink(missing_ok=True)
    result = _llmwiki(workspace.root, "status")
    assert result.returncode == 0 and "No documents yet" in result.stdout


def test_a_store_file_another_process_is_creating_is_waited_for_not_called_damaged(tmp_path):
    """Two processes opening a new workspace at once: one meets the file the other has just created, before DuckDB has
    written its headers. That is waited for like a lock; an old file as short is damage (the control)."""
    import threading
    import time

    import duckdb

    from llmwiki.store.duckdb_store import DuckDBStore

    path = tmp_path / "store.duckdb"
    path.write_bytes(b"")  # created a moment ago, headers not yet written
    made = tmp_path / "made.duckdb"
    duckdb.connect(str(made)).close()

    def finish_creating() -> None:
        time.sleep(0.5)
        os.replace(made, path)

    writer = threading.Thread(target=finish_creating)
    writer.start()
    store = DuckDBStore(path, lock_timeout_s=10)
    with store.connect() as conn:  # opens once the header is there
        assert conn.execute("select 1").fetchone() == (1,)
    writer.join()
    old = tmp_path / "old.duckdb"
    old.write_bytes(b"")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    with pytest.raises(StoreDamagedError):
        with DuckDBStore(old, lock_timeout_s=10).connect():
            pass


# -- a store large enough that damage can fall anywhere: status, restore and write commands agree on what is damaged

_ANIMALS = ("otter", "urchin", "kelp", "heron", "seal", "crab", "gull", "eel", "tern", "whelk")


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A workspace of 30 sources (a store of several blocks), ingested, checkpointed, its snapshot taken."""
    workspace = Workspace.init(tmp_path_factory.mktemp("large") / "ws")
    for number in range(30):
        paragraphs = [f"The {_ANIMALS[(number + index) % 10]} of bay {number} was counted {index * 7 + number} times in survey {index}. "
                      f"Observers noted that the {_ANIMALS[index % 10]} fed near station {number * 3 + index}." for index in range(40)]
        (workspace.sources_dir / f"bay-{number:02d}.md").write_text(f"# Bay {number}\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    ingest_paths(workspace)
    workspace.store.checkpoint()
    return workspace.root


def _truncate_to(share: float):
    def damage(path) -> None:
        with path.open("r+b") as handle:
            handle.truncate(int(path.stat().st_size * share))
    return damage


def _at_block_boundary(path) -> None:
    blocks = (path.stat().st_size - 3 * 4096) // 262144
    with path.open("r+b") as handle:
        handle.truncate(3 * 4096 + 262144 * (blocks // 2))


def _zeroed_middle(path) -> None:
    """The middle one of the blocks that hold chunk texts, zeroed (a block in the middle of the file may be a free one)."""
    import duckdb

    with duckdb.connect(str(path), read_only=True) as conn:
        blocks = sorted(row[0] for row in conn.execute("SELECT DISTINCT block_id FROM pragma_storage_info('chunks') WHERE block_id >= 0").fetchall())
    with path.open("r+b") as handle:
        handle.seek(3 * 4096 + 262144 * blocks[len(blocks) // 2])
        handle.write(b"\0" * 262144)


def _overwritten_header(path) -> None:
    with path.open("r+b") as handle:
        handle.write(b"\xff" * 4096)


@pytest.mark.slow
@pytest.mark.parametrize("damage", [_truncate_to(0.1), _truncate_to(0.5), _truncate_to(0.9), _at_block_boundary, _zeroed_middle, _overwritten_header],
                         ids=["truncated-10", "truncated-50", "truncated-90", "block-boundary", "zeroed-middle", "overwritten-header"])
def test_every_damage_the_check_reports_is_one_restore_repairs(large, tmp_path, damage):
    root = tmp_path / "ws"
    shutil.copytree(large, root)
    workspace = Workspace.open(root)
    before = _state(workspace)
    assert workspace.store.path.stat().st_size > 4 * 262144  # several blocks: damage in the middle falls inside the data
    damage(workspace.store.path)
    status = _llmwiki(root, "status")
    assert status.returncode == 1 and "the store is damaged" in status.stderr and "llmwiki restore" in status.stderr and "Traceback" not in status.stderr
    page = sorted((root / "wiki" / "summaries").glob("*.md"))[0].relative_to(root).as_posix()
    body = tmp_path / "body.md"
    body.write_text("# Edited\n\nThe otter of bay 1 was counted 8 times in survey 1.\n", encoding="utf-8")
    refused = _llmwiki(root, "edit", page, "--body-file", str(body))  # a write on a damaged store is refused with the same fix
    assert refused.returncode == 1 and "the store is damaged" in refused.stderr and not (root / ".llmwiki" / "journal.json").exists()
    repaired = _llmwiki(root, "restore")
    assert repaired.returncode == 0, repaired.stderr
    assert "The damaged store was moved to" in repaired.stdout and "snapshot of HEAD" in repaired.stdout
    assert _state(Workspace.open(root)) == before  # the counts of the last snapshot
    again = _llmwiki(root, "restore", "HEAD")
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    edited = _llmwiki(root, "edit", page, "--body-file", str(body))
    assert edited.returncode == 0, edited.stderr
    assert _llmwiki(root, "status").returncode == 0 and history.changed_since_head(root) == []


def test_the_undamaged_large_store_is_sound_and_its_check_is_remembered(large, tmp_path):
    """The control: the same store undamaged; a second check reads nothing while the file is unchanged."""
    root = tmp_path / "ws"
    shutil.copytree(large, root)
    store = Workspace.open(root).store
    assert store.damage() is None
    stamp = store.path.with_name(store.path.name + ".checked")
    assert stamp.is_file()
    _zeroed_middle(store.path)  # damaged after the check: the stamp no longer matches, so it is read again
    assert store.damage() is not None and "the store is damaged" in store.damage()


@pytest.mark.slow
def test_an_interrupted_operation_whose_store_copy_is_unreadable_is_recovered_not_stuck(large, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(large, root)
    before = _state(Workspace.open(root))
    killed = _llmwiki(root, "withdraw", "sources/bay-00.md", failpoint="withdraw:store")  # killed after the store changed
    assert killed.returncode != 0 and (root / ".llmwiki" / "journal.json").exists()
    copy = root / ".llmwiki" / "journal-before.duckdb"
    assert copy.is_file()  # the control: the copy a rollback would load
    _zeroed_middle(copy)
    status = _llmwiki(root, "status")
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    assert status.stderr.count("rolled back") == 1 and "unreadable" in status.stderr  # said once, not once more by a log handler
    assert not (root / ".llmwiki" / "journal.json").exists()  # not stuck: the journal is finished
    assert _state(Workspace.open(root)) == before and history.changed_since_head(root) == []


@pytest.mark.slow
def test_bytes_changed_in_place_with_size_and_time_kept_are_found_by_status_and_repaired_by_restore(large, tmp_path):
    root = tmp_path / "ws"
    shutil.copytree(large, root)
    sound = _llmwiki(root, "status")  # a sound check, remembered in the stamp beside the store
    assert sound.returncode == 0, sound.stderr
    path = Workspace.open(root).store.path
    before = path.stat()
    _zeroed_middle(path)  # in place: same inode and size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same time
    assert (path.stat().st_ino, path.stat().st_size, path.stat().st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    status = _llmwiki(root, "status")
    assert status.returncode == 1 and "the store is damaged" in status.stderr
    search = _llmwiki(root, "search", "otter")  # the other commands say the same
    assert search.returncode == 1 and "the store is damaged" in search.stderr
    repaired = _llmwiki(root, "restore")  # no revision: repairs what the check found
    assert repaired.returncode == 0 and "The damaged store was moved to" in repaired.stdout, repaired.stderr
    assert _llmwiki(root, "status").returncode == 0 and _llmwiki(root, "search", "otter").returncode == 0
    idle = _llmwiki(root, "restore")  # the control: on a sound store, restore without a revision has nothing to repair
    assert idle.returncode != 0 and "the store is sound" in idle.stderr
