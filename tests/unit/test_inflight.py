"""An account's requests at once (issue 44, M1), on the middleware alone: past the plan's cap as
many again wait for room, and past those a 429 at once; room given back goes to the first waiting."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from spyglass.server.inflight import AccountInFlight
from spyglass.server.plans import PLANS


def caller(account_id: int, plan: str) -> SimpleNamespace:
    return SimpleNamespace(key=f"k{account_id}", account=SimpleNamespace(id=account_id, plan=PLANS[plan]))


async def test_past_the_cap_a_few_wait_and_the_rest_are_refused_at_once():
    gates: dict[str, asyncio.Event] = {}

    async def app(scope, receive, send):
        await gates.setdefault(scope["path"], asyncio.Event()).wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    limited = AccountInFlight(app, keys=None, wait=60)  # type: ignore[arg-type]

    async def request(path: str, who: SimpleNamespace) -> int:
        sent: list[dict] = []

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "path": path, "query_string": b"", "state": {"caller": who}}
        await limited(scope, None, send)  # type: ignore[arg-type]
        return sent[0]["status"]

    free, other = caller(1, "free"), caller(2, "free")
    running = [asyncio.create_task(request(f"/r{n}", free)) for n in range(4)]  # 2 in flight, 2 waiting
    await asyncio.sleep(0)
    assert limited.in_flight[1] == 2 and len(limited._waiting[1]) == 2
    assert await request("/refused", free) == 429  # at once: the queue is full
    gates.setdefault("/other", asyncio.Event()).set()
    assert await request("/other", other) == 200  # another account's are its own
    gates.setdefault("/r0", asyncio.Event()).set()
    assert await running[0] == 200
    await asyncio.sleep(0)
    assert limited.in_flight[1] == 2 and len(limited._waiting[1]) == 1  # its room went to the first waiting
    for n in range(1, 4):
        gates.setdefault(f"/r{n}", asyncio.Event()).set()
    assert await asyncio.gather(*running[1:]) == [200, 200, 200]
    assert not limited.in_flight and not limited._waiting


async def test_a_wait_that_ends_is_a_429_and_a_trends_request_counts_two():
    async def app(scope, receive, send):
        await asyncio.Event().wait()  # never answers

    limited = AccountInFlight(app, keys=None, wait=0.01)  # type: ignore[arg-type]
    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    enterprise = caller(3, "enterprise")  # 4 at once

    def scope(path: str) -> dict:
        return {"type": "http", "path": path, "query_string": b"", "state": {"caller": enterprise}}

    held = [asyncio.create_task(limited(scope("/trends/api/v1/search"), None, send)) for _ in range(2)]
    await asyncio.sleep(0)
    assert limited.in_flight[3] == 4
    await limited(scope("/intel/host/count"), None, send)  # waited, then refused
    assert sent[0]["status"] == 429 and not limited._waiting
    body = sent[1]["body"].decode()
    assert "the enterprise plan allows 4 at once (a trends search, or facets of over 1,000 values, counts 2)" in body
    for task in held:
        task.cancel()
    await asyncio.gather(*held, return_exceptions=True)
    assert not limited.in_flight


async def test_collecting_is_not_counted():
    """A fleet of collectors posts under one key at once, each waiting for its flush."""
    gate = asyncio.Event()

    async def app(scope, receive, send):
        await gate.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    limited = AccountInFlight(app, keys=None, wait=0.01)  # type: ignore[arg-type]
    statuses: list[int] = []

    async def post() -> None:
        async def send(message):
            if message["type"] == "http.response.start":
                statuses.append(message["status"])

        scope = {
            "type": "http",
            "path": "/spyglass/collect",
            "query_string": b"",
            "state": {"caller": caller(1, "free")},
        }
        await limited(scope, None, send)  # type: ignore[arg-type]

    posts = [asyncio.create_task(post()) for _ in range(8)]
    await asyncio.sleep(0.05)  # past the wait: a counted request past the cap would be refused by now
    gate.set()
    await asyncio.gather(*posts)
    assert statuses == [200] * 8 and not limited.in_flight


def test_facets_of_many_values_count_as_a_trends_search_does():
    from spyglass.server.inflight import cost

    def scope(path: str, query: str = "") -> dict:
        return {"type": "http", "path": path, "query_string": query.encode()}

    assert cost(scope("/trends/api/v1/search", "query=port:22")) == 2
    assert cost(scope("/intel/host/count", "query=port:22&facets=ip:1000,org:1000")) == 2
    assert cost(scope("/intel/host/count", "query=port:22&facets=org:100")) == 1
    assert cost(scope("/trends/api/v1/search/facets")) == 1  # a list of names
