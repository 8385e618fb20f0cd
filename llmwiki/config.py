"""Typed settings read from a workspace's ``wiki_config.toml``.

Pydantic sits here, at the boundary where text from a user's file becomes
settings; everything past this module receives plain, validated values.
Unknown keys are refused rather than ignored, so a typo such as
``max_token = 256`` is reported instead of silently doing nothing.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from llmwiki.errors import ConfigError

CONFIG_FILENAME = "wiki_config.toml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChunkingConfig(_Section):
    max_tokens: int = Field(512, ge=16, le=8192)
    overlap_tokens: int = Field(128, ge=0)
    min_tokens: int = Field(32, ge=0)

    @model_validator(mode="after")
    def _budgets_fit(self) -> ChunkingConfig:
        if self.overlap_tokens >= self.max_tokens:
            msg = f"overlap_tokens ({self.overlap_tokens}) must be smaller than max_tokens ({self.max_tokens})"
            raise ValueError(msg)
        if self.min_tokens > self.max_tokens:
            msg = f"min_tokens ({self.min_tokens}) must not exceed max_tokens ({self.max_tokens})"
            raise ValueError(msg)
        return self


class IngestConfig(_Section):
    max_file_mb: float = Field(50, gt=0)
    extensions: tuple[str, ...] = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx")


class RetrievalConfig(_Section):
    wiki_chunks: int = Field(6, ge=1)
    source_chunks: int = Field(4, ge=1)
    search_limit: int = Field(10, ge=1)
    preview_chars: int = Field(400, ge=40)
    hybrid: bool = False
    embedding_model: str = "all-MiniLM-L6-v2"


class VerificationConfig(_Section):
    threshold: float = Field(0.5, ge=0, le=1)
    model: str = "llmwiki-default"
    premises_per_sentence: int = Field(8, ge=1)


class DatasetsConfig(_Section):
    folder: str = "datasets"  # relative to the workspace root
    aliases: dict[str, str] = {}  # other name -> category or key


class StoreConfig(_Section):
    lock_timeout_s: float = Field(30, gt=0)


class WikiConfig(_Section):
    chunking: ChunkingConfig = ChunkingConfig()
    ingest: IngestConfig = IngestConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    verification: VerificationConfig = VerificationConfig()
    datasets: DatasetsConfig = DatasetsConfig()
    store: StoreConfig = StoreConfig()


DEFAULT_CONFIG_TOML = """\
# llmwiki settings for this workspace. Every key is optional; the values shown
# are the defaults. Unknown keys are an error, so typos do not go unnoticed.

[chunking]
max_tokens = 512       # chunk budget, in tokens of the MiniLM word-piece tokenizer
overlap_tokens = 128   # tokens repeated from the end of one chunk at the start of the next
min_tokens = 32        # a smaller trailing piece is merged into its neighbour

[ingest]
max_file_mb = 50       # larger files are refused (split them, or raise this)

[retrieval]
wiki_chunks = 6        # wiki chunks given to an answer
source_chunks = 4      # raw source chunks used when the wiki has no hit
search_limit = 10
preview_chars = 400
hybrid = false         # fuse BM25 with MiniLM embeddings (better ranking, slower ingest: see README)

[verification]
threshold = 0.5        # P(entailment) at or above which a sentence counts as supported

[datasets]
folder = "datasets"    # Markdown datasets, relative to this file's folder
# [datasets.aliases]   # other names a question may use for a category or key
# "SI pioneers" = "scientists"

[store]
lock_timeout_s = 30    # how long to wait for another process that is writing
"""


def load_config(path: Path) -> WikiConfig:
    """Read and validate a wiki_config.toml; a missing file gives the defaults."""
    if not path.exists():
        return WikiConfig()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        msg = f"{path}: not valid TOML ({err}). Fix the syntax or delete the file to use the defaults."
        raise ConfigError(msg) from err
    try:
        return WikiConfig.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in err.errors()
        )
        msg = f"{path}: {problems}. Correct these keys (see README for the allowed settings)."
        raise ConfigError(msg) from err
