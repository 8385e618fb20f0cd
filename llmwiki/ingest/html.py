"""HTML pages become the Markdown a reader sees: the main content, without the site's furniture. Pure.

What a browser shows around an article (navigation bars, breadcrumbs, sidebars, headers and footers, skip
links, "¶" permalinks beside headings) is page furniture, not the document. It is found by what it is, in
the vocabulary every site generator shares, never by one site's class names:

1. The main content is the page's ``<main>``, ``role="main"`` or ``<article>`` landmark (the largest), else
   ``<body>``.
2. Inside it, furniture is dropped: ``<nav>`` and ``<aside>``; ARIA landmarks that are not content
   (navigation, banner, contentinfo, complementary, search, menus); hidden elements; elements whose class or
   id names them chrome in plain words (nav, menu, breadcrumb, sidebar, footer, toc, a header without a heading, or
   whose only heading is the site's name that the page's <title> holds above the page's own heading),
   no more than 40% of the page unless nothing but links (a chapter's table of contents);
   and at the top and bottom of the content, runs of blocks that are nothing but links (a "Prev | Up |
   Next" bar, a language switcher).
3. A link to an anchor of the page whose text is one symbol ("¶", "§", "#") is a permalink and goes, and so does
   a raised note mark ("[2]", a superscript "1", a link in the note-reference role: the note stays); every
   other link keeps its text and loses its target (a reader sees the words, not the address).

The rest becomes Markdown through markdownify: headings ``#``, paragraphs on one line (source line breaks are
spaces), lists, tables as Markdown tables, ``<pre>`` as fenced code, a definition's term on its own line.
What was dropped is returned with its reason, so the ingest report can show it beside the text.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from llmwiki.records import Dropped

_NOT_CONTENT = ("script", "style", "noscript", "template", "svg", "form", "button", "input", "select", "textarea",
                "iframe", "canvas", "object", "embed", "link", "meta", "map")
_CHROME_TAGS = ("nav",)
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar", "tablist"})
# Words that name chrome in the class and id attributes of every kind of site generator.
_CHROME_WORDS = frozenset({"nav", "navbar", "navigation", "navheader", "navfooter", "navpanel", "breadcrumb", "breadcrumbs",
                           "sidebar", "sidenav", "menu", "menubar", "footer", "masthead", "skiplink", "skiplinks",
                           "pager", "pagination", "toolbar", "cookie", "cookies", "banner", "header", "toc"})
_CHROME_PARTS = ("sidebar", "navbar", "breadcrumb", "navheader", "navfooter")
_ATTRIBUTE_WORD = re.compile(r"[a-z]+")
_PERMALINK_TEXT = frozenset({"", "¶", "§", "#", "🔗", "⚓", "∞", "†"})
_NOTE_MARK = re.compile(r"^\[?\s*(?:\d{1,3}|[a-z]|[*†‡])\s*\]?$")
_SKIP_LINK = re.compile(r"^\s*(?:skip|jump)\s+to\b", re.IGNORECASE)
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Elements that hold blocks: the ones a class or id can name chrome (a link or a word inside a paragraph is content).
_CONTAINERS = frozenset({"div", "section", "ul", "ol", "dl", "table", "header", "footer", "aside", "p", "span", "form", "menu"})
_BLOCKS = ("p", "ul", "ol", "dl", "table", "pre", "blockquote", "div", "section", *_HEADINGS)


@dataclass(frozen=True)
class HtmlContent:
    """A page's main content as Markdown, its title, and the furniture left out; ``redirect``: the address a
    ``<meta http-equiv="refresh">`` sends the reader on to, if any."""

    markdown: str
    title: str | None
    dropped: tuple[Dropped, ...]
    redirect: str | None = None


# <meta http-equiv="refresh" content="0; url=../other.html">: the delay, then the address (quoted or not).
_REFRESH = re.compile(r"^\s*\d+(?:\.\d*)?\s*[;,]\s*(?:url\s*=\s*)?['\"]?([^'\"\s][^'\"]*)", re.IGNORECASE)


def _redirect(soup) -> str | None:
    """Where the page's refresh sends the reader; None for a page without one, or one that only reloads itself."""
    for meta in soup.find_all("meta"):
        if str(meta.get("http-equiv", "")).strip().lower() == "refresh" and (match := _REFRESH.match(str(meta.get("content", "")))):
            return match.group(1).strip()
    return None


def _text(element) -> str:
    return " ".join(element.get_text(" ").split())


def _chrome_words(element) -> set[str]:
    words = set()
    for attribute in ("class", "id"):
        value = element.get(attribute)
        values = value if isinstance(value, list) else [value] if value else []
        for item in values:
            lowered = item.lower()
            words.update(_ATTRIBUTE_WORD.findall(lowered))
            words.update(part for part in _CHROME_PARTS if part in lowered)
    return words & _CHROME_WORDS


def _is_hidden(element) -> bool:
    style = (element.get("style") or "").replace(" ", "").lower()
    return element.has_attr("hidden") or element.get("aria-hidden") == "true" or "display:none" in style or "visibility:hidden" in style


def _main_root(soup):
    body = soup.body or soup
    candidates = soup.find_all("main") + soup.find_all(attrs={"role": "main"}) + soup.find_all("article")
    if not candidates:
        return body
    best = max(candidates, key=lambda element: len(_text(element)))
    return best if len(_text(best)) >= 0.2 * len(_text(body)) else body


def _drop(element, reason: str, dropped: list[Dropped]) -> None:
    text = _text(element)
    if text:
        dropped.append(Dropped(reason=reason, text=text[:300]))
    element.decompose()


def _remove_chrome(root, dropped: list[Dropped]) -> None:
    root_length = max(len(_text(root)), 1)
    for element in list(root.find_all(True)):
        if element.decomposed or element.parent is None:  # inside an element dropped before
            continue
        reason = None
        if _is_hidden(element):
            reason = "hidden"
        elif element.name in _CHROME_TAGS:
            reason = "navigation"
        elif (element.get("role") or "").lower() in _CHROME_ROLES:
            reason = "navigation"
        elif element.name in _CONTAINERS and not element.find_parent(_HEADINGS):
            words = _chrome_words(element)
            if words == {"header"} and element.find(_HEADINGS):
                words = set()  # a header that holds the page's heading is content
            # Chrome by name is at most a part of the page, unless it is nothing but links: a chapter's table of
            # contents (class "toc") may be most of a short chapter page, and is navigation all the same.
            if words and element.name not in ("body", "html") and (len(_text(element)) <= 0.4 * root_length or _is_link_block(element)):
                reason = "navigation"
        if element.name in ("header", "footer") and reason is None and element.parent is not None:
            if element.name == "footer" or not element.find(_HEADINGS):
                reason = "navigation"
        if reason:
            _drop(element, reason, dropped)


def _remove_permalinks(root, dropped: list[Dropped]) -> None:
    for link in list(root.find_all("a")):
        if link.decomposed or link.parent is None:
            continue
        href = link.get("href") or ""
        text = link.get_text().strip()
        if href.startswith("#") and (text in _PERMALINK_TEXT or (len(text) == 1 and not text.isalnum())):
            dropped.append(Dropped(reason="permalink", text=text or href))
            link.decompose()
        elif href.startswith("#") and _SKIP_LINK.match(text):
            _drop(link, "skip link", dropped)
        elif href.startswith("#") and _is_note_mark(link, text):
            dropped.append(Dropped(reason="footnote mark", text=text))
            raised = link.find_parent("sup")
            mark = raised if raised is not None and _text(raised) == _text(link) else link  # the <sup> around it goes too
            before, after = mark.previous_sibling, mark.next_sibling
            if isinstance(before, str) and isinstance(after, str) and before[-1:].isspace() and after[:1].isspace():
                after.replace_with(after.lstrip())  # "keys [2] are" reads "keys are", not "keys  are"
            mark.decompose()


def _is_note_mark(link, text: str) -> bool:
    """A link to a note on the same page that a reader sees as a raised mark, not words: "[2]", a superscript "1",
    or whatever a link in the note-reference role holds. The note itself stays where the page puts it."""
    if not _NOTE_MARK.match(text):
        return False
    raised = link.find("sup") is not None or link.find_parent("sup") is not None
    return raised or link.get("role") == "doc-noteref" or text.startswith("[")


def _link_share(element) -> tuple[float, int]:
    """(share of the element's text inside links, words outside links)."""
    text = _text(element)
    if not text:
        return 0.0, 0
    linked = sum(len(_text(link)) for link in element.find_all("a"))
    return linked / len(text), len(re.findall(r"[^\W\d_]{2,}", text)) - sum(len(re.findall(r"[^\W\d_]{2,}", _text(link))) for link in element.find_all("a"))


def _is_link_block(element) -> bool:
    """Nothing but links: at least three, holding 80% of the text (a contents list and its "Table of Contents"). Not
    ``_is_link_bar``, which allows three words outside its links: a contents list has more (aptitude's manual keeps
    its entries' numbers and a "List of Figures" beside the links)."""
    return len(element.find_all("a")) >= 3 and _link_share(element)[0] >= 0.8


def _leaf_blocks(root) -> list:
    """The block elements of root that hold no other block element, in document order."""
    return [element for element in root.find_all(_BLOCKS) if element.find(_BLOCKS) is None and _text(element)]


def _is_link_bar(element) -> bool:
    if element.name in _HEADINGS or element.name == "pre":
        return False
    share, words_outside = _link_share(element)
    return bool(element.find("a")) and share >= 0.6 and words_outside <= 3


def _remove_edge_link_bars(root, dropped: list[Dropped]) -> None:
    """Blocks of nothing but links before the first and after the last block of content."""
    blocks = _leaf_blocks(root)
    for ordered in (blocks, list(reversed(blocks))):
        for element in ordered:
            if element.decomposed or element.parent is None or element.name in _HEADINGS:
                continue
            if not _is_link_bar(element):
                break
            _drop(element, "navigation", dropped)


def _prepare_definitions(root, soup) -> None:
    """A definition's term becomes a bold line of its own, its description plain paragraphs."""
    for term in root.find_all("dt"):
        strong = soup.new_tag("p")
        bold = soup.new_tag("strong")
        bold.string = _text(term)
        strong.append(bold)
        term.replace_with(strong)
    for description in root.find_all("dd"):
        description.name = "div"
    for definitions in root.find_all("dl"):
        definitions.name = "div"


def _title(soup, root) -> tuple[str | None, list]:
    """The page's <title>, or the heading it names beside the site's name ("2. Using the Interpreter — Python 3.11
    documentation" becomes "2. Using the Interpreter"). Of the headings the <title> holds, outside navigation, the
    last one before the content's first paragraph of prose is the title: a site's name set as a heading in a bar or
    header above each page ("The Rust Book", "Node.js documentation") comes before the page's own heading, which the
    <title> holds too ("Understanding Ownership - The Rust Book", "Path | Node.js Documentation"). Where none stands
    before the prose, a heading the <title> holds whole comes first: the main content's <h1>s, the last first, its
    first heading of any level, then the page's <h1>s; a heading that holds the <title> and more after the prose
    begins names a section ("4. ALTER TABLE ADD COLUMN" on the page titled "ALTER TABLE"). Also returned: the
    headings the <title> holds that stand above the title's, the site's name."""
    title = soup.find("title")
    title_text = _text(title) if title is not None else ""
    if not title_text:  # no <title> to say which: the first heading, in the page's order
        first = root.find("h1") or soup.find("h1") or root.find(_HEADINGS)
        return ((_text(first) or None) if first is not None else None), []
    named = _comparable(title_text)
    order: dict[int, int] = {}
    prose_at = None
    for position, element in enumerate(soup.find_all([*_HEADINGS, "p"])):
        if element.name == "p" and prose_at is not None or element.find_parent(_CHROME_TAGS) is not None:
            continue
        if element.name != "p":
            order[id(element)] = position
        elif len(_text(element).split()) >= _PROSE_WORDS and _inside(element, root):
            prose_at = position
    candidates = [*reversed(root.find_all("h1", limit=4)), root.find(_HEADINGS), *reversed(soup.find_all("h1", limit=4))]
    if prose_at is not None:
        candidates += [heading for heading in root.find_all(_HEADINGS) if order.get(id(heading), prose_at) < prose_at]
    held: dict[str, tuple[int, str, object]] = {}  # text -> (its place in the page, its comparable words, the heading)
    for heading in candidates:
        if heading is None or id(heading) not in order:
            continue
        text = _text(heading)
        key = _comparable(text)
        if text and key and (key in named or named in key):
            held.setdefault(text, (order[id(heading)], key, heading))
    before = sorted((text for text, (position, _, _) in held.items() if prose_at is not None and position < prose_at),
                    key=lambda text: held[text][0])
    # A heading that says again part of one above it is that one's first section ("2.1 Character Set" under "2
    # Character Set and Source File Encoding"), not the page's title.
    before = [text for index, text in enumerate(before) if not any(held[text][1] in held[above][1] for above in before[:index])]
    if before:
        return before[-1], [held[text][2] for text in before[:-1]]
    whole = [text for text, (_, key, _) in held.items() if key in named or prose_at is None]
    return (whole[0] if whole else title_text), []


def _inside(element, ancestor) -> bool:
    """Whether the element lies inside that one (by identity: a tag equal in its markup is another element)."""
    return any(parent is ancestor for parent in element.parents)


# A paragraph of this many words is the content's prose, not a heading's caption or a bar's label.
_PROSE_WORDS = 8


def _comparable(text: str) -> str:
    return re.sub(r"^[\d.\s]+", "", " ".join(re.findall(r"\w+", text.lower())))


# Where a <title> parts the page's name from the site's: " | ", " — ", " - ", " · ", ": ", or before a " (...)".
_TITLE_SEPARATOR = re.compile(r"\s+[|·•—–-]{1,2}\s+|:\s+|\s+(?=\()")
# A site's name is what this many of a folder's pages, and half of them, write in their <title>s.
_SITE_PAGES = 3


def site_affixes(titles: Sequence[str]) -> tuple[str, str]:
    """The site's name as the <title>s of one folder's pages write it around each page's own: the longest opening
    up to a separator ("SDL: ", "Gtk – 4.0: ", "GNU Aspell 0.60.8: ") and the longest ending from one ("- Rust",
    " (Apache Commons Lang 3.12.0 API)") that at least half of the titles, and three, share. ("", "") where none
    does: one page alone cannot tell its name from its site's."""
    openings: Counter[str] = Counter()
    endings: Counter[str] = Counter()
    for title in titles:
        marks = list(_TITLE_SEPARATOR.finditer(title))
        openings.update({title[:mark.end()] for mark in marks if title[mark.end():].strip()})
        endings.update({title[mark.start():] for mark in marks if title[:mark.start()].strip()})
    need = max(_SITE_PAGES, len(titles) / 2)
    opening = max((text for text, count in openings.items() if count >= need), key=len, default="")
    ending = max((text for text, count in endings.items() if count >= need), key=len, default="")
    return opening, ending


def without_site_name(title: str, affixes: tuple[str, str]) -> str:
    """The page's own name: the title without the site's opening and ending (a title that is nothing else stays)."""
    opening, ending = affixes
    if opening and title.startswith(opening) and title[len(opening):].strip():
        title = title[len(opening):]
    if ending and title.endswith(ending) and title[:-len(ending)].strip():
        title = title[:-len(ending)]
    return title.strip()


def html_content(text: str) -> HtmlContent:
    """The main content of an HTML page as Markdown, with its title and what was dropped."""
    soup = _parse(text)
    redirect = _redirect(soup)
    for element in soup(list(_NOT_CONTENT)):
        element.decompose()
    dropped: list[Dropped] = []
    root = _main_root(soup)
    body = soup.body or soup
    if root is not body:
        outside = len(_text(body)) - len(_text(root))
        if outside > 0:
            dropped.append(Dropped(reason="outside the main content", text=_text(body)[:300], characters=outside))
    _flatten_deep_nesting(root)
    _remove_permalinks(root, dropped)
    title, site_names = _title(soup, root)
    for heading in site_names:  # the site's name as a page header's heading: the header is furniture, as one without a heading is
        if heading.find_parent("header") is not None and _inside(heading, root):
            _drop(heading, "the site's name", dropped)
    _remove_chrome(root, dropped)
    _remove_edge_link_bars(root, dropped)
    _prepare_definitions(root, soup)
    markdown = _markdown(root)
    return HtmlContent(markdown=markdown, title=title, dropped=tuple(dropped), redirect=redirect)


def _parse(text: str):
    from bs4 import BeautifulSoup

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # XHTML read as HTML is what a browser does too
        return BeautifulSoup(text, "lxml")


def fragment_markdown(text: str) -> str:
    """A block of HTML written inside a Markdown file (a README's centred logo and heading, a table, a wrapper
    `<div>`) as the Markdown a reader sees: its text, headings, lists and tables; images, link targets, comments and
    tags alone are nothing."""
    from bs4 import Comment

    soup = _parse(text)
    for element in soup(list(_NOT_CONTENT)):
        element.decompose()
    for comment in soup.find_all(string=lambda string: isinstance(string, Comment)):
        comment.extract()
    return _markdown(soup.body or soup).strip()


def _markdown(element) -> str:
    """An element as Markdown: ATX headings, "-" bullets, paragraphs on one line, links and images as their text."""
    markdown = _converter_class()(
        heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False, escape_misc=False,
        wrap=True, wrap_width=None, strip=["a", "img"],
    ).convert_soup(element)
    return re.sub(r"[ \t]+\n", "\n", markdown)


@cache
def _converter_class():
    """markdownify's converter, with headings kept on one line (imported on first use: the CLI starts faster)."""
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        def convert_hN(self, n, el, text, parent_tags):  # noqa: N802 (markdownify's name)
            return super().convert_hN(n, el, " ".join(text.split()), parent_tags)

        def convert_blockquote(self, el, text, parent_tags):
            # Documentation sets indented text in <blockquote> (definitions, notes): its paragraphs, without "> ".
            return "\n\n" + (text or "").strip() + "\n\n" if "_inline" not in parent_tags else " " + (text or "").strip() + " "

    return Converter


_MAX_HTML_DEPTH = 100
_KEPT_WHEN_DEEP = frozenset({"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table", "tr", "td", "th", "br"})


def _flatten_deep_nesting(root) -> None:
    """Unwrap the container tags nested deeper than _MAX_HTML_DEPTH (their text stays where it was).

    The Markdown converter recurses once per level; a real page can nest thousands of
    <div>s, which would end in RecursionError. Depths are found without recursion.
    """
    depth = {id(root): 0}
    deep = []
    for element in root.descendants:
        if getattr(element, "name", None) is None:
            continue
        level = depth.get(id(element.parent), 0) + 1
        depth[id(element)] = level
        if level > _MAX_HTML_DEPTH and element.name not in _KEPT_WHEN_DEEP:
            deep.append(element)
    for element in deep:
        element.unwrap()
