"""Typed settings read from a workspace's ``wiki_config.toml``.

Pydantic sits here, at the boundary where text from a user's file becomes
settings; everything past this module receives plain, validated values.
Unknown keys are refused rather than ignored, so a typo such as
``max_token = 256`` is reported instead of silently doing nothing.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from llmwiki.errors import ConfigError

CONFIG_FILENAME = "wiki_config.toml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ChunkingConfig(_Section):
    max_tokens: int = Field(512, ge=16, le=8192)
    """Chunk budget, in tokens of the MiniLM word-piece tokenizer."""
    overlap_tokens: int = Field(128, ge=0)
    """Tokens repeated from the end of one chunk at the start of the next (in the same section)."""
    min_tokens: int = Field(32, ge=0)
    """A smaller trailing piece of a page is merged into the chunk before it."""

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
    """Larger files are refused, with the fix (split them, or raise this)."""
    extensions: tuple[str, ...] = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf", ".docx")
    """The file types ingest reads (the extractors there are)."""


class RetrievalConfig(_Section):
    wiki_chunks: int = Field(6, ge=1)
    """Wiki chunks given to an answer."""
    source_chunks: int = Field(4, ge=1)
    """Raw source chunks added after the wiki's (alone when the wiki has no hit)."""
    search_limit: int = Field(10, ge=1)
    """Hits `llmwiki search` shows by default."""
    preview_chars: int = Field(400, ge=40)
    """Characters of a hit's text shown in a search result."""
    hybrid: bool = False
    """Fuse BM25 with MiniLM embeddings (better ranking, slower ingest; `llmwiki embed` makes the vectors)."""
    embedding_model: str = "all-MiniLM-L6-v2"
    """The sentence-transformers model of hybrid search: the shipped all-MiniLM-L6-v2, or any model id or local path."""
    embedding_int8: bool = True
    """Embed on a CPU with int8 weights: 2.07x the rate, Cranfield hybrid nDCG@10 0.406 against 0.412 (bench/search.py)."""


class VerificationConfig(_Section):
    threshold: float = Field(0.5, ge=0, le=1)
    """Calibrated score at or above which a sentence counts as supported."""
    model: str = "llmwiki-default"
    """The verifier: "llmwiki-default" (llmwiki's own NLI model with fact checks), "llmwiki-nli", "lexical-overlap", "minilm-cosine", or an NLI model id or local path."""
    premises_per_sentence: int = Field(4, ge=1)
    """Premise windows scored per sentence, shared among its clauses."""
    int8: bool = True
    """NLI models on a CPU: int8 linear layers, about 3x faster, scores within a few hundredths."""
    runtime: Literal["auto", "onnx", "torch"] = "auto"
    """llmwiki's own model: "auto" (int8 under ONNX Runtime on a CPU, torch on a GPU), "onnx" or "torch"."""
    max_length: int = Field(256, ge=16, le=4096)
    """NLI input tokens (premise window and sentence); longer pairs are truncated."""
    split_claims: Literal["auto", "always", "never"] = "auto"
    """Score each clause of a sentence, the weakest counts: "auto" (NLI models), "always" or "never"."""
    cache_scores: bool = True
    """Keep NLI scores in .llmwiki/scores.sqlite, so re-verifying an edited page scores only what changed."""


class DatasetsConfig(_Section):
    folder: str = "datasets"
    """The folder of Markdown datasets (<category>.md), relative to the workspace."""
    aliases: dict[str, str] = {}
    """Other names a question may use for a category or key (name -> category or key)."""


class LLMConfig(_Section):
    backend: Literal["extractive", "openai", "local"] = "extractive"
    """"extractive" (no model: answers quote sentences), "openai" (any OpenAI-compatible server) or "local"."""
    model: str = ""
    """The model name the server serves (openai) or a local model path."""
    base_url: str = ""
    """The server's URL (openai); LLMWIKI_LLM_BASE_URL overrides it; the key comes only from LLMWIKI_LLM_API_KEY."""
    timeout_s: float = Field(60, gt=0)
    """Seconds to wait for one reply."""
    max_retries: int = Field(3, ge=0, le=10)
    """Retries of a failed call."""
    total_timeout_s: float = Field(120, gt=0)
    """Seconds for one call with all its retries: a hanging server is given up on after this."""


class WikiSettings(_Section):
    summary_sentences: int = Field(8, ge=1, le=50)
    """Sentences in an extractive source summary."""
    concepts_per_source: int = Field(5, ge=0, le=30)
    """Concept pages a source may propose."""
    aliases: dict[str, str] = {}
    """Hand-written aliases (alias -> concept name); they win over generated ones."""


class ChatConfig(_Section):
    blacklist: tuple[str, ...] = ()
    """Off-limits topics: refused before any search or model call."""
    history_messages: int = Field(6, ge=0, le=50)
    """Earlier messages a model sees in follow-ups."""
    max_tool_steps: int = Field(6, ge=1, le=30)
    """Agentic chat: tool rounds before it must answer."""
    answer_sentences: int = Field(2, ge=1, le=10)
    """Sentences in an extractive answer (more when the question asks to list, describe or explain)."""
    answer_ranker: str = "llmwiki-ranker"
    """Picks the sentence that holds the answer: the shipped "llmwiki-ranker", "none", or an NLI-style model id or path."""
    answer_similarity: str = "all-MiniLM-L6-v2"
    """Compares the question with candidate sentences (reorders; refuses when none is close): "none", or a sentence-transformers model."""
    # How strict refusals are: the share of a question's rarity-weighted terms the best (sentence, passage) must hold,
    # when the question names a selected document's subject and when it does not (None: llmwiki.policy's, fitted on S08).
    min_shares_about_title: tuple[float, float] | None = None
    """Refusal strictness: the share of the question's weighted terms the best [sentence, passage] must hold when it names a selected document's subject (unset: the fitted policy's)."""
    min_shares_else: tuple[float, float] | None = None
    """The same when the question names no selected document's subject."""
    paraphrase_cosine: float | None = Field(None, ge=0, le=1)
    """A sentence this close to the question (cosine) is not refused for sharing few of its words (unset: the fitted policy's; 1 turns it off)."""

    @field_validator("min_shares_about_title", "min_shares_else")
    @classmethod
    def _shares(cls, shares: tuple[float, float] | None) -> tuple[float, float] | None:
        if shares is not None and not all(0 <= share <= 1 for share in shares):
            msg = f"{list(shares)}: shares are between 0 and 1, as [sentence, passage]"
            raise ValueError(msg)
        return shares


class TracingConfig(_Section):
    enabled: bool = True
    """Write spans of every operation to .llmwiki/traces/spans.jsonl."""
    payloads: bool = True
    """Keep prompts and replies (content-addressed) in .llmwiki/traces/payloads."""


class StoreConfig(_Section):
    lock_timeout_s: float = Field(30, gt=0)
    """Seconds to wait for another process that is writing (or for a server connection)."""
    url: str | None = None
    """postgresql://user@host:port/database: a shared PostgreSQL store instead of .llmwiki/store.duckdb (password from PGPASSWORD or ~/.pgpass)."""

    @field_validator("url")
    @classmethod
    def _no_password(cls, url: str | None) -> str | None:
        if url is None:
            return None
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 - urlsplit checks the port only when it is read
        except ValueError as err:
            msg = f"the port is not a number from 1 to 65535 ({err}); write postgresql://user@host:5432/database"
            raise ValueError(msg) from None
        if parts.scheme not in ("postgresql", "postgres"):
            msg = f"{url!r} is not a PostgreSQL url; write postgresql://user@host:port/database"
            raise ValueError(msg)
        if parts.password is not None or "password=" in parts.query:
            msg = "the url holds a password; remove it and give it in PGPASSWORD, a libpq service file or ~/.pgpass"
            raise ValueError(msg)
        return url


class HistoryConfig(_Section):
    snapshots: bool = True
    """Copy the store at each commit (.llmwiki/snapshots), so `llmwiki restore` is exact."""
    keep_snapshots: int = Field(10, ge=1, le=1000)
    """Snapshots kept; restoring to an older commit rebuilds the store from the files."""


class LintConfig(_Section):
    thin_words: int = Field(40, ge=0)
    """Page bodies with fewer words of prose are reported thin."""
    contradiction_threshold: float = Field(0.7, gt=0, le=1)
    """P(contradiction) at which two concept-page sentences are reported."""
    max_pairs: int = Field(2000, ge=1)
    """Sentence pairs the NLI model scores per run (most word overlap first)."""


class ReviewConfig(_Section):
    # Pages a model wrote (generated, regenerated, saved answers): "none" publishes them as they are; "unsupported"
    # holds those whose supported share falls under [verification] threshold; "all" holds every one. A held page is
    # kept in git and marked in its frontmatter, and is not used as evidence until a reviewer releases it.
    hold: Literal["none", "unsupported", "all"] = "none"
    """Pages a model writes: "none" (published as they are), "unsupported" (held when under the threshold) or "all" (every one held for a reviewer)."""
    min_verdicts: int = Field(50, ge=10)
    """Reviewer verdicts needed before `llmwiki verify --recalibrate` refits the calibration."""


class WikiConfig(_Section):
    chunking: ChunkingConfig = ChunkingConfig()
    ingest: IngestConfig = IngestConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    verification: VerificationConfig = VerificationConfig()
    datasets: DatasetsConfig = DatasetsConfig()
    llm: LLMConfig = LLMConfig()
    wiki: WikiSettings = WikiSettings()
    chat: ChatConfig = ChatConfig()
    tracing: TracingConfig = TracingConfig()
    store: StoreConfig = StoreConfig()
    history: HistoryConfig = HistoryConfig()
    lint: LintConfig = LintConfig()
    review: ReviewConfig = ReviewConfig()


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
source_chunks = 4      # raw source chunks added after the wiki's (alone when the wiki has no hit)
search_limit = 10
preview_chars = 400
hybrid = false         # fuse BM25 with MiniLM embeddings (better ranking, slower ingest: docs/wiki.md)
embedding_int8 = true  # embed on a CPU with int8 weights: about 2x faster, nDCG within 0.01 (docs/benchmarks.md)

[verification]
threshold = 0.5        # P(entailment) at or above which a sentence counts as supported
model = "llmwiki-default"  # or "llmwiki-nli" (llmwiki's own NLI model), "lexical-overlap", "minilm-cosine", a Hugging Face NLI model id or local path
premises_per_sentence = 4  # premise windows per sentence, shared among its clauses
int8 = true            # NLI models on a CPU: int8 linear layers, about 3x faster
runtime = "auto"       # llmwiki's own model: "auto" (ONNX Runtime on a CPU, torch on a GPU), "onnx", "torch"
max_length = 256       # NLI input tokens (premise window + sentence)
split_claims = "auto"  # score each clause, the sentence counts as its weakest: "auto" (NLI models), "always", "never"
cache_scores = true    # keep NLI scores in .llmwiki/scores.sqlite, so re-verifying an edited page scores only what changed

[datasets]
folder = "datasets"    # Markdown datasets, relative to this file's folder
# [datasets.aliases]   # other names a question may use for a category or key
# "SI pioneers" = "scientists"

[llm]
backend = "extractive" # extractive (no model), openai (any OpenAI-compatible server) or local
# model = "gpt-4o-mini"
# base_url = "http://localhost:11434/v1"   # or LLMWIKI_LLM_BASE_URL; the key only from LLMWIKI_LLM_API_KEY
timeout_s = 60
max_retries = 3
total_timeout_s = 120  # one call with all its retries

[wiki]
summary_sentences = 8  # sentences in an extractive source summary
concepts_per_source = 5
# [wiki.aliases]       # hand-written aliases win over generated ones
# "Volta" = "Alessandro Volta"

[chat]
blacklist = []         # off-limits topics, e.g. ["salary", "medical record"]: refused before any model call
history_messages = 6   # earlier messages a model sees in follow-ups
max_tool_steps = 6     # agentic chat: tool rounds before it must answer
answer_sentences = 2   # sentences in an extractive answer (more when the question asks to list, describe or explain)
answer_ranker = "llmwiki-ranker"  # picks the sentence that holds the answer; "none" for word matching alone, or a model id or path
answer_similarity = "all-MiniLM-L6-v2"  # how close the question is to each sentence (reorders; refuses when none is close); "none", or a model id or path
# min_shares_about_title = [0.3, 0.35]  # refusal strictness: share of the question's weighted terms the best [sentence, passage] must hold
# min_shares_else = [0.5, 0.55]         # ... when the question names no selected document's subject (raise both to refuse more)
# paraphrase_cosine = 0.56              # ... unless a sentence is this close to the question in other words (1: never)

[tracing]
enabled = true
payloads = true        # keep prompts and replies (content-addressed) in .llmwiki/traces/payloads

[store]
lock_timeout_s = 30    # how long to wait for another process that is writing (or for a server connection)
# url = "postgresql://analyst@db.example.org:5432/team_wiki"  # a shared PostgreSQL store (password: PGPASSWORD or ~/.pgpass)

[history]
snapshots = true       # copy the store at each commit (in .llmwiki/snapshots) so `llmwiki restore` is exact
keep_snapshots = 10    # older snapshots are pruned; restoring to an older commit rebuilds the store from files

[lint]
thin_words = 40        # page bodies shorter than this are reported thin
contradiction_threshold = 0.7  # P(contradiction) at which two concept-page sentences are reported
max_pairs = 2000       # sentence pairs the NLI model scores per run (most word overlap first)

[review]
hold = "none"          # pages a model writes: "none", "unsupported" (hold those under the threshold for a reviewer) or "all"
min_verdicts = 50      # reviewer verdicts needed before `llmwiki verify --recalibrate` refits the calibration
"""


def set_store_url(path: Path, url: str | None) -> None:
    """Point a wiki_config.toml at a store: ``[store] url`` set (or removed with None), every other line kept."""
    StoreConfig(url=url)  # the same checks as reading it
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    section, start, found = None, None, None
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped
            if section == "[store]":
                start = number
        elif section == "[store]" and stripped.split("=", 1)[0].strip() == "url":
            found = number
    setting = [f'url = "{url}"'] if url else []
    if found is not None:
        lines[found:found + 1] = setting
    elif start is not None:
        lines[start + 1:start + 1] = setting
    elif url:
        lines += ["", "[store]", *setting]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_config(path: Path) -> WikiConfig:
    """Read and validate a wiki_config.toml; a missing file gives the defaults."""
    if not path.exists():
        return WikiConfig()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        msg = f"{path}: not valid TOML ({err}). Fix the syntax or delete the file to use the defaults."
        raise ConfigError(msg) from err
    if isinstance(raw.get("llm"), dict) and "api_key" in raw["llm"]:
        msg = f"{path}: [llm] api_key must not be stored in a file. Remove it and set LLMWIKI_LLM_API_KEY in the environment."
        raise ConfigError(msg)
    try:
        return WikiConfig.model_validate(raw)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in err.errors()
        )
        msg = f"{path}: {problems}. Correct these keys (docs/settings.md lists every setting)."
        raise ConfigError(msg) from err
