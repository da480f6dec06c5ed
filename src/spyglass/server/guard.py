"""What keeps idle sockets, slow senders and floods from locking everyone out of the backend.

- A connection must send a whole request head within ``request_timeout`` of opening (or of its
  last response, on keep-alive) and the whole body within ``body_timeout`` of its head; else it
  is closed. (uvicorn only times out keep-alive connections that send nothing.)
- At most ``max_connections`` connections are open, below the process's descriptor limit so that
  accepting never fails for lack of one: past it, the connection that has waited longest without a
  request in progress is closed to make room, and when every connection is busy the newcomer is
  answered 503 with ``Retry-After``.
- At most ``max_in_flight`` requests are answered at once (the live stream's readers aside, which
  have their own cap per key): past it, as many again wait for a slot, 2 s at most, and past
  those, 503 with ``Retry-After`` at once rather than a queue whose wait grows with the load. A
  request counts once its whole body is in (auth.KeyBeforeBody
  receives it first): a slow sender holds its connection, never a slot.
- A response counts as sent once the kernel has taken its body, not once it is written to the
  connection's buffer (uvicorn waits for a paused connection only before writing, so an app that
  writes a large body in one message returned at once, the body held by us): :func:`drained` waits
  for it, and a client that takes nothing for ``send_timeout`` is cut off. AccountInFlight waits
  so, so that an account's requests at once bound its unread responses; past ``max_unsent`` bytes
  of them, all accounts together, the clients that have waited longest are cut off.
- A request whose HTTP framing is malformed is answered 400 with a JSON error, as every error is;
  one whose head passes ``HEAD_LIMIT`` before it ends, 431. (h11 alone cut off at 16 KiB only the
  heads that arrived in pieces: a 40 KB query was answered or reset by how the network split it.)
- Accept errors (out of descriptors) are logged once a minute with a count, not once each.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import resource
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

import h11
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from spyglass.server.asgibody import send_json

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})  # what only reads
RESERVED_DESCRIPTORS = 256  # kept for the index, the databases and logs
RETRY_AFTER = "1"
HEAD_LIMIT = 64 << 10  # bytes of a request's line and headers (uvicorn.Config(h11_max_incomplete_event_size))
RECEIVING = 64 << 20  # bytes of request bodies held at once, at most (Limits.receiving)
DRAINED = "spyglass.drained"  # the scope's extension: await it for the answer to be taken (drained())
QUEUE_WAIT = 2.0  # seconds a request past the in-flight limit may wait for a slot before a 503
BUSY_BODY = b'{"error":"The server is busy: try again in a second."}'
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: " + RETRY_AFTER.encode()
    + b"\r\nconnection: close\r\ncontent-length: " + str(len(BUSY_BODY)).encode() + b"\r\n\r\n" + BUSY_BODY
)  # fmt: skip


@dataclass(frozen=True)
class Limits:
    request_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int | None = None  # None: the descriptor limit less RESERVED_DESCRIPTORS, at most 4,096
    max_in_flight: int = 64
    send_timeout: float = 30.0  # seconds a client may take nothing of a response before it is cut off
    heavy_at_once: int | None = None  # heavy requests running at once (lane.py); None: half the cores, at least 1
    max_receiving: int | None = None  # bytes of request bodies held at once (auth.KeyBeforeBody); None: see receiving()
    max_unsent: int = 256 << 20  # bytes of answers held for clients not taking them, past it the slowest are cut
    workers: int = 1  # processes serving (serve --workers): the machine's share above is split among them

    def connections(self) -> int:
        if self.max_connections is not None:
            return self.max_connections
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return max(16, min(4096, soft - RESERVED_DESCRIPTORS))

    def receiving(self) -> int:
        """A process's bytes of bodies at once: 4 bodies of 16 MiB, or a 64th of the machine's memory
        where that is less, for all workers together (KeyBeforeBody lets one body in whatever it is)."""
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        return self.max_receiving or min(RECEIVING, memory // 64) // self.workers

    def heavy(self) -> int:
        """A process's heavy requests at once: half the cores for all workers together, at least 1
        each (a core is left for the event loop and the light requests of every other account)."""
        return self.heavy_at_once or max(1, len(os.sched_getaffinity(0)) // 2 // self.workers)


def _head_too_long(conn: h11.Connection, data: bytes) -> bool:
    """Whether the request head begun (or beginning) in ``data`` passes HEAD_LIMIT: h11 tells only
    of a head still unfinished past it, so one that arrived whole was read (a 66 KB one was 200)."""
    held = len(getattr(conn, "_receive_buffer", b""))  # (h11's, O(1); absent: as if empty)
    if held + len(data) <= HEAD_LIMIT:
        return False
    head = (conn.trailing_data[0] + data)[: HEAD_LIMIT + 4]
    return b"\r\n\r\n" not in head


def _json_400(transport: asyncio.Transport, conn: h11.Connection, msg: str, too_long: bool = False) -> None:
    """uvicorn's 400 for malformed framing is text/plain; the API promises a JSON error for every error."""
    status, reason, error = 400, b"Bad Request", f"{msg.rstrip('.')}: malformed HTTP framing"
    if too_long or len(conn.trailing_data[0]) > HEAD_LIMIT:
        status, reason = 431, b"Request Header Fields Too Large"
        error = f"The request's line and headers pass {HEAD_LIMIT >> 10} KiB: send a shorter query."
    body = json.dumps({"error": error}).encode()
    # written as bytes: h11 sends no response before a request, and none was read of a head too long
    head = b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
    transport.write(head % (status, reason, len(body)) + body)
    transport.close()


class _Unread:
    """Connections whose answer waits for its client to take it, the longest waiting first. Past
    ``max_unsent`` bytes of answers held for them, all accounts together, those that have waited
    longest are cut off (each account's cap bounds its own; this bounds how many accounts' there
    are); one that takes nothing for ``send_timeout`` is cut off too."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.held: OrderedDict[Any, None] = OrderedDict()

    async def wait(self, connection: Any) -> None:
        self.held[connection] = None
        self._cut_the_slowest()
        try:
            async with asyncio.timeout(self.limits.send_timeout):
                await connection.flow.drain()  # set again when the connection is lost too
        except TimeoutError:
            connection._cut()
        finally:
            self.held.pop(connection, None)

    def _cut_the_slowest(self) -> None:
        held = sum(c.transport.get_write_buffer_size() for c in self.held)
        while held > self.limits.max_unsent and len(self.held) > 1:
            slowest = next(iter(self.held))
            held -= slowest.transport.get_write_buffer_size()
            self.held.pop(slowest)
            slowest._cut()


def _close_the_oldest(waiting: OrderedDict, newcomer: Any) -> bool:
    """Make room: close the connection that has waited longest for a request (not ``newcomer``);
    False if none waits."""
    for oldest in waiting:
        if oldest is not newcomer:
            waiting.pop(oldest)
            oldest._close()
            return True
    return False


def guarded_protocol(limits: Limits) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol with the limits above (``uvicorn.Config(http=...)``)."""
    cap, unread = limits.connections(), _Unread(limits)
    waiting: OrderedDict[GuardedProtocol, float] = OrderedDict()  # no request in progress, oldest first

    class GuardedProtocol(H11Protocol):
        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > cap and not _close_the_oldest(waiting, self):
                transport.write(BUSY)
                transport.close()
                return
            self._wait_for_request()

        def _wait_for_request(self) -> None:
            waiting[self] = time.monotonic()
            waiting.move_to_end(self)
            self._arm(limits.request_timeout)

        def _arm(self, seconds: float) -> None:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.loop.call_later(seconds, self._close)

        def _close(self) -> None:
            waiting.pop(self, None)
            if not self.transport.is_closing():
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.cycle is not None:  # a request begun: its app may wait for its answer to be taken
                extensions: dict = self.cycle.scope.setdefault("extensions", {})
                extensions.setdefault(DRAINED, self._drained)

        async def _drained(self) -> None:
            if self.flow.write_paused:
                await unread.wait(self)

        def _cut(self) -> None:
            waiting.pop(self, None)
            self.transport.abort()  # close() would wait, holding the buffer, for a client that never reads

        def send_400_response(self, msg: str) -> None:
            _json_400(self.transport, self.conn, msg)

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE and _head_too_long(self.conn, data):
                _json_400(self.transport, self.conn, "", too_long=True)
                return
            super().data_received(data)
            state = self.conn.their_state
            if state is h11.SEND_BODY and self in waiting:  # the head is in: now the body
                waiting.pop(self)
                self._arm(limits.body_timeout)
            elif state is not h11.IDLE and state is not h11.SEND_BODY and self._timer is not None:
                waiting.pop(self, None)  # the whole request is in: no more deadline
                self._timer.cancel()
                self._timer = None

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._wait_for_request()

        def connection_lost(self, exc: Exception | None) -> None:
            waiting.pop(self, None)
            if self._timer is not None:
                self._timer.cancel()
            super().connection_lost(exc)

    return GuardedProtocol


class LoadShedding:
    """ASGI middleware: at most ``limit`` HTTP requests in flight. Past it, a request waits for a
    slot, first come first served, at most ``wait`` seconds and with at most ``queue`` others; past
    that, 503 and Retry-After at once. Without the short queue, clients that retry at once (as load
    generators and impatient scripts do) spun on 503s that took the event loop from the requests
    being answered: at twice the limit in connections, little of the successful throughput at the
    limit was left (bench/shedding.py prints it). Requests to the mounted paths in ``exempt`` (the live
    stream) are not counted. A read whose client goes away is cancelled (:func:`until_gone`), so
    its slot is not held for nobody."""

    def __init__(
        self, app: ASGIApp, limit: int, exempt: tuple[str, ...] = ("/stream",), queue: int | None = None,
        wait: float = QUEUE_WAIT,
    ) -> None:  # fmt: skip
        self.app, self.limit, self.exempt, self.wait = app, limit, exempt, wait
        self.queue = limit if queue is None else queue
        self.in_flight = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.exempt):
            return await self.app(scope, receive, send)
        # A request of no known caller (no key: answered 401 at once) takes a slot free now, never a
        # place in the queue: 150 clients with no key filled it, and accounts' requests got 503.
        known = scope.get("state", {}).get("caller") is not None
        if not await self._take(wait=known):
            await send_json(send, 503, BUSY_BODY, [(b"retry-after", RETRY_AFTER.encode())])
            return
        try:
            if scope["method"] in SAFE_METHODS:
                await until_gone(self.app, scope, receive, send)
            else:  # a write runs to its end: cancelled midway, it could leave something half-done
                await self.app(scope, receive, send)
        finally:
            self._give()

    async def _take(self, wait: bool = True) -> bool:
        """A slot, now or (``wait``) within ``wait`` seconds; False when the queue is full or the
        wait is over."""
        if self.in_flight < self.limit and not self._waiting:
            self.in_flight += 1
            return True
        if not wait or len(self._waiting) >= self.queue:
            return False
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            await asyncio.wait((waiter,), timeout=self.wait)
        except BaseException:  # cancelled while waiting (the server stopping)
            if waiter.done():
                self._give()  # a slot handed over that will not be used
            else:
                waiter.cancel()
                self._waiting.remove(waiter)
            raise
        if not waiter.done():  # the wait is over: out of the queue
            waiter.cancel()
            self._waiting.remove(waiter)
            return False
        return True

    def _give(self) -> None:
        """A slot given back: handed to the first request still waiting, if any."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot passes to it: in_flight stays
                return
        self.in_flight -= 1


async def until_gone(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """``app`` on the request, cancelled if its client goes away before the answer is sent (a
    thread already at work finishes first, but one still waiting for a thread never starts)."""
    inbox: asyncio.Queue[Message] = asyncio.Queue()  # what the client sent, for the app as it asks
    answered = False

    async def listen() -> None:
        while (message := await receive())["type"] != "http.disconnect":
            inbox.put_nowait(message)
        inbox.put_nowait(message)  # gone, or answered (uvicorn says disconnect then too)

    async def received() -> Message:
        if inbox.empty() and listener.done():
            return {"type": "http.disconnect"}  # said already: said again to any later ask
        return await inbox.get()

    async def sending(message: Message) -> None:
        nonlocal answered
        await send(message)
        answered = answered or (message["type"] == "http.response.body" and not message.get("more_body"))

    listener = asyncio.ensure_future(listen())
    work = asyncio.ensure_future(app(scope, received, sending))
    try:
        await asyncio.wait((work, listener), return_when=asyncio.FIRST_COMPLETED)
        gone = not work.done() and not answered
        if gone:
            work.cancel()  # nobody is waiting for this answer any more
        try:
            await work
        except asyncio.CancelledError:
            if not gone:
                raise
    finally:
        for task in (work, listener):
            task.cancel()


async def drained(scope: Scope) -> None:
    """Until the kernel has taken what was written of the request's answer (the guarded protocol
    only: at once elsewhere), or the connection is gone."""
    wait = scope.get("extensions", {}).get(DRAINED)
    if wait is not None:
        await wait()


class QuietAcceptErrors(logging.Filter):
    """On the ``asyncio`` logger: the first accept error of each ``every`` seconds is logged, with
    how many were left out since; the others are dropped (each one came with a traceback)."""

    def __init__(self, every: float = 60.0) -> None:
        super().__init__()
        self.every, self.last, self.dropped = every, float("-inf"), 0

    def filter(self, record: logging.LogRecord) -> bool:
        if "accept" not in str(record.msg):
            return True
        now = time.monotonic()
        if now - self.last < self.every:
            self.dropped += 1
            return False
        if self.dropped:
            record.msg = f"{record.msg} ({self.dropped} more since the last one logged)"
        record.exc_info, record.exc_text = None, None
        self.last, self.dropped = now, 0
        return True
