from __future__ import annotations

import subprocess

import pytest

from llmwiki.publish.wiki import ingest_paths
from llmwiki.maintain import MaintenanceError, plan_withdrawal, withdraw
from llmwiki.read.search import search
from llmwiki.verify import verify_page



class Exact:
    name = "exact-test"

    def score(self, premises, hypotheses):
        import numpy as np

        return np.array([[1.0, 0.0, 0.0] if h.rstrip(".") in p else [0.0, 1.0, 0.0] for p, h in zip(premises, hypotheses)])




BOTH = "wiki/answers/both.md"


def _answer_on_both(workspace) -> None:
    """A saved answer that rests on both sources without a section per source: a withdrawal leaves it stale."""
    (workspace.root / "wiki/answers").mkdir(exist_ok=True)
    (workspace.root / BOTH).write_text(
        "---\ntitle: Both\ntype: answer\nsources:\n- path: chat\n- path: sources/a.md\n- path: sources/b.md\n---\n\n# Both\n\n"
        "The Kelp Forest shelters many fish. Surveyors mapped the Kelp Forest along the coast.\n", encoding="utf-8")
    ingest_paths(workspace, [workspace.root / BOTH])


def test_withdrawal_cascade(reef):
    workspace = reef
    # A saved answer resting only on a's summary is derived only from a page that will be removed.
    answer_path = "wiki/answers/divers.md"
    (workspace.root / "wiki/answers").mkdir(exist_ok=True)
    (workspace.root / answer_path).write_text(
        "---\ntitle: Divers\ntype: answer\nsources:\n- path: chat\n- path: wiki/summaries/a.md\n---\n\n# Divers\n\nDivers study the Kelp Forest every spring.\n",
        encoding="utf-8")
    ingest_paths(workspace, [workspace.root / answer_path])
    _answer_on_both(workspace)
    verify_page(workspace, BOTH, Exact())
    concept_path = "wiki/concepts/kelp-forest.md"
    assert "summaries/a.md" in (workspace.root / concept_path).read_text(encoding="utf-8")  # control: the shared concept links a's summary
    plan = plan_withdrawal(workspace, "sources/a.md")
    assert set(plan.deleted) == {"wiki/summaries/a.md", answer_path}
    # The dry run says what the run does: the shared concept page is rewritten (not marked stale), the answer marked stale.
    assert list(plan.rewritten) == [concept_path] and list(plan.stale) == [BOTH]
    assert f"would rewrite {concept_path}" in "\n".join(plan.lines()) and f"would mark stale {concept_path}" not in "\n".join(plan.lines())

    report = withdraw(workspace, "sources/a.md")
    root = workspace.root
    assert not (root / "wiki/summaries/a.md").exists() and not (root / answer_path).exists()
    assert (root / "wiki/summaries/b.md").exists()  # control: the other source's summary stays
    # The shared concept page loses a's section and its link to a's deleted summary, and keeps b's: nothing stale in it.
    concept_text = (root / concept_path).read_text(encoding="utf-8")
    assert "summaries/a.md" not in concept_text and "sources/a.md" not in concept_text and "Surveyors mapped" in concept_text
    assert report.rewritten_pages == list(plan.rewritten) and workspace.store.document_by_path(concept_path).stale_since is None
    # The answer on both sources has no section per source: kept, marked stale, with the sentences that rested on a.
    answer = workspace.store.document_by_path(BOTH)
    assert answer is not None and answer.stale_since is not None and report.stale_pages == list(plan.stale) == [BOTH]
    assert workspace.store.document_by_path("wiki/summaries/b.md").stale_since is None  # control
    assert report.affected_sentences[BOTH] == ["The Kelp Forest shelters many fish."]  # it rested on a; the one from b did not
    assert (root / "withdrawn/a.md").exists() and not (root / "sources/a.md").exists()
    assert f"stale {BOTH}" in report.summary() and f"rewrote {concept_path}" in report.summary()
    index = (root / "wiki/index.md").read_text(encoding="utf-8")
    assert "summaries/a.md" not in index and "summaries/b.md" in index
    log = subprocess.run(["git", "log", "--format=%s", "-n", "1"], cwd=root, capture_output=True, text=True).stdout
    assert log.startswith("withdraw: sources/a.md")
    assert "sources/a.md" not in subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout
    from llmwiki.lint import lint

    assert [finding for finding in lint(workspace).findings if finding.kind == "broken-link"] == []  # no link to a deleted page is left

    # Search no longer finds the withdrawn source; the stale page is found and labelled.
    assert search(workspace, "shelters", scope="sources").case == "no_match"
    assert [hit.path for hit in search(workspace, "surveyors", scope="sources").hits] == ["sources/b.md"]  # control
    stale_hits = [hit for hit in search(workspace, "surveyors mapped coast", scope="wiki").hits if hit.path == BOTH]
    assert stale_hits and stale_hits[0].stale and stale_hits[0].label.endswith("[stale]")
    # A later scan of sources/ does not bring it back.
    assert ingest_paths(workspace).count("ingested") == 0
    # Stale pages are listed with their reason, and can be cleaned up.
    from llmwiki.maintain import delete_stale, stale_pages

    assert stale_pages(workspace) == [(BOTH, "source sources/a.md was withdrawn")]
    pages, commit = delete_stale(workspace)
    assert pages == [BOTH] and commit
    assert not (root / BOTH).exists() and stale_pages(workspace) == []
    assert (root / "wiki/summaries/b.md").exists() and (root / concept_path).exists()


def test_withdrawing_an_unknown_or_a_non_source_document_changes_nothing(reef):
    workspace = reef
    before = sorted(path.name for path in (workspace.root / "wiki").rglob("*.md"))
    with pytest.raises(MaintenanceError, match="no such document"):
        withdraw(workspace, "sources/missing.md")
    with pytest.raises(MaintenanceError, match="is a wiki page, not a source"):
        withdraw(workspace, "wiki/summaries/a.md")
    assert sorted(path.name for path in (workspace.root / "wiki").rglob("*.md")) == before
    assert workspace.store.document_by_path("sources/a.md").status == "ready"


def test_edit_keeps_frontmatter_and_refuses_a_stale_version(reef):
    from llmwiki.maintain import EditConflictError, save_page
    from llmwiki.pages import read_page

    workspace = reef
    page = "wiki/summaries/b.md"
    verify_page(workspace, page, Exact())
    version = workspace.store.document_by_path(page).version
    new_version, commit = save_page(workspace, page, "# Coast survey\n\nSurveyors mapped the Kelp Forest in 1999.\n", expected_version=version)
    edited = read_page(workspace.root, page)
    assert new_version == version + 1 and commit
    assert edited.meta["sources"][0]["path"] == "sources/b.md" and edited.meta["edited"] is True
    assert "in 1999" in edited.body
    from llmwiki.verify import load_verification

    assert load_verification(workspace, page) is None  # the edit dropped the stored verification
    assert [hit.path for hit in search(workspace, "1999", scope="wiki").hits] == [page]
    with pytest.raises(EditConflictError, match=f"changed since version {version}") as caught:
        save_page(workspace, page, "# Coast survey\n\nA stale edit.\n", expected_version=version)
    assert "-Surveyors mapped the Kelp Forest in 1999." in str(caught.value) and "+A stale edit." in str(caught.value)
    assert "in 1999" in read_page(workspace.root, page).body  # nothing was overwritten
    (workspace.root / page).unlink()
    with pytest.raises(MaintenanceError, match="deleted meanwhile"):
        save_page(workspace, page, "x", expected_version=new_version)


def test_a_withdrawal_that_fails_midway_leaves_the_store_as_it_was(reef, monkeypatch):
    _answer_on_both(reef)  # a page the withdrawal marks stale
    store_class = type(reef.store)
    before = sorted((document.path, document.stale_since) for document in reef.store.documents())

    def broken(self, document_id, reason):
        raise RuntimeError("the server went away")

    monkeypatch.setattr(store_class, "mark_stale", broken)
    with pytest.raises(RuntimeError, match="went away"):
        withdraw(reef, "sources/a.md")
    assert sorted((document.path, document.stale_since) for document in reef.store.documents()) == before  # the removal was undone too
    monkeypatch.undo()  # control: the same withdrawal goes through
    report = withdraw(reef, "sources/a.md")
    assert report.stale_pages and reef.store.document_by_path("sources/a.md") is None
