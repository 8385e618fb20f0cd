"""Page verification: every sentence of a page scored against its sources.

1. Split the body into segments (``llmwiki.text.segment``): every prose sentence,
   of paragraphs and list items, under any heading, is scored; headings, code,
   tables, link lists, citation definitions and comments are not claims and are
   counted as not checked (``not_checked``), never dropped silently. Each
   sentence keeps its offsets in the body, and its ``[c12]`` markers are
   removed before scoring.
2. The page's context is the chunks of the sources named in its frontmatter
   and of the documents it cites in the store (a page that cites nothing is
   checked against every source, limited by relevance).
3. Premises are pruned per sentence: the chunks sharing most terms with it,
   then windows of one to three sentences inside them, so the model sees a
   few pairs per sentence instead of every chunk (``premise_pairs``).
4. A sentence's score is the largest P(entailment) over its premises
   (SummaC-ZS style); the largest P(contradiction) is kept too, with the
   best excerpt (whitespace-normalised, at most 300 characters) and where it
   is (document, page, chunk). With an NLI model (``[verification]
   split_claims``), a sentence is cut into clauses, each scored so, and the
   sentence counts as its weakest clause, which is kept for the reviewer.
   A sentence copied word for word from a context chunk is entailed (1.0)
   without a model call.

Nothing is classified in the store: the threshold applies when results are
read. A stored verification whose page body or source hashes changed is
reported outdated; a page whose body and sources are unchanged is not scored
again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import numpy as np

from llmwiki.text.segment import NOT_PROSE_LABELS, segments, sentence_spans
from llmwiki.errors import LlmwikiError
from llmwiki.pages import CITATION, read_page, source_paths
from llmwiki.policy import VERIFY_POLICY
from llmwiki.text import content_words
from llmwiki.verify.calibrate import load_calibration, sentence_features
from llmwiki.text.facts import check_facts, name_words
from llmwiki.workspace import Workspace

EXCERPT_CHARS = 300
WORKSPACE_CALIBRATION = "calibration.json"  # in .llmwiki/: refitted on this workspace's reviewer verdicts (llmwiki.review)
MAX_CONTEXT_CHUNKS = 200
# A citation mark however it is numbered: "[c-1]" and "[c0]" are marks too (never read as the number 1 or 0).
_CITATION_MARK = re.compile(r"\[c(-?\d+)\](?!\()")
_CLAUSE_BREAK = re.compile(r"[,;]?\s+(?:and|but|while|which|who|whereas|although)\s+|[,;]\s+")
MIN_CLAUSE_WORDS = 4


class VerificationError(LlmwikiError):
    """A page could not be verified."""


@dataclass(frozen=True)
class PageSentence:
    text: str  # as scored: citation markers removed, whitespace normalised
    start: int
    end: int


@dataclass(frozen=True)
class SentenceScore:
    sentence: str
    start: int
    end: int
    p_entailment: float
    p_contradiction: float
    excerpt: str | None
    excerpt_path: str | None
    excerpt_page: int | None
    excerpt_chunk_id: int | None
    weakest_clause: str | None = None  # when the sentence was scored clause by clause: the clause its score is from
    score: float | None = None  # calibrated P(supported) from the NLI probability and the fact checks; None: stored before them
    reason: str | None = None  # the failed fact checks, e.g. "names not in the excerpt: Ferihegy"
    flagged: tuple[str, ...] = ()  # the sentence's words behind them, for highlighting
    features: tuple[float, ...] | None = None  # the calibration's inputs (calibrate.FEATURES); None: copied word for word, or stored before them

    @property
    def value(self) -> float:
        """The score a threshold applies to: calibrated where stored, else the raw P(entailment)."""
        return self.p_entailment if self.score is None else self.score

    def supported(self, threshold: float) -> bool:
        return self.value >= threshold

    def why(self, threshold: float) -> str | None:
        """Why the sentence is not supported at this threshold, in words a reviewer can act on; None when it is."""
        if self.supported(threshold):
            return None
        if self.reason:
            return self.reason
        if self.p_contradiction >= 0.5 and self.p_contradiction > self.p_entailment:
            return f"the excerpt contradicts it (P(contradiction) {self.p_contradiction:.2f})"
        return f"the excerpt does not entail it (P(entailment) {self.p_entailment:.2f})"


@dataclass(frozen=True)
class PageVerification:
    page: str
    model: str
    sentences: tuple[SentenceScore, ...]
    body_hash: str
    source_hashes: dict
    finished_at: datetime | None = None
    outdated: bool = False
    reused: bool = False
    pairs_scored: int = 0
    method: str = "sentence"  # "clauses": each sentence scored as its weakest clause (see clauses)
    unknown_citations: tuple[str, ...] = ()  # marks that name no stored chunk ("[c999999]", "[c0]", "[c-1]")
    not_checked: tuple[tuple[str, int], ...] = ()  # what the page holds that is not a claim: ("code", 2), ("links", 5), ...

    @property
    def missing_sources(self) -> list[str]:
        """Sources the page names that were not in the store when it was verified."""
        return [path for path, digest in self.source_hashes.items() if digest is None]

    def supported_share(self, threshold: float) -> float:
        if not self.sentences:
            return 0.0
        return sum(sentence.supported(threshold) for sentence in self.sentences) / len(self.sentences)

    def as_json(self, threshold: float) -> dict:
        """The page's verification as plain data (``llmwiki verify --json``): each sentence as written on the
        page, its verdict at the threshold, the calibrated score, the raw NLI probability, the reason and the best excerpt."""
        return {
            "page": self.page, "model": self.model, "method": self.method, "threshold": threshold, "outdated": self.outdated,
            "rescored": not self.reused, "missing_sources": self.missing_sources, "unknown_citations": list(self.unknown_citations),
            "not_checked": dict(self.not_checked),
            "supported_share": round(self.supported_share(threshold), 4),
            "sentences": [
                {"text": sentence.sentence, "start": sentence.start, "end": sentence.end, "supported": sentence.supported(threshold),
                 "score": round(sentence.value, 4), "p_entailment": round(sentence.p_entailment, 4), "p_contradiction": round(sentence.p_contradiction, 4),
                 "reason": sentence.why(threshold), "flagged": list(sentence.flagged), "weakest_clause": sentence.weakest_clause,
                 "excerpt": {"text": sentence.excerpt, "path": sentence.excerpt_path, "page": sentence.excerpt_page, "chunk_id": sentence.excerpt_chunk_id}}
                for sentence in self.sentences
            ],
        }


_LINT_BLOCK = re.compile(r"<!-- llmwiki:lint .*?<!-- /llmwiki:lint -->", re.DOTALL)


def _claims_only(body: str) -> str:
    """The body with lint's notes (not claims of the page) blanked, offsets kept."""
    return _LINT_BLOCK.sub(lambda match: re.sub(r"[^\n]", " ", match.group(0)), body)


def page_sentences(body: str) -> list[PageSentence]:
    """The sentences of a page body that make claims, with their offsets: every prose sentence, of paragraphs and list
    items alike, under any heading. Headings, code, tables, link lists, citation definitions and comments are not
    claims (``not_checked`` counts them)."""
    body = _claims_only(body)
    sentences = []
    for segment in segments(body):
        if not segment.is_prose:
            continue
        cleaned = " ".join(_CITATION_MARK.sub("", body[segment.start:segment.end]).split())
        if len(cleaned.split()) >= 3 and any(char.isalpha() for char in cleaned):
            sentences.append(PageSentence(text=cleaned, start=segment.start, end=segment.end))
    return sentences


def not_checked(body: str) -> dict[str, int]:
    """What a page holds that verification does not score, by what it is ("code": 2, "table": 5 rows, "links": 3, ...):
    a reader of a page's counts sees what was left out and why."""
    counts: dict[str, int] = {}
    body = _claims_only(body)
    for segment in segments(body):
        if segment.is_prose:
            cleaned = " ".join(_CITATION_MARK.sub("", body[segment.start:segment.end]).split())
            label = None if len(cleaned.split()) >= 3 and any(char.isalpha() for char in cleaned) else "too short to be a claim"
        else:
            label = NOT_PROSE_LABELS.get(segment.kind)
        if label and label not in ("headings", "comments"):
            counts[label] = counts.get(label, 0) + 1
    return counts


@lru_cache(maxsize=65536)
def _terms(text: str) -> frozenset[str]:
    return content_words(text)


@lru_cache(maxsize=4096)
def _windows(text: str) -> tuple[str, ...]:
    """Windows of one to three consecutive sentences of a chunk (cached: each clause of a page looks at the same chunks)."""
    sentences = [" ".join(text[start:end].split()) for start, end in sentence_spans(CITATION.sub("", text))]
    sentences = [sentence for sentence in sentences if sentence]
    windows = []
    for size in (1, 2, 3):
        for index in range(len(sentences) - size + 1):
            windows.append(" ".join(sentences[index:index + size]))
    return tuple(windows) or (" ".join(text.split()),)


def prune_premises(sentence: str, chunks: Sequence[tuple[int, str, int, str]], *, top_chunks: int = 3, top_windows: int = 8) -> list[tuple[str, tuple[int, str, int]]]:
    """The premise windows most likely to support a sentence: (window, (chunk id, path, page))."""
    terms = _terms(sentence)
    if not chunks:
        return []
    ranked = sorted(chunks, key=lambda chunk: -len(terms & _terms(chunk[3])))[:top_chunks]
    candidates = []
    for chunk_id, path, page, text in ranked:
        for window in _windows(text):
            overlap = len(terms & _terms(window))
            candidates.append((overlap, -len(window), window, (chunk_id, path, page)))
    candidates.sort(key=lambda item: (-item[0], -item[1]))
    return [(window, where) for _, _, window, where in candidates[:top_windows]]


def clauses(sentence: str) -> list[str]:
    """A sentence cut at commas, semicolons and conjunctions into clauses of at least four words.

    A small NLI model checks one fact against a few sentences of evidence far
    better than a sentence holding several (MODEL.md); a sentence is then as
    supported as its weakest clause. Short pieces (list items, appositions)
    join their neighbour, so a sentence without clauses stays whole.
    """
    pieces = [piece.strip() for piece in _CLAUSE_BREAK.split(sentence.rstrip(".")) if piece.strip()]
    merged: list[str] = []
    for piece in pieces:
        if merged and len(piece.split()) < MIN_CLAUSE_WORDS:
            merged[-1] += " " + piece
        else:
            merged.append(piece)
    if len(merged) > 1 and len(merged[0].split()) < MIN_CLAUSE_WORDS:
        merged[1] = merged[0] + " " + merged[1]
        del merged[0]
    return merged if len(merged) > 1 else [sentence]


def quote_form(text: str) -> str:
    """Text as quotations are matched: whitespace collapsed, lowercased (a sentence is quoted when
    its quote form is inside a chunk's)."""
    return " ".join(text.split()).lower()


def premise_pairs(parts: Sequence[str], chunks, *, premises_per_sentence: int) -> list[tuple[int, str, tuple]]:
    """(clause index, premise window, where) for a sentence's clauses: the premise budget is
    shared among them (at least 2 windows each), so splitting does not multiply the model's work."""
    per_part = windows_per_clause(premises_per_sentence, len(parts))
    return [(index, window, where) for index, part in enumerate(parts)
            for window, where in prune_premises(part, chunks, top_windows=per_part)]


def windows_per_clause(premises_per_sentence: int, clause_count: int) -> int:
    """A sentence's premise budget shared among its clauses, at least 2 windows each."""
    return max(2, premises_per_sentence // clause_count)


FACT_WINDOWS = 12  # windows a clause's facts are checked against (no model call: cheap)


def _score_sentences(sentences: Sequence[PageSentence], chunks, verifier, *, split: bool, verbatim: bool, premises_per_sentence: int,
                     calibration=None, titles: dict[str, str] | None = None, features_out: dict | None = None,
                     settled_entailment: float | None = VERIFY_POLICY.settled_entailment) -> tuple[list[SentenceScore], int]:
    """(a score per sentence, model pairs scored).

    A sentence found word for word in a context chunk is entailed (1.0)
    without a model call. The others: each clause (the whole sentence unless
    split) gets its best premise's P(entailment) from the model and a fact
    check against its anchor window (``facts.check_facts``). The sentence's
    features are its weakest clause's P(entailment), any fact failed in any
    clause, and the lowest coverage (``calibrate.sentence_features``); the
    calibration turns them into its score. features_out, when given, gets
    {sentence index: features} for the sentences the model scored (fitting).
    """
    calibration = calibration or load_calibration(verifier.name)
    titles = titles or {}
    normalised = [(quote_form(text), (chunk_id, path, page)) for chunk_id, path, page, text in chunks]
    chunk_texts = {chunk_id: text for chunk_id, _, _, text in chunks}
    names = name_words(chunk_texts.values())
    scores: list[SentenceScore | None] = [None] * len(sentences)
    parts: dict[int, list[str]] = {}
    rows_features: dict[int, list[float]] = {}
    candidates: dict[tuple[int, int], list] = {}  # (sentence, clause) -> its premise windows, best first
    for index, sentence in enumerate(sentences):
        needle = quote_form(sentence.text)
        copied = next((where for text, where in normalised if needle in text), None) if verbatim else None
        if copied is not None:
            scores[index] = SentenceScore(sentence.text, sentence.start, sentence.end, 1.0, 0.0, sentence.text[:EXCERPT_CHARS], copied[1], copied[2], copied[0], score=1.0)
            continue
        parts[index] = clauses(sentence.text) if split else [sentence.text]
        per_part = windows_per_clause(premises_per_sentence, len(parts[index]))
        for part_index, part in enumerate(parts[index]):
            # One ranking per clause: the model sees its first windows, the fact checks all FACT_WINDOWS
            # (premise_pairs would rank the same windows again).
            candidates[(index, part_index)] = prune_premises(part, chunks, top_windows=max(FACT_WINDOWS, per_part))
    # Each clause's best-ranked window first; a clause it entails (P >= settled_entailment) is not scored against
    # the rest, which for a supported page is most of the model's work.
    pairs = [(index, part, *windows[0]) for (index, part), windows in candidates.items()]
    probabilities = _score_pairs(verifier, pairs, parts)
    unsettled = [pair[:2] for pair, row in zip(pairs, probabilities) if settled_entailment is None or row[0] < settled_entailment]
    more = [(index, part, window, where) for index, part in unsettled
            for window, where in candidates[(index, part)][1:windows_per_clause(premises_per_sentence, len(parts[index]))]]
    pairs += more
    probabilities = np.concatenate([probabilities, _score_pairs(verifier, more, parts)])
    rows_of: dict[tuple[int, int], list[int]] = {}
    for row, (index, part, _, _) in enumerate(pairs):
        rows_of.setdefault((index, part), []).append(row)
    for index, sentence_parts in parts.items():  # every clause has premises: the context is never empty
        sentence = sentences[index]
        judged = []  # per clause: (p_entailment, p_contradiction, best window, where, check, anchor window, anchor where)
        for part, text in enumerate(sentence_parts):
            rows = rows_of[(index, part)]
            best = max(rows, key=lambda row: probabilities[row, 0])
            windows = candidates[(index, part)]
            check = check_facts(text, [window for window, _ in windows], names=names,
                                contexts=[f"{titles.get(where[1], '')}. {chunk_texts[where[0]]}" for _, where in windows])
            judged.append((float(probabilities[best, 0]), float(max(probabilities[row, 2] for row in rows)), pairs[best][2], pairs[best][3],
                           check, *windows[check.anchor_index]))
        weakest = min(range(len(judged)), key=lambda part: judged[part][0])
        failed = [item for item in judged if item[4].failed]
        _, _, window, where, _, _, _ = judged[weakest]
        if failed:  # the reviewer sees the window the failed facts were checked against
            window, where = failed[0][5], failed[0][6]
        values = sentence_features([(item[0], item[1], item[4]) for item in judged])
        rows_features[index] = values
        scores[index] = SentenceScore(
            sentence=sentence.text, start=sentence.start, end=sentence.end,
            p_entailment=judged[weakest][0], p_contradiction=max(item[1] for item in judged),
            excerpt=" ".join(window.split())[:EXCERPT_CHARS], excerpt_path=where[1], excerpt_page=where[2], excerpt_chunk_id=where[0],
            weakest_clause=sentence_parts[weakest] if len(sentence_parts) > 1 else None,
            score=calibration.score(values), reason="; ".join(dict.fromkeys(item[4].reason() for item in failed)) or None,
            flagged=tuple(dict.fromkeys(word for item in failed for word in item[4].flagged_words)), features=tuple(values),
        )
    if features_out is not None:
        features_out.update(rows_features)
    return scores, len(pairs)


def _score_pairs(verifier, pairs: Sequence[tuple[int, int, str, tuple]], parts: dict[int, list[str]]) -> np.ndarray:
    """The model's (n, 3) probabilities for (sentence, clause, premise window, where) pairs."""
    if not pairs:
        return np.zeros((0, 3))
    return verifier.score([window for _, _, window, _ in pairs], [parts[index][part] for index, part, _, _ in pairs])


_MISTYPED_MARK = re.compile(r"\[c[a-z][a-z0-9]{0,7}\](?![(:])")  # "[cabc]" on a page that cites: a mark, mistyped


def unknown_citations(workspace: Workspace, body: str) -> tuple[str, ...]:
    """The citation marks of a page body that name no stored chunk, each once, as written: "[c999999]", "[c0]", and on a
    page that cites passages, a mark with no number ("[cabc]")."""
    marks = {f"[c{number}]": int(number) for number in _CITATION_MARK.findall(body)}
    known = workspace.store.citation_targets([number for number in marks.values() if number > 0])
    unknown = [mark for mark, number in marks.items() if number not in known]
    if marks:
        unknown += list(dict.fromkeys(_MISTYPED_MARK.findall(body)))
    return tuple(unknown)


def body_hash(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def _context(workspace: Workspace, page) -> tuple[list[tuple[int, str, int, str]], dict, dict[str, str]]:
    """Context chunks (id, path, page, text), {source path: content hash, None when it is missing}
    and {source path: title}.

    A page that names no source is checked against every source; one whose
    named sources are all missing cannot be verified.
    """
    store = workspace.store
    paths = source_paths(page.meta)
    document = store.document_by_path(page.path)
    if document is not None:
        paths += [target for kind, target in store.references(document.id) if kind == "cites"]
    named = {path: store.document_by_path(path) for path in dict.fromkeys(paths) if path != page.path}
    missing = [path for path, doc in named.items() if doc is None]
    documents = [doc for doc in named.values() if doc is not None]
    if named and not documents:
        raise VerificationError(f"{page.path}: its sources are not in the store ({', '.join(missing)}: deleted, withdrawn or never ingested). "
                                "Ingest them again, or edit the page's sources; then verify again.")
    if not named:
        documents = [doc for doc in store.documents(kind="source") if doc.status == "ready"]
    hashes = {doc.path: doc.read_as for doc in documents} | dict.fromkeys(missing)
    chunks = []
    for doc in documents:
        chunks += [(chunk.id, doc.path, chunk.page_number, chunk.text) for chunk in store.chunks(doc.id)]
    if len(chunks) > MAX_CONTEXT_CHUNKS:
        terms = _terms(page.body)
        chunks = sorted(chunks, key=lambda chunk: -len(terms & _terms(chunk[3])))[:MAX_CONTEXT_CHUNKS]
    return chunks, hashes, {doc.path: doc.title or "" for doc in documents}


def workspace_calibration(workspace: Workspace, model: str):
    """The calibration this workspace's reviewers refitted for a verifier (``llmwiki verify --recalibrate``), else the shipped one."""
    from llmwiki.verify.calibrate import Calibration

    own = load_calibration(model, workspace.state_dir / WORKSPACE_CALIBRATION)
    return own if isinstance(own, Calibration) else load_calibration(model)


def splits_clauses(workspace: Workspace, verifier) -> bool:
    """Whether sentences are scored clause by clause: [verification] split_claims, where "auto" means for NLI models."""
    setting = workspace.config.verification.split_claims
    return setting == "always" or (setting == "auto" and getattr(verifier, "prefers_clauses", False))


def verify_page(workspace: Workspace, page_path: str, verifier, *, force: bool = False, premises_per_sentence: int = 8, verbatim: bool = True,
                settled_entailment: float | None = VERIFY_POLICY.settled_entailment) -> PageVerification:
    """Score every sentence of a page against its sources and store the result.

    An unchanged page (same body, same source hashes, same model and method)
    is not scored again unless force is set. verbatim=False sends sentences
    copied word for word from a source through the model too (benchmarks);
    settled_entailment=None scores every clause against all its windows (benchmarks).
    """
    store = workspace.store
    try:
        page = read_page(workspace.root, page_path)
    except LlmwikiError as err:
        raise VerificationError(str(err)) from err
    with store.session():  # one connection for the lookups; none is held while the model runs
        document = store.document_by_path(page_path)
        if document is None:
            raise VerificationError(f"{page_path}: the page is not indexed (written by hand?). Bring it in with `llmwiki ingest {page_path} -w {workspace.root}`, then verify it.")
        digest = body_hash(page.body)
        chunks, hashes, titles = _context(workspace, page)
        if not chunks:
            raise VerificationError(f"{page_path}: no source context could be resolved (its sources are missing or not ingested). Ingest its sources, then verify again.")
        stored = load_verification(workspace, page_path)
        unknown = unknown_citations(workspace, page.body)
    split = splits_clauses(workspace, verifier)
    method = "clauses" if split else "sentence"
    if stored is not None and not force and stored.model == verifier.name and stored.method == method and not stored.outdated:
        return PageVerification(**{**stored.__dict__, "reused": True, "pairs_scored": 0})
    sentences = page_sentences(page.body)
    if not sentences:
        raise VerificationError(f"{page_path}: the page has no sentences to verify (only headings, lists, tables or code).")
    started = datetime.now()
    scores, pairs_scored = _score_sentences(sentences, chunks, verifier, split=split, verbatim=verbatim, premises_per_sentence=premises_per_sentence, titles=titles,
                                           calibration=workspace_calibration(workspace, verifier.name), settled_entailment=settled_entailment)
    result = PageVerification(page=page_path, model=verifier.name, sentences=tuple(scores), body_hash=digest, source_hashes=hashes,
                              finished_at=datetime.now(), pairs_scored=pairs_scored, method=method, unknown_citations=unknown,
                              not_checked=tuple(not_checked(page.body).items()))
    store.save_verification(document.id, body_hash=digest, source_hashes=json.dumps(hashes, sort_keys=True), model=verifier.name,
                            threshold=workspace.config.verification.threshold, started_at=started, scores=scores, method=method)
    return result


def verify_text(workspace: Workspace, text: str, verifier, *, sources: Sequence[str] | None = None) -> list[SentenceScore]:
    """Score any text (a paragraph an agent drafted), sentence by sentence, against the workspace's sources (or
    the named ones): the sources' chunks that share most words with the text (MAX_CONTEXT_CHUNKS), as for a page
    that names no source. Nothing is stored. VerificationError when there is nothing to verify against."""
    store = workspace.store
    with store.session():
        documents = [doc for doc in store.documents(kind="source") if doc.status == "ready" and (sources is None or doc.path in sources)]
        chunks = [(chunk.id, doc.path, chunk.page_number, chunk.text) for doc in documents for chunk in store.chunks(doc.id)]
    if not chunks:
        raise VerificationError("the workspace holds no ingested source to verify against. Ingest sources first (`llmwiki ingest`).")
    if len(chunks) > MAX_CONTEXT_CHUNKS:
        terms = _terms(text)
        chunks = sorted(chunks, key=lambda chunk: -len(terms & _terms(chunk[3])))[:MAX_CONTEXT_CHUNKS]
    sentences = page_sentences(text)
    if not sentences:
        raise VerificationError("the text has no sentence to verify (a sentence is three words or more).")
    titles = {doc.path: doc.title or "" for doc in documents}
    scores, _ = _score_sentences(sentences, chunks, verifier, split=splits_clauses(workspace, verifier), verbatim=True,
                                 premises_per_sentence=workspace.config.verification.premises_per_sentence, titles=titles,
                                 calibration=workspace_calibration(workspace, verifier.name))
    return scores


def load_verification(workspace: Workspace, page_path: str) -> PageVerification | None:
    """The stored verification of a page, marked outdated when its page or sources changed."""
    store = workspace.store
    document = store.document_by_path(page_path)
    if document is None:
        return None
    row = store.latest_verification(document.id)
    if row is None:
        return None
    header, sentence_rows = row
    stored_hashes = json.loads(header["source_hashes"])
    outdated = False
    unknown: tuple[str, ...] = ()
    left_out: tuple[tuple[str, int], ...] = ()
    sentences = tuple(SentenceScore(**sentence) for sentence in sentence_rows)
    try:
        page = read_page(workspace.root, page_path)
        # Outdated when the body changed, or when the page's claims as read today are not the sentences scored then
        # (a verification made before a sentence under some heading was read as a claim).
        outdated = body_hash(page.body) != header["body_hash"] or [claim.text for claim in page_sentences(page.body)] != [score.sentence for score in sentences]
        unknown = unknown_citations(workspace, page.body)
        left_out = tuple(not_checked(page.body).items())
    except LlmwikiError:
        outdated = True
    for path, digest in stored_hashes.items():  # a changed, removed or (once missing) returned source
        current = store.document_by_path(path)
        if (current.read_as if current is not None else None) != digest:
            outdated = True
    return PageVerification(page=page_path, model=header["model"], sentences=sentences, body_hash=header["body_hash"],
                            source_hashes=stored_hashes, finished_at=header["finished_at"], outdated=outdated, method=header["method"] or "sentence",
                            unknown_citations=unknown, not_checked=left_out)


@dataclass(frozen=True)
class SourceAtChunk:
    """Where a sentence's best excerpt sits in its source: the chunk, its neighbours, the excerpt's span."""

    path: str
    page: int
    chunk_id: int
    breadcrumb: str
    text: str
    before: str | None  # the chunk before it in reading order, None at the start of the source
    after: str | None
    excerpt: tuple[int, int] | None  # the best excerpt's span in text; None where it can no longer be found

    def marked(self) -> str:
        """The chunk's text with the excerpt between <mark> tags, for Markdown."""
        return mark(self.text, [self.excerpt] if self.excerpt else [])


def source_at_chunk(workspace: Workspace, sentence: SentenceScore) -> SourceAtChunk | None:
    """The source at the chunk a sentence's best excerpt came from; None when the sentence has no
    excerpt, or its source or chunk is no longer stored (re-ingested since: verify again)."""
    if sentence.excerpt_chunk_id is None or sentence.excerpt_path is None:
        return None
    document = workspace.store.document_by_path(sentence.excerpt_path)
    if document is None:
        return None
    chunks = workspace.store.chunks(document.id)
    position = next((index for index, chunk in enumerate(chunks) if chunk.id == sentence.excerpt_chunk_id), None)
    if position is None:
        return None
    chunk = chunks[position]
    return SourceAtChunk(
        path=sentence.excerpt_path, page=chunk.page_number, chunk_id=sentence.excerpt_chunk_id, breadcrumb=chunk.breadcrumb_text, text=chunk.text,
        before=chunks[position - 1].text if position else None, after=chunks[position + 1].text if position + 1 < len(chunks) else None,
        excerpt=excerpt_span(chunk.text, sentence.excerpt or ""),
    )


def excerpt_span(text: str, excerpt: str) -> tuple[int, int] | None:
    """Where a stored excerpt (whitespace-normalised, cut at EXCERPT_CHARS) sits in a chunk's text."""
    words = excerpt.split()
    if len(excerpt) >= EXCERPT_CHARS:
        words = words[:-1]  # the cut may fall inside the last word
    if not words:
        return None
    match = re.search(r"\s+".join(re.escape(word) for word in words), text)
    return (match.start(), match.end()) if match else None


def flagged_spans(sentence: str, words: Sequence[str]) -> list[tuple[int, int]]:
    """Where the words a fact check flagged (a name, a number) occur in the sentence, as whole words."""
    spans = []
    for word in words:
        spans += [(match.start(), match.end()) for match in re.finditer(rf"(?<![\w]){re.escape(word)}(?![\w])", sentence)]
    return sorted(set(spans))


def mark(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """Text with each (non-overlapping, first wins) span between <mark> tags."""
    out, at = [], 0
    for start, end in sorted(spans):
        if start < at:
            continue
        out += [text[at:start], "<mark>", text[start:end], "</mark>"]
        at = end
    return "".join(out) + text[at:]


def verify_pages(workspace: Workspace, pages: Sequence[str], verifier, *, force: bool = False, on_progress: Callable[[int, int, str], None] | None = None) -> tuple[list[PageVerification], list[tuple[str, str]]]:
    """Verify many pages, continuing past failures: (results, [(page, reason)])."""
    results, failures = [], []
    for done, page in enumerate(pages):
        if on_progress is not None:
            on_progress(done, len(pages), page)
        try:
            results.append(verify_page(workspace, page, verifier, force=force, premises_per_sentence=workspace.config.verification.premises_per_sentence))
        except LlmwikiError as err:
            failures.append((page, str(err)))
    if on_progress is not None:
        on_progress(len(pages), len(pages), "")
    return results, failures


def wiki_pages(workspace: Workspace) -> list[str]:
    """Every verifiable page: summaries, concepts, answers."""
    root = workspace.root
    return sorted(path.relative_to(root).as_posix() for folder in ("wiki/summaries", "wiki/concepts", "wiki/answers") for path in (root / folder).glob("*.md"))


def pages_needing_verification(workspace: Workspace, pages: Sequence[str] | None = None) -> list[str]:
    """The pages (default: every verifiable one) with no stored verification, or an outdated one."""
    return [page for page in (wiki_pages(workspace) if pages is None else pages) if (stored := load_verification(workspace, page)) is None or stored.outdated]
