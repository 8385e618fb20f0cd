"""Verification of wiki pages against their sources with a local NLI model."""

from llmwiki.verify.nli import DEFAULT_MODEL, NLIVerifier, SimilarityVerifier, VerifierError, label_columns, load_verifier
from llmwiki.verify.page import (
    PageVerification,
    SentenceScore,
    VerificationError,
    load_verification,
    page_sentences,
    pages_needing_verification,
    verify_page,
    verify_pages,
    wiki_pages,
)

__all__ = [
    "DEFAULT_MODEL", "NLIVerifier", "PageVerification", "SentenceScore", "SimilarityVerifier", "VerificationError", "VerifierError",
    "label_columns", "load_verification", "load_verifier", "page_sentences", "pages_needing_verification", "verify_page", "verify_pages", "wiki_pages",
]
