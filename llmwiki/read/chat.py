"""The agentic chat: a model with tools (openai backend) finds its passages itself, then answers.

The model calls ``search_wiki``, ``search_sources``, ``read_page`` (confined to wiki/) and ``query_dataset``; tool
arguments are validated and a refused call tells the model why. A step limit stops tool loops. Strict mode holds the
answer until the run ends and refuses unless it rests on at least one substantive tool result. A yes or a no is held
to the evidence rule (``readings.registry.MODEL``) like any model's.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from llmwiki import prompts
from llmwiki.errors import LlmwikiError, WorkspaceError
from llmwiki.pages import cited_chunk_ids
from llmwiki.policy import SELECT_POLICY, AnswerPolicy
from llmwiki.read.answer import NOT_SUPPORTED, Answer, checked_verdict, citations_of, remove_unknown
from llmwiki.read.conversation import Conversation
from llmwiki.read.readings import Step
from llmwiki.read.search import search
from llmwiki.read.select import Selection, read_wiki_page, select
from llmwiki.services import Services
from llmwiki.text.questions import shape
from llmwiki.tools import CHAT_TOOLS, ToolArgumentError, limit_argument, text_argument
from llmwiki.workspace import Workspace

TOOLS = [spec.openai() for spec in CHAT_TOOLS]  # one definition of each tool: llmwiki.tools, shared with the MCP server


_CHAT_SPECS = {spec.name: spec for spec in CHAT_TOOLS}


def run_tool(workspace: Workspace, name: str, arguments: dict, *, cited: set[int], services: Services) -> tuple[str, bool]:
    """Run one tool call; returns (text for the model, whether it found something substantive).
    services: the datasets and the search embedder the tools read.

    Every argument is checked (type, range, length) and no error escapes: whatever goes wrong is
    told to the model as a tool message, so one bad call never aborts an answer.
    """
    from llmwiki.datasets import DatasetError

    if not isinstance(arguments, dict):
        return f"Refused: the arguments of {name} must be a JSON object.", False
    spec = _CHAT_SPECS.get(name)
    if spec is None:
        return f"Unknown tool {name!r}. Use one of: {', '.join(_CHAT_SPECS)}.", False
    try:
        spec.check(arguments)
        if name in ("search_wiki", "search_sources"):
            result = search(workspace, text_argument(arguments, "query"), scope="wiki" if name == "search_wiki" else "sources", limit=limit_argument(arguments),
                            embedder=services.embedder)
            lines = [result.readout] + [f"[c{hit.chunk_id}] ({hit.label}) {hit.preview}" for hit in result.hits]
            cited.update(hit.chunk_id for hit in result.hits)
            return "\n".join(lines), bool(result.hits)
        if name == "read_page":
            text = read_wiki_page(workspace, text_argument(arguments, "path"))
            for chunk_id in cited_chunk_ids(text):
                cited.add(chunk_id)
            return text[:20_000], True
        frame = services.datasets.query(text_argument(arguments, "category"), key=text_argument(arguments, "key") or None,
                                           metric=text_argument(arguments, "metric") or None)
        shown_rows = SELECT_POLICY.max_dataset_rows
        rows = frame.head(shown_rows).to_dicts()
        return json.dumps(rows, default=str)[:20_000] + (f"\n({frame.height - shown_rows} more rows not shown)" if frame.height > shown_rows else ""), frame.height > 0
    except ToolArgumentError as err:
        return f"Refused: bad arguments for {name} ({err}).", False
    except (WorkspaceError, DatasetError) as err:
        return f"Refused: {err}", False
    except (TypeError, ValueError, OverflowError) as err:
        return f"Refused: bad arguments for {name} ({err}).", False
    except (OSError, LlmwikiError) as err:  # a path the file system will not take, an unreadable page
        return f"Refused: {name} failed ({type(err).__name__}: {str(err)[:300]}).", False


def agentic_answer(
    workspace,
    question: str,
    *,
    services: Services | None = None,
    strict: bool = True,
    conversation: Conversation | None = None,
    on_token: Callable[[str], None] | None = None,
) -> Answer:
    """Let the model use the tools; strict holds the answer until it rests on a tool result.
    services: the backend (a generating one), the tracer, the datasets and the search embedder the tools read
    (by default built from the workspace's settings for this call)."""
    services = services or Services(workspace)
    backend, tracer = services.backend, services.tracer
    if not backend.generates:
        raise LlmwikiError("agentic chat needs a generating backend with tool calls: set [llm] backend = \"openai\".")
    settings = workspace.config.chat
    blocked = select(workspace, question, services=services).refused if settings.blacklist else None
    if blocked:
        return Answer(question=question, text=blocked, selection=Selection(question=question, refused=blocked), backend=backend.name, refused=True,
                      decided_by="question refused", steps=(Step("question refused", "refused", "a blacklisted term"),))
    messages = [{"role": "system", "content": prompts.SYSTEM + " Use the tools to find passages before answering."}]
    if conversation is not None:
        messages += conversation.reduced(keep=settings.history_messages)
    messages.append({"role": "user", "content": question})
    cited: set[int] = set()
    substantive = False
    steps: list[str] = []
    text = ""
    for step in range(settings.max_tool_steps + 1):
        final_round = step == settings.max_tool_steps
        with tracer.span("ask.agent_step", step=step) as span:
            completion = backend.complete(messages, tools=None if final_round else TOOLS, on_token=None if strict else on_token)
            span.set(model=completion.model, prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens, tool_calls=len(completion.tool_calls))
        if not completion.tool_calls or final_round:  # past the step limit, tool calls are not run
            text = completion.text.strip()
            if final_round and completion.tool_calls:
                steps.append(f"step limit ({settings.max_tool_steps}) reached; further tool calls were not run")
            break
        messages.append({"role": "assistant", "content": completion.text or "", "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}} for call in completion.tool_calls]})
        for call in completion.tool_calls:
            result, found = run_tool(workspace, call.name, call.parsed_arguments(), cited=cited, services=services)
            substantive = substantive or found
            steps.append(f"{call.name}({call.arguments}) -> {'found' if found else result.splitlines()[0][:120]}")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    else:
        text = ""
    selection = Selection(question=question, notes=tuple(steps))
    if strict and not substantive:
        refusal = "No tool found anything to rest an answer on, so none is given (strict mode)."
        return Answer(question=question, text=refusal, selection=selection, backend=backend.name, refused=True, tool_steps=tuple(steps),
                      decided_by="strict mode", steps=(Step("strict mode", "refused", "no tool found anything"),))
    if strict and on_token is not None and text:
        on_token(text)
    citations, unknown = citations_of(workspace, text, sorted(cited))
    text, verdict, decided_by, trail = remove_unknown(text, unknown) or NOT_SUPPORTED, None, "model reply", ()
    if shape(question).yes_no and (checked := checked_verdict(question, text, citations, policy=AnswerPolicy.from_config(workspace.config.chat))) is not None:
        text, verdict, decided_by, trail = checked.text, checked.verdict, checked.by, checked.steps
    return Answer(question=question, text=text, selection=selection, citations=citations, verdict=verdict, decided_by=decided_by, steps=trail,
                  backend=backend.name, unknown_citations=unknown, tool_steps=tuple(steps))

