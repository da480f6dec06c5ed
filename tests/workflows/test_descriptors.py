"""``spyglass serve`` under ``ulimit -n 1024`` (a common default), as a process: the CLI beside it
and a flood of idle connections, with requests still answered."""

from __future__ import annotations

import resource
import socket

import pytest

from tests.contract.test_guard import serve
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes


def test_serve_under_ulimit_n_1024(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048 <= hard:  # this side holds more connections than the server has descriptors
        resource.setrlimit(resource.RLIMIT_NOFILE, (2048, hard))
    with serve(tmp_path, "--demo", "--workers", "2", descriptors=1024) as url:
        host, port = url.removeprefix("http://").split(":")
        idle = [socket.create_connection((host, int(port))) for _ in range(1200)]
        try:
            counted = spyglass("--data", str(tmp_path), "count", "port:22")
            found = spyglass("--data", str(tmp_path), "search", "port:22")
        finally:
            for s in idle:
                s.close()
    assert int(counted.stdout.strip().replace(",", "")) > 0
    assert "22/tcp" in found.stdout
