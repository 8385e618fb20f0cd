"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Each test scripts its replies: a list of ``Reply`` objects served in order
(the last one repeats). Requests are recorded so tests can check what the
client sent.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    content: str | None = "Hello from the stub."
    tool_calls: list[dict] | None = None
    raw_body: str | None = None  # sent as is (for malformed replies)
    delay_s: float = 0.0
    headers: dict = field(default_factory=dict)
    error: str | None = None  # message of an error body
    stall_after: int | None = None  # streaming: send this many events, then stall for stall_s (a stream that times out half-way)
    stall_s: float = 0.0


class StubServer:
    def __init__(self, replies: list[Reply] | None = None, *, api_key: str | None = "test-key", models: tuple[str, ...] = ("stub-model",)) -> None:
        self.replies = list(replies or [Reply()])
        self.api_key = api_key
        self.models = models
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> StubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def next_reply(self) -> Reply:
        with self._lock:
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, body: str, headers: dict | None = None, content_type: str = "application/json") -> None:
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
                if self.path != "/v1/chat/completions":
                    self._send(404, json.dumps({"error": {"message": "Not Found"}}))
                    return
                if stub.api_key and self.headers.get("Authorization") != f"Bearer {stub.api_key}":
                    self._send(401, json.dumps({"error": {"message": "Incorrect API key provided"}}))
                    return
                if body.get("model") not in stub.models:
                    self._send(404, json.dumps({"error": {"message": f"The model `{body.get('model')}` does not exist"}}))
                    return
                reply = stub.next_reply()
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    self._send(reply.status, json.dumps({"error": {"message": reply.error or "server error"}}), reply.headers)
                    return
                if reply.raw_body is not None:
                    self._send(200, reply.raw_body)
                    return
                if body.get("stream"):
                    self._stream(reply, body["model"])
                    return
                message = {"role": "assistant", "content": reply.content}
                if reply.tool_calls:
                    message["tool_calls"] = [
                        {"id": f"call_{index}", "type": "function", "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}
                        for index, call in enumerate(reply.tool_calls)
                    ]
                payload = {
                    "id": "chatcmpl-stub", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                }
                self._send(200, json.dumps(payload))

            def _stream(self, reply: Reply, model: str) -> None:
                events = []
                for piece in (reply.content or "").split(" "):
                    if piece:
                        events.append({"model": model, "choices": [{"index": 0, "delta": {"content": piece + " "}}]})
                for index, call in enumerate(reply.tool_calls or []):
                    arguments = json.dumps(call["arguments"])
                    middle = len(arguments) // 2
                    events.append({"model": model, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": f"call_{index}", "function": {"name": call["name"], "arguments": arguments[:middle]}}]}}]})
                    events.append({"model": model, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "function": {"arguments": arguments[middle:]}}]}}]})
                events.append({"model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                lines = [f"data: {json.dumps(event)}\n\n" for event in events] + ["data: [DONE]\n\n"]
                if reply.stall_after is None:
                    self._send(200, "".join(lines), content_type="text/event-stream")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write("".join(lines[: reply.stall_after]).encode("utf-8"))
                self.wfile.flush()
                time.sleep(reply.stall_s)
                try:
                    self.wfile.write("".join(lines[reply.stall_after:]).encode("utf-8"))
                except OSError:
                    pass  # the client gave up, as it should

        return Handler
