"""Citations that outlive their chunks: after a source is read again, a page's ``[cN]`` names the chunk that now
holds the text it quotes.

A chunk id names one reading of a source. When a source is read again (its file changed, or a newer extractor
read it), its chunks are replaced and their ids are new. Summary and concept pages are written again from the
new chunks; a saved answer or a page edited by hand is not, and would cite ids that no longer exist. For each
such citation, the sentence it stands after is looked for in the chunks its source has now, letters and digits
compared (so markup, link targets and line breaks of the old reading do not matter): found, the citation names
the chunk that holds it; not found, the citation stays and the page is reported, to be marked stale naming the
source whose text is gone.

``relocated`` is pure: the page body, the chunks its sources have now, what its definitions say each old id
pointed at. The driver, ``relocate_citations``, reads the pages and the store and returns new page texts; the
caller publishes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from llmwiki.pages import CITATION, link_target, split_frontmatter
from llmwiki.records import Chunk
from llmwiki.text import text_key
from llmwiki.text.segment import segments

_DEFINITION = re.compile(r"^\[c(\d+)\]:[ \t]+(\S+)", re.MULTILINE)
_EDITORIAL = re.compile(r"\[[^\]]*\](?!\()")  # "[A bimetallic strip] also stops": what an answer put in for a pronoun


def defined_sources(body: str, page_path: str) -> dict[int, str]:
    """chunk id -> the workspace path its citation definition points at (``[c12]: ../../sources/x.md "p.1"``)."""
    folder = Path(page_path).parent
    found = {}
    for match in _DEFINITION.finditer(body):
        target = (folder / link_target(match.group(2))).as_posix()
        parts: list[str] = []
        for part in target.split("/"):
            if part == "..":
                if parts:
                    parts.pop()
            elif part not in (".", ""):
                parts.append(part)
        found[int(match.group(1))] = "/".join(parts)
    return found


def quoted_before(body: str, position: int) -> str:
    """The sentence a citation at ``position`` stands after: the last prose segment of the text before it, back to the
    previous citation or paragraph break."""
    start = max(body.rfind("\n\n", 0, position), 0)
    previous = [match.end() for match in CITATION.finditer(body, start, position)]
    if previous:
        start = max(start, previous[-1])
    window = re.sub(r"^\s*(?:Yes|No)\s*[—–-]\s*", "", body[start:position])
    parts = [window[part.start:part.end] for part in segments(window) if part.is_prose]
    return parts[-1] if parts else window.strip()


@dataclass
class Relocation:
    """What ``relocated`` did to one page."""

    body: str
    moved: dict[int, set[int]] = field(default_factory=dict)  # old id -> the ids that now hold its quotes
    gone: list[tuple[int, str]] = field(default_factory=list)  # (old id, source) whose quoted text no source chunk holds


def relocated(body: str, *, existing: set[int], sources: Mapping[int, str], chunks_by_source: Mapping[str, Sequence[Chunk]]) -> Relocation:
    """The body with every citation of a chunk id not in ``existing`` moved to the chunk of the same source that holds
    the sentence it stands after. ``sources``: old id -> source path (from the page's definitions)."""
    result = Relocation(body=body)
    replacements: list[tuple[int, int, str]] = []
    for match in CITATION.finditer(body):
        old = int(match.group(1))
        if old in existing or old not in sources or body[match.start():].startswith(f"[c{old}]:"):
            continue
        source = sources[old]
        wanted = text_key(_EDITORIAL.sub(" ", quoted_before(body, match.start())))
        holder = next((chunk for chunk in chunks_by_source.get(source, ()) if wanted and wanted in text_key(chunk.text)), None)
        if holder is None or holder.id is None:
            if (old, source) not in result.gone:
                result.gone.append((old, source))
            continue
        replacements.append((match.start(), match.end(), f"[c{holder.id}]"))
        result.moved.setdefault(old, set()).add(holder.id)
    for start, end, text in reversed(replacements):
        body = body[:start] + text + body[end:]
    result.body = body
    return result


def relocate_citations(workspace, pages: Sequence[str], *, changed_sources: set[str]) -> tuple[dict[str, str], dict[str, list[tuple[int, str]]]]:
    """New texts for the pages (workspace paths) whose citations of ``changed_sources`` name chunks that are gone, and
    per page the (old id, source) whose text is gone. Citation definitions are left to the publish step."""
    from llmwiki.generate import with_citations

    store = workspace.store
    texts: dict[str, str] = {}
    gone: dict[str, list[tuple[int, str]]] = {}
    chunks_by_source: dict[str, list[Chunk]] = {}
    with store.session():
        for page in pages:
            path = workspace.root / page
            if not path.is_file():
                continue
            text = path.read_text(encoding="utf-8")
            meta, body = split_frontmatter(text)
            sources = {old: source for old, source in defined_sources(body, page).items() if source in changed_sources}
            if not sources:
                continue
            cited = {int(match.group(1)) for match in CITATION.finditer(body)}
            existing = set(store.citation_targets(sorted(cited)))
            if not set(sources) - existing:
                continue
            for source in set(sources.values()) - set(chunks_by_source):
                document = store.document_by_path(source)
                chunks_by_source[source] = store.chunks(document.id) if document is not None else []
            result = relocated(body, existing=existing, sources=sources, chunks_by_source=chunks_by_source)
            if result.gone:
                gone[page] = result.gone
            if result.body != body:
                rendered = with_citations(store, meta, result.body, page)
                kept = [line for line in body.splitlines() if (match := _DEFINITION.match(line)) and int(match.group(1)) in {old for old, _ in result.gone}]
                texts[page] = rendered.rstrip("\n") + ("\n" + "\n".join(kept) if kept else "") + "\n"
    return texts, gone
