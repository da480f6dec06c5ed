"""One at a time per key, waiting on the event loop: the writes of one account that count against
its plan (alerts' addresses) are made one after another in a process.

Each is checked and written in one transaction, which serializes them anyway (SQLite's write
lock, PostgreSQL's advisory lock per account). Without this gate 48 creates of one account each
held a server thread, and on PostgreSQL a pooled connection, while they waited their turn: every
other account's requests waited for a thread or a connection (p95 3.5-5 s in bench/abuse.py).
Waiting here holds neither."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

_gates: dict[tuple[int, Hashable], tuple[asyncio.Lock, int]] = {}  # (loop, key): (lock, holders and waiters)


@asynccontextmanager
async def one_at_a_time(key: Hashable) -> AsyncIterator[None]:
    """Enter when no other holder of ``key`` (in this process and event loop) is inside."""
    name = (id(asyncio.get_running_loop()), key)  # a lock belongs to one loop; tests run several
    lock, users = _gates.get(name, (None, 0))
    if lock is None:
        lock = asyncio.Lock()
    _gates[name] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        lock, users = _gates[name]
        if users == 1:
            del _gates[name]
        else:
            _gates[name] = (lock, users - 1)
