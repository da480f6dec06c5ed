"""How many requests one account may have in flight at once: its plan's ``requests_at_once``.

Without it one key slowed every other account, a free one too: 32 threads of a free key's
costly counts (~0.12 s each) took another account's simple count to p95 2.1 s, and 32 of an
enterprise key's trends with two 1,000-value facets to 9.4 s, on a 2-core machine: the global
in-flight limit (guard.LoadShedding) is shared, so one key could hold all of it. Now a request
past its account's cap waits for room, behind at most as many again and 2 s at most (so a
client's burst, such as the dashboard's panes loading at once, is answered), and past those is
answered 429 at once, with ``Retry-After`` and a message naming the cap, before it takes any of
the global slots. bench/inflight.py prints the other account's p50/p95.

A request counts from when its key is known (its body is in: auth.KeyBeforeBody) until the kernel
has taken its answer (guard.drained: a client that does not read holds its account's room, so the
cap bounds the memory its unread answers hold, and is cut off after the guard's send timeout), on
every host of the backend alike (the main API and the trends host share this count), a heavy
request (lane.heavy: a trends search, or facets of many values) two of the cap, as it costs several
counts' work. The live stream is not counted (a stream is in flight for as long as it is followed;
the stream host has its own cap of streams per key), nor geonet, which takes no key, nor collecting
(``/spyglass/collect``: a role the operator gives, whose posts each wait for their batch's flush; a
fleet of scanners posts at once under one key, and was refused past 4). A request with no key or a
wrong one is left to the app, which answers it. Counted by each worker process, as the global limit
is.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque

from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from spyglass.server.asgibody import send_json
from spyglass.server.auth import Caller, KeyCheck
from spyglass.server.banners.store import StoreUnavailable
from spyglass.server.guard import drained
from spyglass.server.lane import HEAVY_FACET_VALUES, heavy

RETRY_AFTER = b"1"
HEAVY_COST = 2  # of a heavy request (lane.heavy): a trends search reads every month of the index
WAIT = 2.0  # seconds a request past its account's cap may wait for room, behind as many as the cap


def cost(scope: Scope) -> int:
    """How much of its account's cap a request holds."""
    return HEAVY_COST if heavy(scope) else 1


class AccountInFlight:
    """ASGI middleware: at most the plan's ``requests_at_once`` of one account's requests in
    flight (each counting :func:`cost`); past it, as many again wait for room, ``wait`` seconds at
    most (a client's burst, such as a dashboard's panes loading at once, is answered), and past
    those 429 with ``Retry-After`` at once."""

    def __init__(
        self,
        app: ASGIApp,
        keys: KeyCheck,
        exempt: tuple[str, ...] = ("/stream", "/geonet", "/spyglass/collect"),
        wait: float = WAIT,
    ) -> None:
        self.app, self.keys, self.exempt, self.wait = app, keys, exempt, wait
        self.in_flight: Counter[int] = Counter()  # by account
        self._waiting: dict[int, deque[tuple[asyncio.Future[None], int, int]]] = {}  # by account: (room, cost, cap)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.exempt):
            return await self.app(scope, receive, send)
        who = await self._caller(scope)
        if who is None:
            return await self.app(scope, receive, send)
        account, plan, weight = who.account.id, who.account.plan, cost(scope)
        if not await self._take(account, weight, plan.requests_at_once):
            message = (
                f'{{"error":"Too many requests of this account at once: the {plan.name} plan allows'
                f" {plan.requests_at_once} at once (a trends search, or facets of over {HEAVY_FACET_VALUES:,} values,"
                f' counts {HEAVY_COST})"}}'
            )
            await send_json(send, 429, message.encode(), [(b"retry-after", RETRY_AFTER)])
            return
        try:
            await self.app(scope, receive, send)
            await drained(scope)  # an answer the client has not taken yet is still its account's
        finally:
            self._give(account, weight)

    def _fits(self, account: int, weight: int, cap: int) -> bool:
        # one request is let through however heavy, so that a cap below a heavy cost never refuses all
        return not self.in_flight[account] or self.in_flight[account] + weight <= cap

    async def _take(self, account: int, weight: int, cap: int) -> bool:
        """Room for the request now, or within ``wait`` seconds behind at most ``cap`` others of
        the account (first come first served); False past those."""
        waiting = self._waiting.get(account)
        if not waiting and self._fits(account, weight, cap):
            self.in_flight[account] += weight
            return True
        waiting = self._waiting.setdefault(account, deque())
        if len(waiting) >= cap:
            return False
        entry = (asyncio.get_running_loop().create_future(), weight, cap)
        waiting.append(entry)
        try:
            await asyncio.wait((entry[0],), timeout=self.wait)
        except BaseException:  # cancelled while waiting (the server stopping)
            if entry[0].done():
                self._give(account, weight)  # room handed over that will not be used
            else:
                self._drop(account, entry)
            raise
        if not entry[0].done():
            self._drop(account, entry)
            return False
        return True

    def _drop(self, account: int, entry: tuple[asyncio.Future[None], int, int]) -> None:
        entry[0].cancel()
        waiting = self._waiting[account]
        waiting.remove(entry)
        if not waiting:
            del self._waiting[account]
        else:
            self._hand_on(account)

    def _give(self, account: int, weight: int) -> None:
        self.in_flight[account] -= weight
        self._hand_on(account)

    def _hand_on(self, account: int) -> None:
        """The room there is, to the account's first waiting requests that fit."""
        waiting = self._waiting.get(account)
        while waiting and self._fits(account, waiting[0][1], waiting[0][2]):
            future, weight, _ = waiting.popleft()
            self.in_flight[account] += weight
            future.set_result(None)
        if waiting is not None and not waiting:
            del self._waiting[account]
        if self.in_flight[account] <= 0:
            del self.in_flight[account]

    async def _caller(self, scope: Scope) -> Caller | None:
        """The caller, as KeyBeforeBody found it or from the query's key; None if none is known."""
        state = scope.setdefault("state", {})
        if (who := state.get("caller")) is not None:
            return who
        key = QueryParams(scope["query_string"]).get("key")
        if not key:
            return None
        try:
            who = await self.keys.lookup(key)
        except StoreUnavailable:
            return None  # the app answers 503
        if who is not None:
            state["caller"] = who  # the app's `caller` takes it as it is
        return who
