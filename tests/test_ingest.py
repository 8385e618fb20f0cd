from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import REPO
from llmwiki.ingest.sources import ingest_file
from llmwiki.publish.wiki import ingest_paths


def write(workspace, name: str, content: str | bytes):
    path = workspace.sources_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def all_chunk_text(workspace, relative: str) -> str:
    store = workspace.store
    document = store.document_by_path(relative)
    return "\n".join(chunk.text for chunk in store.chunks(document.id))


GOOD = "# Good\n\nThis file is fine and mentions the aardvark.\n"


def test_sample_workspace_ingests_every_format(tmp_path, count_tokens):
    root = tmp_path / "sample"
    shutil.copytree(REPO / "workspace", root, ignore=shutil.ignore_patterns(".llmwiki"))
    from llmwiki.workspace import Workspace

    workspace = Workspace.open(root)
    seen = []
    report = ingest_paths(workspace, count_tokens=count_tokens, on_progress=lambda done, total, path: seen.append((done, total)))
    assert report.count("ingested") == 7 and not report.problems
    assert seen[-1] == (7, 7)
    documents = workspace.store.documents(kind="source")
    assert {document.status for document in documents} == {"ready"}
    assert {document.parser.split(" ")[0] for document in documents} == {"text", "markdown", "html", "pdf", "docx"}
    pdf = next(document for document in documents if document.path.endswith(".pdf"))
    assert len(workspace.store.pages(pdf.id)) > 1
    assert "Turin" in all_chunk_text(workspace, pdf.path)


def test_reingesting_an_unchanged_file_does_nothing(workspace, count_tokens):
    path = write(workspace, "a.md", GOOD)
    first = ingest_file(workspace, path, count_tokens=count_tokens)
    chunk_ids = [chunk.id for chunk in workspace.store.chunks(workspace.store.document_by_path("sources/a.md").id)]
    second = ingest_file(workspace, path, count_tokens=count_tokens)
    assert (first.action, second.action) == ("ingested", "unchanged")
    document = workspace.store.document_by_path("sources/a.md")
    assert document.version == 1
    assert [chunk.id for chunk in workspace.store.chunks(document.id)] == chunk_ids


def test_a_changed_file_replaces_its_chunks(workspace, count_tokens):
    path = write(workspace, "a.md", GOOD)
    ingest_file(workspace, path, count_tokens=count_tokens)
    path.write_text("# Good\n\nNow it talks about the pangolin instead.\n", encoding="utf-8")
    outcome = ingest_file(workspace, path, count_tokens=count_tokens)
    assert outcome.action == "updated"
    text = all_chunk_text(workspace, "sources/a.md")
    assert "pangolin" in text and "aardvark" not in text
    assert workspace.store.document_by_path("sources/a.md").version == 2
    assert len(workspace.store.documents(kind="source")) == 1


def test_a_scan_continues_past_bad_files_and_records_each_reason(workspace, binary_fixtures, count_tokens):
    write(workspace, "good.md", GOOD)
    write(workspace, "empty.md", b"")
    write(workspace, "binary.txt", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    pdf = binary_fixtures["pdf"].read_bytes()
    write(workspace, "corrupt.pdf", pdf[: len(pdf) // 3])
    write(workspace, "corrupt.docx", b"PK\x03\x04 broken")
    write(workspace, "latin1.txt", "Amp\u00e8re and Fran\u00e7ois met in Lyon, the r\u00e9sum\u00e9 says.".encode("latin-1"))
    write(workspace, "bom.md", "\ufeff# Bom\n\nA byte-order mark does not end up in the text.".encode("utf-8"))
    write(workspace, "nul.md", b"# Nul\n\nNUL\x00 bytes are\x00 stripped.")
    report = ingest_paths(workspace, count_tokens=count_tokens)
    store = workspace.store
    status = {document.path: document for document in store.documents()}
    for name in ("good.md", "latin1.txt", "bom.md", "nul.md"):
        assert status[f"sources/{name}"].status == "ready", name
    assert "Fran\u00e7ois" in all_chunk_text(workspace, "sources/latin1.txt")
    assert "\ufeff" not in all_chunk_text(workspace, "sources/bom.md")
    assert "NUL bytes are stripped." in all_chunk_text(workspace, "sources/nul.md")
    expected_reasons = {
        "empty.md": "is empty",
        "binary.txt": "binary",
        "corrupt.pdf": "not a readable PDF",
        "corrupt.docx": "not a readable DOCX",
    }
    for name, reason in expected_reasons.items():
        document = status[f"sources/{name}"]
        assert document.status == "failed", name
        assert reason in document.error, (name, document.error)
        assert store.chunks(document.id) == []
    assert {outcome.path.split("/")[-1] for outcome in report.problems} == set(expected_reasons)


def test_a_huge_file_is_refused_without_being_read(workspace, count_tokens):
    huge = workspace.sources_dir / "huge.txt"
    with huge.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)  # sparse: 200 MB on paper, nothing on disk
    good = write(workspace, "good.md", GOOD)
    started = time.perf_counter()
    outcome = ingest_file(workspace, huge, count_tokens=count_tokens)
    assert time.perf_counter() - started < 5
    assert outcome.action == "failed"
    assert "over the 50 MB limit" in outcome.reason and "max_file_mb" in outcome.reason
    assert workspace.store.document_by_path("sources/huge.txt").status == "failed"
    assert ingest_file(workspace, good, count_tokens=count_tokens).action == "ingested"


def test_paths_outside_the_workspace_are_refused_and_not_recorded(workspace, tmp_path, count_tokens):
    outside = tmp_path / "outside.md"
    outside.write_text(GOOD, encoding="utf-8")
    good = write(workspace, "good.md", GOOD)
    report = ingest_paths(workspace, [outside, workspace.sources_dir / ".." / ".." / "outside.md", good], count_tokens=count_tokens)
    assert [outcome.action for outcome in report.outcomes] == ["refused", "refused", "ingested"]
    assert "--copy" in report.outcomes[0].reason
    assert [document.path for document in workspace.store.documents(kind="source")] == ["sources/good.md"]


def test_copy_brings_an_outside_file_into_sources(workspace, tmp_path, count_tokens):
    outside = tmp_path / "report.md"
    outside.write_text(GOOD, encoding="utf-8")
    report = ingest_paths(workspace, [outside], copy=True, count_tokens=count_tokens)
    assert [outcome.action for outcome in report.outcomes] == ["ingested"]
    assert (workspace.sources_dir / "report.md").read_text(encoding="utf-8") == GOOD


def test_copy_of_a_folder_keeps_its_sub_folders(workspace, tmp_path, count_tokens):
    outside = tmp_path / "notes"
    for folder, text in (("a", GOOD), ("b", GOOD.replace("aardvark", "armadillo"))):
        (outside / folder).mkdir(parents=True)
        (outside / folder / "notes.md").write_text(text, encoding="utf-8")
    report = ingest_paths(workspace, [outside], copy=True, count_tokens=count_tokens, generate=False)
    assert sorted((outcome.path, outcome.action) for outcome in report.outcomes) == [("sources/notes/a/notes.md", "ingested"), ("sources/notes/b/notes.md", "ingested")]
    assert "armadillo" in (workspace.sources_dir / "notes" / "b" / "notes.md").read_text(encoding="utf-8")
    again = ingest_paths(workspace, [outside], copy=True, count_tokens=count_tokens, generate=False)  # the control: copied again, nothing new
    assert [outcome.action for outcome in again.outcomes] == ["unchanged", "unchanged"] and not again.problems


def test_a_bad_new_version_keeps_the_stored_content(workspace, count_tokens):
    path = write(workspace, "a.md", GOOD)
    ingest_file(workspace, path, count_tokens=count_tokens)
    before = workspace.store.document_by_path("sources/a.md")
    path.write_bytes(b"\x00\x01\x02\x03" * 5000)
    outcome = ingest_file(workspace, path, count_tokens=count_tokens)
    after = workspace.store.document_by_path("sources/a.md")
    assert outcome.action == "failed" and after.status == "failed" and "binary" in after.error
    assert after.content_hash == before.content_hash and after.version == before.version
    assert "aardvark" in all_chunk_text(workspace, "sources/a.md")
    # Fixing the file brings it back to ready.
    path.write_text(GOOD.replace("aardvark", "armadillo"), encoding="utf-8")
    assert ingest_file(workspace, path, count_tokens=count_tokens).action == "updated"
    assert workspace.store.document_by_path("sources/a.md").status == "ready"


@pytest.mark.slow
def test_two_processes_ingesting_into_one_workspace_lose_nothing(workspace):
    for batch in ("a", "b"):
        for index in range(8):
            write(workspace, f"{batch}/{batch}{index}.md", f"# {batch}{index}\n\nDocument {batch}{index} about topic {index}.\n" * 20)
    script = textwrap.dedent(
        """
        import sys
        from llmwiki.publish.wiki import ingest_paths
        from llmwiki.workspace import Workspace
        workspace = Workspace.open(sys.argv[1])
        report = ingest_paths(workspace, [workspace.sources_dir / sys.argv[2]])
        problems = report.problems
        print(report.summary())
        sys.exit(1 if problems else 0)
        """
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", script, str(workspace.root), batch], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for batch in ("a", "b")
    ]
    results = [process.communicate(timeout=300) + (process.returncode,) for process in processes]
    for stdout, stderr, returncode in results:
        assert returncode == 0, stderr
        assert "8 ingested" in stdout
    documents = workspace.store.documents(kind="source")
    assert len(documents) == 16
    assert {document.status for document in documents} == {"ready"}
    assert all(workspace.store.chunks(document.id) for document in documents)


@pytest.mark.slow
def test_a_second_ingest_waits_for_the_first_instead_of_writing_its_pages(workspace):
    import time

    write(workspace, "kelp.md", GOOD)
    script = "import sys\nfrom llmwiki.publish.wiki import ingest_paths\nfrom llmwiki.workspace import Workspace\n" \
             "report = ingest_paths(Workspace.open(sys.argv[1]))\nprint(report.summary(), 'finished:', len(report.finished))\n"
    with workspace.ingest_lock():  # another ingest holds the workspace
        process = subprocess.Popen([sys.executable, "-c", script, str(workspace.root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        assert process.poll() is None  # it waits
        assert workspace.store.document_by_path("sources/kelp.md") is None  # and has touched nothing
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "1 ingested" in stdout and "finished: 0" in stdout
    started = time.perf_counter()  # the control: with no other ingest, one runs at once
    again = subprocess.run([sys.executable, "-c", script, str(workspace.root)], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "1 unchanged" in again.stdout and time.perf_counter() - started < 60


def test_an_upload_goes_into_sources_and_never_overwrites_other_content(workspace):
    from llmwiki.errors import WorkspaceError
    from llmwiki.ingest.sources import import_bytes

    target = import_bytes(workspace, "notes.md", b"# Notes\n\nFirst.\n")
    assert target == workspace.sources_dir / "notes.md" and target.read_bytes() == b"# Notes\n\nFirst.\n"
    assert import_bytes(workspace, "notes.md", b"# Notes\n\nFirst.\n") == target  # the same file again: nothing to do
    with pytest.raises(WorkspaceError, match="already exists with other content. Rename notes.md"):
        import_bytes(workspace, "notes.md", b"# Other\n")
    assert target.read_bytes() == b"# Notes\n\nFirst.\n"
    for name in ("../escape.md", "folder/inner.md", ".hidden.md", "", "..\\win.md"):
        with pytest.raises(WorkspaceError, match="not a plain file name"):
            import_bytes(workspace, name, b"x")
    assert not (workspace.root / "escape.md").exists() and sorted(p.name for p in workspace.sources_dir.iterdir()) == ["notes.md"]


def test_a_redirect_page_is_skipped_and_one_stored_before_keeps_its_content(workspace, count_tokens):
    stub = '<html><head><meta http-equiv="refresh" content="0; url=kettle.html"></head><body><p>Moved to <a href="kettle.html">kettle.html</a>.</p></body></html>'
    write(workspace, "kettle.html", "<html><body><h1>Kettle</h1><p>The kettle boils a litre of water in three minutes.</p></body></html>")
    write(workspace, "old-kettle.html", stub)
    report = ingest_paths(workspace, count_tokens=count_tokens)
    actions = {outcome.path: outcome.action for outcome in report.outcomes}
    assert actions == {"sources/kettle.html": "ingested", "sources/old-kettle.html": "skipped"}
    assert report.problems == [] and "1 skipped" in report.summary()
    assert workspace.store.document_by_path("sources/old-kettle.html") is None  # no document, no page
    assert not any("old-kettle" in path.name for path in (workspace.root / "wiki").rglob("*.md"))
    # A page stored before that now only redirects is marked failed, its stored content kept (nothing is lost).
    path = workspace.sources_dir / "kettle.html"
    path.write_text(stub.replace("kettle.html", "new-kettle.html"), encoding="utf-8")
    outcome = ingest_file(workspace, path, count_tokens=count_tokens)
    assert outcome.action == "failed" and "redirects to new-kettle.html" in outcome.reason and "llmwiki withdraw sources/kettle.html" in outcome.reason
    assert "boils a litre" in all_chunk_text(workspace, "sources/kettle.html")


@pytest.mark.parametrize("title", ["Page Not Found", "404 Not Found", "Error 404 - Kettle Docs"])
def test_a_sites_error_page_is_skipped_and_a_page_about_not_found_errors_is_read(workspace, count_tokens, title):
    write(workspace, "404.html", f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>The page you requested does not exist. "
                                 "You may have followed a bad link, or the page may have been moved.</p></body></html>")
    write(workspace, "errors.html", "<html><head><title>Not Found errors</title></head><body><h1>Not Found errors</h1><p>The kettle's web "
                                    "panel answers 404 when a page is missing.</p></body></html>")  # control: a page about the error
    report = ingest_paths(workspace, count_tokens=count_tokens)
    outcomes = {outcome.path: outcome for outcome in report.outcomes}
    assert outcomes["sources/404.html"].action == "skipped" and "error page" in outcomes["sources/404.html"].reason
    assert outcomes["sources/errors.html"].action == "ingested"
    assert not any(path.name.startswith("404") for path in (workspace.root / "wiki").rglob("*.md"))


def test_a_folder_scan_counts_the_files_it_cannot_read_by_type(workspace, count_tokens):
    # A folder of a format llmwiki does not read said "0 files: nothing to do"; the summary names what it passed over.
    write(workspace, "help/kettle.page", "<page><title>Kettle</title></page>")
    write(workspace, "help/lid.page", "<page><title>Lid</title></page>")
    write(workspace, "help/kettle.png", b"\x89PNG\r\n\x1a\n")
    write(workspace, "help/.hidden.page", "<page/>")
    write(workspace, "help/README", "Build with make.")
    report = ingest_paths(workspace, count_tokens=count_tokens)
    assert report.passed_over == ((".page", 2), ("(no extension)", 1), (".png", 1))  # most first; the hidden file is no file of the scan
    assert "not read, no extractor for their type: 2 .page, 1 (no extension), 1 .png" in report.summary()
    # Control: a folder of files llmwiki reads says nothing of the kind.
    for path in (workspace.sources_dir / "help").iterdir():
        path.unlink()
    write(workspace, "help/kettle.md", GOOD)
    assert "not read" not in ingest_paths(workspace, count_tokens=count_tokens).summary()


def test_problems_of_one_reason_are_shown_a_few_then_counted_and_other_reasons_apart():
    from llmwiki.ingest.sources import SHOWN, FileOutcome, IngestReport

    outside = [FileOutcome(path=f"/far/note{number}.md", action="refused", reason=f"/far/note{number}.md: is outside the workspace /ws. Copy it into /ws/sources first")
               for number in range(SHOWN + 2)]
    scanned = FileOutcome(path="sources/scan.pdf", action="failed", reason="sources/scan.pdf: has no text layer (a scanned PDF). Install tesseract-ocr")
    redirects = [FileOutcome(path=f"sources/old{number}.html", action="skipped", reason=f"sources/old{number}.html: is a page that redirects to new{number}.html")
                 for number in range(SHOWN + 3)]
    lines = IngestReport(outcomes=(*outside, scanned, *redirects)).problem_lines()
    assert [line for action, line in lines if action == "refused"] == [
        *(outcome.reason for outcome in outside[:SHOWN]), "2 more file(s) the same way: is outside the workspace /ws. Copy it into /ws/sources first"]
    assert [line for action, line in lines if action == "failed"] == [scanned.reason]  # control: another reason is shown on its own, uncounted
    assert [line for action, line in lines if action == "skipped"] == [*(outcome.reason for outcome in redirects[:SHOWN]), "3 more pages that hold no document of their own"]
    assert IngestReport(outcomes=tuple(outside[:SHOWN])).problem_lines() == [("refused", outcome.reason) for outcome in outside[:SHOWN]]  # no count line when none is left over


def test_a_sites_name_in_its_pages_titles_is_left_out_where_most_pages_of_the_folder_share_it(workspace, count_tokens):

    pages = {"descaling": "Descaling", "filters": "Filters and Lids", "timer": "The Boil Timer", "index": "Kettle Docs 2.0"}
    for name, heading in pages.items():
        title = heading if name == "index" else f"Kettle Docs 2.0: {heading}"
        write(workspace, f"docs/{name}.html", f"<html><head><title>{title}</title></head><body><div><p>{heading} is a part of "
                                             "the kettle manual that every owner should read once.</p></div></body></html>")
    # control: two pages alone cannot tell their name from their site's
    for name in ("lid", "base"):
        write(workspace, f"pair/{name}.html", f"<html><head><title>Kettle Docs 2.0: The {name.capitalize()}</title></head><body><div>"
                                              f"<p>The {name} is a part of the kettle that every owner should clean.</p></div></body></html>")
    ingest_paths(workspace, count_tokens=count_tokens)
    titles = {}
    for path in (workspace.root / "wiki" / "summaries").glob("*.md"):
        text = path.read_text(encoding="utf-8")
        source = re.search(r"- path: sources/\w+/(\w+)\.html", text).group(1)
        titles[source] = re.search(r"^title: (.+)$", text, re.MULTILINE).group(1).strip("'\"")
    assert {titles[name] for name in ("descaling", "filters", "timer")} == {"Descaling", "Filters and Lids", "The Boil Timer"}
    assert titles["index"] == "Kettle Docs 2.0"  # a title that is nothing but the site's name stays
    assert {titles[name] for name in ("lid", "base")} == {"Kettle Docs 2.0: The Lid", "Kettle Docs 2.0: The Base"}


@pytest.mark.parametrize(("titles", "affixes"), [
    (["SDL: Pandora", "SDL: WinRT", "SDL: Globals", "- i -"], ("SDL: ", "")),
    (["LinkedList in std::collections - Rust", "Iter in std::collections - Rust", "Union in std::collections - Rust"], ("", " - Rust")),
    (["CharSet (Lang 3.12 API)", "CharUtils (Lang 3.12 API)", "ArraySorter (Lang 3.12 API)", "FailableStream"], ("", " (Lang 3.12 API)")),
    (["Gtk – 4.0: Overview", "Gtk – 4.0: Actions", "Gtk.Button", "Gtk – 4.0: Building"], ("Gtk – 4.0: ", "")),
    (["Tutorial: Boiling", "Reference: Lids", "FAQ: Timers", "Tutorial: Filters"], ("", "")),  # control: no opening half of them share
    (["Lids | Kettle", "Timers | Kettle"], ("", "")),  # control: two pages are too few
])
def test_a_sites_name_is_the_opening_or_ending_most_titles_of_a_folder_share(titles, affixes):
    from llmwiki.ingest.html import site_affixes

    assert site_affixes(titles) == affixes


def test_a_page_is_read_when_another_page_of_its_folder_cannot_be(workspace, count_tokens, monkeypatch):
    from pathlib import Path

    for name in ("descaling", "filters", "lids", "timer"):
        write(workspace, f"docs/{name}.html", f"<html><head><title>Kettle Docs: {name.capitalize()}</title></head><body><div><p>The "
                                             f"{name} chapter is a part of the kettle manual that every owner should read.</p></div></body></html>")
    opened = Path.open

    def open_but_timer(self, *args, **kwargs):
        if self.name == "timer.html" and args[:1] == ("rb",):
            raise PermissionError(13, "Permission denied", str(self))
        return opened(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_but_timer)
    report = ingest_paths(workspace, count_tokens=count_tokens)
    outcomes = {outcome.path: outcome for outcome in report.outcomes}
    assert outcomes["sources/docs/descaling.html"].action == "ingested" and outcomes["sources/docs/filters.html"].action == "ingested"
    summary = next(path for path in (workspace.root / "wiki" / "summaries").glob("*.md") if "docs/descaling.html" in path.read_text(encoding="utf-8"))
    assert "title: Descaling\n" in summary.read_text(encoding="utf-8")  # the three pages that could be read still name the site
