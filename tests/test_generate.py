from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from conftest import REPO
from llmwiki.backends import BackendError, Completion
from llmwiki.generate import split_sections, validate_aliases
from llmwiki.publish.wiki import ingest_paths
from llmwiki.pages import CITATION, CONCEPTS, read_page, split_frontmatter
from llmwiki.tracing import read_spans
from llmwiki.workspace import Workspace
from conftest import services_for


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("sample") / "ws"
    shutil.copytree(REPO / "workspace", root, ignore=shutil.ignore_patterns(".llmwiki", "wiki"))
    workspace = Workspace.init(root)
    report = ingest_paths(workspace)
    assert not report.problems
    return workspace, report


def normalise(text: str) -> str:
    return " ".join(text.split())


def quoted_sentences(body: str) -> list[tuple[str, list[int]]]:
    """(sentence, cited chunk ids) for every cited sentence of a page body."""
    prose = "\n".join(line for line in body.splitlines() if not line.startswith(("#", "[c", "<!--", "- [")))
    results = []
    for match in re.finditer(r"(.+?)((?:\s\[c\d+\])+)", prose, flags=re.DOTALL):
        sentence = normalise(match.group(1))
        results.append((sentence, [int(chunk) for chunk in re.findall(r"\d+", match.group(2))]))
    return results


def test_sample_ingest_writes_every_kind_of_page(sample):
    workspace, report = sample
    root = workspace.root
    summaries = sorted(path.name for path in (root / "wiki/summaries").glob("*.md"))
    assert len(summaries) == 7
    assert len(list((root / CONCEPTS).glob("*.md"))) >= 5
    index = (root / "wiki/index.md").read_text(encoding="utf-8")
    for name in summaries:
        assert f"(summaries/{name})" in index
    assert "7 sources" in (root / "wiki/overview.md").read_text(encoding="utf-8")
    log = (root / "wiki/log.md").read_text(encoding="utf-8")
    assert "ingest: sources/alessandro-volta.html" in log and "wrote wiki/summaries/otter.md" in log
    meta = read_page(root, "wiki/summaries/henri-becquerel.md").meta
    assert meta["sources"][0]["path"] == "sources/henri-becquerel.html"
    assert meta["sources"][0]["hash"].startswith("sha256:") and meta["generated_by"] == "extractive"
    assert {"created", "updated", "title", "description"} <= set(meta)


def test_every_extractive_sentence_is_a_verbatim_quote_of_its_cited_chunk(sample):
    workspace, _ = sample
    store = workspace.store
    checked = 0
    for path in sorted((workspace.root / "wiki").rglob("*.md")):
        relative = path.relative_to(workspace.root).as_posix()
        if relative in ("wiki/index.md", "wiki/overview.md", "wiki/log.md"):
            continue
        _, body = split_frontmatter(path.read_text(encoding="utf-8"))
        sentences = quoted_sentences(body)
        assert sentences, relative
        for sentence, chunk_ids in sentences:
            texts = store.chunk_texts(chunk_ids)
            assert texts, (relative, chunk_ids)
            assert any(sentence in normalise(text) for text in texts.values()), (relative, sentence)
            checked += 1
    assert checked > 50


def test_citations_resolve_to_source_files(sample):
    workspace, _ = sample
    page = (workspace.root / "wiki/summaries/alessandro-volta.md").read_text(encoding="utf-8")
    definitions = re.findall(r'^\[c(\d+)\]: (\S+) "(.+)"$', page, flags=re.MULTILINE)
    assert definitions
    for chunk_id, target, where in definitions:
        assert (workspace.root / "wiki/summaries" / target).resolve() == (workspace.root / "sources/alessandro-volta.html").resolve()
        assert where.startswith("p.1")
    assert {int(chunk_id) for chunk_id, _, _ in definitions} == {int(m.group(1)) for m in CITATION.finditer(page.split("\n[c")[0])}


def test_reference_edges_and_derivation_are_stored(sample):
    workspace, _ = sample
    store = workspace.store
    summary = store.document_by_path("wiki/summaries/alessandro-volta.md")
    source = store.document_by_path("sources/alessandro-volta.html")
    assert summary.kind == "wiki" and summary.derived_from == source.id
    edges = store.references(summary.id)
    assert ("cites", "sources/alessandro-volta.html") in edges
    assert any(kind == "links_to" and target.startswith("wiki/concepts/") for kind, target in edges)


def test_each_operation_is_one_git_commit_naming_its_files(sample):
    workspace, _ = sample
    log = subprocess.run(["git", "log", "--format=%s", "-n", "5"], cwd=workspace.root, capture_output=True, text=True).stdout
    assert log.splitlines()[0].startswith("ingest: sources/alessandro-volta.html")
    files = subprocess.run(["git", "show", "--name-only", "--format=", "HEAD"], cwd=workspace.root, capture_output=True, text=True).stdout
    assert "wiki/summaries/otter.md" in files and "wiki/index.md" in files
    status = subprocess.run(["git", "status", "--porcelain"], cwd=workspace.root, capture_output=True, text=True).stdout
    assert "wiki/" not in status  # nothing left uncommitted


def test_generation_spans_are_traced(sample):
    workspace, _ = sample
    spans = read_spans(workspace.state_dir / "traces")
    operations = {span["operation"] for span in spans}
    assert {"generate.source", "generate.write"} <= operations
    source_span = next(span for span in spans if span["operation"] == "generate.source")
    assert source_span["backend"] == "extractive" and source_span["duration_ms"] > 0


KELP_A = "# Reef notes\n\nThe Kelp Forest shelters many fish. Divers study the Kelp Forest every spring. Sea urchins graze on it.\n"
KELP_B = "# Coast survey\n\nSurveyors mapped the Kelp Forest along the coast. The Kelp Forest grew after otters returned.\n"


def test_two_sources_feed_one_concept_and_updates_keep_the_other(workspace):
    (workspace.sources_dir / "a.md").write_text(KELP_A, encoding="utf-8")
    (workspace.sources_dir / "b.md").write_text(KELP_B, encoding="utf-8")
    ingest_paths(workspace)
    committed = subprocess.run(["git", "show", "--name-only", "--format=", "HEAD"], cwd=workspace.root, capture_output=True, text=True).stdout
    assert "sources/a.md" in committed and "wiki/concepts/kelp-forest.md" in committed  # new sources land with their pages
    concept = workspace.root / CONCEPTS / "kelp-forest.md"
    meta, body = split_frontmatter(concept.read_text(encoding="utf-8"))
    preamble, sections = split_sections(body)
    assert set(sections) == {"sources/a.md", "sources/b.md"}
    assert [entry["path"] for entry in meta["sources"]] == ["sources/a.md", "sources/b.md"]
    # A hand-written note above the sections survives regeneration.
    concept.write_text(concept.read_text(encoding="utf-8").replace("# Kelp Forest", "# Kelp Forest\n\nHand-written: check the 2023 survey."), encoding="utf-8")
    (workspace.sources_dir / "a.md").write_text(KELP_A.replace("every spring", "every autumn"), encoding="utf-8")
    ingest_paths(workspace)
    _, body = split_frontmatter(concept.read_text(encoding="utf-8"))
    preamble, sections = split_sections(body)
    assert "every autumn" in sections["sources/a.md"] and "every spring" not in body
    assert "grew after otters returned" in sections["sources/b.md"]  # the other source's content is intact
    assert "Hand-written: check the 2023 survey." in preamble
    # A source that stops mentioning the concept loses its section; the page stays for the other.
    (workspace.sources_dir / "a.md").write_text("# Reef notes\n\nNothing about that topic any more, only sand and rocks here.\n", encoding="utf-8")
    report = ingest_paths(workspace)
    _, sections = split_sections(split_frontmatter(concept.read_text(encoding="utf-8"))[1])
    assert set(sections) == {"sources/b.md"}
    assert any("removed the section from sources/a.md" in note for note in report.generation.notes)


def test_one_concept_gets_one_page_whatever_its_spelling_or_the_proposing_file(workspace):
    # The file named like the concept proposes it too, and the other writes it in the plural: one page, both sections.
    (workspace.sources_dir / "kelp-forest.md").write_text(KELP_A, encoding="utf-8")
    (workspace.sources_dir / "b.md").write_text(KELP_B.replace("the Kelp Forest along", "the Kelp Forests along").replace("The Kelp Forest grew", "The Kelp Forests grew"),
                                                encoding="utf-8")
    ingest_paths(workspace)
    pages = sorted(path.name for path in (workspace.root / CONCEPTS).glob("kelp*.md"))
    assert pages == ["kelp-forest.md"]
    _, sections = split_sections(split_frontmatter((workspace.root / CONCEPTS / "kelp-forest.md").read_text(encoding="utf-8"))[1])
    assert set(sections) == {"sources/kelp-forest.md", "sources/b.md"}
    assert "Kelp Forests grew" in sections["sources/b.md"]


class ScriptedBackend:
    """A generating backend that returns scripted replies (or raises)."""

    name = "fake"
    model = "fake-model"
    generates = True

    def __init__(self, reply):
        self.reply = reply
        self.calls = 0

    def complete(self, messages, *, tools=None, on_token=None, json_mode=False):
        self.calls += 1
        if isinstance(self.reply, Exception):
            raise self.reply
        prompt = messages[-1]["content"]
        first_chunk = int(re.search(r"\[c(\d+)\]", prompt).group(1))
        return Completion(text=self.reply.replace("CHUNK", str(first_chunk)), model=self.model, prompt_tokens=100, completion_tokens=20)


GOOD_REPLY = json.dumps({
    "description": "Notes on kelp.",
    "summary": "Kelp forests shelter fish [cCHUNK].",
    "concepts": [{"name": "Kelp Forest", "aliases": ["kelp bed"], "text": "A forest of kelp [cCHUNK]."}],
})


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("this is not json", "not valid JSON"),
        (json.dumps({"description": "x", "summary": "", "concepts": []}), "empty summary"),
        (json.dumps({"description": "x", "summary": "Made up [c999999].", "concepts": []}), "cites passages that were not given"),
        (json.dumps({"summary": "No description field [cCHUNK]."}), "requested fields"),
        (BackendError("http://x/v1/chat/completions: no reply within 60 s"), "no reply within"),
    ],
)
def test_a_bad_model_reply_falls_back_to_extractive_and_says_why(workspace, reply, reason):
    (workspace.sources_dir / "a.md").write_text(KELP_A, encoding="utf-8")
    backend = ScriptedBackend(reply)
    report = ingest_paths(workspace, services=services_for(workspace, backend=backend))
    assert backend.calls == 1
    page = read_page(workspace.root, "wiki/summaries/a.md")
    assert page.meta["generated_by"] == "extractive"
    assert "The Kelp Forest shelters many fish." in page.body
    assert any(reason in note for note in report.generation.notes)
    assert reason in (workspace.root / "wiki/log.md").read_text(encoding="utf-8")


def test_a_good_model_reply_is_used_with_its_aliases_and_traced(workspace):
    (workspace.sources_dir / "a.md").write_text(KELP_A, encoding="utf-8")
    ingest_paths(workspace, services=services_for(workspace, backend=ScriptedBackend(GOOD_REPLY)))
    page = read_page(workspace.root, "wiki/summaries/a.md")
    assert page.meta["generated_by"] == "fake:fake-model"
    assert page.body.startswith("# Reef notes\n\nKelp forests shelter fish [c")
    concept = read_page(workspace.root, f"{CONCEPTS}/kelp-forest.md")
    assert concept.meta["aliases"] == ["kelp bed"]
    assert '"kelp bed" = "kelp-forest"' in (workspace.state_dir / "aliases.generated.toml").read_text(encoding="utf-8")
    call = next(span for span in read_spans(workspace.state_dir / "traces") if span["operation"] == "generate.model_call")
    assert call["prompt_tokens"] == 100 and call["completion_tokens"] == 20
    prompt = (workspace.state_dir / "traces" / "payloads" / f"{call['prompt']}.txt").read_text(encoding="utf-8")
    assert "The Kelp Forest shelters many fish." in prompt


def test_alias_validation():
    pages = {"kelp-forest": "Kelp Forest", "otter": "Otter", "sea-urchin": "Sea Urchin"}
    aliases, rejected, notes = validate_aliases(
        {"kelp-forest": ["kelp bed", "Otter", "forest"], "sea-urchin": ["forest", "urchin"]},
        pages=pages, existing={}, rejected={"bad alias": "earlier"}, hand_written={"urchin": "Sea Urchin"},
    )
    assert aliases == {"kelp bed": "kelp-forest", "forest": "kelp-forest"}
    assert rejected["Otter"] == "collides with page otter"
    assert rejected["urchin"].startswith("a hand-written alias")
    assert rejected["forest"] == "already an alias of kelp-forest"  # sea-urchin asked for it second
    # A refused alias never comes back, even when proposed for a page it would not collide with.
    again, _, _ = validate_aliases({"sea-urchin": ["Otter"]}, pages=pages, existing=aliases, rejected=rejected, hand_written={})
    assert "Otter" not in again


def test_generation_failure_in_the_store_restores_the_files(workspace, monkeypatch):
    (workspace.sources_dir / "a.md").write_text(KELP_A, encoding="utf-8")
    ingest_paths(workspace)
    before = {path: path.read_bytes() for path in (workspace.root / "wiki").rglob("*.md")}
    (workspace.sources_dir / "a.md").write_text(KELP_A.replace("every spring", "in winter"), encoding="utf-8")
    import llmwiki.publish.wiki as wiki

    real = wiki.index_pages
    calls = []

    def failing(workspace_, texts):
        calls.append(texts)
        if len(calls) == 1:
            raise OSError("disk full")
        return real(workspace_, texts)

    monkeypatch.setattr(wiki, "index_pages", failing)
    with pytest.raises(OSError, match="disk full"):
        ingest_paths(workspace)
    after = {path: path.read_bytes() for path in (workspace.root / "wiki").rglob("*.md")}
    assert after == before  # every page as it was


def _dense_centrality(sentences):
    """The definition, as an n x n matrix: mean TF-IDF cosine to the other sentences, with the lead bias."""
    import math
    from collections import Counter

    import numpy as np

    from llmwiki.generate import _terms

    bags = [Counter(_terms(sentence.text)) for sentence in sentences]
    vocabulary = {term: index for index, term in enumerate(sorted({term for bag in bags for term in bag}))}
    frequency = Counter(term for bag in bags for term in bag)
    idf = np.array([math.log((1 + len(bags)) / (1 + frequency[term])) + 1 for term in vocabulary])
    matrix = np.zeros((len(bags), len(vocabulary)))
    for row, bag in enumerate(bags):
        for term, count in bag.items():
            matrix[row, vocabulary[term]] = (1 + math.log(count)) * idf[vocabulary[term]]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms == 0, 1, norms)
    similarity = matrix @ matrix.T
    np.fill_diagonal(similarity, 0)
    lead = np.array([1.0 / math.sqrt(1 + sentence.position / 5) for sentence in sentences])
    return list(similarity.sum(axis=1) / max(len(sentences) - 1, 1) * (0.75 + 0.25 * lead))


def test_sentence_centrality_matches_its_definition_without_an_n_by_n_matrix():
    import numpy as np

    from llmwiki.generate import Sentence, rank_sentences

    texts = ["Volta built the pile.", "The pile gave current.", "Otters eat urchins.", "Volta and the pile of zinc.", "---", "Current flowed in the pile."]
    sentences = [Sentence(text, 1, position) for position, text in enumerate(texts)]
    assert np.allclose(rank_sentences(sentences), _dense_centrality(sentences))
    many = [Sentence(f"Sentence {index} about topic {index % 97} and item {index % 13}.", 1, index) for index in range(130_000)]
    scores = rank_sentences(many)  # a 10 MB source: 130,000 sentences (the dense form would need 127 GiB)
    assert len(scores) == len(many) and all(np.isfinite(scores[:100]))


def test_sources_whose_names_slug_alike_get_distinct_pages_that_stay_put(workspace):
    from llmwiki.lint import lint
    from llmwiki.publish.wiki import ingest_paths

    texts = {"Ω" * 126 + ".md": "# Omega\n\nThe omega note describes tidal pools.\n", "日" * 84 + ".md": "# Sun\n\nThe sun note describes coral reefs.\n",
             "alessandro-volta.html": "<h1>Volta</h1><p>Volta stacked zinc and copper discs into a pile.</p>",
             "alessandro-volta.txt": "Volta\n\nThe Voltaic Pile made a steady current.\n"}
    for name, text in texts.items():
        (workspace.sources_dir / name).write_text(text, encoding="utf-8")
    ingest_paths(workspace)
    summaries = sorted(path.name for path in (workspace.root / "wiki/summaries").glob("*.md"))
    assert len(summaries) == 4 and "page.md" in summaries and "alessandro-volta.md" in summaries  # one page each
    owners = {}
    for name in summaries:
        from llmwiki.pages import source_paths, split_frontmatter

        owners[name] = source_paths(split_frontmatter((workspace.root / "wiki/summaries" / name).read_text(encoding="utf-8"))[0])
    assert sorted(path for paths in owners.values() for path in paths) == sorted(f"sources/{name}" for name in texts)
    assert [finding for finding in lint(workspace).findings if finding.kind == "no-summary"] == []
    again = ingest_paths(workspace)  # a rerun settles: nothing written, every page where it was
    assert again.generation is None and sorted(path.name for path in (workspace.root / "wiki/summaries").glob("*.md")) == summaries


@pytest.mark.parametrize(("copies", "quoted"), [(5, False), (2, True)])
def test_a_sentence_many_documents_repeat_word_for_word_is_quoted_by_no_page(workspace, copies, quoted):
    # A generator's line on every page ("Go to the documentation of this file.") says nothing of any one of them;
    # control: a sentence two documents happen to share is theirs to quote.
    notice = "This page was generated from the project's source files by the documentation tool."
    animals = ["otter", "badger", "heron", "marten", "beaver", "stoat"]
    for index, animal in enumerate(animals):
        shared = f"{notice}\n\n" if index < copies else ""
        (workspace.sources_dir / f"{animal}.md").write_text(
            f"# The {animal}\n\n{shared}The {animal} lives along rivers and streams in northern Europe.\n\n"
            f"## Food\n\nThe {animal} hunts at dusk and rests in a den during the day.\n", encoding="utf-8")
    ingest_paths(workspace)
    pages = [path.read_text(encoding="utf-8") for path in (workspace.root / "wiki").rglob("*.md")]
    assert any("The otter lives along rivers" in page for page in pages)
    assert any(notice in page for page in pages) is quoted


def test_copies_of_a_document_keep_their_sentences(workspace):
    # Five versions of one manual repeat nearly every sentence: that is the document, not furniture.
    body = "".join(f"The kettle setting number {number} keeps the water at a different temperature for tea.\n\n" for number in range(1, 7))
    for version in range(1, 7):
        (workspace.sources_dir / f"kettle-{version}.md").write_text(f"# Kettle manual, version {version}\n\n{body}", encoding="utf-8")
    ingest_paths(workspace)
    summaries = [path.read_text(encoding="utf-8") for path in (workspace.root / "wiki" / "summaries").glob("*.md")]
    assert len(summaries) == 6 and all("keeps the water at a different temperature" in summary for summary in summaries)


def test_an_api_page_keeps_its_own_sentences_not_the_ones_it_inherits_nor_one_twice(workspace):
    # Six iterator pages each inherit the same method descriptions (repeated on every page of the site) and add two
    # sentences of their own; one page gives two overloads the same description. A summary quotes a page's own
    # sentences, each once. (test_copies_of_a_document_keep_their_sentences is the control: a page with nothing of its
    # own keeps what it repeats.)
    inherited = "".join(f"## fn method{number}\n\nReturns the element {number} places on of the iterator and advances it by one place.\n\n"
                        for number in range(20))
    kinds = ["owning", "borrowing", "draining", "mutable", "reversed", "stepping"]
    for kind in kinds:
        twice = ("## fn len\n\nCounts the entries that the iterator still has to give before it ends.\n\n"
                 "## fn len_hint\n\nCounts the entries that the iterator still has to give before it ends.\n\n") if kind == "owning" else ""
        (workspace.sources_dir / f"{kind}.md").write_text(
            f"# The {kind} iterator\n\nAn {kind} iterator over the entries of a kettle map, in the order of their keys.\n\n"
            f"It is created by the {kind} method of the kettle map and holds the map until it is dropped.\n\n{twice}{inherited}", encoding="utf-8")
    ingest_paths(workspace)
    owning = next(path for path in (workspace.root / "wiki" / "summaries").glob("*.md") if "owning" in path.name).read_text(encoding="utf-8")
    body = owning.split("\n---\n", 1)[1]
    assert "An owning iterator over the entries of a kettle map" in body and "created by the owning method" in body
    assert "of the iterator and advances it" not in body  # inherited by all six: no page quotes it
    assert body.count("Counts the entries that the iterator still has to give") == 1


def test_a_sentence_that_opens_with_an_emphasised_word_may_lead_a_summary(workspace):
    (workspace.sources_dir / "ownership.md").write_text(
        "# What Is Ownership?\n\n*Ownership* is a set of rules that governs how a kettle program manages its memory.\n\n"
        "All programs have to manage the way they use a computer's memory while running.\n\n"
        "* a list item that is not a sentence of the text\n", encoding="utf-8")
    ingest_paths(workspace)
    summary = next((workspace.root / "wiki" / "summaries").glob("*.md")).read_text(encoding="utf-8").split("\n---\n", 1)[1]
    lead = summary.split("\n\n")[1]
    assert lead.startswith("*Ownership* is a set of rules")
    assert "All programs have to manage" in summary  # control: the plain sentence after it is still quoted


def test_a_readme_opens_with_its_first_sentence_past_badges_html_and_links(workspace):
    (workspace.sources_dir / "README.md").write_text(
        '<h1 align="center">Kettle</h1>\n\n<p align="center"><img src="logo.png" width="120"></p>\n\n'
        "[![build](https://ci.example.org/kettle/badge.svg)](https://ci.example.org/kettle)\n"
        "[![licence](https://img.example.org/badge/licence-MIT.svg)](LICENSE)\n\n"
        "## What it does\n\nKettle is a [Python](https://python.org) library for boiling water on a schedule, "
        "and a command-line tool that uses this library.\n\n<div id=\"features\">\n\n"
        "- boils water at a set time\n- keeps it warm\n\n</div>\n\n"
        "Read https://kettle.example.org/manual before you boil water for the first time today.\n\n"
        "Kettle runs on Linux and macOS, and on Windows where a scheduler service is installed.\n", encoding="utf-8")
    ingest_paths(workspace)
    page = next((workspace.root / "wiki" / "summaries").glob("*.md")).read_text(encoding="utf-8")
    summary = page.split("\n---\n", 1)[1]
    assert "title: Kettle" in page  # the centred <h1> of HTML is the title
    assert summary.split("\n\n")[1].startswith("Kettle is a [Python](https://python.org) library for boiling water")
    assert "Kettle runs on Linux and macOS" in summary  # control: the plain sentence after it is quoted too
    assert "Read https://kettle.example.org/manual" not in summary  # an address written out is still no prose
    assert "badge.svg" not in summary and "<div" not in summary and "logo.png" not in summary


def test_html_blocks_in_markdown_are_read_as_their_text(tmp_path):
    from llmwiki.ingest.extract import extract

    path = tmp_path / "README.md"
    path.write_bytes(b'<p align="center"><img src="logo.png"></p>\n\n<div id="features">\n\n- boils water\n\n</div>\n\n'
                     b"<table><tr><th>Setting</th><th>Default</th></tr><tr><td>timer</td><td>off</td></tr></table>\n\n"
                     b"<!-- a comment -->\n\n[![build](https://ci.example.org/badge.svg)](https://ci.example.org)\n\n"
                     b"**|**\n\nAlternation, or the or operator.\n\nKettle boils water.\n")
    text = extract(path.read_bytes(), path).pages[0].text
    assert "| Setting | Default |" in text and "| timer | off |" in text  # an HTML table is a table
    assert "- boils water" in text and "Kettle boils water." in text  # controls: Markdown around the tags stays
    assert "<div" not in text and "</div>" not in text and "logo.png" not in text and "a comment" not in text
    assert "badge.svg" not in text and "**|**" in text  # control: a paragraph of marks alone that is no image stays
