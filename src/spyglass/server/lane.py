"""Heavy requests take turns server-wide: at most ``Limits.heavy`` of them run at once.

A trends request with twenty 1,000-value facets is 0.5-1 s of a core and an answer of up to 2 MB;
the per-account cap (inflight.py) bounds how many one account runs, not how many accounts run
them: 4 threads of each of two enterprise keys took another account's simple count to p95 1.5 s
on a 2-core machine. So a heavy request (any trends search, or facets asking for more than
HEAVY_FACET_VALUES values in all) waits for a turn, behind at most ``queue`` others and ``wait``
seconds at most, and past those is answered 503 with ``Retry-After`` and a message naming the
limit. Light requests never wait here. Turns are taken after the account's cap (an account past
it takes none) and before the global in-flight limit (a heavy request waiting holds none of its
slots), and given back once the app has answered, its work done. bench/abuse.py prints another
account's p50/p95 under trends from two accounts. Counted by each worker process.
"""

from __future__ import annotations

from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from spyglass.query import parse_facets
from spyglass.server.asgibody import send_json
from spyglass.server.guard import LoadShedding

HEAVY_PATHS = ("/trends/api/v1/search",)  # every month of the index (its filters and facets lists are light)
HEAVY_FACET_VALUES = 1000  # facet values a request asks for in all, past which it is heavy
MOST_FACETS = 32  # above every plan's facets a request: more are not parsed here
LANE_WAIT = 5.0  # seconds a heavy request may wait for its turn
RETRY_AFTER = b"2"
HEAVY_KEY = "spyglass.heavy"  # the scope's note of heavy()'s answer


def heavy(scope: Scope) -> bool:
    """Whether a request is heavy: a trends search, or facets of many values (read from its query,
    without the plan's caps, which the app applies). Decided once a request: the account's cap
    (inflight.py) asks too, and its query is parsed here only once."""
    if (known := scope.get(HEAVY_KEY)) is None:
        known = scope[HEAVY_KEY] = _heavy(scope)
    return known


def _heavy(scope: Scope) -> bool:
    if scope["path"] in HEAVY_PATHS:
        return True
    spec = QueryParams(scope["query_string"]).get("facets")
    if not spec or spec.count(",") >= MOST_FACETS:  # (more than any plan allows: the app says 400)
        return False
    try:
        return sum(f.size for f in parse_facets(spec)) > HEAVY_FACET_VALUES
    except ValueError:  # the app answers 400
        return False


class HeavyLane(LoadShedding):
    """ASGI middleware: at most ``limit`` heavy requests (:func:`heavy`) running at once; past it
    they wait their turn as LoadShedding's requests wait for a slot, and past the queue or the wait,
    503 naming the limit. Others pass straight through."""

    def __init__(self, app: ASGIApp, limit: int, queue: int | None = None, wait: float = LANE_WAIT) -> None:
        super().__init__(app, limit, exempt=(), queue=4 * limit if queue is None else queue, wait=wait)
        self.busy = (
            f'{{"error":"The server is busy with heavy requests (trends, or facets of over {HEAVY_FACET_VALUES:,}'
            f' values in all): it runs {limit} at once for all accounts; try again in a few seconds"}}'
        ).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not heavy(scope):
            return await self.app(scope, receive, send)
        if not await self._take():
            await send_json(send, 503, self.busy, [(b"retry-after", RETRY_AFTER)])
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._give()
