"""The CMU Question-Answer Dataset (S08 in ../shared/data/cmu-qa): questions, references, and the check
that an answer holds a reference. Read by bench/qa.py and by the answer ranker's training."""

from __future__ import annotations

import re
from pathlib import Path


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _decoded(line: bytes) -> str:
    """A line of the questions file: most lines are UTF-8 ("Gospić"), a few Latin-1; decoding the whole file as
    Latin-1 turned the UTF-8 names into mojibake that no article holds ("Gospić" read as "GospiÄ" and a control
    character)."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("latin-1")


def load_questions(data: Path) -> list[dict]:
    """Distinct questions with their article (workspace path), set, difficulty and reference answers."""
    raw = (data / "question_answer_pairs.txt").read_bytes().replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    questions: dict[str, dict] = {}
    for line in map(_decoded, raw.split(b"\n")[1:]):
        parts = line.split("\t")
        if len(parts) < 6 or not parts[1].strip() or not parts[5].strip():
            continue
        question, answer, difficulty, article = parts[1].strip(), parts[2].strip(), parts[3].strip(), parts[5].strip()
        folder, name = article.split("/")[-2:]
        entry = questions.setdefault(question, {"question": question, "article": f"sources/{folder}-{name}.txt", "set": folder,
                                                "difficulty": difficulty or "unknown", "answers": []})
        if answer and answer.upper() != "NULL":
            entry["answers"].append(answer)
    return list(questions.values())


def reference_kind(entry: dict) -> str:
    """yes_no when the references are yes or no, fact when they name something, none without a reference."""
    answers = [normalise(answer) for answer in entry["answers"]]
    if not answers:
        return "none"
    if all(answer.split()[:1] in (["yes"], ["no"]) for answer in answers if answer):
        return "yes_no"
    return "fact"


def contains_reference(text: str, entry: dict) -> bool:
    haystack = f" {normalise(text)} "
    return any(f" {normalise(answer)} " in haystack for answer in entry["answers"] if normalise(answer) and normalise(answer) not in ("yes", "no"))
