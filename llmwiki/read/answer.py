"""Answers: one call from a selection, with citations, and the reading that decided it.

Every answer keeps the ids of the chunks it was given and cites them inline as ``[c123]``; ``Answer.citations``
resolves each to document, page and breadcrumb. Citations of chunks that were not in the context are dropped and
counted, never shown as if real. Every answer names the reading that decided it and the readings tried before it
(``Answer.decided_by``, ``Answer.steps``; ``readings.registry``).

- Nothing selected (or a refused question): the answer says so and no model is called.
- Extractive backend (``read.extractive``): the selection's sentences that answer the question, best first, each
  cited; a verdict for yes/no questions; dataset rows named by the question quoted as they are.
- Generating backend: one call with ``prompts.ANSWER``; streaming when ``on_token`` is given; a yes or a no held to
  the evidence rule (``readings.registry.MODEL``).

The agentic tool chat is ``read.chat``; follow-ups are condensed by ``read.conversation``; saving an answer as a page
is a write (``publish.answers``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from llmwiki import prompts
from llmwiki.pages import cited_chunk_ids
from llmwiki.policy import ANSWER_POLICY, AnswerPolicy
from llmwiki.read.conversation import Conversation, condense
from llmwiki.read.extractive import extractive_answer
from llmwiki.read.readings import Decision, Step, decide
from llmwiki.read.readings.model import ModelCase
from llmwiki.read.readings.refusals import NOT_SUPPORTED, NOTHING_SELECTED
from llmwiki.read.readings.registry import MODEL, SELECTION
from llmwiki.read.select import Selection, select
from llmwiki.services import Services
from llmwiki.text.questions import adjunct_last, default_frame, shape
from llmwiki.workspace import Workspace

__all__ = ["NOTHING_SELECTED", "NOT_SUPPORTED", "Answer", "Citation", "answer_question", "checked_verdict"]

_PTB = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
_PTB_BRACKETS = re.compile("|".join(map(re.escape, _PTB)))


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
    decided_by: str = ""  # the reading that decided (``readings.registry``): "supported", "names absent", "model reply", ...
    steps: tuple[Step, ...] = ()  # the readings tried, in order, the deciding one last (``llmwiki ask --why``)

    @property
    def read_as_note(self) -> str:
        """'Read "Monrow" as "monro", as the sources write it.', or '' when nothing was corrected."""
        if not self.read_as:
            return ""
        pairs = ", ".join(f'"{word}" as "{term}"' for word, term in self.read_as)
        return f"Read {pairs}, as the sources write it."

    def as_json(self) -> dict:
        """The answer as plain data (``llmwiki ask --json``)."""
        return {"question": self.question, "answer": self.text, "verdict": self.verdict, "refused": self.refused,
                "read_as": {word: term for word, term in self.read_as},
                "citations": [{"id": citation.chunk_id, "path": citation.path, "page": citation.page, "text": citation.text} for citation in self.citations],
                "backend": self.backend, "selection": self.selection.readout,
                "decided_by": self.decided_by, "steps": [step.as_json() for step in self.steps]}

    @property
    def why(self) -> str:
        """The readings tried, one line each, the deciding one last (``llmwiki ask --why``)."""
        lines = [f"decided by: {self.decided_by or 'nothing'}"]
        lines += [f"  {step.reading}: {step.outcome}" + (f" ({step.reason})" if step.reason else "") for step in self.steps]
        return "\n".join(lines)

    @property
    def context_chunk_ids(self) -> list[int]:
        return self.selection.chunk_ids



def citations_of(workspace: Workspace, text: str, allowed: Sequence[int]) -> tuple[tuple[Citation, ...], tuple[int, ...]]:
    cited = cited_chunk_ids(text)
    allowed_set = set(allowed)
    unknown = tuple(chunk_id for chunk_id in cited if chunk_id not in allowed_set)
    known = [chunk_id for chunk_id in cited if chunk_id in allowed_set]
    targets = workspace.store.citation_targets(known)
    texts = workspace.store.chunk_texts(known) if known else {}
    return tuple(Citation(chunk_id, *targets[chunk_id], text=texts.get(chunk_id, "")) for chunk_id in cited if chunk_id in targets), unknown



def remove_unknown(text: str, unknown: Sequence[int]) -> str:
    for chunk_id in unknown:
        text = text.replace(f" [c{chunk_id}]", "").replace(f"[c{chunk_id}]", "")
    return text



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
        asked = functools.partial(Answer, question=question, read_as=read_as, selection=selection, backend=backend.name,
                                  standalone_question=standalone if standalone != question else None)

        def finish(answer: Answer) -> Answer:
            span.set(decided_by=answer.decided_by, verdict=answer.verdict, refused=answer.refused)
            return answer

        if (blocked := decide(SELECTION, selection, list_name="selection")) is not None:
            return finish(asked(text=blocked.text, refused=True, decided_by=blocked.by, steps=blocked.steps))
        verdict, decided_by, steps = None, "model reply", ()
        policy = AnswerPolicy.from_config(settings)
        if not backend.generates:
            # "... unless I say otherwise?" asks what happens by default, and documentation says "by default"
            reply = extractive_answer(workspace, default_frame(standalone), selection, services=services, sentences=settings.answer_sentences, policy=policy)
            text, verdict, decided_by, steps = reply.text or NOT_SUPPORTED, reply.verdict, reply.decided_by, reply.steps
            if on_token is not None:
                on_token(text)
            if reply.refused or not reply.text:
                return finish(asked(text=text, refused=True, decided_by=decided_by, steps=steps))
        else:
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
            citations, unknown = citations_of(workspace, text, selection.chunk_ids)
        text = remove_unknown(text, unknown)
        if backend.generates and shape(standalone).yes_no and (checked := checked_verdict(standalone, text, citations, policy=policy)) is not None:
            text, verdict, decided_by, steps = checked.text, checked.verdict, checked.by, checked.steps
        return finish(asked(text=text, citations=citations, verdict=verdict, unknown_citations=unknown, decided_by=decided_by, steps=steps))


def checked_verdict(question: str, text: str, citations: Sequence[Citation], *, policy: AnswerPolicy = ANSWER_POLICY) -> Decision | None:
    """A model's yes or no held to the extractive answer's evidence rule before it is shown: the first decision of
    ``readings.registry.MODEL`` (the reply with its verdict where it stands, else shown as not settled with the
    reason and no verdict). None for a reply that opens with neither word: it has no verdict and is left as it is."""
    case = ModelCase(question, text, citations, policy=policy)
    return decide(MODEL, case, list_name="model") if case.verdict is not None else None
