"""Work a search hands to another thread while it goes on, when it is the only search running in
its process: tantivy's search and aggregations let go of the GIL, so one request then uses every
core. With other searches running the cores are busy already, and handing over adds thread
switches for nothing (bench/workers.py's searches with 2 workers and 32 clients gave the same
rate, within its noise, with every search handing over as with lone ones only)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache
from typing import TypeVar

T = TypeVar("T")
S = TypeVar("S")

_running = [0]  # searches running in this process
_running_lock = threading.Lock()


@contextmanager
def searching() -> Iterator[bool]:
    """For the length of a search: whether it is the only one running in this process."""
    with _running_lock:
        _running[0] += 1
        alone = _running[0] == 1
    try:
        yield alone
    finally:
        with _running_lock:
            _running[0] -= 1


def aside(alone: bool, fn: Callable[..., T], *args: object) -> Future[T]:
    """``fn(*args)`` in another thread when ``alone``, else here and now: its future either way."""
    if alone:
        return _pool().submit(fn, *args)
    done: Future[T] = Future()
    done.set_result(fn(*args))
    return done


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(os.cpu_count() or 2, thread_name_prefix="aside")


def each(alone: bool, fn: Callable[[S], T], items: list[S]) -> list[T]:
    """``fn`` of each item (an index shard): in other threads at once when the search is ``alone``
    and there is more than one, else here, in turn. Their own pool: its tasks never wait on one."""
    if alone and len(items) > 1:
        return list(_shards_pool().map(fn, items))
    return [fn(item) for item in items]


@cache
def _shards_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(os.cpu_count() or 2, thread_name_prefix="shards")
