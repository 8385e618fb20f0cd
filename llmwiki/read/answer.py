"""Answers: one call from a selection, agentic tool chat, follow-ups, saving as a page.

Every answer keeps the ids of the chunks it was given and cites them inline
as ``[c123]``; ``Answer.citations`` resolves each to document, page and
breadcrumb. Citations of chunks that were not in the context are dropped and
counted, never shown as if real.

- Nothing selected (or a refused question): the answer says so and no model
  is called.
- Extractive backend: the answer is the selection's sentences that share the
  most question terms, best-supported first, each cited; dataset rows named
  by the question are quoted as they are.
- Generating backend: one call with ``prompts.ANSWER``; streaming when
  ``on_token`` is given.
- Agentic (openai backend with tools): the model calls ``search_wiki``,
  ``search_sources``, ``read_page`` (confined to wiki/) and ``query_dataset``;
  tool arguments are validated and a refused call tells the model why. A step
  limit stops tool loops. Strict mode holds the answer until the run ends and
  refuses unless it rests on at least one substantive tool result.

Follow-ups: the model sees a reduced history (refused exchanges dropped,
large tables replaced by a placeholder, the last ``history_messages``), and a
condenser turns "and in 2023?" into a standalone question before selection.
The full conversation stays with the caller.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from llmwiki import prompts
from llmwiki.backends import Backend, BackendError
from llmwiki.errors import LlmwikiError, WorkspaceError
from llmwiki.pages import (
    CITATION,
    cited_chunk_ids,
    slugify,
    source_entries,
    split_frontmatter,
)
from llmwiki.policy import ANSWER_POLICY, SELECT_POLICY, AnswerPolicy
from llmwiki.tools import CHAT_TOOLS, ToolArgumentError, limit_argument, text_argument
from llmwiki.read import parsing
from llmwiki.read.questions import (
    QUESTION_FRAME,
    adjunct_last,
    content_words,
    debracket,
    has_pronoun,
    kind_asked,
    kind_verdict,
    names_a_title,
    names_subject,
    negated_statement,
    opening_referent,
    pronoun_subject,
    question_names,
    question_subject,
    rank_sentences,
    reads_as_prose,
    resolve_opening_pronoun,
    shape,
    to_statement,
    unnamed_person,
    without_truth_frame,
)
from llmwiki.read.ranker import answer_probabilities, ranker_input, rerank, similarities
from llmwiki.read.search import preview, search
from llmwiki.read.select import Selection, read_wiki_page, select
from llmwiki.text import DEMONSTRATIVES, DETERMINERS, FORMS_OF_BE, NEGATIONS, OPENING_PRONOUNS, PERSONAL_PRONOUNS, alternation, stem, tokens
from llmwiki.verify.facts import FactCheck, check_facts, name_words
from llmwiki.verify.lexicon import default_lexicon
from llmwiki.services import Services
from llmwiki.workspace import Workspace

NOTHING_SELECTED = "The sources do not say: nothing in the wiki or the sources matches this question. "
NOT_SUPPORTED = "The sources do not say."
_TABLE_BLOCK = re.compile(r"(?:^\|.*\|[ \t]*\n){6,}", re.MULTILINE)
_FOLLOW_UP = re.compile(rf"^\s*(and|what about|how about|also|then|but|same|and in|in)\b|\b{alternation(PERSONAL_PRONOUNS | DEMONSTRATIVES)}\b", re.IGNORECASE)


@dataclass(frozen=True)
class Citation:
    chunk_id: int
    path: str
    page: int
    breadcrumb: str
    text: str = ""  # the cited chunk's text

    @property
    def label(self) -> str:
        return f"{self.path} p.{self.page}" + (f" › {self.breadcrumb}" if self.breadcrumb else "")


@dataclass(frozen=True)
class Answer:
    question: str
    text: str
    selection: Selection
    citations: tuple[Citation, ...] = ()
    backend: str = "extractive"
    refused: bool = False
    unknown_citations: tuple[int, ...] = ()
    tool_steps: tuple[str, ...] = ()
    standalone_question: str | None = None
    verdict: str | None = None  # "yes" / "no" when a yes/no question was settled by the sources
    read_as: tuple[tuple[str, str], ...] = ()  # (word of the question no source has, the term it was read as)

    @property
    def read_as_note(self) -> str:
        """'Read "Monrow" as "monro" (no source has "Monrow").', or '' when nothing was corrected."""
        if not self.read_as:
            return ""
        pairs = ", ".join(f'"{word}" as "{term}"' for word, term in self.read_as)
        return f"Read {pairs} (no source has the word as written)."

    def as_json(self) -> dict:
        """The answer as plain data (``llmwiki ask --json``)."""
        return {"question": self.question, "answer": self.text, "verdict": self.verdict, "refused": self.refused,
                "read_as": {word: term for word, term in self.read_as},
                "citations": [{"id": citation.chunk_id, "path": citation.path, "page": citation.page, "text": citation.text} for citation in self.citations],
                "backend": self.backend, "selection": self.selection.readout}

    @property
    def context_chunk_ids(self) -> list[int]:
        return self.selection.chunk_ids


@dataclass
class Turn:
    role: str  # user | assistant
    content: str
    refused: bool = False


@dataclass
class Conversation:
    """The full conversation for the UI; models see ``reduced()``."""

    turns: list[Turn] = field(default_factory=list)

    def add(self, question: str, answer: Answer) -> None:
        self.turns.append(Turn("user", question, refused=answer.refused))
        self.turns.append(Turn("assistant", answer.text, refused=answer.refused))

    def reduced(self, *, keep: int = 6) -> list[dict]:
        """What a model sees: no refused exchanges, tables summarised, the last ``keep`` messages."""
        messages = []
        for turn in self.turns:
            if turn.refused:
                continue
            content = _TABLE_BLOCK.sub("[a table from an earlier answer, left out]\n", turn.content)
            messages.append({"role": turn.role, "content": content})
        return messages[-keep:] if keep else []

    def last_question(self) -> str | None:
        for turn in reversed(self.turns):
            if turn.role == "user" and not turn.refused:
                return turn.content
        return None


# -- condensing follow-ups -------------------------------------------------------------


def is_follow_up(question: str) -> bool:
    return bool(_FOLLOW_UP.search(question)) and len(question.split()) <= 12


def condense(question: str, conversation: Conversation | None, *, backend: Backend, stopwords: frozenset[str] = frozenset(), history_messages: int = 6) -> str:
    """A follow-up rewritten to stand alone; unchanged when it is not a follow-up."""
    from llmwiki.read.select import is_collection_question

    previous = conversation.last_question() if conversation else None
    if not previous or not is_follow_up(question) or is_collection_question(question):
        return question
    if backend.generates:
        history = "\n".join(f"{message['role']}: {message['content']}" for message in conversation.reduced(keep=history_messages))
        try:
            completion = backend.complete([{"role": "user", "content": prompts.CONDENSE.format(history=history, question=question)}])
            rewritten = completion.text.strip().splitlines()[0].strip() if completion.text.strip() else ""
            if rewritten:
                return rewritten
        except BackendError:
            pass
    # Deterministic: carry the previous question's key terms that the follow-up lacks.
    words = [word for word in re.findall(r"[^\W_]+", previous) if word.lower() not in stopwords and len(word) > 2]
    names_new_subject = any(word[0].isupper() for word in re.findall(r"[^\W_]+", question)[1:])
    if names_new_subject:  # "and what about Volta?" replaces the subject: carry only what was asked
        words = [word for word in words if not word[0].isupper()]
    present = {word.lower() for word in re.findall(r"[^\W_]+", question)}
    carried = [word for word in dict.fromkeys(words) if word.lower() not in present]
    return f"{question.strip()} ({' '.join(carried)})" if carried else question


# -- answering from a selection --------------------------------------------------------


def _citations(workspace: Workspace, text: str, allowed: Sequence[int]) -> tuple[tuple[Citation, ...], tuple[int, ...]]:
    cited = cited_chunk_ids(text)
    allowed_set = set(allowed)
    unknown = tuple(chunk_id for chunk_id in cited if chunk_id not in allowed_set)
    known = [chunk_id for chunk_id in cited if chunk_id in allowed_set]
    targets = workspace.store.citation_targets(known)
    texts = workspace.store.chunk_texts(known) if known else {}
    return tuple(Citation(chunk_id, *targets[chunk_id], text=texts.get(chunk_id, "")) for chunk_id in cited if chunk_id in targets), unknown


def _remove_unknown(text: str, unknown: Sequence[int]) -> str:
    for chunk_id in unknown:
        text = text.replace(f" [c{chunk_id}]", "").replace(f"[c{chunk_id}]", "")
    return text


@dataclass(frozen=True)
class _Candidate:
    sentence: str
    chunk_id: int
    order: int  # the item's place in the selection
    passage: str  # the chunk's text: what the refusal rule reads
    referent: str  # the document's title: what an opening "it" or "they" refers to
    chunk_text: str = ""
    offset: int = 0  # where the sentence starts in chunk_text

    @property
    def preceding(self) -> str:
        """The chunk's text before the sentence: who an opening "he" or "she" is (read only for quoted sentences)."""
        return CITATION.sub("", self.chunk_text[: self.offset])[-400:]

    @property
    def antecedent(self) -> str:
        """The sentence before, when this one opens by pointing back at it ("All penguins are countershaded ... This is
        for camouflage."): the answer quotes the two together, since "[Penguin] is for camouflage" is not what the source
        says. '' when the sentence stands alone, or the one before is not prose in the same chunk."""
        return self._antecedent[0]

    @property
    def antecedent_preceding(self) -> str:
        """The chunk's text before the antecedent: who the antecedent's own opening "he" is ('' without an antecedent)."""
        return self._antecedent[1]

    @functools.cached_property
    def _antecedent(self) -> tuple[str, str]:
        """(the antecedent, the chunk's text before it: who the antecedent's own opening "he" is), or ('', '')."""
        if not _REFERS_BACK.match(self.sentence):
            return "", ""
        from llmwiki.text.segment import sentence_spans

        before = CITATION.sub("", self.chunk_text[: self.offset]).rstrip()
        spans = sentence_spans(before)
        if not spans:
            return "", ""
        start, end = spans[-1]
        sentence = " ".join(before[start:end].split())
        if len(sentence.split()) < 4 or not reads_as_prose(sentence) or sentence.startswith(("#", "|", "- [")):
            return "", ""
        return sentence, before[:start][-400:]


def _candidates(workspace: Workspace, selection: Selection) -> list[_Candidate]:
    """Sentences of the selected chunks, sources first: wiki text quotes sources, and citations must lead to them.
    Wiki chunks are used only where no source chunk was selected (a page written by hand, an overview). Only prose
    (``llmwiki.text.segment``): a heading, a code block, a table row or a list of links is never quoted as a sentence."""
    from llmwiki.text.segment import is_whole_sentence, segments

    items = [item for item in selection.items if item.chunk_id is not None]
    sources = [item for item in items if item.kind == "source"]
    chosen = sources or items
    titles = {item.path: item.title for item in chosen if item.title}  # the selector read them with the chunks
    unknown = {item.path for item in chosen if item.path and item.path not in titles}
    if unknown:  # a selection built by hand, or an untitled document: asked of the store
        with workspace.store.session():
            titles |= {path: document.title for path in unknown if (document := workspace.store.document_by_path(path)) and document.title}
    titles = {path: " ".join((titles.get(path) or Path(path or "").stem).replace("_", " ").split()) for path in {item.path for item in chosen}}
    candidates = []
    for order, item in enumerate(chosen):
        passage = " ".join(CITATION.sub("", item.text).split())
        segment_offset = 0
        for segment in CITATION.split(item.text):  # wiki text ends each quoted sentence with its citation: split there first
            segment_offset = item.text.find(segment, segment_offset)
            if segment.isdigit():
                continue
            for part in segments(segment):
                if not part.is_prose:
                    continue
                start, end = part.start, part.end
                sentence = " ".join(segment[start:end].split())
                if len(sentence.split()) < 4 or sentence.startswith(("#", "|", "- [", "[")) or sentence.endswith("?") or "](" in sentence:
                    continue
                if not is_whole_sentence(sentence):
                    continue  # a piece of a sentence (the rest sits beside a code block or a page break): never quoted as one
                if len(sentence.split()) > 80 or not reads_as_prose(sentence):
                    continue  # an infobox, a run of names or a reference line read as one sentence, not prose
                candidates.append(_Candidate(sentence, item.chunk_id, order, passage, titles[item.path], item.text, segment_offset + start))
    return candidates


@dataclass(frozen=True)
class ExtractiveReply:
    text: str
    verdict: str | None = None  # "yes" / "no" for a yes/no question that the sources settle
    refused: bool = False  # "the sources do not say": nothing to cite, nothing to save


def _quote(candidate: _Candidate) -> str:
    return f"{shown(candidate)} [c{candidate.chunk_id}]"


# A sentence that opens by pointing back at the one before ("This is for camouflage.", "Such a method ...").
_REFERS_BACK = re.compile(rf"^{alternation(word.title() for word in DEMONSTRATIVES | {'such'})}\b")
_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
_PTB_BRACKETS = re.compile("|".join(map(re.escape, _PTB)))


def _does_not_say(workspace: Workspace, question: str, candidates: Sequence[_Candidate], *, policy: AnswerPolicy = ANSWER_POLICY, yes_no: bool = False) -> tuple[str | None, list[bool], list[str]]:
    """(Why the selection does not answer the question, or None when it may; which candidates may lead the answer;
    the question's words that carry weight).

    Every name the question mentions must stand in some selected passage (for
    a yes/no question, at least one: "Is Canada's official language Zulu?"
    is answered no, not refused), and
    the best sentence and the best passage must hold enough of the question's
    terms, each weighted by its rarity in the store (a word every chunk has
    says little; one the store has never seen says the question is about
    something else): ``policy.min_shares_about_title`` when the question names the
    subject of a selected document, else ``policy.min_shares_else``. The sentence
    that leads an answer must itself hold that share: a sentence ranked first
    for its kind of answer (a date, a name) but about something else does not.
    """
    from llmwiki.read.search import SearchIndex, analyze

    if not candidates:
        return "nothing selected holds a sentence to answer with", [], []
    passages = {candidate.passage for candidate in candidates}
    held = {stem(word) for passage in passages for word in tokens(passage)}
    names = question_names(question)
    absent = [name for name in names if stem(name) not in held]
    if absent and (not yes_no or len(absent) == len(names)):
        return f"no selected passage mentions {', '.join(absent)}", [], []
    index = SearchIndex.for_store(workspace.store)
    weights = {term: weight for term, weight in index.rarity(without_truth_frame(question)).items() if term not in QUESTION_FRAME}
    if yes_no:  # a number a yes/no question names is the fact to check ("... in 1911?"), not its topic
        weights = {term: weight for term, weight in weights.items() if not term[:1].isdigit()}
    total = sum(weights.values())
    words = [word for word in content_words(question) if set(analyze(word, index.stopwords)) & set(weights)] or list(weights)
    if not total:
        return None, [True] * len(candidates), words
    if len(weights) == 1 and not names and not next(iter(weights))[:1].isdigit() and has_pronoun(question):
        # One common word and a pronoun ("When did he become professor?"): any sentence with the word
        # would match, and nothing says who "he" is.
        return f"the question names no one: only \"{words[0]}\" and a pronoun; say who or what it is about", [], words

    def share(text: str) -> float:
        terms = set(analyze(text, index.stopwords))
        return sum(weight for term, weight in weights.items() if term in terms) / total

    sentence_shares = [share(f"{candidate.sentence} {candidate.referent}") for candidate in candidates]
    # A passage holds many candidates: each (passage, title) is read once, not once per sentence (~70 ms a question).
    best_passage = max(share(f"{passage} {referent}") for passage, referent in {(candidate.passage, candidate.referent) for candidate in candidates})
    min_sentence, min_passage = policy.min_shares_about_title if names_a_title(question, {candidate.referent for candidate in candidates}) else policy.min_shares_else
    if max(sentence_shares) < min_sentence or best_passage < min_passage:
        missing = [word for word in content_words(without_truth_frame(question)) if stem(word) not in held]  # not "true"
        return "no selected passage holds enough of the question" + (f" (nothing on {', '.join(missing[:5])})" if missing else ""), [], words
    return None, [value >= min_sentence for value in sentence_shares], words


def _unnamed(question: str, question_shape) -> str | None:
    """A he/she that the question does not name (``questions.unnamed_person``), or the it/they a yes/no question has
    for its subject (``questions.pronoun_subject``: "Does it have a border with Norway?" names Norway, not what
    borders it); None when neither."""
    return unnamed_person(question) or (pronoun_subject(question) if question_shape.yes_no else None)


def _whose(pronoun: str, ranked: Sequence[_Candidate], *, policy: AnswerPolicy = ANSWER_POLICY) -> str | None:
    """Why a question about "he" or "she" that names no one, or a yes/no question whose subject is "it" or "they",
    cannot be answered: the best sentences that may answer it (the first ``policy.whose_sentences``) come from pages
    about different subjects, so its words do not say who or what is meant. None when they agree (the words pin one
    subject down: "He founded the University of Buffalo on what date?"). pronoun: the question's, from
    ``questions.unnamed_person`` or ``questions.pronoun_subject``. Beside an open page the question is about that
    page's subject and this is not asked."""
    subjects = list(dict.fromkeys(candidate.referent for candidate in ranked[:policy.whose_sentences]))
    if len(subjects) < 2:
        return None
    listed = f"{', '.join(subjects[:-1])} and {subjects[-1]}"
    return f"it says \"{pronoun}\" without saying who or what that is, and the passages that match are about {listed}: say who or what it is about"


class _Judged(NamedTuple):
    """A sentence read for a yes/no statement: its calibrated score, the model's P(entailment) and P(contradiction),
    its fact check."""

    score: float
    entailment: float
    contradiction: float
    check: FactCheck
    candidate: _Candidate
    premise: str  # the sentence as the model read it (``shown``, without brackets)


def _yes_no(statement: str, ranked: Sequence[_Candidate], verifier, *, names: frozenset[str], subject: Sequence[str] = (),
            negation: str | None = None, policy: AnswerPolicy = ANSWER_POLICY) -> ExtractiveReply:
    """Score the statement against the best sentences about the question's subject: yes when one supports it and
    none that holds as many of its words opposes it (by a fact check, or by the model's contradiction where that is
    stronger than the support and the sentence speaks to the statement); no when the closest one states otherwise
    (a fact opposed or negated, another number of its kind or another word in a name's place:
    ``FactCheck.contradicted``; or the model's contradiction, where the sentence leaves none of the statement's
    numbers out) and speaks to what the statement says (``_speaks_to``: a sentence that merely fails to support it
    is no "no", and a year or a name it leaves out is no denial); else unsettled; each quoting its
    sentence. A sentence about someone else is never read: "In 1919, Canada joined the League of Nations" denies
    nothing about the U.S. (and "In 1482, the
    Portuguese built the Elmina Castle" nothing about the Dutch, short of knowing that a castle is built once).
    A yes, like a no, needs its sentence to speak to what the statement says: "Hunting the Grisly, by Theodore
    Roosevelt" names him but says nothing of a brother. negation: the statement negated
    (``questions.negated_statement``); a sentence that supports it at least as well as the statement
    (``policy.negation_entailment``) answers no: the NLI model may miss the "not" a sentence holds."""
    from llmwiki.verify.calibrate import load_calibration, sentence_features

    calibration = load_calibration(verifier.name)
    # The model reads each sentence as the answer shows it: "It is the smallest German-speaking country in the world"
    # against "Liechtenstein is the smallest ..." reads as a contradiction (0.87), "Liechtenstein is ..." as entailed.
    shown_texts = [shown(candidate) for candidate in ranked]
    premises = [debracket(text) for text in shown_texts]
    probabilities = verifier.score(premises, [statement] * len(ranked))
    judged: list[_Judged] = []
    for candidate, text, premise, row in zip(ranked, shown_texts, premises, probabilities):
        check = check_facts(statement, [candidate.sentence], contexts=[f"{candidate.referent}. {candidate.passage}"], names=names)
        title = {stem(word) for word in tokens(_title_for_subject(candidate.referent, text))}
        if check.missing_names and all(stem(name) in title for name in check.missing_names):
            check = replace(check, missing_names=())  # a sentence is about its article's subject: "The city-state ..." in "Singapore"
        score = calibration.score(sentence_features([(float(row[0]), float(row[2]), check)]))
        judged.append(_Judged(score, float(row[0]), float(row[2]), check, candidate, premise))
    best = max(judged, key=lambda item: item.score)
    closest = max(judged, key=lambda item: (item.check.coverage, item.check.contradicted))  # of those that hold as many words, one that says otherwise
    # The sentence that holds most of the statement's words decides against a looser one: "Penguins have few
    # natural predators on land" answers "Do penguins have many predators?", not a sentence naming one predator. One
    # that holds as many and only lacks a fact does not: "The John Adams Library ... contains Adams's personal
    # collection" (no Harvard) decides nothing against "Young Adams went to Harvard College". Nor does one that holds
    # as many and only puts another number in the place of the statement's, against one that states every fact as
    # given, supports it and says as much of what the statement says: "Cleveland won the Presidency in the 1884
    # election" speaks of the event asked about, "... there would not be another such election until ... 2000" of
    # another. Where the other says more of it ("Young won the award in 2019" against "Young was nominated for the
    # award in 2018", for "Young won the award in 2018"), its number still decides.
    relation = _relation(statement, subject, best.check)
    other_event = (closest.check.coverage == best.check.coverage and _only_another_number(closest.check) and not best.check.failed
                   and best.score >= policy.yes_threshold
                   and len(_relation_held(relation, _about_text(best.candidate))) >= len(_relation_held(relation, _about_text(closest.candidate))))
    opposed = (closest.check.contradicted and closest.check.coverage >= best.check.coverage and not other_event
               or closest.check.failed and closest.check.coverage > best.check.coverage)
    # A sentence that puts another word in the place of one of the statement's ("Indonesia is a republic with a
    # presidential system" for "a monarchy with ...") holds its other words: only the model can say the two agree.
    replaced = bool(best.check.replaced_words) and best.entailment < policy.yes_threshold
    # The model's contradiction alone is a "no" only where the sentence holds the statement's numbers: one that leaves
    # a year out, stating none in its place ("Upton noted the bill exempts private firearm transfers ..." for "In 2019
    # Upton supported a bill ..."), is silent on it, and the model reads the gap as a contradiction. A name is left to
    # the model: a rival name need not stand in its slot ("English and French are the official languages" denies
    # "Canada's official language is Zulu").
    def model_denies(item: _Judged) -> bool:
        return item.contradiction >= policy.no_contradiction and not item.check.unrivalled_numbers

    # A sentence that holds as many of its words and speaks to it, which the model reads as contradicting the
    # statement more than the best reads as entailing it, opposes it too: "Wilson said that the committee system was
    # fundamentally undemocratic" (contradiction 0.59) against "Wilson also believed that the Committee System
    # facilitated corruption" (entailment 0.35), for "Wilson supported the committee system".
    contested = None
    if best.score >= policy.yes_threshold and not opposed:
        contested = next((item for item in judged if item is not best and item.check.coverage >= best.check.coverage and model_denies(item)
                          and item.contradiction > best.entailment and _speaks_to(statement, subject, item.check, item.candidate, policy=policy)), None)
        if contested is not None:
            closest = contested  # the no below reads it
    if best.score >= policy.yes_threshold and not opposed and contested is None and not replaced and (not relation or _holds_relation(relation, _about_text(best.candidate), policy)):
        # Probed where the two read differently: a negated statement against a sentence whose clause on it holds no
        # negation, or the other way round. Where both negate it ("The scientific community did not reserve great
        # attention ..."), the sentence says what the statement says and the model's missed "not" decides nothing.
        if negation is not None and _holds_negation(statement) != _negates_in_clause(best.candidate.sentence, relation, policy):
            denied = float(verifier.score([best.premise], [negation])[0][0])
            if denied >= policy.negation_entailment and denied > best.entailment:
                return ExtractiveReply(f"No — {_quote(best.candidate)} (it supports \"{negation}\" better than the question's statement)", verdict="no")
        return ExtractiveReply(f"Yes — {_quote(best.candidate)}", verdict="yes")
    if other_event:  # the sentence that states the year supports it but was no yes (another word in a place, or silent on the rest)
        return ExtractiveReply(f"The sources do not settle this — the closest passage: {_quote(best.candidate)}")
    if (closest.check.contradicted or model_denies(closest)) and _speaks_to(statement, subject, closest.check, closest.candidate, policy=policy):
        why = _why_not(closest.check, statement)
        if not closest.check.contradicted:
            why = "; ".join(filter(None, ("the passage contradicts it", why)))
        return ExtractiveReply(f"No — {_quote(closest.candidate)} ({why})", verdict="no")
    # A sentence the model reads as supporting the statement negated, though it reads no contradiction in it
    # ("Indonesia is a republic with a presidential system" supports "Indonesia is not a monarchy ..."), is a no under
    # the model contradiction's conditions: it speaks to the statement and leaves none of its numbers out.
    if negation is not None and not _holds_negation(statement):
        read = [closest] if closest is best else [closest, best]
        for item, row in zip(read, verifier.score([item.premise for item in read], [negation] * len(read))):
            denied = float(row[0])
            if (denied >= policy.negation_entailment and denied > item.entailment and not item.check.unrivalled_numbers
                    and _speaks_to(statement, subject, item.check, item.candidate, policy=policy)):
                return ExtractiveReply(f"No — {_quote(item.candidate)} (it supports \"{negation}\")", verdict="no")
    return ExtractiveReply(f"The sources do not settle this — the closest passage: {_quote(closest.candidate)}")


def _why_not(check: FactCheck, statement: str) -> str | None:
    """The reason a "no" shows: the fact check's, where a negated question ("Did he not die at 55?") is answered no
    because the passage says it without the "not", said so in the question's terms."""
    if check.negation == "sentence" and _holds_negation(statement):
        return "; ".join(filter(None, (replace(check, negation=None).reason(), 'the question says "not", the passage does not')))
    return check.reason()


# A comparison: a verb before a comparative and "than" ("was older than", "has more lakes than", "weigh more than"), never a
# determiner ("have a better than average sense" compares nothing).
_COMPARISON = re.compile(rf"^(?P<a>.+?) (?P<verb>(?!(?:{alternation(DETERMINERS)})\b)[a-z]{{2,}}) (?P<how>(?:more|less|fewer)(?: \w+)?|\w{{2,}}er) than (?P<b>.+?)\.?$", re.IGNORECASE)


def converse(statement: str) -> str | None:
    """A comparison read the other way round ("Calvin Jr. was older than John." -> "John was older than Calvin
    Jr."), or None when the statement compares nothing (its verb is not followed by a comparative and "than", or
    "than" is followed by a number)."""
    match = _COMPARISON.match(statement.strip())
    if match is None or match.group("how").lower() in ("other", "rather", "never", "ever", "neither", "either", "whether", "after", "under", "over"):
        return None
    first, other = match.group("a").strip(), match.group("b").strip()
    if other[:1].isdigit() or first.lower() == "there":
        return None  # a measure, not a second side: "There are more than 350,000 species", "It weighs more than 500 kg"
    if first.split()[0].lower() in DETERMINERS:  # "The elephant" moves behind "than": "... than the elephant"
        first = first[:1].lower() + first[1:]
    return f"{other[:1].upper()}{other[1:]} {match.group('verb')} {match.group('how')} than {first}" + ("" if first.endswith(".") else ".")


def _compared(statement: str, turned: str, reply: ExtractiveReply, ranked: Sequence[_Candidate], judged: Sequence[_Candidate], verifier, *,
              names: frozenset[str], policy: AnswerPolicy = ANSWER_POLICY) -> ExtractiveReply:
    """A comparison's verdict read both ways, since an NLI model barely tells "A is older than B" from "B is older
    than A": a "yes" whose sentence puts the two the other way round ("B ... than A") is a "no"; one whose sentence
    keeps their order stands; otherwise the converse is scored too, and a "yes" both ways settles nothing, while
    the converse alone supported is a "no"."""
    order = _comparison_order(statement, reply.text) if reply.verdict == "yes" else 0
    if order > 0:
        return reply
    quoted = reply.text.removeprefix("Yes — ")
    if order < 0:
        return ExtractiveReply(f"No — {quoted} (the other way round)", verdict="no")
    other_subject = question_subject(f"Is it true that {turned}")
    other = _yes_no(turned, (_about(ranked, other_subject, limit=policy.yes_no_sentences) or judged)[:policy.yes_no_sentences], verifier, names=names,
                    subject=other_subject, policy=policy)
    if other.verdict != "yes":
        return reply
    if reply.verdict == "yes":
        return ExtractiveReply(f"The sources do not settle this — they read the comparison both ways: {quoted}")
    return ExtractiveReply(f"No — {other.text.removeprefix('Yes — ')} (the other way round)", verdict="no")


_THAN = re.compile(r"\bthan\b", re.IGNORECASE)


def _sides(match: re.Match) -> tuple[set[str], set[str]]:
    """The stems of the content words of a comparison's two sides (``_COMPARISON``'s "a" and "b")."""
    return tuple({stem(word.lower()) for word in content_words(match.group(side))} for side in ("a", "b"))


def _comparison_order(statement: str, text: str) -> int:
    """1 when the text compares the statement's two sides in its order ("A ... than ... B"), -1 when the other way
    round ("B ... than ... A"), 0 when it does not say (no "than", or a side it does not name). A side is read by the
    words that set it apart from the other ("Asian" and "African" in "An Asian elephant is smaller than an African
    elephant"), each word by its stem ("males" is "male"), and before "than" only in its clause: "Unlike the Asian
    elephant, the Sumatran is smaller than the African" says nothing of the Asian one."""
    match = _COMPARISON.match(statement.strip())
    words = [stem(word.lower()) for word in tokens(CITATION.sub("", text))]
    if match is None or "than" not in words:
        return 0
    than = words.index("than")
    first, second = _sides(match)
    first, second = (first - second or first), (second - first or second)
    clause = [stem(word.lower()) for word in tokens(_CLAUSE_BREAK.split(_THAN.split(CITATION.sub("", text), 1)[0])[-1])]
    before, after = set(clause or words[:than]), set(words[than + 1:])
    if first and second and first & before and second & after and not (second & before) and not (first & after):
        return 1
    if first and second and second & before and first & after and not (first & before) and not (second & after):
        return -1
    return 0


def _agreement(statement: str, text: str) -> int:
    """1 when the text's first "than" follows the statement's comparative ("smaller" for "smaller", "more lakes" for
    "more lakes"), -1 when it follows its opposite ("larger", "fewer lakes", by WordNet), 0 otherwise ("larger" for
    "weigh more" is another measure)."""
    match = _COMPARISON.match(statement.strip())
    words = [word.lower() for word in tokens(CITATION.sub("", text))]
    if match is None or "than" not in words:
        return 0
    ours = match.group("how").lower().split()
    theirs = words[max(words.index("than") - len(ours), 0):words.index("than")]
    if len(theirs) != len(ours) or [stem(word) for word in ours[1:]] != [stem(word) for word in theirs[1:]]:
        return 0
    if stem(ours[0]) == stem(theirs[0]):
        return 1
    lexicon = default_lexicon()
    return -1 if lexicon is not None and lexicon.opposes(ours[0], theirs[0]) else 0


def _ordered(statement: str, ranked: Sequence[_Candidate]) -> ExtractiveReply | None:
    """A comparison settled by the best-ranked sentence that puts its two sides around "than" with the statement's
    comparative or its opposite: "The Asian elephant is smaller than the African" answers "Is an Asian elephant
    smaller than an African elephant?" yes, and "... larger than an African elephant?" no. None when no sentence
    does: an NLI model barely tells the two orders apart, so such a sentence is read before the model is asked."""
    match = _COMPARISON.match(statement.strip())
    if match is None:
        return None
    first, second = _sides(match)
    shared = first & second
    for candidate in ranked:
        if not _THAN.search(candidate.sentence):
            continue  # most sentences compare nothing: not shown (showing one may parse the text before it)
        text = shown(candidate)
        sign = _comparison_order(statement, text) * _agreement(statement, text)
        held = {stem(word.lower()) for word in tokens(f"{text} {candidate.referent}")}
        if sign == 0 or not shared <= held:  # "elephant": both sides' head, in the sentence or its title
            continue
        if sign > 0:
            return ExtractiveReply(f"Yes — {_quote(candidate)}", verdict="yes")
        return ExtractiveReply(f"No — {_quote(candidate)} (the other way round)", verdict="no")
    return None


def _kind_reply(statement: str, subject: Sequence[str], ranked: Sequence[_Candidate]) -> ExtractiveReply | None:
    """A yes or a no to a statement that says only what kind of thing its subject is ("A kangaroo is a reptile."), from
    the sentences that open by saying what it is (``questions.kind_verdict``: "A kangaroo is a marsupial from the family
    Macropodidae", and WordNet's kinds); None where no sentence settles it or sentences disagree. The NLI model knows
    little of kinds: it reads "Otters are carnivores" as entailing "Otters are herbivores" (0.92)."""
    if kind_asked(statement, subject) is None:
        return None
    found: dict[str, tuple[_Candidate, str | None]] = {}
    for candidate in ranked:
        words = candidate.sentence.split()
        text = candidate.sentence
        if len(words) > 1 and words[0].lower() in OPENING_PRONOUNS and words[1].lower() in FORMS_OF_BE:
            text = debracket(shown(candidate))  # "They are marsupials" about kangaroos
        if (settled := kind_verdict(statement, subject, text)) is not None:
            found.setdefault(settled[0], (candidate, settled[1]))
    if len(found) != 1:
        return None
    verdict, (candidate, why) = next(iter(found.items()))
    return ExtractiveReply(f"{'Yes' if verdict == 'yes' else 'No'} — {_quote(candidate)}{f' ({why})' if why else ''}", verdict=verdict)


def _speaks_to(statement: str, subject: Sequence[str], check, candidate: _Candidate, *, policy: AnswerPolicy = ANSWER_POLICY) -> bool:
    """Whether a sentence about the statement's subject also speaks to what the statement says of it, so that a
    name, a number or a contradiction it opposes is a "no" and not a sentence on another matter: at least
    ``policy.no_relation_share`` of the statement's other words (past its subject and the names and numbers the
    sentence lacks) stand in the sentence or its document's title. "English and French are the official
    languages" speaks to "Canada's official language is Zulu" (official, language); "Though Theodore Roosevelt
    considered the large timber wolves ..." does not speak to "Theodore Roosevelt went to Harvard". The same share of
    what it says besides names and numbers must stand there too, where it says anything besides them."""
    relation = _relation(statement, subject, check)
    if not relation or not _holds_relation(relation, _about_text(candidate), policy):
        return False
    # What it says besides the names it relates: "Women can legally drive in Qatar, whereas they may not in Saudi
    # Arabia" names Saudi Arabia but says nothing of "Qatar is bordered by Saudi Arabia to the south".
    said = relation - {stem(word) for word in tokens(statement) if word[:1].isupper() or word[:1].isdigit()}
    return not said or _holds_relation(said, _about_text(candidate), policy)


def _title_for_subject(title: str, shown_text: str) -> str:
    """The document's title where it may stand for the subject of a sentence as the answer shows it (``shown``): "The
    city-state ..." in "Singapore"; '' where the sentence opens with a pronoun shown as something else: "[The building]
    was completed in November 2000" in "Liechtenstein" is about the building, and says nothing of when Liechtenstein
    was completed."""
    referent = opening_referent(shown_text)
    if referent is not None and not {stem(word) for word in tokens(referent)} & {stem(word) for word in tokens(title)}:
        return ""
    return title


def _only_another_number(check: FactCheck) -> bool:
    """Whether all a sentence states otherwise is a number: another one of its kind in the place of one of the
    statement's (a year for its year), no name, opposite or negation."""
    return bool(set(check.missing_numbers) - set(check.unrivalled_numbers)) and not (
        check.opposed or check.negation or set(check.missing_names) - set(check.unrivalled_names))


def _about_text(candidate: _Candidate) -> str:
    """What a sentence says and what it is about: the sentence and its document's title."""
    return f"{candidate.sentence} {candidate.referent}"


def _relation_held(relation: set[str], text: str) -> set[str]:
    """The stems of what a statement says of its subject (``_relation``) that the text holds, an irregular form
    standing for its base form: "He won the 1903 Nobel Prize" holds "win"."""
    lexicon = default_lexicon()
    forms = {form for word in tokens(text) for form in (lexicon.base_forms(word) if lexicon is not None else (word,))}
    return relation & {stem(form) for form in forms}


def _holds_relation(relation: set[str], text: str, policy: AnswerPolicy = ANSWER_POLICY) -> bool:
    """Whether the text holds ``policy.no_relation_share`` of the stems a statement says of its subject (``_relation_held``)."""
    return len(_relation_held(relation, text)) >= policy.no_relation_share * len(relation)


# Where a sentence's clauses part: a negation beyond them is about something else ("An elephant is a good swimmer, but it
# can neither trot, jump, nor gallop").
_CLAUSE_BREAK = re.compile(r"[,;:()]|\b(?:but|whereas|while|although|though|however|yet)\b", re.IGNORECASE)


def _holds_negation(text: str) -> bool:
    return any(word.lower() in NEGATIONS for word in tokens(text))  # tokens() reads "n't" as "not"


def _negates_in_clause(sentence: str, relation: set[str], policy: AnswerPolicy = ANSWER_POLICY) -> bool:
    """Whether a clause of the sentence holds a negation and ``policy.no_relation_share`` of what the statement says
    of its subject (``_relation``): "Beetles ... are not known to occur in the sea or in the polar regions" negates
    "polar regions", where the model reads the sentence as entailing "Beetles can be found in polar regions"."""
    return bool(relation) and any(_holds_negation(clause) and _holds_relation(relation, clause, policy) for clause in _CLAUSE_BREAK.split(sentence))


def _relation(statement: str, subject: Sequence[str], check: FactCheck | None = None) -> set[str]:
    """The stems of what a statement says of its subject: its content words past the subject and the names and numbers
    a sentence's fact check found it lacks (``_speaks_to``). Empty when the subject took all of them ("Are Kangaroos Shy?")."""
    lacking = (*check.missing_names, *check.missing_numbers) if check is not None else ()
    return {stem(word) for word in content_words(statement)} - {stem(word) for word in (*subject, *lacking)}


def _about(ranked: Sequence[_Candidate], subject: Sequence[str], *, limit: int | None = None) -> list[_Candidate]:
    """The first ``limit`` candidates (all by default) about what a yes/no question names (``questions.question_subject``),
    in order: the sentence as the answer shows it (an opening pronoun resolved, after the sentence it points back at)
    or its document's title names the subject, and where the sentence's main subject names something else, what it is
    about does too (``parsing.named_elsewhere``), and it is a clause, not a heading or a list item
    (``parsing.states_something``): those take the places of sentences that say something. A yes or a no about Nairobi is decided by a sentence on Nairobi, not by
    the best-ranked sentence of a passage that mentions it in passing. All of them when the question's subject is a
    pronoun. Read in order and stopped at ``limit``: showing a sentence may parse the text before it."""
    named = {stem(word) for word in [word for word in tokens(" ".join(subject)) if len(word) >= 3] or tokens(" ".join(subject))}  # "U.S." as written
    found = []
    for candidate in ranked:
        if limit is not None and len(found) >= limit:
            break
        text = shown(candidate)
        if not names_subject(subject, text, title=_title_for_subject(candidate.referent, text)):
            continue
        if parsing.states_something(candidate.sentence) is False:
            continue  # a heading, a list item or a caption ("Wilson, then president of United States") asserts nothing
        arguments = parsing.named_elsewhere(candidate.sentence if candidate.antecedent else debracket(text)) if subject else None
        if arguments is not None and not named & {stem(word) for word in tokens(" ".join(arguments))}:
            continue  # "Goannas ... pose a danger to smaller kangaroo species" names kangaroos, but is about goannas
        found.append(candidate)
    return found


def hand_ranking(question: str, candidates: Sequence[_Candidate], question_shape, *, policy: AnswerPolicy = ANSWER_POLICY) -> list[tuple[float, int]]:
    """(score, index) of each distinct candidate sentence by ``questions.rank_sentences``, best first; the selector's
    order counts a little. A sentence that overlapping chunks of a document hold twice is ranked once, where it scores
    best: a repeat would take a place among the sentences the ranker reorders and the yes/no verdict reads."""
    priors = [policy.selector_prior / (1 + candidate.order) for candidate in candidates]
    ranking = rank_sentences(question_shape.statement or question, [candidate.sentence for candidate in candidates], question_shape=question_shape,
                             priors=priors, subjects=[candidate.referent for candidate in candidates], type_bonus=policy.answer_type_bonus)
    first_places: dict[tuple[str, str], tuple[float, int]] = {}  # in the order first seen: best first
    for score, index in ranking:
        first_places.setdefault((candidates[index].sentence, candidates[index].referent), (score, index))
    return list(first_places.values())


def candidate_sentences(workspace: Workspace, question: str) -> tuple[list[_Candidate], list[tuple[float, int]]]:
    """The sentences an extractive answer to ``question`` chooses from, and their hand ranking: what the answer
    ranker is trained on (``llmwiki.read.ranker.train``)."""
    candidates = _candidates(workspace, select(workspace, question))
    return candidates, hand_ranking(question, candidates, shape(question))


def fill_places(sentences: Sequence[str], antecedents: Sequence[str], count: int) -> list[int]:
    """Which of the ranked sentences (best first) an answer of ``count`` sentences quotes, by place: each sentence once,
    and one that points back (its antecedent not '') brings the sentence before it, so it fills two places; a sentence
    that would overfill the answer gives way to the next that fits, and the first is always quoted. What the answer
    shows and what bench/ranker.py counts (``ranker.train.hits``)."""
    chosen: list[int] = []
    quoted: set[str] = set()
    filled = 0
    for place, (sentence, antecedent) in enumerate(zip(sentences, antecedents)):
        cost = 2 if antecedent else 1
        if sentence in quoted or antecedent in quoted or (chosen and filled + cost > count):
            continue
        chosen.append(place)
        quoted |= {sentence, antecedent} - {""}
        filled += cost
        if filled >= count:
            break
    return chosen


def shown(candidate: _Candidate) -> str:
    """The candidate sentence as an answer shows it, without its citation: after the sentence it points back at, or with
    an opening pronoun resolved."""
    if candidate.antecedent:
        return f"{resolve_opening_pronoun(candidate.antecedent, candidate.referent, preceding=candidate.antecedent_preceding)} {candidate.sentence}"
    return resolve_opening_pronoun(candidate.sentence, candidate.referent, preceding=candidate.preceding)


def extractive_answer(workspace: Workspace, question: str, selection: Selection, *, services: Services, sentences: int = 2,
                      policy: AnswerPolicy | None = None) -> ExtractiveReply:
    """The extractive backend's answer: the sentence that answers the question first, cited; a verdict
    for yes/no questions; "the sources do not say" when the selection does not match the question.

    services: where the models come from, each read only when this question needs it (``llmwiki.services``):
    ``ranker`` reorders the best hand-ranked sentences of a question that is not yes/no (``llmwiki.read.ranker``;
    None: the hand ranking alone); ``similarity``, the sentence embedder that compares the question with those
    sentences, reorders them too and refuses when none is close (``policy.min_similarity``; None: neither);
    ``verifier`` settles yes/no questions.
    policy: the fitted thresholds and counts (``llmwiki.policy``); by default the workspace's ``[chat]`` settings over the shipped ones.
    Dataset rows named by the question are quoted as they are; a question about the wiki as a whole
    gets its overview and index.
    """
    policy = policy or AnswerPolicy.from_config(workspace.config.chat)
    tables = [item for item in selection.items if item.kind in ("dataset", "dataset_keys")]
    table_text = "".join(f"\n\nFrom {item.label} ({item.path}):\n\n{item.text}" for item in tables)
    candidates = _candidates(workspace, selection)  # titles come with the selection: no connection, none held while a model runs
    open_pages = [item for item in selection.items if item.kind == "open_page"]
    question_shape = shape(question)
    pronoun = _unnamed(question, question_shape)
    if open_pages and pronoun:  # "he" is the open page's subject: the sources it cites are about them
        cited = {int(number) for item in open_pages for number in CITATION.findall(item.text)}
        subjects = {candidate.referent for candidate in candidates if candidate.chunk_id in cited}
        candidates = [candidate for candidate in candidates if candidate.referent in subjects] or candidates
    if not candidates:
        collection = [item for item in selection.items if item.kind in ("collection", "open_page")]
        if collection or tables:
            return ExtractiveReply(("\n\n".join(item.text for item in collection) + table_text).strip())
    subject = question_subject(question) if question_shape.yes_no else ()  # read once: it may parse the question
    if question_shape.yes_no and (kind := _kind_reply(question_shape.statement or question, subject, candidates)) is not None:
        # "Is a kangaroo a reptile?" of sources that never say "reptile": a sentence saying what a kangaroo is settles it
        return ExtractiveReply(kind.text + table_text, verdict=kind.verdict)
    reason, may_lead, words = _does_not_say(workspace, question, candidates, policy=policy, yes_no=question_shape.yes_no)
    ranking: list[tuple[float, int]] = []
    cosines: dict[int, float] = {}
    if reason is None:
        ranking = hand_ranking(question, candidates, question_shape, policy=policy)
        inputs = [ranker_input(candidate.sentence, candidate.referent) for candidate in candidates]
        # services' models are read only here: a question refused on its words does not wait for them to load
        cosines = similarities(services.similarity, question, inputs, ranking, ranked=policy.ranked)
        if cosines and max(cosines.values()) < policy.min_similarity:
            closest = max(cosines, key=cosines.get)
            reason = f"the selected sentences share its words but are about something else; the closest: \"{preview(candidates[closest].sentence, 90)}\""
    if reason is None and not question_shape.yes_no:
        probabilities = answer_probabilities(services.ranker, question, inputs, ranking, ranked=policy.ranked)
        ranking = rerank(ranking, probabilities, cosines, weight=policy.ranker_weight, similarity_weight=policy.similarity_weight)
        best = max((p for index, p in probabilities.items() if may_lead[index]), default=0.0)
        if probabilities and len(words) <= policy.few_terms and best < policy.min_answer_p:
            quoted = " and ".join(f'"{word}"' for word in words)
            reason = f"no sentence selected answers it; the question's few words{f' ({quoted})' if words else ''} stand in sentences about other things"
    if reason is None and pronoun and not open_pages:
        reason = _whose(pronoun, [candidates[index] for _, index in ranking if may_lead[index]], policy=policy)
    if reason is not None:
        if tables:
            return ExtractiveReply(table_text.strip())
        return ExtractiveReply(f"{NOT_SUPPORTED} ({reason}.)", refused=True)
    order = [index for _, index in ranking]
    ranked = [candidates[index] for index in order]
    if question_shape.yes_no:
        names = name_words({candidate.passage for candidate in candidates}) | {name.lower() for name in question_shape.names}
        statement = question_shape.statement or question
        turned = converse(statement)
        reply = _ordered(statement, ranked) if turned is not None else None  # "Is A older than B?": a sentence that orders them
        judged = _about(ranked, subject, limit=policy.yes_no_sentences)
        if not judged and reply is None:  # every sentence that matched is about something else: neither a yes nor a no
            reason = f"no selected sentence is about {' '.join(subject)}; the closest: \"{preview(ranked[0].sentence, 90)}\" ({ranked[0].referent})"
            return ExtractiveReply(table_text.strip()) if tables else ExtractiveReply(f"{NOT_SUPPORTED} ({reason}.)", refused=True)
        verifier = services.verifier
        if reply is None:
            reply = _yes_no(statement, judged[:policy.yes_no_sentences], verifier, names=names, subject=subject, negation=negated_statement(question),
                            policy=policy)
            if turned is not None and reply.verdict != "no":  # or the model's reading, both ways
                reply = _compared(statement, turned, reply, ranked, judged, verifier, names=names, policy=policy)
        return ExtractiveReply(reply.text + table_text, verdict=reply.verdict)
    count = max(sentences, policy.listing_sentences) if question_shape.wants_more else sentences
    lead = next(index for index in order if may_lead[index])  # the best sentence holds the share, so one may lead
    ranked = [candidates[lead]] + [candidate for index, candidate in zip(order, ranked) if index != lead]
    chosen = [ranked[place] for place in fill_places([candidate.sentence for candidate in ranked], [candidate.antecedent for candidate in ranked], count)]
    return ExtractiveReply((" ".join(_quote(candidate) for candidate in chosen) + table_text).strip())


def _context_block(selection: Selection) -> str:
    parts = []
    for item in selection.items:
        if item.chunk_id is not None:
            stale = " (stale)" if item.stale else ""
            parts.append(f"[c{item.chunk_id}] ({item.label}{stale}) {' '.join(item.text.split())}")
        else:
            parts.append(f"({item.label})\n{item.text}")
    return "\n\n".join(parts)


def answer_question(
    workspace,
    question: str,
    *,
    open_page: str | None = None,
    services: Services | None = None,
    conversation: Conversation | None = None,
    on_token: Callable[[str], None] | None = None,
) -> Answer:
    """Select context for a question and answer it with the backend of services.

    services: the backend, the tracer and, for the extractive backend, the verifier that settles yes/no questions, the
    ranker and the embedder that order its candidate sentences (``llmwiki.services``; by default built from the
    workspace's settings for this call: an edge that answers more than once passes its own)."""
    services = services or Services(workspace)
    backend, tracer = services.backend, services.tracer
    settings = workspace.config.chat
    from llmwiki.read.search import SearchIndex

    index = SearchIndex.for_store(workspace.store)
    with tracer.span("ask", backend=backend.name) as span:
        standalone = condense(question, conversation, backend=backend, stopwords=index.stopwords, history_messages=settings.history_messages)
        standalone = _PTB_BRACKETS.sub(lambda match: _PTB[match.group()], standalone)  # text tokenised the Penn Treebank way
        standalone = adjunct_last(standalone)  # "In 1900, was the bridge ...?" is a yes/no question: "Was the bridge ... in 1900?"
        read_as = tuple(index.corrections(standalone).items())  # a slip of the keyboard must not make the sources "not say"
        for word, term in read_as:
            standalone = re.sub(rf"\b{re.escape(word)}\b", lambda match, term=term: term.capitalize() if match.group()[:1].isupper() else term, standalone, flags=re.IGNORECASE)
        if read_as:
            span.set(read_as=dict(read_as))
        with workspace.store.session():  # one connection for the selection's lookups, not one per lookup
            selection = select(workspace, standalone, open_page=open_page, services=services)
        span.set(selected=len(selection.items), chunks=len(selection.chunk_ids))
        if selection.refused:
            return Answer(question=question, read_as=read_as, text=selection.refused, selection=selection, backend=backend.name, refused=True, standalone_question=standalone)
        if selection.empty:
            return Answer(question=question, read_as=read_as, text=NOTHING_SELECTED + selection.readout, selection=selection, backend=backend.name, refused=True, standalone_question=standalone)
        verdict = None
        policy = AnswerPolicy.from_config(settings)
        if not backend.generates:
            reply = extractive_answer(workspace, standalone, selection, services=services, sentences=settings.answer_sentences, policy=policy)
            text, verdict = reply.text or NOT_SUPPORTED, reply.verdict
            if reply.refused or not reply.text:
                if on_token is not None:
                    on_token(text)
                return Answer(question=question, read_as=read_as, text=text, selection=selection, backend=backend.name, refused=True, standalone_question=standalone if standalone != question else None)
            if on_token is not None:
                on_token(text)
        else:
            if (reason := _unsaid_subject(workspace, standalone, selection, policy=policy)) is not None:  # asked before the model is
                text = f"{NOT_SUPPORTED} ({reason}.)"
                if on_token is not None:
                    on_token(text)
                return Answer(question=question, read_as=read_as, text=text, selection=selection, backend=backend.name, refused=True, standalone_question=standalone if standalone != question else None)
            messages = [{"role": "system", "content": prompts.SYSTEM}]
            if conversation is not None:
                messages += conversation.reduced(keep=settings.history_messages)
            prompt = prompts.ANSWER.format(context=_context_block(selection), question=standalone)
            messages.append({"role": "user", "content": prompt})
            completion = backend.complete(messages, on_token=on_token)
            span.set(model=completion.model, prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
                     prompt=tracer.payload(prompt), reply=tracer.payload(completion.text))
            text = completion.text.strip() or NOT_SUPPORTED
        with workspace.store.session():
            citations, unknown = _citations(workspace, text, selection.chunk_ids)
        text = _remove_unknown(text, unknown)
        if backend.generates and shape(standalone).yes_no:
            text, verdict = checked_verdict(standalone, text, citations, policy=policy)
        return Answer(question=question, read_as=read_as, text=text, selection=selection, citations=citations, backend=backend.name, verdict=verdict,
                      unknown_citations=unknown, standalone_question=standalone if standalone != question else None)


def _unsaid_subject(workspace: Workspace, question: str, selection: Selection, *, policy: AnswerPolicy = ANSWER_POLICY) -> str | None:
    """For a model backend, the extractive answer's rule on pronouns (``_whose``): why a question about an unnamed he
    or she, or a yes/no question about "it" or "they", cannot be answered from this selection, whose best sentences
    come from pages about different subjects; None when its words pin one down, beside an open page, or when the
    question names its subject. Asked before the model is: given Finland and Sweden, a model answers "Does it have a
    border with Norway?" about whichever it takes "it" to be."""
    question_shape = shape(question)
    pronoun = _unnamed(question, question_shape)
    if pronoun is None or any(item.kind == "open_page" for item in selection.items):
        return None
    candidates = _candidates(workspace, selection)
    if not candidates:
        return None
    _, may_lead, _ = _does_not_say(workspace, question, candidates, policy=policy, yes_no=question_shape.yes_no)
    ranking = hand_ranking(question, candidates, question_shape, policy=policy)
    return _whose(pronoun, [candidates[index] for _, index in ranking if not may_lead or may_lead[index]], policy=policy)


_MODEL_VERDICT = re.compile(r"^\W*(yes|no)\b[\s,.:;!—-]*", re.IGNORECASE)


def _left_out(statement: str, passages: Sequence[str]) -> list[str]:
    """The statement's numbers that every passage leaves out with no other number of their kind in their place: a
    passage silent on the year does not deny it (the extractive answer's rule for the model's contradiction)."""
    silent = [set(check_facts(statement, [passage]).unrivalled_numbers) for passage in passages]
    return sorted(set.intersection(*silent)) if silent else []


def _kind_verdicts(statement: str, subject: Sequence[str], passages: Sequence[str]) -> dict[str, str | None]:
    """{"yes" or "no": why} from the passages' sentences that settle a statement saying only what kind its subject is
    (``questions.kind_verdict``); {} for any other statement."""
    from llmwiki.text.segment import sentence_spans

    if kind_asked(statement, subject) is None:
        return {}
    found: dict[str, str | None] = {}
    for passage in passages:
        for start, end in sentence_spans(passage):
            if (settled := kind_verdict(statement, subject, " ".join(passage[start:end].split()))) is not None:
                found.setdefault(*settled)
    return found


def checked_verdict(question: str, text: str, citations: Sequence[Citation], *, policy: AnswerPolicy = ANSWER_POLICY) -> tuple[str, str | None]:
    """A model's yes or no held to the extractive answer's evidence rule before it is shown: (the text, the verdict).
    The verdict stands only when a passage it cites is about what the question names (``questions.question_subject``:
    named in the cited chunk, its section or its document's name) and speaks to what the question says of it (at
    least ``policy.no_relation_share`` of the statement's other words, as ``_speaks_to`` asks of the extractive
    answer's sentences), and, for a no, states the statement's numbers or others of their kind in their place (a
    passage silent on the year denies nothing about it); a question on what kind of thing the subject is is held to
    the cited sentences that say what it is (``_kind_verdicts``). Otherwise the reply is shown as not settled, with
    the reason, and its verdict is None. A reply that opens with neither word has no verdict and is left as it is."""
    match = _MODEL_VERDICT.match(text)
    if not match:
        return text, None
    subject = question_subject(question)
    titled = [(citation, f"{citation.breadcrumb} {Path(citation.path).stem.replace('-', ' ')}") for citation in citations]
    about = [f"{citation.text} {title}" for citation, title in titled if names_subject(subject, citation.text, title=title)]
    statement = to_statement(question)
    relation = _relation(statement, subject)
    verdict = match.group(1).lower()
    kinds = _kind_verdicts(statement, subject, about)  # "A kangaroo is a marsupial" answers "Is a kangaroo a reptile?"
    if not citations:
        reason = "the reply cites no passage"
    elif not about:
        reason = f"no passage it cites is about {' '.join(subject)}"
    elif len(kinds) == 1:
        said, why = next(iter(kinds.items()))
        if said == verdict:
            return text, verdict
        reason = f"a passage it cites on what {' '.join(subject)} is answers {said}" + (f", {why}" if why else "")
    elif relation and not any(_holds_relation(relation, text, policy) for text in about):
        unspoken = sorted(word for word in content_words(statement) if stem(word) in relation)
        reason = f"no passage it cites about {' '.join(subject) or 'it'} speaks to {', '.join(unspoken[:4])}"
    elif verdict == "no" and (silent := _left_out(statement, about)):
        reason = f"no passage it cites about {' '.join(subject) or 'it'} states {', '.join(silent)} or another in its place"
    else:
        return text, verdict
    return f"The sources do not settle this ({reason}); the model replied: {text}", None


# -- agentic chat ------------------------------------------------------------------------

TOOLS = [spec.openai() for spec in CHAT_TOOLS]  # one definition of each tool: llmwiki.tools, shared with the MCP server
_CHAT_SPECS = {spec.name: spec for spec in CHAT_TOOLS}


def run_tool(workspace: Workspace, name: str, arguments: dict, *, cited: set[int], services: Services) -> tuple[str, bool]:
    """Run one tool call; returns (text for the model, whether it found something substantive).
    services: the datasets and the search embedder the tools read.

    Every argument is checked (type, range, length) and no error escapes: whatever goes wrong is
    told to the model as a tool message, so one bad call never aborts an answer.
    """
    from llmwiki.datasets import DatasetError

    if not isinstance(arguments, dict):
        return f"Refused: the arguments of {name} must be a JSON object.", False
    spec = _CHAT_SPECS.get(name)
    if spec is None:
        return f"Unknown tool {name!r}. Use one of: {', '.join(_CHAT_SPECS)}.", False
    try:
        spec.check(arguments)
        if name in ("search_wiki", "search_sources"):
            result = search(workspace, text_argument(arguments, "query"), scope="wiki" if name == "search_wiki" else "sources", limit=limit_argument(arguments),
                            embedder=services.embedder)
            lines = [result.readout] + [f"[c{hit.chunk_id}] ({hit.label}) {hit.preview}" for hit in result.hits]
            cited.update(hit.chunk_id for hit in result.hits)
            return "\n".join(lines), bool(result.hits)
        if name == "read_page":
            text = read_wiki_page(workspace, text_argument(arguments, "path"))
            for chunk_id in cited_chunk_ids(text):
                cited.add(chunk_id)
            return text[:20_000], True
        frame = services.datasets.query(text_argument(arguments, "category"), key=text_argument(arguments, "key") or None,
                                           metric=text_argument(arguments, "metric") or None)
        shown_rows = SELECT_POLICY.max_dataset_rows
        rows = frame.head(shown_rows).to_dicts()
        return json.dumps(rows, default=str)[:20_000] + (f"\n({frame.height - shown_rows} more rows not shown)" if frame.height > shown_rows else ""), frame.height > 0
    except ToolArgumentError as err:
        return f"Refused: bad arguments for {name} ({err}).", False
    except (WorkspaceError, DatasetError) as err:
        return f"Refused: {err}", False
    except (TypeError, ValueError, OverflowError) as err:
        return f"Refused: bad arguments for {name} ({err}).", False
    except (OSError, LlmwikiError) as err:  # a path the file system will not take, an unreadable page
        return f"Refused: {name} failed ({type(err).__name__}: {str(err)[:300]}).", False


def agentic_answer(
    workspace,
    question: str,
    *,
    services: Services | None = None,
    strict: bool = True,
    conversation: Conversation | None = None,
    on_token: Callable[[str], None] | None = None,
) -> Answer:
    """Let the model use the tools; strict holds the answer until it rests on a tool result.
    services: the backend (a generating one), the tracer, the datasets and the search embedder the tools read
    (by default built from the workspace's settings for this call)."""
    services = services or Services(workspace)
    backend, tracer = services.backend, services.tracer
    if not backend.generates:
        raise LlmwikiError("agentic chat needs a generating backend with tool calls: set [llm] backend = \"openai\".")
    settings = workspace.config.chat
    blocked = select(workspace, question, services=services).refused if settings.blacklist else None
    if blocked:
        return Answer(question=question, text=blocked, selection=Selection(question=question, refused=blocked), backend=backend.name, refused=True)
    messages = [{"role": "system", "content": prompts.SYSTEM + " Use the tools to find passages before answering."}]
    if conversation is not None:
        messages += conversation.reduced(keep=settings.history_messages)
    messages.append({"role": "user", "content": question})
    cited: set[int] = set()
    substantive = False
    steps: list[str] = []
    text = ""
    for step in range(settings.max_tool_steps + 1):
        final_round = step == settings.max_tool_steps
        with tracer.span("ask.agent_step", step=step) as span:
            completion = backend.complete(messages, tools=None if final_round else TOOLS, on_token=None if strict else on_token)
            span.set(model=completion.model, prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens, tool_calls=len(completion.tool_calls))
        if not completion.tool_calls or final_round:  # past the step limit, tool calls are not run
            text = completion.text.strip()
            if final_round and completion.tool_calls:
                steps.append(f"step limit ({settings.max_tool_steps}) reached; further tool calls were not run")
            break
        messages.append({"role": "assistant", "content": completion.text or "", "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}} for call in completion.tool_calls]})
        for call in completion.tool_calls:
            result, found = run_tool(workspace, call.name, call.parsed_arguments(), cited=cited, services=services)
            substantive = substantive or found
            steps.append(f"{call.name}({call.arguments}) -> {'found' if found else result.splitlines()[0][:120]}")
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    else:
        text = ""
    selection = Selection(question=question, notes=tuple(steps))
    if strict and not substantive:
        refusal = "No tool found anything to rest an answer on, so none is given (strict mode)."
        return Answer(question=question, text=refusal, selection=selection, backend=backend.name, refused=True, tool_steps=tuple(steps))
    if strict and on_token is not None and text:
        on_token(text)
    citations, unknown = _citations(workspace, text, sorted(cited))
    text, verdict = _remove_unknown(text, unknown) or NOT_SUPPORTED, None
    if shape(question).yes_no:
        text, verdict = checked_verdict(question, text, citations, policy=AnswerPolicy.from_config(workspace.config.chat))
    return Answer(question=question, text=text, selection=selection, citations=citations, verdict=verdict,
                  backend=backend.name, unknown_citations=unknown, tool_steps=tuple(steps))


# -- saving an answer as a page ----------------------------------------------------------


def save_answer(workspace: Workspace, answer: Answer, *, title: str | None = None, services: Services | None = None) -> tuple[str, str | None]:
    """Write the answer as wiki/answers/<slug>.md (merged into an existing one); returns (path, commit).
    services: the verifier that checks a model's page under [review] hold (loaded only then; by default built from
    the workspace's settings)."""
    from llmwiki.generate import join_sections, split_sections, with_citations
    from llmwiki.pages import ANSWERS
    from llmwiki.publish.wiki import publish

    if answer.refused:
        raise LlmwikiError(f"a refusal cannot be saved as a page ({answer.text.strip()[:160]}): there is nothing cited to keep. Ask a question the sources answer.")
    if not answer.citations:
        raise LlmwikiError("only an answer with at least one citation can be saved as a page; ask again until the answer cites its sources.")
    title = (title or answer.question).strip().rstrip("?").strip() or "Answer"
    relative = f"{ANSWERS}/{slugify(title)}.md"
    path = workspace.root / relative
    now = datetime.now().isoformat(timespec="seconds")
    cited_sources = sorted({citation.path for citation in answer.citations} - {relative})
    store = workspace.store
    entries = [{"path": "chat"}] + [{"path": source, "hash": (store.document_by_path(source).content_hash if store.document_by_path(source) else None)} for source in cited_sources]
    section = f"## {answer.question.strip()}\n\n{answer.text.strip()}"
    with workspace.write_lock():
        if path.exists():
            meta, body = split_frontmatter(path.read_text(encoding="utf-8"))
            preamble, sections = split_sections(body)
            known = {entry["path"] for entry in source_entries(meta)}
            meta = dict(meta, updated=now, sources=source_entries(meta) + [entry for entry in entries if entry["path"] not in known])
        else:
            meta = {"title": title, "type": "answer", "description": CITATION.sub("", answer.text).strip().split("\n")[0][:200], "sources": entries,
                    "generated_by": answer.backend, "created": now, "updated": now}
            preamble, sections = f"# {title}", {}
        sections[f"chat {len(sections) + 1:03d} {now}"] = section
        text = with_citations(store, meta, join_sections(preamble, sections), relative)
        _, commit = publish(workspace, {relative: text}, operation="save answer", subject=relative)
    from llmwiki.review import apply_hold

    apply_hold(workspace, [relative], model_written=answer.backend != "extractive", verifier=(services or Services(workspace)).load_verifier)  # [review] hold
    return relative, commit
