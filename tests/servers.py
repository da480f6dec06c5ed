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
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
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
    app: object
    store: object
    data_dir: Path

    def key(self, plan: str = "enterprise", researcher: bool = False, collector: bool = False) -> str:
        return self.store.create_key(plan, researcher=researcher, collector=collector)

    def collect(self, banners: list[dict], source: str = "test") -> list:
        """Hand banners to the running backend's collector, as a scan would; returns the new ones."""
        return self.app.state.collector.collect_from_thread(banners, source)

    def profile(self, key: str | None = None, **kw):
        from spyglass.config import Profile

        return Profile(name="test", url=self.url, key=key, rate=None, **kw)


ZONE = """
example.test.          60 IN A     192.0.2.10
example.test.          60 IN AAAA  2001:db8::10
example.test.          60 IN NS    ns1.example.test.
example.test.          60 IN MX    10 mail.example.test.
example.test.          60 IN TXT   "v=spf1 -all"
example.test.          60 IN SOA   ns1.example.test. admin.example.test. 2026112201 3600 600 86400 60
example.test.          60 IN CAA   0 issue "ca.example.test"
www.example.test.      60 IN CNAME example.test.
loop.example.test.     60 IN A     127.0.0.1
_ldap._tcp.example.test. 60 IN SRV 0 5 389 ldap.example.test.
10.2.0.192.in-addr.arpa. 60 IN PTR example.test.
"""


# The networks ZONE's addresses lie in: loopback and documentation ranges, all of them internal to
# the backend's rule, so a test agent that resolves or pings them opens them (--geonet-allow).
ZONE_NETWORKS = ["127.0.0.0/8", "192.0.2.0/24", "2001:db8::/32"]


class DnsServer:
    """A real DNS server on loopback (dnslib) answering from :data:`ZONE`. Names under one of
    ``silent`` (e.g. ``("slow.test",)``) are never answered, as by a name server that is down or
    drops the queries; ``unanswered`` counts the queries it kept quiet about."""

    def __init__(self, host: str = "127.0.0.1", silent: tuple[str, ...] = ()) -> None:
        from dnslib import DNSError
        from dnslib.server import DNSLogger, DNSServer
        from dnslib.zoneresolver import ZoneResolver

        outer = self
        self.unanswered = 0
        suffixes = tuple(f".{name.strip('.')}." for name in silent)

        class Resolver(ZoneResolver):
            def resolve(self, request, handler):
                if f".{request.q.qname}".endswith(suffixes):
                    outer.unanswered += 1
                    raise DNSError("kept quiet")  # dnslib's handler then sends nothing
                return super().resolve(request, handler)

        quiet = DNSLogger(logf=lambda _: None) if silent else None
        self.server = DNSServer(Resolver(ZONE), address=host, port=0, logger=quiet)
        self.host, self.port = self.server.server.server_address[:2]

    def __enter__(self) -> DnsServer:
        self.server.start_thread()
        return self

    def __exit__(self, *exc) -> None:
        self.server.stop()
        self.server.server.server_close()


class TricklingServer:
    """An HTTP server on loopback that answers every request a byte at a time, for ever: no read
    ever waits long enough to time out. ``connections`` counts those it has accepted."""

    def __init__(self, every: float = 0.1) -> None:
        self.sock = listen("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.every, self.connections = every, 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                while not self.stopping.wait(self.every):
                    conn.sendall(b"z")
            except OSError:  # the client gave up: what this server is for
                pass

    def __enter__(self) -> TricklingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()


class SmtpServer:
    """A real SMTP server on loopback (aiosmtpd) that keeps every message it accepts. Its port is
    bound here, by the system's choice, before the server starts: aiosmtpd's Controller cannot
    listen on port 0, and a port found free and bound later may be taken in between."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.messages: list[tuple[list[str], bytes]] = []  # (recipients, content)
        sock = listen("127.0.0.1", 0)
        self.host, self.port = sock.getsockname()[:2]

        class OnOwnSocket(Controller):
            def _create_server(self):  # aiosmtpd's hook: serve the socket bound above
                return self.loop.create_server(self._factory_invoker, sock=sock, ssl=self.ssl_context)

        self.controller = OnOwnSocket(self, hostname=self.host, port=self.port)

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's hook name)
        self.messages.append((envelope.rcpt_tos, envelope.content))
        return "250 OK"

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def __enter__(self) -> SmtpServer:
        self.controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self.controller.stop()
