"""Lint the wiki: what a careful editor would flag, each finding with a severity and a suggested action.

Checks: files and store out of step (error), broken links and citations
(error), stale pages (warning), contradictions between concept pages that
share a source (warning; found by the NLI verifier, confirmed by the LLM when
one is configured), concepts mentioned on several pages without a page of
their own, missing cross-references, orphans and thin pages (info).

Repairs (``repair``) write marked blocks into pages, through the one write
path and in one commit; running them twice changes nothing:

- a contradiction warning block in both pages of a pair;
- a data-gap TODO block where a concept without a page is mentioned, replaced
  by a "See also" link once a page for that concept exists.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from llmwiki.pages import link_target, source_paths, split_frontmatter
from llmwiki.text import CONTENT_WORD, content_words
from llmwiki.verify.page import quote_form, unknown_citations
from llmwiki.services import Services
from llmwiki.workspace import Workspace

SEVERITIES = ("error", "warning", "info")
CONTENT_FOLDERS = ("wiki/summaries", "wiki/concepts", "wiki/answers")
BLOCK = re.compile(r"<!-- llmwiki:lint (?P<kind>contradiction|gap) (?P<key>[0-9a-f]{10})(?: (?P<name>[^>]*?))? -->\n(?P<text>.*?)<!-- /llmwiki:lint -->\n?", re.DOTALL)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_DEFINITION = re.compile(r"^\[[^\]]+\]:\s*(\S+)", re.MULTILINE)
_CITATION = re.compile(r"\s*\[c\d+\]")


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: str
    pages: tuple[str, ...]
    detail: str
    action: str
    sentences: tuple[str, ...] = ()
    score: float | None = None
    confirmed: bool | None = None  # contradictions: the LLM's verdict, None when none was asked
    source_a: str | None = None  # contradictions: the shared source each sentence is quoted from (or rests on)
    source_b: str | None = None
    name: str = ""  # missing-page findings: the concept


@dataclass
class LintReport:
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pairs_scored: int = 0

    def by_severity(self) -> dict[str, int]:
        counts = Counter(finding.severity for finding in self.findings)
        return {severity: counts.get(severity, 0) for severity in SEVERITIES}

    def summary(self) -> str:
        counts = self.by_severity()
        return f"{len(self.findings)} finding(s): " + ", ".join(f"{count} {severity}" for severity, count in counts.items())


@dataclass(frozen=True)
class _Page:
    path: str
    title: str
    meta: dict
    body: str

    @property
    def prose(self) -> str:
        """The body without lint blocks, citation markers, definitions and headings."""
        text = BLOCK.sub("", self.body)
        lines = [line for line in text.splitlines() if not line.lstrip().startswith(("#", "[c", "<!--", "- [", "* ["))]
        return _CITATION.sub("", "\n".join(lines))

    @property
    def sources(self) -> set[str]:
        return set(source_paths(self.meta))


def _pages(root: Path) -> dict[str, _Page]:
    pages = {}
    for folder in CONTENT_FOLDERS:
        for path in sorted((root / folder).glob("*.md")):
            meta, body = split_frontmatter(path.read_text(encoding="utf-8"))
            relative = path.relative_to(root).as_posix()
            pages[relative] = _Page(relative, str(meta.get("title") or path.stem), meta, body)
    return pages


def _resolve(page: str, target: str) -> str | None:
    """The workspace path a relative link points at, or None for external links and anchors."""
    target = link_target(target.split("#", 1)[0])
    if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
        return None
    parts: list[str] = []
    for part in (PurePosixPath(page).parent / target).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _link_to(page: str, target: str) -> str:
    """A relative link from one wiki page to another."""
    return posixpath.relpath(target, posixpath.dirname(page))


def lint(workspace: Workspace, *, services: Services | None = None, on_progress: Callable[[int, int, str], None] | None = None) -> LintReport:
    """Every check. services: the verifier that finds contradictions (loaded only when two pages share words) and the
    backend that confirms them (``llmwiki.services``; by default built from the workspace's settings for this call).

    on_progress(done, total, stage) reports counts stage by stage: "pages" (checked for links,
    cross-references and length), then "sentence pairs" (scored for contradictions by the NLI model).
    """
    from llmwiki.maintain import consistency_problems, stale_pages
    from llmwiki.publish.wiki import pending_sources

    root = workspace.root
    config = workspace.config.lint
    report = LintReport()
    pages = _pages(root)
    linked_from: dict[str, set[str]] = defaultdict(set)

    for problem in consistency_problems(workspace):
        report.findings.append(Finding("inconsistent", "error", (problem.split(":", 1)[0],), problem,
                                       "run `llmwiki ingest` (or `llmwiki restore HEAD` to return to the last commit)"))
    for path, page in pages.items():
        targets = [*_LINK.findall(page.body), *_DEFINITION.findall(page.body)]
        for target in targets:
            resolved = _resolve(path, target)
            if resolved is None:
                continue
            if not (root / resolved).exists():
                report.findings.append(Finding("broken-link", "error", (path,), f"{path} links to {target}, which does not exist",
                                               "remove or correct the link (`llmwiki edit PAGE`)"))
            elif resolved != path:
                linked_from[resolved].add(path)
    with workspace.store.session():
        for path, page in pages.items():
            unknown = unknown_citations(workspace, page.body)
            if unknown:
                report.findings.append(Finding("broken-citation", "error", (path,), f"{path} cites {', '.join(unknown)}, which name no passage in the store",
                                               "cite a passage that exists (`llmwiki search` finds its [cN]) or remove the mark (`llmwiki edit PAGE`)"))
    for document in pending_sources(workspace):
        report.findings.append(Finding("no-summary", "error", (document.path,), f"{document.path} is ingested but has no summary page written from its current version",
                                       "run `llmwiki ingest` (it writes the pages of every source that lacks them)"))
    for page, reason in stale_pages(workspace):
        report.findings.append(Finding("stale", "warning", (page,), f"{page} is stale: {reason}", "regenerate it from its remaining sources (`llmwiki regenerate PAGE`) or edit it; `llmwiki stale --delete` deletes it with what its other sources gave it"))

    concepts = {path: page for path, page in pages.items() if path.startswith("wiki/concepts/")}
    names = {}
    for path, page in concepts.items():
        for name in [page.title, *page.meta.get("aliases", [])]:
            if isinstance(name, str) and len(name) >= 4:
                names[name] = path
    for checked, (path, page) in enumerate(pages.items(), start=1):
        if on_progress:
            on_progress(checked, len(pages), "pages")
        prose = page.prose
        linked = {_resolve(path, link) for link in _LINK.findall(page.body)}
        for name, target in sorted(names.items()):
            if target == path or target in linked:
                continue
            if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", prose):
                report.findings.append(Finding("missing-cross-reference", "info", (path, target), f"{path} mentions {name!r} but does not link to {target}",
                                               f"link it: [{name}]({_link_to(path, target)})"))
    report.findings += _missing_pages(pages, names)
    for path, page in pages.items():
        if not linked_from.get(path):
            report.findings.append(Finding("orphan", "info", (path,), f"no other page links to {path} (only the index lists it)",
                                           "link it from a related concept or summary page"))
        words = len(CONTENT_WORD.findall(page.prose))
        if words < config.thin_words:
            report.findings.append(Finding("thin", "info", (path,), f"{path} has {words} words of prose", "add to it from its sources, or merge it into a related page"))
    report.findings += _recorded(workspace, _contradictions(workspace, concepts, report, services=services or Services(workspace), on_progress=on_progress), report)
    order = {severity: index for index, severity in enumerate(SEVERITIES)}
    report.findings.sort(key=lambda finding: (order[finding.severity], finding.kind, finding.pages))
    return report


def _missing_pages(pages: dict[str, _Page], names: dict[str, str], *, limit: int = 20) -> list[Finding]:
    """Capitalised names on 2+ pages (3+ mentions) that have no concept page."""
    from llmwiki.generate import CAPITALISED, NOT_CONCEPTS

    mentions: Counter[str] = Counter()
    where: dict[str, set[str]] = defaultdict(set)
    known = {name.lower() for name in names} | {page.title.lower() for page in pages.values()}
    for path, page in pages.items():
        prose = page.prose
        for match in CAPITALISED.finditer(prose):
            words = match.group(0).split()
            while words and words[0] in NOT_CONCEPTS:
                words = words[1:]
            name = " ".join(words)
            before = prose[: match.start()].rstrip()
            if len(words) == 1 and (not before or before[-1] in ".!?:\n\"'"):
                continue  # one capitalised word opening a sentence is just a sentence
            if len(name) >= 4 and name.lower() not in known:
                mentions[name] += 1
                where[name].add(path)
    wanted = [(name, count) for name, count in mentions.items() if count >= 3 and len(where[name]) >= 2]
    wanted.sort(key=lambda item: (-len(where[item[0]]), -item[1], item[0]))
    return [
        Finding("missing-page", "info", tuple(sorted(where[name])), f"{name!r} is mentioned {count} times on {len(where[name])} pages but has no page",
                "write a concept page for it (or raise [wiki] concepts_per_source and regenerate); `llmwiki lint --fix` marks the gap", name=name)
        for name, count in wanted[:limit]
    ]


def _sentences(page: _Page) -> list[str]:
    from llmwiki.verify.page import page_sentences

    return [sentence.text for sentence in page_sentences(BLOCK.sub("", page.body))]


def _contradictions(workspace: Workspace, concepts: dict[str, _Page], report: LintReport, *, services: Services, on_progress) -> list[Finding]:
    """Sentence pairs across concept pages sharing a source that the NLI model finds contradictory."""
    config = workspace.config.lint
    pairs: list[tuple[float, str, str, str, str]] = []
    paths = sorted(concepts)
    sentences = {path: _sentences(concepts[path]) for path in paths}
    source_texts = _source_texts(workspace, set().union(*(concepts[path].sources for path in paths)) if paths else set())
    quoted_from = {sentence: _quoting_sources(source_texts, sentence) for path in paths for sentence in sentences[path]}
    for index, first in enumerate(paths):
        for second in paths[index + 1:]:
            shared = concepts[first].sources & concepts[second].sources
            if not shared:
                continue
            for a in sentences[first]:
                words_a = content_words(a)
                for b in sentences[second]:
                    if a == b:
                        continue  # the same source sentence on both pages agrees with itself
                    if quoted_from[a] & quoted_from[b] & shared:
                        continue  # both quote one source: any conflict is the source's, faithfully copied
                    words_b = content_words(b)
                    overlap = len(words_a & words_b) / max(min(len(words_a), len(words_b)), 1)
                    if overlap >= 0.3:  # contradictions talk about the same thing
                        pairs.append((overlap, first, a, second, b))
    if not pairs:
        return []
    verifier = services.verifier
    if not getattr(verifier, "contradictions", False):
        report.notes.append(f"contradictions not checked: the configured verifier ({verifier.name}) is not an NLI model; set [verification] model to one")
        return []
    pairs.sort(key=lambda item: -item[0])
    if len(pairs) > config.max_pairs:
        report.notes.append(f"{len(pairs)} candidate sentence pairs; scored the {config.max_pairs} with most word overlap ([lint] max_pairs)")
        pairs = pairs[: config.max_pairs]
    premises = [pair[2] for pair in pairs] + [pair[4] for pair in pairs]
    hypotheses = [pair[4] for pair in pairs] + [pair[2] for pair in pairs]
    scores = []
    batch = 64
    for start in range(0, len(premises), batch):
        scores.extend(verifier.score(premises[start:start + batch], hypotheses[start:start + batch])[:, 2].tolist())
        if on_progress:
            on_progress(min(start + batch, len(premises)), len(premises), "sentence pairs")
    report.pairs_scored = len(pairs)
    findings = []
    backend = services.backend
    generates = getattr(backend, "generates", False)
    for index, (_, first, a, second, b) in enumerate(pairs):
        score = min(scores[index], scores[index + len(pairs)])  # a contradiction reads both ways; one way alone is often a topic change
        if score < config.contradiction_threshold:
            continue
        confirmed = _confirm(backend, a, b) if generates else None
        severity = "info" if confirmed is False else "warning"
        verdict = {None: "", True: "; the LLM confirms it", False: "; the LLM does not confirm it"}[confirmed]
        shared = sorted(concepts[first].sources & concepts[second].sources)
        source_a = next(iter(sorted(quoted_from[a] & set(shared))), shared[0] if shared else None)
        source_b = next(iter(sorted(quoted_from[b] & set(shared))), shared[0] if shared else None)
        findings.append(Finding("contradiction", severity, (first, second), f"{first} and {second} (which share a source) may contradict each other (P = {score:.2f}{verdict})",
                                "check both against their sources and correct one; `llmwiki lint --fix` writes a warning into both pages",
                                sentences=(a, b), score=score, confirmed=confirmed, source_a=source_a, source_b=source_b))
    return findings


def _recorded(workspace: Workspace, findings: list[Finding], report: LintReport) -> list[Finding]:
    """Each contradiction (not refused by the LLM) kept as a contested claim until a reviewer resolves it
    (``llmwiki review --contest``); one resolved already is reported as such, at info."""
    store = workspace.store
    kept = []
    new = 0
    for finding in findings:
        if finding.kind != "contradiction" or finding.confirmed is False:
            kept.append(finding)
            continue
        (page_a, page_b), (sentence_a, sentence_b) = finding.pages, finding.sentences
        contest_id, is_new = store.save_contest(key=_key(page_a, page_b, sentence_a, sentence_b), page_a=page_a, sentence_a=sentence_a,
                                                source_a=finding.source_a, page_b=page_b, sentence_b=sentence_b, source_b=finding.source_b, score=finding.score)
        new += is_new
        contest = next(row for row in store.contests(page_path=page_a) if row.id == contest_id)
        if contest.status == "open":
            kept.append(replace(finding, detail=f"{finding.detail}; contested claim {contest_id}",
                                action=f"resolve it: `llmwiki review --contest {contest_id} --keep a|b|both` (a: {page_a}, b: {page_b})"))
        else:
            kept.append(replace(finding, severity="info", detail=f"{finding.detail}; contested claim {contest_id}, resolved by {contest.reviewer} ({contest.status})",
                                action="nothing: a reviewer resolved it"))
    if new:
        report.notes.append(f"{new} new contested claim(s) recorded; `llmwiki review --queue` lists them")
    return kept


def _source_texts(workspace: Workspace, paths: set[str]) -> dict[str, list[str]]:
    """Each source's chunk texts, whitespace-normalised and lowercased, for finding quotes."""
    store = workspace.store
    texts = {}
    with store.session():
        for path in sorted(paths):
            document = store.document_by_path(path)
            if document is not None:
                texts[path] = [quote_form(chunk.text) for chunk in store.chunks(document.id)]
    return texts


def _quoting_sources(source_texts: dict[str, list[str]], sentence: str) -> set[str]:
    """The sources that hold the sentence word for word."""
    needle = quote_form(sentence)
    return {path for path, texts in source_texts.items() if any(needle in text for text in texts)}


def _confirm(backend, a: str, b: str) -> bool | None:
    from llmwiki import prompts
    from llmwiki.backends import BackendError

    try:
        reply = backend.complete([{"role": "user", "content": prompts.CONFIRM_CONTRADICTION.format(first=a, second=b)}]).text
    except BackendError:
        return None
    word = reply.strip().split(maxsplit=1)[0].strip(".!,:").lower() if reply.strip() else ""
    return {"yes": True, "no": False}.get(word)


# -- repairs --------------------------------------------------------------------

def _key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:10]


def _insert_block(body: str, block: str) -> str:
    """After the first heading (inside a concept page's hand-kept preamble), else at the top."""
    match = re.search(r"^# .*\n", body, re.MULTILINE)
    at = match.end() if match else 0
    return body[:at] + "\n" + block + body[at:]


def repair(workspace: Workspace, report: LintReport) -> tuple[list[str], str | None]:
    """Write contradiction warnings and data-gap TODOs; turn resolved gaps into links. Returns (pages, commit)."""
    from llmwiki.publish.journal import operation
    from llmwiki.pages import render_page
    from llmwiki.publish.wiki import publish

    root = workspace.root
    with operation(workspace, "lint repairs"):
        pages = _pages(root)
        bodies = {path: page.body for path, page in pages.items()}
        titles = {page.title.lower(): path for path, page in pages.items() if path.startswith("wiki/concepts/")}
        for path, page in pages.items():
            for alias in page.meta.get("aliases", []) if path.startswith("wiki/concepts/") else []:
                titles.setdefault(str(alias).lower(), path)
        for finding in report.findings:
            if finding.kind == "contradiction" and finding.confirmed is not False:
                key = _key(*finding.pages, *finding.sentences)
                for page, mine, theirs, other in ((finding.pages[0], finding.sentences[0], finding.sentences[1], finding.pages[1]),
                                                  (finding.pages[1], finding.sentences[1], finding.sentences[0], finding.pages[0])):
                    if page not in bodies or f"llmwiki:lint contradiction {key}" in bodies[page]:
                        continue
                    block = (f"<!-- llmwiki:lint contradiction {key} -->\n> **Possible contradiction** with [{pages[other].title}]({_link_to(page, other)}): "
                             f"this page says \"{mine}\", that page says \"{theirs}\" (P(contradiction) {finding.score:.2f}). "
                             "Check both against the sources, correct one, then delete this block.\n<!-- /llmwiki:lint -->\n")
                    bodies[page] = _insert_block(bodies[page], block)
            elif finding.kind == "missing-page":
                key = _key(finding.name)
                for page in finding.pages:
                    if page in bodies and f"llmwiki:lint gap {key}" not in bodies[page]:
                        block = (f"<!-- llmwiki:lint gap {key} {finding.name} -->\n> **TODO (data gap):** no page on {finding.name} yet. "
                                 "Write one; this note becomes a link when it exists.\n<!-- /llmwiki:lint -->\n")
                        bodies[page] = _insert_block(bodies[page], block)
        for path, body in list(bodies.items()):
            def resolve_gap(match: re.Match) -> str:
                target = titles.get((match.group("name") or "").lower()) if match.group("kind") == "gap" else None
                return f"See also: [{pages[target].title}]({_link_to(path, target)})\n" if target and target != path else match.group(0)

            bodies[path] = BLOCK.sub(resolve_gap, body)
        changed = {path: render_page(pages[path].meta, body) for path, body in bodies.items() if body != pages[path].body}
        if not changed:
            return [], None
        _, commit = publish(workspace, changed, operation="lint repairs", subject=f"{len(changed)} page(s)")
    return sorted(changed), commit


def findings_table(report: LintReport) -> list[dict]:
    """One dict per finding, for tables (CLI, notebook)."""
    return [
        {"severity": finding.severity, "kind": finding.kind, "pages": ", ".join(finding.pages), "detail": finding.detail,
         "sentences": " | ".join(finding.sentences), "action": finding.action}
        for finding in report.findings
    ]


__all__ = ["Finding", "LintReport", "findings_table", "lint", "repair"]
