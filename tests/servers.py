"""Real servers on loopback for tests: the embedded backend and a deliberately faulty one."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from spyglass.server.runner import base_urls, listen


class ThreadedServer:
    """Any ASGI app under uvicorn in a thread, on a loopback socket."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0) -> None:
        self.sock = listen(host, port)
        self.host, self.port = self.sock.getsockname()[:2]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                                    timeout_graceful_shutdown=1))
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
    app: object
    store: object
    data_dir: Path

    def key(self, plan: str = "enterprise", researcher: bool = False) -> str:
        return self.store.create_key(plan, researcher=researcher)

    def profile(self, key: str | None = None, **kw):
        from spyglass.config import Profile

        return Profile(name="test", url=self.url, key=key, rate=None, **kw)
