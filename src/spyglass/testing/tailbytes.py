"""What the stream pane costs a thin link: the bytes the dashboard writes to its terminal while
banners arrive, against what ``spyglass stream`` prints for the same banners.

Both run as real processes under pseudo-terminals of the same size, on one embedded backend (in
this process, so the banners are handed to its collector one by one, as a crawler would). A
banner counts as shown once its address appears in what the process wrote; the window measured
runs from the first banner handed over to the last one shown by both. The test of the pane and
``bench/stream_bytes.py`` use it.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PATIENCE = 120.0  # seconds a banner may take to show before the run is given up (a hung process)


class Terminal:
    """A process under a pseudo-terminal of ``cols`` x ``rows``; all it writes is kept."""

    def __init__(self, argv: list[str], cols: int, rows: int, env: dict[str, str]) -> None:
        primary, secondary = pty.openpty()
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.process = subprocess.Popen(
            argv, stdin=secondary, stdout=secondary, stderr=secondary, env=env, start_new_session=True
        )
        os.close(secondary)
        self.fd = primary
        self.output = bytearray()
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:  # the process is gone (EIO)
                data = b""
            with self.changed:
                self.output += data
                self.changed.notify_all()
            if not data:
                return

    @property
    def written(self) -> int:
        with self.changed:
            return len(self.output)

    def wait_for(self, needle: bytes, start: int = 0, timeout: float = PATIENCE) -> bool:
        """Whether ``needle`` was written at or after ``start`` within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while self.output.find(needle, start) < 0:
                left = deadline - time.monotonic()
                if left <= 0 or not self.reader.is_alive():
                    return False
                self.changed.wait(left)
            return True

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(5)
        os.close(self.fd)


@dataclass
class Figures:
    banners: int
    seconds: float
    pane: int  # bytes the dashboard wrote
    cli: int  # bytes `spyglass stream` wrote

    @property
    def ratio(self) -> float:
        return self.pane / max(1, self.cli)


def banners(count: int, start: int = 0) -> list[dict]:
    """Demo banners, each with an address of its own (3-digit last octet: no address is the
    start of another, so finding one in the output is finding that banner)."""
    import ipaddress

    from spyglass.datagen import generate

    made = []
    for n, banner in enumerate(generate(count, seed=45), start):
        address = ipaddress.ip_address(f"198.19.{n // 100}.{100 + n % 100}")
        made.append({**banner, "ip_str": str(address), "ip": int(address)})
    return made


def measure(data_dir: Path, cols: int, rows: int, count: int, every: float = 0.5, term: str = "") -> Figures:
    """The dashboard's stream pane and ``spyglass stream`` at ``cols`` x ``rows`` while ``count``
    banners arrive, one each ``every`` seconds (the demo collector's 2 a second by default)."""
    from datetime import UTC, datetime

    from spyglass.testing.backend import start_backend

    server, backend = start_backend(data_dir / "backend")
    env = {
        **os.environ,
        "TERM": term or os.environ.get("TERM", "xterm-256color"),
        "SPYGLASS_CONFIG_DIR": str(data_dir / "config"),
        "XDG_DATA_HOME": str(data_dir / "share"),
        "SPYGLASS_URL": backend.url,
    }
    env.pop("NO_COLOR", None)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
    sent = [{**b, "timestamp": stamp} for b in banners(count + rows + 200)]
    measured, fill, warm = sent[:count], sent[count : count + rows], iter(sent[count + rows :])
    spyglass = [sys.executable, "-m", "spyglass"]
    with server:
        env["SPYGLASS_API_KEY"] = backend.key()
        terminals = [Terminal([*spyglass, *argv], cols, rows, env) for argv in (["--pane", "stream"], ["stream"])]

        def show(batch: list[dict], timeout: float = PATIENCE) -> bool:
            at = [t.written for t in terminals]
            backend.collect(batch)
            last = batch[-1]["ip_str"].encode()
            return all(t.wait_for(last, a, timeout) for t, a in zip(terminals, at, strict=True))

        try:
            deadline = time.monotonic() + PATIENCE
            while not show([next(warm)], timeout=2.0):  # a banner collected before both follow is lost
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the stream never showed: {[bytes(t.output[-2000:]) for t in terminals]}")
            show(fill)  # a screenful: the pane as it is after a while
            time.sleep(1.0)  # its repaints are not counted
            start = [t.written for t in terminals]
            began = time.monotonic()
            for n, banner in enumerate(measured):
                if not show([banner]):
                    raise RuntimeError(f"banner {n} never showed: {[bytes(t.output[-2000:]) for t in terminals]}")
                time.sleep(max(0.0, began + (n + 1) * every - time.monotonic()))  # the pace, not a wait
            seconds = time.monotonic() - began
            pane, cli = (t.written - s for t, s in zip(terminals, start, strict=True))
            return Figures(count, seconds, pane, cli)
        finally:
            for t in terminals:
                t.close()
            backend.store.close()
