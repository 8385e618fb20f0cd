"""The models and services a step uses, built once at the edge and handed in.

A workspace holds paths, settings and the store; it builds no model. Whatever
answers, verifies, ranks, embeds, traces or reads datasets is made here, by
the code at the edge of a process (a CLI command, a notebook's setup cell,
the MCP server, a ``verify --jobs`` worker, a test fixture), and passed to the
steps that use it: ``answer_question(workspace, question, services=...)``,
``lint(workspace, services=...)``, ``search(workspace, query,
embedder=...)``.

Each part is made on first use, from the workspace's settings, and kept for
the life of the ``Services`` object: a question refused on its words never
waits for the answer ranker, and a notebook's every Verify click reuses the
verifier its setup cell's object loaded. A caller (a test, a bench) may hand
in any part instead (``Services(workspace, verifier=fake, ranker=None)``;
None means "none" for the ranker, the similarity embedder and the search
embedder). Nothing is cached for the process, so there is nothing for a test
to clear.
"""

from __future__ import annotations

import functools
from pathlib import Path

from llmwiki.config import WikiConfig
from llmwiki.workspace import Workspace

_FROM_SETTINGS = object()  # "build it from the workspace's settings", where None means "none"
PARTS = ("backend", "nli", "verifier", "ranker", "similarity", "embedder", "tracer", "datasets")


class Services:
    """The answer backend, the verifier, the answer ranker and embedders, the tracer and the datasets of one workspace,
    each made on first use from its settings unless handed in."""

    def __init__(self, workspace: Workspace, *, backend=_FROM_SETTINGS, nli=_FROM_SETTINGS, verifier=_FROM_SETTINGS, ranker=_FROM_SETTINGS,
                 similarity=_FROM_SETTINGS, embedder=_FROM_SETTINGS, tracer=_FROM_SETTINGS, datasets=_FROM_SETTINGS) -> None:
        self.settings: WikiConfig = workspace.config
        self.state_dir: Path = workspace.state_dir
        self.datasets_dir: Path = workspace.datasets_dir
        self._embedders: dict[tuple[str, bool], object] = {}
        given = {"backend": backend, "nli": nli, "verifier": verifier, "ranker": ranker, "similarity": similarity, "embedder": embedder,
                 "tracer": tracer, "datasets": datasets}
        self.__dict__.update({name: part for name, part in given.items() if part is not _FROM_SETTINGS})  # what cached_property reads first

    def loaded(self, part: str) -> bool:
        """Whether part (one of PARTS) has been made or handed in: a caller may say "loading the verifier" first."""
        if part not in PARTS:
            msg = f"{part!r} is not a part of Services; the parts: {', '.join(PARTS)}"
            raise ValueError(msg)
        return part in self.__dict__

    @functools.cached_property
    def backend(self):
        """The answer backend named in [llm]."""
        from llmwiki.backends import make_backend

        return make_backend(self.settings.llm)

    @functools.cached_property
    def nli(self):
        """The model named in [verification] alone, its scores not kept (``llmwiki.verify.nli.load_verifier``)."""
        from llmwiki.verify.nli import load_verifier

        settings = self.settings.verification
        return load_verifier(settings.model, int8=settings.int8, max_length=settings.max_length, runtime=settings.runtime)

    @functools.cached_property
    def verifier(self):
        """The verifier named in [verification]; an NLI model's scores are kept in .llmwiki/scores.sqlite unless
        [verification] cache_scores = false (``llmwiki.verify.cache``)."""
        if not self.settings.verification.cache_scores:
            return self.nli
        from llmwiki.verify.cache import cached

        return cached(self.nli, self.state_dir)

    def load_verifier(self):
        """The verifier (for the steps that take "a verifier or a callable that loads one" and may need none)."""
        return self.verifier

    @functools.cached_property
    def ranker(self):
        """The answer ranker named in [chat] answer_ranker, or None for the hand ranking alone."""
        from llmwiki.read.ranker import load_ranker

        return load_ranker(self.settings.chat.answer_ranker, int8=self.settings.verification.int8)

    @functools.cached_property
    def similarity(self):
        """The sentence embedder named in [chat] answer_similarity that compares questions with sentences, or None."""
        from llmwiki.read.ranker import NO_RANKER

        name = self.settings.chat.answer_similarity
        return None if name == NO_RANKER else self._embedder(name, self.settings.verification.int8)

    @functools.cached_property
    def embedder(self):
        """The chunk embedder of hybrid retrieval ([retrieval] embedding_model), or None when [retrieval] hybrid is off."""
        retrieval = self.settings.retrieval
        return self._embedder(retrieval.embedding_model, retrieval.embedding_int8) if retrieval.hybrid else None

    def _embedder(self, name: str, int8: bool):
        """One sentence-transformers embedder per model name and precision in this object (the similarity and the
        search embedder are one model when their settings agree)."""
        if (name, int8) not in self._embedders:
            from llmwiki.embeddings import SentenceTransformerEmbedder

            self._embedders[name, int8] = SentenceTransformerEmbedder(name, int8=int8)
        return self._embedders[name, int8]

    @functools.cached_property
    def tracer(self):
        """The workspace's tracer ([tracing] in wiki_config.toml)."""
        from llmwiki.tracing import NULL_TRACER, Tracer

        tracing = self.settings.tracing
        return Tracer(self.state_dir / "traces", payloads=tracing.payloads) if tracing.enabled else NULL_TRACER

    @functools.cached_property
    def datasets(self):
        """The workspace's DatasetSource (its parse cache lives as long as this object)."""
        from llmwiki.datasets import DatasetSource

        return DatasetSource(self.datasets_dir, aliases=self.settings.datasets.aliases)
