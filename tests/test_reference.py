"""The docs cannot drift: the generated references match the code, and the README's commands run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import click
import pytest

from conftest import REPO
from llmwiki import reference
from llmwiki.cli import cli
from llmwiki.config import WikiConfig


def test_the_cli_and_settings_references_are_what_the_code_generates(tmp_path):
    assert reference.stale(REPO / "docs") == [], "run `.venv/bin/python -m llmwiki.reference`"
    for name, make in reference.REFERENCES.items():  # the control: a reference that differs is found stale
        (tmp_path / name).write_text(make().replace("llmwiki", "llmwikx", 1), encoding="utf-8")
    assert sorted(reference.stale(tmp_path)) == sorted(reference.REFERENCES)


def test_every_command_option_and_setting_is_documented():
    cli_doc = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = []
    for name, command in reference._commands(cli):
        if f"## llmwiki {name}\n" not in cli_doc:
            missing.append(name)
        for parameter in command.params:
            if isinstance(parameter, click.Option) and not parameter.hidden and not any(flag in cli_doc for flag in parameter.opts):
                missing.append(f"{name} {parameter.opts[0]}")
    assert missing == []
    settings_doc = (REPO / "docs" / "settings.md").read_text(encoding="utf-8")
    undocumented = [f"[{section}] {key}" for section, field in WikiConfig.model_fields.items() for key, info in field.annotation.model_fields.items()
                    if f"| `{key}` |" not in settings_doc or not info.description]
    assert undocumented == []


def _readme_commands() -> list[str]:
    """The `llmwiki ...` lines of the README's console block, as a user types them."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```console\n(.*?)```", text, re.S).group(1)
    return [line.removeprefix("$ ").split("  #")[0].strip() for line in block.splitlines() if line.startswith("$ llmwiki ")]


@pytest.mark.slow
def test_the_readme_commands_run_on_the_sample_workspace(tmp_path):
    commands = _readme_commands()
    assert len(commands) >= 6 and commands[0].startswith("llmwiki init")
    root = tmp_path / "my-wiki"
    for command in commands:
        arguments = command.replace("~/my-wiki", str(root)).split()
        if arguments[1] == "ingest":  # the README copies your files in; here the sample workspace's sources
            for source in sorted((REPO / "workspace" / "sources").iterdir()):
                shutil.copyfile(source, root / "sources" / source.name)
        result = subprocess.run([sys.executable, "-m", "llmwiki", *_unquoted(arguments[1:])], capture_output=True, text=True, timeout=600,
                                env={"HF_HUB_OFFLINE": "1", **__import__("os").environ})
        assert result.returncode == 0, f"{command}\n{result.stdout[-1000:]}\n{result.stderr[-2000:]}"
    assert (root / "wiki" / "answers" / "who-discovered-radioactivity.md").is_file()


def _unquoted(arguments: list[str]) -> list[str]:
    """Words of a shell line, quotes joined ("who discovered radioactivity" is one argument)."""
    import shlex

    return shlex.split(" ".join(arguments))
