"""``spyglass`` starts the embedded backend before Textual loads (~0.4 s that a first start no
longer waits for twice), and the dashboard connects to that backend rather than starting another."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from spyglass.config import Profile
from spyglass.local.launcher import EmbeddedBackend
from spyglass.tui.connection import Connection

pytestmark = pytest.mark.external  # the dashboard's backend as a process, a pty

EARLY = """
import json, sys
from pathlib import Path
from spyglass.cli.commands.dashboard import start_backend

backend = start_backend(None, Path(sys.argv[1]), "search")
running = backend is not None and backend.process is not None and backend.process.poll() is None
print(json.dumps({"started": running, "textual_loaded": "textual" in sys.modules}), file=sys.stderr)
if backend is not None:
    backend.stop()
"""


def test_the_backend_starts_before_textual_loads(tmp_path):
    """As the dashboard runs: in a terminal (the check that it will run at all comes first)."""
    primary, secondary = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-c", EARLY, str(tmp_path / "data")],
            stdin=secondary,
            stdout=secondary,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env={**os.environ, "SPYGLASS_CONFIG_DIR": str(tmp_path / "config")},
        )
    finally:
        os.close(secondary)
        os.close(primary)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().endswith('{"started": true, "textual_loaded": false}'), done.stderr


async def test_the_dashboard_connects_to_the_backend_started_for_it(tmp_path):
    started = EmbeddedBackend(tmp_path)
    profile = started.start()
    connection = Connection(Profile(), data=tmp_path, started=started)
    try:
        await connection.open()
        assert connection.backend is started and connection.profile.url == profile.url
        assert started.process is not None and started.process.poll() is None
    finally:
        await connection.close()
    assert started.process is None  # closing the connection stopped it, as one it started itself
