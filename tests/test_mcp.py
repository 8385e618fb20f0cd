"""`llmwiki mcp`: the real server started as a subprocess, talked to with the SDK's own client (stdio, and once HTTP)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time

import pytest

from conftest import KELP
from llmwiki.mcp_server import ServerOptionError, http_address
from llmwiki.publish.wiki import ingest_paths

pytestmark = pytest.mark.slow  # servers, browsers or bench scripts in subprocesses: make test-fast leaves these out

pytest.importorskip("mcp", reason="the mcp package is not installed (pip install -e .)")

READ_TOOLS = {"search", "read_page", "list_pages", "ask", "query_dataset", "verify_text", "page_verification"}
WRITE_TOOLS = {"save_answer", "ingest"}


def _params(workspace, *flags: str):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=sys.executable, args=["-m", "llmwiki", "mcp", "-w", str(workspace.root), *flags],
                                 env={**os.environ, "HF_HUB_OFFLINE": "1"})


def _with_client(server, work):
    """Run work(client) against a server (stdio parameters or an http url) and return what it returns."""
    from mcp import Client

    async def main():
        async with Client(server, read_timeout_seconds=300) as client:
            return await work(client)

    return asyncio.run(main())


def test_tools_are_listed_searched_asked_and_a_changed_fact_is_flagged(wiki):
    progress: list[tuple[float, float | None, str | None]] = []

    async def work(client):
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        found = await client.call_tool("search", {"query": "kelp forest", "scope": "sources", "limit": 2})
        page = await client.call_tool("read_page", {"path": "summaries/kelp.md"})
        pages = await client.call_tool("list_pages", {"kind": "summaries"})

        async def on_progress(done, total, message):
            progress.append((done, total, message))

        asked = await client.call_tool("ask", {"question": "Which forest do divers study every spring?"}, progress_callback=on_progress)
        dataset = await client.call_tool("query_dataset", {"category": "harbours", "key": "Dover"})
        checked = await client.call_tool("verify_text", {"text": "Divers study the Kelp Forest every spring. Divers study the Kelp Forest every winter in Norway."})
        resource = await client.read_resource("llmwiki://wiki/summaries/kelp.md")
        unverified = await client.call_tool("page_verification", {"path": "summaries/kelp.md"})
        return listed, found, page, pages, asked, dataset, checked, resource, unverified

    listed, found, page, pages, asked, dataset, checked, resource, unverified = _with_client(_params(wiki), work)
    assert set(listed) == READ_TOOLS  # write tools are not listed at all without --allow-writes
    assert listed["search"].input_schema["properties"]["scope"]["enum"] == ["wiki", "sources", "all"]  # the schema is llmwiki.tools'
    assert not found.is_error and found.structured_content["hits"][0]["path"] == "sources/kelp.md"
    assert "of" in found.structured_content["readout"] and found.structured_content["total_count"] >= found.structured_content["matched_count"] > 0
    assert not page.is_error and "Kelp Forest" in page.structured_content["text"]
    assert [item["path"] for item in pages.structured_content["pages"]] == ["wiki/summaries/kelp.md", "wiki/summaries/volta.md"]
    answer = asked.structured_content
    assert not asked.is_error and not answer["refused"] and answer["citations"] and answer["citations"][0]["path"] == "sources/kelp.md"
    assert progress and progress[-1][0] == progress[-1][1]  # progress was reported, to completion
    assert dataset.structured_content["row_count"] == 1 and dataset.structured_content["rows"][0]["key"] == "Dover"
    sentences = checked.structured_content["sentences"]
    assert sentences[0]["supported"] and sentences[0]["excerpt"]["path"] == "sources/kelp.md"
    assert not sentences[1]["supported"] and sentences[1]["reason"] and "Norway" in " ".join(sentences[1]["flagged"]) + sentences[1]["reason"]
    assert "Kelp Forest" in resource.contents[0].text
    assert unverified.is_error and "no stored verification" in unverified.content[0].text


HOSTILE = [
    ("search", {"query": "x", "limit": "many"}), ("search", {"query": "x", "limit": "1e400"}), ("search", {"query": "x", "limit": [3]}),
    ("search", {"query": "x", "limit": True}), ("search", {"query": {"nested": 1}}), ("search", {"query": ["a", "b"]}), ("search", {"query": "x" * 5000}),
    ("search", {"query": "kelp\x00forest"}), ("search", {"query": "kelp", "scope": "everything"}), ("search", {}), ("search", {"query": "kelp", "extra": 1}),
    ("read_page", {"path": "../../etc/passwd"}), ("read_page", {"path": "/etc/passwd"}), ("read_page", {"path": "../wiki_config.toml"}),
    ("read_page", {"path": "concepts/../../.llmwiki/store.duckdb"}), ("read_page", {"path": "x" * 100_000}), ("read_page", {"path": "wiki/" + "a" * 300 + ".md"}),
    ("read_page", {"path": "concepts/none.md"}), ("read_page", {"path": "\x00"}), ("read_page", {"path": 12}),
    ("list_pages", {"kind": "secrets"}), ("ask", {}), ("ask", {"question": "q" * 3000}), ("ask", {"question": "What?", "open_page": "../../etc/passwd"}),
    ("query_dataset", {"category": "../../etc/passwd"}), ("query_dataset", {"category": "nope"}), ("query_dataset", {"category": "x" * 10_000}),
    ("verify_text", {"text": ""}), ("verify_text", {"text": "Hi."}), ("verify_text", {"text": "a " * 20_000}), ("verify_text", {"text": None}),
    ("page_verification", {"path": "../sources/kelp.md"}), ("page_verification", {"path": "index.md"}),
    ("save_answer", {"question": "Which forest?"}), ("ingest", {"path": "sources/kelp.md"}), ("no_such_tool", {}),
]


def test_hostile_calls_get_tool_errors_and_the_server_keeps_answering(wiki):
    async def work(client):
        outcomes = []
        for name, arguments in HOSTILE:
            result = await client.call_tool(name, arguments)
            outcomes.append((name, arguments, result.is_error, result.content[0].text if result.content else ""))
        after = await client.call_tool("search", {"query": "kelp"})  # the control: still serving
        return outcomes, after

    outcomes, after = _with_client(_params(wiki), work)
    assert len(outcomes) >= 30
    wrong = [(name, str(arguments)[:60], text[:120]) for name, arguments, is_error, text in outcomes if not is_error]
    assert wrong == []
    crashed = [(name, text) for name, _, _, text in outcomes if "Error executing tool" in text and ":" not in text.removeprefix("Error executing tool")]
    assert crashed == []  # each error says what was wrong, none is the SDK's bare crash message
    assert not after.is_error and after.structured_content["hits"]


def test_write_tools_are_offered_with_allow_writes_and_a_page_saved_by_the_cli_is_found_next(wiki):
    async def work(client):
        names = {tool.name for tool in (await client.list_tools()).tools}
        before = await client.call_tool("search", {"query": "otters raft together", "scope": "wiki"})
        (wiki.sources_dir / "otters.md").write_text("# Otters\n\nSea otters raft together while they sleep.\n", encoding="utf-8")
        cli = subprocess.run([sys.executable, "-m", "llmwiki", "ingest", "-w", str(wiki.root)], capture_output=True, text=True, timeout=300)
        assert cli.returncode == 0, cli.stderr
        after = await client.call_tool("search", {"query": "otters raft together", "scope": "wiki"})  # written by another process meanwhile
        (wiki.sources_dir / "tides.md").write_text("# Tides\n\nThe Moon raises the Tides twice a day.\n", encoding="utf-8")
        ingested = await client.call_tool("ingest", {"path": "sources/tides.md"})
        outside = await client.call_tool("ingest", {"path": "wiki_config.toml"})
        saved = await client.call_tool("save_answer", {"question": "How often does the Moon raise the Tides?"})
        refused = await client.call_tool("save_answer", {"question": "What is the capital of Mongolia?"})
        return names, before, after, ingested, outside, saved, refused

    names, before, after, ingested, outside, saved, refused = _with_client(_params(wiki, "--allow-writes"), work)
    assert names == READ_TOOLS | WRITE_TOOLS  # the control for the listing without the flag
    assert before.structured_content["case"] != "matched" or not any("otters" in hit["path"] for hit in before.structured_content["hits"])
    assert any(hit["path"] == "wiki/summaries/otters.md" for hit in after.structured_content["hits"])
    assert not ingested.is_error and ingested.structured_content["outcomes"][0]["action"] == "ingested"
    assert outside.is_error and "inside sources/" in outside.content[0].text
    assert not saved.is_error and saved.structured_content["saved_as"].startswith("wiki/answers/") and (wiki.root / saved.structured_content["saved_as"]).is_file()
    assert refused.is_error and "not saved" in refused.content[0].text


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.duckdb_only  # the transport is what this tests; the store is tested above on both
def test_http_on_loopback_serves_and_a_remote_address_is_refused(wiki):
    with pytest.raises(ServerOptionError, match="not a loopback address"):
        http_address("0.0.0.0:8765", allow_remote=False)
    assert http_address("0.0.0.0:8765", allow_remote=True) == ("0.0.0.0", 8765)  # the control: allowed when asked
    assert http_address("127.0.0.1:9", allow_remote=False) == ("127.0.0.1", 9)
    refused = subprocess.run([sys.executable, "-m", "llmwiki", "mcp", "-w", str(wiki.root), "--http", "10.1.2.3:8765"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "--allow-remote" in refused.stderr and "Traceback" not in refused.stderr
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "llmwiki", "mcp", "-w", str(wiki.root), "--http", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.3)

        async def work(client):
            return await client.call_tool("search", {"query": "kelp forest"})

        result = _with_client(f"http://127.0.0.1:{port}/mcp", work)
        assert not result.is_error and result.structured_content["hits"], json.dumps(result.structured_content)[:300]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_chat_and_the_server_share_each_tool_definition():
    from llmwiki.read.chat import TOOLS
    from llmwiki.tools import CHAT_TOOLS, READ_PAGE

    assert [tool["function"]["name"] for tool in TOOLS] == [spec.name for spec in CHAT_TOOLS]
    chat_read_page = next(tool for tool in TOOLS if tool["function"]["name"] == "read_page")
    assert chat_read_page["function"]["parameters"] == READ_PAGE.schema and chat_read_page["function"]["description"] == READ_PAGE.description


def test_ask_over_mcp_is_the_answer_of_ask_json(wiki):
    question = "Which forest do divers study every spring?"
    cli = subprocess.run([sys.executable, "-m", "llmwiki", "ask", question, "--json", "-w", str(wiki.root)], capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stderr

    async def work(client):
        return await client.call_tool("ask", {"question": question})

    served = _with_client(_params(wiki), work)
    expected = json.loads(cli.stdout)
    assert {key: served.structured_content[key] for key in ("answer", "verdict", "refused", "citations")} == {key: expected[key] for key in ("answer", "verdict", "refused", "citations")}


def test_a_changed_source_is_read_by_the_next_call(wiki):
    async def work(client):
        first = await client.call_tool("search", {"query": "seals", "scope": "sources"})
        (wiki.sources_dir / "kelp.md").write_text(KELP + "\nGrey seals rest on the rocks.\n", encoding="utf-8")
        ingest_paths(wiki, [wiki.sources_dir / "kelp.md"], generate=False)
        second = await client.call_tool("search", {"query": "seals", "scope": "sources"})
        return first, second

    first, second = _with_client(_params(wiki), work)
    assert first.structured_content["case"] == "no_match" and second.structured_content["case"] == "matched"


def test_every_line_gets_a_result_or_a_json_rpc_error_and_out_of_range_limits_are_refused(wiki):

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
    lines = ["this is not json", '{"jsonrpc": "2.0", "id": 7, "method": "tools/li', "[1,2,3]", "{}", "null",
             '{"jsonrpc": "1.0", "id": 8, "method": "tools/list"}', "x" * (1 << 20)]
    tools_list = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}  # the control: a well-formed request after them all
    stdin = "\n".join([json.dumps(initialize), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), *lines,
                       json.dumps(tools_list)]) + "\n"
    result = subprocess.run([sys.executable, "-m", "llmwiki", "mcp", "-w", str(wiki.root)], input=stdin, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    replies = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    errors = [reply["error"]["code"] for reply in replies if "error" in reply]
    assert errors == [-32700, -32700, -32600, -32600, -32600, -32600, -32700]
    assert [reply["id"] for reply in replies if "error" in reply][5] == 8  # the id of a message is kept where there is one
    listed = next(reply for reply in replies if reply.get("id") == 2)
    assert {tool["name"] for tool in listed["result"]["tools"]} >= {"search", "ask"}

    async def work(client):
        refused = await client.call_tool("search", {"query": "kelp", "limit": -5})
        kept = await client.call_tool("search", {"query": "kelp", "limit": 3})
        return refused, kept

    refused, kept = _with_client(_params(wiki), work)
    assert refused.is_error and "limit must be a whole number from 1" in refused.content[0].text
    assert not kept.is_error and kept.structured_content["hits"]
