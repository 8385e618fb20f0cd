"""Reviewers decide: verdicts that last, held pages, contested claims, the queue and the CI gate (both stores)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import KELP, services_for
from llmwiki.errors import StoreConflictError
from llmwiki.review import (
    ReviewError,
    apply_hold,
    decide,
    held_pages,
    page_under_wiki,
    release,
    resolve,
    review_of,
    review_page,
    review_queue,
    stored_review,
    summary,
)
from llmwiki.publish.wiki import ingest_paths

SUMMARY = "wiki/summaries/kelp.md"


def _cli(workspace, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "llmwiki", *args, "-w", str(workspace.root)], capture_output=True, text=True, timeout=600)


def test_an_accepted_sentence_stays_accepted_until_its_evidence_changes(wiki):
    verifier = services_for(wiki).verifier
    review = review_page(wiki, SUMMARY, verifier)
    assert [row.state for row in review.sentences] == ["unreviewed", "unreviewed"]
    decide(wiki, review, accept=[1], reviewer="ana")
    again = review_page(wiki, SUMMARY, verifier)  # the page and its sources are unchanged: not scored again
    assert again.verification.reused and again.sentences[0].state == "accepted" and again.sentences[1].state == "unreviewed"
    # The source's sentence that is the accepted sentence's evidence changes; the page itself is not rewritten.
    (wiki.sources_dir / "kelp.md").write_text(KELP.replace("shelters many fish.", "shelters many fish and seals."), encoding="utf-8")
    ingest_paths(wiki, [wiki.sources_dir / "kelp.md"], generate=False)
    changed = review_page(wiki, SUMMARY, verifier)
    assert not changed.verification.reused and changed.sentences[0].score.sentence == review.sentences[0].score.sentence
    assert changed.sentences[0].state == "changed since" and changed.sentences[0].verdict.reviewer == "ana"
    assert [item.kind for item in review_queue(wiki)] == ["changed since"]  # it waits for a reviewer again
    decide(wiki, changed, accept=[1], reviewer="ana")  # judged again on the new evidence
    assert stored_review(wiki, SUMMARY).sentences[0].state == "accepted" and review_queue(wiki) == []


@pytest.mark.slow
def test_verdicts_count_first_in_the_supported_share_and_the_gate(wiki):
    threshold = wiki.config.verification.threshold
    review = review_page(wiki, SUMMARY, services_for(wiki).verifier)
    assert review.supported_share(threshold) == review.model_share(threshold) == 1.0  # control: the model supports both
    decide(wiki, review, reject=[2], note="the source says autumn", reviewer="bo")
    after = review_of(wiki, SUMMARY, review.verification)
    assert after.supported_share(threshold) == 0.5 and after.model_share(threshold) == 1.0
    data = after.as_json(threshold)
    assert data["supported_share"] == 0.5 and data["model_supported_share"] == 1.0
    assert data["sentences"][1]["review"]["verdict"] == "reject" and data["sentences"][1]["review"]["note"] == "the source says autumn"
    assert data["sentences"][1]["model_supported"] and not data["sentences"][1]["supported"]
    gate = _cli(wiki, "verify", "--all", "--fail-under", "0.9")
    assert gate.returncode == 1 and f"under 90%: {SUMMARY} (50% supported)" in gate.stderr
    passing = _cli(wiki, "verify", "--all", "--fail-under", "0.5")  # control: at 50% it passes
    assert passing.returncode == 0, passing.stderr
    assert summary(wiki).verified >= 1 and 0 < summary(wiki).supported_share < 1


def test_bad_decisions_get_one_clear_error_and_record_nothing(wiki):
    review = review_page(wiki, SUMMARY, services_for(wiki).verifier)
    with pytest.raises(ReviewError, match="has sentences 1 to 2"):
        decide(wiki, review, accept=[3], reviewer="ana")
    with pytest.raises(ReviewError, match="NUL"):
        decide(wiki, review, reject=[1], note="bad\x00note", reviewer="ana")
    with pytest.raises(ReviewError, match="both accepted and rejected"):
        decide(wiki, review, accept=[1], reject=[1], reviewer="ana")
    for outside in ("../outside.md", "wiki_config.toml", "wiki/index.md", "sources/kelp.md", "wiki/concepts/none.md"):
        with pytest.raises(ReviewError):
            page_under_wiki(wiki, outside)
    assert wiki.store.verdicts(SUMMARY) == []  # nothing was recorded
    decide(wiki, review, accept=[1], reviewer="ana")  # control: a good decision is recorded
    with pytest.raises(StoreConflictError, match="just decided by ana"):  # bo's view was read before ana decided
        decide(wiki, review, reject=[1], note="no", reviewer="bo")
    assert [verdict.reviewer for verdict in wiki.store.verdicts(SUMMARY)] == ["ana"]


@pytest.mark.slow
def test_the_cli_lists_numbered_sentences_and_takes_verdicts(wiki):
    listed = _cli(wiki, "review", SUMMARY)
    assert listed.returncode == 0, listed.stderr
    assert "unreviewed" in listed.stdout and "Divers study" in listed.stdout
    decided = _cli(wiki, "review", SUMMARY, "--accept", "1", "--reject", "2", "--note", "spring is wrong", "--reviewer", "ana", "--json")
    assert decided.returncode == 0, decided.stderr
    data = json.loads(decided.stdout.splitlines()[-1])
    assert [item["review"]["state"] for item in data["sentences"]] == ["accepted", "rejected"] and data["supported_share"] == 0.5
    wrong = _cli(wiki, "review", SUMMARY, "--accept", "7")
    assert wrong.returncode == 1 and "has sentences 1 to 2" in wrong.stderr and "Traceback" not in wrong.stderr
    outside = _cli(wiki, "review", "../outside.md")
    assert outside.returncode == 1 and "only pages under" in outside.stderr and "Traceback" not in outside.stderr
    queue = _cli(wiki, "review", "--queue", "--json")
    assert queue.returncode == 0 and json.loads(queue.stdout) == []


def test_a_held_page_is_not_evidence_until_a_reviewer_releases_it(wiki):
    from llmwiki.read.select import select

    config = wiki.root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('hold = "none"', 'hold = "all"'), encoding="utf-8")
    from llmwiki.workspace import Workspace

    workspace = Workspace.open(wiki.root)
    question = "Which forest do divers study every spring?"
    assert SUMMARY in {item.path for item in select(workspace, question).items}  # control: before the hold it is evidence
    assert apply_hold(workspace, [SUMMARY], model_written=False, verifier=services_for(workspace).load_verifier) == []  # the extractive backend is not held
    assert apply_hold(workspace, [SUMMARY], model_written=True, verifier=services_for(workspace).load_verifier) == [SUMMARY]
    assert SUMMARY in held_pages(workspace) and "review: held" in (workspace.root / SUMMARY).read_text(encoding="utf-8")
    selection = select(workspace, question)
    assert SUMMARY not in {item.path for item in selection.items} and any("held for review" in note for note in selection.notes)
    assert [(item.kind, item.page) for item in review_queue(workspace)] == [("held page", SUMMARY)]
    commit = release(workspace, SUMMARY, reviewer="ana")
    assert commit and SUMMARY not in held_pages(workspace) and review_queue(workspace) == []
    assert SUMMARY in {item.path for item in select(workspace, question).items}
    log = subprocess.run(["git", "log", "--format=%s", "-3"], cwd=workspace.root, capture_output=True, text=True).stdout
    assert f"review: released {SUMMARY} (ana)" in log and "review: held 1 page(s) for review" in log


def test_a_contested_claim_survives_lint_until_resolved_and_the_resolution_is_committed(wiki, tmp_path):
    from models import tiny_model

    from llmwiki.lint import lint
    from llmwiki.workspace import Workspace

    concept = next((wiki.root / "wiki/concepts").glob("*.md")).relative_to(wiki.root).as_posix()
    other = "wiki/concepts/kelp-seasons.md"
    text = (wiki.root / concept).read_text(encoding="utf-8")
    (wiki.root / other).write_text(text.replace("every spring", "every autumn").replace("title: Kelp Forest", "title: Kelp seasons"), encoding="utf-8")
    ingest_paths(wiki, [wiki.root / other], generate=False)
    model = tiny_model(tmp_path / "nli", {0: "contradiction", 1: "entailment", 2: "neutral"}, favour=0)  # says "contradiction" to everything
    config = wiki.root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('model = "llmwiki-default"', f'model = "{model}"'), encoding="utf-8")
    workspace = Workspace.open(wiki.root)
    first = lint(workspace)
    contests = workspace.store.contests(status="open")
    assert contests and any("contested claim" in finding.detail for finding in first.findings if finding.kind == "contradiction")
    lint(workspace)  # found again: the same records, still open
    assert [contest.id for contest in workspace.store.contests(status="open")] == [contest.id for contest in contests]
    contest = contests[0]
    assert any(item.kind == "contested claim" and item.contest_id == contest.id for item in review_queue(workspace))
    assert contest.id in {row.id for row in review_page(workspace, contest.page_b, services_for(workspace).verifier).contests}  # both pages show it
    assert contest.id in {row.id for row in review_page(workspace, contest.page_a, services_for(workspace).verifier).contests}
    resolve(workspace, contest.id, keep="a", note="the source says spring", reviewer="ana", verifier=services_for(workspace).verifier)
    assert contest.id not in {row.id for row in workspace.store.contests(status="open")}
    rejected = [verdict for verdict in workspace.store.verdicts(contest.page_b) if verdict.verdict == "reject"]
    assert rejected and rejected[-1].note == "the source says spring"
    log = subprocess.run(["git", "log", "--format=%s", "-1"], cwd=workspace.root, capture_output=True, text=True).stdout
    assert f"review: contested claim {contest.id}: kept {contest.page_a} (ana)" in log
    later = lint(workspace)
    resolved = [finding for finding in later.findings if finding.kind == "contradiction" and f"contested claim {contest.id}," in finding.detail]
    assert resolved and resolved[0].severity == "info"  # resolved: no longer a warning


def test_recalibration_is_kept_only_when_it_agrees_with_held_out_verdicts_more_often():
    from llmwiki.verify.calibrate import Uncalibrated, refit

    rng = np.random.default_rng(0)
    # Reviewers of this workspace accept sentences the model scores 0.2-0.5 when coverage is high (paraphrases it does not follow).
    entailment = rng.uniform(0.2, 0.5, 200)
    coverage = rng.uniform(0, 1, 200)
    rows = np.column_stack([entailment, np.zeros(200), np.zeros(200), np.zeros(200), np.zeros(200), np.zeros(200), coverage])
    labels = (coverage > 0.5).astype(float)
    held_out = np.arange(200) % 10 < 3
    shipped = Uncalibrated("m")  # scores = P(entailment), all under 0.5: rejects everything
    outcome = refit(rows, labels, held_out, shipped=shipped, model="m", threshold=0.5, min_verdicts=50)
    assert outcome.kept and outcome.fitted_agreement > outcome.shipped_agreement and "Calibrated on 140 of your verdicts" in outcome.summary()
    few = refit(rows[:20], labels[:20], held_out[:20], shipped=shipped, model="m", threshold=0.5, min_verdicts=50)
    assert not few.kept and "needs 50" in few.summary()
    noise = refit(rows, rng.integers(0, 2, 200).astype(float), held_out, shipped=shipped, model="m", threshold=0.5, min_verdicts=50)
    assert noise.shipped_agreement is not None and (noise.kept == (noise.fitted_agreement > noise.shipped_agreement))


def test_a_changed_source_rechecks_the_pages_on_it_and_queues_what_changed(wiki):
    from llmwiki.review import recheck_sources

    verifier = services_for(wiki).verifier
    review = review_page(wiki, SUMMARY, verifier)
    threshold = wiki.config.verification.threshold
    assert all(row.score.supported(threshold) for row in review.sentences)  # control: both supported before
    decide(wiki, review, accept=[1], reviewer="ana")
    assert recheck_sources(wiki, ["sources/volta.md"], verifier).flipped == []  # a source the page does not rest on: nothing flips
    changed = KELP.replace("shelters many fish.", "shelters many fish and seals.").replace(" Divers study the Kelp Forest every spring.", "")
    (wiki.sources_dir / "kelp.md").write_text(changed, encoding="utf-8")
    ingest_paths(wiki, [wiki.sources_dir / "kelp.md"], generate=False)  # the page is not rewritten: it now says what the source no longer does
    recheck = recheck_sources(wiki, ["sources/kelp.md"], verifier)
    assert SUMMARY in recheck.pages
    assert [(page, number, now) for page, number, _, now in recheck.flipped] == [(SUMMARY, 2, False)]  # the divers are gone from the source
    assert [(page, number, verdict) for page, number, _, verdict in recheck.no_longer_holding] == [(SUMMARY, 1, "accept")]
    assert "sentence 2 now unsupported" in "\n".join(recheck.lines())
    kinds = sorted(item.kind for item in review_queue(wiki))
    assert kinds == ["changed since", "re-check"]
    current = stored_review(wiki, SUMMARY)
    decide(wiki, current, accept=[1], reject=[2], note="no divers now", reviewer="ana")
    assert review_queue(wiki) == []  # judged: nothing waits


@pytest.mark.slow
def test_cli_ingest_reports_the_recheck(wiki):
    verified = _cli(wiki, "verify", "--all")
    assert verified.returncode == 0, verified.stderr
    (wiki.sources_dir / "kelp.md").write_text(KELP.replace(" Divers study the Kelp Forest every spring.", ""), encoding="utf-8")
    result = _cli(wiki, "ingest", "--no-wiki")
    assert result.returncode == 0, result.stderr
    assert "Re-check:" in result.stdout and "now unsupported" in result.stdout
    quiet = _cli(wiki, "ingest", "--no-wiki")  # control: nothing changed, no re-check
    assert quiet.returncode == 0 and "Re-check" not in quiet.stdout


@pytest.mark.slow
def test_watch_ingests_a_changed_source_and_stops_cleanly_on_ctrl_c(wiki):
    import signal
    import threading
    import time

    process = subprocess.Popen([sys.executable, "-m", "llmwiki", "watch", "-w", str(wiki.root), "--debounce-ms", "300"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")), daemon=True)
    reader.start()

    def wait_for(text: str, timeout: float = 120) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in list(lines)):
                return True
            time.sleep(0.2)
        return False

    try:
        assert wait_for("Watching"), lines
        time.sleep(1.0)  # the watcher is started just after it says so
        (wiki.sources_dir / ".draft.md").write_text("# Draft\n\nNot yet.\n", encoding="utf-8")  # hidden: left alone
        (wiki.sources_dir / "tides.md").write_text("# Tides\n\nThe Moon raises the Tides twice a day.\n", encoding="utf-8")
        assert wait_for("ingested  sources/tides.md"), lines
    finally:
        process.send_signal(signal.SIGINT)
        rest, stderr = process.communicate(timeout=60)  # what the reader thread had not taken yet
        reader.join(timeout=10)
        lines.extend(rest.splitlines())
    assert process.returncode == 0, stderr
    assert any("Stopped watching." in line for line in lines) and "Traceback" not in stderr
    assert wiki.store.document_by_path("sources/tides.md") is not None and wiki.store.document_by_path("sources/.draft.md") is None
    assert (wiki.root / "wiki/summaries/tides.md").is_file()  # its page was written as `llmwiki ingest` writes it


def test_an_edited_held_page_is_released_once_it_passes(wiki):
    from llmwiki.maintain import page_version, save_page
    from llmwiki.pages import split_frontmatter
    from llmwiki.review import release_if_passing

    config = wiki.root / "wiki_config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('hold = "none"', 'hold = "all"'), encoding="utf-8")
    from llmwiki.workspace import Workspace

    workspace = Workspace.open(wiki.root)
    assert release_if_passing(workspace, SUMMARY, verifier=services_for(workspace).load_verifier) is None  # control: not held, nothing done
    apply_hold(workspace, [SUMMARY], model_written=True, verifier=services_for(workspace).load_verifier)
    _, body = split_frontmatter((workspace.root / SUMMARY).read_text(encoding="utf-8"))
    wrong = body.replace("Divers study", "Astronauts bake cakes near").replace("shelters many fish", "sells used cars to urchins")
    save_page(workspace, SUMMARY, wrong, expected_version=page_version(workspace, SUMMARY))
    assert "still held" in release_if_passing(workspace, SUMMARY, verifier=services_for(workspace).load_verifier)  # nothing it says is in the source: held
    save_page(workspace, SUMMARY, body, expected_version=page_version(workspace, SUMMARY))  # edited back to what the source says
    assert "released" in release_if_passing(workspace, SUMMARY, verifier=services_for(workspace).load_verifier)
    assert SUMMARY not in held_pages(workspace)


def test_the_status_summary_reads_every_verification_on_one_connection(wiki, store_kind, monkeypatch):
    if store_kind != "duckdb":
        pytest.skip("counts DuckDB file connections")
    from llmwiki.store.duckdb_store import DuckDBStore
    from llmwiki.verify import wiki_pages

    verifier = services_for(wiki).verifier
    pages = wiki_pages(wiki)
    for page in pages:
        review_page(wiki, page, verifier)
    decide(wiki, stored_review(wiki, SUMMARY), reject=[1], reviewer="bo")
    opened = []
    original = DuckDBStore._open
    monkeypatch.setattr(DuckDBStore, "_open", lambda self: opened.append(1) or original(self))
    for page in pages:  # the control: page by page, outside a session, a connection a lookup
        stored_review(wiki, page)
    assert len(opened) > len(pages)
    opened.clear()
    result = summary(wiki)
    assert len(opened) == 1
    assert result.verified == len(pages) and result.unreviewed >= 0 and 0 < result.supported_share < 1  # the verdict counted first
