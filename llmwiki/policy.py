"""Every value chosen on data, in one frozen record per step, with the data and figure it was chosen on.

A number that was read off a benchmark (a threshold, a weight, a count of
sentences) lives here, documented, and is passed to the step that uses it;
plain-English constants (a sentence is four words or more, a preview is 400
characters) stay where they are, named. ``AnswerPolicy.from_config`` takes
what a user may override in wiki_config.toml (how strict refusals are);
the verifier's windows and threshold are ``[verification]`` settings.

The data: CMU QA S08 (``../shared/data/cmu-qa``, four sets of Wikipedia
articles and questions), fitted with each set held out where the figure
says "held out"; the changed-fact claims bench/verify.py makes from the same
articles; WiCE dev. No value here was fitted on one example.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class AnswerPolicy:
    """How the extractive answer ranks sentences, gives verdicts and refuses (llmwiki.read.answer, llmwiki.text.questions)."""

    # The share of a question's terms, each weighted by its rarity in the store, that the best sentence and the best
    # passage must hold before anything is answered (sentence, passage). The corpus a workspace holds is interlinked:
    # asked without its article, "What is the largest city in Romania?" still finds Romania in passing in articles
    # about other things. A question that names the subject of a selected document (a word of its title) is asked of
    # an article about it, so less of its wording must match; one that names none must match more. Set on S08 with
    # each set's questions asked of a workspace of the other three (bench/refusals.py): off-topic refused 0.889 ->
    # 0.913 and answerable refused 0.050 -> 0.042 against one pair (0.45, 0.5) for every question, better on each set.
    min_shares_about_title: tuple[float, float] = (0.3, 0.35)
    min_shares_else: tuple[float, float] = (0.5, 0.55)
    # ... unless the sentence embedder reads one of the best sentences as saying what the question asks in other
    # words: its cosine with the question at least this (None: never), holding the numbers the question writes in
    # figures. Max cosine of the questions the shares refused (bench runs of 2026-12-06): off-topic 0.03-0.55 on S08
    # (set 4 asked of sets 1-3, 29 questions) and 0.09-0.30 on realdocs (10); answerable 0.48-0.68 on S08 (5) and
    # 0.39-0.68 on realdocs and the written sets (10). 0.6 until 2026-12-07; at 0.56, with the numbers held, every
    # S08 fold, Cranfield, WiCE, the sample (every 4th question) and bench/qa.py answer as at 0.6, and realdocs
    # refuses 2 fewer answerable questions, the written sets 2 fewer (their cosines 0.562-0.595). Thin margins: at
    # 0.55 two off-topic S08 questions are answered (0.551, 0.556); without the numbers held, one more (0.568).
    paraphrase_cosine: float | None = 0.56
    # The calibrated verifier score at which a yes/no statement counts as supported (the verifier's own threshold).
    yes_threshold: float = 0.5
    # P(contradiction) of the closest sentence at which a yes/no statement is answered no.
    no_contradiction: float = 0.5
    # ... and only from a sentence holding at least this share of the statement's words past its subject and the
    # facts it lacks (evidence.speaks_to). Half, set by reading, not swept: measured once on the S08 folds with the
    # subject rule (bench/refusals.py, README: off-topic verdicts 13 -> 4, yes/no balanced 0.685 -> 0.654).
    no_relation_share: float = 0.5
    # The selector's order as a prior in the hand ranking: prior / (1 + place). bench/qa.py: 0.551 vs 0.539 at 0.05.
    selector_prior: float = 0.5
    # Added to a sentence's hand score when it holds the kind of thing asked for (a date for "when", a name for
    # "who"); S08 fact questions, bench/ranker.py's hand rows.
    answer_type_bonus: float = 0.35
    # The best sentences about the question's subject that a yes/no verdict reads (S08 yes/no questions, bench/qa.py).
    yes_no_sentences: int = 4
    # The sentences an answer gives when the question asks to list, describe or explain.
    listing_sentences: int = 3
    # The answer ranker (llmwiki.read.ranker): the hand ranking's best `ranked` sentences are reordered by score +
    # ranker_weight x P(holds the answer) + similarity_weight x cosine(question, sentence). S08, each set held out
    # (bench/ranker.py): the reference is in the best 12 for 0.66 of fact questions; first sentence / first two hold
    # it 0.525 / 0.605 -> 0.537 / 0.605 with the cosine.
    ranked: int = 12
    ranker_weight: float = 2.0
    similarity_weight: float = 2.0

    @classmethod
    def from_config(cls, chat) -> AnswerPolicy:
        """The shipped policy with what a workspace's ``[chat]`` overrides (refusal shares, the paraphrase cosine)."""
        policy = cls()
        overrides: dict = {name: tuple(getattr(chat, name)) for name in ("min_shares_about_title", "min_shares_else") if getattr(chat, name, None) is not None}
        if getattr(chat, "paraphrase_cosine", None) is not None:
            overrides["paraphrase_cosine"] = None if chat.paraphrase_cosine >= 1 else chat.paraphrase_cosine
        return replace(policy, **overrides) if overrides else policy


@dataclass(frozen=True)
class SelectPolicy:
    """How much context the pre-retrieval selector gathers (llmwiki.read.select)."""

    # Source chunks cited by the selected wiki chunks are followed up to max(follow_factor x source_chunks,
    # min_followed): S08 bench/qa.py, the share of fact questions whose context holds the answer.
    follow_factor: int = 2
    min_followed: int = 4
    # Dataset rows shown to an answer or a tool call; more are counted, not shown (a plain bound on context size).
    max_dataset_rows: int = 50


@dataclass(frozen=True)
class VerifyPolicy:
    """What the verifier's fact checks read (llmwiki.text.facts) and how many premises it scores (llmwiki.verify.page)."""

    # A negation governs the words this far after it ("never accepted the offer"): changed-fact claims of
    # bench/verify.py, negation caught 87.5 on S08 sets 3-4 held out.
    negation_scope: int = 3
    # A clause its best-ranked premise window entails this surely is not scored against its other windows
    # (llmwiki.verify.page): a supported page costs one model pair per clause instead of four. Changed-fact
    # claims of bench/verify.py, S08 sets 1-2: every value from 0.8 to 0.95 kept true passed / false caught
    # at 94.2 / 94.2; held out on sets 3-4, 0.9 gave 98.2 / 95.4 against 98.6 / 95.0 with none settled;
    # the sample wiki's pages: 588 model pairs -> 329.
    settled_entailment: float | None = 0.9


ANSWER_POLICY = AnswerPolicy()
SELECT_POLICY = SelectPolicy()
VERIFY_POLICY = VerifyPolicy()
