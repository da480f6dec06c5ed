"""Heap memory handed back to the system once freed.

glibc keeps what a thread frees in that thread's arena for the next allocation: a burst of 24
costly counts (each building its automata in its own thread) left the server 100 MB larger for
good (bench/query_flood.py). A trim after each burst gives it back.
"""

from __future__ import annotations

import ctypes
import threading
import time

TRIM_AFTER = 2.0  # seconds: under load one trim a period, none when idle

_due = threading.Event()
_start = threading.Lock()
_trimmer: threading.Thread | None = None


def give_back_memory() -> None:
    """Hand freed heap pages back to the system now."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


def give_back_soon() -> None:
    """A trim within TRIM_AFTER seconds (after a query: what it freed goes back)."""
    global _trimmer
    _due.set()
    if _trimmer is None:
        with _start:
            if _trimmer is None:
                _trimmer = threading.Thread(target=_trim_when_due, name="spyglass-trim", daemon=True)
                _trimmer.start()


def _trim_when_due() -> None:
    while True:
        _due.wait()
        time.sleep(TRIM_AFTER)
        _due.clear()
        give_back_memory()
