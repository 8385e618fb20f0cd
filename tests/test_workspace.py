from __future__ import annotations

import os

import pytest

from llmwiki.config import WikiConfig
from llmwiki.errors import ConfigError, WorkspaceError
from llmwiki.workspace import Workspace


def test_init_creates_the_layout_and_keeps_existing_files(tmp_path):
    root = tmp_path / "ws"
    (root / "wiki").mkdir(parents=True)
    (root / "wiki" / "index.md").write_text("# My own index\n", encoding="utf-8")
    workspace = Workspace.init(root)
    for folder in ("sources", "wiki/summaries", "wiki/concepts", "datasets", ".llmwiki"):
        assert (root / folder).is_dir(), folder
    for page in ("overview.md", "log.md"):
        assert (root / "wiki" / page).is_file()
    assert (root / "wiki" / "index.md").read_text(encoding="utf-8") == "# My own index\n"
    assert workspace.config == WikiConfig()
    assert workspace.config.chunking.max_tokens == 512 and workspace.config.chunking.overlap_tokens == 128


def test_open_refuses_a_folder_that_is_not_a_workspace(tmp_path):
    with pytest.raises(WorkspaceError, match="llmwiki init"):
        Workspace.open(tmp_path)


def test_find_walks_up_and_honours_the_environment(tmp_path, monkeypatch):
    workspace = Workspace.init(tmp_path / "ws")
    deep = workspace.root / "sources" / "a" / "b"
    deep.mkdir(parents=True)
    assert Workspace.find(deep).root == workspace.root
    monkeypatch.setenv("LLMWIKI_WORKSPACE", str(workspace.root))
    monkeypatch.chdir(tmp_path)
    assert Workspace.find().root == workspace.root


def test_relative_confines_paths_to_the_workspace(workspace, tmp_path):
    inside = workspace.sources_dir / "a.md"
    inside.write_text("x", encoding="utf-8")
    assert workspace.relative(inside) == "sources/a.md"
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        workspace.relative(workspace.sources_dir / ".." / ".." / "elsewhere.md")
    outside = tmp_path / "secret.md"
    outside.write_text("secret", encoding="utf-8")
    link = workspace.sources_dir / "link.md"
    os.symlink(outside, link)
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        workspace.relative(link)
    with pytest.raises(WorkspaceError, match="state folder"):
        workspace.relative(workspace.state_dir / "store.duckdb")


def test_config_errors_name_the_file_and_the_key(tmp_path):
    root = tmp_path / "ws"
    Workspace.init(root)
    config = root / "wiki_config.toml"
    config.write_text("[chunking]\nmax_token = 256\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"wiki_config.toml: chunking.max_token: Extra inputs"):
        Workspace.open(root)
    config.write_text("[chunking]\nmax_tokens = 100\noverlap_tokens = 200\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="overlap_tokens"):
        Workspace.open(root)
    config.write_text("[chunking\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Workspace.open(root)
    config.write_text("[chunking]\nmax_tokens = 256\n", encoding="utf-8")
    assert Workspace.open(root).config.chunking.max_tokens == 256  # control
