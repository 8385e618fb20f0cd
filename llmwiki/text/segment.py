"""Segmentation: a page's text becomes its sentences, headings, list items, table rows and code blocks. Pure.

Every extractor writes a page as Markdown (headings ``#``, lists ``-``, tables ``|``, fenced code), so one
reader of that structure serves sources, chunks and wiki pages alike. The rules:

- A line break alone never ends a sentence: inside a paragraph or a list item it is a space, so text
  wrapped at 80 columns (HTML source, Markdown notes, PDF lines) reads as the sentences it holds.
- A blank line, a heading, a list item, a table row and a code fence do end one.
- Inside prose, a sentence ends at ``.``, ``!`` or ``?`` (with closing quotes or brackets and any ``[c12]``
  citations after it) before a word that opens a sentence: a capital, a digit, an opening quote or bracket,
  inline code. Not after an abbreviation ("e.g.", "Dr."), an initial ("J. Watt"), a short label before a
  number ("p. 56", "No. 5"), and never inside inline code, a link's target or a URL, so "3.11.2",
  ``os.path.join`` and ``https://x.org/a.b`` stay whole.

Each segment carries its kind; ``PROSE`` kinds are what a summary, an answer or a verifier may quote as a
sentence. Code, table rows, headings, link lists, reference definitions and comments are kept (nothing is
lost: every word of the text lies in one segment) but marked as what they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llmwiki.text import STOPWORDS

SENTENCE = "sentence"  # a sentence of a paragraph
ITEM = "item"  # a sentence of a list item
HEADING = "heading"
ROW = "row"  # a table row (or its delimiter row)
CODE = "code"  # a whole code block, fences included
LINKS = "links"  # a paragraph or list item that is only links
REFERENCE = "reference"  # a link reference definition: "[c12]: ../sources/x.md"
COMMENT = "comment"  # an HTML comment line (a wiki page's section marks)
MARKER = "marker"  # a list item's bullet or number ("- ", "3. "): kept apart from the item's first sentence
PROSE = frozenset({SENTENCE, ITEM})
# What a reader is told was left out of checking, by kind.
NOT_PROSE_LABELS = {CODE: "code", ROW: "table", LINKS: "links", REFERENCE: "references", HEADING: "headings", COMMENT: "comments"}

ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt vs etc e.g i.e cf al ed eds inc ltd co corp gen gov sen rep "
    "approx ca esp incl resp viz a.k.a op cit ibid dept univ est "
    "jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k".split()
)
# Labels that are abbreviations only before a number ("see p. 56", "No. 5", "Fig. 3"); elsewhere a word.
NUMBER_LABELS = frozenset("no nos p pp fig figs vol vols ch sec secs eq eqs ref refs art para".split())
# Abbreviations that also end sentences often ("... and so on, etc. Then"): they end one before a capital.
_ALSO_FINAL = frozenset({"etc"})

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_ATX_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_SETEXT_UNDERLINE = re.compile(r"^[ \t]{0,3}(?:=+|-{2,})[ \t]*$")
_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)(?:[-*+•◦▪‣]|\d{1,3}[.)])[ \t]+\S")
_ORDERED_FIRST = re.compile(r"^[ \t]*1[.)][ \t]")
_SENTENCE_FINAL = re.compile(r"[.!?:][\"'”’)\]*_]*[ \t]*$")
_REFERENCE_DEF = re.compile(r"^[ \t]{0,3}\[[^\]]+\]:[ \t]*\S")
_COMMENT = re.compile(r"^[ \t]*<!--.*-->[ \t]*$")
_THEMATIC_BREAK = re.compile(r"^[ \t]{0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_INDENTED = re.compile(r"^(?: {4}|\t)")

# Spans where a full stop is no sentence end: inline code, a link's target, a URL, an e-mail address.
_OPAQUE = re.compile(r"(`+)(?:(?!\1).)+?\1|\]\([^)\s]*\)|\b(?:https?|ftp|file)://\S+?(?=[.,;:!?)\]]*(?:\s|$))|\bwww\.\S+\.\S+?(?=[.,;:!?)\]]*(?:\s|$))|\b[\w.+-]+@[\w-]+\.[\w-]+(?:\.[\w-]+)*", re.DOTALL)
# A candidate end: . ! ? with closing quotes, brackets, emphasis and citations ("[c12]", a footnote's "[1]"), before
# white space and the next word (its opening quotes and brackets apart).
_END = re.compile(r"[.!?]+[\"'”’)\]*_]*(?:[ \t]*\[c?\d+\])*(?=\s+(?P<lead>[\"'“‘(\[<*_`]*)(?P<word>[^\s\"'“‘(\[<*_`]\S*))")
_LAST_WORD = re.compile(r"(\S+)$")
_LINK = re.compile(r"!?\[[^\]]*\]\([^)]*\)|<https?://[^>]+>")
_LINK_SEPARATORS = re.compile(r"[\s|·•»«>/,;:()\[\]-]+")


@dataclass(frozen=True)
class Segment:
    """A span of text (``text[start:end]``, trimmed) and what it is."""

    start: int
    end: int
    kind: str

    @property
    def is_prose(self) -> bool:
        return self.kind in PROSE


def _next_has_text(text: str, lines: list[tuple[int, int]], index: int) -> bool:
    return index + 1 < len(lines) and bool(text[lines[index + 1][0]:lines[index + 1][1]].strip())


def segments(text: str) -> list[Segment]:
    """The text's segments in order: sentences of paragraphs and list items, and the blocks that are not prose."""
    found: list[Segment] = []
    lines = _lines(text)
    index = 0
    paragraph: list[tuple[int, int]] = []  # (start, end) of the lines of the open paragraph or list item
    paragraph_kind = SENTENCE

    def close() -> None:
        nonlocal paragraph
        if paragraph:
            found.extend(_prose(text, paragraph[0][0], paragraph[-1][1], paragraph_kind))
            paragraph = []

    while index < len(lines):
        start, end = lines[index]
        line = text[start:end]
        if not line.strip():
            close()
            index += 1
            continue
        fence = _FENCE.match(line)
        if fence and paragraph and paragraph[0][0] == lines[0][0] and line.strip() == fence.group(1) and not _next_has_text(text, lines, index):
            # A bare fence that ends the text's first lines, with nothing after it on the next line, closes a code block
            # opened before the text began: a chunk cut inside a long code block. Those lines are code, not prose.
            found.append(_trimmed(text, paragraph[0][0], end, CODE))
            paragraph = []
            index += 1
            continue
        if fence:
            close()
            marker = fence.group(1)
            last = index + 1
            while last < len(lines) and not text[lines[last][0]:lines[last][1]].lstrip().startswith(marker[0] * len(marker)):
                last += 1
            last = min(last, len(lines) - 1)
            found.append(_trimmed(text, start, lines[last][1], CODE))
            index = last + 1
            continue
        if _ATX_HEADING.match(line) or _COMMENT.match(line) or _REFERENCE_DEF.match(line) or _TABLE_ROW.match(line) or _THEMATIC_BREAK.match(line):
            close()
            kind = HEADING if _ATX_HEADING.match(line) else COMMENT if _COMMENT.match(line) else REFERENCE if _REFERENCE_DEF.match(line) else ROW if _TABLE_ROW.match(line) else COMMENT
            found.append(_trimmed(text, start, end, kind))
            index += 1
            continue
        if not paragraph and _INDENTED.match(line) and not (found and found[-1].kind == ITEM and _continues_item(text, lines, index)):
            last = index
            while last + 1 < len(lines) and (_INDENTED.match(text[lines[last + 1][0]:lines[last + 1][1]]) or not text[lines[last + 1][0]:lines[last + 1][1]].strip()):
                last += 1
            while not text[lines[last][0]:lines[last][1]].strip():
                last -= 1
            found.append(_trimmed(text, start, lines[last][1], CODE))
            index = last + 1
            continue
        if index + 1 < len(lines) and _SETEXT_UNDERLINE.match(text[lines[index + 1][0]:lines[index + 1][1]]) and not paragraph:
            found.append(_trimmed(text, start, lines[index + 1][1], HEADING))
            index += 2
            continue
        bullet = _BULLET.match(line)
        if bullet and (not paragraph or paragraph_kind == ITEM or not re.match(r"^[ \t]*\d", line) or _ORDERED_FIRST.match(line)
                       or _SENTENCE_FINAL.search(text[paragraph[-1][0]:paragraph[-1][1]])):
            close()
            paragraph, paragraph_kind = [(start, end)], ITEM
            index += 1
            continue
        if not paragraph:
            paragraph_kind = ITEM if (found and found[-1].kind in (ITEM, LINKS) and _INDENTED.match(line) and index and not text[lines[index - 1][0]:lines[index - 1][1]].strip()) else SENTENCE
        paragraph.append((start, end))
        index += 1
    close()
    return found


def _continues_item(text: str, lines: list[tuple[int, int]], index: int) -> bool:
    """An indented paragraph after a blank line, under a list item, belongs to the item."""
    return index > 0 and not text[lines[index - 1][0]:lines[index - 1][1]].strip()


def _lines(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in re.finditer(r"\n", text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _trimmed(text: str, start: int, end: int, kind: str) -> Segment:
    segment = text[start:end]
    left = len(segment) - len(segment.lstrip())
    return Segment(start + left, start + len(segment.rstrip()), kind)


def _prose(text: str, start: int, end: int, kind: str) -> list[Segment]:
    """The sentences of one paragraph or list item (text[start:end]); a run of links is one LINKS segment."""
    block = text[start:end]
    if is_link_list(block):
        return [_trimmed(text, start, end, LINKS)]
    found = []
    if kind == ITEM:  # the item's marker is a segment of its own, not part of its first sentence
        marker = re.match(r"[ \t]*(?:[-*+•◦▪‣]|\d{1,3}[.)])[ \t]+", block)
        if marker:
            found.append(_trimmed(text, start, start + marker.end(), MARKER))
            start, block = start + marker.end(), block[marker.end():]
    return found + [Segment(start + begin, start + finish, kind) for begin, finish in sentence_bounds(block)]


def is_link_list(block: str) -> bool:
    """True for text that is links and separators only ("[Up](a.html) | [Home](b.html)")."""
    links = _LINK.findall(block)
    if not links:
        return False
    rest = _LINK_SEPARATORS.sub("", _LINK.sub("", re.sub(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+", "", block, flags=re.MULTILINE)))
    return len(rest) <= 2


def _masked(block: str) -> str:
    """The block with inline code, link targets and URLs blanked (same length), so their full stops end nothing."""
    def blank(match: re.Match) -> str:
        value = match.group(0)
        if value.startswith("`"):
            ticks = len(match.group(1))
            return value[:ticks] + "x" * (len(value) - 2 * ticks) + value[-ticks:]
        return "x" * len(value)

    return _OPAQUE.sub(blank, block)


def sentence_bounds(block: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a run of prose, trimmed; line breaks inside it are spaces."""
    masked = _masked(block)
    bounds: list[tuple[int, int]] = []
    start = 0
    for match in _END.finditer(masked):
        if not _ends_here(masked, start, match):
            continue
        bounds.append((start, match.end()))
        start = match.end()
    bounds.append((start, len(block)))
    trimmed = []
    for begin, finish in bounds:
        segment = block[begin:finish]
        left = len(segment) - len(segment.lstrip())
        right = len(segment.rstrip())
        if right > left:
            trimmed.append((begin + left, begin + right))
    return trimmed


def _ends_here(masked: str, start: int, match: re.Match) -> bool:
    """Whether . ! or ? ends the sentence before the next word.

    Before a capital, a digit, a quote, a bracket or code, it does, except after an abbreviation ("Dr.", "e.g."),
    an initial before a name ("J. Watt", but not "column N. That"), initials ("U.S.", "p.m.") and a label before a
    number ("p. 56", "No. 5"). Before a lower-case word only a full stop after a plain word ends one: documentation
    opens sentences with the names of commands and options ("... is the default. noheader is ...").
    """
    following = match.group("word")
    first = following[0]
    opened = bool(match.group("lead")) or first == "`"
    word_match = _LAST_WORD.search(masked, start, match.start())
    if word_match is None:  # nothing or a space before it: " ..." trails off, it ends nothing by itself
        return not first.islower()
    word = word_match.group(1).lstrip("\"'“‘([*_").rstrip(".!?\"'”’)]*_")
    lowered = word.lower()
    if match.group(0).startswith("...") or not word:
        return not first.islower()
    if lowered in ABBREVIATIONS:
        return lowered in _ALSO_FINAL and first.isupper()
    if lowered in NUMBER_LABELS and first.isdigit():
        return False
    if len(word) == 1 and word.isalpha():
        if first.isdigit() and word.islower():
            return False  # "p. 56"
        if word.isupper() and first.isupper():
            return _plain_word(following).lower() in STOPWORDS  # "column N. That is", not "J. Watt"
    if "." in word and re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word):
        return False  # "U.S.", "p.m."
    if first.islower() and not opened:
        return match.group(0)[0] == "." and len(word) >= 2 and word[-1].isalpha() and not word.isupper()
    return True


def _plain_word(text: str) -> str:
    found = re.match(r"[^\W\d_]+", text)
    return found.group(0) if found else ""


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every segment of ``segments``, in order."""
    return [(segment.start, segment.end) for segment in segments(text)]


def split_sentences(text: str) -> list[str]:
    """The texts of every segment of ``segments`` (sentences, and the blocks that are not prose), in order."""
    return [text[segment.start:segment.end] for segment in segments(text)]


def prose_sentences(text: str) -> list[str]:
    """The prose sentences of a text (paragraphs and list items), whitespace collapsed."""
    return [" ".join(text[segment.start:segment.end].split()) for segment in segments(text) if segment.is_prose]


def is_whole_sentence(sentence: str) -> bool:
    """A sentence a reader would call whole: it opens with a capital, a digit, a quote, a bracket or code, and ends
    with . ! ? or : (a closing quote or bracket may follow). The realdocs scorers' definition."""
    sentence = sentence.strip().strip("*_")
    if not sentence:
        return False
    opens = sentence[0].isupper() or sentence[0].isdigit() or sentence[0] in "\"'“`(*["
    return opens and bool(re.search(r"[.!?:][\"'”’)\]`*]*$", sentence))
