"""Saving an answer as a wiki page: a write, through the one write path (``publish``) and the review hold."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from llmwiki.errors import LlmwikiError
from llmwiki.pages import CITATION, slugify, source_entries, split_frontmatter
from llmwiki.publish.wiki import publish
from llmwiki.services import Services
from llmwiki.workspace import Workspace

if TYPE_CHECKING:
    from llmwiki.read.answer import Answer

def save_answer(workspace: Workspace, answer: Answer, *, title: str | None = None, services: Services | None = None) -> tuple[str, str | None]:
    """Write the answer as wiki/answers/<slug>.md (merged into an existing one); returns (path, commit).
    services: the verifier that checks a model's page under [review] hold (loaded only then; by default built from
    the workspace's settings)."""
    from llmwiki.generate import join_sections, split_sections, with_citations
    from llmwiki.pages import ANSWERS

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

