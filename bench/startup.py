"""Cold start to first usable screen: the dashboard against a bare Textual app, in a real pty.

Each run starts a fresh process in a pseudo-terminal and times until the first screen's marker
text is drawn. The dashboard runs with no profile and an empty data dir, so it also starts the
embedded backend and creates the local account (the screen must not wait for either).

    python bench/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import pty
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


def time_to_marker(argv: list[str], marker: bytes, env: dict[str, str], timeout: float = 30.0) -> float:
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
                if marker in seen:
                    return time.perf_counter() - started
        raise RuntimeError(f"{marker!r} not drawn within {timeout} s")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        os.close(master)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    base_env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36"}
    bare, dash = [], []
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
    b, d = statistics.median(bare), statistics.median(dash)
    print(f"bare Textual app   median {b * 1000:7.1f} ms  (min {min(bare) * 1000:.1f}, max {max(bare) * 1000:.1f})")
    print(f"spyglass dashboard median {d * 1000:7.1f} ms  (min {min(dash) * 1000:.1f}, max {max(dash) * 1000:.1f})")
    print(f"ratio {d / b:.2f}x  (goal <= 1.30x, {args.runs} runs each)")


if __name__ == "__main__":
    main()
