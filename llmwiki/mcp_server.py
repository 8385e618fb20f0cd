"""The workspace as an MCP server: search, cited answers and the local verifier as tools for any agent.

``llmwiki mcp -w WS`` serves over stdio (what desktop agents start), or over
streamable HTTP on a loopback address (``--http 127.0.0.1:8765``). Built on
the official SDK's ``MCPServer`` (``mcp`` on PyPI), with each tool defined
once in ``llmwiki.tools`` (name, description, JSON schema, argument checks):
the SDK's own argument parsing is bypassed (``_SpecTool``) so that the
schema an agent sees is the one the checks enforce, and every refused call
is a tool error the agent can read (``is_error``), never a crash of the
server.

Read tools are always listed; ``save_answer`` and ``ingest`` only with
``--allow-writes``. Models (the verifier, the answer ranker and embedder) are
loaded once per server process, on first use. Every call opens the store
as the CLI does (short DuckDB connections, or the PostgreSQL pool), so a page
the CLI or a notebook writes meanwhile is found by the next call. Long calls
(ask, verify_text) run in a worker thread and report MCP progress.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Callable
from typing import Any

from llmwiki.errors import LlmwikiError
from llmwiki.tools import (
    AGENT_TOOLS,
    ToolArgumentError,
    ToolSpec,
    choice_argument,
    limit_argument,
    text_argument,
)
from llmwiki.services import Services
from llmwiki.workspace import Workspace

PAGE_KINDS = {"summaries": "wiki/summaries/", "concepts": "wiki/concepts/", "answers": "wiki/answers/", "all": "wiki/"}


class ServerOptionError(LlmwikiError):
    """`llmwiki mcp` was started with an address it will not serve on."""


def http_address(value: str, *, allow_remote: bool) -> tuple[str, int]:
    """(host, port) of --http HOST:PORT, refusing a host that is not loopback unless allow_remote."""
    host, separator, port = value.rpartition(":")
    if not separator or not port.isdigit() or not 0 < int(port) < 65536:
        raise ServerOptionError(f"--http {value}: give HOST:PORT, e.g. 127.0.0.1:8765")
    host = host.strip("[]") or "127.0.0.1"
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not allow_remote:
        raise ServerOptionError(
            f"--http {value}: {host} is not a loopback address, so anyone who can reach it could read the wiki and run its tools "
            "(the server has no authentication). Serve on 127.0.0.1, or pass --allow-remote behind a proxy that authenticates."
        )
    return host, int(port)


def _page_path(workspace: Workspace, value: str) -> str:
    """A wiki page's workspace path from what an agent gives ('concepts/x.md' or 'wiki/concepts/x.md')."""
    from llmwiki.review import page_under_wiki

    relative = value if value.startswith("wiki/") else f"wiki/{value}"
    return page_under_wiki(workspace, relative)


def _sentence_json(score, threshold: float) -> dict:
    return {"sentence": score.sentence, "supported": score.supported(threshold), "score": round(score.value, 4),
            "p_entailment": round(score.p_entailment, 4), "reason": score.why(threshold), "flagged": list(score.flagged),
            "excerpt": {"text": score.excerpt, "path": score.excerpt_path, "page": score.excerpt_page, "chunk_id": score.excerpt_chunk_id}}


def tool_functions(workspace: Workspace, services: Services) -> dict[str, Callable[[dict, Callable[[float, float, str], None]], Any]]:
    """{tool name: run(arguments, progress) -> JSON-able result}, the arguments already checked against the spec.
    services: the server's models, each loaded once, on the first call that needs it."""
    from llmwiki.publish.answers import save_answer
    from llmwiki.read.answer import answer_question
    from llmwiki.read.search import search
    from llmwiki.read.select import read_wiki_page
    from llmwiki.verify.page import load_verification, verify_text, wiki_pages

    threshold = workspace.config.verification.threshold

    def run_search(arguments, progress):
        result = search(workspace, text_argument(arguments, "query"), scope=choice_argument(arguments, "scope", ("wiki", "sources", "all"), "all"),
                        limit=limit_argument(arguments), embedder=services.embedder)
        return {"readout": result.readout, "case": result.case, "matched_count": result.matched_count, "total_count": result.total_count,
                "widened": result.widened, "terms": list(result.terms),
                "hits": [{"chunk_id": hit.chunk_id, "path": hit.path, "title": hit.title, "kind": hit.kind, "page": hit.page,
                          "breadcrumb": list(hit.breadcrumb), "score": round(hit.score, 4), "preview": hit.preview, "stale": hit.stale} for hit in result.hits]}

    def run_read_page(arguments, progress):
        path = text_argument(arguments, "path")
        return {"path": _page_path(workspace, path), "text": read_wiki_page(workspace, path)}

    def run_list_pages(arguments, progress):
        from llmwiki.pages import held_reason, split_frontmatter

        prefix = PAGE_KINDS[choice_argument(arguments, "kind", tuple(PAGE_KINDS), "all")]
        pages = []
        for page in wiki_pages(workspace):
            if not page.startswith(prefix):
                continue
            meta, _ = split_frontmatter((workspace.root / page).read_text(encoding="utf-8"))
            document = workspace.store.document_by_path(page)
            stored = load_verification(workspace, page)
            pages.append({"path": page, "kind": page.split("/")[1], "title": str(meta.get("title") or page), "stale": bool(document and document.stale_since),
                          "held": held_reason(meta), "verification": None if stored is None else
                          {"supported_share": round(stored.supported_share(threshold), 4), "sentences": len(stored.sentences), "outdated": stored.outdated}})
        return {"pages": pages}

    def run_ask(arguments, progress):
        progress(0, 2, "selecting context")
        open_page = text_argument(arguments, "open_page") or None
        if open_page is not None:
            open_page = _page_path(workspace, open_page)
        answer = answer_question(workspace, text_argument(arguments, "question"), open_page=open_page, services=services)
        progress(2, 2, "answered")
        return answer.as_json()

    def run_query_dataset(arguments, progress):
        from llmwiki.policy import SELECT_POLICY

        frame = services.datasets.query(text_argument(arguments, "category"), key=text_argument(arguments, "key") or None,
                                       metric=text_argument(arguments, "metric") or None)
        shown = SELECT_POLICY.max_dataset_rows
        return {"rows": json.loads(frame.head(shown).write_json()), "row_count": frame.height, "shown": min(frame.height, shown)}

    def run_verify_text(arguments, progress):
        text = text_argument(arguments, "text")
        progress(0, 1, "scoring" if services.loaded("verifier") else "loading the verifier")
        scores = verify_text(workspace, text, services.verifier)
        progress(1, 1, "scored")
        return {"threshold": threshold, "verifier": services.verifier.name, "supported_share": round(sum(score.supported(threshold) for score in scores) / len(scores), 4),
                "sentences": [_sentence_json(score, threshold) for score in scores]}

    def run_page_verification(arguments, progress):
        from llmwiki.review import stored_review

        page = _page_path(workspace, text_argument(arguments, "path"))
        review = stored_review(workspace, page)
        if review is None:
            raise ToolArgumentError(f"{page} has no stored verification yet; verify it (`llmwiki verify {page}`), or check its text with verify_text")
        return review.as_json(threshold)

    def run_save_answer(arguments, progress):
        progress(0, 2, "answering")
        answer = answer_question(workspace, text_argument(arguments, "question"), services=services)
        if answer.refused:
            raise ToolArgumentError(f"not saved: the sources do not answer it ({answer.text.strip()[:200]})")
        path, commit = save_answer(workspace, answer, title=text_argument(arguments, "title") or None, services=services)
        progress(2, 2, "saved")
        return {"saved_as": path, "commit": commit, "answer": answer.as_json()}

    def run_ingest(arguments, progress):
        from llmwiki.publish.wiki import ingest_paths

        path = text_argument(arguments, "path")
        relative = workspace.relative(workspace.root / path)
        if not relative.startswith("sources/") or not (workspace.root / relative).is_file():
            raise ToolArgumentError(f"{path}: ingest takes a file already inside sources/ (copy it there first)")
        report = ingest_paths(workspace, [workspace.root / relative], services=services)
        return {"summary": report.summary(), "outcomes": [{"path": outcome.path, "action": outcome.action, "reason": outcome.reason} for outcome in report.outcomes]}

    return {"search": run_search, "read_page": run_read_page, "list_pages": run_list_pages, "ask": run_ask, "query_dataset": run_query_dataset,
            "verify_text": run_verify_text, "page_verification": run_page_verification, "save_answer": run_save_answer, "ingest": run_ingest}


def build_server(workspace: Workspace, *, allow_writes: bool = False, services: Services | None = None):
    """The MCP server of a workspace: the read tools (and the write tools with allow_writes) and the pages as resources.
    services: the models its tools use, loaded once per server (by default built from the workspace's settings)."""
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.server.mcpserver.tools.base import Tool
    from mcp_types import CallToolResult, TextContent
    from pydantic import Field

    functions = tool_functions(workspace, services or Services(workspace))

    class _SpecTool(Tool):
        """A tool whose schema and checks are its ToolSpec's: the raw arguments go to the spec, not to a pydantic model."""

        spec: ToolSpec = Field(exclude=True)
        runner: Callable = Field(exclude=True)

        async def run(self, arguments: dict[str, Any], context, convert_result: bool = False) -> Any:
            async def report(done: float, total: float, message: str) -> None:
                try:
                    await context.report_progress(done, total, message)
                except Exception:  # a client that takes no progress (no token, a closed stream): the work goes on
                    pass

            def progress(done: float, total: float, message: str) -> None:
                anyio.from_thread.run(report, done, total, message)

            try:
                checked = self.spec.check(arguments)
                result = await anyio.to_thread.run_sync(lambda: self.runner(checked, progress))
            except (LlmwikiError, OSError, ValueError, TypeError, OverflowError) as err:
                raise ToolError(f"{self.spec.name}: {err}") from err
            text = json.dumps(result, ensure_ascii=False, default=str)
            return CallToolResult(content=[TextContent(text=text)], structured_content=json.loads(text))

    async def _placeholder() -> None:
        """Stands in for the tool function: _SpecTool.run calls the spec's runner instead."""

    tools = []
    for spec in AGENT_TOOLS:
        if spec.writes and not allow_writes:
            continue
        base = Tool.from_function(_placeholder, name=spec.name, description=spec.description, structured_output=False)
        fields = {name: getattr(base, name) for name in type(base).model_fields}
        tools.append(_SpecTool(**{**fields, "parameters": spec.schema, "context_kwarg": None}, spec=spec, runner=functions[spec.name]))
    server = MCPServer("llmwiki", instructions=(
        f"llmwiki workspace {workspace.root.name}: search its wiki and sources, ask cited questions, and check any text sentence by "
        "sentence against its sources with a local verifier (verify_text). Cite chunk ids as [c123]."),
        tools=tools, log_level="WARNING")

    @server.resource("llmwiki://wiki/{+path}", name="wiki page", description="A page of the wiki, as Markdown (path under wiki/, e.g. concepts/otter.md)",
                     mime_type="text/markdown")
    def wiki_page(path: str) -> str:
        from llmwiki.read.select import read_wiki_page

        try:
            return read_wiki_page(workspace, path)
        except (LlmwikiError, OSError) as err:
            raise ResourceError(str(err)) from err

    return server


def rejected_line(line: str) -> dict | None:
    """The JSON-RPC error answering a line that is no JSON-RPC 2.0 message (None: the line is one, or blank): -32700 for
    text that is not JSON, -32600 for JSON that is not a request, notification or response (``[1,2,3]``, ``{}``, ``null``,
    a wrong ``jsonrpc`` version). The SDK's stdio transport reads such lines and answers nothing."""
    import mcp_types as types

    if not line.strip():
        return None
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except Exception:
        pass
    try:
        value = json.loads(line)
    except ValueError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: the line is not JSON"}}
    request_id = value.get("id") if isinstance(value, dict) and isinstance(value.get("id"), (str, int)) and not isinstance(value.get("id"), bool) else None
    version = value.get("jsonrpc") if isinstance(value, dict) else None
    why = (f"jsonrpc must be \"2.0\", not {version!r}" if isinstance(value, dict) and version != "2.0"
           else "a JSON-RPC message is an object with a method (and an id for a request), or a result or error for an id")
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": f"Invalid Request: {why}"}}


async def _serve_stdio(server) -> None:
    """The SDK's stdio transport, with every line that is no JSON-RPC message answered by its error (``rejected_line``)."""
    import sys

    import anyio
    from mcp.server.stdio import stdio_server

    # The wire is a private copy of fds 0 and 1; the fds themselves point at the null device and at stderr while serving,
    # so a library that prints (a progress bar) cannot break a frame, as the SDK's own transport arranges.
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)  # to put fds 0 and 1 back when the client goes
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    stdin = anyio.wrap_file(os.fdopen(wire_in, "r", encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(os.fdopen(wire_out, "w", encoding="utf-8", buffering=1))

    class _Checked:
        """stdin as the transport reads it: only JSON-RPC messages get through; the rest is answered here."""

        async def __aiter__(self):
            async for line in stdin:
                error = rejected_line(line)
                if error is None:
                    if line.strip():
                        yield line
                    continue
                await stdout.write(json.dumps(error) + "\n")
                await stdout.flush()

    try:
        async with stdio_server(stdin=_Checked(), stdout=stdout) as (read_stream, write_stream):
            lowlevel = server._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    finally:
        for saved, fd in ((saved_in, 0), (saved_out, 1)):
            os.dup2(saved, fd)
            os.close(saved)


def serve(workspace: Workspace, *, allow_writes: bool = False, http: str | None = None, allow_remote: bool = False) -> None:
    """Serve the workspace over stdio, or streamable HTTP at http ("HOST:PORT"), until the client goes or Ctrl-C."""
    if http is None:
        import anyio

        server = build_server(workspace, allow_writes=allow_writes)
        anyio.run(_serve_stdio, server)
        return
    host, port = http_address(http, allow_remote=allow_remote)
    build_server(workspace, allow_writes=allow_writes).run("streamable-http", host=host, port=port)
