from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
# Files made from the shipped weights (the NLI model's ONNX file, llmwiki/verify/onnx_nli.py) go to a folder of this
# test session's own, made once by the first test that needs one and read by the rest (and their subprocesses).
_CACHE = tempfile.mkdtemp(prefix="llmwiki-test-cache-")
os.environ["LLMWIKI_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent
sys.path.insert(0, str(FIXTURES))
sys.path.insert(1, str(REPO))  # training/: the scripts that make the shipped weights


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch):
    monkeypatch.delenv("LLMWIKI_WORKSPACE", raising=False)


# Test modules whose workspaces run on both stores: every test of theirs that uses a workspace runs once
# on the embedded DuckDB store and once on a PostgreSQL database of a throwaway server on loopback
# (skipped, saying why, where PostgreSQL is not installed; .ci/run installs it). A test about something
# only one store has is marked `duckdb_only` (files, snapshots, damage) or asks for `postgres_url`.
BOTH_STORES = {"test_store", "test_review", "test_mcp", "test_search", "test_ingest", "test_answer", "test_verify", "test_maintain", "test_select", "test_postgres"}
_WORKSPACE_FIXTURES = {"workspace", "wiki", "reef", "corpus", "store_kind"}


def pytest_configure(config):
    config.addinivalue_line("markers", "duckdb_only: tests something only the embedded DuckDB store has (a file, snapshots, damage)")


def pytest_generate_tests(metafunc):
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if module in BOTH_STORES and _WORKSPACE_FIXTURES & set(metafunc.fixturenames) and not metafunc.definition.get_closest_marker("duckdb_only"):
        # The PostgreSQL half starts a server: it is in the slow tier (make test-fast runs the DuckDB half alone).
        metafunc.parametrize("store_kind", ["duckdb", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True)


@pytest.fixture
def store_kind(request):
    return getattr(request, "param", "duckdb")


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway PostgreSQL server for the session (skipped, saying why, when it cannot start)."""
    from llmwiki.pgserver import ServerUnavailable, start_cluster

    try:
        cluster = start_cluster(max_connections=300)
    except ServerUnavailable as err:
        if os.environ.get("LLMWIKI_REQUIRE_POSTGRES"):  # CI: a missing server is a failure, not a skip
            pytest.fail(f"PostgreSQL is required (LLMWIKI_REQUIRE_POSTGRES) but cannot start: {err}")
        pytest.skip(f"PostgreSQL is not available here ({err}); .ci/run installs it")
    yield cluster
    from llmwiki.store.postgres_store import PostgresStore

    PostgresStore.close_pools()
    cluster.stop()


_databases = iter(range(1, 1_000_000))


@pytest.fixture
def postgres_url(postgres_cluster):
    """A new empty database on the session's server; its pooled connections are closed after the test."""
    from llmwiki.store.postgres_store import PostgresStore

    url = postgres_cluster.create_database(f"test_{next(_databases)}")
    yield url
    PostgresStore.close_pools()


def point_at(root: Path, url: str) -> None:
    """Write `[store] url` into a workspace's wiki_config.toml."""
    from llmwiki.config import CONFIG_FILENAME, set_store_url

    set_store_url(root / CONFIG_FILENAME, url)


@pytest.fixture
def workspace(tmp_path, store_kind, request):
    from llmwiki.workspace import Workspace

    root = tmp_path / "ws"
    made = Workspace.init(root)
    if store_kind == "duckdb":
        return made
    point_at(root, request.getfixturevalue("postgres_url"))
    return Workspace.open(root)


@pytest.fixture(scope="session")
def binary_fixtures(tmp_path_factory) -> dict[str, Path]:
    import build

    folder = tmp_path_factory.mktemp("binary-fixtures")
    return {
        "pdf": build.build_pdf(folder / "faraday.pdf"),
        "scanned_pdf": build.build_scanned_pdf(folder / "scan.pdf"),
        "drawing_pdf": build.build_drawing_pdf(folder / "drawing.pdf"),
        "docx": build.build_docx(folder / "celsius.docx"),
    }


@functools.cache
def _shipped(part: str, int8: bool):
    """One shipped model of each kind for the test session, as an edge loads it once for its process."""
    from llmwiki.read.ranker import DEFAULT_RANKER, DEFAULT_SIMILARITY, load_ranker, load_similarity
    from llmwiki.config import VerificationConfig
    from llmwiki.verify.nli import load_verifier

    if part == "ranker":
        return load_ranker(DEFAULT_RANKER, int8=int8)
    if part == "similarity":
        return load_similarity(DEFAULT_SIMILARITY, int8=int8)
    shipped = VerificationConfig()
    return load_verifier(shipped.model, int8=int8, max_length=shipped.max_length, runtime=shipped.runtime)


def services_for(workspace, **given):
    """``Services(workspace, **given)``, with the session's shipped models for the parts the workspace's settings leave
    at the shipped defaults (the tests' edge: each model loaded once, not once a test)."""
    from llmwiki.config import ChatConfig, VerificationConfig
    from llmwiki.services import Services

    chat, verification, shipped_verification = workspace.config.chat, workspace.config.verification, VerificationConfig()
    shared = {}
    if chat.answer_ranker == ChatConfig().answer_ranker:
        shared["ranker"] = functools.partial(_shipped, "ranker", verification.int8)
    if chat.answer_similarity == ChatConfig().answer_similarity:
        shared["similarity"] = functools.partial(_shipped, "similarity", verification.int8)
    if (verification.model, verification.max_length, verification.runtime) == (shipped_verification.model, shipped_verification.max_length, shipped_verification.runtime):
        shared["nli"] = functools.partial(_shipped, "nli", verification.int8)
    return Services(workspace, **{part: load() for part, load in shared.items() if part not in given}, **given)


@pytest.fixture(scope="session")
def count_tokens():
    from llmwiki.models import minilm_token_counter

    return minilm_token_counter()


# The sample texts of the shared fixtures below (tests/fixtures/texts/): two small sources, one that gets no pages, a dataset.
TEXTS = FIXTURES / "texts"
KELP = (TEXTS / "kelp.md").read_text(encoding="utf-8")
VOLTA = (TEXTS / "volta.md").read_text(encoding="utf-8")
HIDDEN = (TEXTS / "archive.md").read_text(encoding="utf-8")
DATASET = (TEXTS / "harbours.md").read_text(encoding="utf-8")


_TEMPLATES: dict[str, Path] = {}


def from_template(name: str, workspace, build, tmp_path_factory):
    """``build(workspace)``'s result, made once a test process on DuckDB and copied into each test's workspace folder
    (files, git history and store file as they are: a workspace is its folder); built anew on PostgreSQL, whose
    database a copied folder would share."""
    from llmwiki.workspace import Workspace

    if workspace.config.store.url:
        return build(workspace)
    if name not in _TEMPLATES:
        template = Workspace.init(tmp_path_factory.mktemp(f"template-{name}") / "ws")
        build(template)
        _TEMPLATES[name] = template.root
    root = workspace.root
    shutil.rmtree(root)
    shutil.copytree(_TEMPLATES[name], root, symlinks=True)
    return Workspace.open(root)


@pytest.fixture
def wiki(workspace, tmp_path_factory):
    """A small generated wiki: kelp and volta sources with pages, one source without pages, a dataset."""
    return from_template("wiki", workspace, _build_wiki, tmp_path_factory)


def _build_wiki(workspace):
    from llmwiki.publish.wiki import ingest_paths

    (workspace.sources_dir / "kelp.md").write_text(KELP, encoding="utf-8")
    (workspace.sources_dir / "volta.md").write_text(VOLTA, encoding="utf-8")
    ingest_paths(workspace)
    (workspace.sources_dir / "hidden.md").write_text(HIDDEN, encoding="utf-8")
    ingest_paths(workspace, [workspace.sources_dir / "hidden.md"], generate=False)  # in the sources only, not in the wiki
    (workspace.datasets_dir / "harbours.md").write_text(DATASET, encoding="utf-8")
    return workspace


REEF_A = (TEXTS / "reef-notes.md").read_text(encoding="utf-8")
REEF_B = (TEXTS / "coast-survey.md").read_text(encoding="utf-8")


@pytest.fixture
def reef(workspace, tmp_path_factory):
    """Two sources about the Kelp Forest, ingested with their wiki pages (one concept page shared by both)."""
    return from_template("reef", workspace, _build_reef, tmp_path_factory)


def _build_reef(workspace):
    from llmwiki.publish.wiki import ingest_paths

    (workspace.sources_dir / "a.md").write_text(REEF_A, encoding="utf-8")
    (workspace.sources_dir / "b.md").write_text(REEF_B, encoding="utf-8")
    ingest_paths(workspace)
    return workspace
