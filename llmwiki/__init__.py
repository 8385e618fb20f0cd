"""llmwiki: a notebook-driven analysis and QA workbench over a Markdown wiki.

The package in layers; a module imports only from its own layer or below
(``tests/test_layers.py`` checks this, and that no import cycle exists). The
packages follow the data flow: ``ingest`` (files -> stored chunks),
``generate`` (chunks -> page texts), ``publish`` (page texts -> files, store,
commit), ``store``, ``read`` (question -> answer), ``verify``.

1. foundations, no workspace: ``errors``, ``records``, ``text`` (the English package: tokenizer, stemmers, word
   classes, the sentence segmenter ``text.segment``, what a question asks ``text.questions``, spaCy's reading
   ``text.parsing``, fact checks ``text.facts``, WordNet's opposites and kinds ``text.lexicon``, corpus terms
   ``text.terms``; it imports nothing but itself, ``errors`` and ``policy``), ``policy`` (every value fitted on
   data), ``config``, ``pages`` (Markdown pages and frontmatter), ``ingest.extract``, ``ingest.chunking``,
   ``gitrepo`` (git), ``backends`` (answer models), ``embeddings``, ``datasets``, ``read.readings.core`` (what a
   reading is, and the loop that tries them),
   ``tracing``, ``verify.nli`` and the pure checks of ``verify``,
   the CMU QA reader ``read.ranker.cmuqa``, ``pgserver`` (a throwaway PostgreSQL server for tests and benchmarks)
2. ``store``, the only package with SQL: one contract (``store.contract``) over the
   embedded DuckDB default (``store.duckdb_store``) and a shared PostgreSQL database
   (``store.postgres_store``, ``[store] url``), one schema (``store.schema``), and the
   verifier's score cache file (``store.score_cache``)
3. ``workspace``: a folder's paths, settings and store (it builds no model);
   ``verify.cache``: the verifier with its scores kept
4. ``read.ranker``: the answer side's own model (the answer ranker)
5. ``services``: the models and services of a process (backend, verifier, ranker, embedders, tracer,
   datasets), built at its edge and handed to the steps below
6. read and derive: ``read.search`` (BM25 over stored chunks), ``ingest.sources`` (files ->
   stored documents and chunks), ``generate`` (stored chunks -> page texts)
7. ``publish.snapshots``: store copies at commits, restore, damaged-store recovery
8. ``publish.journal``: crash safety around every write, and ``open_workspace``
9. ``publish.wiki``: the one write path (publish), and ingest + generation as one unit
10. ``read.select`` (pre-retrieval), ``verify.page`` (page verification), ``verify.parallel`` (``verify --jobs``)
11. ``read.candidates`` (the selection's sentences, ranked by hand), ``read.conversation`` (follow-ups)
12. ``read.readings``: the answer's readings in one ordered registry (``read.readings.registry``), the case they
    read (``read.readings.case``) and each kind of reading (refusals, comparisons, statements, model checks)
13. ``read.extractive``: the extractive answer, the ``ANSWER`` readings on a question's candidates
14. ``read.answer``: one answer from a selection, with its citations and the reading that decided it
15. ``read.chat`` (the agentic tool loop), ``publish.answers`` (saving an answer as a page), ``maintain`` (withdraw,
    edit, delete, restore), ``review`` (verdicts, queue, contested claims, held pages)
16. ``watch``: ingest on changes in sources/, with re-checks; ``mcp_server``: the workspace as MCP tools; ``notebook_args``: what the notebooks share
17. ``lint``
18. ``cli`` (and the notebooks), ``reference`` (the generated docs): gather input, build the services, show output
"""

from llmwiki.errors import LlmwikiError

__all__ = ["LlmwikiError", "Workspace"]


def __getattr__(name: str):
    """``llmwiki.Workspace`` on first use: importing the package (``llmwiki --help``) stays light."""
    if name == "Workspace":
        from llmwiki.workspace import Workspace

        return Workspace
    raise AttributeError(f"module 'llmwiki' has no attribute {name!r}")
