"""Conversations: the turns of a chat, and a follow-up ("and in 2023?") rewritten to stand alone before selection.

The model sees a reduced history (refused exchanges dropped, large tables replaced by a placeholder, the last
``history_messages``); the full conversation stays with the caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from llmwiki import prompts
from llmwiki.backends import Backend, BackendError
from llmwiki.text import DEMONSTRATIVES, PERSONAL_PRONOUNS, alternation

if TYPE_CHECKING:
    from llmwiki.read.answer import Answer

_TABLE_BLOCK = re.compile(r"(?:^\|.*\|[ \t]*\n){6,}", re.MULTILINE)

_FOLLOW_UP = re.compile(rf"^\s*(and|what about|how about|also|then|but|same|and in|in)\b|\b{alternation(PERSONAL_PRONOUNS | DEMONSTRATIVES)}\b", re.IGNORECASE)


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

