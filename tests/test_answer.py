from __future__ import annotations

import json
import subprocess

import pytest

from llmwiki.answer import Conversation, agentic_answer, answer_question, condense, save_answer
from llmwiki.backends import ExtractiveBackend, OpenAIBackend
from llmwiki.pages import split_frontmatter
from openai_stub import Reply, StubServer


def stub_backend(server):
    return OpenAIBackend(base_url=server.base_url, model="stub-model", api_key="test-key", timeout_s=5, max_retries=0)


def test_extractive_answer_cites_real_chunks_it_was_given(wiki):
    answer = answer_question(wiki, "What did Volta stack into a pile?", backend=ExtractiveBackend())
    assert "zinc and copper" in answer.text
    assert answer.citations and not answer.unknown_citations
    texts = wiki.store.chunk_texts([citation.chunk_id for citation in answer.citations])
    for citation in answer.citations:
        assert citation.chunk_id in answer.context_chunk_ids
        assert citation.label.startswith(citation.path) and citation.path.startswith("wiki/")
        assert "Volta" in texts[citation.chunk_id]


def test_nothing_selected_means_no_model_call(wiki):
    with StubServer([Reply(content="should not be asked")]) as server:
        answer = answer_question(wiki, "what did I say?", backend=stub_backend(server))
        assert server.requests == []
    assert answer.refused and "no searchable terms" in answer.text


def test_model_answer_keeps_known_citations_and_drops_invented_ones(wiki):
    with StubServer([Reply(content="Volta made a pile [c999999]. It was zinc and copper [cCHUNK].")]) as server:
        backend = stub_backend(server)
        first = answer_question(wiki, "What did Volta stack?", backend=ExtractiveBackend())
        chunk = first.context_chunk_ids[0]
        server.replies = [Reply(content=f"Volta made a pile [c999999]. It was zinc and copper [c{chunk}].")]
        tokens = []
        answer = answer_question(wiki, "What did Volta stack?", backend=backend, on_token=tokens.append)
    assert [citation.chunk_id for citation in answer.citations] == [chunk]
    assert answer.unknown_citations == (999999,) and "[c999999]" not in answer.text
    assert "".join(tokens).strip().startswith("Volta made a pile")
    prompt = server.requests[0]["body"]["messages"][-1]["content"]
    assert f"[c{chunk}]" in prompt and "What did Volta stack?" in prompt


def test_follow_ups_are_condensed_and_history_is_reduced(wiki):
    conversation = Conversation()
    first = answer_question(wiki, "Where do divers study the kelp forest?", backend=ExtractiveBackend(), conversation=conversation)
    conversation.add("Where do divers study the kelp forest?", first)
    refused = answer_question(wiki, "what did I say?", backend=ExtractiveBackend(), conversation=conversation)
    conversation.add("what did I say?", refused)
    standalone = condense("and in spring?", conversation, backend=ExtractiveBackend(), stopwords=frozenset({"where", "the"}))
    assert standalone.startswith("and in spring?") and "kelp" in standalone and "divers" in standalone
    assert condense("Who built the pile?", conversation, backend=ExtractiveBackend()) == "Who built the pile?"  # not a follow-up
    conversation.turns.append(type(conversation.turns[0])("assistant", "| a | b |\n" * 10))
    reduced = conversation.reduced(keep=6)
    assert all("what did I say?" not in message["content"] for message in reduced)  # refused exchange dropped
    assert "[a table from an earlier answer, left out]" in reduced[-1]["content"]
    assert len(conversation.reduced(keep=2)) == 2
    assert len(conversation.turns) == 5  # the full conversation stays for the UI


def test_agentic_chat_uses_tools_and_refuses_path_traversal(wiki):
    replies = [
        Reply(content=None, tool_calls=[{"name": "search_wiki", "arguments": {"query": "voltaic pile"}}]),
        Reply(content=None, tool_calls=[{"name": "read_page", "arguments": {"path": "../../etc/passwd"}}]),
        Reply(content="Volta stacked zinc and copper discs [cCHUNK]."),
    ]
    with StubServer(replies) as server:
        backend = stub_backend(server)
        # the chunk id the search will return
        from llmwiki.search import search

        chunk = search(wiki, "voltaic pile", scope="wiki").hits[0].chunk_id
        server.replies[2] = Reply(content=f"Volta stacked zinc and copper discs [c{chunk}].")
        answer = agentic_answer(wiki, "What is a voltaic pile?", backend=backend, strict=True)
        tool_messages = [message for request in server.requests for message in request["body"]["messages"] if message["role"] == "tool"]
    assert not answer.refused and answer.citations[0].chunk_id == chunk
    assert any(message["content"].startswith("Refused:") and "etc/passwd" in message["content"] for message in tool_messages)
    assert "root:" not in json.dumps(tool_messages)
    assert [step.split("(")[0] for step in answer.tool_steps] == ["search_wiki", "read_page"]


def test_strict_agentic_chat_refuses_without_a_substantive_tool_result(wiki):
    replies = [Reply(content=None, tool_calls=[{"name": "search_sources", "arguments": {"query": "quasar nebula"}}]), Reply(content="Quasars are bright [c1].")]
    with StubServer(replies) as server:
        answer = agentic_answer(wiki, "What is a quasar?", backend=stub_backend(server), strict=True)
    assert answer.refused and "strict mode" in answer.text


def test_the_step_limit_stops_a_tool_loop(wiki):
    loop = Reply(content=None, tool_calls=[{"name": "search_wiki", "arguments": {"query": "kelp"}}])
    with StubServer([loop, loop, loop, Reply(content="Kelp shelters fish.")]) as server:
        config = wiki.config.model_copy(update={"chat": wiki.config.chat.model_copy(update={"max_tool_steps": 2})})
        limited = type(wiki)(root=wiki.root, config=config)
        answer = agentic_answer(limited, "kelp?", backend=stub_backend(server), strict=False)
        assert len(server.requests) == 3  # two tool rounds, then a final call without tools
        assert "tools" not in server.requests[-1]["body"]
    assert [step.split("(")[0] for step in answer.tool_steps] == ["search_wiki", "search_wiki", "step limit "]


def test_saving_an_answer_merges_into_the_page_and_commits(wiki):
    first = answer_question(wiki, "What did Volta stack into a pile?", backend=ExtractiveBackend())
    path, commit = save_answer(wiki, first, title="Volta's pile")
    page = (wiki.root / path).read_text(encoding="utf-8")
    meta, body = split_frontmatter(page)
    assert path == "wiki/answers/volta-s-pile.md" and commit
    assert meta["sources"][0] == {"path": "chat"} and any(entry["path"].startswith("wiki/") for entry in meta["sources"][1:])
    second = answer_question(wiki, "Which metals were in the Voltaic Pile?", backend=ExtractiveBackend())
    save_answer(wiki, second, title="Volta's pile")
    merged = (wiki.root / path).read_text(encoding="utf-8")
    assert "What did Volta stack into a pile?" in merged and "Which metals were in the Voltaic Pile?" in merged
    assert "[Volta's pile](answers/volta-s-pile.md)" in (wiki.root / "wiki/index.md").read_text(encoding="utf-8")
    assert wiki.store.document_by_path(path).kind == "wiki"
    log = subprocess.run(["git", "log", "--format=%s", "-n", "1"], cwd=wiki.root, capture_output=True, text=True).stdout
    assert log.startswith("save answer: wiki/answers/volta-s-pile.md")
    refused = answer_question(wiki, "what did I say?", backend=ExtractiveBackend())
    from llmwiki.errors import LlmwikiError

    with pytest.raises(LlmwikiError, match="at least one citation"):
        save_answer(wiki, refused)
