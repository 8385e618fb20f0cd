"""Tools an agent may call: one definition of each (name, description, JSON schema, argument checks).

The agentic chat (``llmwiki.read.answer``) offers the read tools to a model, and
the MCP server (``llmwiki.mcp_server``) offers them and more to any agent,
from these same specs and checks. Every argument is checked here before
anything runs, and fails closed: a wrong type, a value out of range, text
over its limit, a NUL byte, a path that leaves ``wiki/`` are refused with a
``ToolArgumentError`` that says which argument and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llmwiki.errors import LlmwikiError

# The longest each text argument may be, in characters.
TEXT_LIMITS = {"query": 2000, "path": 1000, "category": 200, "key": 500, "metric": 500, "question": 2000, "text": 20_000, "title": 200,
               "open_page": 1000, "kind": 20, "scope": 20}
MAX_LIMIT = 20  # the most hits or rows a search returns to a tool call


class ToolArgumentError(LlmwikiError):
    """A tool was called with an argument it does not take; the message names the argument and the fix."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, what it does (for the model or agent), and the JSON schema of its arguments."""

    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    writes: bool = False  # offered only where writes are allowed (`llmwiki mcp --allow-writes`)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": self.properties, "required": list(self.required), "additionalProperties": False}

    def openai(self) -> dict[str, Any]:
        """The tool as an OpenAI-compatible ``tools`` entry."""
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.schema}}

    def check(self, arguments: Any) -> dict[str, Any]:
        """The arguments as a dict with only known keys, or ToolArgumentError."""
        if not isinstance(arguments, dict):
            raise ToolArgumentError(f"the arguments of {self.name} must be a JSON object, not {type(arguments).__name__}")
        unknown = sorted(set(arguments) - set(self.properties))
        if unknown:
            raise ToolArgumentError(f"{self.name} takes no argument {', '.join(map(repr, unknown))}; it takes {', '.join(self.properties) or 'none'}")
        missing = [name for name in self.required if arguments.get(name) in (None, "")]
        if missing:
            raise ToolArgumentError(f"{self.name} needs {', '.join(missing)}")
        return arguments


def text_argument(arguments: dict, name: str, default: str = "") -> str:
    """A text argument (a string, or a number read as one) within its length limit and without NUL bytes."""
    value = arguments.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ToolArgumentError(f"{name} must be text, not {type(value).__name__}")
    value = str(value)
    limit = TEXT_LIMITS[name]
    if len(value) > limit:
        raise ToolArgumentError(f"{name} is {len(value)} characters long; the limit is {limit}")
    if "\x00" in value:
        raise ToolArgumentError(f"{name} contains a NUL byte; remove it")
    return value


def limit_argument(arguments: dict, default: int = 5) -> int:
    """The limit argument: a whole number from 1 to MAX_LIMIT (default when absent); Infinity, NaN, 1e400, text are refused."""
    value = arguments.get("limit", default)
    if value is None:
        return default
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf"))
            or int(value) != value or not 1 <= value <= MAX_LIMIT):
        raise ToolArgumentError(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {value!r}")
    return int(value)


def choice_argument(arguments: dict, name: str, choices: tuple[str, ...], default: str) -> str:
    value = text_argument(arguments, name, default) or default
    if value not in choices:
        raise ToolArgumentError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


_LIMIT = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "description": f"how many to return (1 to {MAX_LIMIT}, default 5)"}
_QUERY = {"type": "string", "maxLength": TEXT_LIMITS["query"], "description": "words to search for"}

SEARCH = ToolSpec(
    "search",
    "Full-text search (BM25: all words first, widening to any word) of the wiki pages, the source documents, or both. Returns the "
    "hits (chunk id, document, page, preview) and an honest readout: how many chunks matched of how many, and whether it widened.",
    {"query": _QUERY, "scope": {"type": "string", "enum": ["wiki", "sources", "all"], "description": "where to search (default all)"}, "limit": _LIMIT},
    required=("query",),
)
SEARCH_WIKI = ToolSpec("search_wiki", "Full-text search of the wiki pages (all words, widening to any word). Returns labelled 400-character previews with chunk ids.",
                       {"query": _QUERY, "limit": _LIMIT}, required=("query",))
SEARCH_SOURCES = ToolSpec("search_sources", "Full-text search of the raw source documents. Returns labelled 400-character previews with chunk ids.",
                          {"query": _QUERY, "limit": _LIMIT}, required=("query",))
READ_PAGE = ToolSpec("read_page", "Read one wiki page in full (Markdown). Only pages inside wiki/, e.g. 'concepts/otter.md'.",
                     {"path": {"type": "string", "maxLength": TEXT_LIMITS["path"], "description": "the page, relative to wiki/ (or starting with wiki/)"}},
                     required=("path",))
QUERY_DATASET = ToolSpec("query_dataset", "Rows of a Markdown dataset (datasets/<category>.md), filtered by key and metric.",
                         {"category": {"type": "string", "maxLength": TEXT_LIMITS["category"]}, "key": {"type": "string", "maxLength": TEXT_LIMITS["key"]},
                          "metric": {"type": "string", "maxLength": TEXT_LIMITS["metric"]}}, required=("category",))
LIST_PAGES = ToolSpec("list_pages", "The wiki's pages: path, kind, title, whether stale or held for review, and the stored verification's supported share.",
                      {"kind": {"type": "string", "enum": ["summaries", "concepts", "answers", "all"], "description": "which pages (default all)"}})
ASK = ToolSpec("ask", "Ask the wiki a question: the cited answer exactly as `llmwiki ask --json` gives it (answer, verdict for yes/no questions, "
               "refused when the sources do not say, citations with path, page and text, decided_by: the reading that decided, and the steps tried).",
               {"question": {"type": "string", "maxLength": TEXT_LIMITS["question"]},
                "open_page": {"type": "string", "maxLength": TEXT_LIMITS["open_page"], "description": "a wiki page open beside the question"}},
               required=("question",))
VERIFY_TEXT = ToolSpec("verify_text", "Check any text, sentence by sentence, against the workspace's sources with llmwiki's local verifier: per sentence "
                       "supported or not, the score, the reason (a name or number the evidence lacks or opposes), the flagged words and the best "
                       "excerpt with its path and chunk id.",
                       {"text": {"type": "string", "maxLength": TEXT_LIMITS["text"], "description": "the paragraph(s) to check"}}, required=("text",))
PAGE_VERIFICATION = ToolSpec("page_verification", "The stored verification of a wiki page: each sentence's score beside the reviewers' verdict, the supported share, contested claims.",
                             {"path": READ_PAGE.properties["path"]}, required=("path",))
SAVE_ANSWER = ToolSpec("save_answer", "Ask a question and save the cited answer as a wiki page (wiki/answers/); a refusal or an answer without citations is not saved.",
                       {"question": ASK.properties["question"], "title": {"type": "string", "maxLength": TEXT_LIMITS["title"]}},
                       required=("question",), writes=True)
INGEST = ToolSpec("ingest", "Ingest a file already inside the workspace's sources/ (extract, chunk, index, write its wiki pages).",
                  {"path": {"type": "string", "maxLength": TEXT_LIMITS["path"], "description": "the file, relative to the workspace (sources/...)"}},
                  required=("path",), writes=True)

CHAT_TOOLS = (SEARCH_WIKI, SEARCH_SOURCES, READ_PAGE, QUERY_DATASET)  # what the agentic chat offers a model
AGENT_TOOLS = (SEARCH, READ_PAGE, LIST_PAGES, ASK, QUERY_DATASET, VERIFY_TEXT, PAGE_VERIFICATION, SAVE_ANSWER, INGEST)  # the MCP server's
