"""The notebooks run headless as scripts (as CI runs them), and ask.py in a real browser."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import REPO, services_for

pytestmark = pytest.mark.slow  # servers, browsers or bench scripts in subprocesses: make test-fast leaves these out

NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """A fresh copy of the sample workspace, ingested through the ingest notebook."""
    root = tmp_path_factory.mktemp("notebooks") / "ws"
    shutil.copytree(REPO / "workspace", root, ignore=shutil.ignore_patterns(".llmwiki", "wiki", ".git"))
    config = root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('folder = "../datasets"', f'folder = "{REPO / "datasets"}"'), encoding="utf-8")
    result = run_notebook("ingest.py", root, "--run")
    assert result.returncode == 0, result.stderr
    assert "7 files: 7 ingested" in result.stdout
    return root


def run_notebook(name: str, workspace: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(NOTEBOOKS / name), "--workspace", str(workspace), *extra], capture_output=True, text=True, timeout=300)


def test_notebooks_pass_marimo_check():
    result = subprocess.run([sys.executable, "-m", "marimo", "check", str(NOTEBOOKS)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ingest_notebook_writes_the_wiki_and_lists_documents(sample):
    assert (sample / "wiki" / "summaries" / "otter.md").exists()
    again = run_notebook("ingest.py", sample, "--run")
    assert again.returncode == 0 and "7 files: 7 unchanged" in again.stdout
    assert "(0 failed)" in again.stdout


def test_ask_notebook_answers_with_citations_and_saves(sample):
    result = run_notebook("ask.py", sample, "--question", "Who discovered radioactivity?", "--save")
    assert result.returncode == 0, result.stderr
    assert "readout: Selected" in result.stdout
    citations = int(result.stdout.split("citations: ")[1].split()[0])
    assert citations >= 1
    assert "saved: wiki/answers/who-discovered-radioactivity.md" in result.stdout
    assert (sample / "wiki" / "answers" / "who-discovered-radioactivity.md").exists()
    assert "verified: " in result.stdout and "sentences" in result.stdout  # the saved page is verified right after


def test_ask_notebook_without_a_question_answers_nothing(sample):
    result = run_notebook("ask.py", sample)
    assert result.returncode == 0, result.stderr
    assert "answer:" not in result.stdout  # gated behind the Ask button


def test_datasets_notebook_shows_a_category(sample):
    result = run_notebook("dataset_explorer.py", sample, "--category", "scientists")
    assert result.returncode == 0, result.stderr
    assert "scientists: 10 of 10 rows" in result.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


CHROMIUM = "/usr/bin/chromium"
needs_browser = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)")
_LITERAL_NONE = re.compile(r"(?<![\w-])None(?![\w-])")


@contextmanager
def in_browser(notebook: str, workspace: Path, *arguments: str):
    """The notebook served by `marimo run` on the workspace, open in Chromium: yields (page, console errors).

    On the way out the page is saved as a screenshot in test-artifacts/, and the test fails on any
    console error or page error, and on a literal "None" anywhere in the page's text.
    """
    playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed (.ci/run installs it)")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "marimo", "run", str(NOTEBOOKS / notebook), "--headless", "--host", "127.0.0.1", "--port", str(port), "--no-token",
         "--", "--workspace", str(workspace), *arguments],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        with playwright.sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=CHROMIUM,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
            )
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            errors: list[str] = []
            page.on("console", lambda message: errors.append(f"console: {message.text}") if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
            page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
            try:
                yield page, errors
            except BaseException:
                page.screenshot(path=str(ARTIFACTS / f"{Path(notebook).stem}-notebook-failed.png"), full_page=True)
                raise
            page.wait_for_timeout(1500)  # late errors (a chart's tooltip, a failed fetch) arrive after the last step
            page.screenshot(path=str(ARTIFACTS / f"{Path(notebook).stem}-notebook.png"), full_page=True)
            text = page.inner_text("body")
            browser.close()
        assert errors == [], errors
        nones = [text[max(0, match.start() - 60): match.end() + 20] for match in _LITERAL_NONE.finditer(text)]
        assert nones == [], f"a literal None on the page: {nones}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def test_the_browser_check_catches_a_literal_none_and_not_words_that_contain_it():
    """The control for in_browser's literal-None check (console errors are whatever Chromium reports)."""
    assert _LITERAL_NONE.search("score None here") and not _LITERAL_NONE.search("Nonetheless, None-such and NoneType")


@needs_browser
def test_ask_notebook_in_a_real_browser(sample):
    with in_browser("ask.py", sample) as (page, _):
        box = page.get_by_placeholder("Ask a question about your sources…")
        box.wait_for(timeout=60_000)
        box.click()
        page.keyboard.type("When was Coulomb born?")
        page.keyboard.press("Tab")
        page.get_by_role("button", name="Ask").click()
        page.get_by_text("Selection.").wait_for(timeout=60_000)
        page.get_by_text("Citations (select one").wait_for(timeout=30_000)
        page.get_by_role("button", name="Save last answer as page").click()
        page.get_by_text("Saved as").wait_for(timeout=30_000)
    assert (sample / "wiki" / "answers" / "when-was-coulomb-born.md").exists()


@needs_browser
def test_review_notebook_in_a_real_browser_shows_stored_scores_and_the_threshold_moves_verdicts(sample):
    from llmwiki.verify import verify_pages, wiki_pages
    from llmwiki.workspace import Workspace

    from llmwiki.maintain import page_version, save_page
    from llmwiki.pages import read_page

    workspace = Workspace.open(sample)
    page_path = next(page for page in wiki_pages(workspace) if page.startswith("wiki/summaries/"))
    body = read_page(workspace.root, page_path).body  # plus one sentence with a changed fact: unsupported at 0.5
    heading, rest = body.split("\n", 1)
    save_page(workspace, page_path, f"{heading}\n\nThe first battery was built in Lisbon in 1955.\n{rest}", expected_version=page_version(workspace, page_path))
    verification = verify_pages(workspace, [page_path], services_for(workspace).verifier)[0][0]
    total, supported = len(verification.sentences), sum(sentence.supported(0.5) for sentence in verification.sentences)
    assert supported < total
    with in_browser("review.py", sample, "--page", page_path) as (page, _):
        page.get_by_text(f"{total} of {total} sentences shown ({supported} supported at 0.5)").wait_for(timeout=90_000)  # stored, at once
        other = page.context.browser.new_page()  # a second session on the same server (another reviewer, or a reload) renders them too
        other.goto(page.url, wait_until="domcontentloaded")
        other.get_by_text(f"{total} of {total} sentences shown ({supported} supported at 0.5)").wait_for(timeout=90_000)
        assert "Unique file handle conflict" not in other.inner_text("body")
        other.close()
        slider = page.get_by_role("slider").first
        slider.focus()
        slider.press("Home")  # threshold 0: every sentence counts as supported
        # The cells rerun under the suite's other worker: as long a wait as the first render's.
        page.get_by_text(f"{total} of {total} sentences shown ({total} supported at 0)").wait_for(timeout=90_000)
        page.get_by_text("Source at the chunk", exact=True).wait_for(timeout=30_000)  # the weakest sentence's source, opened at its chunk ...
        assert "Lisbon" in page.locator("mark").first.inner_text()  # ... with the changed fact marked in the sentence
        second = page.get_by_role("row").nth(2)  # another sentence, selected: it and its own chunk open
        sentence = second.get_by_role("cell").nth(3).inner_text().strip()  # checkbox, page, #, sentence
        second.get_by_role("checkbox").click()
        page.locator("blockquote").get_by_text(sentence[:40]).first.wait_for(timeout=30_000)
        page.get_by_text("unsupported only").click()  # none at threshold 0
        page.get_by_text(f"0 of {total} sentences shown").wait_for(timeout=30_000)


@needs_browser
def test_a_reviewer_accepts_rejects_and_resolves_in_the_review_notebook_and_a_reload_shows_it(sample, tmp_path):
    from llmwiki.review import stored_review
    from llmwiki.verify import verify_pages
    from llmwiki.workspace import Workspace

    root = tmp_path / "ws"
    shutil.copytree(sample, root)
    workspace = Workspace.open(root)
    first, second = sorted(path.relative_to(root).as_posix() for path in (root / "wiki" / "summaries").glob("*.md"))[:2]  # pages of several sentences
    verified = {result.page: result for result in verify_pages(workspace, [first, second], services_for(workspace).verifier)[0]}
    a, b = verified[first].sentences[0].sentence, verified[second].sentences[0].sentence
    contest_id, _ = workspace.store.save_contest(key="browser", page_a=first, sentence_a=a, source_a=None, page_b=second, sentence_b=b, source_b=None, score=0.9)
    with in_browser("review.py", root, "--page", first) as (page, _):
        page.get_by_text(re.compile(r"\d+ of \d+ sentences shown")).first.wait_for(timeout=90_000)
        page.get_by_role("heading", name="Review queue, oldest first (1 waiting)").wait_for(timeout=60_000)  # the contested pair waits
        page.get_by_role("row").nth(1).get_by_role("checkbox").click()
        reviewer = page.get_by_label("Reviewer")
        reviewer.fill("Ana")
        reviewer.press("Enter")
        page.get_by_role("button", name="Accept sentence").click()
        page.get_by_text(re.compile(r"sentence \d+: accepted by Ana")).wait_for(timeout=60_000)
        page.get_by_role("cell", name="accepted (Ana)").first.wait_for(timeout=60_000)  # the table, read again, shows the verdict
        for _ in range(5):  # the table is drawn again after the verdict; a click on the old one is lost
            page.wait_for_timeout(1500)
            page.get_by_role("row").nth(2).get_by_role("checkbox").check()
            if page.get_by_role("heading", name=re.compile("Decide sentence 2")).count():
                break
        page.get_by_role("heading", name=re.compile("Decide sentence 2")).wait_for(timeout=30_000)  # the other sentence is the one to decide
        note = page.get_by_label("Note (why)")
        note.fill("not in the source")
        note.press("Enter")
        page.get_by_role("button", name="Reject sentence").click()
        page.get_by_text(re.compile(r"sentence \d+: rejected by Ana")).wait_for(timeout=60_000)
        page.get_by_role("button", name="Resolve").click()
        page.get_by_text(f"Contested claim {contest_id} resolved: both by Ana.").wait_for(timeout=60_000)
        page.reload(wait_until="domcontentloaded")  # a new session reads it all from the store
        page.get_by_text("accepted (Ana)").first.wait_for(timeout=90_000)
        page.get_by_text("rejected (Ana: not in the source)").first.wait_for(timeout=30_000)
        page.get_by_text("Nothing waits for a reviewer.").wait_for(timeout=30_000)
    review = stored_review(Workspace.open(root), first)
    assert sorted(row.state for row in review.sentences if row.verdict is not None) == ["accepted", "rejected"]
    assert [contest.status for contest in workspace.store.contests()] == ["both"]


@needs_browser
def test_datasets_notebook_in_a_real_browser_draws_one_chart_per_metric(sample):
    with in_browser("dataset_explorer.py", sample, "--category", "scientists") as (page, _):
        page.get_by_text(re.compile(r"\d+ of \d+ rows")).first.wait_for(timeout=60_000)
        page.locator(".vega-embed").first.wait_for(timeout=60_000)
        page.wait_for_timeout(1000)
        charts = page.locator(".vega-embed").count()
    frame = run_notebook_frame(sample, "scientists")
    assert charts == frame.get_column("metric").n_unique() >= 2  # never two metrics summed in one bar


@needs_browser
def test_ingest_notebook_in_a_real_browser_ingests_a_new_file(sample):
    (sample / "sources" / "tides.md").write_text("# Tides\n\nThe Moon raises the Tides twice a day. Spring Tides follow the new and the full Moon.\n", encoding="utf-8")
    with in_browser("ingest.py", sample) as (page, _):
        page.get_by_role("button", name="Ingest").click()
        page.get_by_text(re.compile(r"1 ingested")).first.wait_for(timeout=120_000)
    assert (sample / "wiki" / "summaries" / "tides.md").exists()


@needs_browser
def test_maintain_notebook_in_a_real_browser_lints(sample):
    with in_browser("maintain.py", sample) as (page, _):
        page.get_by_role("button", name=re.compile("Run lint")).click()
        page.get_by_text(re.compile(r"\d+ finding\(s\)")).first.wait_for(timeout=180_000)


def run_notebook_frame(workspace: Path, category: str):
    from llmwiki.services import Services
    from llmwiki.workspace import Workspace

    return Services(Workspace.open(workspace)).datasets.read(category)


def test_review_notebook_has_one_row_per_sentence(sample):
    from llmwiki.verify import load_verification
    from llmwiki.workspace import Workspace

    result = run_notebook("review.py", sample, "--verify", "--page", "wiki/summaries/otter.md", "--page", "wiki/summaries/turtle.md")
    assert result.returncode == 0, result.stderr
    assert "verified 2 pages" in result.stdout and "0 failed" in result.stdout
    workspace = Workspace.open(sample)
    expected = sum(len(load_verification(workspace, page).sentences) for page in ("wiki/summaries/otter.md", "wiki/summaries/turtle.md"))
    assert f"sentences: {expected} rows" in result.stdout and expected > 0


def test_review_notebook_shows_stored_scores_without_verifying(sample):
    first = run_notebook("review.py", sample, "--verify", "--page", "wiki/summaries/otter.md")
    assert first.returncode == 0 and "verified 1 pages" in first.stdout
    stored = run_notebook("review.py", sample, "--page", "wiki/summaries/otter.md")  # opened, not verified
    assert stored.returncode == 0, stored.stderr
    assert "verified" not in stored.stdout  # nothing was re-scored ...
    rows = int(re.search(r"sentences: (\d+) rows", stored.stdout).group(1))
    assert rows > 0  # ... and the stored scores are there at once
    assert re.search(r"source at chunk: wiki/summaries/otter.md -> sources/otter.txt c\d+, excerpt marked", stored.stdout), stored.stdout
    unverified = run_notebook("review.py", sample, "--page", "wiki/concepts/" + sorted(path.name for path in (sample / "wiki" / "concepts").glob("*.md"))[0])
    assert "sentences: 0 rows" in unverified.stdout  # control: a page never verified shows none


@pytest.mark.parametrize("form", ["plain", "marimo-style"])
def test_notebook_arguments_work_both_ways_and_unknown_ones_are_refused(sample, form):
    separator = ["--"] if form == "marimo-style" else []
    result = subprocess.run([sys.executable, str(NOTEBOOKS / "dataset_explorer.py"), *separator, "--workspace", str(sample), "--category", "scientists"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "scientists: 10 of 10 rows" in result.stdout
    bad = subprocess.run([sys.executable, str(NOTEBOOKS / "dataset_explorer.py"), *separator, "--workspace", str(sample), "--categroy", "x"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "unknown argument(s) --categroy" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1  # one line, not a traceback


@pytest.mark.parametrize("notebook", ["ask.py", "ingest.py", "review.py", "maintain.py", "dataset_explorer.py"])
def test_every_notebook_says_in_one_line_that_a_folder_is_no_workspace(tmp_path, notebook):
    result = subprocess.run([sys.executable, str(NOTEBOOKS / notebook), "--workspace", str(tmp_path / "nonexistent")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "not an llmwiki workspace" in result.stderr and "llmwiki init" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_notebook_without_a_workspace_says_so_and_writes_nothing(tmp_path):
    before = sorted(path.name for path in (REPO / "workspace").iterdir())
    result = subprocess.run([sys.executable, str(NOTEBOOKS / "ask.py"), "--question", "Who discovered radioactivity?"], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path, env={key: value for key, value in os.environ.items() if key != "LLMWIKI_WORKSPACE"})
    assert result.returncode != 0 and "no workspace given" in result.stderr
    assert sorted(path.name for path in (REPO / "workspace").iterdir()) == before


def test_maintain_notebook_previews_a_withdrawal_without_changing_anything(sample):
    before = sorted(path.relative_to(sample).as_posix() for path in (sample / "wiki").rglob("*.md"))
    result = run_notebook("maintain.py", sample, "--preview", "sources/otter.txt")
    assert result.returncode == 0, result.stderr
    assert "preview sources/otter.txt:" in result.stdout and "page(s) deleted" in result.stdout
    assert sorted(path.relative_to(sample).as_posix() for path in (sample / "wiki").rglob("*.md")) == before


def test_maintain_notebook_lints_and_lists_history(sample, tmp_path):
    from llmwiki.workspace import Workspace

    root = tmp_path / "ws"
    shutil.copytree(sample, root)
    Workspace.init(root)  # the copy becomes its own git repository, so it has a history
    clean = run_notebook("maintain.py", root, "--lint")
    assert clean.returncode == 0, clean.stderr
    errors = int(re.search(r"lint: \d+ finding\(s\): (\d+) error, \d+ warning, \d+ info", clean.stdout).group(1))
    page = sorted((root / "wiki" / "concepts").glob("*.md"))[0]
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](nowhere.md).\n", encoding="utf-8")  # one broken link more
    result = run_notebook("maintain.py", root, "--lint")
    assert result.returncode == 0, result.stderr
    found = re.search(r"lint: ([1-9]\d*) finding\(s\): (\d+) error, \d+ warning, \d+ info", result.stdout)
    assert found and int(found.group(2)) > errors  # the planted link is found, and counted as an error
    assert re.search(r"history: [1-9]\d* change\(s\)", result.stdout)


_SHADOW_CHECK = """
import sys
import sentence_transformers  # imports transformers' Trainer, which imports `datasets` when it can find one
module = sys.modules.get("datasets")
print(getattr(module, "__file__", None) or "")
"""


def _imported_datasets(folder: Path) -> str:
    """The file that `import datasets` took when sentence-transformers loaded in a script run from ``folder``."""
    script = folder / "_shadow_check.py"
    script.write_text(_SHADOW_CHECK, encoding="utf-8")
    try:
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=folder)
    finally:
        script.unlink()
    return result.stdout.strip()


def test_no_notebook_or_bench_script_shadows_a_library_that_the_models_import(tmp_path):
    """A script's folder is first on sys.path when it runs: a notebooks/datasets.py was once taken for the `datasets`
    package when sentence-transformers loaded, and the ask notebook answered nothing, without an error."""
    for folder in (NOTEBOOKS, REPO / "bench"):
        assert not _imported_datasets(folder).startswith(str(folder)), folder
    (tmp_path / "datasets.py").write_text("x = 1\n", encoding="utf-8")  # control: a folder that shadows it is caught
    assert _imported_datasets(tmp_path) == str(tmp_path / "datasets.py")
