"""Full-text search over chunks: BM25, strict first, honest about what it found.

Where the index lives. Postings (chunk, term, term frequency) are written to
DuckDB by the store in the same transaction as the chunks they describe, with
DuckDB's FTS stemmer and stopword list, so the stored index is never behind
the chunks. For speed, each process keeps an in-memory copy of the postings
as term-sorted arrays, tagged with the store's search digest (a generation
counter moved by a random step at every chunk or status write, plus the
chunk, posting and embedding counts). Every search reads the digest first
(only when the store's files changed) and refreshes the copy when it differs,
so a stale copy is never used to answer. A full load writes the postings to a
cache file beside the store; the next process starts from it when its digest
is the store's, or merges it up to date when it was written at an earlier
state of the same lineage (``store.search_digest``), so the first search of a
CLI call or a notebook does not rebuild the arrays from SQL.

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

import functools
import os
import re
import threading
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
import pyarrow as pa

from llmwiki.embeddings import Embedder
from llmwiki.records import BREADCRUMB_SEPARATOR
from llmwiki.store import BM25_B as B
from llmwiki.store import BM25_K1 as K1
from llmwiki.store import Store
from llmwiki.text import WORD, search_stems
from llmwiki.workspace import Workspace

Scope = Literal["wiki", "sources", "all"]
Mode = Literal["auto", "all", "any"]
SCOPES: tuple[str, ...] = ("wiki", "sources", "all")
RRF_K = 60
FUSION_DEPTH = 100
MAX_QUERY_CHARS = 20_000
LINEAGE = 5  # the lineage mark's place in ``store.search_digest``
CACHE_REWRITE_POSTINGS = 5_000_000  # an incremental refresh rewrites the cache up to this many postings (~60 MB); beyond, only full loads do


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
    ranking: Literal["bm25", "hybrid"] = "bm25"
    filled: int = 0  # places after the all-term matches filled by the best chunks holding some of the terms

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
            nearest = f" Showing the {len(self.hits)} closest by meaning instead." if self.hits else ""
            return f"No chunk of the {self.total_count} in {where} contains any of: {terms}.{nearest}"
        how = (
            f"no chunk has all {len(self.terms)} terms, so the search widened to any of them: "
            if self.widened
            else ("all terms matched: " if len(self.terms) > 1 else "")
        )
        ranked = " (ranked by BM25 and embedding similarity)" if self.ranking == "hybrid" else ""
        fill = f", then {self.filled} with some of the terms" if self.filled else ""
        return (
            f"Searched {where} for {terms}; {how}{self.matched_count} of {self.total_count} chunks matched, "
            f"{len(self.hits)} shown{fill}{ranked}."
        )


_THOUSANDS = re.compile(r"(\d),(\d{3})")


def _without_thousands_separators(text: str) -> str:
    """"1,234,567" -> "1234567" (twice: a match consumes the digit the next one starts with)."""
    return _THOUSANDS.sub(r"\1\2", _THOUSANDS.sub(r"\1\2", text))


def analyze(text: str, stopwords: frozenset[str]) -> list[str]:
    """A query's distinct search terms, exactly as the store's SQL analyzer makes them.

    Same steps as ``store._WORDS_SQL`` + ``stem(word, 'porter')``: thousands
    separators dropped, lower case, runs of letters and digits, stopwords out,
    Snowball's Porter stemmer (the library DuckDB's FTS extension uses).
    """
    text = _without_thousands_separators(text).lower()
    return list(dict.fromkeys(search_stems([word for word in WORD.findall(text) if word not in stopwords])))


def one_slip(term: str, alphabet: frozenset[str]) -> set[str]:
    """Terms one deletion away from term, on either side (term itself excluded): the term less a letter,
    the term with one more, or the term less a letter with another put anywhere; alphabetic, four letters or more.

    Generated from the term (a few thousand candidates), so no index of the whole vocabulary is needed.
    """

    def inserted(text: str) -> set[str]:
        return {text[:at] + char + text[at:] for at in range(len(text) + 1) for char in alphabet}

    deletions = {term[:at] + term[at + 1:] for at in range(len(term))}
    candidates = deletions | inserted(term) | {variant for deletion in deletions for variant in inserted(deletion)}
    return {known for known in candidates if known != term and len(known) >= 4 and known.isalpha()}


def _capitalised_words(text: str) -> list[str]:
    """Capitalised words after a text's first word (names, not sentence starts), lower-cased, once each."""
    names = [match.group() for match in re.finditer(r"(?<![.?!]\s)(?<!^)\b[A-Z][a-z]+\b", text[:MAX_QUERY_CHARS].strip())]
    return list(dict.fromkeys(name.lower() for name in names))


_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")


def _best_slip(counts: dict[str, int], beside: dict[str, float]) -> str | None:
    """The candidate that fits the question best: the one whose chunks hold the question's other words beside it
    (``beside``: {candidate: the summed rarity of the other words some chunk holds with it}), then the one the most
    searchable chunks hold (ties: the first alphabetically); None when no chunk holds any. "Thedore" in a question
    on Roosevelt is "Theodore", though "theory" is more widespread."""
    best = min(counts, key=lambda known: (-beside.get(known, 0.0), -counts[known], known), default=None)
    return best if best is not None and counts[best] else None


class _Vocabulary(Protocol):
    """What ``corrections`` asks of a store's index: its stopwords, whether a word stands in a searchable chunk, how
    many chunks hold the terms one slip from a term or the terms of given words, and which of the text's other words
    stand beside a term."""

    stopwords: frozenset[str]

    def held(self, word: str, term: str) -> bool: ...

    def slips(self, word: str, term: str) -> dict[str, int]: ...

    def counts(self, terms: dict[str, str]) -> dict[str, int]: ...

    def beside(self, terms: Sequence[str], text: str) -> dict[str, float]: ...


def corrections(vocabulary: _Vocabulary, text: str) -> dict[str, str]:
    """{word of the text: what to read it as} for names no searchable chunk holds that are one slip from a term
    others do ("Monrow" -> "monro", "Thedore" -> "theodor"), for words that are no English word one slip from
    an English word the store has ("poulation" -> "population"), and for a word spelt the British or the American
    way where more searchable chunks spell it the other ("colour" -> "color"), whichever store the vocabulary reads.

    Capitalised words of five letters or more are corrected: a candidate must be within one edit of the word's term
    (one deletion on either side, which covers one substitution, insertion or deletion and most swaps). A lower-case
    word is corrected only when it is no English word (``slips_of_words``): one the sources do not use ("savant") is
    more likely a real word than a slip, and reading it as another would answer a question nobody asked. Of the
    candidates, the one whose chunks hold the question's other words wins, then the most widespread (``_best_slip``).
    """
    corrected = {}
    for word in _capitalised_words(text):
        if len(word) < 5 or not word.isalpha() or word in vocabulary.stopwords:
            continue
        terms = analyze(word, vocabulary.stopwords)
        if not terms or vocabulary.held(word, terms[0]):
            continue
        counts = vocabulary.slips(word, terms[0])
        best = _best_slip(counts, vocabulary.beside(sorted(counts), text))
        if best is not None:
            corrected[word] = best
    for word, candidates in slips_of_words(text, vocabulary.stopwords).items():
        terms = analyze(word, vocabulary.stopwords)
        if terms and vocabulary.held(word, terms[0]):
            continue
        counts = vocabulary.counts(candidates)
        beside = vocabulary.beside(sorted({candidates[known] for known, count in counts.items() if count}), text)
        best = _best_slip(counts, {known: beside.get(candidates[known], 0.0) for known in counts})
        if best is not None:
            corrected[word] = best
    for word, variants in spelling_variants(text).items():
        terms = analyze(word, vocabulary.stopwords)
        if not terms or word in corrected:
            continue
        variant_terms = {variant: term for variant in variants if (term := (analyze(variant, vocabulary.stopwords) or [""])[0]) and term != terms[0]}
        counts = vocabulary.counts({word: terms[0], **variant_terms})
        own = counts.pop(word, 0)
        best = max(counts, key=lambda variant: (counts[variant], variant), default=None)
        if best is not None and counts[best] > own:  # "colour" where the sources write "color" (the most chunks win)
            corrected[word] = variant_terms[best]
    return corrected


# The other spelling of a word, British or American ("colour" / "color", "initialise" / "initialize", "centre" /
# "center", "catalogue" / "catalog", "analyse" / "analyze"): a user writes one, the sources may write the other.
# (British ending, American ending, the endings that may follow, whether one must, letters that must come before):
# each read both ways.
_SPELLING_PAIRS = (
    ("our", "or", "s|ed|ing|ite|ites|ful|less|able", False, 3),
    ("is", "iz", "e|es|ed|ing|ation|ations|er|ers", True, 3),
    ("ys", "yz", "e|es|ed|ing", True, 2),
    ("tre", "ter", "s", False, 3),
    ("ogue", "og", "s", False, 3),
    ("ence", "ense", "s", False, 3),
)
_SPELLINGS = (
    *((re.compile(rf"(?<=\w{{{before}}}){one}({after}){'' if required else '?'}$"), rf"{other}\1")
      for british, american, after, required, before in _SPELLING_PAIRS for one, other in ((british, american), (american, british))),
    (re.compile(r"^grey"), "gray"), (re.compile(r"^gray"), "grey"),
)
# Lower-case words of five letters or more, not parts of longer tokens: the words a slip or a spelling is looked for in.
_LOWER_WORDS = re.compile(r"(?<![\w'’-])[a-z]{5,}(?![\w'’-])")


def spelling_variants(text: str) -> dict[str, set[str]]:
    """{lower-case word of the text of five letters or more: its other spellings (``_SPELLINGS``)}; a variant is
    only a candidate: ``corrections`` reads a word as one only where more searchable chunks hold the variant."""
    found = {}
    for word in dict.fromkeys(_LOWER_WORDS.findall(text[:MAX_QUERY_CHARS])):
        variants = {pattern.sub(replacement, word) for pattern, replacement in _SPELLINGS if pattern.search(word)} - {word}
        if variants:
            found[word] = variants
    return found


def slips_of_words(text: str, stopwords: frozenset[str]) -> dict[str, dict[str, str]]:
    """{word of the text that is no English word: {English word one slip from it: its search term}} for
    the text's lower-case words of five letters or more ("poulation": {"population": "popul"}).

    English words are the shipped MiniLM's whole words (``models.english_words``); a word outside them
    may still be a real one the list lacks ("herbivores"), so callers correct it only when the store
    lacks the word and holds the candidate's term.
    """
    from llmwiki.models import english_words

    dictionary = english_words()
    found = {}
    for word in dict.fromkeys(_LOWER_WORDS.findall(text[:MAX_QUERY_CHARS])):
        if word in dictionary or word in stopwords:
            continue
        candidates = {known: terms[0] for known in one_slip(word, _LETTERS) & dictionary
                      if (terms := analyze(known, stopwords))}
        if candidates:
            found[word] = candidates
    return found


def _file_stamp(path: Path) -> tuple:
    stamps = []
    for candidate in (path, path.with_name(path.name + ".wal")):
        try:
            stat = candidate.stat()
        except FileNotFoundError:
            stamps.append(None)
            continue
        stamps.append((stat.st_ino, stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)


def _positions(chunk_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Where each of ids stands in chunk_ids (sorted, unique; every id is one of them), as int32.

    Chunk ids are dense (assigned in order), so a table indexed by id answers in one gather:
    0.24 s less than a binary search per posting for 2.6 million postings. Sparse ids
    (most deleted) fall back to the binary search.
    """
    if len(chunk_ids) and int(chunk_ids[-1]) <= 4 * len(chunk_ids) + 1_000_000:
        table = np.zeros(int(chunk_ids[-1]) + 1, dtype=np.int32)
        table[chunk_ids] = np.arange(len(chunk_ids), dtype=np.int32)
        return table[ids]
    return np.searchsorted(chunk_ids, ids).astype(np.int32)


class _Snapshot:
    """The in-memory copy of the postings, refreshed in place when the store changes.

    Postings are kept sorted by term id (so each term is one slice) as parallel
    arrays of chunk position (int32) and term frequency (float32): 8 bytes a
    posting plus 4 for its term, and 4 for its BM25 weight, computed once per
    refresh (``_weigh``) since N, the average length and df move with every
    write. A refresh after an insert merges the new postings in and weighs
    again; it reads nothing else it had. Display fields are Arrow arrays, not
    Python objects: a full load reads the postings sorted by term and lets
    Arrow number the terms, with no Python loop over postings or chunks.
    """

    PREVIEW_CHARS = 1000

    def __init__(self) -> None:
        self._alphabet: frozenset[str] = frozenset()  # every character of the vocabulary (spelling corrections)
        self._alphabet_size = -1
        self.digest: tuple | None = None
        self.stopwords: frozenset[str] = frozenset()
        self.vocabulary: dict[str, int] = {}
        self.posting_term = np.zeros(0, dtype=np.int32)  # sorted
        self.columns = np.zeros(0, dtype=np.int32)  # position in chunk_ids of each posting
        self.posting_tf = np.zeros(0, dtype=np.float32)
        self.weights = np.zeros(0, dtype=np.float32)  # each posting's BM25 weight (``_weigh``)
        self.indptr = np.zeros(1, dtype=np.int64)
        self.chunk_ids = np.zeros(0, dtype=np.int64)
        self.lengths = np.zeros(0, dtype=np.float64)
        self.searchable = np.zeros(0, dtype=bool)
        self.is_wiki = np.zeros(0, dtype=bool)
        self.stale = np.zeros(0, dtype=bool)
        self.display = pa.table({})  # one row per chunk position, once loaded
        self.documents: dict[int, tuple[str, str | None]] = {}  # id -> (path, title)
        self.embedding_model: str | None = None
        self.vectors: np.ndarray | None = None  # one row per chunk position; zero rows lack a vector
        self.has_vector = np.zeros(0, dtype=bool)
        self.loaded = False  # the postings reflect some state of the store (loaded, or read from the cache)
        self.full_loads = 0
        self.incremental_loads = 0
        self.cache_reads = 0
        self.cached_digest: tuple | None = None  # the digest of the postings last written to or read from the cache

    @property
    def memory_bytes(self) -> int:
        """What the copy holds in memory: postings, per-chunk arrays, display columns and vectors."""
        arrays = (self.posting_term, self.columns, self.posting_tf, self.weights, self.indptr, self.chunk_ids, self.lengths, self.searchable, self.is_wiki, self.stale, self.has_vector)
        vectors = self.vectors.nbytes if self.vectors is not None else 0
        return sum(array.nbytes for array in arrays) + self.display.nbytes + vectors

    def searchable_chunks(self, term: str) -> np.ndarray:
        """The positions of the searchable chunks that hold a term (none for a term the vocabulary lacks)."""
        row = self.vocabulary.get(term)
        if row is None:
            return np.zeros(0, dtype=np.int32)
        columns = self.columns[self.indptr[row]:self.indptr[row + 1]]
        return columns[self.searchable[columns]]

    def neighbours(self, term: str) -> list[str]:
        """Vocabulary terms one slip from term (``one_slip``); only the vocabulary's alphabet is kept, per vocabulary size."""
        if self._alphabet_size != len(self.vocabulary):
            self._alphabet, self._alphabet_size = frozenset("".join(self.vocabulary)), len(self.vocabulary)
        return sorted(known for known in one_slip(term, self._alphabet) if known in self.vocabulary)

    def refresh(self, reader, cache: Path | None = None) -> None:
        """Bring the copy up to the store's digest: incrementally where it can, else in full.

        cache: a file of the postings next to the store (see ``_read_cache``); a new process
        starts from it when it matches the store, and a full load writes it.
        """
        digest = reader.digest()
        if digest == self.digest:
            return
        if not self.stopwords:
            self.stopwords = reader.stopwords()
        if self.digest is None and cache is not None:
            self._read_cache(cache, digest)
        flags = reader.chunk_flags()
        chunk_ids = flags.column("id").to_numpy()
        previous_max = int(self.chunk_ids[-1]) if len(self.chunk_ids) else 0
        # The display columns are read whole when there are none yet (a new copy, or postings read from the cache),
        # so only rows read from the store are ever joined together.
        display_whole = self.display.num_rows == 0 or self.display.num_rows != len(self.chunk_ids)
        incremental = self.loaded and (self.digest is None or self.digest[LINEAGE] == digest[LINEAGE])  # a rebuild rewrote every posting: load in full
        if incremental:
            kept = np.isin(self.chunk_ids, chunk_ids, assume_unique=True)
            if not kept.all():
                keep = kept[self.columns]
                self.posting_term, self.posting_tf = self.posting_term[keep], self.posting_tf[keep]
                self.columns = _positions(chunk_ids, self.chunk_ids[self.columns[keep]])
                if not display_whole:
                    self.display = self.display.filter(pa.array(kept))
            self._merge(reader.postings(after_chunk_id=previous_max), chunk_ids)
            incremental = len(self.posting_term) == digest[3]  # else some write the merge cannot follow: load in full
        if not incremental:
            self._load_all(reader.postings(by_term=True), chunk_ids)
            self.full_loads += 1
            display_whole = True
        else:
            self.incremental_loads += 1
        added = reader.chunk_display(after_chunk_id=0 if display_whole else previous_max, preview_chars=self.PREVIEW_CHARS)
        self.display = added.combine_chunks() if display_whole else pa.concat_tables([self.display, added]).combine_chunks()
        self.documents = reader.documents()
        self.chunk_ids = chunk_ids
        self.searchable = flags.column("searchable").to_numpy(zero_copy_only=False).astype(bool)
        self.is_wiki = flags.column("is_wiki").to_numpy(zero_copy_only=False).astype(bool)
        self.stale = flags.column("stale").to_numpy(zero_copy_only=False).astype(bool)
        self.lengths = np.bincount(self.columns, weights=self.posting_tf, minlength=len(self.chunk_ids))
        self.indptr = np.concatenate(([0], np.cumsum(np.bincount(self.posting_term, minlength=len(self.vocabulary))))).astype(np.int64)
        self._weigh()
        if self.embedding_model is not None:
            self._load_vectors(reader)
        self.loaded, self.digest = True, digest
        if cache is not None and digest != self.cached_digest and (not incremental or len(self.posting_term) <= CACHE_REWRITE_POSTINGS):
            self._write_cache(cache)

    def _read_cache(self, cache: Path, digest: tuple) -> None:
        """Start from the cached postings when they were written at this very digest (the store's
        generation moves by a random step at every write, so an equal digest is the same history),
        or at an earlier state of the same lineage (``store.search_digest``): the refresh then merges
        in what changed since, as it does in a running process. A missing or damaged cache, or one
        of another lineage, is ignored: the full load that follows rewrites it."""
        try:
            with np.load(cache, allow_pickle=False) as saved:
                written_at = tuple(saved["digest"].tolist())
                if written_at != tuple(digest) and not (len(written_at) == len(digest) and written_at[LINEAGE] == digest[LINEAGE] != 0):
                    return
                terms = saved["terms"].tobytes().decode("utf-8").split("\n") if saved["terms"].size else []
                self.vocabulary = dict(zip(terms, range(len(terms))))
                self.posting_term, self.columns, self.posting_tf = saved["posting_term"], saved["columns"], saved["posting_tf"]
                self.chunk_ids = saved["chunk_ids"]
        except (OSError, ValueError, KeyError, EOFError, UnicodeDecodeError, zipfile.BadZipFile):
            return
        self.loaded, self.cache_reads, self.cached_digest = True, self.cache_reads + 1, written_at

    def _write_cache(self, cache: Path) -> None:
        """Write the postings next to the store, atomically; a failure only costs the next process a full load."""
        partial = cache.with_name(f"{cache.name}.{os.getpid()}.partial")
        terms = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        try:
            with open(partial, "wb") as handle:
                np.savez(handle, digest=np.asarray(self.digest, dtype=np.int64), terms=np.frombuffer("\n".join(terms).encode("utf-8"), dtype=np.uint8),
                         posting_term=self.posting_term, columns=self.columns, posting_tf=self.posting_tf, chunk_ids=self.chunk_ids)
            os.replace(partial, cache)
            self.cached_digest = self.digest
        except OSError:
            partial.unlink(missing_ok=True)

    def _load_all(self, postings, chunk_ids: np.ndarray) -> None:
        """Replace the postings with a full set, sorted by term: Arrow numbers the terms in that order."""
        encoded = postings.column("term").combine_chunks().dictionary_encode() if postings.num_rows else None
        terms = encoded.dictionary.to_pylist() if encoded is not None else []
        self.vocabulary = dict(zip(terms, range(len(terms))))
        self.posting_term = encoded.indices.to_numpy().astype(np.int32) if encoded is not None else np.zeros(0, dtype=np.int32)
        self.columns = _positions(chunk_ids, postings.column("chunk_id").to_numpy())
        self.posting_tf = postings.column("tf").to_numpy().astype(np.float32)

    def want_vectors(self, reader, model: str) -> None:
        """Keep vectors of model in memory from now on (loaded now if needed)."""
        if self.embedding_model != model:
            self.embedding_model = model
            self._load_vectors(reader)

    def _load_vectors(self, reader) -> None:
        chunk_ids, vectors = reader.embeddings(model=self.embedding_model)
        if not chunk_ids:
            self.vectors, self.has_vector = None, np.zeros(len(self.chunk_ids), dtype=bool)
            return
        matrix = np.asarray(vectors, dtype=np.float32)
        positions = np.searchsorted(self.chunk_ids, np.asarray(chunk_ids, dtype=np.int64))
        self.vectors = np.zeros((len(self.chunk_ids), matrix.shape[1]), dtype=np.float32)
        self.vectors[positions] = matrix
        self.has_vector = np.zeros(len(self.chunk_ids), dtype=bool)
        self.has_vector[positions] = True

    def _merge(self, postings, chunk_ids: np.ndarray) -> None:
        """Insert a few new postings into the term-sorted arrays (chunk_ids: all chunks, sorted)."""
        vocabulary = self.vocabulary
        terms = postings.column("term").to_pylist()
        term_ids = np.fromiter((vocabulary.setdefault(term, len(vocabulary)) for term in terms), dtype=np.int32, count=len(terms))
        order = np.argsort(term_ids, kind="stable")
        term_ids = term_ids[order]
        at = np.searchsorted(self.posting_term, term_ids, side="right")
        self.posting_term = np.insert(self.posting_term, at, term_ids)
        self.posting_tf = np.insert(self.posting_tf, at, postings.column("tf").to_numpy().astype(np.float32)[order])
        self.columns = np.insert(self.columns, at, _positions(chunk_ids, postings.column("chunk_id").to_numpy()[order]))

    def in_scope(self, scope: str) -> np.ndarray:
        if scope == "wiki":
            return self.searchable & self.is_wiki
        if scope == "sources":
            return self.searchable & ~self.is_wiki
        return self.searchable

    def _weigh(self) -> None:
        """Each posting's BM25 weight, computed once per refresh rather than at every query.

        Statistics (N, average length, df) count searchable chunks only, as if failed documents
        were not there; their postings weigh 0 (and their chunks are out of every scope).
        """
        live = self.searchable[self.columns]
        document_count = int(self.searchable.sum())
        self.weights = np.zeros(len(self.columns), dtype=np.float32)
        if document_count == 0 or not live.any():
            return
        average_length = max(float(self.lengths[self.searchable].sum()) / document_count, 1e-9)
        frequency = np.bincount(self.posting_term[live], minlength=len(self.vocabulary)).astype(np.float64)
        idf = np.log1p((document_count - frequency + 0.5) / (frequency + 0.5))
        tf = self.posting_tf.astype(np.float64)
        norm = K1 * (1 - B + B * self.lengths[self.columns] / average_length)
        self.weights = np.where(live, idf[self.posting_term] * tf * (K1 + 1) / (tf + norm), 0.0).astype(np.float32)

    def score(self, terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(BM25 score, number of query terms matched) for every chunk (see ``_weigh``)."""
        scores = np.zeros(len(self.chunk_ids), dtype=np.float64)
        matched = np.zeros(len(self.chunk_ids), dtype=np.int32)
        for term in terms:
            row = self.vocabulary.get(term)
            if row is None:
                continue
            begin, end = self.indptr[row], self.indptr[row + 1]
            columns = self.columns[begin:end]
            scores[columns] += self.weights[begin:end]
            matched[columns] += 1
        return scores, matched

    def hit(self, position: int, score: float, preview_chars: int) -> Hit:
        chunk_id = int(self.chunk_ids[position])
        row = self.display.slice(position, 1).to_pylist()[0]
        path, title = self.documents[row["document_id"]]
        return Hit(
            chunk_id=chunk_id,
            document_id=row["document_id"],
            path=path,
            title=title,
            kind="wiki" if self.is_wiki[position] else "source",
            page=row["page_number"],
            breadcrumb=tuple(part for part in (row["breadcrumb"] or "").split(BREADCRUMB_SEPARATOR) if part),
            score=score,
            preview=preview(row["preview"], preview_chars),
            stale=bool(self.stale[position]),
        )


def search_cache_path(store_path: Path) -> Path:
    """Where a store file's search postings are cached: beside it (``store.duckdb.search-cache.npz``)."""
    return store_path.with_name(store_path.name + ".search-cache.npz")


class _SnapshotVocabulary:
    """``corrections``' questions answered from a DuckDB store's in-memory copy of its index."""

    def __init__(self, index: SearchIndex, snapshot: _Snapshot) -> None:
        self.index, self.snapshot, self.stopwords = index, snapshot, snapshot.stopwords

    def held(self, word: str, term: str) -> bool:
        return bool(self.snapshot.searchable_chunks(term).size)

    def slips(self, word: str, term: str) -> dict[str, int]:
        return {candidate: self.snapshot.searchable_chunks(candidate).size for candidate in self.snapshot.neighbours(term)}

    def counts(self, terms: dict[str, str]) -> dict[str, int]:
        return {known: self.snapshot.searchable_chunks(term).size for known, term in terms.items()}

    def beside(self, terms: Sequence[str], text: str) -> dict[str, float]:
        """{term: the summed rarity of the text's other terms that share a searchable chunk with it}."""
        if not terms:
            return {}
        rarity = self.index.rarity(text)
        others = {other: chunks for other in rarity if (chunks := self.snapshot.searchable_chunks(other)).size}
        beside = {}
        for term in terms:
            chunks = self.snapshot.searchable_chunks(term)
            beside[term] = sum(rarity[other] for other, held in others.items() if other != term and np.intersect1d(chunks, held).size)
        return beside



def rarity_weight(count: int, frequency: int) -> float:
    """A term's rarity among ``count`` chunks when ``frequency`` of them hold it: ln(1 + N / (df + 0.5)), and ln(1 + N)
    for a term no chunk holds (what the store knows nothing of). ``SearchIndex.rarity`` and its kin weigh by it."""
    return float(np.log1p(count / (frequency + 0.5))) if frequency else float(np.log1p(count))

class SearchIndex:
    """A store's search index with its in-memory copy, shared within a process."""

    _by_path: dict[str, SearchIndex] = {}
    _registry_lock = threading.Lock()

    def __init__(self, store: Store) -> None:
        self.store = store
        self._snapshot = _Snapshot()
        self._stamp: tuple | None = None
        self._lock = threading.Lock()

    @classmethod
    def for_store(cls, store: Store) -> SearchIndex | ServerSearch:
        """The process-wide index of a store file (a PostgreSQL store searches in the server)."""
        if store.searches_in_server:
            return ServerSearch(store)
        key = f"memory:{id(store)}" if store.in_memory else str(store.path.resolve())
        with cls._registry_lock:
            index = cls._by_path.get(key)
            if index is None or index.store.lock_timeout_s != store.lock_timeout_s:
                index = cls._by_path[key] = cls(store)
            return index

    @property
    def stopwords(self) -> frozenset[str]:
        """The stopwords the index leaves out (read from the store once)."""
        return self._current().stopwords

    def rarity(self, text: str) -> dict[str, float]:
        """{search term: inverse document frequency} for the terms of a text, over the searchable chunks;
        a term no chunk holds gets the largest value (ln(1 + N)): it is what the store knows nothing of."""
        snapshot = self._current()
        count = int(snapshot.searchable.sum())
        weights = {}
        for term in analyze(text[:MAX_QUERY_CHARS], snapshot.stopwords):
            frequency = snapshot.searchable_chunks(term).size
            weights[term] = rarity_weight(count, frequency)
        return weights

    def corrections(self, text: str) -> dict[str, str]:
        """{word of the text: search term to read it as} (``corrections``), read from the in-memory copy."""
        return corrections(_SnapshotVocabulary(self, self._current()), text)

    @property
    def reload_count(self) -> int:
        return self._snapshot.full_loads + self._snapshot.incremental_loads

    def _current(self) -> _Snapshot:
        """The in-memory copy, brought up to date if the store changed.

        Every commit rewrites the database file or its write-ahead log, so
        unchanged file stamps mean an unchanged store and no connection is
        opened; otherwise the digest in the store decides.
        """
        with self._lock:
            stamp = _file_stamp(self.store.path)
            if stamp != self._stamp or self._snapshot.digest is None or self.store.in_memory:  # no file to stamp: ask the digest
                with self.store.postings() as reader:
                    self._snapshot.refresh(reader, cache=None if self.store.in_memory else search_cache_path(self.store.path))
                self._stamp = _file_stamp(self.store.path)
            return self._snapshot

    def search(
        self,
        query: str,
        *,
        scope: Scope = "all",
        limit: int = 10,
        preview_chars: int = 400,
        mode: Mode = "auto",
        embedder: Embedder | None = None,
    ) -> SearchResult:
        """Search chunks in scope: all terms first, any term when none has all.

        ``mode="all"`` never widens; ``mode="any"`` ranks every chunk with any term.
        With an ``embedder`` whose vectors are stored, the BM25 ranking is fused
        with embedding similarity (reciprocal rank fusion), and a query with no
        lexical match shows the chunks closest in meaning, saying so.
        """
        if scope not in SCOPES:
            msg = f"unknown search scope {scope!r}; use one of {', '.join(SCOPES)}"
            raise ValueError(msg)
        limit = max(int(limit), 0)
        snapshot = self._current()
        if embedder is not None and snapshot.embedding_model != embedder.name:
            with self._lock, self.store.postings() as reader:
                snapshot.want_vectors(reader, embedder.name)
        terms = analyze((query or "")[:MAX_QUERY_CHARS], snapshot.stopwords)
        mask = snapshot.in_scope(scope)
        total_count = int(mask.sum())
        if not terms:
            return SearchResult(query=query, terms=(), scope=scope, total_count=total_count)
        scores, matched = snapshot.score(terms)
        strict = mask & (matched == len(terms))
        widened = mode == "any" or (mode == "auto" and not strict.any())
        selected = mask & (matched > 0) if widened else strict
        matched_count = int(selected.sum())
        positions = np.flatnonzero(selected)
        depth = max(limit, FUSION_DEPTH) if embedder else limit
        lexical = positions[_top(scores[positions], depth)]
        filled = 0
        if mode == "auto" and not widened and len(lexical) < depth:  # all-term matches first, then the best of the rest fill the places
            rest = np.flatnonzero(mask & (matched > 0) & ~strict)
            extra = rest[_top(scores[rest], depth - len(lexical))]
            filled = len(extra)
            lexical = np.concatenate([lexical, extra])
        hybrid = embedder is not None and snapshot.vectors is not None and bool((mask & snapshot.has_vector).any())
        if hybrid:
            query_vector = embedder.encode([query[:MAX_QUERY_CHARS]])[0]
            candidates = np.flatnonzero(mask & snapshot.has_vector)
            similarity = snapshot.vectors[candidates] @ query_vector
            dense = candidates[_top(similarity, FUSION_DEPTH)]
            fused = _reciprocal_rank_fusion([lexical, dense])
            hits = tuple(snapshot.hit(position, fused_score, preview_chars) for position, fused_score in fused[:limit])
        else:
            chosen = lexical[:limit]
            hits = tuple(snapshot.hit(int(position), float(scores[position]), preview_chars) for position in chosen)
        return SearchResult(
            query=query,
            terms=tuple(terms),
            scope=scope,
            hits=hits,
            matched_count=matched_count,
            total_count=total_count,
            widened=_reports_widening(widened, terms, mode, matched_count),
            ranking="hybrid" if hybrid else "bm25",
            filled=min(filled, max(limit - int(strict.sum()), 0)) if not hybrid else 0,
        )


class _ServerVocabulary:
    """``corrections``' questions asked of a PostgreSQL store, in the server: words are counted by the server's
    analyzer, so a word is held when its own count is not zero; nothing is asked for a question with no word to
    correct."""

    def __init__(self, search: ServerSearch) -> None:
        self.search, self.store, self.stopwords = search, search.store, search.stopwords

    def held(self, word: str, term: str) -> bool:
        return bool(self.store.term_document_counts([word]).get(word))

    def slips(self, word: str, term: str) -> dict[str, int]:
        return self.store.lexeme_document_counts(sorted(one_slip(term, _LETTERS | set(word))))

    def counts(self, terms: dict[str, str]) -> dict[str, int]:
        return {known: count or 0 for known, count in self.store.term_document_counts(sorted(terms)).items()}

    def beside(self, terms: Sequence[str], text: str) -> dict[str, float]:
        others = [word for word in dict.fromkeys(WORD.findall(text[:MAX_QUERY_CHARS].lower())) if analyze(word, self.stopwords)]
        shared = self.store.words_beside(terms, others)
        rarity = self.search.rarity(text) if shared else {}
        return {lexeme: sum(rarity.get(analyze(word, self.stopwords)[0], 0.0) for word in words) for lexeme, words in shared.items()}


class ServerSearch:
    """Search of a PostgreSQL store, in the server (``PostgresStore.search_chunks``): the same results,
    readouts and answers' term weights as ``SearchIndex``, without an in-process copy of the index.

    Terms are the server's english analyzer's lexemes (Snowball's Porter stemmer, PostgreSQL's stopword list).
    With an embedder, the server's BM25 ranking is fused with embedding similarity as on the DuckDB path; the
    similarity is computed in this process over the stored vectors (the server has no vector type without an
    extension), which are kept in memory per store and model and brought up to date when the set of embedded
    chunks changes (``_ServerVectors``).
    """

    _vectors: dict[tuple[str, str], _ServerVectors] = {}
    _vectors_lock = threading.Lock()

    def __init__(self, store: Store) -> None:
        self.store = store

    def _vectors_of(self, model: str) -> _ServerVectors:
        with ServerSearch._vectors_lock:
            vectors = ServerSearch._vectors.get((self.store.url, model))
            if vectors is None:
                vectors = ServerSearch._vectors[(self.store.url, model)] = _ServerVectors(model)
        vectors.refresh(self.store)
        return vectors

    @property
    def stopwords(self) -> frozenset[str]:
        return _english_stopwords()

    def rarity(self, text: str) -> dict[str, float]:
        """As ``SearchIndex.rarity``: {search term: ln(1 + N / (df + 0.5))}, ln(1 + N) for a term no chunk holds.
        Keys are this package's terms (``analyze``); document frequencies come from the server."""
        text = text[:MAX_QUERY_CHARS]
        words = {word: terms[0] for word in dict.fromkeys(WORD.findall(text.lower())) if (terms := analyze(word, self.stopwords))}
        counts = self.store.term_document_counts(list(words))
        count = self.store.searchable_count()
        weights: dict[str, float] = {}
        for word, term in words.items():
            frequency = counts.get(word)
            if frequency is None:  # a stopword to the server's analyzer
                continue
            weight = rarity_weight(count, frequency)
            weights[term] = max(weights.get(term, 0.0), weight)
        return weights

    def corrections(self, text: str) -> dict[str, str]:
        """As ``SearchIndex.corrections`` (``corrections``), with the candidates' frequencies counted in the server."""
        return corrections(_ServerVocabulary(self), text)

    def search(self, query: str, *, scope: Scope = "all", limit: int = 10, preview_chars: int = 400, mode: Mode = "auto",
               embedder: Embedder | None = None, ranking: str = "bm25") -> SearchResult:
        """See ``SearchIndex.search``: the same cases, readouts and fusion with an embedder's similarity."""
        if scope not in SCOPES:
            msg = f"unknown search scope {scope!r}; use one of {', '.join(SCOPES)}"
            raise ValueError(msg)
        limit = max(int(limit), 0)
        vectors = self._vectors_of(embedder.name) if embedder is not None else None
        hybrid = vectors is not None and vectors.any_in(scope)
        depth = max(limit, FUSION_DEPTH) if hybrid else limit
        found = self.store.search_chunks(self._prepared(query), scope=scope, limit=depth, mode=mode,
                                         preview_chars=preview_chars, ranking=ranking)
        hybrid = hybrid and bool(found.terms)  # no searchable terms: nothing is searched, as on the DuckDB path
        lexical = list(found.hits)
        if hybrid:
            query_vector = embedder.encode([(query or "")[:MAX_QUERY_CHARS]])[0]
            dense = self._closest(vectors, query_vector, scope, preview_chars)
            rows = {hit.chunk_id: hit for hit in [*dense, *lexical]}
            fused = _reciprocal_rank_fusion([np.array([hit.chunk_id for hit in lexical], dtype=np.int64),
                                             np.array([hit.chunk_id for hit in dense], dtype=np.int64)])
            chosen = [(rows[chunk_id], score) for chunk_id, score in fused[:limit]]
        else:
            chosen = [(hit, float(hit.score)) for hit in lexical[:limit]]
        hits = tuple(
            Hit(chunk_id=hit.chunk_id, document_id=hit.document_id, path=hit.path, title=hit.title, kind="wiki" if hit.is_wiki else "source",
                page=hit.page, breadcrumb=tuple(part for part in hit.breadcrumb.split(BREADCRUMB_SEPARATOR) if part),
                score=float(score), preview=preview(hit.preview, preview_chars), stale=hit.stale)
            for hit, score in chosen
        )
        return SearchResult(
            query=query, terms=found.terms, scope=scope, hits=hits, matched_count=found.matched_count, total_count=found.total_count,
            widened=_reports_widening(found.widened, found.terms, mode, found.matched_count),
            ranking="hybrid" if hybrid else "bm25",
            filled=0 if hybrid else found.filled,  # at most the places the all-term matches left
        )

    def _closest(self, vectors: _ServerVectors, query_vector: np.ndarray, scope: str, preview_chars: int) -> list:
        """The FUSION_DEPTH searchable chunks in scope closest to the query vector, closest first, as display rows.
        The server says which are searchable (a document may have failed since its vectors were read): a
        candidate it leaves out is replaced by the next closest."""
        closest: list = []
        start, end = 0, FUSION_DEPTH
        while len(closest) < FUSION_DEPTH:
            order = vectors.ranked(query_vector, scope, end)
            if start >= len(order):
                break
            ids = [int(chunk_id) for chunk_id in vectors.chunk_ids[order[start:end]]]
            rows = self.store.chunk_hits(ids, scope=scope, preview_chars=preview_chars)
            closest += [rows[chunk_id] for chunk_id in ids if chunk_id in rows]
            start, end = end, end * 4
        return closest[:FUSION_DEPTH]


    def _prepared(self, query: str) -> str:
        """The query as the server should read it: thousands separators dropped and this package's stopwords
        taken out (its list is longer than PostgreSQL's), so both stores find the same searchable terms;
        quotes and minus signs stay for ``websearch_to_tsquery``."""
        text = _without_thousands_separators((query or "")[:MAX_QUERY_CHARS].replace("\x00", " "))
        stopwords = self.stopwords
        return WORD.sub(lambda match: " " if match.group().lower() in stopwords else match.group(), text)


class _ServerVectors:
    """One model's stored vectors of a PostgreSQL store, in memory: (chunk ids, is wiki, unit rows).

    ``refresh`` asks the server for the (count, sum, max) of the embedded chunk ids, one index scan, and only
    when that changed reads the ids again and the vectors of the chunks it does not hold yet.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self.signature: tuple[int, int, int] | None = None
        self.chunk_ids = np.zeros(0, dtype=np.int64)
        self.is_wiki = np.zeros(0, dtype=bool)
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self._lock = threading.Lock()

    def refresh(self, store: Store) -> None:
        with self._lock:
            signature = store.embedding_signature(self.model)
            if signature == self.signature:
                return
            current = np.asarray(store.embedding_chunk_ids(self.model), dtype=np.int64)
            kept = np.isin(self.chunk_ids, current)
            new = [int(chunk_id) for chunk_id in np.setdiff1d(current, self.chunk_ids)]
            rows = store.embeddings(self.model, new)
            ids = np.concatenate([self.chunk_ids[kept], np.asarray([row[0] for row in rows], dtype=np.int64)])
            wiki = np.concatenate([self.is_wiki[kept], np.asarray([row[1] for row in rows], dtype=bool)])
            parts = ([self.matrix[kept]] if kept.any() else []) + ([np.stack([row[2] for row in rows])] if rows else [])
            matrix = np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)
            order = np.argsort(ids, kind="stable")
            self.chunk_ids, self.is_wiki, self.matrix = ids[order], wiki[order], matrix[order]
            self.signature = signature

    def _in_scope(self, scope: str) -> np.ndarray:
        return {"wiki": self.is_wiki, "sources": ~self.is_wiki, "all": np.ones(len(self.is_wiki), dtype=bool)}[scope]

    def any_in(self, scope: str) -> bool:
        return bool(self._in_scope(scope).any())

    def ranked(self, query_vector: np.ndarray, scope: str, limit: int) -> np.ndarray:
        """The limit rows in scope most similar to the query vector, most similar first (ties by chunk id)."""
        rows = np.flatnonzero(self._in_scope(scope))
        if not len(rows) or self.matrix.shape[1] != len(query_vector):
            return np.zeros(0, dtype=np.int64)
        return rows[_top(self.matrix[rows] @ query_vector, limit)]


@functools.cache
def _english_stopwords() -> frozenset[str]:
    """DuckDB FTS's English stopword list (what the DuckDB store leaves out), read once per process."""
    from llmwiki.store.duckdb_store import fts_english_stopwords

    return frozenset(fts_english_stopwords())


def preview(text: str, preview_chars: int) -> str:
    """The text on one line, cut to preview_chars with an ellipsis."""
    text = " ".join(text.split())
    return text[: preview_chars - 1].rstrip() + "…" if len(text) > preview_chars else text


def _reports_widening(widened: bool, terms, mode: str, matched_count: int) -> bool:
    """Whether a readout says the search widened: only an automatic widening of a query of several
    terms that then matched something (one term cannot be widened; "any" was asked for)."""
    return widened and len(terms) > 1 and mode == "auto" and matched_count > 0


def _reciprocal_rank_fusion(rankings: list[np.ndarray]) -> list[tuple[int, float]]:
    """(position, fused score) ordered by the sum of 1 / (k + rank) over the rankings."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, position in enumerate(ranking.tolist()):
            scores[position] = scores.get(position, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _top(scores: np.ndarray, limit: int) -> np.ndarray:
    """Indices of the highest scores, best first; ties keep index order."""
    if limit <= 0 or len(scores) == 0:
        return np.zeros(0, dtype=np.int64)
    if len(scores) > limit:
        candidates = np.argpartition(-scores, limit - 1)[:limit]
    else:
        candidates = np.arange(len(scores))
    return candidates[np.lexsort((candidates, -scores[candidates]))]


def search(workspace: Workspace, query: str, *, scope: Scope = "all", limit: int | None = None, mode: Mode = "auto",
           embedder: Embedder | None = None) -> SearchResult:
    """Search a workspace's chunks; see SearchIndex.search. embedder: the hybrid ranking's chunk embedder
    (``Services.embedder``: None when [retrieval] hybrid is off), None for BM25 alone."""
    retrieval = workspace.config.retrieval
    return SearchIndex.for_store(workspace.store).search(
        query,
        scope=scope,
        limit=retrieval.search_limit if limit is None else limit,
        preview_chars=retrieval.preview_chars,
        mode=mode,
        embedder=embedder,
    )
