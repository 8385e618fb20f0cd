"""A workspace: one folder holding sources, the wiki, datasets and machine state.

    PATH/
      wiki_config.toml     typed settings (llmwiki.config)
      sources/             originals, as the analyst dropped them
      wiki/                summaries/, concepts/, overview.md, index.md, log.md
      datasets/            Markdown datasets (may be pointed elsewhere)
      .llmwiki/            machine state: store.duckdb, traces/ (rebuildable)

Every path that enters from outside (a CLI argument, a notebook, a model) is
resolved through ``Workspace.relative`` so that nothing outside the folder is
read or written.

A workspace holds paths, settings and the store, nothing more: the models and
services its steps use (answer backend, verifier, ranker, embedders, tracer,
datasets) are built at the edge of the process and handed in
(``llmwiki.services``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from llmwiki.config import CONFIG_FILENAME, DEFAULT_CONFIG_TOML, WikiConfig, load_config
from llmwiki.errors import WorkspaceError
from llmwiki.store import Store, open_store

STATE_DIRNAME = ".llmwiki"
WIKI_FILES = {
    "overview.md": "# Overview\n\nThis wiki has no content yet. Ingest sources to build it.\n",
    "index.md": "# Index\n\n",
    "log.md": "# Log\n\n",
}
# Maintained by code and read whole by the chat selector; never chunked for search.
INGEST_WAIT_S = 3600  # how long an ingest waits for another one in the same workspace before it gives up
COLLECTION_PAGES = frozenset(f"wiki/{name}" for name in WIKI_FILES)


@dataclass(frozen=True)
class Workspace:
    root: Path
    config: WikiConfig

    @classmethod
    def init(cls, path: Path | str, *, git: bool = True) -> Workspace:
        """Create (or complete) a workspace at path; existing files are kept.

        With git (the default) the workspace becomes its own git repository,
        and every later write is a commit in it.
        """
        root = Path(path).expanduser().resolve()
        if root.exists() and not root.is_dir():
            msg = f"{root}: exists and is not a folder. Choose another path for the workspace."
            raise WorkspaceError(msg)
        for folder in ("sources", "wiki/summaries", "wiki/concepts", "datasets", f"{STATE_DIRNAME}/traces"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        for name, text in WIKI_FILES.items():
            page = root / "wiki" / name
            if not page.exists():
                page.write_text(text, encoding="utf-8")
        config_path = root / CONFIG_FILENAME
        if not config_path.exists():
            config_path.write_text(DEFAULT_CONFIG_TOML, encoding="utf-8")
        workspace = cls.open(root)
        if git:
            from llmwiki.gitrepo import init_repository

            init_repository(root)
        return workspace

    @classmethod
    def open(cls, path: Path | str) -> Workspace:
        """Open an existing workspace; the error says how to create one.

        Opening changes no state: finishing an operation a crash interrupted is
        ``llmwiki.publish.journal.recover``, which the CLI and notebooks call next.
        """
        root = Path(path).expanduser().resolve()
        if not (root / CONFIG_FILENAME).is_file():
            msg = f"{root}: not an llmwiki workspace (no {CONFIG_FILENAME}). Create one with `llmwiki init {path}`."
            raise WorkspaceError(msg)
        (root / STATE_DIRNAME / "traces").mkdir(parents=True, exist_ok=True)
        for folder in ("sources", "wiki/summaries", "wiki/concepts"):
            (root / folder).mkdir(parents=True, exist_ok=True)
        for name, text in WIKI_FILES.items():
            page = root / "wiki" / name
            if not page.exists():
                page.write_text(text, encoding="utf-8")
        return cls(root=root, config=load_config(root / CONFIG_FILENAME))

    @classmethod
    def find(cls, start: Path | str | None = None) -> Workspace:
        """The workspace named by $LLMWIKI_WORKSPACE, or the nearest one above start."""
        if start is None and os.environ.get("LLMWIKI_WORKSPACE"):
            return cls.open(os.environ["LLMWIKI_WORKSPACE"])
        here = Path(start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / CONFIG_FILENAME).is_file():
                return cls.open(folder)
        msg = f"{here}: no llmwiki workspace here or above. Pass --workspace DIR, or create one with `llmwiki init DIR`."
        raise WorkspaceError(msg)

    @property
    def sources_dir(self) -> Path:
        return self.root / "sources"

    @property
    def wiki_dir(self) -> Path:
        return self.root / "wiki"

    @property
    def datasets_dir(self) -> Path:
        return (self.root / self.config.datasets.folder).resolve()

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIRNAME

    @functools.cached_property
    def store(self) -> Store:
        """The embedded DuckDB file, or the PostgreSQL database ``[store] url`` names (one per workspace object)."""
        return open_store(path=self.state_dir / "store.duckdb", url=self.config.store.url, lock_timeout_s=self.config.store.lock_timeout_s)

    PAGE_FIX = "Name a page under wiki/, e.g. wiki/concepts/NAME.md (`llmwiki status` counts them)."
    SOURCE_FIX = "Name a source under sources/, e.g. sources/NAME.md (`llmwiki status` lists them)."

    def relative(self, path: Path | str, *, fix: str | None = None) -> str:
        """A path's POSIX form relative to the root; refuses anything outside it, with fix as the advice
        (default: copy the file into sources/, for files to ingest; PAGE_FIX, SOURCE_FIX for pages and sources)."""
        candidate = Path(path).expanduser()
        if not candidate.is_absolute():
            candidate = Path.cwd() / candidate
        resolved = candidate.resolve()
        try:
            relative = resolved.relative_to(self.root)
        except ValueError:
            advice = fix or f"Copy it into {self.sources_dir} first (or pass --copy to `llmwiki ingest`)."
            msg = f"{path}: is outside the workspace {self.root}. {advice}"
            raise WorkspaceError(msg) from None
        if relative.parts and relative.parts[0] == STATE_DIRNAME:
            msg = f"{path}: is llmwiki's own state folder. Put sources in {self.sources_dir}."
            raise WorkspaceError(msg)
        return relative.as_posix()

    def write_lock(self):
        """An inter-process lock for read-modify-write of wiki pages (held for one operation)."""
        from filelock import FileLock

        return FileLock(str(self.state_dir / "wiki.lock"), timeout=max(self.config.store.lock_timeout_s, 60))

    def ingest_lock(self):
        """An inter-process lock held for a whole ingest (files, then the pages of every source lacking them): a second
        ingest waits for the first instead of writing the pages the first is still writing."""
        from filelock import FileLock

        return FileLock(str(self.state_dir / "ingest.lock"), timeout=INGEST_WAIT_S)

    def kind_of(self, relative_path: str) -> str:
        """'wiki' for pages under wiki/, 'source' for everything else."""
        return "wiki" if relative_path.startswith("wiki/") else "source"

