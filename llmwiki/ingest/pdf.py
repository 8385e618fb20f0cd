"""PDF pages become the Markdown a reader sees: paragraphs, headings, lists and code, without page furniture.

A PDF holds positioned lines, not paragraphs. PDFium (pypdfium2: fast, and a permissive licence) gives the
lines with their position, size and font; the rest is read from the layout, never from one manual's look:

- **Page furniture**: a page's top and bottom lines that, with their page number taken off, recur at the
  top or bottom of three pages or more (of both pages of a two-page document) are running heads and feet; a line there that is only a page number
  ("12", "iv", "Page 3 of 10") goes too, and one that holds the page's number where the pages' numbers stand,
  unless it is set larger than the body (a chapter's title numbered as its page: "1 Introduction" atop page 1).
  A head that names the page's section, set at the top right with no page number (DocBook's print style), goes
  however few pages the section has, where it says a heading's title.
- **Contents and index pages**: a page whose lines mostly end in a page number (rising, for contents;
  after commas, for an index), and any line with a dot leader (four dots or more, or three spaced ones before a
  page number; not an ellipsis set as ". . ." in a sentence), are kept out of the text.
- **Headings**: the PDF's outline titles where a line of their page says them; else a line set larger
  than the body text (its level from the size, as printed: scaled by the text matrix, where some writers set
  every font at size 1), or a short line all in bold where the body text is not; a line with no letter or digit (a
  glyph drawn larger, "ˆ") is none. Bold is read from the font's name where it names a face ("Times-Bold",
  "Times-Roman"), from its weight only where it does not. A heading too long for its line continues on the next (a line
  of its size and level right below one that ran full, or the rest of an outline title), as one heading. A
  heading is written ``#``.
- **Run-in labels**: a paragraph that opens with one to five words in bold and goes on in another weight ("GENERATE_XML
  If the tag is set ...", "Warning: When ..."), or with one to three words in a fixed-pitch font set apart by a gap of
  an em or more (a table of terms: "-o      Restricts the values ..."), has its label on a line of its own, in bold,
  as an HTML definition's term is: a description list's term or a run-in heading is no part of the sentence after it.
- **Characters**: ligatures spelt out; an accent set apart before its letter put on it ("Br¨oker" -> "Bröker");
  groff's "˜", "ˆ" and minus sign read as the ASCII "~", "^" and "-" a reader types ("−−norc" -> "--norc"). A note
  mark (one to three digits set smaller and raised right after a word's closing punctuation: "... the package.¹⁰ To
  do this") is left out, as an HTML page's is; an exponent after a letter or a bracket ("x²", "(1 - t)²") stays.
- **Code**: lines set in a fixed-pitch font become a fenced code block, indentation kept.
- **Paragraphs**: lines are joined; a paragraph ends at a wider gap than the line spacing, at an indented
  first line, at a bullet (a bullet sign, or a glyph the PDF maps to no character: a symbol font's bullet often
  is), or after a line that ends short of its column where the next line's first word
  would have fitted (unless it ends where the line before it does: a block set narrower than its column, as a
  licence notice indented on both sides, runs full to its own edge). A word hyphenated across a line break is joined, unless the document itself writes
  it with a hyphen elsewhere (PDFium reads such a line and the next as one; they are split again first). Code
  broken after a path's or a name's "/", ".", "_" or "-" goes on in one span ("`/usr/local/bin`"), without the
  hyphen where the document writes the name whole elsewhere ("`SConstruct`", not "`SCon-struct`"). A
  paragraph that a page break cuts mid-sentence is one paragraph, on the page where it starts.
- **Two columns**: where a page's lines fall in two columns side by side (their baselines need not align; what
  spans both, a paper's title and abstract, is read before them), the left is read first, each column's lines
  are measured against its own right edge, and a paragraph whose last line runs full mid-sentence at a
  column's foot goes on at the next column's head.

A page with no text layer is read by OCR where Debian's ``tesseract-ocr`` is installed; without it, the
document fails with the fix ("install tesseract-ocr"), never as an empty document that looks ingested.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import statistics
import subprocess
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from llmwiki.errors import IngestError
from llmwiki.records import Dropped

_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st", "\u00ad": "-", "\x02": "-", "\ufffe": "", "\u2212": "-"})  # U+FFFE: PDFium joined a word hyphenated across lines; U+2212: groff's "−−norc" is "--norc"
# A fixed-pitch font by its name (a PDF font here, a DOCX font in ``extract``): what code is set in.
FIXED_PITCH_NAME = re.compile(r"mono|courier|consol|menlo|inconsolata|typewriter|[a-z]tt\d|sfmono|code", re.IGNORECASE)
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|cmbx|cmb\d", re.IGNORECASE)
# A font name that states a light or regular face ("Times-Roman", "Helvetica-Oblique", "NimbusSans-Regular"): the name
# decides, not the weight PDFium derives from the font's stem width, which some writers set wrong (a Ghostscript
# PDF's Times-Roman reads as weight 695, its bold as 728). The PDF standard's base fonts named plainly are regular too.
_REGULAR_NAME = re.compile(r"roman|regular|book|light|thin|medium|normal|italic|oblique|^(?:[A-Z]{6}\+)?(?:helvetica|courier|arial)$", re.IGNORECASE)
_NUMBER = r"(?:\d{1,4}|[ivxlcdm]{1,7})"
_PAGE_NUMBER_ONLY = re.compile(rf"^(?:page\s+)?{_NUMBER}(?:\s*(?:/|of)\s*\d{{1,4}})?$", re.IGNORECASE)
_PAGE_NUMBER_AT_END = re.compile(rf"(?:^(?:page\s+)?{_NUMBER}(?:\s*(?:/|of)\s*\d{{1,4}})?\s+|\s+(?:page\s+)?{_NUMBER}(?:\s*(?:/|of)\s*\d{{1,4}})?$)", re.IGNORECASE)
# A contents line's leader: four dots or more, or three spaced ones before a page number; not an ellipsis set as
# spaced dots in a sentence ("with the usual \begin . . . \end construction").
_DOT_LEADER = re.compile(r"(?:\.\s?){4,}\s*\d{0,4}\s*$|(?:\s\.){4,}|(?:\s\.){3}\s+\d{1,4}\s*$")
# A letter: not a spacing modifier ("ˇ", "ʼ"), which \w counts as one; a line without a letter or digit is no heading.
_LETTER = r"[^\W\d_\u02b0-\u02ff]"
_WORD = re.compile(rf"{_LETTER}|\d")
_ENDS_IN_PAGE = re.compile(r"(?<![\d.,])(\d{1,4})$")
_INDEX_ENTRY = re.compile(r",\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?(?:\s*,\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?)*$")
# A list's bullet: a bullet sign, a dash, a number or letter with a stop; or a glyph the PDF maps to no printable
# character (a C1 control, a private-use code point, U+FFFD), as a symbol font's bullet often is.
_BULLET = re.compile(r"^(?:[•◦▪‣∙●○■□–—*·\x80-\x9f\ue000-\uf8ff\ufffd-]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s+")
_TERMINAL = re.compile(r"[.!?:;][\"'”’)\]]*$")


@dataclass
class Line:
    """One line of a PDF page, with what the layout says of it."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    mono: bool = False
    bold: bool = False
    kind: str = "text"  # text | heading | code | dropped
    level: int = 0
    label: str = ""  # a run-in label the line opens with (``_run_in_label``), and the line's text after it
    after_label: str = ""
    set_apart: bool = False  # the label is set apart by a wide gap: a table of terms, whose every row begins an item
    column_right: float = 0.0  # where the lines of its column end when they run full (``_set_column_edges``)
    goes_on_heading: bool = False  # the second printed line of an outline title that the line before it begins
    marks: tuple[str, ...] = ()  # note marks taken out of the line (``_note_marks``)

    @property
    def words(self) -> list[str]:
        return self.text.split()

    @property
    def char_width(self) -> float:
        """The line's mean width of a character."""
        return (self.x1 - self.x0) / max(len(self.text), 1)


@dataclass
class _Page:
    number: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)


@dataclass(frozen=True)
class PdfContent:
    """The pages as Markdown, the title, what was dropped, and notes for the ingest report."""

    pages: tuple[tuple[tuple[str, str, int], ...], ...]  # per page: (kind, Markdown, heading level) of each block
    title: str | None
    dropped: tuple[Dropped, ...]
    notes: tuple[str, ...] = ()
    ocr_pages: int = 0


# -- reading lines -------------------------------------------------------------------------


class _Fonts:
    """Font facts per text object's font, looked up once."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.cache: dict[int, tuple[bool, bool]] = {}
        self.objects: dict[int, tuple[bool, bool]] = {}  # per text object of the page being read (``at``)
        self.buffer = ctypes.create_string_buffer(256)

    def at(self, textpage, index: int) -> tuple[bool, bool]:
        """(fixed pitch, bold) of a character's font, looked up once per text object."""
        handle = self.raw.FPDFText_GetTextObject(textpage, index)
        key = ctypes.cast(handle, ctypes.c_void_p).value if handle else None
        found = self.objects.get(key) if key is not None else None
        if found is None:
            found = self.of(textpage, index)
            if key is not None:
                self.objects[key] = found
        return found

    def of(self, textpage, index: int) -> tuple[bool, bool]:
        raw = self.raw
        flags = ctypes.c_int()
        length = raw.FPDFText_GetFontInfo(textpage, index, self.buffer, 256, ctypes.byref(flags))
        name = self.buffer.raw[: max(length - 1, 0)].decode("latin-1", "replace")
        key = hash((name, flags.value))
        found = self.cache.get(key)
        if found is None:
            weight = raw.FPDFText_GetFontWeight(textpage, index)
            mono = bool(flags.value & 1) or bool(FIXED_PITCH_NAME.search(name))
            if _BOLD_NAME.search(name):
                bold = True
            elif _REGULAR_NAME.search(name):
                bold = False
            else:
                bold = weight >= 600 or bool(flags.value & 262144)
            found = self.cache[key] = (mono, bold)
        return found


def _page_lines(page, raw, fonts: _Fonts) -> list[Line]:
    fonts.objects.clear()  # object handles are per page
    textpage = page.get_textpage()
    text = textpage.get_text_range()
    count = raw.FPDFText_CountChars(textpage)
    if count <= 0 or len(text) != count:
        return _lines_from_plain(text, page.get_size())
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    lines: list[Line] = []

    def box(index: int) -> tuple[float, float, float, float]:
        """A character's (left, right, bottom, top)."""
        raw.FPDFText_GetCharBox(textpage, index, ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top))
        return left.value, right.value, bottom.value, top.value

    matrix = raw.FS_MATRIX()

    def size(index: int) -> float:
        """A character's font size as printed: the size its font is set at, scaled by its text matrix's height (some
        writers set every font at size 1 and scale it there; a horizontal stretch changes no size)."""
        scale = (matrix.c ** 2 + matrix.d ** 2) ** 0.5 if raw.FPDFText_GetMatrix(textpage, index, ctypes.byref(matrix)) else 1.0
        return raw.FPDFText_GetFontSize(textpage, index) * (scale or 1.0)

    def gap(after: int, before: int) -> float:
        """The space between two characters of the page's text, in ems of the second's font size."""
        return (box(before)[0] - box(after)[1]) / (size(before) or 10.0)

    def printed_lines(segment: str, first: int) -> list[tuple[str, int]]:
        """PDFium reads a word hyphenated at a line end and what follows it as one line (the hyphen as U+FFFE or
        U+0002, no line break), whether the rest is the next printed line or, on a page in two columns, the line
        beside it: split them again, the hyphen kept at the first's end ("... conditional expres-" / "sions.")."""
        pieces, start = [], 0
        for match in re.finditer(r"[\ufffe\x02](?=\S)", segment):
            if match.start() > start:
                pieces.append((segment[start:match.start()] + "-", first + start))
                start = match.end()
        return [*pieces, (segment[start:], first + start)]

    def note_marks(segment: str, first: int) -> tuple[str, tuple[str, ...]]:
        """The segment with its note marks blanked out (``_NOTE_MARK``): a number of one to three digits right after a
        word's closing punctuation, set smaller than it and raised above the word's baseline ("... by the package.¹⁰
        To do this"). An exponent after a bracket ("(1 - t)²") or a letter ("x²") stays; so does code's "Consolas,9"."""
        marks = []
        for found in _NOTE_MARK.finditer(segment):
            digit, punctuation, letter = first + found.start(1), first + found.start(1) - 1, first + found.start(1) - 2
            if size(digit) <= 0.85 * size(punctuation) and box(digit)[2] - box(letter)[2] >= 0.2 * size(letter):
                marks.append(found.group(1))
                segment = segment[:found.start(1)] + " " * len(found.group(1)) + segment[found.end(1):]
        return segment, tuple(marks)

    start = 0
    for match in re.finditer(r"\r\n|\n|\r", text + "\n"):
        end = match.start()
        whole_segment, segment_first = text[start:end], start
        start = match.end()
        for segment, first in printed_lines(whole_segment, segment_first):
            segment, marks = note_marks(segment, first)
            if not segment.strip():
                continue
            indices = [first + offset for offset, char in enumerate(segment) if not char.isspace()]
            xs0, xs1, bottoms, tops, sizes = [], [], [], [], []
            for index in (indices[0], indices[len(indices) // 2], indices[-1]):
                x0, x1, char_bottom, char_top = box(index)
                xs0.append(x0)
                xs1.append(x1)
                bottoms.append(char_bottom)
                tops.append(char_top)
                sizes.append(size(index))
            styles = {index: fonts.at(textpage, index) for index in indices}
            mono = all(style[0] for style in styles.values())

            cut, apart = (0, False) if mono else _run_in_label(segment, first, styles, gap)
            lines.append(Line(
                text=_clean(_marked_code(segment, first, styles, whole=mono)),
                x0=min(xs0), x1=max(xs1), top=max(tops), bottom=min(bottoms),
                size=round(statistics.median(sizes), 1),
                mono=mono, bold=all(style[1] for style in styles.values()),
                label=_clean(segment[:cut]) if cut else "",
                after_label=_clean(_marked_code(segment[cut:], first + cut, styles, whole=False)) if cut else "",
                set_apart=apart, marks=marks,
            ))
    return lines


# A note mark: one to three digits right after a word's closing punctuation, before a space or the line's end
# (``_page_lines`` keeps those set smaller and raised).
_NOTE_MARK = re.compile(r"(?<=[^\W\d_][.,;:!?”’\"])(\d{1,3})(?=\s|$)")


def _clean(text: str) -> str:
    """A line's text as the Markdown holds it: ligatures spelt out, accents set apart put on their letters, runs of
    white space one space."""
    return " ".join(spaced_accents_joined(text.translate(_LIGATURES)).split())


# Accents a TeX or groff PDF sets as glyphs of their own before the letter ("Br¨oker", "Timoth´ee", "J´erˆome"), and
# the combining mark each stands for; "ˆ" and "˜" that go on no letter are groff's ASCII "^" and "~" ("˜/.bashrc",
# "ˆC" for Control-C).
_SPACING_ACCENTS = {"¨": "\u0308", "´": "\u0301", "ˆ": "\u0302", "˜": "\u0303", "¸": "\u0327", "ˇ": "\u030c", "˘": "\u0306", "˚": "\u030a", "˝": "\u030b"}
_ACCENT_THEN_LETTER = re.compile(rf"([¨´ˆ˜¸ˇ˘˚˝])({_LETTER})?")
_ASCII_OF = {"ˆ": "^", "˜": "~"}


def spaced_accents_joined(text: str) -> str:
    """Accents set apart from their letters put on them ("Br¨oker" -> "Bröker", "Mikul´ık" -> "Mikulík"), where
    the two make one letter and a circumflex or tilde goes on a lower-case letter ("ˆC" is Control-C); a lone "ˆ"
    or "˜" is the ASCII "^" or "~" ("˜/.bashrc" -> "~/.bashrc"). Other text as it is."""
    def joined(match: re.Match) -> str:
        accent, letter = match.group(1), match.group(2) or ""
        if letter and (accent not in _ASCII_OF or letter.islower()):
            composed = unicodedata.normalize("NFC", {"ı": "i", "ȷ": "j"}.get(letter, letter) + _SPACING_ACCENTS[accent])
            if len(composed) == 1:
                return composed
        return _ASCII_OF.get(accent, accent) + letter
    return _ACCENT_THEN_LETTER.sub(joined, text) if any(accent in text for accent in _SPACING_ACCENTS) else text


def _run_in_label(segment: str, first: int, styles: dict[int, tuple[bool, bool]], gap) -> tuple[int, bool]:
    """Where the text after a run-in label starts in a line (0 where it has none), and whether a wide gap sets the
    label apart (a row of a table of terms, which begins an item wherever it stands): the line's first one to five
    words set in bold, the rest of the line not bold ("GENERATE_XML If the tag is set to YES, ...", "Warning: When
    you have ..."); or its first one to three words set in a fixed-pitch font and followed by a gap of an em or more
    (``gap(after, before)``, in ems), as a table of terms sets them ("-o      Restricts the values ..."; a sentence
    that opens with code goes on after one space). Either way the label holds a letter and the text after it opens
    with a capital. A description list's term, a run-in heading or a paragraph's bold lead-in is no part of the
    sentence after it; a bullet or a section number is no label."""
    words = [(match.start(), match.end()) for match in re.finditer(r"\S+", segment)]

    def styled(word: tuple[int, int], style: int) -> bool:
        return all(styles.get(first + offset, (False, False))[style] for offset in range(*word))

    for style, most in ((1, 5), (0, 3)):  # bold, then fixed pitch; read word by word, so a plain first word ends it
        count = next((index for index, word in enumerate(words) if not styled(word, style)), len(words))
        if not 0 < count <= min(most, len(words) - 1):
            continue
        if style == 1 and not any(styled(word, 1) for word in words[count:]):  # bold, and no more of the line
            break
        if style == 0 and gap(first + words[count - 1][1] - 1, first + words[count][0]) >= 1.0:
            break  # the gap decides: the description may name code too ("-o   Restricts ... the -o option ...")
    else:
        return 0, False
    label, rest = segment[:words[count - 1][1]], segment[words[count][0]:]
    if not re.search(r"[^\W\d_]", label) or _BULLET.match(f"{label} ") or not rest[:1].isupper() or len(rest.split()) < 2:
        return 0, False
    return words[count][0], style == 0


def _marked_code(segment: str, first: int, styles: dict[int, tuple[bool, bool]], *, whole: bool) -> str:
    """The line with each run of words set in a fixed-pitch font inside a line of prose marked as inline code
    ("`set pointsize` scales ..."); a line all in such a font is left as it is (it is a line of a code block)."""
    if whole or not any(style[0] for style in styles.values()):
        return segment
    words = [(match.start(), match.end()) for match in re.finditer(r"\S+", segment)]
    marked = [all(styles.get(first + offset, (False, False))[0] for offset in range(start, end)) for start, end in words]
    parts, position, index = [], 0, 0
    while index < len(words):
        if not marked[index]:
            index += 1
            continue
        last = index
        while last + 1 < len(words) and marked[last + 1]:
            last += 1
        start, end = words[index][0], words[last][1]
        parts.append(segment[position:start] + "`" + segment[start:end].replace("`", "'") + "`")
        position, index = end, last + 1
    return "".join(parts) + segment[position:]


def _lines_from_plain(text: str, size: tuple[float, float]) -> list[Line]:
    """Lines without positions (a page whose characters could not be measured): one after another."""
    width, height = size
    lines = []
    for position, line in enumerate(part for part in re.split(r"\r\n|\n|\r", text) if part.strip()):
        lines.append(Line(text=_clean(line), x0=0, x1=width, top=height - 12 * position, bottom=height - 12 * position - 10, size=10))
    return lines


# -- page furniture -----------------------------------------------------------------------------


def _furniture_key(text: str) -> str:
    stripped = _PAGE_NUMBER_AT_END.sub("", text.strip())
    return re.sub(r"\d+", "#", " ".join(stripped.lower().split()))


def _edge_lines(page: _Page) -> list[Line]:
    """The top two and bottom two lines of a page (by position)."""
    ordered = sorted(page.lines, key=lambda line: -line.top)
    return ordered[:2] + ordered[-2:] if len(ordered) > 4 else ordered


def _edge_number(text: str) -> int | None:
    """The arabic number a line starts or ends with ("Chapter 4: Drawing 16" -> 16)."""
    match = re.match(r"^(\d{1,4})\s", text) or re.search(r"\s(\d{1,4})$", text) or re.fullmatch(r"(\d{1,4})", text)
    return int(match.group(1)) if match else None


def _page_number_offset(pages: list[_Page]) -> int | None:
    """The difference between printed page numbers and page positions, where most pages agree on one."""
    offsets = Counter()
    for position, page in enumerate(pages):
        found = {number - position for line in _edge_lines(page) if (number := _edge_number(line.text)) is not None}
        offsets.update(found)
    if not offsets:
        return None
    offset, count = offsets.most_common(1)[0]
    return offset if count >= max(3, 0.2 * len(pages)) else None


def _drop_furniture(pages: list[_Page], dropped: list[Dropped]) -> None:
    recurring = Counter()
    for page in pages:
        recurring.update({_furniture_key(line.text) for line in _edge_lines(page)})
    offset = _page_number_offset(pages)
    body_size = _body_size(line for page in pages for line in page.lines)
    for page_index, page in enumerate(pages):
        ordered = sorted(page.lines, key=lambda line: -line.top)
        for position, line in enumerate(ordered):
            at_edge = position < 2 or position >= len(ordered) - 2
            if not at_edge:
                continue
            key = _furniture_key(line.text)
            if _PAGE_NUMBER_ONLY.match(line.text.strip()) or not key:
                reason = "page number"
            # A running head recurs on three pages, or on both pages of a two-page document.
            # Or it holds the page's number where the pages' numbers stand, unless set larger than the body: a chapter's
            # title whose number is the page's ("1 Building and Installing" atop page 1).
            elif len(line.words) <= 15 and (recurring[key] >= min(3, len(pages)) > 1 or (offset is not None and _edge_number(line.text) == page_index + offset
                                                                                       and line.size < 1.15 * body_size)):
                reason = "running head or foot"
            else:
                continue
            line.kind = "dropped"
            dropped.append(Dropped(reason=reason, text=line.text, page_number=page.number))


def _body_size(lines: Iterable[Line]) -> float:
    """The size most of the lines' characters are set in: the body text's."""
    sizes: Counter[float] = Counter()
    for line in lines:
        sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def _drop_section_heads(pages: list[_Page], outline: list[tuple[int, int, str]], dropped: list[Dropped]) -> None:
    """Leave out a running head that names the section a page is in (as DocBook's print style sets one at the top
    right, with no page number): one of a page's two top lines, short, set well right of the left margin (from 40%
    of the page's width), that says a heading's title. A short section's head recurs on fewer than three pages, so
    ``_drop_furniture`` keeps it; a label atop a page at the margin ("Syntax:", "For example,") is the text's."""
    titles = {_normalised_title(line.text) for page in pages for line in page.lines if line.kind == "heading"}
    titles |= {_normalised_title(title) for _, _, title in outline}
    titles.discard("")
    for page in pages:
        for line in sorted((line for line in page.lines if line.kind != "dropped"), key=lambda line: -line.top)[:2]:
            if (line.kind == "text" and len(line.words) <= 12 and page.width and line.x0 >= 0.4 * page.width
                    and _normalised_title(line.text) in titles):
                line.kind = "dropped"
                dropped.append(Dropped(reason="running head or foot", text=line.text, page_number=page.number))


def _reference_page(lines: list[Line], page_count: int) -> str | None:
    """'contents' or 'index' for a page of entries that end in page numbers; None for a page of text."""
    texts = [line.text for line in lines if line.kind != "dropped"]
    if len(texts) < 6:
        return None
    index_entries = sum(bool(_INDEX_ENTRY.search(text)) for text in texts)
    if index_entries >= 0.4 * len(texts):
        return "index"
    numbers = []
    for text in texts:
        match = _ENDS_IN_PAGE.search(text)
        if match and int(match.group(1)) <= page_count + 50 and len(text.split()) >= 2:
            numbers.append(int(match.group(1)))
    leaders = sum(bool(_DOT_LEADER.search(text)) for text in texts)
    if len(numbers) >= 0.5 * len(texts) or leaders >= 0.3 * len(texts):
        rising = sum(after >= before for before, after in zip(numbers, numbers[1:]))
        if leaders >= 0.3 * len(texts) or rising >= 0.7 * max(len(numbers) - 1, 1):
            return "contents"
    return None


# -- columns, headings, paragraphs ------------------------------------------------------------------


def _columns(page: _Page) -> list[tuple[list[Line], bool]]:
    """The page's lines in reading order, in groups, each with whether it is one of two columns set side by side:
    top to bottom; on a page set in two columns, what spans both above them, the left column, the right, and what
    spans both below."""
    lines = [line for line in page.lines if line.kind != "dropped"]
    ordered = sorted(lines, key=lambda line: (-round(line.top), line.x0))
    middle = page.width / 2
    left = [line for line in lines if line.x1 < middle + 5]
    right = [line for line in lines if line.x0 > middle - 5]
    # Each column a fifth of the lines or more, and the two at least half: a paper's first page spans its title and
    # abstract across both.
    if len(left) >= 0.2 * len(lines) and len(right) >= 0.2 * len(lines) and len(left) + len(right) >= 0.5 * len(lines) and len(lines) >= 10:
        # beside a line of the other column: within a line's height (the columns' baselines need not align)
        side_by_side = sum(any(abs(line.top - other.top) < max(line.top - line.bottom, 2) for other in right) for line in left)
        if side_by_side >= 0.3 * len(left):
            spanning = [line for line in lines if line not in left and line not in right]
            first_column_top = max((line.top for line in left + right), default=0)
            above = [line for line in spanning if line.top >= first_column_top]
            below = [line for line in spanning if line.top < first_column_top]
            by_top = lambda group: sorted(group, key=lambda line: -line.top)  # noqa: E731
            return [(by_top(above), False), (by_top(left), True), (by_top(right), True), (by_top(below), False)]
    return [(ordered, False)]


def _set_column_edges(columns: list[tuple[list[Line], bool]], page_width: float) -> None:
    """Give each line the right edge of its column's text (``Line.column_right``): a line that ends well short of it
    ends a paragraph. Each of two columns side by side has its own, and so has a block of six lines or more that spans
    them (a paper's abstract, set narrower); shorter ones, the page's."""
    page_right = _column_right([line for group, _ in columns for line in group if line.kind == "text"], page_width)
    for group, side in columns:
        text_lines = [line for line in group if line.kind == "text"]  # a page in one column: one group, the page's edge
        right = _column_right(text_lines, page_width) if side or len(text_lines) >= 6 else page_right
        for line in group:
            line.column_right = right


def _title_page_title(pages: list[_Page], body_size: float) -> str | None:
    """The title a reader sees on the first page with text, where the PDF's metadata names none: the lines of the
    largest size that stands out from the body text and sets two words or more, top down (at most three:
    "Asymptote: the Vector Graphics" / "Language", not the one-word logo set larger below them); None where no
    line stands out (a first page of plain text)."""
    page = next((page for page in pages if any(line.text.strip() for line in page.lines)), None)
    if page is None:
        return None
    sizes = sorted({round(line.size, 1) for line in page.lines if line.size >= body_size * 1.2}, reverse=True)
    for size in sizes:
        lines = sorted((line for line in page.lines if abs(line.size - size) <= size * 0.05 and line.text.strip()), key=lambda line: (-line.top, line.x0))[:3]
        title = " ".join(" ".join(line.text for line in lines).split())
        if len(re.findall(r"[^\W\d_]{2,}|\d+(?:\.\d+)*", title)) >= 2:
            return title
    return None


def _normalised_title(text: str) -> str:
    text = re.sub(r"^(?:chapter|section|part|appendix)?\s*[\dA-Z]{0,3}(?:\.\d+)*\.?\s+", "", text.strip(), flags=re.IGNORECASE)
    return re.sub(r"\W+", " ", text.lower()).strip()


def _mark_headings(pages: list[_Page], outline: list[tuple[int, int, str]], body_size: float) -> set[tuple[int, str]]:
    """Mark heading lines; returns the (page index, normalised title) of the outline entries a line was found for."""
    matched_entries: set[tuple[int, str]] = set()
    by_page: dict[int, list[tuple[int, str]]] = {}
    for page_index, depth, title in outline:
        by_page.setdefault(page_index, []).append((depth, _normalised_title(title)))
    larger = sorted({line.size for page in pages for line in page.lines if line.size >= body_size * 1.15 and line.kind == "text"}, reverse=True)
    size_level = {size: min(position + 1, 4) for position, size in enumerate(larger)}
    deepest = max([depth for _, depth, _ in outline] + [len(size_level), 1])
    # Bold sets a heading apart only where the body text is not itself bold (a font whose weight reads wrong).
    body = [line for page in pages for line in page.lines if line.kind == "text" and abs(line.size - body_size) < 1]
    bold_marks = sum(len(line.text) for line in body if line.bold) < 0.5 * sum(len(line.text) for line in body)
    for page_number, page in enumerate(pages):
        titles = by_page.get(page_number, []) + by_page.get(page_number - 1, [])
        for place, line in enumerate(page.lines):
            if line.kind != "text":
                continue
            normalised = _normalised_title(line.text)
            matched = next((depth for depth, title in titles if title and normalised == title), None)
            following = page.lines[place + 1] if place + 1 < len(page.lines) else None
            if matched is None and following is not None and following.kind == "text" and _wraps_to(line, following):
                both = _normalised_title(_joined(line.text, following.text, hyphenated=set(), full_text=""))
                matched = next((depth for depth, title in titles if title and both == title), None)
                if matched is not None:  # an outline title the page prints on two lines
                    following.kind, following.level, following.goes_on_heading = "heading", min(matched, 6), True
                    normalised = both
            if matched is not None:
                line.kind, line.level = "heading", min(matched, 6)
                matched_entries.update((index, normalised) for index in (page_number, page_number - 1))
            elif not _WORD.search(line.text):
                continue  # a glyph set apart, an accent or a rule drawn in a larger size: no heading says nothing
            elif line.size in size_level and len(line.words) <= 14 and not line.mono:
                line.kind, line.level = "heading", size_level[line.size]
            elif bold_marks and line.bold and not line.mono and len(line.words) <= 10 and not line.text.endswith((".", ",", ";")) and abs(line.size - body_size) < 1:
                line.kind, line.level = "heading", min(deepest + 1, 6)
    return matched_entries


def _wraps_to(line: Line, following: Line) -> bool:
    """Whether following may be the next printed line of a heading that line begins: set in the same size, right
    below it (within 1.6 of its size), not left of it."""
    return abs(line.size - following.size) < 0.5 and 0 < line.bottom - following.bottom <= 1.6 * line.size and following.x0 >= line.x0 - line.char_width


def _wrapped_heading(line: Line, following: Line) -> bool:
    """Whether two heading lines of one level are one heading too long for a line: following wraps from line
    (``_wraps_to``), and line ran full, its column having no room for following's first word. Two headings in a row
    ("Commands for Moving" above "beginning-of-line (C-a)") leave the first short."""
    first_word = following.words[0] if following.words else ""
    return (line.level == following.level and _wraps_to(line, following)
            and line.column_right - line.x1 <= (len(first_word) + 2) * line.char_width)


def _is_code(line: Line) -> bool:
    return line.mono and line.kind == "text"


def _page_blocks(lines: list[Line], *, body_size: float, hyphenated: set[str], full_text: str) -> list[tuple[str, str, int]]:
    """(kind, Markdown, heading level) blocks of one page's lines in reading order."""
    blocks: list[tuple[str, str, int]] = []
    paragraph: list[Line] = []
    code: list[Line] = []
    pitch = _line_pitch(lines, body_size)

    def close_paragraph() -> None:
        nonlocal paragraph
        if paragraph:
            text = _join_lines(paragraph, hyphenated=hyphenated, full_text=full_text)
            kind = "item" if _BULLET.match(paragraph[0].text) else "text"
            if kind == "item":
                text = "- " + _BULLET.sub("", text, count=1)
            blocks.append((kind, text, 0))
            paragraph = []

    def close_code() -> None:
        nonlocal code
        if code:
            left = min(line.x0 for line in code)
            width = _char_width(code)
            rendered = [" " * max(0, round((line.x0 - left) / width)) + line.text for line in code]
            blocks.append(("code", "```\n" + "\n".join(rendered) + "\n```", 0))
            code = []

    previous: Line | None = None
    heading_line: Line | None = None  # the last line of the heading just written, while nothing else has followed it
    for line in lines:
        if line.kind == "heading":
            close_paragraph()
            close_code()
            if heading_line is not None and blocks and blocks[-1][0] == "heading" and (line.goes_on_heading or _wrapped_heading(heading_line, line)):
                joined = _joined(blocks[-1][1], line.text, hyphenated=hyphenated, full_text=full_text)  # a heading too long for one line
                blocks[-1] = ("heading", joined, line.level)
            else:
                blocks.append(("heading", f"{'#' * line.level} {line.text}", line.level))
            heading_line = line
            previous = None
            continue
        heading_line = None
        if _is_code(line):
            close_paragraph()
            code.append(line)
            previous = line
            continue
        close_code()
        starts = (not paragraph or previous is None or line.set_apart
                  or _starts_paragraph(previous, line, pitch=pitch, body_size=body_size, earlier=paragraph[-2] if len(paragraph) > 1 else None))
        if paragraph and starts:
            close_paragraph()
        if line.label and starts:  # a run-in label is a line of its own, as an HTML definition's term is
            blocks.append(("text", f"**{line.label.replace('*', '')}**", 0))
            line = replace(line, text=line.after_label)
        paragraph.append(line)
        previous = line
    close_paragraph()
    close_code()
    return blocks


def _line_pitch(lines: list[Line], body_size: float) -> float:
    gaps = [before.bottom - after.bottom for before, after in zip(lines, lines[1:]) if 0 < before.bottom - after.bottom < body_size * 3]
    return statistics.median(gaps) if gaps else body_size * 1.2


def _char_width(lines: list[Line]) -> float:
    widths = [(line.x1 - line.x0) / len(line.text) for line in lines if len(line.text) >= 4]
    return max(statistics.median(widths), 1.0) if widths else 5.0


def _continues_with_a_dash(previous: Line, line: Line) -> bool:
    """Whether a line that opens with a dash goes on with the sentence of the line before ("... when a fit is
    interrupted" / "— see fit (p. 91)."): a dash is a list's bullet only after a line that ends a sentence, a colon or
    another item; "•" and numbers always are."""
    return line.text[:1] in "–—-" and not _TERMINAL.search(previous.text) and not previous.text.rstrip().endswith(":") and not _BULLET.match(previous.text)


def _goes_on_the_line(previous: Line, line: Line) -> bool:
    """Whether line is the rest of the printed line previous began: the PDF's text breaks a line where a character
    is raised or lowered ("... letters are accepted¹" / "(and with some fonts ..."), and the rest starts just right
    of it (within two characters' width) at the same height. Cells of a table stand further apart."""
    return -1 <= line.x0 - previous.x1 <= 2 * previous.char_width and line.bottom < previous.top and previous.bottom < line.top


def _starts_paragraph(previous: Line, line: Line, *, pitch: float, body_size: float, earlier: Line | None = None) -> bool:
    """Whether line opens a new paragraph after previous (earlier: the line before previous in its paragraph)."""
    if previous.kind != "text":
        return True
    if _goes_on_the_line(previous, line):
        return False
    gap = previous.bottom - line.bottom
    if gap > pitch * 1.4:
        return True
    if gap < -body_size:  # a jump up: the next column, where a paragraph goes on if its last line ran full mid-sentence
        full = previous.column_right - previous.x1 <= 2 * previous.char_width
        if not full or _TERMINAL.search(previous.text) or line.x0 <= previous.x0:
            return True
    if _BULLET.match(line.text) and not _continues_with_a_dash(previous, line):
        return True
    if abs(line.size - previous.size) > 1:
        return True
    next_word = line.words[0] if line.words else ""
    room = previous.column_right - previous.x1
    char_width = previous.char_width
    if room > (len(next_word) + 2) * char_width and not previous.text.endswith("-") and not _at_block_edge(previous, earlier):
        return True  # the next line's first word would have fitted: the line was ended on purpose
    indented = line.x0 - previous.x0 > 1.5 * char_width
    return indented and _TERMINAL.search(previous.text) is not None


def _at_block_edge(previous: Line, earlier: Line | None) -> bool:
    """Whether previous, a line of prose (six words or more), ends where the line before it in its paragraph ends,
    within half a character: a block set narrower than its column (a quotation, a licence notice indented on both
    sides) runs full to its own edge, and a short word after it would have fitted in the column but not in the
    block. Its first line cannot tell: the edge is known from its second line on."""
    return earlier is not None and len(previous.words) >= 6 and abs(earlier.x1 - previous.x1) <= 0.5 * previous.char_width


_OPEN_URL = re.compile(r"\b(?:https?|ftp)://\S*[./#?=&-]$")
_OPEN_CODE = re.compile(r"(?<!`)`[^`\s]*[^`\s/._-][/._-]+`$")  # a code span that a line ends after "/", ".", "_" or "-"
_HYPHENATED_END = re.compile(r"([^\W\d_]+)-$")  # a line that ends on a word and a hyphen
_FIRST_WORD = re.compile(r"([^\W\d_]+)")


def _join_lines(lines: list[Line], *, hyphenated: set[str], full_text: str) -> str:
    text = lines[0].text
    for line in lines[1:]:
        text = _joined(text, line.text, hyphenated=hyphenated, full_text=full_text)
    return text


def _joined(text: str, after: str, *, hyphenated: set[str], full_text: str) -> str:
    """A paragraph's text and its next line as one: an address broken at a line end goes on without a space; a word
    hyphenated across the break is joined, unless the document writes it with a hyphen and never without. Code set
    in a fixed-pitch font and broken after a path's, an address's or a name's "/", ".", "_" or "-" goes on in one
    span: "`/usr/` `local/bin`" is "`/usr/local/bin`"; a hyphen there is the typesetter's where the document writes
    the name without it elsewhere and never with it ("`SCon-` `struct`" is "`SConstruct`", "`yank-` `pop`" stays)."""
    if _OPEN_URL.search(text):
        return f"{text}{after}"
    if _OPEN_CODE.search(text) and after.startswith("`") and not after.startswith("``"):
        head, rest = text[:-1], after[1:]  # the two spans' insides, one span
        match, first = _HYPHENATED_END.search(head), _FIRST_WORD.match(rest)
        if match and first:
            joined, hyphened = _written_across(match, first)
            if joined in full_text and hyphened not in hyphenated:
                return f"{head[:-1]}{rest}"  # a name the typesetter hyphenated: "`SCon-` `struct`" is "`SConstruct`"
        return f"{head}{rest}"
    match = _HYPHENATED_END.search(text)
    first = _FIRST_WORD.match(after)
    if match and first and after[:1].islower():
        joined, hyphened = _written_across(match, first)
        if hyphened in hyphenated and joined not in full_text:
            return f"{text}{after}"
        return f"{text[:-1]}{after}"
    return f"{text} {after}"


def _written_across(match: re.Match, first: re.Match) -> tuple[str, str]:
    """A word a line end splits after a hyphen (``_HYPHENATED_END``, then ``_FIRST_WORD`` of the next line), lower
    case, written whole and with its hyphen: ("sconstruct", "scon-struct")."""
    return f"{match.group(1)}{first.group(1)}".lower(), f"{match.group(1)}-{first.group(1)}".lower()


def _join_across_pages(rendered: list[tuple[tuple[str, str, int], ...]], *, hyphenated: set[str], full_text: str) -> list[tuple[tuple[str, str, int], ...]]:
    """A paragraph that a page break cuts mid-sentence is one paragraph, on the page where it starts: the page's last
    block is a paragraph or list item that ends without a sentence's end, and the next page's first (past outline
    entries) is a paragraph that goes on in lower case ("... the standard deviation of the" / "residuals, ...")."""
    pages = [list(blocks) for blocks in rendered]
    for before, after in zip(pages, pages[1:]):
        if not before or before[-1][0] not in ("text", "item") or _TERMINAL.search(before[-1][1]) or before[-1][1].endswith("**"):
            continue
        index = next((position for position, block in enumerate(after) if block[0] != "section"), None)
        if index is None or after[index][0] != "text" or not after[index][1][:1].islower():
            continue
        kind, text, level = before[-1]
        before[-1] = (kind, _joined(text, after[index][1], hyphenated=hyphenated, full_text=full_text), level)
        del after[index]
    return [tuple(blocks) for blocks in pages]


# -- OCR ------------------------------------------------------------------------------------


def _ocr_page(page) -> str:
    """The text of a page image, read by the tesseract command (raises IngestError where it is missing)."""
    binary = shutil.which("tesseract")
    if binary is None:
        raise FileNotFoundError("tesseract")
    bitmap = page.render(scale=300 / 72, grayscale=True)
    pixels = bitmap.to_numpy()
    height, width = pixels.shape[:2]
    with tempfile.TemporaryDirectory() as folder:
        image = Path(folder) / "page.pgm"
        image.write_bytes(f"P5 {width} {height} 255\n".encode() + pixels.reshape(height, width).tobytes())
        result = subprocess.run([binary, str(image), "stdout", "--psm", "3"], capture_output=True, timeout=300, check=False)
    if result.returncode != 0:
        raise OSError(result.stderr.decode("utf-8", "replace").strip()[:200])
    return result.stdout.decode("utf-8", "replace")


# -- the whole document ---------------------------------------------------------------------------


def pdf_content(data: bytes, path: Path) -> PdfContent:
    """Read a PDF's pages as Markdown (see the module docstring); raises IngestError on bad input."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    fix = "Re-export or re-download the PDF, then ingest it again"
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as err:
        if "password" in str(err).lower():
            raise IngestError(path, "is an encrypted PDF", "Save a copy without a password, then ingest that") from err
        raise IngestError(path, f"is not a readable PDF ({err})", fix) from err
    try:
        page_count = len(document)
        if page_count == 0:
            raise IngestError(path, "is a PDF with no pages", fix)
        fonts = _Fonts(raw)
        pages: list[_Page] = []
        ocr_texts: dict[int, str] = {}
        missing_ocr = False
        damaged: list[int] = []
        for index in range(page_count):
            try:
                page = document[index]
            except pdfium.PdfiumError:  # a page object the file's damage left unreadable: the others may still be read
                damaged.append(index + 1)
                pages.append(_Page(number=index + 1, width=0.0, height=0.0))  # no lines: its size is never read
                continue
            width, height = page.get_size()
            lines = _page_lines(page, raw, fonts)
            if not lines and _has_images(page, raw):
                try:
                    ocr_texts[index] = _ocr_page(page)
                except FileNotFoundError:
                    missing_ocr = True
                except (OSError, subprocess.SubprocessError) as err:
                    raise IngestError(path, f"page {index + 1} has no text layer and OCR failed ({err})", "Check the tesseract-ocr installation, or run ocrmypdf on the file and ingest the result") from err
            pages.append(_Page(number=index + 1, width=width, height=height, lines=lines))
        outline = _outline(document)
        metadata_title = (document.get_metadata_value("Title") or "").strip() or None
    finally:
        document.close()
    if len(damaged) == page_count:
        raise IngestError(path, f"is a damaged PDF: none of its {page_count} page(s) can be read", fix)
    if missing_ocr and not any(page.lines for page in pages):
        raise IngestError(path, "has no text layer (a scanned PDF)", "Install tesseract-ocr (apt-get install tesseract-ocr) to read scanned PDFs, or run ocrmypdf on it and ingest the result")
    if not any(page.lines for page in pages) and not any(text.strip() for text in ocr_texts.values()):
        if not ocr_texts:
            raise IngestError(path, "is a PDF with no text layer and no page images to read by OCR (only drawings, or blank pages)", "Export it again with its text, or run OCR (ocrmypdf) on a scan of it")
        raise IngestError(path, "is a PDF with no text layer, and OCR found no text in its page images", "Check the scan's quality, or run ocrmypdf on it and ingest the result")
    dropped: list[Dropped] = [Dropped(reason="footnote mark", text=mark, page_number=page.number) for page in pages for line in page.lines for mark in line.marks]
    _drop_furniture(pages, dropped)
    for page in pages:
        reference = _reference_page(page.lines, page_count)
        if reference:
            for line in page.lines:
                if line.kind != "dropped":
                    line.kind = "dropped"
            dropped.append(Dropped(reason=reference, text=" / ".join(line.text for line in page.lines[:6])[:300], page_number=page.number,
                                   characters=sum(len(line.text) + 1 for line in page.lines)))
            continue
        for line in page.lines:
            if line.kind != "dropped" and _DOT_LEADER.search(line.text):
                line.kind = "dropped"
                dropped.append(Dropped(reason="contents", text=line.text, page_number=page.number))
    body_lines = [line for page in pages for line in page.lines if line.kind == "text"]
    body_size = _body_size(body_lines)
    found_in_text = _mark_headings(pages, outline, body_size)
    _drop_section_heads(pages, outline, dropped)
    body_lines = [line for line in body_lines if line.kind != "dropped"]
    full_text = "\n".join(line.text.lower() for line in body_lines)
    hyphenated = set(re.findall(r"[^\W\d_]+-[^\W\d_]+", full_text))
    rendered = []
    for index, page in enumerate(pages):
        if index in ocr_texts:
            rendered.append(tuple(("text", paragraph, 0) for paragraph in re.split(r"\n\s*\n", ocr_texts[index]) if paragraph.strip()))
            continue
        columns = _columns(page)
        _set_column_edges(columns, page.width)
        ordered = [line for group, _ in columns for line in group]
        sections = [("section", title, min(depth, 6)) for page_index, depth, title in outline
                    if page_index == index and (index, _normalised_title(title)) not in found_in_text]
        rendered.append(tuple(sections + _page_blocks(ordered, body_size=body_size, hyphenated=hyphenated, full_text=full_text)))
    rendered = _join_across_pages(rendered, hyphenated=hyphenated, full_text=full_text)
    first_heading = next((text.lstrip("# ") for blocks in rendered for kind, text, level in blocks if kind == "heading" and level == 1), None)
    if any(kind != "section" for blocks in rendered for kind, _, _ in blocks) is False:
        raise IngestError(path, "has no text left once its page furniture is set aside (contents, index, running heads)", "Check that it is the document you meant, or remove it from sources/")
    title = metadata_title or _title_page_title(pages, body_size) or first_heading
    notes = (f"{len(ocr_texts)} page(s) read by OCR (tesseract)",) if ocr_texts else ()
    if damaged:
        notes += (f"{len(damaged)} damaged page(s) could not be read and were left out ({', '.join(map(str, damaged[:10]))}"
                  f"{', ...' if len(damaged) > 10 else ''}): re-export or re-download the PDF to read them",)
    if missing_ocr:
        notes += ("some pages have no text layer and were left out: install tesseract-ocr to read them",)
    return PdfContent(pages=tuple(rendered), title=title, dropped=tuple(dropped), notes=notes, ocr_pages=len(ocr_texts))


def _column_right(lines: list[Line], page_width: float) -> float:
    """Where the lines of the page's text end, when they run full (the 90th percentile of their ends)."""
    ends = sorted(line.x1 for line in lines)
    if not ends:
        return page_width
    return ends[int(0.9 * (len(ends) - 1))]


def _has_images(page, raw) -> bool:
    return any(obj.type == raw.FPDF_PAGEOBJ_IMAGE for obj in page.get_objects(max_depth=2))


def _outline(document) -> list[tuple[int, int, str]]:
    """(page index, depth from 1, title) of each outline entry, in page order; none for a broken outline."""
    entries = []
    try:
        for item in document.get_toc(max_depth=8):
            destination, title = item.get_dest(), (item.get_title() or "").strip()
            page_index = destination.get_index() if destination is not None else None
            if page_index is not None and title:
                entries.append((page_index, item.level + 1, title))
    except Exception:  # a broken outline costs only its headings
        return []
    return sorted(entries, key=lambda entry: entry[0])
