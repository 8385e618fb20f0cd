"""The CLI, settings and readings references in docs/, generated from the code so that they cannot drift.

    python -m llmwiki.reference          # rewrite docs/cli.md, docs/settings.md and docs/readings.md
    python -m llmwiki.reference --check  # exit 1 when one differs from what the code says

The CLI reference is click's own help of every command, at a fixed width; the settings reference is the typed
config (``llmwiki.config``): one line per key with its type, default and description (the attribute docstring).
The readings page lists the answer's readings in the order they are read (``read.readings.registry``), each with
what it reads (its docstring) and its figures from the last ``bench/readings.py`` run (``docs/readings-figures.json``).
``tests/test_reference.py`` fails when a file is stale, so a new command, option or setting lands with its docs.
"""

from __future__ import annotations

import argparse
import sys
import typing
from pathlib import Path

import click

from llmwiki.cli import cli
from llmwiki.config import WikiConfig

DOCS = Path(__file__).resolve().parent.parent / "docs"
_WIDTH = 100


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, prefix=f"{prefix}{name} ")
    return found


def cli_reference() -> str:
    """docs/cli.md: every command's help, as `llmwiki COMMAND --help` prints it."""
    parts = ["# CLI reference", "", "Generated from the code by `python -m llmwiki.reference`; `tests/test_reference.py` fails when it is stale.", ""]
    top = click.Context(cli, info_name="llmwiki", terminal_width=_WIDTH, max_content_width=_WIDTH)
    parts += ["```text", cli.get_help(top).rstrip(), "```", ""]
    for name, command in _commands(cli):
        context = click.Context(command, info_name=f"llmwiki {name}", parent=None, terminal_width=_WIDTH, max_content_width=_WIDTH)
        parts += [f"## llmwiki {name}", "", "```text", command.get_help(context).rstrip(), "```", ""]
    return "\n".join(parts)


def _shown(value) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "(unset)"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{}" if not value else str(value)
    return str(value)


def _type_name(annotation) -> str:
    """A setting's type as a reader writes it in TOML ("one of "auto", "onnx", "torch"", "int", "list of str")."""
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(f'"{argument}"' for argument in arguments)
    if origin in (tuple, list):
        return f"list of {_type_name(arguments[0])}" if arguments else "list"
    if origin is dict:
        return "table"
    if arguments and type(None) in arguments:
        return " or ".join(_type_name(argument) for argument in arguments if argument is not type(None)) + " (optional)"
    return getattr(annotation, "__name__", str(annotation))


def settings_reference() -> str:
    """docs/settings.md: every key of wiki_config.toml with its type, default and what it does."""
    parts = ["# Settings reference (`wiki_config.toml`)", "",
             "Every key is optional; an unknown key or a bad value is an error that names it. Generated from `llmwiki/config.py` by "
             "`python -m llmwiki.reference`; `tests/test_reference.py` fails when it is stale.", ""]
    for section, field in WikiConfig.model_fields.items():
        model = field.annotation
        parts += [f"## [{section}]", ""]
        if model.__doc__ and not model.__doc__.startswith(model.__name__ + "("):
            parts += [" ".join(model.__doc__.split()), ""]
        parts += ["| key | type | default | what it does |", "| --- | --- | --- | --- |"]
        for name, info in model.model_fields.items():
            kind = _type_name(info.annotation)
            description = (info.description or "").replace("|", "\\|")
            parts.append(f"| `{name}` | {kind.replace('|', 'or')} | `{_shown(info.default)}` | {description} |")
        parts.append("")
    return "\n".join(parts)


FIGURES = DOCS / "readings-figures.json"


def readings_page(figures_path: Path = FIGURES) -> str:
    """docs/readings.md: every list of readings in order, each reading with what it reads and, where
    ``bench/readings.py`` wrote them, its figures per corpus: the answers it decides, how many of those are right,
    and how many the answer without it gets right."""
    import json

    from llmwiki.read.readings.registry import LISTS

    figures = json.loads(figures_path.read_text(encoding="utf-8")) if figures_path.is_file() else {}
    corpora = figures.get("corpora", [])
    lines = ["# The answer's readings", "",
             "Generated by `python -m llmwiki.reference` from `llmwiki/read/readings/registry.py` and the figures",
             "`bench/readings.py` wrote to `docs/readings-figures.json`; do not edit by hand.", "",
             "Every answer names the reading that decided it (`llmwiki ask --why`, `decided_by` in `--json` and MCP).",
             "Each list is read in order; the first reading that decides, decides. A reading lands only with its figures",
             "on at least two corpora other than the one that suggested it (docs/asking.md); one that decides nothing, or is",
             "right less often than the answer without it, on every corpus but the one it was written on is removed.",
             "No corpus here reaches the readings of the selection (a setting), the wiki as a whole, or a model's verdict",
             "(no generating backend runs offline): they are kept without figures.", ""]
    if figures:
        lines += [f"Figures: {figures.get('date', '?')}, commit {figures.get('commit', '?')}. Per corpus: decided / right "
                  "(of the answers it decides, how many hold the reference) / right without it (the same answers with the "
                  "reading left out of its list).", ""]
    titles = {"selection": "Before anything is read (every backend)", "answer": "The extractive answer",
              "statement": "A yes/no statement against the sentences about its subject", "model": "A model's yes or no, held to the evidence rule"}
    for list_name, readings in LISTS.items():
        lines += [f"## {titles[list_name]} (`{list_name}`)", ""]
        header = "| # | reading | kind | what it reads |" + "".join(f" {corpus} |" for corpus in corpora)
        lines += [header, "|---|---|---|---|" + "---|" * len(corpora)]
        for number, item in enumerate(readings, start=1):
            row = f"| {number} | `{item.name}` | {item.kind} | {item.summary.replace('|', '/')} |"
            for corpus in corpora:
                found = figures.get("readings", {}).get(item.name, {}).get(corpus)
                row += f" {found['decided']} / {found['right']} / {found['without_right']} |" if found else " — |"
            lines.append(row)
        lines.append("")
    return "\n".join(lines)


REFERENCES = {"cli.md": cli_reference, "settings.md": settings_reference, "readings.md": readings_page}


def stale(folder: Path = DOCS) -> list[str]:
    """The reference files in folder that differ from what the code generates now."""
    return [name for name, make in REFERENCES.items() if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != make()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the references are up to date (exit 1 when not)")
    args = parser.parse_args(argv)
    if args.check:
        out_of_date = stale()
        for name in out_of_date:
            print(f"docs/{name} is stale: run `python -m llmwiki.reference`")
        return 1 if out_of_date else 0
    DOCS.mkdir(exist_ok=True)
    for name, make in REFERENCES.items():
        (DOCS / name).write_text(make(), encoding="utf-8")
        print(f"wrote docs/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
