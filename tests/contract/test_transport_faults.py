"""Faults a client meets: rate limits, gateway pages, timeouts, refused and dropped connections,
bodies that are not JSON. A small faulty server on loopback produces them for real; a mock
transport stands in only for a connection dropped mid-response."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import select
import socket
import threading

import httpx
import pytest
from fastapi import APIRouter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Route

from spyglass.client import (
    Clients,
    ConnectFailed,
    ConnectionDropped,
    NoCredits,
    RateLimited,
    RequestTimeout,
    ResponseFormatError,
    RetryPolicy,
    ServerError,
    Transport,
)
from spyglass.server.deps import Charge
from tests.conftest import start_backend
from tests.servers import ThreadedServer

SECRET = "s3cr3t-key-0123456789"
FAST = RetryPolicy(attempts=3, base=0.01, cap=0.05)


def faulty_app() -> Starlette:
    hits: dict[str, int] = {}

    def count(request: Request) -> int:
        hits[request.url.path] = hits.get(request.url.path, 0) + 1
        return hits[request.url.path]

    async def once_429(request: Request):
        if count(request) == 1:
            return JSONResponse({"error": "Rate limit reached"}, 429, headers={"Retry-After": "1"})
        return JSONResponse({"ok": True})

    async def always_429(request: Request):
        count(request)
        return JSONResponse({"error": "slow down"}, 429, headers={"Retry-After": "0"})

    async def gateway(request: Request):
        count(request)
        page = "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
        return HTMLResponse(page, 502)

    async def slow(request: Request):
        count(request)
        await asyncio.sleep(3)
        return JSONResponse({"late": True})

    async def not_json(request: Request):
        return PlainTextResponse("{this is not json", 200)

    async def echo_error(request: Request):
        return JSONResponse({"error": f"bad key {request.query_params.get('key')}"}, 500)

    async def hits_of(request: Request):
        return JSONResponse(hits.get("/" + request.path_params["name"], 0))

    return Starlette(
        routes=[
            Route("/once429", once_429),
            Route("/always429", always_429),
            Route("/gateway", gateway, methods=["GET", "POST"]),
            Route("/slow", slow),
            Route("/notjson", not_json),
            Route("/echo-error", echo_error),
            Route("/hits/{name}", hits_of),
        ]
    )


@pytest.fixture(scope="module")
def faulty():
    with ThreadedServer(faulty_app()) as server:
        yield server.url


def transport(url: str, **kw) -> Transport:
    return Transport(url, SECRET, retry=kw.pop("retry", FAST), **kw)


async def hits(url: str, name: str) -> int:
    return httpx.get(f"{url}/hits/{name}").json()


async def test_429_is_retried_after_retry_after(faulty):
    t = transport(faulty)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await t.request("GET", "/once429") == {"ok": True}
    assert loop.time() - started >= 0.9  # honoured the server's Retry-After: 1
    await t.aclose()


async def test_429_gives_up_with_rate_limited(faulty):
    t = transport(faulty)
    with pytest.raises(RateLimited) as caught:
        await t.request("GET", "/always429")
    assert caught.value.retry_after == 0
    assert await hits(faulty, "always429") == FAST.attempts
    await t.aclose()


async def test_html_gateway_page_becomes_readable_error(faulty):
    t = transport(faulty)
    with pytest.raises(ServerError) as caught:
        await t.request("GET", "/gateway")
    assert str(caught.value) == "502 Bad Gateway (HTTP 502)"
    assert t.reachability.reachable is True  # an error page is still an answer
    await t.aclose()


async def test_call_that_may_spend_credits_is_not_repeated_after_502(faulty):
    t = transport(faulty)
    before = await hits(faulty, "gateway")
    with pytest.raises(ServerError):
        await t.request("POST", "/gateway")
    assert await hits(faulty, "gateway") == before + 1
    await t.aclose()


async def test_timeout(faulty):
    t = transport(faulty, timeout=0.3, retry=RetryPolicy(attempts=1))
    with pytest.raises(RequestTimeout) as caught:
        await t.request("GET", "/slow")
    assert "did not answer within 0.3 s" in str(caught.value)
    await t.aclose()


async def test_malformed_json(faulty):
    t = transport(faulty)
    with pytest.raises(ResponseFormatError) as caught:
        await t.request("GET", "/notjson")
    assert "not JSON" in str(caught.value)
    await t.aclose()


async def test_refused_connection_is_retried_then_reported():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    t = transport(f"http://127.0.0.1:{port}")
    with pytest.raises(ConnectFailed) as caught:
        await t.request("POST", "/intel/scan")  # never sent, so even a credit-spending call retries
    assert f"127.0.0.1:{port}" in str(caught.value)
    assert t.reachability.reachable is False and "Cannot connect" in t.reachability.problem
    await t.aclose()


async def test_dropped_connection_not_repeated_for_unsafe_call():
    calls = []

    def drop(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    t = Transport("http://intel.test", SECRET, retry=FAST, http_transport=httpx.MockTransport(drop))
    with pytest.raises(ConnectionDropped):
        await t.request("GET", "/intel/host/search", idempotent=False)
    assert len(calls) == 1
    with pytest.raises(ConnectionDropped):
        await t.request("GET", "/api-info")
    assert len(calls) == 1 + FAST.attempts
    await t.aclose()


class ClosesReusedConnections:
    """A loopback HTTP server that answers the first request on each connection (keep-alive) and
    closes the connection at the next one without reading or answering it: what a client meets when
    its request goes out on a pooled connection the server is closing as idle."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.answered: list[tuple[int, str]] = []  # (connection number, request line)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        number = 0
        with contextlib.suppress(OSError):  # the listening socket closed: the test is over
            while True:
                conn, _ = self.sock.accept()
                number += 1
                with conn:
                    head = b""
                    while b"\r\n\r\n" not in head and (chunk := conn.recv(65536)):
                        head += chunk
                    self.answered.append((number, head.split(b"\r\n")[0].decode()))
                    body = b'{"ok": true}'
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
                    conn.sendall(b"content-length: %d\r\n\r\n%s" % (len(body), body))
                    select.select([conn], [], [])  # the next request: closed unread and unanswered

    def close(self) -> None:
        self.sock.close()


async def test_request_on_a_reused_connection_the_server_closed_goes_again_on_a_new_one():
    server = ClosesReusedConnections()
    t = transport(server.url, retry=RetryPolicy(attempts=1))  # no retry but this one
    try:
        assert await t.request("GET", "/intel/host/search", idempotent=False) == {"ok": True}
        # Even a call that spends credits: the server closed the connection without acting on it.
        assert await t.request("POST", "/intel/scan", json={"ips": "1.2.3.4"}) == {"ok": True}
        assert [number for number, _ in server.answered] == [1, 2]
        assert server.answered[1][1].startswith("POST /intel/scan")
        assert t.reachability.reachable is True
    finally:
        await t.aclose()
        server.close()


async def test_a_call_after_the_server_closed_its_idle_connection_succeeds():
    with ThreadedServer(faulty_app(), timeout_keep_alive=0.2) as server:  # uvicorn's is 5 s
        t = transport(server.url, retry=RetryPolicy(attempts=1))  # no retry but a new connection's
        try:
            assert await t.request("GET", "/hits/search", idempotent=False) == 0
            connections = server.server.server_state.connections
            deadline = asyncio.get_running_loop().time() + 10
            while connections:  # the server closes the idle connection the client keeps
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.01)
            assert await t.request("GET", "/hits/search", idempotent=False) == 0
            assert t.reachability.reachable is True
        finally:
            await t.aclose()


async def test_key_never_leaks(faulty, caplog):
    caplog.set_level(logging.DEBUG)
    t = transport(faulty)
    with pytest.raises(ServerError) as caught:
        await t.request("GET", "/echo-error")
    assert "bad key" in str(caught.value)
    for text in (str(caught.value), repr(caught.value), repr(t), caplog.text):
        assert SECRET not in text
    assert "/echo-error" in caplog.text  # httpx did log the request, with the key masked
    await t.aclose()


async def test_backend_rate_limit_answers_429_with_retry_after(tmp_path):
    server, backend = start_backend(tmp_path, rate_limit=2.0)
    with server:
        key = backend.key()
        statuses = [httpx.get(f"{backend.url}/tools/myip", params={"key": key}) for _ in range(6)]
        limited = [r for r in statuses if r.status_code == 429]
        assert limited and limited[0].headers["retry-after"].isdigit()
        assert "error" in limited[0].json()
        # The client waits as told and gets through.
        async with Clients.from_profile(backend.profile(key), retry=FAST) as c:
            assert await c.tools.my_ip() == "127.0.0.1"
    backend.store.close()


async def test_exhausted_credits_answer_402(backend):
    router = APIRouter()

    @router.get("/test/spend")
    def spend(charge: Charge) -> dict:
        return {"left": charge(query=1).query_credits}

    backend.app.include_router(router)
    key = backend.key("member")
    backend.store.set_credits(backend.store.account_for_key(key).id, query=1)
    async with Clients.from_profile(backend.profile(key)) as c:
        assert await c.transport.request("GET", "/test/spend") == {"left": 0}
        assert c.credits.query == 0
        with pytest.raises(NoCredits) as caught:
            await c.transport.request("GET", "/test/spend")
    assert "Insufficient query credits" in str(caught.value)
