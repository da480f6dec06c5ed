"""Serving with several worker processes (``spyglass serve --workers N``), to use every core.

The supervisor binds the listening socket and starts N processes that all accept on it, each a
whole app over the same data dir. Worker 0 is the *primary*: the one that writes. It runs every
background service (the collector, scans, alert triggers and deliveries, the bulk-data builder,
the demo collector). The others are *readers*: they answer what only reads (search, count,
facets, host, trends, the stream, listings; a charged search spends its credit in the shared
SQLite file, in a transaction, so credits stay exact) and hand every other request (POST, PUT,
DELETE: a scan, a replay, an alert, a notifier test...) to the primary over a Unix socket the
supervisor owns, so that one process alone writes banners, runs scans and sends notifications.

What the readers learn from the primary:
- new banners: the index is shared on disk and a reader's searcher reloads at most once a second;
- the live stream: each reader follows the primary's feed (``FEED_PATH`` on the Unix socket:
  every banner its collector publishes, as the stream sends it) and publishes it to its own hub.

Held per worker, not across them: ``--rate-limit``, the failed-key and geonet limits per address,
``--max-connections``, ``--max-in-flight``, the uploads and requests one account may have at once and
the streams one key may follow.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_for_exit
from multiprocessing.process import BaseProcess

import httpx
from fastapi import FastAPI
from starlette.types import Message, Receive, Scope, Send

from spyglass.exactjson import loads
from spyglass.server.asgibody import receive_body, send_json
from spyglass.server.auth import KeyBeforeBody
from spyglass.server.guard import SAFE_METHODS  # what a reader answers itself
from spyglass.server.process import (
    collect_cycles_seldom,
    prepare_process,
    stop_at_stdin_eof,
    switch_threads_sooner,
    uvicorn_server,
)
from spyglass.server.stream.hub import StreamHub
from spyglass.server.stream.replay import MAX_BODY as REPLAY_MAX_BODY
from spyglass.server.tasks import cancel

log = logging.getLogger("spyglass.workers")

CLIENT_HEADER = b"x-spyglass-client"  # the caller's address, as a reader saw it (trusted on the Unix socket only)
WORKER_HEADER = b"x-spyglass-worker"  # which worker answered (0 is the primary; "1>0": 1 handed it to 0)
FEED_PATH = "/_spyglass/workers/feed"
HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade", b"host", b"content-length"}
)
NOT_SENT_ON = HOP_BY_HOP | {CLIENT_HEADER}  # of a request handed to the primary (the reader sets its own)
NOT_SENT_BACK = HOP_BY_HOP | {WORKER_HEADER}  # of the primary's answer (the reader says who took it)
FORWARD_TIMEOUT = httpx.Timeout(120.0, connect=10.0)  # a replay or a notifier test waits on the primary's work
FEED_RETRY = 0.5  # seconds between a reader's tries to follow the primary's feed
FEED_QUEUE = (20_000, 32 << 20)  # banners and bytes a reader's feed may hold while it falls behind
# the largest body any method takes (a replay's), whole in memory before it is handed on
MAX_BODY = REPLAY_MAX_BODY
UNAVAILABLE = b'{"error": "The backend\'s writing worker is restarting: try again in a moment"}'
RESTARTS = 5  # a worker that dies this many times within RESTART_WINDOW stops the whole backend
RESTART_WINDOW = 60.0


@dataclass(frozen=True)
class Worker:
    """What one worker process is: its number (0, the primary, writes) and the primary's socket."""

    number: int
    primary_socket: str

    @property
    def primary(self) -> bool:
        return self.number == 0


# -- the primary's side ------------------------------------------------------------------------


class PrimaryWorker:
    """ASGI wrapper of the primary's app. A request on the Unix socket (uvicorn gives it no client
    address) comes from a reader: its caller's address is taken from ``CLIENT_HEADER``, and the
    feed is served there. On TCP that header is dropped, never believed."""

    def __init__(self, app: FastAPI, hub: StreamHub) -> None:
        self.app, self.hub = app, hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from_reader = scope.get("client") is None
        forwarded = next((v for k, v in scope["headers"] if k == CLIENT_HEADER), None)
        if forwarded is not None:
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k != CLIENT_HEADER]}
        if from_reader:
            if scope["path"] == FEED_PATH:
                return await self.feed(receive, send)
            if forwarded:
                host, _, port = forwarded.decode("latin-1").rpartition(" ")
                scope["client"] = (host, int(port) if port.isdigit() else 0)
        await self.app(scope, receive, with_worker_header(send, "0"))

    async def feed(self, receive: Receive, send: Send) -> None:
        """Every banner the collector publishes, one JSON line each, until the reader goes."""
        from spyglass.server.stream.host import follow

        sub = self.hub.subscribe(queue=FEED_QUEUE)  # no key: no key's limit of streams

        async def until_gone() -> None:  # a quiet feed would not notice otherwise, and hold shutdown
            while (await receive())["type"] != "http.disconnect":
                pass
            sub.close()

        watcher = asyncio.create_task(until_gone())
        try:
            headers = [(b"content-type", b"application/x-ndjson")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            async for chunk in follow(self.hub, sub, "json", debug=False):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            await cancel(watcher)


# -- a reader's side ---------------------------------------------------------------------------


class ReaderWorker:
    """ASGI wrapper of a reader's app: what only reads is answered here; every other request is
    sent on to the primary as it came (with the caller's address), and its answer streamed back."""

    def __init__(self, app: FastAPI, worker: Worker) -> None:
        self.app, self.worker = app, worker
        self.name = str(worker.number).encode()
        self._http: httpx.AsyncClient | None = None
        # What is handed on has its key checked and its body received whole here first, as the app would.
        self.checked = KeyBeforeBody(self.forward, app.state.keys, MAX_BODY)

    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            transport = httpx.AsyncHTTPTransport(uds=self.worker.primary_socket)
            self._http = httpx.AsyncClient(transport=transport, timeout=FORWARD_TIMEOUT)
        return self._http

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["method"] in SAFE_METHODS:
            return await self.app(scope, receive, with_worker_header(send, str(self.worker.number)))
        await self.checked(scope, receive, with_worker_header(send, str(self.worker.number)))

    async def forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client") or ("", 0)
        headers = [(k, v) for k, v in scope["headers"] if k not in NOT_SENT_ON]
        headers.append((CLIENT_HEADER, f"{client[0]} {client[1]}".encode("latin-1")))
        url = httpx.URL(
            scheme="http", host="primary", path=scope.get("root_path", "") + scope["path"], query=scope["query_string"]
        )
        body = await receive_body(receive, MAX_BODY)  # received whole already, by self.checked
        if body is None:
            return  # the client went away: nothing to hand on (a part of its body would be taken for all of it)
        request = self.http().build_request(scope["method"], url, headers=headers, content=b"".join(body))
        try:
            response = await self.http().send(request, stream=True)
        except httpx.TransportError as exc:
            log.warning("worker %d: the primary did not take a request (%s)", self.worker.number, exc)
            await send_json(send, 503, UNAVAILABLE, [(b"retry-after", b"1"), (WORKER_HEADER, self.name)])
            return
        try:
            kept = [(k, v) for k, v in response.headers.raw if k.lower() not in NOT_SENT_BACK]
            kept.append((WORKER_HEADER, self.name + b">0"))  # taken here, carried out there
            await send({"type": "http.response.start", "status": response.status_code, "headers": kept})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()


class FeedFollower:
    """A reader's background service: follows the primary's feed and publishes each banner to
    this worker's stream hub, so a stream opened on any worker carries what the primary collects.
    Banners collected while the primary restarts are not on the readers' streams."""

    def __init__(self, primary_socket: str, hub: StreamHub) -> None:
        self.primary_socket, self.hub = primary_socket, hub
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="workers-feed")

    async def stop(self) -> None:
        await cancel(self._task)

    async def _run(self) -> None:
        transport = httpx.AsyncHTTPTransport(uds=self.primary_socket)
        async with httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(10.0, read=None)) as http:
            while True:
                try:
                    async with http.stream("GET", f"http://primary{FEED_PATH}") as response:
                        async for line in response.aiter_lines():
                            if line.strip():
                                self.publish(line)
                except (httpx.HTTPError, OSError) as exc:
                    log.debug("the primary's feed broke off (%s): following it again", exc)
                await asyncio.sleep(FEED_RETRY)

    def publish(self, line: str) -> None:
        try:
            banner = loads(line.encode())
        except ValueError:
            log.warning("a line of the primary's feed is not JSON: skipped")
            return
        if isinstance(banner, dict):
            self.hub.publish_banner(banner)


# -- ASGI helpers ------------------------------------------------------------------------------


def with_worker_header(send: Send, name: str) -> Send:
    """``send`` with the worker header on the answer, unless it names a worker already."""
    value = name.encode()

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and all(k != WORKER_HEADER for k, _ in message.get("headers", [])):
            message = {**message, "headers": [*message.get("headers", []), (WORKER_HEADER, value)]}
        await send(message)

    return sending


# -- processes ---------------------------------------------------------------------------------


def worker_app(settings, worker: Worker):
    """The ASGI application one worker serves."""
    from spyglass.server.app import create_app

    app = create_app(settings)
    if worker.primary:
        return PrimaryWorker(app, app.state.hub)
    # A reader runs no background work of its own: only its stream hub, fed by the primary.
    app.state.services = [app.state.hub, FeedFollower(worker.primary_socket, app.state.hub)]
    return ReaderWorker(app, worker)


def run_worker(settings, worker: Worker, sockets: list[socket.socket]) -> None:
    """A worker process: serve ``sockets`` until told to stop (SIGTERM, or SIGINT)."""
    os.setpgrp()  # a Ctrl-C in the terminal is the supervisor's, which stops the workers in order
    parent = os.getppid()
    prepare_process()
    logging.basicConfig(level=logging.WARNING, format=f"worker {worker.number}: %(levelname)s %(name)s: %(message)s")
    app = worker_app(settings, worker)
    server = uvicorn_server(app, settings)
    collect_cycles_seldom()
    switch_threads_sooner()

    def orphaned() -> None:  # the supervisor was killed: nobody would ever stop this worker
        while os.getppid() == parent:
            time.sleep(1.0)
        server.should_exit = True

    threading.Thread(target=orphaned, name="supervisor-watch", daemon=True).start()
    server.run(sockets=sockets)


class Supervisor:
    """Starts the workers, starts again one that dies (the whole backend stops if one keeps
    dying), and stops them all when told to."""

    def __init__(self, settings, sockets: list[socket.socket], count: int) -> None:
        self.settings, self.sockets, self.count = settings, sockets, count
        self.dir = tempfile.mkdtemp(prefix="spyglass-workers-")  # 0700: only this user reaches the socket
        path = os.path.join(self.dir, "primary.sock")
        self.primary_sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.primary_sock.bind(path)
        self.primary_sock.listen(1024)  # bound here: requests wait in its queue while the primary restarts
        self.context = multiprocessing.get_context("spawn")
        self.processes: list[BaseProcess] = []
        self.deaths: list[list[float]] = [[] for _ in range(count)]
        self.stopping = threading.Event()

    def start(self, number: int):
        worker = Worker(number, self.primary_sock.getsockname())
        # held here too: connections the kernel gives a restarting worker's socket wait for it
        listening = self.sockets[number % len(self.sockets)]
        sockets = [listening, self.primary_sock] if worker.primary else [listening]
        process = self.context.Process(
            target=run_worker, args=(self.settings, worker, sockets), name=f"spyglass-worker-{number}", daemon=False
        )
        process.start()
        return process

    def run(self) -> str | None:
        """Until :meth:`stop`; what went wrong if a worker kept dying, else None."""
        try:
            self.processes = [self.start(n) for n in range(self.count)]
            while not self.stopping.is_set():
                wait_for_exit([p.sentinel for p in self.processes], timeout=0.5)
                for number, process in enumerate(self.processes):
                    if process.is_alive() or self.stopping.is_set():
                        continue
                    if failure := self._died(number, process.exitcode):
                        return failure
                    self.processes[number] = self.start(number)
            return None
        finally:
            self._stop_all()

    def _died(self, number: int, code: int | None) -> str | None:
        now = time.monotonic()
        recent = [t for t in self.deaths[number] if now - t < RESTART_WINDOW] + [now]
        self.deaths[number] = recent
        how = f"signal {-code}" if code is not None and code < 0 else f"code {code}"
        if len(recent) >= RESTARTS:
            return f"worker {number} exited {len(recent)} times within {RESTART_WINDOW:g} s (last: {how})"
        print(f"serve: worker {number} exited ({how}): starting it again", file=sys.stderr, flush=True)
        return None

    def stop(self) -> None:
        self.stopping.set()

    def _stop_all(self) -> None:
        for process in self.processes:
            if process.is_alive():
                process.terminate()  # SIGTERM: uvicorn stops gracefully, the services stop in order
        deadline = time.monotonic() + 10.0
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
        self.primary_sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def supervise(settings, sockets: list[socket.socket], count: int, exit_on_stdin_eof: bool) -> str | None:
    """Serve ``settings`` with ``count`` worker processes (worker i accepts on ``sockets[i]``, or
    all on the one socket) until SIGTERM, SIGINT or (when asked) the end of stdin; what went wrong
    if the workers could not be kept running."""
    supervisor = Supervisor(settings, sockets, count)

    def stop(*_) -> None:
        supervisor.stop()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    if exit_on_stdin_eof:
        stop_at_stdin_eof(supervisor.stop)
    try:
        return supervisor.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
