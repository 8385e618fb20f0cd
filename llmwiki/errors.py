"""One error hierarchy for the whole package.

The library raises these and never prints; the CLI and the notebooks turn them
into one sentence. Every message says what was wrong and how to fix it, and
errors about a file name that file.
"""

from __future__ import annotations

from pathlib import Path


class LlmwikiError(Exception):
    """Base of every error llmwiki raises on purpose."""


class ConfigError(LlmwikiError):
    """wiki_config.toml is missing, unreadable or has a wrong value."""


class WorkspaceError(LlmwikiError):
    """A folder is not a workspace, or a path escapes it."""


class StoreError(LlmwikiError):
    """The store (DuckDB file or PostgreSQL database) could not be opened or written."""


class StoreLockedError(StoreError):
    """Another process held the store's lock for longer than the timeout."""


class StoreDamagedError(StoreError):
    """The store file cannot be read (truncated, zeroed, overwritten); the message names the fix."""


class StoreConflictError(StoreError):
    """A write was based on a version of a document that another process has since changed or removed."""


class VerifierError(LlmwikiError):
    """The verifier model could not be loaded or run."""


class IngestError(LlmwikiError):
    """A file could not be ingested; `path` names it, the message says the fix."""

    def __init__(self, path: Path | str, problem: str, fix: str) -> None:
        self.path = Path(path)
        self.problem = problem
        self.fix = fix
        super().__init__(f"{self.path}: {problem}. {fix}")

    @property
    def reason(self) -> str:
        """The message without the path, as stored in the documents table."""
        return f"{self.problem}. {self.fix}"


class NotADocument(IngestError):
    """The file holds no document of its own (a page that only redirects to another, a site's error page): skipped, not failed."""


class UnsupportedFileError(IngestError):
    """The file's extension has no extractor."""
