"""One question prepared for the readings: everything they read, each part computed once, when first read.

``Case`` is a question with its candidate sentences (``read.candidates``): its shape, the weights of its words in
the store, the sentences' shares of them, their ranking, and for a yes/no question the sentences about its subject
and the statement read against them (``StatementCase``). A model is read only when a reading first needs what it
gives: a question refused on its words does not wait for the ranker or the verifier to load.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace

from llmwiki.policy import AnswerPolicy
from llmwiki.read.candidates import Candidate, hand_ranking, quotable, shown
from llmwiki.read.readings.comparisons import converse
from llmwiki.read.readings.core import Decision, decide
from llmwiki.read.readings.evidence import Judged, about_subject, about_text, holds_relation, only_another_number, relation_held, relation_of, speaks_to, title_for_subject
from llmwiki.text import stem, tokens
from llmwiki.text.facts import check_facts, name_words, numbers
from llmwiki.text.questions import (
    QUESTION_FRAME,
    question_words,
    debracket,
    pronoun_subject,
    question_names,
    question_subject,
    shape,
    unnamed_person,
    without_function_phrases,
    without_truth_frame,
)


class StatementCase:
    """A yes/no statement and the sentences about its subject (best first), each scored once: the calibrated score,
    the model's P(entailment) and P(contradiction) and the fact check (``Judged``). What the statement readings
    (``readings.statements``) read."""

    def __init__(self, statement: str, sentences: Sequence[Candidate], verifier, *, names: frozenset[str], subject: Sequence[str] = (),
                 policy: AnswerPolicy):
        self.statement, self.sentences, self.verifier = statement, list(sentences), verifier
        self.names, self.subject, self.policy = names, tuple(subject), policy

    @functools.cached_property
    def judged(self) -> list[Judged]:
        from llmwiki.verify.calibrate import load_calibration, sentence_features

        calibration = load_calibration(self.verifier.name)
        # The model reads each sentence as the answer shows it: "It is the smallest German-speaking country in the world"
        # against "Liechtenstein is the smallest ..." reads as a contradiction (0.87), "Liechtenstein is ..." as entailed.
        shown_texts = [shown(candidate) for candidate in self.sentences]
        premises = [debracket(text) for text in shown_texts]
        probabilities = self.verifier.score(premises, [self.statement] * len(self.sentences))
        judged = []
        for candidate, text, premise, row in zip(self.sentences, shown_texts, premises, probabilities):
            check = check_facts(self.statement, [candidate.sentence], contexts=[f"{candidate.referent}. {candidate.passage}"], names=self.names)
            title = {stem(word) for word in tokens(title_for_subject(candidate.referent, text))}
            if check.missing_names and all(stem(name) in title for name in check.missing_names):
                check = replace(check, missing_names=())  # a sentence is about its article's subject: "The city-state ..." in "Singapore"
            score = calibration.score(sentence_features([(float(row[0]), float(row[2]), check)]))
            judged.append(Judged(score, float(row[0]), float(row[2]), check, candidate, premise))
        return judged

    @functools.cached_property
    def best(self) -> Judged:
        return max(self.judged, key=lambda item: item.score)

    @functools.cached_property
    def closest(self) -> Judged:
        """Of the sentences that hold as many of the statement's words, one that says otherwise. The sentence that holds
        most of the statement's words decides against a looser one: "Penguins have few natural predators on land"
        answers "Do penguins have many predators?", not a sentence naming one predator."""
        return max(self.judged, key=lambda item: (item.check.coverage, item.check.contradicted))

    @functools.cached_property
    def relation(self) -> set[str]:
        return relation_of(self.statement, self.subject, self.best.check)

    @functools.cached_property
    def other_event(self) -> bool:
        """One that holds as many words as the best and only puts another number in the place of the statement's,
        against a best that states every fact as given, supports it and says as much of what the statement says: the
        two speak of different events ("Cleveland won the Presidency in the 1884 election" against "... there would
        not be another such election until ... 2000"). Where the other says more of it ("Young won the award in 2019"
        against "Young was nominated for the award in 2018", for "Young won the award in 2018"), its number decides."""
        best, closest = self.best, self.closest
        return (closest.check.coverage == best.check.coverage and only_another_number(closest.check) and not best.check.failed
                and best.score >= self.policy.yes_threshold
                and len(relation_held(self.relation, about_text(best.candidate))) >= len(relation_held(self.relation, about_text(closest.candidate))))

    @functools.cached_property
    def opposed(self) -> bool:
        """The closest sentence states otherwise (fact check) and holds as many words as the best, or fails a fact and
        holds more. One that holds as many and only lacks a fact decides nothing ("The John Adams Library ... contains
        Adams's personal collection", without Harvard, against "Young Adams went to Harvard College")."""
        best, closest = self.best, self.closest
        return (closest.check.contradicted and closest.check.coverage >= best.check.coverage and not self.other_event
                or closest.check.failed and closest.check.coverage > best.check.coverage)

    @functools.cached_property
    def replaced(self) -> bool:
        """The best sentence puts another word in the place of one of the statement's ("Indonesia is a republic with a
        presidential system" for "a monarchy with ..."): only the model can say the two agree, and it does not."""
        return bool(self.best.check.replaced_words) and self.best.entailment < self.policy.yes_threshold

    def model_denies(self, item: Judged) -> bool:
        """The model's contradiction is a "no" only where the sentence holds the statement's numbers: one that leaves a
        year out, stating none in its place, is silent on it, and the model reads the gap as a contradiction. A name is
        left to the model: "English and French are the official languages" denies "Canada's official language is Zulu"."""
        return item.contradiction >= self.policy.no_contradiction and not item.check.unrivalled_numbers

    @functools.cached_property
    def contested(self) -> Judged | None:
        """Where the best would be a yes: a sentence that holds as many words, speaks to the statement, and which the
        model reads as contradicting it more than the best reads as supporting it."""
        best = self.best
        if best.score < self.policy.yes_threshold or self.opposed:
            return None
        return next((item for item in self.judged if item is not best and item.check.coverage >= best.check.coverage and self.model_denies(item)
                     and item.contradiction > best.entailment and speaks_to(self.statement, self.subject, item.check, item.candidate, policy=self.policy)), None)

    @functools.cached_property
    def would_be_yes(self) -> bool:
        best = self.best
        return (best.score >= self.policy.yes_threshold and not self.opposed and self.contested is None and not self.replaced
                and (not self.relation or holds_relation(self.relation, about_text(best.candidate), self.policy)))


class Case:
    """A question and its candidate sentences, prepared for the answer readings (``registry.ANSWER``).

    index: the store's search index (term rarities, stopwords), or a function that makes it (called when first
    needed: a question answered without reading its words opens no index); services: the models, each read when first needed;
    open_page: whether the analyst has a page open (its subject is what "he" means); collection: the texts of a
    question about the wiki as a whole (its overview and index)."""

    def __init__(self, question: str, question_shape, candidates: Sequence[Candidate], *, index, services, policy: AnswerPolicy,
                 open_page: bool = False, collection: Sequence[str] = (), has_tables: bool = False, subject: Sequence[str] = (), answer_sentences: int = 2):
        self.question, self.shape, self.candidates = question, question_shape, list(candidates)
        self._index, self.services, self.policy = index, services, policy
        self.open_page, self.collection, self.has_tables = open_page, list(collection), has_tables
        self.subject, self.answer_sentences = tuple(subject), answer_sentences
        self.statement_readings = None  # the statement readings (``registry.STATEMENT`` unless a bench or a test leaves one out)

    @functools.cached_property
    def index(self):
        return self._index() if callable(self._index) else self._index

    @property
    def yes_no(self) -> bool:
        return bool(self.shape.yes_no)

    @functools.cached_property
    def statement(self) -> str:
        return self.shape.statement or self.question

    @functools.cached_property
    def pronoun(self) -> str | None:
        """A he/she that the question does not name (``questions.unnamed_person``), or the it/they a yes/no question has
        for its subject (``questions.pronoun_subject``: "Does it have a border with Norway?" names Norway, not what
        borders it); None when neither."""
        return unnamed_person(self.question) or (pronoun_subject(self.question) if self.yes_no else None)

    # -- the question's words, weighed ------------------------------------------------------

    @functools.cached_property
    def names(self) -> list[str]:
        return question_names(self.question)

    @functools.cached_property
    def held(self) -> set[str]:
        """The stems of every word of the selected passages."""
        return {stem(word) for passage in {candidate.passage for candidate in self.candidates} for word in tokens(passage)}

    @functools.cached_property
    def absent_names(self) -> list[str]:
        return [name for name in self.names if stem(name) not in self.held]

    @functools.cached_property
    def weights(self) -> dict[str, float]:
        """Each term of the question by its rarity in the store, past the question's frame (for a yes/no question, past
        its numbers too: "... in 1911?" names the fact to check, not its topic)."""
        weights = {term: weight for term, weight in self.index.rarity(without_function_phrases(without_truth_frame(self.question))).items()
                   if term not in QUESTION_FRAME}
        if self.yes_no:
            weights = {term: weight for term, weight in weights.items() if not term[:1].isdigit()}
        return weights

    @functools.cached_property
    def words(self) -> list[str]:
        """The question's words that carry weight."""
        from llmwiki.read.search import analyze

        return [word for word in question_words(self.question) if set(analyze(word, self.index.stopwords)) & set(self.weights)] or list(self.weights)

    def share(self, text: str) -> float:
        """The share of the question's weight that the text holds."""
        from llmwiki.read.search import analyze

        terms = set(analyze(text, self.index.stopwords))
        return sum(weight for term, weight in self.weights.items() if term in terms) / sum(self.weights.values())

    @functools.cached_property
    def minimum_shares(self) -> tuple[float, float]:
        """(sentence, passage): ``policy.min_shares_about_title`` when the question names the subject of a selected
        document, else ``policy.min_shares_else``."""
        from llmwiki.text.questions import names_a_title

        return self.policy.min_shares_about_title if names_a_title(self.question, {candidate.referent for candidate in self.candidates}) else self.policy.min_shares_else

    @functools.cached_property
    def sentence_shares(self) -> list[float]:
        return [self.share(f"{candidate.sentence} {candidate.section} {candidate.referent}") for candidate in self.candidates]

    @functools.cached_property
    def best_passage_share(self) -> float:
        # A passage holds many candidates: each (passage, title) is read once, not once per sentence (~70 ms a question).
        return max(self.share(f"{passage} {section} {referent}")
                   for passage, section, referent in {(candidate.passage, candidate.section, candidate.referent) for candidate in self.candidates})

    @functools.cached_property
    def may_lead(self) -> list[bool]:
        """Which candidates may lead an answer: those that hold the minimum share themselves (all, where no word of the
        question carries weight), or, where none does, those the sentence embedder reads as saying it in other words
        (``policy.paraphrase_cosine``). A sentence ranked first for its kind of answer (a date, a name) but about
        something else does not."""
        if not sum(self.weights.values()):
            return [True] * len(self.candidates)
        leads = [value >= self.minimum_shares[0] for value in self.sentence_shares]
        if not any(leads):  # one that says it in other words (``too little of the question``)
            leads = [index in self.paraphrased for index in range(len(self.candidates))]
        return leads

    @functools.cached_property
    def paraphrased(self) -> frozenset[int]:
        """The best hand-ranked candidates the sentence embedder reads as saying what the question asks in other words:
        cosine with the question at least ``policy.paraphrase_cosine`` (none where that is None), holding every number
        the question writes in figures. Other words may say the same; another year does not: "Canada began imposing
        hunting quotas in 1968" says nothing of what Canada adopted in 1965."""
        if self.policy.paraphrase_cosine is None:
            return frozenset()
        asked = written_numbers(self.question)
        return frozenset(index for index, cosine in self.cosines.items()
                         if cosine >= self.policy.paraphrase_cosine and asked <= written_numbers(self.candidates[index].sentence))

    # -- the sentences, ranked --------------------------------------------------------------

    @functools.cached_property
    def hand_ranking(self) -> list[tuple[float, int]]:
        return hand_ranking(self.question, self.candidates, self.shape, policy=self.policy)

    @functools.cached_property
    def inputs(self) -> list[str]:
        from llmwiki.read.ranker import ranker_input

        return [ranker_input(candidate.sentence, candidate.referent) for candidate in self.candidates]

    @functools.cached_property
    def cosines(self) -> dict[int, float]:
        """The sentence embedder's cosine of the question with the best hand-ranked sentences (``services.similarity``;
        {} without one)."""
        from llmwiki.read.ranker import similarities

        return similarities(self.services.similarity, self.question, self.inputs, self.hand_ranking, ranked=self.policy.ranked)

    @functools.cached_property
    def probabilities(self) -> dict[int, float]:
        """The answer ranker's P(holds the answer) of the best hand-ranked sentences (``services.ranker``; {} without one)."""
        from llmwiki.read.ranker import answer_probabilities

        return answer_probabilities(self.services.ranker, self.question, self.inputs, self.hand_ranking, ranked=self.policy.ranked)

    @functools.cached_property
    def ranking(self) -> list[tuple[float, int]]:
        """The answer's order: the hand ranking, reordered by the ranker and the embedder for a question that is not yes/no."""
        if self.yes_no:
            return self.hand_ranking
        from llmwiki.read.ranker import rerank

        return rerank(self.hand_ranking, self.probabilities, self.cosines, weight=self.policy.ranker_weight, similarity_weight=self.policy.similarity_weight)

    @functools.cached_property
    def ranked(self) -> list[Candidate]:
        return [self.candidates[index] for _, index in self.ranking]

    # -- a yes/no question ------------------------------------------------------------------

    @functools.cached_property
    def turned(self) -> str | None:
        """The statement read the other way round, where it is a comparison (``comparisons.converse``)."""
        return converse(self.statement)

    @functools.cached_property
    def judged(self) -> list[Candidate]:
        """The best-ranked sentences about the question's subject (``evidence.about_subject``)."""
        return about_subject(self.ranked, self.subject, limit=self.policy.yes_no_sentences)

    @functools.cached_property
    def fact_names(self) -> frozenset[str]:
        """The words the fact check reads as names: the passages' names and the question's."""
        return name_words({candidate.passage for candidate in self.candidates}) | {name.lower() for name in self.shape.names}

    @functools.cached_property
    def settled(self) -> Decision:
        """The statement read against the sentences about its subject (``registry.STATEMENT``)."""
        from llmwiki.read.readings.registry import STATEMENT

        case = StatementCase(self.statement, self.judged[:self.policy.yes_no_sentences], self.services.verifier, names=self.fact_names,
                             subject=self.subject, policy=self.policy)
        return decide(self.statement_readings or STATEMENT, case, list_name="statement")

    @functools.cached_property
    def settled_converse(self) -> Decision:
        """The comparison read the other way round (``turned``) against the sentences about its own subject."""
        from llmwiki.read.readings.registry import STATEMENT

        subject = question_subject(f"Is it true that {self.turned}")
        sentences = (about_subject(self.ranked, subject, limit=self.policy.yes_no_sentences) or self.judged)[:self.policy.yes_no_sentences]
        case = StatementCase(self.turned, sentences, self.services.verifier, names=self.fact_names, subject=subject, policy=self.policy)
        return decide(self.statement_readings or STATEMENT, case, list_name="statement")


def written_numbers(text: str) -> set[str]:
    """The numbers a text writes in figures ("1965", "3.11"), normalised (``facts.numbers``); not "two" or "first"."""
    return {value for value, written in numbers(tokens(text)).items() if written[:1].isdigit()}


class PassageIndex:
    """The store's term rarities over a few passages held in memory: what a case read without a store weighs a
    question's words by (the readings' examples, ``bench/readings.py``'s claims and evidence). The same analyzer,
    stopwords and formula as the store's index (``SearchIndex.rarity``)."""

    def __init__(self, passages: Sequence[str]):
        from llmwiki.read.search import analyze

        self.stopwords = _english_stopwords()
        self._documents = [set(analyze(passage, self.stopwords)) for passage in passages]

    def rarity(self, text: str) -> dict[str, float]:
        from llmwiki.read.search import analyze, rarity_weight

        return {term: rarity_weight(len(self._documents), sum(term in document for document in self._documents)) for term in analyze(text, self.stopwords)}


@functools.cache
def _english_stopwords() -> frozenset[str]:
    from llmwiki.store.duckdb_store import fts_english_stopwords

    return frozenset(fts_english_stopwords())


def case_of_passages(question: str, passages: Sequence[tuple[str, str]], *, services, policy: AnswerPolicy, answer_sentences: int = 2) -> Case:
    """A case read without a workspace: the question and passages given as (title, text), each passage one selected
    chunk in this order, its prose sentences the candidates, weighed by ``PassageIndex``. services: the models
    (a verifier for yes/no questions; ranker and similarity may be None)."""
    from llmwiki.text.segment import segments

    candidates = []
    for order, (title, text) in enumerate(passages):
        passage = " ".join(text.split())
        for part in segments(text):
            sentence = " ".join(text[part.start:part.end].split())
            if part.is_prose and quotable(sentence):  # the sentences an answer from the store would quote
                candidates.append(Candidate(sentence, order + 1, order, passage, title, text, part.start))
    question_shape = shape(question)
    return Case(question, question_shape, candidates, index=PassageIndex([text for _, text in passages]), services=services, policy=policy,
                subject=tuple(question_subject(question)) if question_shape.yes_no else (), answer_sentences=answer_sentences)
