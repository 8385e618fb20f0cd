"""Reviewers decide: verdicts per sentence that last, a review queue, contested claims, held pages.

The verifier scores every sentence of a page; a reviewer may overrule it.

- A verdict (accept: supported whatever the model says; reject: unsupported,
  with an optional note) is kept by page path, sentence place and the
  sentence and evidence judged, with who decided and when
  (``Store.record_verdicts``). It holds while the sentence text and its best
  evidence (the excerpt the reviewer saw) are unchanged; when either changes,
  the sentence is shown as "reviewed before, changed since" and the model's
  score counts again. A page's supported share counts reviewers' verdicts
  first (``PageReview.supported_share``).
- Pages a model wrote can be held for review (``[review] hold``): published
  as candidates, marked in their frontmatter (``review: held``), kept in git,
  and not used as evidence for answers until a reviewer releases them (or
  their reviewed share reaches the threshold).
- A contradiction lint finds between two pages is a lasting record
  (``Store.save_contest``) that both pages show until a reviewer resolves it:
  keep one side (the other sentence is then rejected) or keep both as
  contested, with a note; the resolution is a commit in the workspace's history.
- The queue (``review_queue``) lists, oldest first, what waits: held pages,
  open contested claims, and reviewed sentences changed since.

The library raises; the CLI and the review notebook show these records.
"""

from __future__ import annotations

import getpass
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from llmwiki.errors import LlmwikiError
from llmwiki.pages import HELD, held_reason, render_page, split_frontmatter
from llmwiki.store import ContestRow, VerdictRow
from llmwiki.text import text_key
from llmwiki.verify.page import WORKSPACE_CALIBRATION, PageVerification, SentenceScore, load_verification, verify_page, wiki_pages
from llmwiki.workspace import COLLECTION_PAGES, Workspace

HOLD_SETTINGS = ("none", "unsupported", "all")
MAX_NOTE_CHARS = 2000
STATES = ("accepted", "rejected", "changed since", "unreviewed")


class ReviewError(LlmwikiError):
    """A review decision could not be taken (a bad sentence number, a page outside wiki/, a bad note)."""


def reviewer_name(workspace: Workspace, given: str | None = None) -> str:
    """Who decides: the name given (--reviewer), else git's user.name in the workspace, else the login name."""
    if given is not None:
        name = " ".join(given.split())
        if not name or "\x00" in given or len(name) > 200:
            raise ReviewError("--reviewer: give a name of 1 to 200 characters (no NUL bytes)")
        return name
    try:
        result = subprocess.run(["git", "config", "user.name"], cwd=workspace.root, capture_output=True, text=True, timeout=10)
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "reviewer"


def page_under_wiki(workspace: Workspace, page: str) -> str:
    """A page's workspace-relative path, refused (with the fix) unless it is a verifiable page under wiki/."""
    if "\x00" in page:
        raise ReviewError(f"{page!r}: a page name cannot hold NUL bytes. Name a page under wiki/ (`llmwiki review --queue` lists what waits).")
    candidate = workspace.root / page if not page.startswith("/") else page
    try:
        relative = workspace.relative(candidate, fix=workspace.PAGE_FIX)
    except LlmwikiError:
        raise ReviewError(f"{page}: is not a page of this wiki (only pages under {workspace.wiki_dir} can be named). "
                          "Name one as wiki/concepts/NAME.md; `llmwiki review --queue` lists what waits.") from None
    if not relative.startswith("wiki/") or relative in COLLECTION_PAGES or not relative.endswith(".md"):
        raise ReviewError(f"{relative}: only summary, concept and answer pages under wiki/ are verified and reviewed (a .md file, not a folder or a source). "
                          "Name one as wiki/concepts/NAME.md.")
    if not (workspace.root / relative).is_file():
        raise ReviewError(f"{relative}: no such page. `llmwiki status` counts the pages; `llmwiki review --queue` lists what waits.")
    return relative


def _evidence(score: SentenceScore) -> str:
    return " ".join((score.excerpt or "").split())


@dataclass(frozen=True)
class ReviewedSentence:
    """One verified sentence with what a reviewer decided about it."""

    number: int  # 1-based, as `llmwiki review PAGE` lists it
    score: SentenceScore
    verdict: VerdictRow | None  # the verdict in force for this sentence, or the one given before it changed
    state: str  # one of STATES

    def supported(self, threshold: float) -> bool:
        """A reviewer's verdict first; the model's score where there is none (or it no longer holds)."""
        if self.state == "accepted":
            return True
        if self.state == "rejected":
            return False
        return self.score.supported(threshold)

    def as_json(self) -> dict:
        if self.verdict is None:
            return {"state": self.state}
        return {"state": self.state, "verdict": self.verdict.verdict, "reviewer": self.verdict.reviewer, "note": self.verdict.note,
                "decided_at": self.verdict.decided_at.isoformat(timespec="seconds"), "id": self.verdict.id}


def reviewed_sentences(verification: PageVerification, verdicts: Sequence[VerdictRow]) -> tuple[ReviewedSentence, ...]:
    """Each sentence of a verification with the verdict in force: the latest on the same sentence text, holding
    while its evidence is unchanged; a verdict given at the same place on other text marks it "changed since"."""
    by_text: dict[str, VerdictRow] = {}
    by_place: dict[int, VerdictRow] = {}
    for verdict in verdicts:  # oldest first: later ones win
        by_text[verdict.sentence] = verdict
        by_place[verdict.seq] = verdict
    rows = []
    for index, score in enumerate(verification.sentences):
        verdict = by_text.get(score.sentence)
        if verdict is not None:
            holds = text_key(verdict.evidence or "") == text_key(_evidence(score))  # the same passage, however it was extracted
            state = ("accepted" if verdict.verdict == "accept" else "rejected") if holds else "changed since"
        elif index in by_place:
            verdict, state = by_place[index], "changed since"
        else:
            state = "unreviewed"
        rows.append(ReviewedSentence(index + 1, score, verdict, state))
    return tuple(rows)


@dataclass(frozen=True)
class PageReview:
    """A page's verification as a reviewer sees it: sentences with verdicts, contested claims, the hold."""

    page: str
    verification: PageVerification
    sentences: tuple[ReviewedSentence, ...]
    contests: tuple[ContestRow, ...] = ()
    held: str | None = None  # why the page waits for a reviewer (None: it does not)

    def supported_share(self, threshold: float) -> float:
        """The share of sentences supported, reviewers' verdicts counted first."""
        return sum(row.supported(threshold) for row in self.sentences) / len(self.sentences) if self.sentences else 0.0

    def model_share(self, threshold: float) -> float:
        return self.verification.supported_share(threshold)

    def count(self, state: str) -> int:
        return sum(row.state == state for row in self.sentences)

    def seen(self) -> dict[int, int | None]:
        """For each sentence place, the id of the latest verdict given there (what a decision is based on)."""
        return {row.number - 1: (row.verdict.id if row.verdict is not None and row.verdict.seq == row.number - 1 else None) for row in self.sentences}

    def as_json(self, threshold: float) -> dict:
        """The page's verification (``PageVerification.as_json``) with the reviewers' verdicts beside the model's scores."""
        data = self.verification.as_json(threshold)
        data["model_supported_share"] = data["supported_share"]
        data["supported_share"] = round(self.supported_share(threshold), 4)
        data["held"] = self.held
        data["unreviewed"] = self.count("unreviewed")
        for item, row in zip(data["sentences"], self.sentences):
            item["number"] = row.number
            item["model_supported"] = item["supported"]
            item["supported"] = row.supported(threshold)
            item["review"] = row.as_json()
        data["contested"] = [_contest_json(contest) for contest in self.contests]
        return data


def _contest_json(contest: ContestRow) -> dict:
    return {"id": contest.id, "status": contest.status, "score": round(contest.score, 4), "note": contest.note, "reviewer": contest.reviewer,
            "a": {"page": contest.page_a, "sentence": contest.sentence_a, "source": contest.source_a},
            "b": {"page": contest.page_b, "sentence": contest.sentence_b, "source": contest.source_b}}


def review_of(workspace: Workspace, page: str, verification: PageVerification) -> PageReview:
    """A verification with the page's verdicts, contested claims and hold."""
    store = workspace.store
    meta, _ = split_frontmatter((workspace.root / page).read_text(encoding="utf-8")) if (workspace.root / page).is_file() else ({}, "")
    return PageReview(page=page, verification=verification, sentences=reviewed_sentences(verification, store.verdicts(page)),
                      contests=tuple(contest for contest in store.contests(page_path=page) if contest.status in ("open", "both")), held=held_reason(meta))


def review_page(workspace: Workspace, page: str, verifier) -> PageReview:
    """A page verified (scored again only when it or its sources changed) with what reviewers decided."""
    relative = page_under_wiki(workspace, page)
    verification = verify_page(workspace, relative, verifier, premises_per_sentence=workspace.config.verification.premises_per_sentence)
    return review_of(workspace, relative, verification)


def stored_review(workspace: Workspace, page: str) -> PageReview | None:
    """A page's stored verification with its verdicts, without scoring (None: never verified)."""
    verification = load_verification(workspace, page)
    return None if verification is None else review_of(workspace, page, verification)


def _numbers(review: PageReview, numbers: Sequence[int], flag: str) -> list[ReviewedSentence]:
    count = len(review.sentences)
    wrong = [number for number in numbers if not 1 <= number <= count]
    if wrong:
        raise ReviewError(f"{review.page}: {flag} {', '.join(map(str, wrong))}: the page has sentences 1 to {count}. "
                          f"`llmwiki review {review.page}` lists them with their numbers.")
    return [review.sentences[number - 1] for number in numbers]


def checked_note(note: str | None) -> str | None:
    """A reviewer's note, refused with the fix when it cannot be kept as written."""
    if note is None:
        return None
    if "\x00" in note:
        raise ReviewError("--note: the note holds NUL bytes; remove them and decide again")
    note = note.strip()
    if len(note) > MAX_NOTE_CHARS:
        raise ReviewError(f"--note: {len(note)} characters; keep a note under {MAX_NOTE_CHARS} (link a longer argument instead)")
    return note or None


def decide(workspace: Workspace, review: PageReview, *, accept: Sequence[int] = (), reject: Sequence[int] = (), note: str | None = None,
           reviewer: str, seen: dict[int, int | None] | None = None) -> list[VerdictRow]:
    """Record accept/reject verdicts on sentences of a reviewed page (numbers as listed); the note goes with the
    rejections (and with acceptances when nothing is rejected). seen: the verdict ids the reviewer's view showed
    (default: the review's); a sentence another reviewer decided since is refused, nothing recorded.

    A held page whose supported share (verdicts first) reaches the threshold is released.
    """
    both = set(accept) & set(reject)
    if both:
        raise ReviewError(f"{review.page}: sentence {', '.join(map(str, sorted(both)))} is both accepted and rejected; choose one")
    if not accept and not reject:
        raise ReviewError(f"{review.page}: nothing to decide; pass --accept N or --reject N (numbers from `llmwiki review {review.page}`)")
    note = checked_note(note)
    decisions = []
    for verdict, rows in (("accept", _numbers(review, accept, "--accept")), ("reject", _numbers(review, reject, "--reject"))):
        for row in rows:
            decisions.append({"seq": row.number - 1, "sentence": row.score.sentence, "evidence": _evidence(row.score) or None,
                              "evidence_chunk_id": row.score.excerpt_chunk_id, "verdict": verdict,
                              "note": note if verdict == "reject" or not reject else None, "reviewer": reviewer,
                              "model_score": row.score.value, "features": row.score.features})
    store = workspace.store
    ids = store.record_verdicts(review.page, decisions, seen=review.seen() if seen is None else seen)
    recorded = [verdict for verdict in store.verdicts(review.page) if verdict.id in set(ids)]
    if review.held is not None:
        after = review_of(workspace, review.page, review.verification)
        if after.supported_share(workspace.config.verification.threshold) >= workspace.config.verification.threshold:
            release(workspace, review.page, reviewer=reviewer, why=f"{reviewer}'s verdicts bring its supported share to {after.supported_share(workspace.config.verification.threshold):.0%}")
    return recorded


# -- held pages --------------------------------------------------------------------------------


def hold_setting(workspace: Workspace) -> str:
    return workspace.config.review.hold


def hold_texts(workspace: Workspace, texts: dict[str, str | None], verifications: dict[str, PageVerification]) -> dict[str, str]:
    """The texts of pages to hold for review, marked in their frontmatter: under ``[review] hold = "unsupported"``
    the verified pages whose supported share falls under the threshold, under "all" every one."""
    setting = hold_setting(workspace)
    threshold = workspace.config.verification.threshold
    held = {}
    for path, verification in verifications.items():
        share = verification.supported_share(threshold)
        if setting == "all":
            reason = f"written by a model; {share:.0%} of its sentences supported ([review] hold = \"all\")"
        elif setting == "unsupported" and share < threshold:
            reason = f"written by a model; only {share:.0%} of its sentences supported (threshold {threshold:g})"
        else:
            continue
        meta, body = split_frontmatter(texts[path])
        held[path] = render_page({**meta, "review": HELD, "held_reason": reason, "held_at": datetime.now().isoformat(timespec="seconds")}, body)
    return held


def apply_hold(workspace: Workspace, written: Sequence[str], *, model_written: bool, verifier) -> list[str]:
    """After a model wrote pages (not the extractive backend): verify them and, under ``[review] hold``, mark those to
    hold (``hold_texts``) in one commit; returns the held pages. verifier: the verifier, or a callable that loads
    it (only called when something is to be verified). Nothing is done for the extractive backend or hold = "none"."""
    from llmwiki.publish.wiki import publish

    pages = [page for page in written if page.startswith(("wiki/summaries/", "wiki/concepts/", "wiki/answers/")) and (workspace.root / page).is_file()]
    if hold_setting(workspace) == "none" or not model_written or not pages:
        return []
    verifier = verifier() if callable(verifier) and not hasattr(verifier, "score") else verifier
    verifications = {}
    for page in pages:
        try:
            verifications[page] = verify_page(workspace, page, verifier, premises_per_sentence=workspace.config.verification.premises_per_sentence)
        except LlmwikiError:  # a page that cannot be verified is held: nothing says it is supported (its share is 0)
            verifications[page] = PageVerification(page=page, model=getattr(verifier, "name", ""), sentences=(), body_hash="", source_hashes={})
    texts = {page: (workspace.root / page).read_text(encoding="utf-8") for page in verifications}
    held = hold_texts(workspace, texts, verifications)
    if held:
        publish(workspace, held, operation="review", subject=f"held {len(held)} page(s) for review", notes=[f"held {page}" for page in sorted(held)])
    return sorted(held)


def held_pages(workspace: Workspace, pages: Sequence[str] | None = None) -> dict[str, tuple[str, str]]:
    """{page: (why it is held, since when)} for the pages (default: every verifiable page) held for review."""
    found = {}
    for page in wiki_pages(workspace) if pages is None else pages:
        path = workspace.root / page
        if not path.is_file():
            continue
        meta, _ = split_frontmatter(path.read_text(encoding="utf-8"))
        reason = held_reason(meta)
        if reason is not None:
            found[page] = (reason, str(meta.get("held_at") or ""))
    return found


def release(workspace: Workspace, page: str, *, reviewer: str, why: str | None = None) -> str | None:
    """Release a held page: its frontmatter loses the hold, in one commit naming the reviewer; returns the commit."""
    from llmwiki.publish.wiki import publish

    relative = page_under_wiki(workspace, page)
    meta, body = split_frontmatter((workspace.root / relative).read_text(encoding="utf-8"))
    if held_reason(meta) is None:
        raise ReviewError(f"{relative}: is not held for review; nothing to release")
    kept = {key: value for key, value in meta.items() if key not in ("review", "held_reason", "held_at")}
    kept["reviewed_by"] = reviewer
    _, commit = publish(workspace, {relative: render_page(kept, body)}, operation="review", subject=f"released {relative} ({reviewer})",
                        notes=[why or f"released by {reviewer}"])
    return commit


def release_if_passing(workspace: Workspace, page: str, *, verifier) -> str | None:
    """After an edit of a held page: verify it, and release it when its supported share (verdicts first) reaches the
    threshold; returns what was done (None: the page was not held). verifier: a verifier or a callable that loads one."""
    relative = page_under_wiki(workspace, page)
    meta, _ = split_frontmatter((workspace.root / relative).read_text(encoding="utf-8"))
    if held_reason(meta) is None:
        return None
    verifier = verifier() if callable(verifier) and not hasattr(verifier, "score") else verifier
    reviewed = review_page(workspace, relative, verifier)
    threshold = workspace.config.verification.threshold
    share = reviewed.supported_share(threshold)
    if share < threshold:
        return f"{relative}: still held for review: {share:.0%} of its sentences supported after the edit (threshold {threshold:g})."
    release(workspace, relative, reviewer=reviewer_name(workspace), why=f"edited; {share:.0%} of its sentences supported")
    return f"{relative}: released: the edit brings its supported share to {share:.0%}."


# -- contested claims -----------------------------------------------------------------------------

RESOLUTIONS = {"a": "kept_a", "b": "kept_b", "both": "both"}


def resolve(workspace: Workspace, contest_id: int, *, keep: str, note: str | None, reviewer: str, verifier=None) -> ContestRow:
    """Resolve a contested claim: keep side a or b (the other page's sentence is then rejected, with the note) or
    keep both as contested; the resolution is written to the log in one commit."""
    from llmwiki.publish.wiki import publish

    if keep not in RESOLUTIONS:
        raise ReviewError(f"--keep {keep}: keep a, b or both")
    note = checked_note(note)
    store = workspace.store
    contest = next((row for row in store.contests() if row.id == contest_id), None)
    if contest is None:
        raise ReviewError(f"contested claim {contest_id} does not exist; `llmwiki review --queue` lists the open ones")
    resolved = store.resolve_contest(contest_id, status=RESOLUTIONS[keep], note=note, reviewer=reviewer)
    if keep in ("a", "b"):
        losing_page, losing_sentence = (contest.page_b, contest.sentence_b) if keep == "a" else (contest.page_a, contest.sentence_a)
        review = stored_review(workspace, losing_page)
        if (review is None or review.verification.outdated) and verifier is not None and (workspace.root / losing_page).is_file():
            review = review_page(workspace, losing_page, verifier)
        row = next((row for row in review.sentences if row.score.sentence == " ".join(losing_sentence.split())), None) if review else None
        if row is not None:
            decide(workspace, review, reject=[row.number], note=note or f"contradicted by {contest.page_a if keep == 'a' else contest.page_b} (contested claim {contest_id})",
                   reviewer=reviewer)
    kept = {"a": f"kept {contest.page_a}", "b": f"kept {contest.page_b}", "both": "kept both as contested"}[keep]
    publish(workspace, {}, operation="review", subject=f"contested claim {contest_id}: {kept} ({reviewer})",
            notes=[f"{contest.page_a}: \"{contest.sentence_a}\" / {contest.page_b}: \"{contest.sentence_b}\"" + (f"; note: {note}" if note else "")])
    return resolved


# -- re-checks when sources change ----------------------------------------------------------------


@dataclass
class Recheck:
    """What a re-check after changed sources found: per page, the sentences whose model verdict changed and the
    reviewer verdicts that no longer hold."""

    pages: list[str] = field(default_factory=list)  # verified again
    flipped: list[tuple[str, int, str, bool]] = field(default_factory=list)  # (page, number, sentence, supported now)
    no_longer_holding: list[tuple[str, int, str, str]] = field(default_factory=list)  # (page, number, sentence, the verdict given)
    failures: list[tuple[str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report, a line per finding (none when nothing changed)."""
        out = [f"re-checked {page}" for page in self.pages] if (self.flipped or self.no_longer_holding) else []
        out += [f"  {page}: sentence {number} now {'supported' if now else 'unsupported'}: {sentence}" for page, number, sentence, now in self.flipped]
        out += [f"  {page}: sentence {number} was {verdict}ed by a reviewer; its evidence changed since: {sentence}" for page, number, sentence, verdict in self.no_longer_holding]
        out += [f"  could not re-check {page}: {why}" for page, why in self.failures]
        return out

    def summary(self) -> str:
        if not self.pages:
            return "Re-check: no verified page rests on the changed sources."
        return (f"Re-check: {len(self.pages)} verified page(s) rest on the changed sources; {len(self.flipped)} sentence(s) changed verdict, "
                f"{len(self.no_longer_holding)} reviewer verdict(s) no longer hold" + ("; they wait in `llmwiki review --queue`." if self.flipped or self.no_longer_holding else "."))


def pages_resting_on(workspace: Workspace, sources: Sequence[str]) -> list[str]:
    """The verified pages whose verification read one of the sources (named, cited, or the place of a best excerpt)."""
    wanted = set(sources)
    found = []
    for page in wiki_pages(workspace):
        stored = load_verification(workspace, page)
        if stored is not None and (wanted & set(stored.source_hashes) or wanted & {sentence.excerpt_path for sentence in stored.sentences}):
            found.append(page)
    return found


def recheck_sources(workspace: Workspace, sources: Sequence[str], verifier) -> Recheck:
    """Verify again, at once, the pages that rest on changed sources; record each sentence whose model verdict
    changed (it enters the queue) and report the reviewer verdicts that no longer hold. verifier: the verifier, or a
    callable that loads it (called only when some page is to be re-checked)."""
    report = Recheck()
    pages = pages_resting_on(workspace, sources) if sources else []
    if not pages:
        return report
    verifier = verifier() if callable(verifier) and not hasattr(verifier, "score") else verifier
    threshold = workspace.config.verification.threshold
    rows = []
    for page in pages:
        before = stored_review(workspace, page)
        try:
            after = review_page(workspace, page, verifier)
        except LlmwikiError as err:
            report.failures.append((page, str(err)))
            continue
        report.pages.append(page)
        old = {row.score.sentence: row for row in before.sentences} if before else {}
        for row in after.sentences:
            previous = old.get(row.score.sentence)
            if previous is None:
                continue
            if previous.score.supported(threshold) != row.score.supported(threshold):
                report.flipped.append((page, row.number, row.score.sentence, row.score.supported(threshold)))
                source = row.score.excerpt_path if row.score.excerpt_path in sources else next(iter(sources))
                rows.append({"page_path": page, "seq": row.number - 1, "sentence": row.score.sentence, "source": source,
                             "was_supported": previous.score.supported(threshold), "now_supported": row.score.supported(threshold)})
            if previous.state in ("accepted", "rejected") and row.state == "changed since":
                report.no_longer_holding.append((page, row.number, row.score.sentence, previous.verdict.verdict))
    workspace.store.record_rechecks(rows)
    return report


# -- the queue ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueItem:
    kind: str  # "held page", "contested claim", "changed since", "re-check"
    page: str
    since: str  # ISO time, for ordering oldest first ('' when unknown)
    reason: str
    contest_id: int | None = None
    sentence: int | None = None

    def as_json(self) -> dict:
        return {"kind": self.kind, "page": self.page, "since": self.since, "reason": self.reason, "contest_id": self.contest_id, "sentence": self.sentence}


def _reviewed_at_once(workspace: Workspace) -> dict[str, tuple[ReviewedSentence, ...]]:
    """Every verified page's sentences with the verdicts in force, read in a few queries (not page by page): what the
    summary and the queue count. Whether a verification is outdated is not asked here (it reads each page's file)."""
    store = workspace.store
    stored = store.latest_verifications()
    verdicts: dict[str, list[VerdictRow]] = {}
    for verdict in store.verdicts():
        verdicts.setdefault(verdict.page_path, []).append(verdict)
    reviewed = {}
    for page, (header, rows) in stored.items():
        verification = PageVerification(page=page, model=header["model"], sentences=tuple(SentenceScore(**row) for row in rows),
                                        body_hash=header["body_hash"], source_hashes={}, finished_at=header["finished_at"])
        reviewed[page] = reviewed_sentences(verification, verdicts.get(page, []))
    return reviewed


def review_queue(workspace: Workspace, *, reviewed: dict[str, tuple[ReviewedSentence, ...]] | None = None) -> list[QueueItem]:
    """What waits for a reviewer, oldest first: held pages, open contested claims, reviewed sentences changed since,
    and sentences whose model verdict changed when a source changed (until a reviewer judges them)."""
    items = [QueueItem("held page", page, since, reason) for page, (reason, since) in held_pages(workspace).items()]
    store = workspace.store
    for contest in store.contests(status="open"):
        items.append(QueueItem("contested claim", contest.page_a, contest.found_at.isoformat(timespec="seconds"),
                               f"contradicts {contest.page_b}: \"{contest.sentence_a}\" / \"{contest.sentence_b}\" (P {contest.score:.2f})", contest_id=contest.id))
    with store.session():
        reviewed = _reviewed_at_once(workspace) if reviewed is None else reviewed
        verdicts = store.verdicts()
        rechecks = store.rechecks()
    reviewed_pages = sorted({verdict.page_path for verdict in verdicts})
    for page in reviewed_pages:
        if not (workspace.root / page).is_file() or page not in reviewed:
            continue
        for row in reviewed[page]:
            if row.state == "changed since":
                items.append(QueueItem("changed since", page, row.verdict.decided_at.isoformat(timespec="seconds"),
                                       f"sentence {row.number} was {row.verdict.verdict}ed by {row.verdict.reviewer}; its text or evidence changed since: \"{row.score.sentence}\"",
                                       sentence=row.number))
    decided_after = {}
    for verdict in verdicts:
        decided_after[(verdict.page_path, verdict.sentence)] = verdict.decided_at
    for recheck in rechecks:
        if recheck.page_path not in reviewed_pages and not (workspace.root / recheck.page_path).is_file():
            continue
        decided = decided_after.get((recheck.page_path, recheck.sentence))
        if decided is not None and decided >= recheck.found_at:
            continue  # a reviewer has judged it since
        current = reviewed.get(recheck.page_path)
        if current is None or not any(row.score.sentence == recheck.sentence for row in current):
            continue  # the sentence is gone from the page
        now = "supported" if recheck.now_supported else "unsupported"
        items.append(QueueItem("re-check", recheck.page_path, recheck.found_at.isoformat(timespec="seconds"),
                               f"sentence {recheck.seq + 1} is now {now} after {recheck.source} changed: \"{recheck.sentence}\"", sentence=recheck.seq + 1))
    return sorted(items, key=lambda item: (item.since or "9999", item.kind, item.page))


@dataclass
class ReviewSummary:
    """What `llmwiki status` says of verification and review."""

    pages: int = 0
    verified: int = 0
    supported_share: float = 0.0  # over the verified pages' sentences, verdicts first
    unreviewed: int = 0  # sentences the model finds unsupported and no reviewer has decided
    contested: int = 0
    queued: int = 0
    held: int = 0
    below: list[tuple[str, float]] = field(default_factory=list)


def summary(workspace: Workspace, *, fail_under: float | None = None) -> ReviewSummary:
    """Pages verified, their supported share (verdicts first), unsupported sentences no reviewer decided,
    open contested claims, items queued and pages held; with fail_under, the verified pages under that share."""
    threshold = workspace.config.verification.threshold
    pages = wiki_pages(workspace)
    result = ReviewSummary(pages=len(pages))
    supported = total = 0
    store = workspace.store
    with store.session():  # one connection, and every verification and verdict read at once (not page by page)
        reviewed = _reviewed_at_once(workspace)
        for page in pages:
            if page not in reviewed:
                continue
            sentences = reviewed[page]
            result.verified += 1
            page_supported = sum(row.supported(threshold) for row in sentences)
            supported += page_supported
            total += len(sentences)
            result.unreviewed += sum(row.state in ("unreviewed", "changed since") and not row.score.supported(threshold) for row in sentences)
            if fail_under is not None and sentences and page_supported / len(sentences) < fail_under:
                result.below.append((page, page_supported / len(sentences)))
        result.supported_share = supported / total if total else 0.0
        result.contested = len(store.contests(status="open"))
        queue = review_queue(workspace, reviewed=reviewed)
    result.queued = len(queue)
    result.held = sum(item.kind == "held page" for item in queue)
    return result


# -- a verifier that learns from its reviewers ---------------------------------------------------------

def verdict_rows(workspace: Workspace) -> tuple[list[VerdictRow], "np.ndarray", "np.ndarray", "np.ndarray"]:
    """The verdicts in force with the model's features, as (verdicts, features, labels, held out): the latest verdict
    per page and sentence; about 30% held out, chosen by a hash of page and sentence (the same on every run)."""
    import hashlib

    import numpy as np

    latest: dict[tuple[str, str], VerdictRow] = {}
    for verdict in workspace.store.verdicts():
        if verdict.features:
            latest[(verdict.page_path, verdict.sentence)] = verdict
    rows = list(latest.values())
    features = np.array([row.features for row in rows], dtype=float).reshape(len(rows), -1)
    labels = np.array([row.verdict == "accept" for row in rows], dtype=float)
    held_out = np.array([int(hashlib.sha256(f"{row.page_path}\n{row.sentence}".encode()).hexdigest()[:8], 16) % 10 < 3 for row in rows], dtype=bool)
    return rows, features, labels, held_out


def recalibrate_from_verdicts(workspace: Workspace, model: str):
    """Refit the calibration for this workspace from its reviewers' verdicts (``calibrate.refit``) and keep it in
    .llmwiki/ when it agrees with the held-out verdicts more often than the shipped one; the pages' stored
    scores change when they are scored again (``llmwiki verify --all --force``)."""
    from llmwiki.verify.calibrate import load_calibration, refit, save_calibration

    _, features, labels, held_out = verdict_rows(workspace)
    outcome = refit(features, labels, held_out, shipped=load_calibration(model), model=model,
                    threshold=workspace.config.verification.threshold, min_verdicts=workspace.config.review.min_verdicts)
    if outcome.kept:
        save_calibration(outcome.calibration, note=f"{outcome.verdicts - outcome.held_out} reviewer verdicts of {workspace.root.name}",
                         path=workspace.state_dir / WORKSPACE_CALIBRATION)
    return outcome
