"""Notifications caught on loopback: an HTTP webhook receiver that records what it is sent, an
alert that notifies it, and banners for the backend to collect."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from spyglass.client import Clients

STAMP = "2026-11-20T10:00:00.000000"


class Receiver:
    """An HTTP server on loopback that records every POST (JSON body, headers). Cleared,
    ``answering`` holds each request open (a delivery in the middle) until it is set again;
    ``arrived`` has every request as it came, with the sender's port."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict, dict]] = []
        self.arrived: list[tuple[int, dict]] = []
        self.answering = threading.Event()
        self.answering.set()
        self.status = 200
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer.lock:
                    outer.arrived.append((self.client_address[1], json.loads(body)))
                outer.answering.wait()
                with outer.lock:
                    status = outer.status
                    if status == 200:
                        outer.posts.append((self.path, json.loads(body), dict(self.headers)))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def services(self) -> list[str | None]:
        with self.lock:
            return [body.get("service") for _, body, _ in self.posts]

    def wait_for(self, service: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while service not in self.services():
            if time.monotonic() > deadline:
                raise AssertionError(f"no notification for {service}; got {self.services()}")
            time.sleep(0.02)


def banner(ip: str, port: int, stamp: str = STAMP, **extra) -> dict:
    return {"ip_str": ip, "port": port, "transport": "tcp", "timestamp": stamp, "data": "hello\r\n", **extra}


async def watch(c: Clients, url: str, networks: list[str], triggers: str, expires: int | None = None) -> str:
    """An alert on ``networks`` with ``triggers`` enabled and a webhook notifier to ``url``."""
    alert = await c.alerts.create("watch", networks, expires=expires)
    created = await c.notifiers.create("webhook", {"url": url}, description="test receiver")
    assert await c.alerts.enable_triggers(alert.id, triggers)
    assert await c.alerts.add_notifier(alert.id, created.id)
    return alert.id
