"""Chunking: pages of blocks become chunks within a token budget. Pure.

Rules, in order of preference:

1. A chunk never spans two pages, so a citation names one page.
2. A new heading section starts a new chunk, unless the chunk so far is
   smaller than ``min_tokens`` (a lone heading stays with its first paragraph).
3. Whole paragraphs (blocks) are packed while they fit; a paragraph that does
   not fit in what is left starts the next chunk if it fits in one on its own,
   and is split between chunks at sentence boundaries otherwise.
4. A sentence longer than the budget is split between words, and a word longer
   than the budget between characters, so every chunk fits.
5. The next chunk begins with the trailing sentences of the previous one, up to
   ``overlap_tokens``, when both lie in the same section.
6. A last chunk on a page smaller than ``min_tokens`` is merged into the one
   before it when the two fit together.

Each chunk's text is exactly ``page.text[start:end]``. The breadcrumb is that
of the chunk's first new (non-overlap) sentence; extractors carry it across
pages, so a section that runs over a page break keeps its heading path.

Sentence boundaries come from ``llmwiki.text.segment``, the one segmenter of
llmwiki: a line break inside a paragraph is a space, and lists and tables break
between items and rows; a code block is one unit, so it stays whole whenever it
fits the budget. Extractors fence a long code block in pieces of at most
``extract.CODE_BLOCK_CHARACTERS`` (``_code_pieces``), so that a chunk cut
inside one is rare; where it still happens (a small budget), the segmenter reads
the lines before a chunk's first closing fence as code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from llmwiki.records import Block, Chunk, PageText
from llmwiki.text.segment import sentence_spans

TokenCounter = Callable[[str], int]

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class _Unit:
    """A sentence (or a piece of one) placed on the page."""

    start: int
    end: int
    tokens: int
    breadcrumb: tuple[str, ...]
    block_index: int
    index: int = 0


def _split_oversized(text: str, offset: int, *, max_tokens: int, count_tokens: TokenCounter) -> Iterator[tuple[int, int, int]]:
    """Split a span that exceeds the budget between words, or characters."""
    piece_start = piece_end = None
    piece_tokens = 0
    for word in _WORD.finditer(text):
        word_tokens = count_tokens(word.group())
        if word_tokens > max_tokens:
            if piece_start is not None:
                yield offset + piece_start, offset + piece_end, piece_tokens
                piece_start, piece_tokens = None, 0
            yield from _split_characters(word.group(), offset + word.start(), max_tokens=max_tokens, count_tokens=count_tokens)
            continue
        if piece_start is None:
            piece_start, piece_end, piece_tokens = word.start(), word.end(), word_tokens
            continue
        gap = text[piece_end:word.start()]
        grown = piece_tokens + (count_tokens(gap) if gap else 0) + word_tokens
        if grown > max_tokens:
            yield offset + piece_start, offset + piece_end, piece_tokens
            piece_start, piece_end, piece_tokens = word.start(), word.end(), word_tokens
        else:
            piece_end, piece_tokens = word.end(), grown
    if piece_start is not None:
        yield offset + piece_start, offset + piece_end, piece_tokens


def _split_characters(word: str, offset: int, *, max_tokens: int, count_tokens: TokenCounter) -> Iterator[tuple[int, int, int]]:
    position = 0
    while position < len(word):
        size = min(len(word) - position, max_tokens)
        while size > 1 and count_tokens(word[position:position + size]) > max_tokens:
            size //= 2
        yield offset + position, offset + position + size, count_tokens(word[position:position + size])
        position += size


def _count_all(texts: list[str], count_tokens: TokenCounter) -> list[int]:
    batch = getattr(count_tokens, "batch", None)
    return batch(texts) if batch is not None else [count_tokens(text) for text in texts]


def _units(blocks: Sequence[Block], *, max_tokens: int, count_tokens: TokenCounter) -> list[_Unit]:
    placed = [
        (block_index, block, begin, end)
        for block_index, block in enumerate(blocks)
        for begin, end in sentence_spans(block.text)
    ]
    counts = _count_all([block.text[begin:end] for _, block, begin, end in placed], count_tokens)
    units = []
    for (block_index, block, begin, end), tokens in zip(placed, counts):
        if tokens <= max_tokens:
            units.append(_Unit(block.start + begin, block.start + end, tokens, block.breadcrumb, block_index))
            continue
        sentence = block.text[begin:end]
        for piece_start, piece_end, piece_tokens in _split_oversized(sentence, block.start + begin, max_tokens=max_tokens, count_tokens=count_tokens):
            units.append(_Unit(piece_start, piece_end, piece_tokens, block.breadcrumb, block_index))
    return units


def chunk_page(
    page: PageText,
    *,
    max_tokens: int,
    overlap_tokens: int,
    min_tokens: int,
    count_tokens: TokenCounter,
) -> list[Chunk]:
    """Chunk one page's blocks; see the module docstring for the rules."""
    units = [
        _Unit(unit.start, unit.end, unit.tokens, unit.breadcrumb, unit.block_index, index)
        for index, unit in enumerate(_units(page.blocks, max_tokens=max_tokens, count_tokens=count_tokens))
    ]
    block_span: dict[int, tuple[_Unit, _Unit]] = {}
    for unit in units:
        first_of_block = block_span.get(unit.block_index, (unit, unit))[0]
        block_span[unit.block_index] = (first_of_block, unit)

    # Token position of each unit: counts add up over the whitespace between
    # sentences (as they do for word-piece tokenizers), so a span's tokens are
    # a difference of positions instead of a fresh count of its text.
    positions = []
    position = 0
    for index, unit in enumerate(units):
        if index:
            gap = page.text[units[index - 1].end:unit.start]
            position += units[index - 1].tokens + (count_tokens(gap) if gap else 0)
        positions.append(position)

    def span_tokens(first: _Unit, last: _Unit) -> int:
        """Tokens of the page text from first's start to last's end, separators included."""
        return positions[last.index] + last.tokens - positions[first.index]

    groups: list[tuple[list[_Unit], int]] = []  # (units, index of the first new unit)
    current: list[_Unit] = []
    first_new = 0

    def flush(*, keep_overlap: bool) -> None:
        nonlocal current, first_new
        groups.append((current, first_new))
        overlap: list[_Unit] = []
        if keep_overlap and overlap_tokens > 0:
            for unit in reversed(current[1:]):
                if span_tokens(unit, current[-1]) > overlap_tokens:
                    break
                overlap.insert(0, unit)
        current, first_new = overlap, len(overlap)

    previous: _Unit | None = None
    for unit in units:
        starts_block = previous is None or unit.block_index != previous.block_index
        new_section = previous is not None and unit.breadcrumb != previous.breadcrumb
        if len(current) > first_new and starts_block:
            block_first, block_last = block_span[unit.block_index]
            if new_section and span_tokens(current[0], current[-1]) >= min_tokens:
                flush(keep_overlap=False)
                current, first_new = [], 0
            elif span_tokens(current[0], block_last) > max_tokens and span_tokens(block_first, block_last) <= max_tokens:
                flush(keep_overlap=True)
        if len(current) > first_new and span_tokens(current[0], unit) > max_tokens:
            flush(keep_overlap=True)
        while current and len(current) == first_new and span_tokens(current[0], unit) > max_tokens:
            current, first_new = current[1:], first_new - 1
        current.append(unit)
        previous = unit
    if len(current) > first_new:
        groups.append((current, first_new))

    if len(groups) >= 2:
        last_units, _ = groups[-1]
        before_units, before_first = groups[-2]
        merged = before_units + [unit for unit in last_units if unit.start >= before_units[-1].end]
        if span_tokens(last_units[0], last_units[-1]) < min_tokens and span_tokens(merged[0], merged[-1]) <= max_tokens:
            groups[-2:] = [(merged, before_first)]

    chunks = []
    for group, first in groups:
        start, end = group[0].start, group[-1].end
        text = page.text[start:end]
        chunks.append(
            Chunk(
                page_number=page.number,
                start=start,
                end=end,
                text=text,
                token_count=count_tokens(text),
                breadcrumb=group[min(first, len(group) - 1)].breadcrumb,
            )
        )
    return chunks


def chunk_pages(
    pages: Sequence[PageText],
    *,
    max_tokens: int,
    overlap_tokens: int,
    min_tokens: int,
    count_tokens: TokenCounter,
) -> list[Chunk]:
    """Chunk every page of an extraction, in page order."""
    return [
        chunk
        for page in pages
        for chunk in chunk_page(page, max_tokens=max_tokens, overlap_tokens=overlap_tokens, min_tokens=min_tokens, count_tokens=count_tokens)
    ]
