"""One backend per data directory: the backend that serves a data dir holds a lock on
``backend.lock`` in it, with the URL it answers at. A second ``serve`` on the same data refuses to
start, and a second dashboard finds that URL and attaches to the running backend instead of
starting another on the same files."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import IO

LOCK_FILE = "backend.lock"


class DataDirBusy(RuntimeError):
    """Another backend serves this data directory."""


def served_by(data_dir: Path) -> str | None:
    """The URL of the backend that holds ``data_dir``, or None when none does."""
    try:
        lock = open(Path(data_dir) / LOCK_FILE, "rb")  # noqa: SIM115 (closed below)
    except OSError:
        return None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            with contextlib.suppress(ValueError, OSError):
                url = json.loads(lock.read() or b"{}").get("url")
                return url if isinstance(url, str) and url.startswith("http") else None
            return None
        fcntl.flock(lock, fcntl.LOCK_UN)
    return None


def hold(data_dir: Path, url: str) -> IO[bytes]:
    """Take ``data_dir`` for this process, saying ``url`` is where it answers; keep what this
    returns open while serving (the lock goes with the process). :class:`DataDirBusy` if held."""
    path = Path(data_dir) / LOCK_FILE
    lock = open(path, "a+b")  # noqa: SIM115 (held for the process's life)
    os.chmod(path, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise DataDirBusy(
            f"{data_dir} is served already, by the backend at {served_by(data_dir) or 'an unknown URL'}"
        ) from None
    lock.truncate(0)
    lock.write(json.dumps({"url": url, "pid": os.getpid()}).encode())
    lock.flush()
    return lock
