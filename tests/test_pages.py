from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmwiki.pages import (
    PageError,
    citation_definitions,
    cited_chunk_ids,
    render_page,
    slugify,
    split_frontmatter,
    strip_citation_definitions,
    write_files,
)


@settings(max_examples=300, deadline=None)
@given(name=st.text(max_size=200))
def test_slugs_are_safe_file_stems(name):
    slug = slugify(name)
    assert slug and len(slug) <= 80
    assert all(char.isascii() and (char.isalnum() or char == "-") for char in slug)
    assert not slug.startswith("-") and not slug.endswith("-")
    assert slug not in {"index", "overview", "log", "con", "nul", "aux", "prn"}


@pytest.mark.parametrize(
    ("name", "slug"),
    [("Charles-Augustin de Coulomb", "charles-augustin-de-coulomb"), ("Angoulême", "angouleme"), ("../../etc/passwd", "etc-passwd"),
     ("index", "index-page"), ("CON", "con-page"), ("", "page"), ("???", "page"), ("C:\\Windows\\system32", "c-windows-system32")],
)
def test_slug_examples(name, slug):
    assert slugify(name) == slug


@settings(max_examples=100, deadline=None)
@given(meta=st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), st.one_of(st.text(max_size=30), st.integers(), st.lists(st.text(max_size=10), max_size=3)), max_size=5),
       body=st.text(max_size=200).map(lambda text: text.replace("\r", "")))
def test_frontmatter_round_trips(meta, body):
    rendered = render_page(meta, body)
    parsed_meta, parsed_body = split_frontmatter(rendered)
    assert parsed_meta == meta
    assert parsed_body.strip() == body.strip()


def test_citations_are_listed_once_in_order_and_definitions_are_not_citations():
    body = "Volta built it [c12]. Later [c3] and again [c12].\n\n[c12]: ../../sources/a.md \"p.1\"\n[c3]: ../../sources/b.md \"p.2\"\n"
    assert cited_chunk_ids(body) == [12, 3]
    assert "[c12]:" not in strip_citation_definitions(body)
    lines = citation_definitions({12: ("sources/a.md", 1, "Intro > History"), 3: ("sources/b.md", 2, "")}, page_path="wiki/summaries/x.md")
    assert lines.splitlines() == ['[c3]: ../../sources/b.md "p.2"', '[c12]: ../../sources/a.md "p.1 · Intro > History"']


def test_write_files_is_all_or_nothing(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki/a.md").write_text("old a", encoding="utf-8")
    (tmp_path / "wiki/blocked").mkdir()  # a folder where a file should go: its rename fails
    (tmp_path / "wiki/blocked/inner").write_text("x", encoding="utf-8")
    with pytest.raises(OSError):
        write_files(tmp_path, {"wiki/a.md": "new a", "wiki/b.md": "new b", "wiki/blocked": "cannot replace a folder"})
    assert (tmp_path / "wiki/a.md").read_text(encoding="utf-8") == "old a"
    assert not (tmp_path / "wiki/b.md").exists()
    assert not [path.name for path in (tmp_path / "wiki").iterdir() if path.name.endswith(".tmp")]
    write_files(tmp_path, {"wiki/a.md": "new a", "wiki/b.md": "new b"})  # control: the same write without the blocker
    assert (tmp_path / "wiki/a.md").read_text(encoding="utf-8") == "new a"


def test_write_files_refuses_paths_outside_the_root(tmp_path):
    with pytest.raises(PageError, match="outside the workspace"):
        write_files(tmp_path / "ws", {"../escape.md": "x"})
    assert not (tmp_path / "escape.md").exists()


@pytest.mark.parametrize(
    ("frontmatter", "paths"),
    [
        ("sources:\n- path: sources/a.md\n- path: chat\n", ["sources/a.md"]),
        ("sources:\n", []),  # emptied by hand: YAML null
        ("sources: sources/a.md\n", []),  # not a list
        ("sources:\n- sources/a.md\n- path: 3\n- path: sources/b.md\n", ["sources/b.md"]),  # malformed entries are skipped
        ("title: no sources at all\n", []),
    ],
)
def test_source_paths_survive_hand_edited_frontmatter(frontmatter, paths):
    from llmwiki.pages import source_paths

    meta, _ = split_frontmatter(f"---\n{frontmatter}---\n\n# Page\n")
    assert source_paths(meta) == paths


def test_pages_with_emptied_sources_still_lint_and_verify(workspace):
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.lint import lint
    from llmwiki.verify import verify_page
    from llmwiki.verify.nli import OverlapVerifier

    (workspace.sources_dir / "kelp.md").write_text("# Kelp\n\nSea otters eat urchins in the kelp forest.\n", encoding="utf-8")
    ingest_paths(workspace)
    page = workspace.root / "wiki/concepts/otters.md"
    page.write_text("---\ntitle: Otters\nsources:\n---\n\n# Otters\n\nSea otters eat urchins in the kelp forest.\n", encoding="utf-8")
    ingest_paths(workspace, [page])
    result = verify_page(workspace, "wiki/concepts/otters.md", OverlapVerifier())  # names no source: checked against all
    assert result.sentences[0].p_entailment == 1.0 and result.sentences[0].excerpt_path == "sources/kelp.md"
    kinds = {finding.kind for finding in lint(workspace).findings if "wiki/concepts/otters.md" in finding.pages}
    assert {"orphan", "thin"} <= kinds  # linted like any page, not skipped or crashed on
