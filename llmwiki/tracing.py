"""Tracing: each step of an operation appends a span to .llmwiki/traces/spans.jsonl.

A span records the operation, its run, its parent, start time, duration, the
model and token counts when known. With payloads on, prompts and replies are
stored content-addressed beside it (``payloads/<sha256>.txt``) and the span
holds their hashes, so a trace stays small and a payload is stored once.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path


@dataclass
class Span:
    operation: str
    run_id: str
    span_id: str
    parent_id: str | None
    started_at: str
    attributes: dict = field(default_factory=dict)
    duration_ms: float = 0.0

    def set(self, **attributes) -> None:
        self.attributes.update({key: value for key, value in attributes.items() if value is not None})


class Tracer:
    """Writes spans for one workspace; ``Tracer(None)`` records nothing."""

    def __init__(self, folder: Path | None, *, payloads: bool = True) -> None:
        self.folder = folder
        self.payloads = payloads
        self._local = threading.local()
        self._lock = threading.Lock()

    @contextmanager
    def span(self, operation: str, **attributes):
        """A span around a block; nested spans share the run and name their parent."""
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        parent = stack[-1] if stack else None
        span = Span(
            operation=operation,
            run_id=parent.run_id if parent else uuid.uuid4().hex[:12],
            span_id=uuid.uuid4().hex[:12],
            parent_id=parent.span_id if parent else None,
            started_at=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        )
        span.set(**attributes)
        stack.append(span)
        started = time.perf_counter()
        try:
            yield span
        except BaseException as err:
            span.set(error=f"{type(err).__name__}: {err}")
            raise
        finally:
            span.duration_ms = round((time.perf_counter() - started) * 1000, 3)
            stack.pop()
            self._write(span)

    def payload(self, text: str) -> str | None:
        """Store a large text once, by content; returns its hash (None when off)."""
        if self.folder is None or not self.payloads:
            return None
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        path = self.folder / "payloads" / f"{digest}.txt"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            temporary.write_text(text, encoding="utf-8")
            temporary.replace(path)
        return digest

    def _write(self, span: Span) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        line = json.dumps({
            "run_id": span.run_id, "span_id": span.span_id, "parent_id": span.parent_id, "operation": span.operation,
            "started_at": span.started_at, "duration_ms": span.duration_ms, **span.attributes,
        }, default=str)
        with self._lock, (self.folder / "spans.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def read_spans(folder: Path) -> list[dict]:
    """Every span recorded in a traces folder, in file order (bad lines skipped)."""
    path = folder / "spans.jsonl"
    if not path.exists():
        return []
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            spans.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return spans


def last_run(folder: Path) -> list[dict]:
    """The spans of the most recent run, parents before children."""
    spans = read_spans(folder)
    if not spans:
        return []
    run_id = spans[-1]["run_id"]
    run = [span for span in spans if span["run_id"] == run_id]
    children: dict[str | None, list[dict]] = {}
    for span in run:
        children.setdefault(span.get("parent_id"), []).append(span)
    ordered: list[dict] = []

    def visit(parent_id: str | None) -> None:
        for span in sorted(children.get(parent_id, []), key=lambda item: item["started_at"]):
            ordered.append(span)
            visit(span["span_id"])

    visit(None)
    return ordered


NULL_TRACER = Tracer(None)
