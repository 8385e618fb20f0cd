"""llmwiki: a notebook-driven analysis and QA workbench over a Markdown wiki.

The package in layers; a module imports only from its own layer or below
(``tests/test_layers.py`` checks this, and that no import cycle exists). The
packages follow the data flow: ``ingest`` (files -> stored chunks),
``generate`` (chunks -> page texts), ``publish`` (page texts -> files, store,
commit), ``store``, ``read`` (question -> answer), ``verify``.

1. foundations, no workspace: ``errors``, ``records``, ``text`` (the tokenizer, stemmers and word classes), ``policy`` (every value fitted on data), ``config``, ``pages``
   (Markdown pages and frontmatter), ``ingest.extract``, ``ingest.chunking``, ``publish.history``
   (git), ``backends`` (answer models), ``embeddings``, ``datasets``,
   ``tracing``, ``verify.nli`` and the pure checks of ``verify``,
   the CMU QA reader ``read.ranker.cmuqa``, ``pgserver`` (a throwaway PostgreSQL server for tests and benchmarks)
2. ``store``, the only package with SQL: one contract (``store.contract``) over the
   embedded DuckDB default (``store.duckdb_store``) and a shared PostgreSQL database
   (``store.postgres_store``, ``[store] url``), one schema (``store.schema``), and the
   verifier's score cache file (``store.score_cache``)
3. ``workspace``: a folder's paths, settings and store (it builds no model);
   ``verify.cache``: the verifier with its scores kept
4. the answer side's own models and readings: ``read.questions`` (what a question asks), ``read.parsing``
   (spaCy), ``read.ranker`` (the answer ranker)
5. ``services``: the models and services of a process (backend, verifier, ranker, embedders, tracer,
   datasets), built at its edge and handed to the steps below
6. read and derive: ``read.search`` (BM25 over stored chunks), ``ingest.sources`` (files ->
   stored documents and chunks), ``generate`` (stored chunks -> page texts)
7. ``publish.snapshots``: store copies at commits, restore, damaged-store recovery
8. ``publish.journal``: crash safety around every write, and ``open_workspace``
9. ``publish.wiki``: the one write path (publish), and ingest + generation as one unit
10. ``read.select`` (pre-retrieval), ``verify.page`` (page verification), ``verify.parallel`` (``verify --jobs``)
11. ``read.answer``, ``maintain`` (withdraw, edit, delete, restore), ``review`` (verdicts, queue, contested claims, held pages), ``read.ranker.train``
12. ``watch``: ingest on changes in sources/, with re-checks; ``mcp_server``: the workspace as MCP tools; ``notebook_args``: what the notebooks share
13. ``lint``
14. ``cli`` (and the notebooks): gather input, build the services, show output
"""

from llmwiki.errors import LlmwikiError

__all__ = ["LlmwikiError", "Workspace"]


def __getattr__(name: str):
    """``llmwiki.Workspace`` on first use: importing the package (``llmwiki --help``) stays light."""
    if name == "Workspace":
        from llmwiki.workspace import Workspace

        return Workspace
    raise AttributeError(f"module 'llmwiki' has no attribute {name!r}")
