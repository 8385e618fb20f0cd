"""Frozen records passed between the steps of the pipeline.

source file -> extract (Extraction of PageText made of Blocks) -> chunk (Chunk)
-> store (Document rows). Offsets are character offsets into the page's text,
so a citation (document, page, start, end) points at exact characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

BREADCRUMB_SEPARATOR = " > "


@dataclass(frozen=True)
class Block:
    """A paragraph-like run of text on one page, under a heading breadcrumb."""

    text: str
    start: int
    breadcrumb: tuple[str, ...] = ()
    is_heading: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.text)


@dataclass(frozen=True)
class PageText:
    """The text of one page (a PDF page; the whole file for other formats)."""

    number: int
    text: str
    blocks: tuple[Block, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True)
class Dropped:
    """Text an extractor left out of a document, and why ("navigation", "running head", "contents", ...)."""

    reason: str
    text: str  # what was left out, or a description of it
    page_number: int = 1
    characters: int | None = None  # how much was left out (None: the text's length)

    @property
    def size(self) -> int:
        return len(self.text) if self.characters is None else self.characters


@dataclass(frozen=True)
class Extraction:
    """What an extractor read from a file."""

    parser: str
    pages: tuple[PageText, ...]
    title: str | None = None
    notes: tuple[str, ...] = ()  # what the parsing library warned about (shown in the ingest report)
    dropped: tuple[Dropped, ...] = ()  # page furniture left out, so a reader can check what was removed

    @property
    def char_count(self) -> int:
        return sum(len(page.text) for page in self.pages)


@dataclass(frozen=True)
class Chunk:
    """A span of one page, within the token budget; ``id`` is set once stored."""

    page_number: int
    start: int
    end: int
    text: str
    token_count: int
    breadcrumb: tuple[str, ...] = ()
    id: int | None = None
    document_id: int | None = None

    @property
    def breadcrumb_text(self) -> str:
        return BREADCRUMB_SEPARATOR.join(self.breadcrumb)


_EXTRACTOR = re.compile(r"^[a-z]+ \d+\b")


def extractor_tag(parser: str | None) -> str | None:
    """The extractor and its version in a stored parser text ("html 2 (utf-8)" -> "html 2"); None before versions."""
    match = _EXTRACTOR.match(parser or "")
    return match.group(0) if match else None


@dataclass(frozen=True)
class Document:
    """A row of the documents table."""

    id: int
    kind: str
    path: str
    title: str | None
    status: str
    error: str | None
    content_hash: str | None
    size_bytes: int | None
    mtime: float | None
    version: int
    parser: str | None
    stale_since: datetime | None
    derived_from: int | None
    created_at: datetime
    updated_at: datetime

    @property
    def read_as(self) -> str | None:
        """What pages derived from this document rest on: its bytes and the extractor that read them. A page or a
        verification made from another value is out of date (the file changed, or a newer extractor read it)."""
        tag = extractor_tag(self.parser)
        return f"{self.content_hash} {tag}" if self.content_hash and tag else self.content_hash
