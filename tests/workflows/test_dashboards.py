"""The dashboard as a user starts it (in a terminal of its own), the CLI beside it on the same data
dir, and a second dashboard: one backend serves the data dir; the CLI and the second dashboard
attach to it, and the second takes it over when the first quits."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from spyglass.local.datalock import LOCK_FILE, served_by
from tests.workflows.commands import Terminal, spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes

QUIT = b"\x11"  # ctrl+q


def serving(data) -> int | None:
    """The process whose backend holds ``data`` (the dashboard that started it), or None."""
    holder = served_by(data)
    if holder is None:
        return None
    try:
        pid = json.loads((data / LOCK_FILE).read_text())["pid"]
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, KeyError):
        return None


def count(data) -> int:
    return int(spyglass("--data", str(data), "count", "port:22").stdout.strip().replace(",", ""))


def test_two_dashboards_and_the_cli_on_one_data_dir(tmp_path):
    data = tmp_path / "data"
    first = Terminal("--data", str(data), "--pane", "search", "port:22")
    second = None
    try:
        first.wait_for(b"results")  # the first start: backend started, demo data in, query run
        assert count(data) > 0  # the CLI attached to the dashboard's backend
        second = Terminal("--data", str(data), "--pane", "search", "port:22")
        second.wait_for(b"results")
        assert serving(data) == first.process.pid  # the second attached rather than starting another
        first.press(QUIT)
        assert first.close() == 0
        deadline = time.monotonic() + 60
        while serving(data) != second.process.pid and time.monotonic() < deadline:
            time.sleep(0.2)
        assert serving(data) == second.process.pid  # the second dashboard started its own backend
        assert count(data) > 0  # and the CLI attaches to that one
        second.press(QUIT)
        assert second.close() == 0
    finally:
        for terminal in (first, second):
            if terminal is not None and terminal.process.poll() is None:
                terminal.process.kill()


def test_kill_ends_the_dashboard_as_quitting_does(tmp_path):
    """`kill -TERM` left the terminal in the alternate screen, reporting the mouse, its cursor
    hidden (newcomer trial 23, 2 of 2): it now ends the dashboard as ctrl+q does, exit 143."""
    import signal

    terminal = Terminal("--data", str(tmp_path / "data"), "--pane", "search", "port:22")
    try:
        terminal.wait_for(b"results")
        drawn = len(terminal.drawn)
        terminal.process.send_signal(signal.SIGTERM)
        assert terminal.close() == 128 + signal.SIGTERM
        after = terminal.drawn[drawn:]
        for put_back in (b"\x1b[?1049l", b"\x1b[?1000l", b"\x1b[?25h"):  # the screen, the mouse, the cursor
            assert put_back in after, (put_back, after[-500:])
        assert b"Traceback" not in after
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
