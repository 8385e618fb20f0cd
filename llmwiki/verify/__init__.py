"""Verification of wiki pages against their sources with a local NLI model."""

from llmwiki.verify.nli import DEFAULT_MODEL, NLIVerifier, SimilarityVerifier, VerifierError, load_verifier
from llmwiki.verify.pairs import label_columns
from llmwiki.verify.page import (
    PageVerification,
    SentenceScore,
    SourceAtChunk,
    VerificationError,
    flagged_spans,
    load_verification,
    mark,
    page_sentences,
    pages_needing_verification,
    source_at_chunk,
    verify_page,
    verify_pages,
    wiki_pages,
)

__all__ = [
    "DEFAULT_MODEL", "NLIVerifier", "PageVerification", "SentenceScore", "SimilarityVerifier", "SourceAtChunk", "VerificationError", "VerifierError",
    "flagged_spans", "label_columns", "load_verification", "load_verifier", "mark", "page_sentences", "pages_needing_verification", "source_at_chunk", "verify_page", "verify_pages", "wiki_pages",
]
