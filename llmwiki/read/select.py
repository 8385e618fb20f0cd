"""The pre-retrieval selector: which context an answer is built from. Deterministic, no model.

Rules, in order:

1. An empty question selects nothing and says so.
2. A question naming an off-limits topic (``[chat] blacklist``) is refused
   before anything is searched or any model is called.
3. The open page, when there is one, comes first (frontmatter and citation
   definitions stripped).
4. A question about the wiki as a whole ("what is in this wiki?", "list the
   topics") reads ``overview.md`` and ``index.md`` whole.
5. Otherwise the wiki is searched (``[retrieval] wiki_chunks``, default 6)
   and the best raw source chunks (``source_chunks``, 4) are added after the
   wiki's, since a wiki quotes only part of each source (on CMU QA this
   lifted the article hit rate from 0.89 to 0.95); when the wiki has no hit,
   the sources alone are used.
   Aliases and concept names found in the question add the concept's name to
   the query, so an alias finds its concept page. The source chunks that the
   selected wiki chunks cite are added after them (at most twice
   ``source_chunks``, at least 4), and a saved answer page gives way to the chunks it
   cites: answers cite sources, never only an earlier answer.
6. A question naming a dataset key gets that key's rows; one naming only a
   category gets the list of its keys. Bad dataset files are skipped and
   named in the notes.
7. Duplicate items are dropped. The search's honest readout is carried
   through: what was selected, from how many matches, out of how many
   chunks, and which empty case applied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from llmwiki.datasets import DatasetSource
from llmwiki.policy import SELECT_POLICY
from llmwiki.pages import cited_chunk_ids, held_reason, split_frontmatter, strip_citation_definitions
from llmwiki.text.questions import default_frame, without_frame
from llmwiki.read.search import SearchResult, search
from llmwiki.services import Services
from llmwiki.workspace import Workspace

MAX_DATASET_ROWS = SELECT_POLICY.max_dataset_rows
_COLLECTION = re.compile(
    r"\b(what(?:'s| is| does)? (?:in (?:this|the|your) (?:wiki|collection|knowledge base)|this wiki (?:cover|contain|about))|what (?:topics|subjects|pages)|list (?:the |all )?(?:topics|pages|subjects|concepts|sources)"
    r"|(?:summar(?:y|ise|ize)|overview) of (?:the|this) (?:wiki|collection)|what do(?:es)? (?:you|the wiki|this wiki) (?:know|cover|contain))",
    re.IGNORECASE,
)
# "this collection", not "a collection of poems": the question must point at the wiki itself.
_WIKI_WORDS = re.compile(r"\b(wiki|(?:this|your|our) (?:collection|knowledge base)|these (?:documents|sources)|your sources)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ContextItem:
    """One piece of context given to an answer, with where it came from."""

    kind: str  # open_page | collection | wiki | source | dataset | dataset_keys
    label: str
    text: str
    chunk_id: int | None = None
    path: str | None = None
    page: int | None = None
    breadcrumb: tuple[str, ...] = ()
    stale: bool = False
    title: str | None = None  # the chunk's document's title (what an answer's "he" or "it" refers to), when known


@dataclass(frozen=True)
class Selection:
    question: str
    items: tuple[ContextItem, ...] = ()
    search: SearchResult | None = None
    searched_scope: str | None = None
    refused: str | None = None
    query: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def chunk_ids(self) -> list[int]:
        return [item.chunk_id for item in self.items if item.chunk_id is not None]

    @property
    def empty(self) -> bool:
        return not self.items

    @property
    def readout(self) -> str:
        """What was selected and why, in plain words."""
        if self.refused:
            return self.refused
        if not self.question.strip():
            return "The question is empty, so nothing was selected."
        parts = []
        kinds = [item.kind for item in self.items]
        if "open_page" in kinds:
            parts.append("the open page")
        if "collection" in kinds:
            parts.append("the wiki's overview and index, read whole (a question about the wiki as a whole)")
        wiki_chunks = kinds.count("wiki")
        source_chunks = kinds.count("source")
        if self.search is not None:
            if self.searched_scope == "sources" and source_chunks:
                parts.append(f"{source_chunks} source chunks (the wiki had no match, so raw sources were searched; {self.search.readout})")
            elif wiki_chunks:
                added = f" and {source_chunks} source chunks" if source_chunks else ""
                parts.append(f"{wiki_chunks} wiki chunks{added} ({self.search.readout})")
            else:
                parts.append(f"no chunks ({self.search.readout})")
        datasets = [item.label for item in self.items if item.kind in ("dataset", "dataset_keys")]
        if datasets:
            parts.append(", ".join(datasets))
        text = "Selected " + "; ".join(parts) + "." if parts else "Nothing was selected."
        if self.notes:
            text += " " + " ".join(self.notes)
        return text


def _strip_page(text: str) -> str:
    _, body = split_frontmatter(text)
    body = strip_citation_definitions(body)
    return re.sub(r"<!--.*?-->", "", body, flags=re.DOTALL).strip()


def is_collection_question(question: str) -> bool:
    """Whether the question is about the wiki as a whole."""
    return bool(_COLLECTION.search(question)) or (bool(_WIKI_WORDS.search(question)) and bool(re.search(r"\b(what|which|list|summar|overview)", question, re.IGNORECASE)))


# concepts folder -> (each page's name, size and mtime; the names its pages give): every question reads the
# table, and parsing a hundred pages' frontmatter each time was a third of an answer's time.
_CONCEPT_PAGES: dict[Path, tuple[tuple, dict[str, str]]] = {}


def _concept_names(workspace: Workspace) -> dict[str, str]:
    """Lower-cased alias or concept title -> concept title, hand-written aliases included."""
    folder = workspace.root / "wiki/concepts"
    paths = sorted(folder.glob("*.md"))
    signature = tuple((path.name, stat.st_size, stat.st_mtime_ns) for path in paths for stat in [path.stat()])
    cached = _CONCEPT_PAGES.get(folder)
    if cached is None or cached[0] != signature:
        from_pages: dict[str, str] = {}
        for path in paths:
            meta, _ = split_frontmatter(path.read_text(encoding="utf-8"))
            title = str(meta.get("title") or path.stem)
            from_pages[title.lower()] = title
            for alias in meta.get("aliases") or []:
                from_pages[str(alias).lower()] = title
        cached = _CONCEPT_PAGES[folder] = (signature, from_pages)
    names = dict(cached[1])
    for alias, target in workspace.config.wiki.aliases.items():
        names[alias.lower()] = target
    return names


def _mentions(question: str, names) -> list[str]:
    """Names that occur in the question as whole words, longest first, not overlapping."""
    lowered = question.lower()
    found: list[str] = []
    spans: list[tuple[int, int]] = []
    for name in sorted(names, key=len, reverse=True):
        if len(name) < 3:
            continue
        for match in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", lowered):
            if any(start < match.end() and match.start() < end for start, end in spans):
                continue
            spans.append(match.span())
            found.append(name)
            break
    return found


def _dataset_items(source: DatasetSource, question: str) -> tuple[list[ContextItem], list[str]]:
    from llmwiki.datasets import DatasetError

    notes = [f"Skipped dataset {error.path.name}: {error.problem}." for error in source.errors]
    vocabulary = source.vocabulary()
    items = []
    named_keys: dict[str, list[str]] = {}
    named_categories: list[str] = []
    for name in _mentions(question, vocabulary):
        for category, key in vocabulary[name]:
            if key is None:
                named_categories.append(category)
            else:
                named_keys.setdefault(category, []).append(key)
    for category, keys in named_keys.items():
        try:
            frame = source.query(category, key=keys)
        except DatasetError as err:
            notes.append(f"Skipped dataset {category}: {err.problem}.")
            continue
        lines = ["| key | metric | dims | value | unit | as_of |", "|---|---|---|---|---|---|"]
        for row in frame.head(MAX_DATASET_ROWS).iter_rows(named=True):
            dims = "; ".join(f"{item['name']}={item['value']}" for item in row["dims"] or [])
            value = "" if row["value"] is None else f"{row['value']:g}"
            lines.append(f"| {row['key']} | {row['metric']} | {dims} | {value} | {row['unit'] or ''} | {row['as_of'] or ''} |")
        shown = min(frame.height, MAX_DATASET_ROWS)
        label = f"dataset {category}: {shown} of {frame.height} rows for {', '.join(keys)}"
        if frame.height > shown:
            lines.append(f"({frame.height - shown} more rows not shown)")
        items.append(ContextItem(kind="dataset", label=label, text="\n".join(lines), path=f"datasets/{category}.md"))
    for category in dict.fromkeys(named_categories):
        if category in named_keys:
            continue
        keys = source.keys(category)
        items.append(ContextItem(kind="dataset_keys", label=f"dataset {category}: its {len(keys)} keys", text=f"Keys of dataset {category}: " + ", ".join(keys), path=f"datasets/{category}.md"))
    return items, notes


def select(workspace: Workspace, question: str, *, open_page: str | None = None, services: Services | None = None) -> Selection:
    """Choose the context for a question; see the module docstring for the rules. services: the datasets and the
    search embedder (``llmwiki.services``; by default built from the workspace's settings for this call)."""
    question = (question or "").replace("\x00", " ")
    if not question.strip():
        return Selection(question=question)
    settings = workspace.config
    services = services or Services(workspace)
    blocked = [topic for topic in settings.chat.blacklist if re.search(r"(?<!\w)" + re.escape(topic.lower()) + r"(?!\w)", question.lower())]
    if blocked:
        return Selection(
            question=question,
            refused=f"This question touches an off-limits topic ({', '.join(blocked)}), so it was not searched or answered. The list is [chat] blacklist in wiki_config.toml.",
        )
    items: list[ContextItem] = []
    notes: list[str] = []
    if open_page:
        relative = workspace.relative(workspace.root / open_page, fix=workspace.PAGE_FIX)
        path = workspace.root / relative
        if not relative.startswith("wiki/") or not path.is_file():
            notes.append(f"The open page {open_page} was not found in wiki/ and was left out.")
        else:
            items.append(ContextItem(kind="open_page", label=f"open page {relative}", text=_strip_page(path.read_text(encoding="utf-8")), path=relative))
    search_result = None
    scope_used = None
    query = without_frame(question)  # "What happened in 1867?" searches for 1867, not for chunks that say "happened"
    if default_frame(question) != question:  # "... unless I change the pen?" searches for the pen and for what is "default"
        query = f"{query.rstrip(' ?')} default?"
    if is_collection_question(question):
        for name in ("overview.md", "index.md"):
            path = workspace.wiki_dir / name
            if path.is_file():
                items.append(ContextItem(kind="collection", label=f"wiki/{name} (whole)", text=_strip_page(path.read_text(encoding="utf-8")), path=f"wiki/{name}"))
    else:
        concepts = _concept_names(workspace)
        widened = [concepts[name] for name in _mentions(question, concepts) if concepts[name].lower() not in question.lower()]
        if widened:
            query = f"{query} {' '.join(widened)}"
            notes.append(f"The question names {', '.join(widened)} by an alias; the search includes it.")
        retrieval = settings.retrieval
        search_result = search(workspace, query, scope="wiki", limit=retrieval.wiki_chunks, embedder=services.embedder)
        scope_used = "wiki"
        held = _held_pages(workspace, {hit.path for hit in search_result.hits})
        hits = [hit for hit in search_result.hits if hit.path not in held]
        if held:
            notes.append(f"{len(held)} page(s) held for review left out until a reviewer releases them: {', '.join(sorted(held))}.")
        if search_result.case != "no_terms":
            # The sources too: a wiki quotes only part of each source (on CMU QA S08 this lifts the
            # share of fact questions whose context holds the answer from 0.764 to 0.770).
            source_result = search(workspace, query, scope="sources", limit=retrieval.source_chunks, embedder=services.embedder)
            if not hits:
                search_result, scope_used, hits = source_result, "sources", list(source_result.hits)
            elif source_result.hits:
                hits += list(source_result.hits)
                notes.append(f"The best {len(source_result.hits)} source chunks were added after the wiki's ({source_result.readout})")
        texts = workspace.store.chunk_texts([hit.chunk_id for hit in hits])  # hits carry only a preview
        for hit in hits:
            items.append(
                ContextItem(kind="wiki" if hit.kind == "wiki" else "source", label=hit.label, text=_strip_page(texts.get(hit.chunk_id, "")),
                            chunk_id=hit.chunk_id, path=hit.path, page=hit.page, breadcrumb=hit.breadcrumb, stale=hit.stale, title=hit.title)
            )
        followed = _follow_citations(workspace, items, limit=max(SELECT_POLICY.follow_factor * retrieval.source_chunks, SELECT_POLICY.min_followed))
        if followed:
            items += followed
            notes.append(f"The selected wiki chunks cite {len(followed)} more source chunks; they were added, so answers cite sources, not pages.")
        present = {item.chunk_id for item in items}
        answers = [item for item in items if item.kind == "wiki" and (item.path or "").startswith("wiki/answers/")
                   and set(cited_chunk_ids(item.text)) <= present]
        if answers:  # a saved answer gives way to the source chunks it cites: answers never rest on answers
            items = [item for item in items if item not in answers]
            notes.append(f"{len(answers)} saved answer chunk(s) gave way to the source chunks they cite.")
    dataset_items, dataset_notes = _dataset_items(services.datasets, question)
    items.extend(dataset_items)
    notes.extend(dataset_notes)
    unique: list[ContextItem] = []
    seen: set = set()
    for item in items:
        key = item.chunk_id if item.chunk_id is not None else item.label
        if key in seen:
            continue
        seen.add(key)
        unique.append(item)
    return Selection(question=question, items=tuple(unique), search=search_result, searched_scope=scope_used, query=query, notes=tuple(notes))


def _held_pages(workspace: Workspace, paths: set[str]) -> set[str]:
    """The wiki pages among paths that are held for review (their frontmatter says so): no answer rests on them."""
    held = set()
    for path in paths:
        page = workspace.root / path
        if path.startswith("wiki/") and page.is_file() and held_reason(split_frontmatter(page.read_text(encoding="utf-8"))[0]) is not None:
            held.add(path)
    return held


def _follow_citations(workspace: Workspace, items: list[ContextItem], *, limit: int) -> list[ContextItem]:
    """The source chunks that the selected wiki chunks cite, in the wiki chunks' order, at most limit new ones.

    A wiki page quotes its sources; an answer should cite those, not the page,
    and a saved answer must never be the only evidence for a new one.
    """
    present = {item.chunk_id for item in items}
    wanted: list[int] = []
    for item in items:
        if item.kind == "wiki" and item.chunk_id is not None:
            for chunk_id in cited_chunk_ids(item.text):  # the page text keeps its inline citations
                if chunk_id not in present and chunk_id not in wanted:
                    wanted.append(chunk_id)
    if not wanted:
        return []
    targets = workspace.store.citation_targets(wanted)
    sources = [chunk_id for chunk_id in wanted if chunk_id in targets and targets[chunk_id][0].startswith("sources/")][:limit]
    texts = workspace.store.chunk_texts(sources)
    titles = {path: document.title if (document := workspace.store.document_by_path(path)) else None for path in {targets[chunk_id][0] for chunk_id in sources}}
    return [ContextItem(kind="source", label=f"{targets[chunk_id][0]} p.{targets[chunk_id][1]} (cited by the wiki)", text=texts.get(chunk_id, ""),
                        chunk_id=chunk_id, path=targets[chunk_id][0], page=targets[chunk_id][1], title=titles[targets[chunk_id][0]]) for chunk_id in sources]


def read_wiki_page(workspace: Workspace, name: str) -> str:
    """A wiki page's Markdown, refusing anything outside wiki/ (for tools)."""
    from llmwiki.errors import WorkspaceError

    candidate = Path(name)
    if candidate.is_absolute() or ".." in candidate.parts:
        raise WorkspaceError(f"{name}: refused, pages are read only from wiki/ (no absolute paths or '..').")
    relative = name if name.startswith("wiki/") else f"wiki/{name}"
    resolved = (workspace.root / relative).resolve()
    if (workspace.root / "wiki").resolve() not in resolved.parents or resolved.suffix != ".md":
        raise WorkspaceError(f"{name}: refused, only Markdown pages inside wiki/ can be read.")
    if not resolved.is_file():
        raise WorkspaceError(f"{name}: no such page in wiki/.")
    return resolved.read_text(encoding="utf-8")
