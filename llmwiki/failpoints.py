"""Named points where crash tests kill the process, as kill -9 would."""

from __future__ import annotations

import os
import signal


def failpoint(name: str) -> None:
    """Die here when LLMWIKI_FAILPOINT names this point (crash tests); otherwise nothing."""
    if os.environ.get("LLMWIKI_FAILPOINT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
