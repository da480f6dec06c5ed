"""Heavy requests take turns server-wide: at most ``Limits.heavy`` of them run at once.

A trends request with twenty 1,000-value facets is 0.5-1 s of a core and an answer of up to 2 MB;
the per-account cap (inflight.py) bounds how many one account runs, not how many accounts run
them: 4 threads of each of two enterprise keys took another account's simple count to p95 1.5 s
on a 2-core machine. So a heavy request (any trends search, facets asking for more than
HEAVY_FACET_VALUES values in all, a count or search of over HEAVY_QUERY_VALUES words and values)
waits for a turn, behind at most ``queue`` others and ``wait`` seconds at most, and past those is
answered 503 with ``Retry-After`` and a message naming the limit. Light requests never wait here.
Turns are taken after the account's cap (an account past it takes none) and before the global
in-flight limit (a heavy request waiting holds none of its slots), and given back once the app has
answered, its work done. bench/abuse.py prints another account's p50/p95 under trends from two
accounts. Counted by each worker process.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque

from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from spyglass.query import parse, parse_facets
from spyglass.server.asgibody import send_json
from spyglass.server.guard import LoadShedding

HEAVY_PATHS = ("/trends/api/v1/search",)  # every month of the index (its filters and facets lists are light)
HEAVY_FACET_VALUES = 1000  # facet values a request asks for in all, past which it is heavy
# Words and filter values of a search's query past which it is heavy: a count of 240 negated
# networks is 110 ms of a core against 7 for port:22, and 20 free accounts asking for it at once
# took another account's p95 to 1.04 s (attacker trial 7). An analyst's query holds a few.
HEAVY_QUERY_VALUES = 50
QUERY_PATHS = ("host/count", "host/search")  # under the namespace (settings.namespace)
MOST_FACETS = 32  # above every plan's facets a request: more are not parsed here
LANE_WAIT = 5.0  # seconds a heavy request may wait for its turn
RETRY_AFTER = b"2"
HEAVY_KEY = "spyglass.heavy"  # the scope's note of heavy()'s answer


def heavy(scope: Scope) -> bool:
    """Whether a request is heavy: a trends search, facets of many values, or a search of many
    query values (read from its query, without the plan's caps, which the app applies). Decided
    once a request: the account's cap (inflight.py) asks too, and its query is parsed here once."""
    if (known := scope.get(HEAVY_KEY)) is None:
        known = scope[HEAVY_KEY] = _heavy(scope)
    return known


def _heavy(scope: Scope) -> bool:
    if scope["path"] in HEAVY_PATHS:
        return True
    params = QueryParams(scope["query_string"])
    if scope["path"].split("/", 2)[-1] in QUERY_PATHS and _query_values(params.get("query") or "") > HEAVY_QUERY_VALUES:
        return True
    spec = params.get("facets")
    if not spec or spec.count(",") >= MOST_FACETS:  # (more than any plan allows: the app says 400)
        return False
    try:
        return sum(f.size for f in parse_facets(spec)) > HEAVY_FACET_VALUES
    except ValueError:  # the app answers 400
        return False


def _query_values(source: str) -> int:
    """Words, phrases and filter values of a query (a value takes two characters at least, with
    its separator: a shorter query is not parsed here)."""
    if len(source) <= 2 * HEAVY_QUERY_VALUES:
        return 0
    query = parse(source)
    return len(query.texts) + sum(len(f.values) for f in query.filters)


def refused_at_once(scope: Scope, enterprise: bool) -> bool:
    """Whether the app refuses a heavy request at once, with no work: a trends search of a plan
    without trends (403), or a query with errors (400). Such requests took turns, and three
    accounts' filled the queue: another's own trends search was answered 503 (attacker trial)."""
    if scope["path"] not in HEAVY_PATHS:
        return False
    return not enterprise or bool(parse(QueryParams(scope["query_string"]).get("query") or "").errors)


class HeavyLane(LoadShedding):
    """ASGI middleware: at most ``limit`` heavy requests (:func:`heavy`) running at once; past it
    they wait their turn, and past the queue or the wait, 503 naming the limit. Others pass
    straight through, as do requests of no known caller (the app answers them 401 at once).

    Turns are fair between accounts: a freed turn goes to the waiting account with the fewest heavy
    requests running, among equals the one given a turn longest ago; one account waits in at most
    half the queue, and one with none running or waiting may always wait (the queue past its size).
    A request the app refuses at once (:func:`refused_at_once`) takes no turn. First come first
    served let one account's two requests at a time hold every turn: another account's one trends
    search waited behind both, p95 0.99-1.57 s (attacker trial)."""

    def __init__(self, app: ASGIApp, limit: int, queue: int | None = None, wait: float = LANE_WAIT) -> None:
        super().__init__(app, limit, exempt=(), queue=4 * limit if queue is None else queue, wait=wait)
        self.busy = (
            f'{{"error":"The server is busy with heavy requests (trends, facets of over {HEAVY_FACET_VALUES:,}'
            f" values in all, or queries of over {HEAVY_QUERY_VALUES} words and filter values): it runs {limit}"
            ' at once for all accounts; try again in a few seconds"}'
        ).encode()
        self.running: Counter[int] = Counter()  # by account
        self.queued: dict[int, deque[asyncio.Future[None]]] = {}  # by account
        self.turns = 0  # turns given so far
        self.last_turn: dict[int, int] = {}  # by account running or waiting: when it was last given one

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        who = scope.get("state", {}).get("caller") if scope["type"] == "http" else None
        if who is None or not heavy(scope) or refused_at_once(scope, who.account.plan.enterprise):
            return await self.app(scope, receive, send)
        account = who.account.id
        if not await self._turn(account):
            await send_json(send, 503, self.busy, [(b"retry-after", RETRY_AFTER)])
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._done(account)

    async def _turn(self, account: int) -> bool:
        """A turn now, or within ``wait`` seconds; False when the account's part of the queue is
        full or the wait is over."""
        if self.in_flight < self.limit and not self.queued:
            self.in_flight += 1
            self._give_turn(account)
            return True
        mine = self.queued.setdefault(account, deque())
        first = not mine and account not in self.running  # an account's first always waits its turn
        if not first and (len(mine) >= max(1, self.queue // 2) or sum(map(len, self.queued.values())) >= self.queue):
            self._forget(account)
            return False
        waiter = asyncio.get_running_loop().create_future()
        mine.append(waiter)
        try:
            await asyncio.wait((waiter,), timeout=self.wait)
        except BaseException:  # cancelled while waiting (the server stopping)
            if waiter.done():
                self._done(account)  # a turn handed over that will not be used
            else:
                mine.remove(waiter)
                self._forget(account)
            raise
        if not waiter.done():  # the wait is over: out of the queue
            mine.remove(waiter)
            self._forget(account)
            return False
        return True

    def _give_turn(self, account: int) -> None:
        self.running[account] += 1
        self.turns += 1
        self.last_turn[account] = self.turns

    def _forget(self, account: int) -> None:
        if not self.queued.get(account, True):
            del self.queued[account]
        if account not in self.queued and account not in self.running:
            self.last_turn.pop(account, None)

    def _done(self, account: int) -> None:
        """A turn given back: to the waiting account with the fewest running (among equals, the one
        given a turn longest ago), else freed."""
        self.running[account] -= 1
        if self.running[account] <= 0:
            del self.running[account]
        self._forget(account)
        while self.queued:
            chosen = min(self.queued, key=lambda a: (self.running[a], self.last_turn.get(a, 0)))
            waiting = self.queued[chosen]
            waiter = waiting.popleft()
            if not waiting:
                del self.queued[chosen]
            if not waiter.done():
                self._give_turn(chosen)
                waiter.set_result(None)  # the turn passes to it: in_flight stays
                return
        self.in_flight -= 1
