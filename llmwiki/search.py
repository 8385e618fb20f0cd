"""Full-text search over chunks: BM25, strict first, honest about what it found.

Where the index lives. Postings (chunk, term, term frequency) are written to
DuckDB by the store in the same transaction as the chunks they describe, with
DuckDB's FTS stemmer and stopword list, so the stored index is never behind
the chunks. For speed, each process keeps an in-memory copy of the postings
as a term-major CSR matrix of BM25 weights, tagged with the store's search
digest (a generation counter bumped by every chunk or status write, plus the
chunk count and maximum id). Every search reads the digest first and reloads
the copy when it differs, so a stale copy is never used to answer.

Scoring is Okapi BM25 with k1 = 1.2, b = 0.75 and idf = ln(1 + (N - df + 0.5)
/ (df + 0.5)), as DuckDB's ``match_bm25`` computes it (which uses log10: the
same ranking). Statistics are over every searchable chunk; scope only filters.

Strict first: every query term must match. When no chunk in scope has them
all, the search widens to any term and says so. Each result carries
``matched_count`` (chunks in scope that matched) and ``total_count`` (chunks
in scope), and names one of three cases: the query had no searchable terms,
nothing in scope matched, or N of M matched and K are shown.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import numpy as np

from llmwiki import store as store_module
from llmwiki.records import BREADCRUMB_SEPARATOR
from llmwiki.store import Store

Scope = Literal["wiki", "sources", "all"]
SCOPES: tuple[str, ...] = ("wiki", "sources", "all")
K1 = 1.2
B = 0.75
MAX_QUERY_CHARS = 20_000


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    document_id: int
    path: str
    title: str | None
    kind: str
    page: int
    breadcrumb: tuple[str, ...]
    score: float
    preview: str
    stale: bool = False

    @property
    def label(self) -> str:
        """Document, page and breadcrumb, as a citation shows them."""
        where = f"{self.path} p.{self.page}"
        if self.breadcrumb:
            where += f" › {BREADCRUMB_SEPARATOR.join(self.breadcrumb)}"
        return where + (" [stale]" if self.stale else "")


@dataclass(frozen=True)
class SearchResult:
    query: str
    terms: tuple[str, ...]
    scope: str
    hits: tuple[Hit, ...] = field(default=())
    matched_count: int = 0
    total_count: int = 0
    widened: bool = False

    @property
    def case(self) -> Literal["no_terms", "no_match", "matched"]:
        if not self.terms:
            return "no_terms"
        return "matched" if self.matched_count else "no_match"

    @property
    def readout(self) -> str:
        """One plain sentence saying what was searched, matched and shown."""
        where = {"wiki": "wiki pages", "sources": "sources", "all": "wiki pages and sources"}[self.scope]
        if self.case == "no_terms":
            return "The question has no searchable terms (only common words or punctuation), so nothing was searched."
        terms = ", ".join(self.terms)
        if self.case == "no_match":
            return f"No chunk of the {self.total_count} in {where} contains any of: {terms}."
        how = (
            f"no chunk has all {len(self.terms)} terms, so the search widened to any of them: "
            if self.widened
            else ("all terms matched: " if len(self.terms) > 1 else "")
        )
        return (
            f"Searched {where} for {terms}; {how}{self.matched_count} of {self.total_count} chunks matched, "
            f"{len(self.hits)} shown."
        )


@dataclass
class _Snapshot:
    digest: tuple[int, int, int]
    chunk_ids: np.ndarray  # int64, sorted
    is_wiki: np.ndarray  # bool per chunk
    searchable: np.ndarray  # bool per chunk (document not failed)
    term_rows: dict[str, int]
    indptr: np.ndarray  # CSR over terms
    columns: np.ndarray  # chunk positions
    weights: np.ndarray  # BM25 weight of (term, chunk), float32

    @classmethod
    def load(cls, conn, digest) -> _Snapshot:
        chunks, postings = store_module.search_snapshot(conn)
        chunk_ids = chunks.column("id").to_numpy()
        lengths = chunks.column("term_count").to_numpy().astype(np.float64)
        searchable = chunks.column("searchable").to_numpy(zero_copy_only=False).astype(bool)
        is_wiki = np.asarray([kind == "wiki" for kind in chunks.column("kind").to_pylist()], dtype=bool)
        terms = postings.column("term").to_numpy(zero_copy_only=False)
        positions = np.searchsorted(chunk_ids, postings.column("chunk_id").to_numpy())
        tf = postings.column("tf").to_numpy().astype(np.float64)
        if len(terms):
            boundaries = np.flatnonzero(terms[1:] != terms[:-1]) + 1
            starts = np.concatenate(([0], boundaries))
            indptr = np.concatenate((starts, [len(terms)])).astype(np.int64)
            term_rows = {term: row for row, term in enumerate(terms[starts])}
        else:
            indptr, term_rows = np.zeros(1, dtype=np.int64), {}
        # Statistics over searchable chunks only, as if failed documents were absent.
        live = searchable[positions] if len(positions) else np.zeros(0, dtype=bool)
        document_count = max(int(searchable.sum()), 1)
        average_length = float(lengths[searchable].mean()) if searchable.any() else 1.0
        df = np.add.reduceat(live.astype(np.int64), indptr[:-1]) if len(terms) else np.zeros(0)
        idf = np.log1p((document_count - df + 0.5) / (df + 0.5))
        row_of_posting = np.repeat(np.arange(len(df)), np.diff(indptr)) if len(terms) else np.zeros(0, dtype=np.int64)
        norm = K1 * (1 - B + B * lengths[positions] / max(average_length, 1e-9))
        weights = (idf[row_of_posting] * tf * (K1 + 1) / (tf + norm)).astype(np.float32)
        return cls(digest, chunk_ids, is_wiki, searchable, term_rows, indptr, positions.astype(np.int64), weights)

    def in_scope(self, scope: str) -> np.ndarray:
        if scope == "wiki":
            return self.searchable & self.is_wiki
        if scope == "sources":
            return self.searchable & ~self.is_wiki
        return self.searchable

    def score(self, terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(BM25 score, number of query terms matched) for every chunk."""
        scores = np.zeros(len(self.chunk_ids), dtype=np.float32)
        matched = np.zeros(len(self.chunk_ids), dtype=np.int32)
        for term in terms:
            row = self.term_rows.get(term)
            if row is None:
                continue
            begin, end = self.indptr[row], self.indptr[row + 1]
            columns = self.columns[begin:end]
            scores[columns] += self.weights[begin:end]
            matched[columns] += 1
        return scores, matched


class SearchIndex:
    """A store's search index with its in-memory copy, shared within a process."""

    _by_path: dict[str, SearchIndex] = {}
    _registry_lock = threading.Lock()

    def __init__(self, store: Store) -> None:
        self.store = store
        self._snapshot: _Snapshot | None = None
        self._lock = threading.Lock()
        self.reload_count = 0

    @classmethod
    def for_store(cls, store: Store) -> SearchIndex:
        """The process-wide index of a store file."""
        key = str(store.path.resolve())
        with cls._registry_lock:
            index = cls._by_path.get(key)
            if index is None or index.store.lock_timeout_s != store.lock_timeout_s:
                index = cls._by_path[key] = cls(store)
            return index

    def _current(self, conn) -> _Snapshot:
        digest = store_module.search_generation(conn)
        with self._lock:
            if self._snapshot is None or self._snapshot.digest != digest:
                self._snapshot = _Snapshot.load(conn, digest)
                self.reload_count += 1
            return self._snapshot

    def search(self, query: str, *, scope: Scope = "all", limit: int = 10, preview_chars: int = 400) -> SearchResult:
        """Search chunks in scope: all terms first, any term when none has all."""
        if scope not in SCOPES:
            msg = f"unknown search scope {scope!r}; use one of {', '.join(SCOPES)}"
            raise ValueError(msg)
        cleaned = (query or "").replace("\x00", " ")[:MAX_QUERY_CHARS]
        limit = max(int(limit), 0)
        with self.store.connect() as conn:
            terms = store_module.analyze(conn, cleaned)
            snapshot = self._current(conn)
            mask = snapshot.in_scope(scope)
            total_count = int(mask.sum())
            if not terms:
                return SearchResult(query=query, terms=(), scope=scope, total_count=total_count)
            scores, matched = snapshot.score(terms)
            strict = mask & (matched == len(terms))
            widened = not strict.any()
            selected = mask & (matched > 0) if widened else strict
            matched_count = int(selected.sum())
            if matched_count == 0:
                return SearchResult(query=query, terms=tuple(terms), scope=scope, total_count=total_count)
            positions = np.flatnonzero(selected)
            chosen = positions[_top(scores[positions], limit)]
            chunk_ids = [int(snapshot.chunk_ids[position]) for position in chosen]
            rows = store_module.hit_rows(conn, chunk_ids)
        hits = tuple(
            _hit(chunk_id, rows[chunk_id], float(scores[position]), preview_chars)
            for chunk_id, position in zip(chunk_ids, chosen)
            if chunk_id in rows
        )
        return SearchResult(
            query=query,
            terms=tuple(terms),
            scope=scope,
            hits=hits,
            matched_count=matched_count,
            total_count=total_count,
            widened=widened and len(terms) > 1,
        )


def _top(scores: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the highest scores, best first; ties keep index order."""
    if limit <= 0 or len(scores) == 0:
        return np.zeros(0, dtype=np.int64)
    if len(scores) > limit:
        candidates = np.argpartition(-scores, limit - 1)[:limit]
    else:
        candidates = np.arange(len(scores))
    return candidates[np.lexsort((candidates, -scores[candidates]))]


def _hit(chunk_id: int, row: tuple, score: float, preview_chars: int) -> Hit:
    document_id, path, title, kind, stale_since, page, breadcrumb, text = row
    preview = " ".join(text.split())
    if len(preview) > preview_chars:
        preview = preview[: preview_chars - 1].rstrip() + "…"
    return Hit(
        chunk_id=chunk_id,
        document_id=document_id,
        path=path,
        title=title,
        kind=kind,
        page=page,
        breadcrumb=tuple(part for part in breadcrumb.split(BREADCRUMB_SEPARATOR) if part),
        score=score,
        preview=preview,
        stale=isinstance(stale_since, datetime),
    )


def search(workspace, query: str, *, scope: Scope = "all", limit: int | None = None) -> SearchResult:
    """Search a workspace's chunks; see SearchIndex.search."""
    retrieval = workspace.config.retrieval
    return SearchIndex.for_store(workspace.store).search(
        query,
        scope=scope,
        limit=retrieval.search_limit if limit is None else limit,
        preview_chars=retrieval.preview_chars,
    )
