"""Real servers on loopback for tests: DNS, a trickling HTTP server, SMTP; the embedded backend's
(ThreadedServer, Backend) live in spyglass.testing.backend, which the benchmarks use too."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from spyglass.local.sockets import listen
from spyglass.testing import Unavailable
from spyglass.testing.backend import Backend as Backend
from spyglass.testing.backend import ThreadedServer as ThreadedServer


@contextmanager
def installed() -> Iterator[None]:
    """What spyglass.testing cannot find here (clickhouse-server, chdb) skips the test, and fails
    it in CI, where every test must run."""
    try:
        yield
    except Unavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{exc} (in CI every test must run)")
        pytest.skip(str(exc))


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
