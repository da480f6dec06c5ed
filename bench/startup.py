"""Cold start: the dashboard against a bare Textual app, in a real pty.

Each run starts a fresh process in a pseudo-terminal and times until a marker is drawn. The
dashboard runs with no profile and an empty data dir (a first start), so it also starts the
embedded backend, creates the local account and seeds the demo data. Two figures: its first
screen (which must not wait for the backend), and ``spyglass --pane search 'port:22'`` until its
first result row (an address of the demo data) is drawn: what a first start costs a user.

    python bench/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time

BARE_APP = """
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("BARE-READY")
Bare().run()
"""


# A result row: an address of the demo data (198.18.0.0/15) drawn in the search table.
RESULT_ROW = re.compile(rb"198\.1[89]\.\d+\.\d+")


def time_to_marker(
    argv: list[str], marker: bytes | re.Pattern[bytes], env: dict[str, str], timeout: float = 30.0
) -> float:
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True, start_new_session=True
    )
    os.close(slave)
    seen = b""
    try:
        while time.perf_counter() - started < timeout:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
                if marker.search(seen) if isinstance(marker, re.Pattern) else marker in seen:
                    return time.perf_counter() - started
        raise RuntimeError(f"{marker!r} not drawn within {timeout} s")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        os.close(master)


def wait_for_leftovers(home: str, timeout: float = 30.0) -> None:
    """Until no process names ``home`` (a dashboard's backend ends after it, on its own): else it
    competes with the next run for the CPU."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        busy = False
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    busy = busy or home.encode() in fh.read()
            except OSError:
                continue
        if not busy:
            return
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base_env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36"}
    bare, dash, results = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as home:
            env = {**base_env, "SPYGLASS_CONFIG_DIR": f"{home}/config", "SPYGLASS_DATA_DIR": f"{home}/data"}
            env = {
                k: v
                for k, v in env.items()
                if not k.startswith("SPYGLASS_") or k in ("SPYGLASS_CONFIG_DIR", "SPYGLASS_DATA_DIR")
            }
            bare.append(time_to_marker([sys.executable, "-c", BARE_APP], b"BARE-READY", env))
            dash.append(time_to_marker([sys.executable, "-m", "spyglass"], b"starting backend", env))
            wait_for_leftovers(home)
        with tempfile.TemporaryDirectory() as home:  # a first start again: a fresh data dir
            env = {**env, "SPYGLASS_CONFIG_DIR": f"{home}/config", "SPYGLASS_DATA_DIR": f"{home}/data"}
            search = [sys.executable, "-m", "spyglass", "--pane", "search", "port:22"]
            results.append(time_to_marker(search, RESULT_ROW, env))
            wait_for_leftovers(home)
    b, d = statistics.median(bare), statistics.median(dash)
    print(f"bare Textual app   median {b * 1000:7.1f} ms  (min {min(bare) * 1000:.1f}, max {max(bare) * 1000:.1f})")
    print(f"spyglass dashboard median {d * 1000:7.1f} ms  (min {min(dash) * 1000:.1f}, max {max(dash) * 1000:.1f})")
    print(f"ratio {d / b:.2f}x  (goal <= 1.30x, {args.runs} runs each)")
    r = statistics.median(results)
    print(
        f"first start to port:22 results median {r * 1000:7.1f} ms  (min {min(results) * 1000:.1f}, "
        f"max {max(results) * 1000:.1f}; goal <= 2000 ms)"
    )


if __name__ == "__main__":
    main()
