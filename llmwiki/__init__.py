"""llmwiki: a notebook-driven analysis and QA workbench over a Markdown wiki.

The package in layers; a module imports only from its own layer or below
(``tests/test_layers.py`` checks this, and that no import cycle exists):

1. foundations, no workspace: ``errors``, ``records``, ``text`` (the tokenizer, stemmers and word classes), ``policy`` (every value fitted on data), ``config``, ``pages``
   (Markdown pages and frontmatter), ``extract``, ``chunking``, ``history``
   (git), ``backends`` (answer models), ``embeddings``, ``datasets``,
   ``tracing``, ``verify.nli`` and the pure checks of ``verify``, ``questions``,
   ``ranker`` (the answer ranker model) and its CMU QA reader, ``pgserver`` (a throwaway PostgreSQL server for tests and benchmarks)
2. ``store``, the only package with SQL: one contract (``store.contract``) over the
   embedded DuckDB default (``store.duckdb_store``) and a shared PostgreSQL database
   (``store.postgres_store``, ``[store] url``), one schema (``store.schema``), and the
   verifier's score cache file (``store.score_cache``)
3. ``workspace``: a folder's paths, settings and handles (store, backend, verifier);
   ``verify.cache``: the verifier with its scores kept
4. read and derive: ``search`` (BM25 over stored chunks), ``ingest`` (files ->
   stored documents and chunks), ``generate`` (stored chunks -> page texts)
5. ``snapshots``: store copies at commits, restore, damaged-store recovery
6. ``journal``: crash safety around every write, and ``open_workspace``
7. ``wiki``: the one write path (publish), and ingest + generation as one unit
8. ``select`` (pre-retrieval), ``verify.page`` (page verification), ``verify.parallel`` (``verify --jobs``)
9. ``answer``, ``maintain`` (withdraw, edit, delete, restore), ``review`` (verdicts, queue, contested claims, held pages), ``ranker.train``
10. ``watch``: ingest on changes in sources/, with re-checks; ``mcp_server``: the workspace as MCP tools; ``notebook_args``: what the notebooks share
11. ``lint``
12. ``cli`` (and the notebooks): gather input, show output
"""

from llmwiki.errors import LlmwikiError

__all__ = ["LlmwikiError", "Workspace"]


def __getattr__(name: str):
    """``llmwiki.Workspace`` on first use: importing the package (``llmwiki --help``) stays light."""
    if name == "Workspace":
        from llmwiki.workspace import Workspace

        return Workspace
    raise AttributeError(f"module 'llmwiki' has no attribute {name!r}")
