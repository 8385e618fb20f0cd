"""Wiki pages on disk: frontmatter, slugs, citations, atomic multi-file writes.

A page is Markdown with YAML frontmatter. Citations are reference-style
links, ``[c123]``, whose definitions at the end of the page point at the
cited source file and name the page and heading of chunk 123, so they render
as links in any Markdown viewer and stay machine-readable for verification::

    Volta invented the pile in 1800. [c12]

    [c12]: ../../sources/alessandro-volta.html "p.1 · Alessandro Volta"

Writes go through ``write_files``: every new text is written to a temporary
file beside its target, then all are renamed into place; if anything fails
before the last rename, the files already replaced are put back. The caller
updates the store afterwards and calls ``restore`` if that fails, so a page
write and its index update happen together or not at all.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

import yaml

# libyaml's reader when PyYAML was built with it (the wheels are): ~10x faster than the pure-Python one, which
# matters where a question reads every concept page's frontmatter.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

from llmwiki.errors import LlmwikiError

# Where generated pages live, relative to the workspace root.
SUMMARIES = "wiki/summaries"
CONCEPTS = "wiki/concepts"
ANSWERS = "wiki/answers"
_FRONTMATTER = re.compile(r"\A---[ \t]*\n(.*?\n)---[ \t]*(?:\n|\Z)", re.DOTALL)
CITATION = re.compile(r"\[c(\d+)\](?!\()")
_CITATION_DEFINITION = re.compile(r"^\[c(\d+)\]:\s.*$", re.MULTILINE)
_RESERVED_SLUGS = frozenset({"index", "overview", "log", "con", "prn", "aux", "nul", "com1", "lpt1", "readme"})


class PageError(LlmwikiError):
    """A page could not be read or written."""


@dataclass(frozen=True)
class Page:
    """A wiki page: its path under the workspace, frontmatter and body."""

    path: str
    meta: dict = field(default_factory=dict)
    body: str = ""

    @property
    def title(self) -> str:
        return str(self.meta.get("title") or Path(self.path).stem)

    def render(self) -> str:
        return render_page(self.meta, self.body)


@dataclass(frozen=True)
class Frontmatter:
    """What a leading ``---`` YAML block holds: the one reader for pages, extraction and datasets."""

    meta: dict
    body: str  # the text after the closing ---, as it is
    found: bool  # a --- block opened the text
    error: str | None = None  # why the block is not a YAML mapping ("not valid YAML (...)", "not a mapping")
    lines: int = 0  # how many lines the block takes, for line numbers in the body


def read_frontmatter(text: str) -> Frontmatter:
    match = _FRONTMATTER.match(text)
    if not match:
        return Frontmatter({}, text, found=False)
    lines = text[: match.end()].count("\n")
    try:
        meta = yaml.load(match.group(1), Loader=_YAML_LOADER)
    except yaml.YAMLError as err:
        return Frontmatter({}, text[match.end():], found=True, error=f"not valid YAML ({err})", lines=lines)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return Frontmatter({}, text[match.end():], found=True, error="not a mapping", lines=lines)
    return Frontmatter(meta, text[match.end():], found=True, lines=lines)


def split_frontmatter(text: str) -> tuple[dict, str]:
    """(frontmatter mapping, body); text without frontmatter (or with a broken one) gives ({}, text)."""
    frontmatter = read_frontmatter(text)
    if not frontmatter.found or frontmatter.error:
        return {}, text
    return frontmatter.meta, frontmatter.body.lstrip("\n")


HELD = "held"  # the frontmatter's `review:` value for a page a reviewer has not released yet (llmwiki.review)


def held_reason(meta: Mapping) -> str | None:
    """Why a page's frontmatter holds it for review (None: it is not held, and may be used as evidence)."""
    if meta.get("review") != HELD:
        return None
    return str(meta.get("held_reason") or "held for review")


def source_entries(meta: Mapping) -> list[dict]:
    """The frontmatter's `sources` entries that name a path (a hand edit may leave the list empty or not a list)."""
    listed = meta.get("sources")
    return [entry for entry in listed if isinstance(entry, dict) and isinstance(entry.get("path"), str)] if isinstance(listed, list) else []


def source_paths(meta: Mapping) -> list[str]:
    """The paths of the documents a page rests on (a saved answer's "chat" entry left out)."""
    return [entry["path"] for entry in source_entries(meta) if entry["path"] != "chat"]


def render_page(meta: Mapping, body: str) -> str:
    """Frontmatter block plus body, ending in one newline."""
    front = yaml.safe_dump(dict(meta), sort_keys=False, allow_unicode=True, default_flow_style=False)
    if yaml.load(front, Loader=_YAML_LOADER) != dict(meta):  # a few code points (NEL, line separators) do not survive unescaped
        front = yaml.safe_dump(dict(meta), sort_keys=False, allow_unicode=False, default_flow_style=False)
    return f"---\n{front}---\n\n{body.strip()}\n"


def read_page(root: Path, relative: str) -> Page:
    """A page from disk; a missing file is an error naming it."""
    path = root / relative
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PageError(f"{relative}: no such page. Check the name (llmwiki status lists pages).") from None
    meta, body = split_frontmatter(text)
    return Page(path=relative, meta=meta, body=body)


def slugify(name: str, *, max_length: int = 80) -> str:
    """A safe file stem: ASCII letters, digits and hyphens; never empty, reserved or a path."""
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:max_length].strip("-")
    if not slug:
        slug = "page"
    if slug in _RESERVED_SLUGS:
        slug = f"{slug}-page"
    return slug


def cited_chunk_ids(body: str) -> list[int]:
    """Chunk ids cited in a body, in order of first citation."""
    return list(dict.fromkeys(int(match.group(1)) for match in CITATION.finditer(_CITATION_DEFINITION.sub("", body))))


def strip_citation_definitions(body: str) -> str:
    """The body without its trailing citation definitions."""
    return _CITATION_DEFINITION.sub("", body).rstrip() + "\n"


def link_destination(path: str) -> str:
    """A relative path as a Markdown link destination that survives any file name: percent-encoded
    (spaces, non-ASCII letters, brackets, newlines), as CommonMark reads it; ``link_target`` undoes it."""
    return quote(path, safe="/-._~")


def link_target(destination: str) -> str:
    """The path a link destination written by ``link_destination`` (or by hand) points at."""
    return unquote(destination.strip().removeprefix("<").removesuffix(">"))


def citation_definitions(citations: Mapping[int, tuple[str, int, str]], *, page_path: str) -> str:
    """Definition lines for chunk ids -> (source path, page number, breadcrumb)."""
    depth = len(Path(page_path).parent.parts)
    prefix = "../" * depth
    lines = []
    for chunk_id, (source_path, page_number, breadcrumb) in sorted(citations.items()):
        where = f"p.{page_number}" + (f" · {breadcrumb}" if breadcrumb else "")
        where = where.replace('"', "'")
        lines.append(f'[c{chunk_id}]: {link_destination(prefix + source_path)} "{where}"')
    return "\n".join(lines)


def write_files(root: Path, texts: Mapping[str, str | None]) -> dict[str, bytes | None]:
    """Atomically replace files under root (None deletes); returns backups for ``restore``.

    Every path must stay inside root. On failure nothing is left changed.
    """
    resolved_root = root.resolve()
    targets = {}
    for relative, text in texts.items():
        target = (root / relative).resolve()
        if resolved_root not in target.parents:
            raise PageError(f"{relative}: is outside the workspace. Page paths must stay under {root}.")
        targets[relative] = target
    backups: dict[str, bytes | None] = {relative: (target.read_bytes() if target.exists() else None) for relative, target in targets.items()}
    temporaries: dict[str, Path] = {}
    try:
        for relative, text in texts.items():
            if text is None:
                continue
            target = targets[relative]
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            temporary.write_text(text, encoding="utf-8")
            temporaries[relative] = temporary
        for relative, target in targets.items():
            if relative in temporaries:
                temporaries[relative].replace(target)
            elif target.exists():
                target.unlink()
    except BaseException:
        for temporary in temporaries.values():
            temporary.unlink(missing_ok=True)
        restore(root, backups)
        raise
    return backups


def restore(root: Path, backups: Mapping[str, bytes | None]) -> None:
    """Put files back as they were before ``write_files``."""
    for relative, data in backups.items():
        target = root / relative
        if data is None:
            target.unlink(missing_ok=True)
        else:
            temporary = target.with_name(f".{target.name}.restore.tmp")
            temporary.write_bytes(data)
            temporary.replace(target)
