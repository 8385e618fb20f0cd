from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
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


def cmu_data() -> Path:
    path = SHARED_DATA / "cmu-qa" / "S08"
    if not path.is_dir():
        pytest.skip(f"{path} is absent: the CMU QA corpus lives in ../shared/data (see its README)")
    return path
