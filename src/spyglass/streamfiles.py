"""Banners saved as gzipped JSON lines (``.json.gz``, one banner per line, as the stream sends
them): one file, or a directory of daily files named by UTC date (``YYYY-MM-DD.json.gz``).

Files are opened in append mode: a restarted writer adds a gzip member, which every gzip reader
reads as one continuous file.
"""

from __future__ import annotations

import gzip
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

FLUSH_EVERY = 1.0  # seconds: at most this much of what was written is lost if the process dies


class GzipLines:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = gzip.open(self.path, "ab")
        self._flushed = time.monotonic()
        self._lock = threading.Lock()  # written from a worker thread, closed from another
        self.lines = 0

    def write(self, line: bytes) -> None:
        """One banner; ignored once closed (a batch in flight when recording stopped)."""
        with self._lock:
            if self._file.closed:
                return
            self._file.write(line if line.endswith(b"\n") else line + b"\n")
            self.lines += 1
            if time.monotonic() - self._flushed > FLUSH_EVERY:
                self._file.flush()
                self._flushed = time.monotonic()

    def close(self) -> None:
        with self._lock:
            self._file.close()


class DailyFiles:
    """``DIR/YYYY-MM-DD.json.gz``, a new file when the UTC date changes."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._day = ""
        self._file: GzipLines | None = None

    def write(self, line: bytes, now: datetime | None = None) -> None:
        day = (now or datetime.now(UTC)).strftime("%Y-%m-%d")
        if day != self._day or self._file is None:
            self.close()
            self._file = GzipLines(self.directory / f"{day}.json.gz")
            self._day = day
        self._file.write(line)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
