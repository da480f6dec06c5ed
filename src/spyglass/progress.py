"""A one-line progress report on stderr for long CLI jobs (redrawn in place on a terminal)."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, label: str, stream=None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.started = time.monotonic()
        self._last = 0.0

    def update(self, fraction: float | None, detail: str, force: bool = False) -> None:
        now = time.monotonic()
        if not self.live or (not force and now - self._last < 0.2):
            return
        self._last = now
        width = 28
        if fraction is None:
            bar = ""
        else:
            filled = int(max(0.0, min(1.0, fraction)) * width)
            bar = f"[{'#' * filled}{'.' * (width - filled)}] {fraction:4.0%} "
        self.stream.write(f"\r{self.label} {bar}{detail}\x1b[K")
        self.stream.flush()

    def note(self, line: str) -> None:
        """A line of its own above the progress line (redrawn at the next update)."""
        if self.live:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"{self.label}: {line}\n")
        self.stream.flush()
        self._last = 0.0

    def done(self, summary: str) -> None:
        if self.live:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"{self.label}: {summary} in {time.monotonic() - self.started:.1f} s\n")
        self.stream.flush()
