"""Terms: what a document is about, as its authors mark it. Pure.

Documentation names its subjects in its own markup: identifiers and commands set as code, terms set in bold or
italics where they are defined, and the titles of short sections. Those are the candidates for concept pages
(``candidate_terms``); plain words that happen to open a sentence ("Changed", "Collecting", "Animal"), the document's
furniture ("Note", "Example", "Chapter"), sections that thank people, and one capitalised word in passing are not;
a name of two words or more counts least (on the Python docs, 6% of capitalised names are index terms).

A candidate is kept when the document mentions it at least twice, and ranked by how it is marked (code, then a
definition, then a heading) and how often it is mentioned. An ordinary English word (in the shipped MiniLM's
vocabulary) set in italics is a definition only where its sentence defines it ("*generator* is ...", "called a
*frame*"): elsewhere italics stress a word ("you *must* close it").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from llmwiki.text import STOPWORDS
from llmwiki.text.segment import HEADING, PROSE, segments

# The furniture of documents: headings and labels that name a part of a document, not what it is about.
FURNITURE = frozenset("""
abstract acknowledgement acknowledgements appendix appendices author authors bibliography changelog chapter chapters
contents contributors copyright credits description details discussion example examples exercise exercises faq figure
footnote footnotes foreword further glossary history index installation introduction license licence note notes notice
options overview part preface prerequisites reference references related remarks requirements section see summary
synopsis syntax table tip tips todo topics usage version warning warnings what why how who when where which
""".split())
_THANKS = re.compile(r"acknowledg|thanks|contributor|author|credit", re.IGNORECASE)
_NUMBERING = re.compile(r"^(?:(?:chapter|section|part|appendix)\s+)?(?:[\dA-Z]{1,3}(?:\.\d+)*\.?)\s+", re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]{1,60})`")
# Markdown's marks: backticks, asterisks and an underscore that opens or closes an emphasised word ("_stress_"); the
# underscores of a name ("__init__", "read_csv", "sys.path_hooks") are the name's.
_MARKS = re.compile(r"[`*]|(?<!\w)_(?=[^\W_])|(?<=[^\W_])_(?!\w)")
_BOLD = re.compile(r"\*\*([^*\n]{2,60})\*\*|__([^_\n]{2,60})__")
_ITALIC = re.compile(r"(?<![*\w])\*([^*\s][^*\n]{0,58}[^*\s]|[^*\s])\*(?![*\w])|(?<![_\w])_([^_\s][^_\n]{0,58}[^_\s])_(?![_\w])")
# Words programmers put in examples for anything at all: an identifier made of them names nothing in the corpus.
PLACEHOLDERS = frozenset("foo bar baz qux quux spam eggs ham xyz abc".split())
_NAME = re.compile(r"(?<=[a-z,;:] )((?:[A-Z][\w'’-]*[a-z][\w'’-]*)(?: (?:of |de |the |for |and )?[A-Z][\w'’-]*[a-z0-9][\w'’-]*){0,3})")
_IDENTIFIER = re.compile(r"^[A-Za-z_@%$.:-][\w.:+-]*(?:\(\))?$")
_COMMAND = re.compile(r"^[a-z][\w-]*(?: [a-z][\w-]*){1,2}$")
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
# How strongly each mark says "this is a subject of the document" (on the Python docs, the share of candidates of each
# kind that the docs' own index lists: code 0.86, a definition 0.56 before the context rule below, a heading 0.37,
# a capitalised name 0.06, which is why a name counts least and a one-word name not at all).
WEIGHTS = {"code": 3.0, "definition": 2.5, "heading": 1.5, "name": 0.5}
# An emphasised ordinary word is a definition only where the sentence defines it: "*generator* is", "called a *frame*".
_DEFINES_AFTER = re.compile(r"^\s*(?:\)|,)?\s*(?:is|are|was|were|means|refers|denotes|stands for|:|—|–|\()", re.IGNORECASE)
# A placeholder in angle brackets ("*<n>*", "*<commit>*": what the reader fills in) or a quoted value ("*'true'*") is
# read as the word inside: "n" is too short to be a term, "true" an ordinary word that is a definition only where
# its sentence defines it, "pathspec" a term.
_UNWRAPPED = re.compile(r"^(?:<([^<>]+)>|'([^']+)'|\"([^\"]+)\"|‘([^‘’]+)’|“([^“”]+)”)$")
_DEFINES_BEFORE = re.compile(r"(?:called|named|known as|termed|term|so-called|a|an)\s*$", re.IGNORECASE)


@dataclass
class Term:
    """A candidate concept: how it is written, how the document marks it, and where it is mentioned."""

    name: str
    kinds: set[str] = field(default_factory=set)
    mentions: int = 0

    @property
    def score(self) -> float:
        return max(WEIGHTS[kind] for kind in self.kinds) + math.log1p(self.mentions)


def term_key(text: str) -> str:
    """How two spellings of one term compare: lower case, letters and digits, a plural 's' off."""
    words = [word.lower() for word in _WORD.findall(text)]
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)


def singular(name: str, words: frozenset[str] = frozenset()) -> str:
    """A term's title in the singular, as indexes list terms ("Classes" -> "Class", "Dictionaries" -> "Dictionary",
    "Static methods" -> "Static method"); a word that is not a regular plural is left as it is.

    words: English words (lower case; ``models.english_words``, the shipped MiniLM's). Where they are given, the
    singular must be one of them, and a word ending in "s" whose singular is none is left as it is
    ("Series", "Canvas", not "Sery", "Canva"; "Aliases" -> "Alias"); a name no list holds ("kwargs") loses its "s"."""
    head, _, last = name.rpartition(" ")
    lowered = last.lower()
    if not last.isalpha() or len(last) <= 3 or lowered.endswith(("ss", "us", "is", "ics")) or not lowered.endswith("s"):
        return name
    if lowered.endswith("ies"):
        cuts = [(3, "y")]
    elif lowered.endswith(("sses", "ches", "shes", "xes", "zes")):
        cuts = [(2, ""), (1, "")]  # "boxes", "classes"
    elif lowered.endswith("ses"):
        cuts = [(1, ""), (2, "")]  # "cases", "phrases"; "aliases", "buses"
    else:
        cuts = [(1, "")]
    forms = [last[: len(last) - cut] + ending for cut, ending in cuts]
    known = [form for form in forms if form.lower() in words]
    if known:
        last = known[0]
    elif words and lowered in words:
        return name  # an English word whose singular is no word: "series", "species", "canvas"
    else:
        last = forms[0]
    return f"{head} {last}" if head else last


def unmarked(text: str) -> str:
    """The text without its Markdown marks of code and emphasis (``_MARKS``): what ``mention_pattern`` reads."""
    return _MARKS.sub("", text)


def mention_pattern(name: str) -> re.Pattern[str]:
    """Where a text (lower case, its marks taken out: ``unmarked``) mentions a term: its name as a whole word, a call's "()" off."""
    return re.compile(rf"(?<![\w]){re.escape(name.lower().rstrip('()'))}(?![\w])")


def mention_counts(names: Iterable[str], text: str) -> dict[str, int]:
    """How often the text (lower case, its marks taken out: ``unmarked``) mentions each name, as ``mention_pattern`` finds it,
    in one pass over the text: each name is looked for only where its rarest word stands, so a manual of a
    thousand pages with tens of thousands of candidate terms is read in seconds, not a scan of it per term."""
    places: dict[str, list[int]] = {}
    for match in _WORD_RUN.finditer(text):
        places.setdefault(match.group(), []).append(match.start())
    counts = {}
    for name in names:
        needle = name.lower().rstrip("()")
        words = [(match.group(), match.start()) for match in _WORD_RUN.finditer(needle)]
        if not words:
            counts[name] = len(mention_pattern(name).findall(text))
            continue
        word, offset = min(words, key=lambda item: len(places.get(item[0], ())))
        count = 0
        for place in places.get(word, ()):
            start, end = place - offset, place - offset + len(needle)
            if (start >= 0 and text.startswith(needle, start) and not (start > 0 and _WORD_CHAR.match(text[start - 1]))
                    and not (end < len(text) and _WORD_CHAR.match(text[end]))):
                count += 1
        counts[name] = count
    return counts


_WORD_RUN = re.compile(r"\w+")
_WORD_CHAR = re.compile(r"\w")


def _clean_heading(text: str) -> str:
    text = text.lstrip("#").strip().strip("*_`").strip()
    text = _NUMBERING.sub("", text)
    return unmarked(text).strip(" .:")


def _acceptable(name: str, kind: str) -> bool:
    words = _WORD.findall(name)
    if not words or len(words) > 6 or len(name) > 60 or len(name) < 2:
        return False
    if all(word.lower() in FURNITURE for word in words):
        return False
    if (kind == "code" or name.startswith("-")) and len(name.strip("()")) < 3:
        return False  # too short to name anything as code, and so is an option of one letter ("-C") however it is marked
    if kind == "code":
        if any(word.lower() in PLACEHOLDERS for word in words):
            return False
        return bool(_IDENTIFIER.match(name) or _COMMAND.match(name)) and any(char.isalpha() for char in name)
    if kind == "name" and len(words) == 1:
        return False  # one capitalised word in passing ("Python's", "APIs", "Changed"); names of two words or more count
    if kind == "heading" and len(words) > 3:
        return False  # a section's title ("Displaying Text in a Window"), not a term
    if words[0].lower() in STOPWORDS or words[-1].lower() in STOPWORDS:
        return False  # "the Python", "Don't", "very": not a term
    return any(char.isalpha() for char in name)


def candidate_terms(texts: Iterable[str], *, common_words: frozenset[str] = frozenset(), leave_out: Iterable[str] = ()) -> list[Term]:
    """The terms a document (its chunks' texts, in order) marks as its subjects, best first; see the module docstring.

    common_words: ordinary English words (lower case); a single one counts only as a heading or a definition.
    leave_out: names not to propose (the document's own title words, say)."""
    found: dict[str, Term] = {}
    prose: list[str] = []
    in_thanks = False
    for text in texts:
        for segment in segments(text):
            piece = text[segment.start:segment.end]
            if segment.kind == HEADING:
                heading = _clean_heading(piece)
                in_thanks = bool(_THANKS.search(heading))
                if not in_thanks:
                    _add(found, heading, "heading", common_words)
                continue
            if segment.kind not in PROSE:
                continue
            prose.append(piece)
            for match in _CODE.finditer(piece):
                _add(found, match.group(1).strip(), "code", common_words)
            outside_code = _CODE.sub(lambda match: " " * len(match.group()), piece)  # "`__init__`" is no bold "init"
            for pattern in (_BOLD, _ITALIC):
                for match in pattern.finditer(outside_code):
                    name = _UNWRAPPED.sub(lambda wrapped: next(filter(None, wrapped.groups())), (match.group(1) or match.group(2)).strip())
                    defined = _DEFINES_AFTER.match(piece[match.end():]) or _DEFINES_BEFORE.search(piece[:match.start()])
                    if defined or len(_WORD.findall(name)) > 1 or name.lower() not in common_words:
                        _add(found, name, "definition", common_words)
            if not in_thanks:
                for match in _NAME.finditer(piece):
                    _add(found, match.group(1), "name", common_words)
    body = " ".join(prose).lower()
    plain = unmarked(body)
    left_out = {term_key(name) for name in leave_out}
    kept = []
    counts = mention_counts([term.name for key, term in found.items() if key and key not in left_out], plain)
    for key, term in found.items():
        if key in left_out or not key:
            continue
        term.mentions = counts[term.name]
        if term.mentions + (1 if "heading" in term.kinds else 0) >= 2:
            kept.append(term)
    return sorted(kept, key=lambda term: (-term.score, term.name))


def heading_key(heading: str) -> str | None:
    """The key (``term_key``) of a heading segment's text where it could name a term, else None: what ``corpus_terms``
    counts across documents to tell a corpus's template ("NAME" atop every manual page) from its subjects."""
    cleaned = _clean_heading(heading)
    return term_key(cleaned) if _acceptable(cleaned, "heading") else None


def _add(found: dict[str, Term], name: str, kind: str, words: frozenset[str] = frozenset()) -> None:
    name = re.sub(r"['’]s$", "", " ".join(name.split()))
    if not _acceptable(name, kind):
        return
    key = term_key(name)
    term = found.setdefault(key, Term(name=name))
    term.kinds.add(kind)
    if kind in ("heading", "definition") and "heading" not in term.kinds - {kind}:
        term.name = singular(name, words)  # as the document writes it where it says what it is, in the singular ("Series" stays)
