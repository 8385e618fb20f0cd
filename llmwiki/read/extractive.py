"""The extractive backend's answer: the readings of ``readings.registry.ANSWER`` on the selection's sentences.

No model writes the answer: the sentence that answers the question comes first, cited; a yes/no question gets a
verdict from the sentences about its subject; "the sources do not say" when the selection does not match the
question. The reading that decided, and those tried before it, come with the reply. Dataset rows named by the
question are quoted as they are; a question about the wiki as a whole gets its overview and index.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from llmwiki.pages import CITATION
from llmwiki.policy import AnswerPolicy
from llmwiki.read.candidates import selection_candidates
from llmwiki.read.readings import Step, decide
from llmwiki.read.readings.case import Case
from llmwiki.read.readings.refusals import refusal
from llmwiki.read.readings.registry import ANSWER
from llmwiki.read.select import Selection
from llmwiki.services import Services
from llmwiki.text.questions import question_subject, shape
from llmwiki.workspace import Workspace


@dataclass(frozen=True)
class ExtractiveReply:
    text: str
    verdict: str | None = None  # "yes" / "no" for a yes/no question that the sources settle
    refused: bool = False  # "the sources do not say": nothing to cite, nothing to save
    decided_by: str = ""  # the reading that decided (``readings.registry``)
    steps: tuple[Step, ...] = ()  # the readings tried, in order, the deciding one last


def prepare(workspace: Workspace, question: str, selection: Selection, *, services: Services, policy: AnswerPolicy, sentences: int = 2) -> Case:
    """The question and the selection's candidate sentences as the readings read them (``readings.case.Case``).
    Beside an open page, a question about an unnamed "he" is about that page's subject: only the sentences of the
    documents the page cites are read."""
    from llmwiki.read.search import SearchIndex

    candidates = selection_candidates(workspace, selection)  # titles come with the selection: no connection, none held while a model runs
    open_pages = [item for item in selection.items if item.kind == "open_page"]
    question_shape = shape(question)
    case = Case(question, question_shape, candidates, index=functools.partial(SearchIndex.for_store, workspace.store), services=services, policy=policy,
                open_page=bool(open_pages), collection=[item.text for item in selection.items if item.kind in ("collection", "open_page")],
                has_tables=any(item.kind in ("dataset", "dataset_keys") for item in selection.items), answer_sentences=sentences)
    if open_pages and case.pronoun:  # "he" is the open page's subject: the sources it cites are about them
        cited = {int(number) for item in open_pages for number in CITATION.findall(item.text)}
        subjects = {candidate.referent for candidate in candidates if candidate.chunk_id in cited}
        case.candidates = [candidate for candidate in candidates if candidate.referent in subjects] or candidates
    case.subject = tuple(question_subject(question)) if question_shape.yes_no else ()  # read once: it may parse the question
    return case


def extractive_answer(workspace: Workspace, question: str, selection: Selection, *, services: Services, sentences: int = 2,
                      policy: AnswerPolicy | None = None) -> ExtractiveReply:
    """The first decision of the answer readings (``readings.registry.ANSWER``) on this question's sentences.

    services: where the models come from, each read only when a reading needs it (``llmwiki.services``): ``ranker``
    reorders the best hand-ranked sentences of a question that is not yes/no (None: the hand ranking alone);
    ``similarity``, the sentence embedder that compares the question with those sentences, reorders them too (None:
    it does not); ``verifier`` settles yes/no questions.
    policy: the fitted thresholds and counts (``llmwiki.policy``); by default the workspace's ``[chat]`` settings
    over the shipped ones. A refusal where the question names dataset rows shows the rows instead."""
    policy = policy or AnswerPolicy.from_config(workspace.config.chat)
    tables = [item for item in selection.items if item.kind in ("dataset", "dataset_keys")]
    table_text = "".join(f"\n\nFrom {item.label} ({item.path}):\n\n{item.text}" for item in tables)
    decision = decide(ANSWER, prepare(workspace, question, selection, services=services, policy=policy, sentences=sentences), list_name="answer")
    if decision is None:  # every list ends in a reading that decides; only a list with readings left out gets here
        decision = refusal("no reading decided")
    if decision.refused and tables:
        return ExtractiveReply(table_text.strip(), decided_by=decision.by, steps=decision.steps)
    return ExtractiveReply((decision.text + table_text).strip(), verdict=decision.verdict, refused=decision.refused, decided_by=decision.by, steps=decision.steps)
