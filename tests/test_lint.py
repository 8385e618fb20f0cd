"""llmwiki lint: findings, NLI contradictions with their controls, and idempotent repairs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from llmwiki.publish.wiki import ingest_paths
from llmwiki.lint import lint, repair
from llmwiki.maintain import consistency_problems, withdraw
from llmwiki.verify import page_sentences
from conftest import services_for



class YearClash:
    """A stand-in NLI model: two sentences that differ only in a year contradict; others are neutral."""

    name = "year-clash-test"
    contradictions = True

    def __init__(self):
        self.calls = 0

    def score(self, premises, hypotheses):
        self.calls += len(premises)
        rows = []
        for premise, hypothesis in zip(premises, hypotheses):
            years = set(re.findall(r"\b1\d{3}\b", premise)) ^ set(re.findall(r"\b1\d{3}\b", hypothesis))
            same_words = re.sub(r"\b1\d{3}\b", "", premise) == re.sub(r"\b1\d{3}\b", "", hypothesis)
            rows.append([0.02, 0.03, 0.95] if years and same_words else [0.1, 0.85, 0.05])
        return np.array(rows)


class Reply:
    generates = True
    name = "reply-test"
    model = "test"

    def __init__(self, word):
        self.word, self.prompts = word, []

    def complete(self, messages, **_):
        from llmwiki.backends import Completion

        self.prompts.append(messages[-1]["content"])
        return Completion(text=self.word, model="test")


def concept(workspace, name: str, title: str, source: str, body: str) -> str:
    path = workspace.root / "wiki/concepts" / f"{name}.md"
    path.write_text(f"---\ntitle: {title}\ntype: concept\nsources:\n- path: {source}\n---\n\n# {title}\n\n{body}\n", encoding="utf-8")
    ingest_paths(workspace, [path])
    return f"wiki/concepts/{name}.md"


@pytest.fixture
def planted(reef):
    workspace = reef
    mapping = concept(workspace, "mapping", "Reef mapping", "sources/a.md",
                      "The Kelp Forest was first mapped in 1962. Divers study the Kelp Forest every spring with lamps.")
    survey = concept(workspace, "survey", "Reef survey", "sources/a.md",
                     "The Kelp Forest was first mapped in 1985. Divers count otters in the Kelp Forest every spring.")
    elsewhere = concept(workspace, "elsewhere", "Coast history", "sources/b.md",
                        "The Kelp Forest was first mapped in 1990. Surveyors walked the whole coast in one summer.")
    return workspace, mapping, survey, elsewhere


def test_lint_finds_a_planted_contradiction_and_not_a_consistent_pair(planted):
    workspace, mapping, survey, elsewhere = planted
    verifier = YearClash()
    report = lint(workspace, services=services_for(workspace, verifier=verifier, backend=Reply("unused")))
    contradictions = [finding for finding in report.findings if finding.kind == "contradiction"]
    assert len(contradictions) == 1
    found = contradictions[0]
    assert set(found.pages) == {mapping, survey} and found.severity == "warning" and found.score == pytest.approx(0.95)
    assert {"The Kelp Forest was first mapped in 1962.", "The Kelp Forest was first mapped in 1985."} == set(found.sentences)
    assert verifier.calls > 2  # the consistent pairs (the two "every spring" sentences) were scored too, and not flagged
    assert not any(elsewhere in finding.pages for finding in contradictions)  # 1990 is on a page sharing no source: not compared


class AlwaysClash(YearClash):
    """Every pair contradicts, as an NLI model trained on captions may read two sentences on different topics."""

    def score(self, premises, hypotheses):
        self.calls += len(premises)
        return np.array([[0.02, 0.03, 0.95]] * len(premises))


def test_sentences_quoting_their_shared_source_are_not_reported_as_contradicting(reef):
    workspace = reef
    quoted_a = concept(workspace, "fish", "Reef fish", "sources/a.md", "The Kelp Forest shelters many fish.")
    quoted_b = concept(workspace, "divers", "Reef divers", "sources/a.md", "Divers study the Kelp Forest every spring.")
    report = lint(workspace, services=services_for(workspace, verifier=AlwaysClash(), backend=Reply("unused")))
    assert not [f for f in report.findings if f.kind == "contradiction" and set(f.pages) == {quoted_a, quoted_b}]
    reworded = concept(workspace, "lamps", "Reef lamps", "sources/a.md", "Divers study the Kelp Forest every winter.")  # control: not a quote
    report = lint(workspace, services=services_for(workspace, verifier=AlwaysClash(), backend=Reply("unused")))
    assert [f for f in report.findings if f.kind == "contradiction" and reworded in f.pages]


def test_the_llm_confirms_or_declines_a_contradiction(planted):
    workspace, mapping, survey, _ = planted
    declined, confirmed = Reply("No."), Reply("yes")
    refused = [f for f in lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=declined)).findings if f.kind == "contradiction"]
    agreed = [f for f in lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=confirmed)).findings if f.kind == "contradiction"]
    assert refused[0].confirmed is False and refused[0].severity == "info"
    assert agreed[0].confirmed is True and agreed[0].severity == "warning"
    assert "1962" in declined.prompts[0] and "1985" in declined.prompts[0]


def test_contradiction_repair_writes_both_pages_once_and_verification_skips_it(planted):
    workspace, mapping, survey, _ = planted
    report = lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=Reply("yes")))
    pages, commit = repair(workspace, report)
    assert {mapping, survey} <= set(pages) and commit
    for page, other in ((mapping, "survey.md"), (survey, "mapping.md")):
        text = (workspace.root / page).read_text(encoding="utf-8")
        assert text.count("**Possible contradiction**") == 1 and f"]({other})" in text
        assert not any("Possible contradiction" in sentence.text for sentence in page_sentences(text))
    again, commit_again = repair(workspace, lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=Reply("yes"))))
    assert again == [] and commit_again is None  # idempotent
    assert consistency_problems(workspace) == []


def test_a_data_gap_is_marked_and_becomes_a_link_when_its_page_appears(planted):
    workspace, mapping, survey, _ = planted
    one = concept(workspace, "otters", "Otters", "sources/b.md", "Otters came back to Sea Otter Bay. Sea Otter Bay is cold.")
    two = concept(workspace, "coast", "Coastline", "sources/b.md", "Fishers left Sea Otter Bay in winter.")
    report = lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=Reply("yes")))
    gaps = [finding for finding in report.findings if finding.kind == "missing-page"]
    assert [finding.name for finding in gaps] == ["Sea Otter Bay"] and set(gaps[0].pages) == {one, two}
    repair(workspace, report)
    assert "TODO (data gap):** no page on Sea Otter Bay" in (workspace.root / one).read_text(encoding="utf-8")
    bay = concept(workspace, "sea-otter-bay", "Sea Otter Bay", "sources/b.md", "Sea Otter Bay lies north of the reef.")
    report = lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=Reply("yes")))
    assert not [finding for finding in report.findings if finding.kind == "missing-page"]
    pages, _ = repair(workspace, report)
    text = (workspace.root / one).read_text(encoding="utf-8")
    assert "TODO" not in text and "See also: [Sea Otter Bay](sea-otter-bay.md)" in text and one in pages
    assert (workspace.root / bay).exists()


def test_links_stale_pages_cross_references_orphans_and_thin_pages(planted):
    workspace, mapping, _, _ = planted
    clean = lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=Reply("yes")))
    assert not [f for f in clean.findings if f.kind in ("broken-link", "stale", "inconsistent")]  # control
    withdraw(workspace, "sources/b.md")
    page = workspace.root / mapping
    page.write_text(page.read_text(encoding="utf-8").replace("every spring", "every spring near the [pier](../concepts/pier.md)"), encoding="utf-8")
    report = lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=Reply("yes")))
    kinds = {finding.kind for finding in report.findings}
    assert {"broken-link", "inconsistent", "thin", "orphan", "missing-cross-reference"} <= kinds
    assert any(f.kind == "broken-link" and "pier.md" in f.detail and f.severity == "error" for f in report.findings)
    assert any(f.kind == "inconsistent" and mapping in f.pages for f in report.findings)  # edited behind the store's back
    assert any(f.kind == "missing-cross-reference" and "Kelp Forest" in f.detail for f in report.findings)
    assert report.findings[0].severity == "error"  # worst first


def test_without_an_nli_model_contradictions_are_skipped_and_the_report_says_so(planted):
    from llmwiki.workspace import Workspace

    workspace, *_ = planted
    shipped = lint(workspace, services=services_for(workspace, backend=Reply("yes")))  # the control: the shipped verifier is an NLI model
    assert not any("not an NLI model" in note for note in shipped.notes) and shipped.pairs_scored > 0
    config = workspace.root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('model = "llmwiki-default"', 'model = "lexical-overlap"'), encoding="utf-8")
    report = lint(Workspace.open(workspace.root), services=services_for(Workspace.open(workspace.root), backend=Reply("yes")))  # word overlap: no NLI model
    assert any("not an NLI model" in note for note in report.notes)
    assert not [finding for finding in report.findings if finding.kind == "contradiction"] and report.pairs_scored == 0


@pytest.mark.slow
def test_cli_lint_reports_and_fixes(planted):
    import subprocess
    import sys

    workspace, *_ = planted
    config = workspace.root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('model = "llmwiki-default"', 'model = "lexical-overlap"'), encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "llmwiki", "lint", "-w", str(workspace.root), "--fix"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "[info] thin:" in result.stdout and "finding(s)" in result.stdout and "not an NLI model" in result.stdout
    page = workspace.root / "wiki/concepts/mapping.md"
    page.write_text(page.read_text(encoding="utf-8") + "\nSee [nowhere](nowhere.md).\n", encoding="utf-8")
    broken = subprocess.run([sys.executable, "-m", "llmwiki", "lint", "-w", str(workspace.root), "--severity", "error"], capture_output=True, text=True, timeout=300)
    assert broken.returncode == 2 and "[error] broken-link" in broken.stdout and "[info]" not in broken.stdout
    assert "broken-citation" not in broken.stdout  # the control: every citation of the planted wiki names a passage
    page.write_text(page.read_text(encoding="utf-8") + "\nThe kelp grows fast. [c999999] It is green. [cabc]\n", encoding="utf-8")
    cited = subprocess.run([sys.executable, "-m", "llmwiki", "lint", "-w", str(workspace.root), "--severity", "error"], capture_output=True, text=True, timeout=300)
    assert cited.returncode == 2 and "[error] broken-citation" in cited.stdout and "[c999999]" in cited.stdout and "[cabc]" in cited.stdout


def test_lint_scores_pairs_with_a_configured_nli_model(planted, tmp_path):
    from models import tiny_model

    from llmwiki.workspace import Workspace

    workspace, *_ = planted
    model = tiny_model(tmp_path / "nli", {0: "contradiction", 1: "entailment", 2: "neutral"}, favour=0)  # says "contradiction" to everything
    config = workspace.root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('model = "llmwiki-default"', f'model = "{model}"'), encoding="utf-8")
    report = lint(Workspace.open(workspace.root), services=services_for(Workspace.open(workspace.root), backend=Reply("yes")))
    assert report.pairs_scored > 0 and all("contested claim" in note for note in report.notes)  # only the note that records them
    flagged = [finding for finding in report.findings if finding.kind == "contradiction"]
    assert flagged and all(finding.score > 0.99 for finding in flagged)  # the label was found by name, at index 0


@pytest.mark.parametrize("name", ["name with spaces é.md", "brackets (draft) [v2].md", "line\nbreak.md"])
def test_citations_of_sources_with_any_file_name_are_links_lint_accepts(workspace, name):
    (workspace.sources_dir / name).write_text("# Odd name\n\nThe Kelp Forest shelters many fish along the northern coast every spring.\n", encoding="utf-8")
    ingest_paths(workspace)
    summary = next((workspace.root / "wiki" / "summaries").glob("*.md")).read_text(encoding="utf-8")
    assert "[c" in summary and " " not in summary.split("]: ", 1)[1].split(" ", 1)[0]  # the destination is one token
    report = lint(workspace)
    assert not [finding for finding in report.findings if finding.kind == "broken-link"], report.findings
    page = next((workspace.root / "wiki" / "summaries").glob("*.md"))
    page.write_text(page.read_text(encoding="utf-8").replace("](../", "](../missing-"), encoding="utf-8")  # control: a broken link is still found
    page.write_text(page.read_text(encoding="utf-8") + "\n[broken]: ../../sources/no%20such%20file.md\n", encoding="utf-8")
    assert [finding for finding in lint(workspace).findings if finding.kind == "broken-link"]


def test_lint_reports_progress_by_stage_with_counts(planted):
    workspace, *_ = planted
    calls = []
    lint(workspace, services=services_for(workspace, verifier=YearClash(), backend=Reply("yes")), on_progress=lambda done, total, stage: calls.append((done, total, stage)))
    stages = list(dict.fromkeys(stage for _, _, stage in calls))
    assert stages == ["pages", "sentence pairs"]
    pages = [call for call in calls if call[2] == "pages"]
    assert [done for done, _, _ in pages] == list(range(1, pages[0][1] + 1)) and pages[0][1] >= 3  # every page counted once, in order
    pairs = [call for call in calls if call[2] == "sentence pairs"]
    assert pairs[-1][0] == pairs[-1][1] > 0  # ends at its total
