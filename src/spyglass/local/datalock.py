"""One backend per data directory: the backend that serves a data dir holds a lock on
``backend.lock`` in it, with the URL it answers at and the namespace of its paths. A second
``serve`` on the same data refuses to start, and a second dashboard (or a CLI command) finds that
URL and attaches to the running backend, in its namespace, instead of starting another on the same
files."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO

LOCK_FILE = "backend.lock"


@dataclass(frozen=True)
class Holder:
    """The backend that serves a data dir: where it answers, and under which namespace."""

    url: str
    namespace: str | None  # None: a lock written before the namespace was kept in it


class DataDirBusy(RuntimeError):
    """Another backend serves this data directory."""


def served_by(data_dir: Path) -> Holder | None:
    """The backend that holds ``data_dir``, or None when none does."""
    try:
        lock = open(Path(data_dir) / LOCK_FILE, "rb")  # noqa: SIM115 (closed below)
    except OSError:
        return None
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            with contextlib.suppress(ValueError, OSError, AttributeError):
                held = json.loads(lock.read() or b"{}")
                url, namespace = held.get("url"), held.get("namespace")
                if isinstance(url, str) and url.startswith("http"):
                    return Holder(url, namespace if isinstance(namespace, str) and namespace else None)
            return None
        fcntl.flock(lock, fcntl.LOCK_UN)
    return None


def hold(data_dir: Path, url: str, namespace: str) -> IO[bytes]:
    """Take ``data_dir`` for this process, saying ``url`` is where it answers under ``namespace``;
    keep what this returns open while serving (the lock goes with the process). :class:`DataDirBusy`
    if held."""
    path = Path(data_dir) / LOCK_FILE
    lock = open(path, "a+b")  # noqa: SIM115 (held for the process's life)
    os.chmod(path, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        holder = served_by(data_dir)
        where = holder.url if holder else "an unknown URL"
        raise DataDirBusy(f"{data_dir} is served already, by the backend at {where}") from None
    lock.truncate(0)
    lock.write(json.dumps({"url": url, "namespace": namespace, "pid": os.getpid()}).encode())
    lock.flush()
    return lock
