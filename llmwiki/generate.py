"""Wiki generation: each source becomes a summary page; its ideas merge into concept pages.

Drafting (pure, per source):
- extractive (the default backend): the summary is the source's most central
  sentences in reading order (TF-IDF cosine centrality with a small lead
  bias), each quoted verbatim with its chunk citation; concepts are the
  capitalised phrases the source repeats, each with the sentences that
  mention it. Every sentence written is a quote, so nothing is invented.
- a generating backend: one call with ``prompts.SOURCE_PAGES`` returning JSON;
  a reply that is not valid JSON, is empty, or cites a passage that was not
  given is not used: the extractive draft is, and the log says why.

Merging: a concept page holds one section per source, marked
``<!-- source: PATH -->``. A source's draft replaces only its own section;
other sources' sections and any text above the first section (hand-written
notes) are kept. A source that no longer proposes a concept has its section
removed, and a page left with no section is deleted; the log lists both.

This module reads stored chunks and the current text of the wiki pages it is
given, and returns page texts (``compose_pages``); it writes nothing. Writing
them (files, store, commit, snapshot) is ``llmwiki.publish.wiki.publish``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ValidationError

from llmwiki import prompts
from llmwiki.backends import Backend, BackendError
from llmwiki.text.segment import HEADING, is_whole_sentence, segments
from llmwiki.text.terms import candidate_terms, mention_pattern, singular, term_key, unmarked
from llmwiki.config import WikiSettings
from llmwiki.errors import LlmwikiError
from llmwiki.failpoints import failpoint
from llmwiki.pages import (
    CITATION,
    CONCEPTS,
    SUMMARIES,
    cited_chunk_ids,
    citation_definitions,
    render_page,
    slugify,
    source_entries,
    split_frontmatter,
    strip_citation_definitions,
)
from llmwiki.records import Chunk, Document, extractor_tag
from llmwiki.store import Store
from llmwiki.text import DEMONSTRATIVES, MONTHS, POSSESSIVE_PRONOUNS, SUBJECT_PRONOUNS, WEEKDAYS, sentence_key
from llmwiki.tracing import NULL_TRACER, Tracer
_SECTION_MARK = re.compile(r"^<!-- source: (.+?) -->[ \t]*$", re.MULTILINE)
_WORD = re.compile(r"[^\W\d_]{2,}")
CAPITALISED = re.compile(r"\b(?:[A-Z][\w'’-]*[a-z][\w'’-]*)(?:\s+(?:(?:de|of|the|von|van|da|di|la|le|du)\s+)?[A-Z][\w'’-]*[a-z][\w'’-]*){0,3}")
NOT_CONCEPTS = frozenset(
    word.title() for word in (*DEMONSTRATIVES, *SUBJECT_PRONOUNS, *POSSESSIVE_PRONOUNS, *MONTHS, *WEEKDAYS)
) | frozenset(
    "The There Some Many Most Other Such When While After Before During "
    "Since However Although Though In On At For From With Without By As An A We You I Also Unlike Like "
    "See Image Related Wikipedia Accessed Retrieved External References Notes URL "
    # nationality and language words name no page of their own
    "English French Italian German Swedish Spanish Austrian American British European Latin Greek Russian Dutch "
    "Chinese Japanese Australian Canadian Indian African Asian Roman Christian Catholic Protestant Serbian Croatian".split()
)


class GenerationError(LlmwikiError):
    """A model reply could not be used for a page."""


@dataclass(frozen=True)
class Sentence:
    text: str
    chunk_id: int
    position: int
    opens_section: bool = False  # the first prose sentence under a heading: what the section is about
    legal: bool = False  # licence or copyright text, in a section of its own or by its words


# Licence and copyright text: what no summary or concept quotes (the words of legal notices in English).
LEGAL = re.compile(r"\b(?:permission is (?:hereby )?granted|copyright|all rights reserved|licen[cs]e[ds]?|licensing|warrant(?:y|ies)|"
                   r"liabilit(?:y|ies)|redistribut\w*|trademarks?|terms and conditions)\b", re.IGNORECASE)

@dataclass(frozen=True)
class ConceptDraft:
    name: str
    text: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceDraft:
    description: str
    summary: str
    concepts: tuple[ConceptDraft, ...]
    generated_by: str
    fallback_reason: str | None = None


@dataclass
class GenerationReport:
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    commit: str | None = None
    seconds_per_source: dict[str, float] = field(default_factory=dict)

    @property
    def pages(self) -> list[str]:
        """The summary and concept pages written (index, overview and log left out)."""
        return [path for path in self.written if path.startswith((f"{SUMMARIES}/", f"{CONCEPTS}/"))]


# -- extractive drafting (pure) ------------------------------------------------------


def source_sentences(chunks: Sequence[Chunk]) -> list[Sentence]:
    """Each prose sentence of a source once, in reading order, with the first chunk that holds it, whether it opens a
    section, and whether it is legal text (by its words, or under a heading such as "License" or "Copyright")."""
    seen: set[tuple[int, int]] = set()
    sentences = []
    legal_section = False
    for chunk in chunks:
        after_heading = chunk.page_number == 1 and chunk.start == 0  # the document's first sentence opens it
        for segment in segments(chunk.text):
            if segment.kind == HEADING:
                after_heading = True
                legal_section = bool(LEGAL.search(chunk.text[segment.start:segment.end]))
                continue
            if not segment.is_prose:
                continue
            start, end = segment.start, segment.end
            key = (chunk.page_number, chunk.start + start)
            if key in seen:
                after_heading = False
                continue
            seen.add(key)
            text = " ".join(chunk.text[start:end].split())
            sentences.append(Sentence(text=text, chunk_id=chunk.id, position=len(sentences), opens_section=after_heading,
                                      legal=legal_section or bool(LEGAL.search(text))))
            after_heading = False
    return sentences


_CODE_SPAN = re.compile(r"(`[^`\n]+`)")
# An inline link or image of Markdown, read as its text: "a [Haskell](https://haskell.org) library".
_INLINE_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"\n]*\")?\)")


def _is_prose(text: str) -> bool:
    # a note's sentence that links a word is prose, an address alone is not; code is not looked into ("`.*[.](?!bat$)`")
    text = "".join(piece if index % 2 else _INLINE_LINK.sub(r"\1", piece) for index, piece in enumerate(_CODE_SPAN.split(text)))
    words = text.split()
    if not 6 <= len(words) <= 60 or not is_whole_sentence(text) or text.endswith(":"):
        return False
    if text.startswith(("* ", "-", "#", "|", "[", "!", ":")) or "http" in text or "URL accessed" in text or "Retrieved" in text:
        return False
    letters = sum(char.isalpha() for char in text)
    return letters / max(len(text), 1) > 0.6


def _terms(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def rank_sentences(sentences: Sequence[Sentence]) -> list[float]:
    """Centrality of each sentence: mean TF-IDF cosine to the others, with a small lead bias.

    The mean cosine of a row to the others is its dot product with the sum of
    all (normalised) rows, less its own: the centroid form, computed over the
    sparse entries only, so memory and time grow with the text (a 10 MB
    source has 130,000 sentences: an n x n matrix would need 127 GiB).
    """
    if not sentences:
        return []
    bags = [Counter(_terms(sentence.text)) for sentence in sentences]
    vocabulary: dict[str, int] = {}
    rows, columns, counts = [], [], []
    for row, bag in enumerate(bags):
        for term, count in bag.items():
            rows.append(row)
            columns.append(vocabulary.setdefault(term, len(vocabulary)))
            counts.append(count)
    if not vocabulary:
        return [0.0] * len(sentences)
    rows_array, columns_array = np.array(rows, dtype=np.int64), np.array(columns, dtype=np.int64)
    document_frequency = np.bincount(columns_array, minlength=len(vocabulary))
    idf = np.log((1 + len(bags)) / (1 + document_frequency)) + 1
    values = (1 + np.log(np.array(counts, dtype=np.float64))) * idf[columns_array]
    norms = np.sqrt(np.bincount(rows_array, weights=values ** 2, minlength=len(bags)))
    values = values / np.where(norms == 0, 1, norms)[rows_array]
    column_sums = np.bincount(columns_array, weights=values, minlength=len(vocabulary))
    to_all = np.bincount(rows_array, weights=values * column_sums[columns_array], minlength=len(bags))
    to_self = np.bincount(rows_array, weights=values ** 2, minlength=len(bags))
    centrality = (to_all - to_self) / max(len(sentences) - 1, 1)
    lead = np.array([1.0 / math.sqrt(1 + sentence.position / 5) for sentence in sentences])
    return list(centrality * (0.75 + 0.25 * lead))


def _cite(sentence: Sentence) -> str:
    return f"{sentence.text} [c{sentence.chunk_id}]"


def extractive_draft(document: Document, chunks: Sequence[Chunk], *, summary_sentences: int = 8, max_concepts: int = 5,
                     shared: Callable[[str], bool] | None = None, repeated: Callable[[str], bool] | None = None) -> SourceDraft:
    """A summary and concept sections made only of the source's own sentences.

    shared(term key): whether other documents of the corpus mark the term as a subject too (``corpus_terms``); a term
    only this document marks gets no concept page. None: every term of the document may (a corpus of one or two).
    repeated(sentence): whether many documents of the corpus repeat the sentence word for word (``repeated_sentences``):
    such a sentence says nothing of this document and is quoted by no page, unless the document has next to nothing
    of its own (five sentences or more, four in five repeated, fewer than two not): a copy of another document,
    another version of a manual, keeps them. An API page that inherits a hundred methods' descriptions keeps its own
    two. A sentence the document itself says again (overloads that share a description) is quoted once."""
    sentences = [sentence for sentence in source_sentences(chunks) if _is_prose(sentence.text) and not sentence.legal]
    if repeated is not None:
        flags = [repeated(sentence.text) for sentence in sentences]
        own = [sentence for sentence, flag in zip(sentences, flags) if not flag]
        if not (len(sentences) >= 5 and sum(flags) >= 0.8 * len(sentences) and len(own) < MIN_OWN_SENTENCES):
            sentences = own
    first: dict[str, Sentence] = {}
    for sentence in sentences:
        first.setdefault(sentence_key(sentence.text), sentence)
    sentences = list(first.values())
    scores = rank_sentences(sentences)
    # The first prose sentence usually says what the document is; it always leads. The others are the most central of the
    # sentences that open a section (each says what its section is about), or of all sentences in a document with few sections.
    openers = [index for index in range(1, len(sentences)) if sentences[index].opens_section]
    pool = openers if len(openers) >= summary_sentences - 1 else range(1, len(sentences))
    best = ([0] + sorted(pool, key=lambda index: (-scores[index], index))[: summary_sentences - 1]) if sentences else []
    chosen = [sentences[index] for index in sorted(best)]
    summary = " ".join(_cite(sentence) for sentence in chosen)
    description = chosen[0].text if chosen else (document.title or document.path)
    concepts = []
    from llmwiki.models import english_words

    terms = candidate_terms([chunk.text for chunk in chunks], common_words=english_words(), leave_out=[document.title or ""])
    taken: list[str] = []
    quoted: set[int] = set()  # each sentence is quoted by one concept at most (the summary may quote it too)
    plain = [unmarked(sentence.text.lower()) for sentence in sentences]
    for term in terms:
        if any(term_key(term.name) == term_key(other) for other in taken) or (shared is not None and not shared(term_key(term.name))):
            continue  # a term that no other document takes up has no page of its own
        pattern = mention_pattern(term.name)
        mentions = [index for index, text in enumerate(plain) if index not in quoted and pattern.search(text)]
        if not mentions:
            continue  # nor one that no whole sentence explains
        taken.append(term.name)
        top = sorted(sorted(mentions, key=lambda index: (-scores[index], index))[:3])
        quoted.update(top)
        concepts.append(ConceptDraft(name=term.name, text=" ".join(_cite(sentences[index]) for index in top)))
        if len(concepts) == max_concepts:
            break
    return SourceDraft(description=description, summary=summary, concepts=tuple(concepts), generated_by="extractive")


# -- drafting with a model -------------------------------------------------------------


class _ConceptReply(BaseModel):
    name: str
    aliases: list[str] = []
    text: str


class _SourceReply(BaseModel):
    description: str
    summary: str
    concepts: list[_ConceptReply] = []


def _json_object(text: str) -> dict:
    cleaned = text.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", cleaned, re.DOTALL)
    if fenced:
        cleaned = fenced.group(1)
    try:
        value = json.loads(cleaned)
    except json.JSONDecodeError as err:
        raise GenerationError(f"the reply is not valid JSON ({err.msg} at character {err.pos})") from err
    if not isinstance(value, dict):
        raise GenerationError("the reply is JSON but not an object")
    return value


def model_draft(document: Document, chunks: Sequence[Chunk], backend: Backend, *, max_concepts: int, tracer: Tracer = NULL_TRACER) -> SourceDraft:
    """A draft written by a model; raises GenerationError when its reply cannot be used."""
    passages = "\n\n".join(f"[c{chunk.id}] {' '.join(chunk.text.split())}" for chunk in chunks)
    prompt = prompts.SOURCE_PAGES.format(title=document.title or document.path, path=document.path, passages=passages, max_concepts=max_concepts)
    with tracer.span("generate.model_call", model=backend.model, source=document.path) as span:
        completion = backend.complete([{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": prompt}], json_mode=True)
        span.set(prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
                 prompt=tracer.payload(prompt), reply=tracer.payload(completion.text))
    try:
        reply = _SourceReply.model_validate(_json_object(completion.text))
    except ValidationError as err:
        raise GenerationError(f"the reply does not have the requested fields ({err.error_count()} problems: {err.errors()[0]['msg']})") from err
    if not reply.summary.strip():
        raise GenerationError("the reply has an empty summary")
    given = {chunk.id for chunk in chunks}
    texts = [reply.summary, *(concept.text for concept in reply.concepts)]
    cited = {int(match.group(1)) for text in texts for match in CITATION.finditer(text)}
    if not cited:
        raise GenerationError("the reply cites no passage")
    unknown = sorted(cited - given)
    if unknown:
        raise GenerationError(f"the reply cites passages that were not given: {', '.join(f'c{chunk_id}' for chunk_id in unknown[:5])}")
    concepts = tuple(
        ConceptDraft(name=concept.name.strip(), text=concept.text.strip(), aliases=tuple(alias.strip() for alias in concept.aliases if alias.strip()))
        for concept in reply.concepts[:max_concepts]
        if concept.name.strip() and concept.text.strip()
    )
    return SourceDraft(description=" ".join(reply.description.split())[:200], summary=reply.summary.strip(), concepts=concepts, generated_by=f"{backend.name}:{completion.model}")


# The share of a corpus's documents that carry a heading for it to be the corpus's template. The Python docs, gnuplot
# and the other tools' manuals: no heading on more than 5% of their documents; git's manual pages: "NAME" and "GIT"
# on 93%, "CONFIGURATION" on 27%; gtk-doc references: docs/benchmarks.md.
TEMPLATE_SHARE = 0.2


def corpus_terms(reports: Mapping[str, dict]) -> Callable[[str], bool] | None:
    """Whether a term is a subject of the corpus: in a corpus of ten documents or more, one that three of them mark (a
    heading, a definition, code, a name). On the Python docs, 85% of the candidates three documents mark are the docs'
    own index terms, 81% of those two mark, against 36% of those one document marks (the ten best of each document's
    candidates; bench/realdocs.py prints the concept pages' share). None for a smaller corpus: a handful of documents
    need not share their subjects (seven articles on seven scientists), and each keeps its own.

    Not a heading that ``TEMPLATE_SHARE`` of the documents carry: that is the corpus's template, the sections every
    page of its kind has (a manual page's "NAME", an API reference's "Properties", "Signals" and "Returns"), not what
    it is about. A document read before its extraction report counted headings counts none."""
    if len(reports) < 10:
        return None
    documents: Counter[str] = Counter()
    headings: Counter[str] = Counter()
    for report in reports.values():
        documents.update(set(report.get("terms", [])))
        headings.update(set(report.get("headings", [])))
    template = {key for key, count in headings.items() if count >= TEMPLATE_SHARE * len(reports)}
    return lambda key: documents[key] >= 3 and key not in template


# A sentence that this many documents repeat word for word is the corpus's furniture (a generator's "Go to the
# documentation of this file.", a notice on every page), whatever a document's layout: the measure of boilerplate
# in the realdocs scorer (a sentence found on five pages or more).
REPEATED_IN = 5
# A document with fewer sentences of its own than this, and most of the rest repeated, is a copy of another.
MIN_OWN_SENTENCES = 2


def repeated_sentences(reports: Mapping[str, dict]) -> Callable[[str], bool]:
    """Whether a sentence (by ``sentence_key``) is one that ``REPEATED_IN`` documents or more of the corpus repeat."""
    documents: Counter[str] = Counter()
    for report in reports.values():
        documents.update(report.get("sentence_keys", ()))
    repeated = {key for key, count in documents.items() if count >= REPEATED_IN}
    return lambda text: bool(repeated) and sentence_key(text) in repeated


def draft_for(document: Document, chunks: Sequence[Chunk], backend: Backend, *, summary_sentences: int, max_concepts: int, tracer: Tracer = NULL_TRACER,
              shared: Callable[[str], bool] | None = None, repeated: Callable[[str], bool] | None = None) -> SourceDraft:
    """The model's draft when it is usable, else the extractive one with the reason."""
    if not backend.generates:
        return extractive_draft(document, chunks, summary_sentences=summary_sentences, max_concepts=max_concepts, shared=shared, repeated=repeated)
    try:
        return model_draft(document, chunks, backend, max_concepts=max_concepts, tracer=tracer)
    except (GenerationError, BackendError) as err:
        draft = extractive_draft(document, chunks, summary_sentences=summary_sentences, max_concepts=max_concepts, shared=shared, repeated=repeated)
        return SourceDraft(draft.description, draft.summary, draft.concepts, draft.generated_by, fallback_reason=str(err))


# -- page bodies -------------------------------------------------------------------


def split_sections(body: str) -> tuple[str, dict[str, str]]:
    """(text before the first source section, {source path: section text})."""
    body = strip_citation_definitions(body)
    marks = list(_SECTION_MARK.finditer(body))
    if not marks:
        return body.strip(), {}
    preamble = body[: marks[0].start()].strip()
    sections = {}
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(body)
        sections[mark.group(1).strip()] = body[mark.end():end].strip()
    return preamble, sections


def join_sections(preamble: str, sections: dict[str, str]) -> str:
    parts = [preamble.strip()] if preamble.strip() else []
    for source_path in sorted(sections):
        parts.append(f"<!-- source: {source_path} -->\n{sections[source_path].strip()}")
    return "\n\n".join(parts)


def _now() -> str:
    return datetime.now().isoformat(timespec="seconds")


def summary_path_for(document: Document, taken: dict[str, str]) -> str:
    """wiki/summaries/<slug>.md for a source, never one another source holds (taken: slug -> its source): the file's
    stem; when that is taken, its folders; then its extension too ("volta-html" beside "volta-txt"); and when every
    spelling is taken (names with no ASCII letters: "Ω.md" and "日.md" both slug to "page"), the stem with a hash of
    the path. Every step depends on the path alone, so a rerun gives each source the page it had."""
    owned = sorted(slug for slug, owner in taken.items() if owner == document.path)
    if owned:  # the page it has keeps its name, whatever became free since
        return f"{SUMMARIES}/{owned[0]}.md"
    path = Path(document.path)
    relative = document.path.removeprefix("sources/")
    for slug in (slugify(path.stem), slugify(str(Path(relative).with_suffix(""))), slugify(relative)):
        if taken.get(slug) in (None, document.path):
            return f"{SUMMARIES}/{slug}.md"
    digest = hashlib.sha256(document.path.encode("utf-8")).hexdigest()[:10]
    return f"{SUMMARIES}/{slugify(path.stem, max_length=60)}-{digest}.md"


def _existing_summaries(existing: Mapping[str, str]) -> dict[str, str]:
    """slug -> source path, for the summary pages there are."""
    owners = {}
    for path, text in sorted(existing.items()):
        if path.startswith(f"{SUMMARIES}/"):
            sources = source_entries(split_frontmatter(text)[0])
            if sources:
                owners[Path(path).stem] = sources[0]["path"]
    return owners


# -- aliases -------------------------------------------------------------------------


def load_aliases(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(aliases, rejected) as generation last left them (``.llmwiki/aliases.generated.toml``)."""
    if not path.exists():
        return {}, {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return dict(data.get("aliases", {})), dict(data.get("rejected", {}))


def write_aliases(path: Path, aliases: dict[str, str], rejected: dict[str, str]) -> None:
    def quoted(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)

    lines = ["# Generated by llmwiki: alias -> concept page slug. Hand-written [wiki.aliases] in wiki_config.toml win.", "[aliases]"]
    lines += [f"{quoted(alias)} = {quoted(slug)}" for alias, slug in sorted(aliases.items())]
    lines += ["", "# Proposed aliases that were refused; they are never proposed again.", "[rejected]"]
    lines += [f"{quoted(alias)} = {quoted(reason)}" for alias, reason in sorted(rejected.items())]
    temporary = path.with_suffix(".tmp")
    temporary.parent.mkdir(parents=True, exist_ok=True)
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temporary.replace(path)


def validate_aliases(proposed: dict[str, list[str]], *, pages: dict[str, str], existing: dict[str, str], rejected: dict[str, str], hand_written: dict[str, str]) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Accept or refuse proposed aliases (slug -> aliases); returns (aliases, rejected, notes).

    pages maps every page slug to its title. An alias is refused when it names
    another page, belongs to another concept, or was refused before; a
    hand-written alias always wins.
    """
    aliases, rejected, notes = dict(existing), dict(rejected), []
    names = {slug.lower(): slug for slug in pages} | {title.lower(): slug for slug, title in pages.items()}
    hand = {alias.lower() for alias in hand_written}
    for slug, candidates in proposed.items():
        for alias in candidates:
            key = alias.strip()
            if not key or key.lower() == pages.get(slug, "").lower() or key in aliases and aliases[key] == slug:
                continue
            reason = None
            if key in rejected:
                continue
            if key.lower() in hand:
                reason = "a hand-written alias in wiki_config.toml uses this name"
            elif key.lower() in names and names[key.lower()] != slug:
                reason = f"collides with page {names[key.lower()]}"
            elif key in aliases and aliases[key] != slug:
                reason = f"already an alias of {aliases[key]}"
            if reason:
                rejected[key] = reason
                notes.append(f"alias {key!r} for {slug} refused: {reason}")
            else:
                aliases[key] = slug
    return aliases, rejected, notes


# -- composing pages (reads stored chunks and the given page texts; writes nothing) --


@dataclass
class Composition:
    """The page texts for some sources (None: delete the page), with what generation noticed."""

    texts: dict[str, str | None]
    report: GenerationReport
    sources: list[Document]  # those that got pages
    aliases: dict[str, str]
    rejected: dict[str, str]


def compose_pages(
    store: Store,
    documents: Sequence[Document],
    *,
    existing: Mapping[str, str],
    aliases: tuple[dict[str, str], dict[str, str]],
    settings: WikiSettings,
    backend: Backend,
    tracer: Tracer = NULL_TRACER,
) -> Composition:
    """Summary and concept pages for these sources, merged into the existing ones.

    existing: path -> current text of every summary and concept page;
    aliases: (generated aliases, rejected aliases) as last written.
    """
    with store.session():  # one connection for every source's chunks and every page's citations
        return _compose_pages(store, documents, existing=existing, aliases=aliases, settings=settings, backend=backend, tracer=tracer)


def _compose_pages(store: Store, documents: Sequence[Document], *, existing: Mapping[str, str], aliases: tuple[dict[str, str], dict[str, str]],
                   settings: WikiSettings, backend: Backend, tracer: Tracer) -> Composition:
    from llmwiki.models import english_words

    report = GenerationReport()
    reports = store.extraction_reports()
    shared, repeated = corpus_terms(reports), repeated_sentences(reports)
    words = english_words()  # a concept's page is named from its singular where that is an English word
    texts: dict[str, str | None] = {}
    owners = _existing_summaries(existing)
    concept_pages: dict[str, tuple[dict, str]] = {}  # slug -> (meta, body) as being edited
    for path, text in sorted(existing.items()):
        if path.startswith(f"{CONCEPTS}/"):
            concept_pages[Path(path).stem] = split_frontmatter(text)
    touched_concepts: set[str] = set()
    proposed_aliases: dict[str, list[str]] = {}
    written_sources: list[Document] = []
    for document in documents:
        started = time.perf_counter()
        with tracer.span("generate.source", source=document.path, backend=backend.name):
            chunks = store.chunks(document.id)
            if not chunks:
                report.notes.append(f"{document.path}: no chunks, no pages written")
                continue
            draft = draft_for(document, chunks, backend, summary_sentences=settings.summary_sentences, max_concepts=settings.concepts_per_source, tracer=tracer,
                              shared=shared, repeated=repeated)
            if draft.fallback_reason:
                report.notes.append(f"{document.path}: model reply not used ({draft.fallback_reason}); wrote the extractive pages instead")
            summary_path = summary_path_for(document, owners)
            owners[Path(summary_path).stem] = document.path
            title = document.title or Path(document.path).stem
            written_sources.append(document)
            source_entry = {"path": document.path, "hash": document.content_hash} | ({"read": tag} if (tag := extractor_tag(document.parser)) else {})
            concept_slugs = []
            for concept in draft.concepts:
                # One page per concept, however each document writes it ("Environment Variables", "environment
                # variable"), named the same whichever document proposes it first (a concept may share its summary's
                # name: they live in different folders).
                concept_slugs.append((slugify(singular(concept.name, words)), concept))
            # Remove this source's sections from concepts it no longer proposes.
            kept = {slug for slug, _ in concept_slugs}
            for slug, (meta, body) in list(concept_pages.items()):
                preamble, sections = split_sections(body)
                if document.path in sections and slug not in kept:
                    del sections[document.path]
                    meta = dict(meta, sources=[entry for entry in source_entries(meta) if entry["path"] != document.path], updated=_now())
                    concept_pages[slug] = (meta, join_sections(preamble, sections))
                    touched_concepts.add(slug)
                    report.notes.append(f"{CONCEPTS}/{slug}.md: removed the section from {document.path} (no longer proposed)")
            for slug, concept in concept_slugs:
                meta, body = concept_pages.get(slug, ({}, ""))
                preamble, sections = split_sections(body)
                if not meta:
                    preamble = f"# {concept.name}"
                    meta = {"title": concept.name, "type": "concept", "aliases": [], "sources": [], "generated_by": draft.generated_by, "created": _now()}
                elif document.path in sections and sections[document.path] != "":
                    report.notes.append(f"{CONCEPTS}/{slug}.md: replaced the section from {document.path}")
                summary_link = f"../summaries/{Path(summary_path).name}"
                sections[document.path] = f"## From [{title}]({summary_link})\n\n{concept.text}"
                sources = [entry for entry in source_entries(meta) if entry["path"] != document.path] + [source_entry]
                meta = dict(meta, sources=sorted(sources, key=lambda entry: entry["path"]), generated_by=draft.generated_by, updated=_now())
                concept_pages[slug] = (meta, join_sections(preamble, sections))
                touched_concepts.add(slug)
                if concept.aliases:
                    proposed_aliases.setdefault(slug, []).extend(concept.aliases)
            links = "\n".join(f"- [{concept.name}](../concepts/{slug}.md)" for slug, concept in concept_slugs)
            summary_body = f"# {title}\n\n{draft.summary}"
            if links:
                summary_body += f"\n\n## Concepts\n\n{links}"
            old_meta = {}
            if summary_path in existing:
                old_meta, _ = split_frontmatter(existing[summary_path])
            summary_meta = {
                "title": title,
                "type": "summary",
                "description": draft.description,
                "sources": [source_entry],
                "generated_by": draft.generated_by,
                "created": old_meta.get("created", _now()),
                "updated": _now(),
            }
            texts[summary_path] = with_citations(store, summary_meta, summary_body, summary_path)
        report.seconds_per_source[document.path] = time.perf_counter() - started
        failpoint("generate:source")

    for slug in sorted(touched_concepts):
        meta, body = concept_pages[slug]
        relative = f"{CONCEPTS}/{slug}.md"
        _, sections = split_sections(body)
        if not sections:
            texts[relative] = None
            report.deleted.append(relative)
            report.notes.append(f"{relative}: deleted (no source left)")
            continue
        texts[relative] = with_citations(store, meta, body, relative)

    existing_aliases, rejected = aliases
    page_titles = {slug: str(meta.get("title", slug)) for slug, (meta, _) in concept_pages.items()}
    page_titles.update({Path(path).stem: split_frontmatter(text)[0].get("title", Path(path).stem) for path, text in texts.items() if text and path.startswith(SUMMARIES)})
    merged, rejected, alias_notes = validate_aliases(proposed_aliases, pages=page_titles, existing=existing_aliases, rejected=rejected, hand_written=settings.aliases)
    report.notes.extend(alias_notes)
    for slug in touched_concepts:
        relative = f"{CONCEPTS}/{slug}.md"
        if texts.get(relative):
            meta, body = split_frontmatter(texts[relative])
            meta["aliases"] = sorted(alias for alias, target in merged.items() if target == slug)
            texts[relative] = render_page(meta, body)

    return Composition(texts=texts, report=report, sources=written_sources, aliases=merged, rejected=rejected)


def with_citations(store, meta: dict, body: str, relative: str) -> str:
    """Render a page with definitions for every chunk its body cites."""
    body = strip_citation_definitions(body)
    citations = store.citation_targets(cited_chunk_ids(body))
    definitions = citation_definitions(citations, page_path=relative)
    return render_page(meta, body + ("\n\n" + definitions if definitions else ""))


