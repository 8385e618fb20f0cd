"""The schema: one list of numbered migrations, each written once for both databases.

A migration is a function of a ``Migration`` (the connection's ``execute``
and the database's ``Dialect``) named ``mNNN_what``; the store records each
by name in ``schema_migrations``, so a reordered or renamed list is noticed,
not silently re-applied, and a store of either kind says which schema it has
in the same words.

Most of the schema reads the same in both databases. Where it does not, the
branch says why: PostgreSQL enforces foreign keys with cascading deletes (and
indexes the keys they look up), DuckDB's are kept in code (its constraint
checks refuse some valid delete-then-insert sequences in one transaction);
and the search postings differ, since DuckDB's are split by its FTS extension
and searched in process, PostgreSQL's are read off a ``tsvector`` the server
searches itself (``llmwiki.read.search``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from llmwiki.store.dialect import Dialect


@dataclass(frozen=True)
class Migration:
    """What a migration function is given: the database's dialect, and a way to run SQL in its transaction."""

    dialect: Dialect
    execute: Callable[..., object]  # execute(sql, parameters=()): the shared SQL, rendered for the dialect
    index_postings: Callable[[], None]  # write postings for every chunk already stored (DuckDB's analyzer)
    stopwords: Callable[[], Sequence[str]]  # the stopwords DuckDB's analyzer leaves out

    def script(self, sql: str) -> None:
        """Run several statements separated by semicolons (DDL: no parameters, no semicolons inside)."""
        for statement in sql.split(";"):
            if statement.strip():
                self.execute(statement)


def m001_initial(db: Migration) -> None:
    references = db.dialect.references
    db.script(
        f"""
        CREATE SEQUENCE document_ids START 1;
        CREATE TABLE documents (
            id BIGINT PRIMARY KEY DEFAULT nextval('document_ids'),
            kind TEXT NOT NULL CHECK (kind IN ('source', 'wiki')),
            path TEXT NOT NULL UNIQUE,
            title TEXT,
            status TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'ready', 'failed')),
            error TEXT,
            content_hash TEXT,
            size_bytes BIGINT,
            mtime DOUBLE PRECISION,
            version INTEGER NOT NULL DEFAULT 0,
            parser TEXT,
            stale_since TIMESTAMP,
            stale_reason TEXT,
            derived_from BIGINT,
            created_at TIMESTAMP NOT NULL DEFAULT {{now}},
            updated_at TIMESTAMP NOT NULL DEFAULT {{now}}
        );
        CREATE TABLE document_pages (
            document_id BIGINT NOT NULL{references("documents")},
            page_number INTEGER NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX document_pages_document ON document_pages (document_id);
        CREATE SEQUENCE chunk_ids START 1;
        CREATE TABLE chunks (
            id BIGINT PRIMARY KEY DEFAULT nextval('chunk_ids'),
            document_id BIGINT NOT NULL{references("documents")},
            seq INTEGER NOT NULL,
            page_number INTEGER NOT NULL,
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            token_count INTEGER NOT NULL,
            breadcrumb TEXT NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX chunks_document ON chunks (document_id);
        CREATE TABLE doc_references (
            from_id BIGINT NOT NULL{references("documents")},
            to_id BIGINT NOT NULL{references("documents")},
            kind TEXT NOT NULL CHECK (kind IN ('cites', 'links_to'))
        );
        CREATE SEQUENCE verification_ids START 1;
        CREATE TABLE page_verifications (
            id BIGINT PRIMARY KEY DEFAULT nextval('verification_ids'),
            page_id BIGINT NOT NULL{references("documents")},
            body_hash TEXT NOT NULL,
            source_hashes TEXT NOT NULL,
            model TEXT NOT NULL,
            threshold DOUBLE PRECISION NOT NULL,
            started_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP
        );
        CREATE TABLE verification_sentences (
            verification_id BIGINT NOT NULL{references("page_verifications")},
            seq INTEGER NOT NULL,
            sentence TEXT NOT NULL,
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            p_entailment DOUBLE PRECISION NOT NULL,
            p_contradiction DOUBLE PRECISION NOT NULL,
            best_excerpt TEXT,
            excerpt_document_id BIGINT,
            excerpt_page INTEGER,
            excerpt_chunk_id BIGINT
        )
        """
    )
    if db.dialect.cascades:  # a cascading delete looks its children up by these keys
        db.script(
            """
            CREATE INDEX doc_references_from ON doc_references (from_id);
            CREATE INDEX doc_references_to ON doc_references (to_id);
            CREATE INDEX page_verifications_page ON page_verifications (page_id);
            CREATE INDEX verification_sentences_verification ON verification_sentences (verification_id)
            """
        )


def m002_search_index(db: Migration) -> None:
    """The search postings (see the module docstring for why they differ)."""
    if db.dialect.name == "duckdb":
        db.script(
            """
            CREATE TABLE search_stopwords (word TEXT PRIMARY KEY);
            CREATE TABLE chunk_terms (chunk_id BIGINT NOT NULL, term TEXT NOT NULL, tf INTEGER NOT NULL);
            CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);
            CREATE TABLE search_state (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
            INSERT INTO search_state VALUES ('generation', 0)
            """
        )
        db.execute("INSERT INTO search_stopwords SELECT DISTINCT unnest(?)", [list(db.stopwords())])
        db.index_postings()
        return
    # A stored tsvector under GIN, kept by PostgreSQL itself in every write's transaction; thousands
    # separators go first ("1,234" -> "1234"), as in DuckDB's analyzer. Postings (chunk, document, lexeme,
    # occurrences, chunk length) are read off it in each write's transaction, and each document keeps its
    # chunk count and length total: BM25 sums over a query's postings (an index-only scan) and reads N and
    # the average length off the documents.
    db.script(
        r"""
        ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
            to_tsvector('english', regexp_replace(regexp_replace(text, '(\d),(\d{3})', '\1\2', 'g'), '(\d),(\d{3})', '\1\2', 'g'))
        ) STORED;
        CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
        CREATE TABLE chunk_terms (
            chunk_id BIGINT NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
            document_id BIGINT NOT NULL,
            term TEXT NOT NULL,
            tf INTEGER NOT NULL,
            length INTEGER NOT NULL
        );
        CREATE INDEX chunk_terms_term ON chunk_terms (term) INCLUDE (chunk_id, document_id, tf, length);
        CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);
        ALTER TABLE documents ADD COLUMN chunk_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE documents ADD COLUMN token_total BIGINT NOT NULL DEFAULT 0
        """
    )


def m003_chunk_embeddings(db: Migration) -> None:
    db.script(
        f"""
        CREATE TABLE chunk_embeddings (
            chunk_id BIGINT NOT NULL{db.dialect.references("chunks")},
            model TEXT NOT NULL,
            vector REAL[] NOT NULL
        );
        CREATE INDEX chunk_embeddings_chunk ON chunk_embeddings (chunk_id)
        """
    )


def m004_verification_clauses(db: Migration) -> None:
    """How a verification scored its sentences ('sentence': whole sentences; 'clauses': each clause,
    the weakest counts) and, per sentence, the clause that scored lowest."""
    db.script(
        """
        ALTER TABLE page_verifications ADD COLUMN method TEXT;
        UPDATE page_verifications SET method = 'sentence';
        ALTER TABLE verification_sentences ADD COLUMN weakest_clause TEXT
        """
    )


def m005_verification_facts(db: Migration) -> None:
    """Per sentence, the calibrated score (NLI probability and fact checks; p_entailment stays the raw
    model probability), the reason its facts failed and the words behind it (JSON list)."""
    db.script(
        """
        ALTER TABLE verification_sentences ADD COLUMN score DOUBLE PRECISION;
        ALTER TABLE verification_sentences ADD COLUMN reason TEXT;
        ALTER TABLE verification_sentences ADD COLUMN flagged TEXT
        """
    )


def m006_postings_without_art_index(db: Migration) -> None:
    """DuckDB's chunk_terms loses its ART index on chunk_id: it cost 0.84 s of a 100,000-chunk rebuild (at
    commit) and slowed every write, while a delete of one document's postings ran faster without it (2.6 ms
    against 18 ms: DuckDB prunes the scan by the ids' min/max; a rebuild writes the postings in chunk order,
    and later ones arrive in it). PostgreSQL's postings keep their B-tree: its deletes use it."""
    if db.dialect.name == "duckdb":
        db.execute("DROP INDEX IF EXISTS chunk_terms_chunk")


def m007_reviews(db: Migration) -> None:
    """What reviewers decide, kept by page path and sentence (not by row id), so a verdict outlives a page's
    re-index and a rebuild of the store: each sentence verdict with who decided, when, the sentence and the
    evidence judged, and the model's features then (a workspace's own calibration learns from them); the
    contradictions lint found between pages, until a reviewer resolves them; the sentences whose model verdict
    changed when a source they rest on changed; and each verification sentence's features. (A page held for review says so in its frontmatter, which git keeps.)"""
    db.script(
        """
        CREATE SEQUENCE verdict_ids START 1;
        CREATE TABLE sentence_verdicts (
            id BIGINT PRIMARY KEY DEFAULT nextval('verdict_ids'),
            page_path TEXT NOT NULL,
            seq INTEGER NOT NULL,
            sentence TEXT NOT NULL,
            evidence TEXT,
            evidence_chunk_id BIGINT,
            verdict TEXT NOT NULL CHECK (verdict IN ('accept', 'reject')),
            note TEXT,
            reviewer TEXT NOT NULL,
            decided_at TIMESTAMP NOT NULL,
            model_score DOUBLE PRECISION,
            features TEXT
        );
        CREATE INDEX sentence_verdicts_page ON sentence_verdicts (page_path);
        CREATE SEQUENCE contest_ids START 1;
        CREATE TABLE contested_claims (
            id BIGINT PRIMARY KEY DEFAULT nextval('contest_ids'),
            key TEXT NOT NULL UNIQUE,
            page_a TEXT NOT NULL,
            sentence_a TEXT NOT NULL,
            source_a TEXT,
            page_b TEXT NOT NULL,
            sentence_b TEXT NOT NULL,
            source_b TEXT,
            score DOUBLE PRECISION NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('open', 'kept_a', 'kept_b', 'both')),
            note TEXT,
            reviewer TEXT,
            found_at TIMESTAMP NOT NULL,
            resolved_at TIMESTAMP
        );
        CREATE SEQUENCE recheck_ids START 1;
        CREATE TABLE sentence_rechecks (
            id BIGINT PRIMARY KEY DEFAULT nextval('recheck_ids'),
            page_path TEXT NOT NULL,
            seq INTEGER NOT NULL,
            sentence TEXT NOT NULL,
            source TEXT NOT NULL,
            was_supported BOOLEAN NOT NULL,
            now_supported BOOLEAN NOT NULL,
            found_at TIMESTAMP NOT NULL
        );
        ALTER TABLE verification_sentences ADD COLUMN features TEXT
        """
    )


def m008_extraction_reports(db: Migration) -> None:
    """Per document, what its extractor read (JSON): sections, sentences, code blocks and table rows kept, and the
    page furniture left out with its reason, for `llmwiki status --documents` and the ingest notebook."""
    db.script("ALTER TABLE documents ADD COLUMN extraction TEXT")


MIGRATIONS: tuple[Callable[[Migration], None], ...] = (
    m001_initial, m002_search_index, m003_chunk_embeddings, m004_verification_clauses, m005_verification_facts,
    m006_postings_without_art_index, m007_reviews, m008_extraction_reports,
)

# The tables that hold a wiki's content, parents first (emptied before a rebuild from the files), the tables of
# what reviewers decided (kept through a rebuild: no file holds them), and the id sequences.
CONTENT_TABLES = ("documents", "document_pages", "chunks", "doc_references", "page_verifications", "verification_sentences", "chunk_embeddings")
REVIEW_TABLES = ("sentence_verdicts", "contested_claims", "sentence_rechecks")
COPIED_TABLES = CONTENT_TABLES + REVIEW_TABLES  # what a move to another store copies
SEQUENCES = (("document_ids", "documents"), ("chunk_ids", "chunks"), ("verification_ids", "page_verifications"),
             ("verdict_ids", "sentence_verdicts"), ("contest_ids", "contested_claims"), ("recheck_ids", "sentence_rechecks"))
