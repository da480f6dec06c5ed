"""Answers a client does not read (issue 44c, M2): they count toward their account's requests at
once until the kernel has taken them, and a client that takes nothing is cut off; malformed HTTP
framing is answered with a JSON error (m3). uvicorn in a thread, on loopback, raw sockets."""

from __future__ import annotations

import socket
import time
from types import SimpleNamespace

import httpx

from spyglass.server.guard import Limits, guarded_protocol
from spyglass.server.inflight import AccountInFlight
from spyglass.server.plans import PLANS
from tests.contract.test_guard import wait_for
from tests.servers import ThreadedServer

BIG = b"x" * (8 << 20)  # far more than loopback's socket buffers take from a client that reads nothing


class Keys:
    async def lookup(self, key: str) -> SimpleNamespace:
        return SimpleNamespace(key=key, account=SimpleNamespace(id=hash(key), plan=PLANS["free"]))


async def big(scope, receive, send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(BIG)).encode())]})
    await send({"type": "http.response.body", "body": BIG})  # in one message, as a JSON answer is


def server(send_timeout: float, max_unsent: int = Limits.max_unsent) -> ThreadedServer:
    app = AccountInFlight(big, keys=Keys(), wait=0.2)  # type: ignore[arg-type]
    return ThreadedServer(app, http=guarded_protocol(Limits(send_timeout=send_timeout, max_unsent=max_unsent)))


def unread(url: str, key: str) -> socket.socket:
    """A request for the big answer, on a connection with a tiny receive buffer that never reads."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)  # before connecting: the window it offers
    sock.connect((host, int(port)))
    sock.sendall(f"GET /big?key={key} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return sock


def test_unread_answers_hold_their_account_s_room_and_no_other():
    with server(send_timeout=60) as running:
        app: AccountInFlight = running.server.config.app
        held = [unread(running.url, "greedy") for _ in range(PLANS["free"].requests_at_once)]
        try:
            assert wait_for(lambda: app.in_flight.get(hash("greedy")) == 2)
            time.sleep(0.3)  # a written answer would have given its room back by now
            assert app.in_flight[hash("greedy")] == 2
            refused = httpx.get(running.url + "/big", params={"key": "greedy"}, timeout=10)
            other = httpx.get(running.url + "/big", params={"key": "other"}, timeout=10)
        finally:
            for sock in held:
                sock.close()
        assert refused.status_code == 429 and "free plan allows 2 at once" in refused.json()["error"]
        assert other.status_code == 200 and len(other.content) == len(BIG)
        assert wait_for(lambda: not app.in_flight)  # closed by the client: the room is given back


def test_a_client_that_takes_nothing_is_cut_off_and_its_room_given_back():
    with server(send_timeout=0.5) as running:
        app: AccountInFlight = running.server.config.app
        sock = unread(running.url, "greedy")
        with sock:
            assert wait_for(lambda: app.in_flight.get(hash("greedy")) == 1)
            assert wait_for(lambda: not app.in_flight)
            sock.settimeout(10)
            got = 0
            try:
                while chunk := sock.recv(1 << 16):
                    got += len(chunk)
            except ConnectionResetError:
                pass
        assert got < len(BIG)  # cut off, the rest of its answer dropped


def test_past_the_bytes_held_for_all_accounts_the_longest_unread_is_cut_off():
    with server(send_timeout=60, max_unsent=len(BIG)) as running:
        app: AccountInFlight = running.server.config.app
        first = unread(running.url, "one")
        assert wait_for(lambda: app.in_flight.get(hash("one")) == 1)
        second = unread(running.url, "two")
        with first, second:
            assert wait_for(lambda: app.in_flight.get(hash("two")) == 1)
            assert wait_for(lambda: hash("one") not in app.in_flight)  # cut off to make room
            time.sleep(0.3)
            assert app.in_flight[hash("two")] == 1  # the one that came after is held


def test_malformed_framing_is_a_json_400():
    with server(send_timeout=60) as running:
        host, port = running.url.removeprefix("http://").split(":")
        for head in (b"Content-Length: -5\r\n", b"Content-Length: 1\r\nContent-Length: 2\r\n"):
            with socket.create_connection((host, int(port)), timeout=10) as sock:
                sock.sendall(b"POST /big HTTP/1.1\r\nHost: x\r\n" + head + b"\r\nx")
                answer = b""
                while chunk := sock.recv(4096):
                    answer += chunk
            status, _, rest = answer.partition(b"\r\n")
            headers, _, body = rest.partition(b"\r\n\r\n")
            assert status == b"HTTP/1.1 400 Bad Request"
            assert b"content-type: application/json" in headers
            assert httpx.Response(400, content=body).json()["error"].startswith("Invalid HTTP request")
