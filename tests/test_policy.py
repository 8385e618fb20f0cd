"""llmwiki.policy: fitted values in one place, passed in, and overridable where a user would want to."""

from __future__ import annotations

import ast
from dataclasses import fields

import pytest

from conftest import REPO
from llmwiki.config import ConfigError, load_config
from llmwiki.policy import ANSWER_POLICY, AnswerPolicy, SelectPolicy, VerifyPolicy


def test_a_workspace_may_make_refusals_stricter(tmp_path):
    config = tmp_path / "wiki_config.toml"
    config.write_text("[chat]\nmin_shares_else = [0.6, 0.65]\n", encoding="utf-8")
    policy = AnswerPolicy.from_config(load_config(config).chat)
    assert policy.min_shares_else == (0.6, 0.65) and policy.min_shares_about_title == ANSWER_POLICY.min_shares_about_title
    assert AnswerPolicy.from_config(load_config(tmp_path / "absent.toml").chat) == ANSWER_POLICY  # control: the shipped one
    config.write_text("[chat]\nmin_shares_else = [1.5, 0.65]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="min_shares_else"):
        load_config(config)


def test_a_stricter_policy_refuses_what_the_shipped_one_answers(tmp_path):
    from llmwiki.read.answer import answer_question
    from llmwiki.publish.wiki import ingest_paths
    from llmwiki.workspace import Workspace

    workspace = Workspace.init(tmp_path / "ws")
    (workspace.sources_dir / "kelp.md").write_text("# Kelp\n\nThe Kelp Forest shelters many fish. Divers study the Kelp Forest every spring.\n", encoding="utf-8")
    ingest_paths(workspace)
    question = "Which forest shelters many fish and turtles?"  # "turtles" is nowhere: most, not all, of its words match
    assert not answer_question(workspace, question).refused  # control: the shipped shares answer it
    # Stricter shares alone still answer it: the sentence says most of it in other words (the paraphrase cosine)...
    (workspace.root / "wiki_config.toml").write_text("[chat]\nmin_shares_about_title = [0.9, 0.9]\nmin_shares_else = [0.9, 0.9]\n", encoding="utf-8")
    assert not answer_question(Workspace.open(workspace.root), question).refused
    # ...and with that turned off too, the stricter policy refuses it
    (workspace.root / "wiki_config.toml").write_text("[chat]\nmin_shares_about_title = [0.9, 0.9]\nmin_shares_else = [0.9, 0.9]\nparaphrase_cosine = 1\n",
                                                     encoding="utf-8")
    strict = Workspace.open(workspace.root)
    assert AnswerPolicy.from_config(strict.config.chat).paraphrase_cosine is None
    assert answer_question(strict, question).refused


def test_every_fitted_value_is_defined_once():
    """No module outside llmwiki/policy.py assigns a name that a policy field holds in upper case (YES_THRESHOLD = ...),
    except as an alias of the policy's value."""
    names = {field.name.upper() for record in (AnswerPolicy, SelectPolicy, VerifyPolicy) for field in fields(record)}
    assert "YES_THRESHOLD" in names  # control
    found = []
    for path in (REPO / "llmwiki").rglob("*.py"):
        if path.name == "policy.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id in names:
                        found.append(f"{path.name}: {target.id}")
    assert found == []
