"""Verifying a whole wiki in several processes (``llmwiki verify --all --jobs N``).

Each worker process opens the workspace, loads the verifier once and verifies
the pages it is handed, one at a time, storing each result through the store's
own locks (a DuckDB file is opened briefly per operation and retried while
another process holds it; PostgreSQL takes concurrent writers). The CPU's
threads are shared among the workers, so N processes do not each start one
thread per core. Results come back as each page finishes, in that order.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

_WORKER: dict = {}  # in each worker process: the workspace and its verifier


def _start(root: str, threads: int) -> None:
    import torch

    from llmwiki.services import Services
    from llmwiki.workspace import Workspace

    torch.set_num_threads(threads)
    workspace = Workspace.open(Path(root))
    _WORKER.update(workspace=workspace, verifier=Services(workspace).verifier)  # this process's edge: the model loaded once here


def _verify(page: str, force: bool) -> tuple[str, str | None, bool]:
    from llmwiki.errors import LlmwikiError
    from llmwiki.verify.page import verify_page

    workspace = _WORKER["workspace"]
    try:
        result = verify_page(workspace, page, _WORKER["verifier"], force=force, premises_per_sentence=workspace.config.verification.premises_per_sentence)
    except LlmwikiError as err:
        return page, str(err), False
    return page, None, result.reused


def verify_in_processes(root: Path, pages: Sequence[str], *, jobs: int, force: bool = False) -> Iterator[tuple[str, str | None, bool]]:
    """(page, None when verified and stored else why not, whether its stored verification was reused) for each
    page as a worker finishes it."""
    threads = max(1, (os.cpu_count() or 1) // jobs)
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no torch state or store connection inherited
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start, initargs=(str(root), threads)) as pool:
        futures = [pool.submit(_verify, page, force) for page in pages]
        for future in as_completed(futures):
            yield future.result()
