"""A workspace made by the release before versioned extractors moves over on the next `llmwiki ingest`.

tests/fixtures/legacy/workspace-0.1.tar.gz was made by that release (tests/fixtures/legacy/make_legacy.sh): an HTML
page its extractor read with navigation, permalinks and line breaks, a saved answer citing one of its chunks, the
answer's verification and a reviewer's verdict on its first sentence.
"""

from __future__ import annotations

import re
import tarfile

import pytest

from conftest import FIXTURES, services_for
from llmwiki.ingest.extract import EXTRACTOR_VERSIONS
from llmwiki.pages import CITATION, read_page
from llmwiki.publish.relocate import quoted_before, relocated
from llmwiki.records import Chunk
from llmwiki.text import text_key

LEGACY = FIXTURES / "legacy" / "workspace-0.1.tar.gz"
ANSWER = "wiki/answers/what-switches-the-kettle-off-when-the-water-boils.md"


@pytest.fixture
def legacy(tmp_path):
    from llmwiki.workspace import Workspace

    with tarfile.open(LEGACY) as archive:
        archive.extractall(tmp_path, filter="data")
    return Workspace.open(tmp_path / "ws")


def test_an_older_workspace_is_read_again_and_keeps_its_citations_and_verdicts(legacy):
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.review import stored_review
    from llmwiki.verify.page import load_verification, pages_needing_verification, verify_page

    store = legacy.store
    before = {document.path: document.parser for document in store.documents(kind="source")}
    assert before["sources/kettles.html"].startswith("beautifulsoup")  # what the old release recorded
    old_answer = read_page(legacy.root, ANSWER).body
    assert pages_needing_verification(legacy, [ANSWER]) == []

    report = ingest_paths(legacy)
    assert report.count("re-extracted") == 2 and not report.problems
    assert {document.parser.split(" (")[0] for document in store.documents(kind="source")} == {f"html {EXTRACTOR_VERSIONS['html']}", f"markdown {EXTRACTOR_VERSIONS['markdown']}"}
    summary = (legacy.root / "wiki/summaries/kettles.md").read_text(encoding="utf-8")
    assert "¶" not in summary and "Permalink" not in summary and "next" not in summary
    assert f"read: html {EXTRACTOR_VERSIONS['html']}" in summary  # the summary says which extractor its source was read with
    # The saved answer was not rewritten, but every citation now names a chunk that exists and holds its quote.
    body = read_page(legacy.root, ANSWER).body
    assert body != old_answer and ANSWER in report.relocated and not report.quotes_gone
    cited = [int(match.group(1)) for match in CITATION.finditer(body) if not body[match.start():].startswith(f"[c{match.group(1)}]:")]
    targets = store.citation_targets(cited)
    assert set(cited) <= set(targets)
    chunks = {chunk.id: chunk for document in store.documents(kind="source") for chunk in store.chunks(document.id)}
    for match in CITATION.finditer(body.split("\n\n[c")[0]):
        quote = re.sub(r"\[[^\]]*\]", " ", quoted_before(body, match.start()))  # an answer's "[name]" for a pronoun aside
        assert text_key(quote) in text_key(chunks[int(match.group(1))].text)
    # Its verification no longer holds; verified again, the reviewer's verdict on the unchanged sentence still does.
    assert pages_needing_verification(legacy, [ANSWER]) == [ANSWER]
    services = services_for(legacy)
    verify_page(legacy, ANSWER, services.load_verifier())
    review = stored_review(legacy, ANSWER)
    assert review.sentences[0].state == "accepted" and review.sentences[0].verdict.reviewer == "Legacy Reviewer"
    assert load_verification(legacy, ANSWER).outdated is False

    again = ingest_paths(legacy)  # the control: a second ingest finds nothing to read again
    assert again.count("re-extracted") == 0 and again.count("unchanged") == 2 and not again.relocated


def _chunk(chunk_id: int, text: str) -> Chunk:
    return Chunk(page_number=1, start=0, end=len(text), text=text, token_count=len(text.split()), id=chunk_id, document_id=1)


def test_a_citation_moves_to_the_chunk_holding_its_quote_and_a_lost_quote_is_reported():
    body = "A bimetallic strip switches the kettle off. [c3] Kettles were made of copper. [c3]\n\n[c3]: ../../sources/k.html \"p.1\"\n"
    chunks = {"sources/k.html": [_chunk(8, "Intro text."), _chunk(9, "A bimetallic **strip** switches the kettle\noff.")]}
    result = relocated(body, existing=set(), sources={3: "sources/k.html"}, chunks_by_source=chunks)
    assert result.body.startswith("A bimetallic strip switches the kettle off. [c9] Kettles were made of copper. [c3]")
    assert result.moved == {3: {9}} and result.gone == [(3, "sources/k.html")]
    kept = relocated(body, existing={3}, sources={3: "sources/k.html"}, chunks_by_source=chunks)  # the control: a live id stays
    assert kept.body == body and not kept.moved and not kept.gone
