"""Running spyglass as a user does: a process with the environment the tests isolate."""

from __future__ import annotations

import os
import subprocess
import sys


def spyglass(*args: str, env: dict[str, str] | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
    """``spyglass ARGS...`` as a process (its environment plus ``env``); with ``ok``, it must succeed."""
    done = subprocess.run(
        [sys.executable, "-m", "spyglass", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    if ok:
        assert done.returncode == 0, f"spyglass {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
    return done
