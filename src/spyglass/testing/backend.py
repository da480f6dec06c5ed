"""The embedded backend on loopback: in a thread of this process (its store at hand), or as a
`spyglass serve` process; and requests that a client begins and never finishes, to load it."""

from __future__ import annotations

import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from spyglass.local.sockets import base_urls, listen
from spyglass.server.state.accounts import AccountState


class ThreadedServer:
    """Any ASGI app under uvicorn in a thread, on a loopback socket."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0, **config) -> None:
        """``config``: more of uvicorn's settings (a short ``timeout_keep_alive``); the request head's
        limit is the backend's (uvicorn_server)."""
        from spyglass.server.guard import HEAD_LIMIT

        config.setdefault("h11_max_incomplete_event_size", HEAD_LIMIT)
        self.sock = listen(host, port)
        self.host, self.port = self.sock.getsockname()[:2]
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1, **config)
        )
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return base_urls(self.host, self.port)["main"]

    def __enter__(self) -> ThreadedServer:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@dataclass
class Backend:
    """The embedded backend running for tests, with direct access to its store."""

    url: str
    app: FastAPI
    store: AccountState
    data_dir: Path

    def key(self, plan: str = "enterprise", researcher: bool = False, collector: bool = False) -> str:
        return self.store.create_key(plan, researcher=researcher, collector=collector)

    def collect(self, banners: list[dict], source: str = "test") -> list:
        """Hand banners to the running backend's collector, as a scan would; returns the new ones."""
        return self.app.state.collector.collect_from_thread(banners, source)

    def profile(self, key: str | None = None, **kw):
        from spyglass.config import Profile

        return Profile(name="test", url=self.url, key=key, rate=None, **kw)


def start_backend(data_dir: Path, port: int = 0, clock=None, **settings) -> tuple[ThreadedServer, Backend]:
    """The backend on ``data_dir``, not yet started (``with server:`` runs it)."""
    from spyglass.server.app import create_app
    from spyglass.server.geonet import GeonetSettings
    from spyglass.server.settings import Settings
    from spyglass.server.state.accounts import utcnow
    from spyglass.server.stores import open_account_state

    store = open_account_state(settings.get("state"), data_dir, clock or utcnow)
    settings.setdefault("notifier_allow", ["127.0.0.0/8"])  # the tests' receivers are on loopback
    settings.setdefault("geonet", GeonetSettings(allow=["127.0.0.0/8"]))  # and geonet pings loopback
    app = create_app(Settings(data_dir=data_dir, **settings), store)
    server = ThreadedServer(app, port=port)
    return server, Backend(server.url, app, store, data_dir)


@contextmanager
def backend_with(data_dir: Path, banners: Iterable[dict], **settings) -> Iterator[Backend]:
    """The backend under uvicorn, its index loaded with ``banners``."""
    from spyglass.server.ingest.importer import import_banners

    server, backend = start_backend(data_dir, **settings)
    import_banners(backend.app.state.banners, (dict(b) for b in banners))
    with server:
        yield backend
    backend.store.close()


@contextmanager
def serve(data_dir, *options: str, descriptors: int | None = None, log: Path | None = None) -> Iterator[str]:
    """``spyglass serve`` on a free loopback port (with at most ``descriptors`` open files, its
    stderr written to ``log``); its URL."""

    def limit() -> None:
        if descriptors:
            resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

    with open(log or os.devnull, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "spyglass", "serve", "--data", str(data_dir), "--port", "0", *options],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            preexec_fn=limit if descriptors else None,  # (not safe in a process with threads)
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            assert first.startswith("main"), first
            yield first.split()[1]
        finally:
            process.terminate()
            process.wait(30)


HALF_SENT = b"GET /spyglass/info HTTP/1.1\r\nHost: x\r\nX-Slow: "  # never finished


def open_half_sent(url: str, count: int, head: bytes = HALF_SENT) -> list[socket.socket]:
    """``count`` connections to ``url`` that each sent ``head`` (a request begun, never finished)."""
    host, port = url.removeprefix("http://").split(":")
    socks = []
    for _ in range(count):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((host, int(port)))
        socks.append(s)
    with selectors.DefaultSelector() as poller:
        for s in socks:
            poller.register(s, selectors.EVENT_WRITE, s)
        left, deadline = len(socks), time.monotonic() + 15
        while left and time.monotonic() < deadline:  # a full accept queue drops SYNs: they are sent again
            for key, _ in poller.select(0.2):
                poller.unregister(key.fileobj)
                left -= 1
                try:
                    key.data.send(head)
                except OSError:
                    pass  # refused or reset: the server made room
    return socks
