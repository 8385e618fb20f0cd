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
    embedding_int8: bool = True  # int8 linear layers on a CPU: 2.07x the rate, Cranfield hybrid nDCG@10 0.406 vs 0.412 (bench/search.py)


class VerificationConfig(_Section):
    threshold: float = Field(0.5, ge=0, le=1)
    model: str = "llmwiki-default"
    premises_per_sentence: int = Field(4, ge=1)  # 4: WiCE 66.9 (8: 67.5, about half the page rate)
    int8: bool = True  # NLI models on a CPU: int8 linear layers (about 3x faster, scores within a few hundredths)
    runtime: Literal["auto", "onnx", "torch"] = "auto"  # llmwiki's own model: auto = int8 under ONNX Runtime on a CPU (start-up in a fraction of torch's)
    max_length: int = Field(256, ge=16, le=4096)  # NLI input tokens (premise + sentence); longer pairs are truncated
    split_claims: Literal["auto", "always", "never"] = "auto"  # score each clause of a sentence, the weakest counts; auto: NLI models only
    cache_scores: bool = True  # keep NLI scores per (premise, sentence) in .llmwiki/scores.sqlite: a re-verification scores only what changed


class DatasetsConfig(_Section):
    folder: str = "datasets"  # relative to the workspace root
    aliases: dict[str, str] = {}  # other name -> category or key


class LLMConfig(_Section):
    backend: Literal["extractive", "openai", "local"] = "extractive"
    model: str = ""
    base_url: str = ""  # LLMWIKI_LLM_BASE_URL overrides; the key comes only from LLMWIKI_LLM_API_KEY
    timeout_s: float = Field(60, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
    total_timeout_s: float = Field(120, gt=0)  # one call, all its retries together


class WikiSettings(_Section):
    summary_sentences: int = Field(8, ge=1, le=50)
    concepts_per_source: int = Field(5, ge=0, le=30)
    aliases: dict[str, str] = {}  # alias -> concept name; these win over generated aliases


class ChatConfig(_Section):
    blacklist: tuple[str, ...] = ()  # off-limits topics: refused before any search or model call
    history_messages: int = Field(6, ge=0, le=50)  # earlier messages a model sees
    max_tool_steps: int = Field(6, ge=1, le=30)  # agentic chat: tool rounds before it must answer
    answer_sentences: int = Field(2, ge=1, le=10)  # extractive answers (more when the question asks to list, describe or explain)
    answer_ranker: str = "llmwiki-ranker"  # reorders an extractive answer's candidate sentences: "none", or an NLI-style model id or path (llmwiki.read.ranker)
    answer_similarity: str = "all-MiniLM-L6-v2"  # compares a question with those sentences (reorders; refuses when none is close): "none", or a sentence-transformers model
    # How strict refusals are: the share of a question's rarity-weighted terms the best (sentence, passage) must hold,
    # when the question names a selected document's subject and when it does not (None: llmwiki.policy's, fitted on S08).
    min_shares_about_title: tuple[float, float] | None = None
    min_shares_else: tuple[float, float] | None = None

    @field_validator("min_shares_about_title", "min_shares_else")
    @classmethod
    def _shares(cls, shares: tuple[float, float] | None) -> tuple[float, float] | None:
        if shares is not None and not all(0 <= share <= 1 for share in shares):
            msg = f"{list(shares)}: shares are between 0 and 1, as [sentence, passage]"
            raise ValueError(msg)
        return shares


class TracingConfig(_Section):
    enabled: bool = True
    payloads: bool = True  # store prompts and replies, content-addressed


class StoreConfig(_Section):
    lock_timeout_s: float = Field(30, gt=0)
    url: str | None = None  # postgresql://user@host:port/database: a shared PostgreSQL store instead of .llmwiki/store.duckdb

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
    snapshots: bool = True  # copy the store at each commit, so `llmwiki restore` need not rebuild it
    keep_snapshots: int = Field(10, ge=1, le=1000)


class LintConfig(_Section):
    thin_words: int = Field(40, ge=0)  # a page body shorter than this is reported thin
    contradiction_threshold: float = Field(0.7, gt=0, le=1)  # P(contradiction) at which a sentence pair is reported
    max_pairs: int = Field(2000, ge=1)  # sentence pairs scored per lint run (largest word overlap first)


class ReviewConfig(_Section):
    # Pages a model wrote (generated, regenerated, saved answers): "none" publishes them as they are; "unsupported"
    # holds those whose supported share falls under [verification] threshold; "all" holds every one. A held page is
    # kept in git and marked in its frontmatter, and is not used as evidence until a reviewer releases it.
    hold: Literal["none", "unsupported", "all"] = "none"
    min_verdicts: int = Field(50, ge=10)  # `llmwiki verify --recalibrate` needs this many verdicts, some of each kind


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
hybrid = false         # fuse BM25 with MiniLM embeddings (better ranking, slower ingest: see README)
embedding_int8 = true  # embed on a CPU with int8 weights: about 2x faster, nDCG within 0.01 (see README)

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
        msg = f"{path}: {problems}. Correct these keys (see README for the allowed settings)."
        raise ConfigError(msg) from err
