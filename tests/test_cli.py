from __future__ import annotations

import subprocess
import sys

import pytest


def llmwiki(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llmwiki", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["init", "ingest", "status"])
def test_every_command_has_help(command):
    result = llmwiki(command, "--help")
    assert result.returncode == 0
    assert "Usage:" in result.stdout


@pytest.mark.slow
def test_init_ingest_status_round_trip(tmp_path):
    root = tmp_path / "ws"
    assert llmwiki("init", str(root)).returncode == 0
    (root / "sources" / "note.md").write_text("# Note\n\nThe quokka lives on Rottnest Island.\n", encoding="utf-8")
    (root / "sources" / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    ingest = llmwiki("ingest", "-w", str(root))
    assert ingest.returncode == 2  # a problem file makes the exit status non-zero
    assert "ingested  sources/note.md" in ingest.stdout
    assert "sources/broken.pdf: is not a readable PDF" in ingest.stderr
    status = llmwiki("status", cwd=root)  # found from the current folder
    assert status.returncode == 0
    assert "ready" in status.stdout and "failed" in status.stdout
    assert "sources/broken.pdf: is not a readable PDF" in status.stdout


@pytest.mark.slow
def test_files_refused_for_one_reason_are_shown_a_few_then_counted(tmp_path):
    from llmwiki.ingest.sources import SHOWN

    root, outside = tmp_path / "ws", tmp_path / "outside"
    llmwiki("init", str(root))
    outside.mkdir()
    for number in range(SHOWN + 3):
        (outside / f"note{number}.md").write_text(f"# Note {number}\n\nThe quokka lives on Rottnest Island.\n", encoding="utf-8")
    ingest = llmwiki("ingest", "-w", str(root), str(outside), str(root / "sources" / "missing.md"))
    refused = [line for line in ingest.stderr.splitlines() if line.strip().startswith("refused")]
    assert sum("is outside the workspace" in line and "note" in line for line in refused) == SHOWN
    assert any("3 more file(s) the same way: is outside the workspace" in line and "--copy" in line for line in refused)
    assert any("missing.md: does not exist" in line for line in refused)  # control: another reason is shown on its own
    assert f"{SHOWN + 4} files: {SHOWN + 4} refused" in ingest.stdout


@pytest.mark.slow
def test_library_errors_become_one_line_without_a_traceback(tmp_path):
    result = llmwiki("status", "-w", str(tmp_path))
    assert result.returncode == 1
    assert "not an llmwiki workspace" in result.stderr and "llmwiki init" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_search_prints_the_readout_and_hits(tmp_path):
    root = tmp_path / "ws"
    llmwiki("init", str(root))
    (root / "sources" / "note.md").write_text("# Note\n\nThe quokka lives on Rottnest Island.\n", encoding="utf-8")
    llmwiki("ingest", "-w", str(root))
    found = llmwiki("search", "quokka island", "--scope", "sources", "-w", str(root))
    assert found.returncode == 0
    assert "1 of 1 chunks matched, 1 shown" in found.stdout
    assert "sources/note.md p.1" in found.stdout
    wiki = llmwiki("search", "quokka island", "--scope", "wiki", "-w", str(root))
    assert "wiki/summaries/note.md p.1" in wiki.stdout  # the generated summary is searchable
    nothing = llmwiki("search", "what did I say?", "-w", str(root))
    assert nothing.returncode == 0 and "no searchable terms" in nothing.stdout
    assert llmwiki("search", "--help").returncode == 0


@pytest.mark.slow
def test_ask_prints_readout_answer_citations_and_saves(tmp_path):
    root = tmp_path / "ws"
    llmwiki("init", str(root))
    (root / "sources" / "note.md").write_text("# Note\n\nThe quokka lives on Rottnest Island near Perth.\n", encoding="utf-8")
    llmwiki("ingest", "-w", str(root))
    result = llmwiki("ask", "Where does the quokka live?", "--save", "-w", str(root))
    assert result.returncode == 0, result.stderr
    assert "Selected" in result.stdout and "Rottnest Island" in result.stdout
    assert "Citations:" in result.stdout and "sources/note.md p.1" in result.stdout  # citations lead to the source the wiki quotes
    assert "Saved as wiki/answers/where-does-the-quokka-live.md" in result.stdout
    assert (root / "wiki/answers/where-does-the-quokka-live.md").exists()
    agentic = llmwiki("ask", "quokka?", "--agentic", "-w", str(root))
    assert agentic.returncode == 1 and "needs a generating backend" in agentic.stderr


@pytest.mark.slow
def test_a_closed_pipe_ends_the_command_quietly_with_status_0(tmp_path):
    root = tmp_path / "ws"
    llmwiki("init", str(root))
    process = subprocess.Popen([sys.executable, "-m", "llmwiki", "status", "-w", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # like `| head` that already has what it wanted
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0 and b"Traceback" not in stderr and b"Broken pipe" not in stderr, stderr
    control = llmwiki("status", "-w", str(root))  # read to the end: the same command prints its table
    assert control.returncode == 0 and "No documents yet" in control.stdout


@pytest.mark.slow
def test_a_hand_written_page_is_adopted_by_ingesting_its_workspace_path_from_anywhere(tmp_path):
    root = tmp_path / "ws"
    llmwiki("init", str(root))
    (root / "sources" / "note.md").write_text("# Note\n\nThe quokka lives on Rottnest Island. The quokka eats leaves.\n", encoding="utf-8")
    assert llmwiki("ingest", "-w", str(root)).returncode == 0
    page = root / "wiki" / "answers" / "quokka.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("---\ntitle: Quokka\nsources:\n- path: sources/note.md\n---\n# Quokka\n\nThe quokka lives on Rottnest Island.\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = llmwiki("verify", "wiki/answers/quokka.md", "-w", str(root), cwd=elsewhere)
    assert before.returncode != 0 and "llmwiki ingest wiki/answers/quokka.md" in before.stdout + before.stderr  # the hint names the fix
    adopted = llmwiki("ingest", "wiki/answers/quokka.md", "-w", str(root), cwd=elsewhere)
    assert adopted.returncode == 0, adopted.stderr
    verified = llmwiki("verify", "wiki/answers/quokka.md", "-w", str(root), cwd=elsewhere)
    assert verified.returncode == 0, verified.stderr


def _kelp_workspace(tmp_path):
    root = tmp_path / "ws"
    assert llmwiki("init", str(root)).returncode == 0
    (root / "sources" / "kelp.md").write_text("# Kelp\n\nThe Kelp Forest shelters many fish. Divers study the Kelp Forest every spring.\n", encoding="utf-8")
    assert llmwiki("ingest", "-w", str(root)).returncode == 0
    return root


@pytest.mark.slow
def test_hostile_arguments_get_one_line_that_names_the_fix(tmp_path):
    root = _kelp_workspace(tmp_path)
    cases = [
        (("ask", "--batch", str(tmp_path / "nonexistent.txt"), "--json"), "cannot be read"),
        (("ask", "Who?", "--open", "wiki/concepts/nothere.md"), "no such wiki page"),
        (("verify", "sources/kelp.md", "--json"), "only summary, concept and answer pages"),
        (("verify", "wiki_config.toml"), "only summary, concept and answer pages"),
        (("verify", "wiki/concepts"), "not a folder"),
        (("regenerate", "wiki/concepts"), "is not a file of this workspace"),
        (("edit", "../outside.md", "--body-file", str(root / "wiki_config.toml")), "Name a page under wiki/"),
        (("delete", "../outside.md"), "Name a page under wiki/"),
        (("history", "../outside.md"), "Name a page under wiki/"),
        (("withdraw", "../outside.md"), "Name a source under sources/"),
    ]
    for arguments, expected in cases:
        result = llmwiki(*arguments, "-w", str(root))
        assert result.returncode != 0 and expected in result.stderr and "Traceback" not in result.stderr, (arguments, result.stderr[-400:])
        assert "--copy" not in result.stderr or arguments[0] == "ingest", arguments  # advice that cannot work for a page is gone
    assert not any((root / ".llmwiki").glob("journal.json"))
    answered = llmwiki("ask", "Which forest do divers study?", "--open", "wiki/summaries/kelp.md", "-w", str(root))  # the control
    assert answered.returncode == 0 and "[c" in answered.stdout


@pytest.mark.slow
def test_a_looping_link_a_dangling_link_and_deep_folders_do_not_stop_an_ingest(tmp_path):
    import os

    root = _kelp_workspace(tmp_path)
    sources = root / "sources"
    (sources / "loop.md").symlink_to("loop.md")
    (sources / "dangling.md").symlink_to("gone.md")
    (sources / "folder-link").symlink_to(sources, target_is_directory=True)  # a link to a folder that holds it: not followed
    folder = sources / "deep"
    folder.mkdir()
    current = os.getcwd()
    try:
        os.chdir(folder)
        for _ in range(1000):
            os.mkdir("d")
            os.chdir("d")
        with open("deep.md", "w", encoding="utf-8") as handle:
            handle.write("# Deep\n\nThe narwhal note lies a thousand folders down.\n")
    finally:
        os.chdir(current)
    try:
        result = llmwiki("ingest", "--no-wiki", "-w", str(root))
    finally:
        _remove_deep(folder)  # pytest's own clean-up of tmp_path recurses, one frame per folder
    assert result.returncode == 2 and "Traceback" not in result.stderr  # refused files make it non-zero, nothing crashes
    assert "sources/loop.md: is a link that loops or points nowhere" in result.stderr
    assert "sources/dangling.md: is a link that loops or points nowhere" in result.stderr
    assert "1 ingested" in result.stdout
    assert "unchanged" in result.stdout or "1 unchanged" in result.stdout  # the control: kelp.md, already stored, is still read


def _remove_deep(top) -> None:
    """Remove a deep folder tree without recursion: go down one folder at a time, then remove on the way up."""
    import os

    path = os.fspath(top)
    while os.path.isdir(path):
        inner = [entry for entry in os.scandir(path) if entry.is_dir(follow_symlinks=False)]
        for entry in os.scandir(path):
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        if inner:
            path = inner[0].path
            continue
        os.rmdir(path)
        if path == os.fspath(top):
            break
        path = os.path.dirname(path)


@pytest.mark.slow
def test_document_text_and_paths_are_printed_as_written_never_read_as_markup(tmp_path):
    root = tmp_path / "ws"
    llmwiki("init", str(root))
    (root / "sources" / "api.md").write_text("# The [/api/v1] endpoint\n\nThe [bold] endpoint answers GET requests with JSON.\n", encoding="utf-8")
    odd = root / "sources" / "a["
    odd.mkdir()
    (odd / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    ingest = llmwiki("ingest", "-w", str(root))
    assert ingest.returncode == 2 and "Traceback" not in ingest.stderr
    assert "sources/a[/broken.pdf: is not a readable PDF" in ingest.stderr
    found = llmwiki("search", "endpoint", "-w", str(root))
    assert found.returncode == 0, found.stderr
    assert "[/api/v1]" in found.stdout and "[bold] endpoint" in found.stdout
    status = llmwiki("status", "-w", str(root))
    assert status.returncode == 0 and "sources/a[/broken.pdf" in status.stdout
    plain = llmwiki("search", "JSON", "-w", str(root))  # the control: a query whose hit has no brackets prints too
    assert plain.returncode == 0 and "GET requests" in plain.stdout


def _in_terminal(columns: int, *args: str) -> str:
    """What a command prints in a terminal of this width (a pseudo-terminal: rich sees a tty and its size)."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "llmwiki", *args], stdout=follower, stderr=follower, env={**os.environ, "COLUMNS": str(columns)})
    os.close(follower)
    output = b""
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        output += data
    process.wait(timeout=120)
    os.close(leader)
    return output.decode("utf-8", "replace")


@pytest.mark.slow
def test_tables_in_an_80_column_terminal_wrap_their_cells_instead_of_cutting_them():
    from conftest import REPO

    narrow = _in_terminal(80, "datasets", "milestones", "-w", str(REPO / "workspace"))
    assert "Avogadro" in narrow and "11 rows" in narrow  # it ran in the terminal ...
    assert "…" not in narrow  # ... and no cell was cut short
    piped = llmwiki("datasets", "milestones", "-w", str(REPO / "workspace"))  # the control: piped, full width, one line a row
    assert piped.returncode == 0 and "…" not in piped.stdout and "Henri Becquerel" in piped.stdout


@pytest.mark.slow
def test_ask_prints_the_answer_without_a_library_progress_bar(tmp_path):
    root = tmp_path / "ws"
    llmwiki("init", str(root))
    (root / "sources" / "note.md").write_text("# Note\n\nThe quokka lives on Rottnest Island.\n", encoding="utf-8")
    assert llmwiki("ingest", "-w", str(root)).returncode == 0
    asked = llmwiki("ask", "Where does the quokka live?", "-w", str(root))
    assert asked.returncode == 0 and "Rottnest Island" in asked.stdout  # the answer is there ...
    assert "Loading weights" not in asked.stdout + asked.stderr and "it/s]" not in asked.stdout + asked.stderr  # ... and no model's bar
