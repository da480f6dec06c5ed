"""How many requests one account may have in flight at once: its plan's ``requests_at_once``.

Without it one key slowed every other account, a free one too: 32 threads of a free key's
costly counts (~0.12 s each) took another account's simple count to p95 2.1 s, and 32 of an
enterprise key's trends with two 1,000-value facets to 9.4 s, on a 2-core machine: the global
in-flight limit (guard.LoadShedding) is shared, so one key could hold all of it. Now a request
past its account's cap is answered 429 at once, with ``Retry-After`` and a message naming the cap,
before it takes one of the global slots; bench/inflight.py prints the other account's p50/p95.

A request counts from when its key is known (its body is in: auth.KeyBeforeBody) to its answer's
end, on every host of the backend alike (the main API and the trends host share this count), a
trends request two of the cap, as it costs several counts' work. The live stream is not counted
(a stream is in flight for as long as it is followed; the stream host has its own cap of streams
per key), nor geonet, which takes no key. A request with no key or a wrong one is left to the
app, which answers it. Counted by each worker process, as the global limit is.
"""

from __future__ import annotations

from collections import Counter

from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from spyglass.server.asgibody import send_json
from spyglass.server.auth import Caller, KeyCheck
from spyglass.server.banners.store import StoreUnavailable

RETRY_AFTER = b"1"
HEAVY = ("/trends/",)  # paths whose requests count 2: trends reads every month of the index
HEAVY_COST = 2


def cost(scope: Scope) -> int:
    """How much of its account's cap a request holds."""
    return HEAVY_COST if scope["path"].startswith(HEAVY) else 1


class AccountInFlight:
    """ASGI middleware: at most the plan's ``requests_at_once`` of one account's requests in
    flight (each counting :func:`cost`); past it, 429 with ``Retry-After`` at once."""

    def __init__(self, app: ASGIApp, keys: KeyCheck, exempt: tuple[str, ...] = ("/stream", "/geonet")) -> None:
        self.app, self.keys, self.exempt = app, keys, exempt
        self.in_flight: Counter[int] = Counter()  # by account

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.exempt):
            return await self.app(scope, receive, send)
        who = await self._caller(scope)
        if who is None:
            return await self.app(scope, receive, send)
        account, plan, weight = who.account.id, who.account.plan, cost(scope)
        # one request is let through however heavy, so that a cap below a heavy cost never refuses all
        if self.in_flight[account] and self.in_flight[account] + weight > plan.requests_at_once:
            message = (
                f'{{"error":"Too many requests of this account at once: the {plan.name} plan allows'
                f' {plan.requests_at_once} at once (a trends request counts {HEAVY_COST})"}}'
            )
            await send_json(send, 429, message.encode(), [(b"retry-after", RETRY_AFTER)])
            return
        self.in_flight[account] += weight
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight[account] -= weight
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
