from __future__ import annotations

import pytest

from llmwiki.read.select import is_collection_question, read_wiki_page, select

def test_wiki_chunks_come_first_then_the_sources(wiki):
    selection = select(wiki, "Where do divers study the kelp forest?")
    assert selection.searched_scope == "wiki" and selection.items
    kinds = [item.kind for item in selection.items]
    assert kinds[0] == "wiki" and "source" in kinds
    assert kinds == sorted(kinds, key=lambda kind: kind != "wiki")  # every wiki chunk before any source chunk
    assert all(item.path.startswith("wiki/") for item in selection.items if item.kind == "wiki")
    assert all(item.path.startswith("sources/") for item in selection.items if item.kind == "source")
    assert "wiki chunks" in selection.readout and "matched" in selection.readout


def test_the_source_chunks_a_wiki_chunk_cites_are_followed(wiki):
    from llmwiki.pages import cited_chunk_ids

    config = wiki.config.model_copy(update={"retrieval": wiki.config.retrieval.model_copy(update={"source_chunks": 0})})
    wiki_only = type(wiki)(root=wiki.root, config=config)  # no source search: what comes from sources came by citation
    selection = select(wiki_only, "What did Volta stack into a pile?")
    wiki_items = [item for item in selection.items if item.kind == "wiki"]
    cited = {chunk_id for item in wiki_items for chunk_id in cited_chunk_ids(wiki.store.chunk_texts([item.chunk_id])[item.chunk_id])}
    assert cited and cited <= set(selection.chunk_ids)  # every cited source chunk is in the context
    assert all(item.path.startswith("sources/") for item in selection.items if item.chunk_id in cited)
    assert "cite" in selection.readout


def test_a_question_using_the_word_collection_is_not_about_the_wiki():
    assert not is_collection_question("He published a collection of what?")
    assert not is_collection_question("Which collection of poems did she publish?")
    assert is_collection_question("What topics does this collection cover?")  # control: about the wiki itself


def test_raw_source_chunks_when_the_wiki_has_no_hit(wiki):
    selection = select(wiki, "narwhal tusk ledger")
    assert selection.searched_scope == "sources"
    assert [item.path for item in selection.items] == ["sources/hidden.md"]
    assert "the wiki had no match, so raw sources were searched" in selection.readout
    assert select(wiki, "kelp forest divers").searched_scope == "wiki"  # control


def test_blacklisted_topics_are_refused_before_any_search(wiki, monkeypatch):
    question = "What is the salary of the divers in the kelp forest?"
    assert select(wiki, question).items  # control: allowed without a blacklist
    config = wiki.config.model_copy(update={"chat": wiki.config.chat.model_copy(update={"blacklist": ("salary",)})})
    blocked = type(wiki)(root=wiki.root, config=config)
    import llmwiki.read.select as module

    monkeypatch.setattr(module, "search", lambda *args, **kwargs: pytest.fail("searched a refused question"))
    selection = select(blocked, question)
    assert selection.refused and "off-limits topic (salary)" in selection.refused and not selection.items


@pytest.mark.parametrize("question", ["What is in this wiki?", "List the topics", "What does this wiki cover?", "Give me an overview of the collection"])
def test_collection_questions_read_overview_and_index_whole(wiki, question):
    assert is_collection_question(question)
    selection = select(wiki, question)
    assert [item.label for item in selection.items] == ["wiki/overview.md (whole)", "wiki/index.md (whole)"]
    assert "[Kelp](summaries/kelp.md)" in selection.items[1].text
    assert not is_collection_question("What is in kelp forests?")  # control


def test_dataset_rows_for_a_named_key_and_keys_for_a_category(wiki):
    rows = select(wiki, "How many berths does Dover have?")
    dataset = [item for item in rows.items if item.kind == "dataset"]
    assert len(dataset) == 1 and "| Dover | berths |  | 30 |" in dataset[0].text and "Portsmouth" not in dataset[0].text
    keys = select(wiki, "Which harbours are listed?")
    listed = [item for item in keys.items if item.kind == "dataset_keys"]
    assert listed and "Portsmouth, Dover" in listed[0].text
    assert not [item for item in select(wiki, "kelp forest").items if item.kind.startswith("dataset")]  # control


def test_a_bad_dataset_is_skipped_and_named(wiki):
    (wiki.datasets_dir / "broken.md").write_text("no frontmatter here\n", encoding="utf-8")
    selection = select(wiki, "How many berths does Dover have?")
    assert any(item.kind == "dataset" for item in selection.items)
    assert "Skipped dataset broken.md: has no YAML frontmatter." in selection.readout


def test_the_open_page_is_prepended_without_frontmatter(wiki):
    selection = select(wiki, "zinc and copper", open_page="wiki/summaries/kelp.md")
    assert selection.items[0].kind == "open_page" and selection.items[0].path == "wiki/summaries/kelp.md"
    assert "title:" not in selection.items[0].text and selection.items[0].text.startswith("# Kelp")
    assert any(item.path == "wiki/summaries/volta.md" for item in selection.items[1:])
    assert "the open page" in selection.readout


def test_an_alias_widens_the_query_to_its_concept(wiki):
    config = wiki.config.model_copy(update={"wiki": wiki.config.wiki.model_copy(update={"aliases": {"underwater woods": "Kelp Forest"}})})
    aliased = type(wiki)(root=wiki.root, config=config)
    assert select(wiki, "underwater woods").items == ()  # control: without the alias nothing matches
    selection = select(aliased, "underwater woods")
    assert "Kelp Forest" in selection.query
    assert any("kelp" in (item.path or "") for item in selection.items)


def test_an_alias_added_to_a_concept_page_is_seen_by_the_next_question(wiki):
    from llmwiki.pages import render_page, split_frontmatter

    path = wiki.root / "wiki/concepts/kelp-forest.md"
    assert "Kelp Forest" not in select(wiki, "What lives in the sea jungle?").query  # control: no such alias yet
    meta, body = split_frontmatter(path.read_text(encoding="utf-8"))
    path.write_text(render_page({**meta, "aliases": ["sea jungle"]}, body), encoding="utf-8")
    assert "Kelp Forest" in select(wiki, "What lives in the sea jungle?").query  # the concept table was read again


def test_duplicates_are_dropped_and_empty_questions_say_so(wiki):
    selection = select(wiki, "kelp forest", open_page="wiki/concepts/kelp-forest.md")
    chunk_ids = [item.chunk_id for item in selection.items if item.chunk_id is not None]
    assert len(chunk_ids) == len(set(chunk_ids))
    empty = select(wiki, "   ")
    assert empty.items == () and "empty" in empty.readout


@pytest.mark.parametrize("question", ["x" * 50_000, "<script>alert(1)</script> **bold** | table |", "what did I say?", "\x00\x00"])
def test_odd_questions_get_a_readout(wiki, question):
    selection = select(wiki, question)
    assert selection.readout


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "wiki/../wiki_config.toml", "../sources/kelp.md", "concepts/../../.llmwiki/store.duckdb"])
def test_read_page_is_confined_to_the_wiki(wiki, path):
    from llmwiki.errors import WorkspaceError

    with pytest.raises(WorkspaceError, match="refused"):
        read_wiki_page(wiki, path)
    assert read_wiki_page(wiki, "summaries/kelp.md").startswith("---")  # control


def test_the_best_source_chunks_are_added_after_the_wikis(wiki):
    selection = select(wiki, "kelp narwhal")  # the wiki knows kelp, only a source knows the narwhal
    kinds = {item.path: item.kind for item in selection.items}
    assert kinds.get("sources/hidden.md") == "source"
    assert any(kind == "wiki" for kind in kinds.values())
    assert "source chunks were added after the wiki's" in selection.readout
    other = select(wiki, "kelp forest divers")  # control: a question the hidden source has nothing on
    assert "sources/hidden.md" not in [item.path for item in other.items] and other.items[0].kind == "wiki"
