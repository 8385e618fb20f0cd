from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent
sys.path.insert(0, str(FIXTURES))


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch):
    monkeypatch.delenv("LLMWIKI_WORKSPACE", raising=False)


@pytest.fixture
def workspace(tmp_path):
    from llmwiki.workspace import Workspace

    return Workspace.init(tmp_path / "ws")


@pytest.fixture(scope="session")
def binary_fixtures(tmp_path_factory) -> dict[str, Path]:
    import build

    folder = tmp_path_factory.mktemp("binary-fixtures")
    return {
        "pdf": build.build_pdf(folder / "faraday.pdf"),
        "scanned_pdf": build.build_scanned_pdf(folder / "scan.pdf"),
        "docx": build.build_docx(folder / "celsius.docx"),
    }


@pytest.fixture(scope="session")
def count_tokens():
    from llmwiki.models import minilm_token_counter

    return minilm_token_counter()


KELP = "# Kelp\n\nThe Kelp Forest shelters many fish. Divers study the Kelp Forest every spring. Sea urchins graze on kelp.\n"
VOLTA = "# Volta\n\nAlessandro Volta stacked zinc and copper discs into a pile. The Voltaic Pile made a steady current.\n"
HIDDEN = "# Archive\n\nThe quartermaster logged the narwhal tusk in the archive ledger.\n"
DATASET = """---
type: dataset
category: harbours
format: long
unit: ships
as_of: 2024-01-01
source: test
---

| key | metric | value |
|---|---|---|
| Portsmouth | berths | 12 |
| Dover | berths | 30 |
"""


@pytest.fixture
def wiki(workspace):
    """A small generated wiki: kelp and volta sources with pages, one source without pages, a dataset."""
    from llmwiki.wiki import ingest_paths

    (workspace.sources_dir / "kelp.md").write_text(KELP, encoding="utf-8")
    (workspace.sources_dir / "volta.md").write_text(VOLTA, encoding="utf-8")
    ingest_paths(workspace)
    (workspace.sources_dir / "hidden.md").write_text(HIDDEN, encoding="utf-8")
    ingest_paths(workspace, [workspace.sources_dir / "hidden.md"], generate=False)  # in the sources only, not in the wiki
    (workspace.datasets_dir / "harbours.md").write_text(DATASET, encoding="utf-8")
    return workspace


REEF_A = "# Reef notes\n\nThe Kelp Forest shelters many fish. Divers study the Kelp Forest every spring.\n"
REEF_B = "# Coast survey\n\nSurveyors mapped the Kelp Forest along the coast. The Kelp Forest grew after otters returned.\n"


@pytest.fixture
def reef(workspace):
    """Two sources about the Kelp Forest, ingested with their wiki pages (one concept page shared by both)."""
    from llmwiki.wiki import ingest_paths

    (workspace.sources_dir / "a.md").write_text(REEF_A, encoding="utf-8")
    (workspace.sources_dir / "b.md").write_text(REEF_B, encoding="utf-8")
    ingest_paths(workspace)
    return workspace
