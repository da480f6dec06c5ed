"""Heap memory handed back to the system once freed.

glibc keeps what a thread frees in that thread's arena for the next allocation: a burst of 24
costly counts (each building its automata in its own thread) left the server much larger for
good (bench/query_flood.py). A trim after each burst gives it back. And a backend collecting
(each flush a tantivy writer, with threads of its own) spread its heap over a new arena after
another: ARENAS keeps them few.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

TRIM_AFTER = 2.0  # seconds: under load one trim a period, none when idle
# glibc's arenas (its default: 8 a core). `serve --demo --demo-rate 50` under a light client load
# (bench/memory.py): flat with 2, larger and rising with the default.
ARENAS = 2
_M_ARENA_MAX = -8  # mallopt's parameter (malloc.h)

_due = threading.Event()
_start = threading.Lock()
_trimmer: threading.Thread | None = None


def give_back_memory() -> None:
    """Hand freed heap pages back to the system now."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


def limit_arenas(arenas: int = ARENAS) -> None:
    """At most ``arenas`` glibc heaps from now on, unless MALLOC_ARENA_MAX says otherwise: call it
    first thing in a serving process."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    try:
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, arenas)
    except (OSError, AttributeError):  # not glibc
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
