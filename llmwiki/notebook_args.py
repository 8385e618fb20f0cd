"""What the notebooks share: their command-line arguments, read the same way however a notebook is
started, inline chart data and progress bars by stage.

A notebook runs as a script (``python notebooks/ask.py --workspace DIR``),
under marimo (``marimo run notebooks/ask.py -- --workspace DIR``, where
``mo.cli_args()`` holds what follows ``--``), or as a script given a
marimo-style ``--`` (``python notebooks/ask.py -- --workspace DIR``). All
three read the same arguments. An argument the notebook does not know is an
error that names it, never silently dropped, and there is no default
workspace: a notebook that was not told which workspace to open says so
instead of writing into the repository's sample ``workspace/``.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager

from llmwiki.errors import LlmwikiError


class NotebookArgumentError(LlmwikiError):
    """A notebook was started with arguments it does not take."""


def _marimo_arguments() -> list[str] | None:
    """What follows ``--`` on a ``marimo run/edit`` command line, as a list; None outside marimo."""
    try:
        import marimo as mo
    except ImportError:
        return None
    if not mo.running_in_notebook():
        return None
    arguments = []
    for key, value in mo.cli_args().items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if item is True or item == "":
                arguments.append(f"--{key}")
            elif item is not False and item is not None:
                arguments += [f"--{key}", str(item)]
    return arguments


def parse_notebook_args(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> argparse.Namespace:
    """Parse a notebook's arguments (see the module docstring); --workspace falls back to LLMWIKI_WORKSPACE.

    Raises NotebookArgumentError naming unknown arguments, or a missing workspace.
    """
    if argv is None:
        argv = _marimo_arguments()
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    known, unknown = parser.parse_known_args(argv)
    if unknown:
        msg = f"{parser.prog}: unknown argument(s) {' '.join(unknown)}. It takes: {parser.format_usage().strip().removeprefix('usage: ')}"
        _fail(msg)
    if getattr(known, "workspace", None) is None:
        known.workspace = os.environ.get("LLMWIKI_WORKSPACE")
    if not known.workspace:
        msg = (f"{parser.prog}: no workspace given. Start it with --workspace DIR (python notebooks/x.py --workspace DIR, or "
               "marimo run notebooks/x.py -- --workspace DIR), or set LLMWIKI_WORKSPACE; the repository's sample is workspace/ (make demo copies it to build/demo).")
        _fail(msg)
    from llmwiki.workspace import Workspace

    try:
        Workspace.open(known.workspace)  # not a workspace: said here, in one line, before any cell runs
    except LlmwikiError as err:
        _fail(f"{parser.prog}: {err}")
    return known


def _fail(msg: str) -> None:
    """A notebook's bad start: one line and exit status 2 when run as a script; under marimo, an error the page shows."""
    try:
        import marimo as mo

        in_notebook = mo.running_in_notebook()
    except ImportError:
        in_notebook = False
    if not in_notebook:
        print(f"Error: {msg}", file=sys.stderr)
        raise SystemExit(2)
    raise NotebookArgumentError(msg)


def inline_chart_data() -> None:
    """Charts carry their data in the page. marimo's default serves it as files that a re-run
    deletes while the browser may still be fetching them (ERR_INCOMPLETE_CHUNKED_ENCODING,
    "Failed to fetch" in the console). Registered only under marimo; elsewhere nothing changes."""
    import altair as alt

    if "marimo_inline_csv" in alt.data_transformers.names():
        alt.data_transformers.enable("marimo_inline_csv")


@contextmanager
def progress_by_stage(title: str):
    """A marimo progress bar per stage of long work, with counts: yields on_progress(done, total, stage).

    Each new stage closes the last bar and opens one sized to the stage's total ("12 of 40 pages",
    then "64 of 310 sentence pairs"), so a reviewer sees what is being counted, not only a spinner.
    """
    import marimo as mo

    state: dict = {"stage": None, "context": None, "bar": None, "done": 0}

    def close() -> None:
        if state["context"] is not None:
            state["context"].__exit__(None, None, None)
            state.update(context=None, bar=None)

    def on_progress(done: int, total: int, stage: str) -> None:
        if stage != state["stage"]:
            close()
            context = mo.status.progress_bar(total=max(total, 1), title=f"{title}: {stage}", remove_on_exit=True)
            state.update(stage=stage, done=0, context=context, bar=context.__enter__())
        if done > state["done"]:
            state["bar"].update(increment=done - state["done"], subtitle=f"{done} of {total} {stage}")
            state["done"] = done

    try:
        yield on_progress
    finally:
        close()
