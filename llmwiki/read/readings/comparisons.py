"""Readings of comparisons, which the NLI model reads poorly.

The model barely tells "A is older than B" from "B is older than A": these readings settle a comparison from the
sentences' words before, or beside, the model's reading.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from llmwiki.pages import CITATION
from llmwiki.read.candidates import quote, shown
from llmwiki.read.readings.core import Decision, Example, aside, reading, unsettled
from llmwiki.text import CLAUSE_BREAK, DETERMINERS, alternation, stem, tokens
from llmwiki.text.lexicon import default_lexicon
from llmwiki.text.questions import question_words

if TYPE_CHECKING:
    from llmwiki.read.readings.case import Case

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


_THAN = re.compile(r"\bthan\b", re.IGNORECASE)


def _sides(match: re.Match) -> tuple[set[str], set[str]]:
    """The stems of the content words of a comparison's two sides (``_COMPARISON``'s "a" and "b")."""
    return tuple({stem(word.lower()) for word in question_words(match.group(side))} for side in ("a", "b"))


def comparison_order(statement: str, text: str) -> int:
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
    clause = [stem(word.lower()) for word in tokens(CLAUSE_BREAK.split(_THAN.split(CITATION.sub("", text), 1)[0])[-1])]
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



@reading("comparison in a sentence", "comparison")
def comparison_in_a_sentence(case: Case) -> Decision | None:
    """A comparison ("Is A older than B?") settled by the best-ranked sentence that puts its two sides around "than"
    with the statement's comparative or its opposite: "The Asian elephant is smaller than the African" answers "Is an
    Asian elephant smaller than an African elephant?" yes, and "... larger than an African elephant?" no.

    None when no sentence does. Read before the model is asked, which barely tells the two orders apart."""
    if not case.yes_no or case.turned is None:
        return None
    statement = case.statement
    match = _COMPARISON.match(statement.strip())
    first, second = _sides(match)
    shared = first & second
    for candidate in case.ranked:
        if not _THAN.search(candidate.sentence):
            continue  # most sentences compare nothing: not shown (showing one may parse the text before it)
        text = shown(candidate)
        sign = comparison_order(statement, text) * _agreement(statement, text)
        held = {stem(word.lower()) for word in tokens(f"{text} {candidate.referent}")}
        if sign == 0 or not shared <= held:  # "elephant": both sides' head, in the sentence or its title
            continue
        if sign > 0:
            return Decision(f"Yes — {quote(candidate)}", verdict="yes", reason="the sentence compares the two in the question's order")
        return Decision(f"No — {quote(candidate)} {aside('the other way round')}", verdict="no", reason="the sentence compares the two the other way round")
    return None


@reading("comparison both ways", "comparison")
def comparison_both_ways(case: Case) -> Decision | None:
    """A comparison's yes/no reading read both ways, since an NLI model barely tells "A is older than B" from "B is
    older than A": a yes whose sentence puts the two the other way round ("B ... than A") is a no; otherwise the
    converse is read too, and a yes both ways settles nothing, while the converse alone supported is a no.

    None where the statement compares nothing, where its own reading is a no or a yes whose sentence keeps the
    question's order, or where the converse is not supported: the statement's reading stands."""
    if not case.yes_no or case.turned is None or not case.judged:
        return None
    reply = case.settled
    if reply.verdict == "no":
        return None
    order = comparison_order(case.statement, reply.text) if reply.verdict == "yes" else 0
    if order > 0:
        return None
    quoted = reply.text.removeprefix("Yes — ")
    if order < 0:
        return Decision(f"No — {quoted} {aside('the other way round')}", verdict="no", reason="the supporting sentence compares the two the other way round")
    other = case.settled_converse
    if other.verdict != "yes":
        return None
    if reply.verdict == "yes":
        return unsettled(f" — they read the comparison both ways: {quoted}", reason="the sources support the comparison both ways")
    return Decision(f"No — {other.text.removeprefix('Yes — ')} {aside('the other way round')}", verdict="no",
                    reason=f"the sources support the converse: {case.turned}")


# Each reading's cases: tests/test_readings.py reads each with the reading (it decides, as expected) and without it.
EXAMPLES = [
    Example("comparison in a sentence", "Is the Asian elephant larger than the African elephant?",
            (("Elephant", "The Asian elephant is smaller than the African elephant. Elephants eat grass and bark."),), "no"),
    Example("comparison in a sentence", "Is the African elephant larger than the Asian elephant?",
            (("Elephant", "The Asian elephant is smaller than the African elephant. Elephants eat grass and bark."),), "yes"),
]
