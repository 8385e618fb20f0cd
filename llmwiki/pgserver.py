"""A throwaway PostgreSQL cluster on loopback, for tests and benchmarks.

``initdb`` into a temporary folder, ``pg_ctl start`` on a free port bound to
127.0.0.1 only, trust authentication (nothing else can reach it), stopped and
deleted on ``stop()``. PostgreSQL refuses to run as root, so under root the
server programs run as the ``postgres`` account Debian's package creates.

This is for throwaway servers only: a team's real server is set up by its
administrators, and a workspace points at it with ``[store] url``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

_SEARCH_PATHS = ("/usr/lib/postgresql",)


class ServerUnavailable(RuntimeError):
    """PostgreSQL's server programs are not installed (or cannot be run here)."""


def server_bin() -> Path:
    """The folder with initdb and pg_ctl: on PATH, else the newest Debian install."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for root in _SEARCH_PATHS:
        versions = sorted(Path(root).glob("*/bin/initdb"), key=lambda path: path.parent.parent.name)
        if versions:
            return versions[-1].parent
    msg = "PostgreSQL's server is not installed (no initdb). Install it: apt-get install postgresql"
    raise ServerUnavailable(msg)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Cluster:
    """A running throwaway cluster; ``url(database)`` names a database on it."""

    folder: Path
    port: int
    user: str = "llmwiki"
    _run_as: list[str] = field(default_factory=list)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its url."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        subprocess.run([*self._run_as, str(server_bin() / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "stop"],
                       capture_output=True, check=False)
        shutil.rmtree(self.folder, ignore_errors=True)


def start_cluster(*, max_connections: int = 100) -> Cluster:
    """initdb + start on a free loopback port; raises ServerUnavailable when that cannot be done."""
    folder = Path(tempfile.mkdtemp(prefix="llmwiki-pg-"))
    run_as: list[str] = []
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            msg = "running as root, and there is no 'postgres' account to run the server as (apt-get install postgresql creates it)"
            raise ServerUnavailable(msg) from None
        os.chown(folder, account.pw_uid, account.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    binaries = server_bin()
    port = _free_port()
    data = folder / "data"
    steps = [
        [*run_as, str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "llmwiki", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
        [*run_as, str(binaries / "pg_ctl"), "-D", str(data), "-l", str(folder / "server.log"), "-w", "-t", "60",
         "-o", f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off -c full_page_writes=off -c max_connections={max_connections}", "start"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            log = (folder / "server.log").read_text(errors="replace")[-2000:] if (folder / "server.log").exists() else ""
            shutil.rmtree(folder, ignore_errors=True)
            msg = f"{Path(step[len(run_as)]).name} failed ({done.returncode}): {done.stderr.strip()[-2000:]} {log}"
            raise ServerUnavailable(msg)
    return Cluster(folder=folder, port=port, _run_as=run_as)
