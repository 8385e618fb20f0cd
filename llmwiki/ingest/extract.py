"""Text extraction: a file on disk becomes pages of blocks with breadcrumbs.

Each format is read by a kept library, never by a hand-written parser:
Markdown by markdown-it-py, HTML by BeautifulSoup + markdownify (HTML is turned
into Markdown so both share one block builder), PDF by PDFium through pypdfium2
(llmwiki/ingest/pdf.py: one PageText per PDF page, furniture removed, breadcrumbs
from the PDF outline), DOCX by python-docx (breadcrumbs
from heading styles). Plain text is split on blank lines.

Text is cleaned at ingress, once, here: NUL bytes are removed and line endings
become ``\\n``. Undecodable or binary input raises ``IngestError`` naming the
file and the fix; nothing here touches the store.
"""

from __future__ import annotations

import html
import re
import zipfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import charset_normalizer
from markdown_it import MarkdownIt

from llmwiki.errors import IngestError, NotADocument, UnsupportedFileError
from llmwiki.ingest.html import fragment_markdown, html_content, site_affixes, without_site_name
from llmwiki.ingest.pdf import FIXED_PITCH_NAME, pdf_content
from llmwiki.pages import read_frontmatter
from llmwiki.records import Block, Extraction, PageText
from llmwiki.text import sentence_key

# Each extractor's version: a workspace whose documents an older version read re-extracts them on the next
# ingest (``llmwiki.ingest.sources``). Raise a format's number whenever what it extracts changes.
EXTRACTOR_VERSIONS = {"markdown": 7, "text": 7, "html": 12, "pdf": 17, "docx": 6}
BLOCK_SEPARATOR = "\n\n"
_BLANK_LINES = re.compile(r"\n[ \t]*\n+")
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r\f\v\x1b")
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def clean_text(text: str) -> str:
    """Remove NUL bytes and normalise line endings to ``\\n``."""
    return text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")


# Letters and signs that Western European text written in Windows-1252 / Latin-1 uses.
_WESTERN = frozenset("àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿßÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝŒœŠšŽžðÐþÞ’‘“”–—…«»€£°©®ºª§¡¿×·´¨¸½¼¾")


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except UnicodeDecodeError:
        return False
    return True


def _as_western(data: bytes) -> str | None:
    """The bytes read as Windows-1252 (Latin-1 where a byte is undefined there) when that gives Western
    European text, else None. Western means: nearly every non-ASCII
    character a common accented letter or sign, and few of the letters non-ASCII (French or German
    has a few per cent; Cyrillic or Greek read this way would be all of them).

    Detectors guess from statistics that short texts lack: "Angoulême est très belle" comes out as
    Windows-1250 ("Angoulęme", "trčs"). This evidence holds for a single accented word.
    """
    text = data.decode("cp1252", errors="replace") if _decodes(data, "cp1252") else data.decode("latin-1")
    non_ascii = [char for char in text if ord(char) > 127]
    if not non_ascii:
        return text
    letters = sum(char.isalpha() for char in text)
    western = sum(char in _WESTERN for char in non_ascii)
    accented_letters = sum(char.isalpha() for char in non_ascii)
    return text if western / len(non_ascii) >= 0.9 and accented_letters <= 0.3 * max(letters, 1) else None


def decode_text(data: bytes, path: Path) -> tuple[str, str]:
    """Decode a text file's bytes; returns (text, encoding) or raises IngestError.

    Byte-order marks first, then UTF-8, then Windows-1252 when the bytes read
    as Western European text (``_as_western``), then charset detection.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return clean_text(data.decode(encoding)), encoding
            except UnicodeDecodeError as err:
                raise IngestError(path, f"starts with a {encoding} byte-order mark but is not valid {encoding} ({err.reason})", "Re-save it as UTF-8") from err
    sample = data[:65536]
    if sample and sample.count(0) / len(sample) > 0.1:
        raise IngestError(path, "looks like a binary file, not text (many NUL bytes)", "Check that the extension is right, or remove it from sources/")
    data = data.replace(b"\x00", b"")
    sample = data[:65536]
    if sample and sum(sample.count(byte) for byte in _CONTROL_BYTES) / len(sample) > 0.05:
        raise IngestError(path, "looks like a binary file, not text (many control bytes)", "Check that the extension is right, or remove it from sources/")
    try:
        return clean_text(data.decode("utf-8")), "utf-8"
    except UnicodeDecodeError:
        pass
    if (western := _as_western(data)) is not None:
        return clean_text(western), "cp1252"
    best = charset_normalizer.from_bytes(data).best()
    if best is None:
        raise IngestError(path, "is not text in any encoding that could be detected", "Re-save it as UTF-8")
    return clean_text(str(best)), best.encoding


# A page whose refresh sends the reader on and that says fewer words than this itself is a redirect, not a document:
# documentation sites leave one at every moved page's old address ("Redirecting to ../struct.Path.html...").
REDIRECT_WORDS = 60
# ... and one titled as a web server's "not found" page that says as little is the site's error page: a saved site
# keeps its 404.html ("Page Not Found. The page you requested does not exist. ..."), which is no document.
_ERROR_PAGE_TITLE = re.compile(r"^\W*(?:(?:error\s*)?404\b.*|(?:page|file|document)\s+not\s+found\b.*|not\s+found\W*)$", re.IGNORECASE)

# The most characters of code one fenced block holds (about 400 tokens of code: a chunk's budget is 512 by default).
CODE_BLOCK_CHARACTERS = 800
_FENCED = re.compile(r"\A(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*)\n(?P=fence)[ \t]*\Z", re.DOTALL)


def _code_pieces(text: str) -> list[str]:
    """A fenced code block longer than ``CODE_BLOCK_CHARACTERS`` as several fenced blocks, split between lines; any
    other block as it is. A chunk holds a whole block where it can: a code block longer than a chunk would be cut
    between chunks, and the part after the cut, read without its opening fence, would read as prose (or the text after
    its closing fence as code)."""
    match = _FENCED.match(text) if len(text) > CODE_BLOCK_CHARACTERS else None
    if match is None:
        return [text]
    fence, info = match.group("fence"), match.group("info")
    pieces, lines, size = [], [], 0
    for line in match.group("body").split("\n"):
        if lines and size + len(line) + 1 > CODE_BLOCK_CHARACTERS:
            pieces.append(lines)
            lines, size = [], 0
        lines.append(line)
        size += len(line) + 1
    pieces.append(lines)
    return [f"{fence}{info}\n" + "\n".join(lines) + f"\n{fence}" for lines in pieces]


class _PageBuilder:
    """Joins blocks with blank lines while recording each block's offset."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.blocks: list[Block] = []
        self.length = 0

    def add(self, text: str, breadcrumb: tuple[str, ...], *, is_heading: bool = False) -> None:
        text = clean_text(text).strip()
        if not text or is_heading and self.blocks and self.blocks[-1].is_heading and self.blocks[-1].text == text:
            return  # a heading said twice running (a page's title block above the document's own first heading) is one
        for piece in _code_pieces(text):
            if self.parts:
                self.parts.append(BLOCK_SEPARATOR)
                self.length += len(BLOCK_SEPARATOR)
            self.blocks.append(Block(text=piece, start=self.length, breadcrumb=breadcrumb, is_heading=is_heading))
            self.parts.append(piece)
            self.length += len(piece)

    def page(self, number: int) -> PageText:
        return PageText(number=number, text="".join(self.parts), blocks=tuple(self.blocks))


class _Breadcrumb:
    """The heading path at the current point of a document."""

    def __init__(self) -> None:
        self.levels: list[tuple[int, str]] = []

    def enter(self, level: int, title: str) -> tuple[str, ...]:
        self.levels = [(lvl, text) for lvl, text in self.levels if lvl < level]
        self.levels.append((level, title))
        return self.current

    @property
    def current(self) -> tuple[str, ...]:
        return tuple(text for _, text in self.levels)


_MARKDOWN = MarkdownIt("commonmark").enable("table")


def markdown_blocks(text: str, builder: _PageBuilder, *, breadcrumb: _Breadcrumb | None = None, written: bool = True) -> str | None:
    """Add a Markdown text's top-level blocks to a page; returns the first H1. written: the text is a Markdown file
    as its author wrote it, whose HTML blocks are markup to read; Markdown made from an HTML page has none, and a
    line of its text that looks like a tag ("<python at example dot com>") is text."""
    breadcrumb = breadcrumb or _Breadcrumb()
    lines = text.split("\n")
    tokens = _MARKDOWN.parse(text)
    first_h1 = None
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.level != 0 or token.nesting == -1 or token.map is None:
            index += 1
            continue
        if token.type == "heading_open":
            first_h1 = _add_heading(builder, breadcrumb, int(token.tag[1:]), tokens[index + 1].content.strip(), first_h1)
        elif token.type == "html_block" and token.content.lstrip().startswith("<!--"):
            pass  # comments (such as a wiki page's section markers) are not content
        elif token.type == "html_block" and written:  # tags alone are nothing
            shown = fragment_markdown(token.content)
            heading = re.match(r"(#{1,6}) +(.+)", shown)
            if heading and "\n" not in shown:  # a README's centred <h1 align="center">
                first_h1 = _add_heading(builder, breadcrumb, len(heading.group(1)), heading.group(2).strip(), first_h1)
            else:
                builder.add(shown, breadcrumb.current)
        elif token.type == "blockquote_open":
            begin, end = token.map
            builder.add(_unquoted("\n".join(lines[begin:end])), breadcrumb.current)
        else:
            begin, end = token.map
            block = "\n".join(lines[begin:end])
            if token.type != "paragraph_open" or not _IMAGES.search(block) or re.search(r"\w", _IMAGES.sub("", block)):
                builder.add(block, breadcrumb.current)  # a row of badge images is no text; "**|**" (a term) is
        index += 1
    return first_h1


def _add_heading(builder: _PageBuilder, breadcrumb: _Breadcrumb, level: int, title: str, first_h1: str | None) -> str | None:
    """Add a heading to the page; returns the first H1, this one where it is."""
    builder.add(f"{'#' * level} {title}", breadcrumb.enter(level, title), is_heading=True)
    return title if level == 1 and first_h1 is None else first_h1


# Images of Markdown, linked or not: "![build](https://ci.example/badge.svg)", "[![docs](badge.svg)](https://...)".
_IMAGES = re.compile(r"\[\s*!\[[^\]]*\]\([^)]*\)\s*\]\([^)]*\)|!\[[^\]]*\]\([^)]*\)")


# A quotation's markers ("> ", "> > "), and a note-taking app's callout mark opening one ("> [!note] Title").
_QUOTE_MARKS = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+", re.MULTILINE)
_CALLOUT = re.compile(r"^\[!(\w+)\][+-]?[ \t]*([^\n]*)\n?")


def _unquoted(block: str) -> str:
    """A block quotation as its reader sees it: its lines without their "> " marks; a callout's "[!note] Open question"
    line a label of its own, as a definition's term is ("**Note: Open question**"), not part of the sentence after it."""
    text = _QUOTE_MARKS.sub("", block).lstrip()
    return _CALLOUT.sub(lambda mark: f"**{': '.join(filter(None, (mark.group(1).capitalize(), mark.group(2).strip())))}**\n\n", text, count=1)


# The links, embeds and block ids of wiki-style notes (Obsidian, Foam, Logseq): "[[Page]]", "[[Page#Part|shown text]]",
# "![[diagram.png]]", a paragraph's closing "^block-id".
_WIKI_EMBED = re.compile(r"!\[\[[^\[\]\n]+\]\]")
_WIKI_LINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+))?\]\]")
_BLOCK_ID = re.compile(r"[ \t]+\^[A-Za-z0-9-]+[ \t]*$", re.MULTILINE)
_CODE_PIECES = re.compile(r"(```.*?```|`[^`\n]+`)", re.DOTALL)  # fences and code spans, kept as written


def wiki_links_read(text: str) -> str:
    """A note's wiki-style links as a reader sees them: "[[Design Team]]" -> "Design Team", "[[Specs#Power|the power
    spec]]" -> "the power spec", "[[Specs#Power]]" -> "Specs › Power"; embeds and block ids left out. Code is not
    looked into: "[[ -f x ]]" in a shell example stays."""
    def link(match: re.Match) -> str:
        target, shown = match.group(1).strip(), (match.group(2) or "").strip()
        return shown or " › ".join(part.strip() for part in target.split("#") if part.strip())

    pieces = _CODE_PIECES.split(text)
    return "".join(piece if index % 2 else _BLOCK_ID.sub("", _WIKI_LINK.sub(link, _WIKI_EMBED.sub("", piece)))
                   for index, piece in enumerate(pieces))


def extract_markdown(data: bytes, path: Path) -> Extraction:
    text, encoding = decode_text(data, path)
    frontmatter = read_frontmatter(text)
    meta, body = (frontmatter.meta, frontmatter.body) if frontmatter.found and not frontmatter.error else ({}, text)
    builder = _PageBuilder()
    first_h1 = markdown_blocks(wiki_links_read(body), builder)
    title = meta.get("title") if isinstance(meta.get("title"), str) else first_h1
    return Extraction(parser=f"markdown {EXTRACTOR_VERSIONS['markdown']} ({encoding})", pages=(builder.page(1),), title=title)


# Past an opening quote, not a bracket: "(gdb) bt" and "(a) the first" open a prompt's line and a list's item.
_OPENING_QUOTES = "\"'`‘“"


def plain_paragraphs(block: str) -> list[str]:
    """The paragraphs of a blank-line-separated block of plain text. Text wrapped at a column (every line but the last
    35-120 characters long) is one paragraph, its line breaks spaces; otherwise (a list of names, an address, a table of
    values, a paragraph a line) a line is a paragraph of its own, unless the next goes on with a lower-case word, past
    an opening quote: "(collectively known as / 'refs') were stored"."""
    lines = [line for line in block.split("\n") if line.strip()]
    if len(lines) <= 1 or all(35 <= len(line.rstrip()) <= 120 for line in lines[:-1]):
        return [block]
    paragraphs = [lines[0]]
    for line in lines[1:]:
        if line.lstrip().lstrip(_OPENING_QUOTES)[:1].islower():
            paragraphs[-1] += "\n" + line
        else:
            paragraphs.append(line)
    return paragraphs


def extract_text(data: bytes, path: Path) -> Extraction:
    text, encoding = decode_text(data, path)
    builder = _PageBuilder()
    breadcrumb = _Breadcrumb()
    levels: list[str] = []  # the underline characters in the order they first appear: the first marks the top level
    first_heading = None
    for block in _BLANK_LINES.split(text):
        heading = underlined_heading(block)
        if heading is not None:
            title, mark, block = heading
            if mark not in levels:
                levels.append(mark)
            level = levels.index(mark) + 1
            first_heading = first_heading or title
            builder.add(f"{'#' * min(level, 6)} {title}", breadcrumb.enter(level, title), is_heading=True)
        for paragraph in plain_paragraphs(block):
            builder.add(paragraph, breadcrumb.current)
    first_line = text.strip().split("\n", 1)[0].strip()
    title = first_heading or (first_line if 0 < len(first_line) <= 80 else None)
    return Extraction(parser=f"text {EXTRACTOR_VERSIONS['text']} ({encoding})", pages=(builder.page(1),), title=title)


# A plain-text heading is underlined (reStructuredText, AsciiDoc, many READMEs): "NAME" over "----", "Usage" over
# "=====", possibly overlined too. Only at the start of a block, so a rule under a paragraph's last line is no heading.
_UNDERLINE = re.compile(r"^\s*([=\-~^*+#])\1{2,}\s*$")


def underlined_heading(block: str) -> tuple[str, str, str] | None:
    """(title, underline character, the rest of the block) where a block opens with an underlined title line; None
    otherwise. The underline is as long as the title, near enough (70%); the title is one short line that does not end
    a sentence ("Some text." over "-----" is a paragraph and a rule)."""
    lines = block.strip("\n").split("\n")
    if len(lines) >= 3 and _UNDERLINE.match(lines[0]) and _UNDERLINE.match(lines[2]):
        lines = lines[1:]  # an overline: "=====" / "Title" / "====="
    if len(lines) < 2 or not (match := _UNDERLINE.match(lines[1])):
        return None
    title = lines[0].strip()
    if not title or len(title) > 80 or _UNDERLINE.match(lines[0]) or title.endswith((".", ",", ";")) or len(lines[1].strip()) < 0.7 * len(title):
        return None
    return title, match.group(1), "\n".join(lines[2:])


def extract_html(data: bytes, path: Path) -> Extraction:
    text, encoding = decode_text(data, path)
    content = html_content(text)
    says_little = len(content.markdown.split()) < REDIRECT_WORDS
    if content.redirect and says_little:
        raise NotADocument(path, f"is a page that redirects to {content.redirect}, not a document of its own", "It is skipped; ingest the page it points to")
    if says_little and content.title and _ERROR_PAGE_TITLE.match(content.title):
        raise NotADocument(path, f"is a site's error page (\"{content.title}\"), not a document of its own", "It is skipped")
    builder = _PageBuilder()
    first_h1 = markdown_blocks(clean_text(content.markdown), builder, written=False)
    if not builder.blocks:
        raise IngestError(path, "has no main content (only navigation, links or page furniture)", "Check that it is the page you meant, or remove it from sources/")
    return Extraction(parser=f"html {EXTRACTOR_VERSIONS['html']} ({encoding})", pages=(builder.page(1),), title=content.title or first_h1, dropped=content.dropped)


def extract_pdf(data: bytes, path: Path) -> Extraction:
    content = pdf_content(data, path)
    breadcrumb = _Breadcrumb()
    pages = []
    for number, blocks in enumerate(content.pages, start=1):
        builder = _PageBuilder()
        for kind, text, level in blocks:
            if kind == "section":  # an outline entry no line of the page says: it still names the section
                breadcrumb.enter(level, text)
            elif kind == "heading":
                builder.add(text, breadcrumb.enter(level, text.lstrip("#").strip()), is_heading=True)
            else:
                builder.add(text, breadcrumb.current)
        pages.append(builder.page(number))
    if not any(page.text for page in pages):
        raise IngestError(path, "has no text left once its page furniture is set aside (contents, index, running heads)", "Check that it is the document you meant, or remove it from sources/")
    parser = f"pdf {EXTRACTOR_VERSIONS['pdf']} (pypdfium2{', OCR' if content.ocr_pages else ''})"
    return Extraction(parser=parser, pages=tuple(pages), title=content.title, notes=content.notes, dropped=content.dropped)


def _docx_heading_level(style_name: str) -> int | None:
    if style_name == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", style_name)
    return int(match.group(1)) if match else None


def _docx_package(data: bytes) -> bytes:
    """The DOCX with each relationship that points at no part of the package marked external: a hyperlink to a
    bookmark ("#_top", "#page-header") or to nothing ("NULL"), as LibreOffice and Word write some, which python-docx
    would open as a part and fail on (its issues 797, 902, 1351). The package as it is where there is none."""
    import io
    import posixpath
    from xml.etree import ElementTree

    namespace = "http://schemas.openxmlformats.org/package/2006/relationships"
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        names = set(package.namelist())
        fixed: dict[str, bytes] = {}
        for name in sorted(name for name in names if name.endswith(".rels")):
            tree = ElementTree.fromstring(package.read(name))
            source = posixpath.dirname(posixpath.dirname(name))  # word/_rels/document.xml.rels: word
            dangling = []
            for relationship in tree.iter(f"{{{namespace}}}Relationship"):
                target = relationship.get("Target", "")
                part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(source, target))
                if relationship.get("TargetMode") != "External" and part not in names:
                    dangling.append(relationship)
            for relationship in dangling:
                relationship.set("TargetMode", "External")
            if dangling:
                ElementTree.register_namespace("", namespace)
                fixed[name] = ElementTree.tostring(tree, xml_declaration=True, encoding="UTF-8")
        if not fixed:
            return data
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as rewritten:
            for info in package.infolist():
                rewritten.writestr(info, fixed.get(info.filename) or package.read(info.filename))
        return out.getvalue()


def _docx_fixed_pitch(paragraph) -> bool:
    """Whether a paragraph is set in a fixed-pitch font, by its runs' fonts or else its style's: a DOCX's code (Word's
    "HTML Preformatted", LibreOffice's "Preformatted Text", any style set in Courier or Consolas)."""
    style_font = None
    style = paragraph.style
    while style is not None and style_font is None:
        style_font = style.font.name
        style = style.base_style
    fonts = {run.font.name or style_font for run in paragraph.runs if run.text.strip()} or {style_font}
    return None not in fonts and all(FIXED_PITCH_NAME.search(font) for font in fonts)


def extract_docx(data: bytes, path: Path) -> Extraction:
    """A DOCX's paragraphs: headings by their style (breadcrumbs), list items by their style or numbering, code by its
    fixed-pitch font (consecutive lines one fenced block), tables as Markdown tables."""
    import io

    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(_docx_package(data)))
        items = list(document.iter_inner_content())
    # Damaged zip data (zlib.error, EOFError), a zip feature this Python lacks (NotImplementedError) or an encrypted
    # member (RuntimeError), cut or damaged XML (SyntaxError): each a DOCX that cannot be read as it is.
    except (PackageNotFoundError, zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, KeyError, ValueError, SyntaxError) as err:
        raise IngestError(path, f"is not a readable DOCX ({type(err).__name__}: {err})", "Open and re-save it in Word or LibreOffice as .docx, then ingest it again") from err
    builder = _PageBuilder()
    breadcrumb = _Breadcrumb()
    first_heading = None
    code: list[str] = []

    def close_code() -> None:
        if code:
            builder.add("```\n" + "\n".join(code).replace("```", "'''") + "\n```", breadcrumb.current)
            code.clear()

    for item in items:
        if isinstance(item, Table):
            close_code()
            rows = ["| " + " | ".join(" ".join(cell.text.split()).replace("|", "\\|") for cell in row.cells) + " |" for row in item.rows]
            if rows:
                rows.insert(1, "|" + " --- |" * len(item.rows[0].cells))
            builder.add("\n".join(rows), breadcrumb.current)
            continue
        style = item.style.name if item.style is not None else ""
        level = _docx_heading_level(style)
        text = " ".join(item.text.split())
        if level is None and text and _docx_fixed_pitch(item):
            code.append(item.text.rstrip())
            continue
        close_code()
        numbered = item._p.pPr is not None and item._p.pPr.numPr is not None  # a list item by its numbering
        if level is not None and text:
            first_heading = first_heading or text
            builder.add(f"{'#' * level} {text}", breadcrumb.enter(level, text), is_heading=True)
        elif text and (style.startswith("List") or numbered):
            builder.add(f"{'1.' if 'Number' in style else '-'} {text}", breadcrumb.current)
        else:
            builder.add(item.text, breadcrumb.current)
    close_code()
    title = document.core_properties.title or first_heading
    return Extraction(parser=f"docx {EXTRACTOR_VERSIONS['docx']}", pages=(builder.page(1),), title=title)


EXTRACTORS: dict[str, Callable[[bytes, Path], Extraction]] = {
    ".md": extract_markdown,
    ".markdown": extract_markdown,
    ".txt": extract_text,
    ".text": extract_text,
    ".html": extract_html,
    ".htm": extract_html,
    ".pdf": extract_pdf,
    ".docx": extract_docx,
}

_FORMATS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text", ".html": "html", ".htm": "html", ".pdf": "pdf", ".docx": "docx"}
_PARSER = re.compile(r"^(?P<format>[a-z]+) (?P<version>\d+)\b")


def extractor_of(parser: str | None) -> tuple[str, int] | None:
    """(format, version) of a stored document's parser text ("html 2 (utf-8)"); None for an extractor before versions."""
    match = _PARSER.match(parser or "")
    return (match.group("format"), int(match.group("version"))) if match else None


def read_by_older_extractor(path: str | Path, parser: str | None) -> bool:
    """Whether a document stored with this parser text was read by an older extractor than this release's for its file type."""
    file_format = _FORMATS.get(Path(path).suffix.lower())
    if file_format is None:
        return False
    stored = extractor_of(parser)
    return stored is None or stored[0] != file_format or stored[1] < EXTRACTOR_VERSIONS[file_format]


def sections_of(pages: Sequence[PageText]) -> list[tuple[str, str]]:
    """(heading, text) of each section of extracted pages, in reading order, for a reader checking an extraction; text
    before the first heading comes under "(before the first heading)". A page break inside a section is kept."""
    from llmwiki.text.segment import HEADING, segments

    sections: list[tuple[str, list[str]]] = [("(before the first heading)", [])]
    for page in pages:
        position = 0
        for segment in segments(page.text):
            if segment.kind != HEADING:
                continue
            sections[-1][1].append(page.text[position:segment.start])
            sections.append((page.text[segment.start:segment.end].lstrip("#").strip(), []))
            position = segment.end
        sections[-1][1].append(page.text[position:])
    found = [(heading, "\n\n".join(part.strip() for part in parts if part.strip())) for heading, parts in sections]
    return [(heading, text) for heading, text in found if text or heading != "(before the first heading)"]


def extraction_report(extraction: Extraction, *, common_words: frozenset[str] = frozenset()) -> dict:
    """What an extractor read, for the ingest report: sections, sentences, code blocks and table rows kept, and the page
    furniture left out (characters by reason, with the first examples), so an analyst can trust or report it; and the
    terms the document marks as its subjects (``llmwiki.text.terms``) and its sentences' fingerprints
    (``sentence_key``), which generation compares across the corpus."""
    from llmwiki.text.segment import CODE, HEADING, LINKS, PROSE, ROW, segments
    from llmwiki.text.terms import candidate_terms, heading_key, term_key

    kinds: dict[str, int] = {}
    characters = 0
    sentence_keys: set[str] = set()
    headings: set[str] = set()
    for page in extraction.pages:
        characters += len(page.text)
        for segment in segments(page.text):
            kind = "sentences" if segment.kind in PROSE else {HEADING: "sections", CODE: "code blocks", ROW: "table rows", LINKS: "link lists"}.get(segment.kind)
            if kind:
                kinds[kind] = kinds.get(kind, 0) + 1
            if segment.kind in PROSE:
                sentence_keys.add(sentence_key(page.text[segment.start:segment.end]))
            elif segment.kind == HEADING and (key := heading_key(page.text[segment.start:segment.end])) is not None:
                headings.add(key)
    dropped: dict[str, int] = {}
    for item in extraction.dropped:
        dropped[item.reason] = dropped.get(item.reason, 0) + item.size
    return {
        "extractor": extraction.parser,
        "pages": len(extraction.pages),
        "characters": characters,
        "sections": kinds.get("sections", 0),
        "sentences": kinds.get("sentences", 0),
        "code_blocks": kinds.get("code blocks", 0),
        "table_rows": kinds.get("table rows", 0),
        "link_lists": kinds.get("link lists", 0),
        "dropped": dropped,
        "dropped_examples": [[item.reason, item.text[:200], item.page_number] for item in extraction.dropped[:40]],
        "notes": list(extraction.notes),
        "sentence_keys": sorted(sentence_keys),
        "terms": [term_key(term.name) for term in candidate_terms([page.text for page in extraction.pages], common_words=common_words,
                                                                 leave_out=[extraction.title or ""])[:60]],
        "headings": sorted(headings),
    }


def extract(data: bytes, path: Path, *, folder: Path | None = None) -> Extraction:
    """Extract a file's text by its extension; raises IngestError on bad input. folder: where the file lies, whose
    other HTML pages say what in a page's <title> is the site's name ("SDL: Pandora" is "Pandora")."""
    extractor = EXTRACTORS.get(path.suffix.lower())
    if extractor is None:
        supported = ", ".join(sorted(EXTRACTORS))
        raise UnsupportedFileError(path, f"has an unsupported file type '{path.suffix or '(none)'}'", f"Convert it to one of {supported}")
    if not data.strip():
        raise IngestError(path, "is empty", "Add content to it or remove it from sources/")
    extraction = extractor(data, path)
    if not any(page.text.strip() for page in extraction.pages):
        raise IngestError(path, "has no text after extraction", "Check that the file has readable text, or remove it from sources/")
    if folder is not None and extractor is extract_html and extraction.title:
        extraction = replace(extraction, title=without_site_name(extraction.title, folder_site_affixes(folder)))
    return extraction


_TITLE_TAG = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_SITE_SAMPLE = 200  # pages of a folder whose <title>s are read, in name order


def folder_site_affixes(folder: Path) -> tuple[str, str]:
    """``html.site_affixes`` of the <title>s of a folder's HTML pages (the first 200 by name), read once per folder
    and change."""
    try:
        return _folder_site_affixes(str(folder), folder.stat().st_mtime_ns)
    except OSError:
        return "", ""


@lru_cache(maxsize=64)
def _folder_site_affixes(folder: str, changed: int) -> tuple[str, str]:
    titles = []
    pages = sorted(path for path in Path(folder).iterdir() if EXTRACTORS.get(path.suffix.lower()) is extract_html and path.is_file())
    for path in pages[:_SITE_SAMPLE]:
        try:
            with path.open("rb") as file:
                found = _TITLE_TAG.search(file.read(16384))
        except OSError:  # a page that cannot be read says nothing of the site; the page being read is read all the same
            continue
        if found:
            titles.append(" ".join(html.unescape(found.group(1).decode("utf-8", "replace")).split()))
    return site_affixes(titles)
