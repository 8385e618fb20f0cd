"""What the readings share: which sentences are about a question's subject, and whether one speaks to what it says.

A yes or a no rests on a sentence about what the question names (``about_subject``) that also speaks to what the
question says of it (``speaks_to``: the statement's other words, ``relation_of``, stand in the sentence or its
document's title). ``Judged`` is a sentence scored for a statement once: the calibrated score, the model's
entailment and contradiction, and its fact check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from llmwiki.policy import ANSWER_POLICY, AnswerPolicy
from llmwiki.read.candidates import Candidate, shown
from llmwiki.text import NEGATIONS, stem, tokens
from llmwiki.text import parsing
from llmwiki.text.facts import FactCheck
from llmwiki.text.lexicon import default_lexicon
from llmwiki.text.questions import question_words, debracket, names_subject, opening_referent

class Judged(NamedTuple):
    """A sentence read for a yes/no statement: its calibrated score, the model's P(entailment) and P(contradiction),
    its fact check."""

    score: float
    entailment: float
    contradiction: float
    check: FactCheck
    candidate: Candidate
    premise: str  # the sentence as the model read it (``shown``, without brackets)


def why_not(check: FactCheck, statement: str) -> str | None:
    """The reason a "no" shows: the fact check's, where a negated question ("Did he not die at 55?") is answered no
    because the passage says it without the "not", said so in the question's terms."""
    if check.negation == "sentence" and holds_negation(statement):
        return "; ".join(filter(None, (replace(check, negation=None).reason(), 'the question says "not", the passage does not')))
    return check.reason()


def speaks_to(statement: str, subject: Sequence[str], check, candidate: Candidate, *, policy: AnswerPolicy = ANSWER_POLICY) -> bool:
    """Whether a sentence about the statement's subject also speaks to what the statement says of it, so that a
    name, a number or a contradiction it opposes is a "no" and not a sentence on another matter: at least
    ``policy.no_relation_share`` of the statement's other words (past its subject and the names and numbers the
    sentence lacks) stand in the sentence or its document's title. "English and French are the official
    languages" speaks to "Canada's official language is Zulu" (official, language); "Though Theodore Roosevelt
    considered the large timber wolves ..." does not speak to "Theodore Roosevelt went to Harvard". The same share of
    what it says besides names and numbers must stand there too, where it says anything besides them."""
    relation = relation_of(statement, subject, check)
    if not relation or not holds_relation(relation, about_text(candidate), policy):
        return False
    # What it says besides the names it relates: "Women can legally drive in Qatar, whereas they may not in Saudi
    # Arabia" names Saudi Arabia but says nothing of "Qatar is bordered by Saudi Arabia to the south".
    said = relation - {stem(word) for word in tokens(statement) if word[:1].isupper() or word[:1].isdigit()}
    return not said or holds_relation(said, about_text(candidate), policy)


def title_for_subject(title: str, shown_text: str) -> str:
    """The document's title where it may stand for the subject of a sentence as the answer shows it (``shown``): "The
    city-state ..." in "Singapore"; '' where the sentence opens with a pronoun shown as something else: "[The building]
    was completed in November 2000" in "Liechtenstein" is about the building, and says nothing of when Liechtenstein
    was completed."""
    referent = opening_referent(shown_text)
    if referent is not None and not {stem(word) for word in tokens(referent)} & {stem(word) for word in tokens(title)}:
        return ""
    return title


def only_another_number(check: FactCheck) -> bool:
    """Whether all a sentence states otherwise is a number: another one of its kind in the place of one of the
    statement's (a year for its year), no name, opposite or negation."""
    return bool(set(check.missing_numbers) - set(check.unrivalled_numbers)) and not (
        check.opposed or check.negation or set(check.missing_names) - set(check.unrivalled_names))


def about_text(candidate: Candidate) -> str:
    """What a sentence says and what it is about: the sentence and its document's title."""
    return f"{candidate.sentence} {candidate.referent}"


def relation_held(relation: set[str], text: str) -> set[str]:
    """The stems of what a statement says of its subject (``relation_of``) that the text holds, an irregular form
    standing for its base form: "He won the 1903 Nobel Prize" holds "win"."""
    lexicon = default_lexicon()
    forms = {form for word in tokens(text) for form in (lexicon.base_forms(word) if lexicon is not None else (word,))}
    return relation & {stem(form) for form in forms}


def holds_relation(relation: set[str], text: str, policy: AnswerPolicy = ANSWER_POLICY) -> bool:
    """Whether the text holds ``policy.no_relation_share`` of the stems a statement says of its subject (``relation_held``)."""
    return len(relation_held(relation, text)) >= policy.no_relation_share * len(relation)


def holds_negation(text: str) -> bool:
    return any(word.lower() in NEGATIONS for word in tokens(text))  # tokens() reads "n't" as "not"


def relation_of(statement: str, subject: Sequence[str], check: FactCheck | None = None) -> set[str]:
    """The stems of what a statement says of its subject: its content words past the subject and the names and numbers
    a sentence's fact check found it lacks (``speaks_to``). Empty when the subject took all of them ("Are Kangaroos Shy?")."""
    lacking = (*check.missing_names, *check.missing_numbers) if check is not None else ()
    return {stem(word) for word in question_words(statement)} - {stem(word) for word in (*subject, *lacking)}


def about_subject(ranked: Sequence[Candidate], subject: Sequence[str], *, limit: int | None = None) -> list[Candidate]:
    """The first ``limit`` candidates (all by default) about what a yes/no question names (``questions.question_subject``),
    in order: the sentence as the answer shows it (an opening pronoun resolved, after the sentence it points back at)
    or its document's title or the headings above it (a manual's "tkcanvas" section) name the subject, and where the sentence's main subject names something else, what it is
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
        title = title_for_subject(candidate.referent, text)
        if not names_subject(subject, text, title=f"{title} {candidate.section}" if title else ""):
            continue
        if parsing.states_something(candidate.sentence) is False:
            continue  # a heading, a list item or a caption ("Wilson, then president of United States") asserts nothing
        arguments = parsing.named_elsewhere(candidate.sentence if candidate.antecedent else debracket(text)) if subject else None
        if arguments is not None and not named & {stem(word) for word in tokens(" ".join(arguments))}:
            continue  # "Goannas ... pose a danger to smaller kangaroo species" names kangaroos, but is about goannas
        found.append(candidate)
    return found

