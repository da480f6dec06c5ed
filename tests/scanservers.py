"""Real services on loopback for the scanner's tests (and the scan API's and alerts' tests).

Each is a context manager that yields a :class:`Service` (``host``, ``port`` and what a test may
check against: the certificate, the host key...). They run in threads, so that sync tests, async
tests and a backend under uvicorn can all reach them.

    with http_service() as svc:
        found = await probe(svc.host, svc.port)
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import os
import socket
import ssl
import struct
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"

TITLE = "Spyglass test &amp; page"
PAGE = (
    "<!DOCTYPE html><html><head><title>" + TITLE + "</title>"
    '<link rel="shortcut icon" href="/static/icon.png"></head><body><h1>Hello</h1></body></html>'
).encode()
ROBOTS = b"User-agent: *\nDisallow: /private/\n"
ICON = bytes(range(256)) * 4  # not HTML, not text: an icon as far as a scanner can tell
SERVER_VERSION = "Apache/2.4.62"
REDIS_INFO = (
    "# Server\r\nredis_version:7.2.4\r\nredis_mode:standalone\r\nos:Linux 6.1.0 x86_64\r\ntcp_port:6379\r\n\r\n"
    "# Clients\r\nconnected_clients:1\r\n\r\n# Keyspace\r\ndb0:keys=3,expires=0,avg_ttl=0\r\n"
)


@dataclass
class Service:
    host: str
    port: int
    facts: dict = field(default_factory=dict)  # what the service is known to present


# --- certificates -------------------------------------------------------------------------


@dataclass
class Cert:
    pem: bytes  # the leaf then the issuer, as a server sends its chain
    key_pem: bytes
    der: bytes  # the leaf
    serial: int
    subject_cn: str
    issuer_cn: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.der).hexdigest()

    @property
    def sha1(self) -> str:
        return hashlib.sha1(self.der).hexdigest()

    def context(
        self,
        minimum: ssl.TLSVersion | None = None,
        maximum: ssl.TLSVersion | None = None,
        alpn: list[str] | None = None,
    ) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = Path(tmp, "cert.pem"), Path(tmp, "key.pem")
            cert.write_bytes(self.pem)
            key.write_bytes(self.key_pem)
            ctx.load_cert_chain(cert, key)
        if minimum:
            ctx.minimum_version = minimum
        if maximum:
            ctx.maximum_version = maximum
        if alpn:
            ctx.set_alpn_protocols(alpn)
        return ctx


def make_cert(cn: str = "scan.test", expired: bool = False, issuer_cn: str = "Spyglass Test CA") -> Cert:
    """A leaf certificate for ``cn`` issued by a fresh self-signed CA (both EC P-256)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    start, end = (
        (now - dt.timedelta(days=400), now - dt.timedelta(days=35)) if expired else (now, now + dt.timedelta(days=90))
    )
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, issuer_cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Spyglass")]
    )
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - dt.timedelta(days=1))
        .not_valid_after(end + dt.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    serial = x509.random_serial_number()
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(cn)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = leaf.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return Cert(pem, key_pem, leaf.public_bytes(serialization.Encoding.DER), serial, cn, issuer_cn)


# --- HTTP and HTTPS ---------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server_version = SERVER_VERSION
    sys_version = "(Unix)"
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        routes: dict[str, tuple[int, str, bytes, dict[str, str]]] = {
            "/": (302, "text/html", b"<html>moved</html>", {"Location": "/home"}),
            "/home": (200, "text/html; charset=utf-8", PAGE, {}),
            "/robots.txt": (200, "text/plain", ROBOTS, {}),
            "/static/icon.png": (200, "image/png", ICON, {}),
            "/away": (302, "text/html", b"", {"Location": "http://198.51.100.7/"}),
        }
        status, ctype, body, extra = routes.get(self.path, (404, "text/html", b"<!DOCTYPE html>not found", {}))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class _TLSHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    tls: ssl.SSLContext | None = None

    def finish_request(self, request, client_address) -> None:
        if self.tls is None:
            return super().finish_request(request, client_address)
        try:  # shake hands in the request's thread, not the accepting one
            request = self.tls.wrap_socket(request, server_side=True)
        except (OSError, ValueError):
            return
        with request:  # wrapping detached the plain socket that shutdown_request closes
            super().finish_request(request, client_address)


@contextlib.contextmanager
def http_service(
    tls: ssl.SSLContext | None = None, handler: type[BaseHTTPRequestHandler] = _Handler
) -> Iterator[Service]:
    """A threaded http.server: ``/`` redirects to ``/home`` (titled page with an icon link),
    ``/robots.txt``, ``/static/icon.png``; over TLS when given a context."""
    server = _TLSHTTPServer((HOST, 0), handler)
    server.tls = tls
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Service(HOST, server.server_address[1], {"title": TITLE, "robots": ROBOTS, "icon": ICON})
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextlib.contextmanager
def https_service(cert: Cert | None = None, **versions) -> Iterator[Service]:
    """The HTTP service over TLS with ``cert`` (a fresh one by default); ``minimum``/``maximum``
    TLS versions and ``alpn`` protocols as in :meth:`Cert.context`."""
    cert = cert or make_cert()
    with http_service(cert.context(**versions)) as svc:
        svc.facts["cert"] = cert
        yield svc


# --- asyncio services in a thread ------------------------------------------------------------


class LoopThread:
    """An event loop in a daemon thread, for services written for asyncio."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Awaitable):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(15)  # type: ignore[arg-type]

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@contextlib.contextmanager
def asyncio_service(handler: Callable, facts: dict | None = None) -> Iterator[Service]:
    """Any ``asyncio.start_server`` connection handler, served from a thread. On exit every
    connection is dropped, so a handler waiting on its peer ends."""
    lt = LoopThread()
    writers: list[asyncio.StreamWriter] = []

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        await handler(reader, writer)

    async def start():
        return await asyncio.start_server(tracked, HOST, 0)

    server = lt.run(start())
    try:
        yield Service(HOST, server.sockets[0].getsockname()[1], facts or {})
    finally:

        async def close():
            server.close()
            await asyncio.sleep(0.01)  # handlers of connections accepted just now start and are tracked
            for writer in writers:
                writer.transport.abort()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 2)

        with contextlib.suppress(Exception):
            lt.run(close())
        lt.stop()


@contextlib.contextmanager
def ssh_service(key_type: str = "ssh-ed25519", more: tuple[str, ...] = ()) -> Iterator[Service]:
    """An asyncssh server with a fresh host key (and one of each of the ``more`` types); facts:
    ``key`` (asyncssh SSHKey), ``keys`` (all of them), ``fingerprint`` (MD5, hex with colons as the
    original service writes it), ``version``."""
    import asyncssh

    key = asyncssh.generate_private_key(key_type)
    keys = [key, *map(asyncssh.generate_private_key, more)]
    lt = LoopThread()
    connections: list = []  # closing the listener leaves them open: they are closed one by one

    class Server(asyncssh.SSHServer):
        def connection_made(self, conn) -> None:
            connections.append(conn)

    async def start():
        return await asyncssh.listen(HOST, 0, server_host_keys=keys, server_factory=Server, reuse_address=True)

    server = lt.run(start())
    try:
        facts = {
            "key": key,
            "keys": keys,
            "fingerprint": key.get_fingerprint("md5").removeprefix("MD5:"),
            "version": f"SSH-2.0-AsyncSSH_{asyncssh.__version__}",
        }
        yield Service(HOST, server.sockets[0].getsockname()[1], facts)
    finally:

        async def close():
            server.close()
            await server.wait_closed()
            for conn in connections:
                conn.abort()
            await asyncio.sleep(0)  # let the aborted transports go

        with contextlib.suppress(Exception):
            lt.run(close())
        lt.stop()


@contextlib.contextmanager
def smtp_service(cert: Cert | None = None) -> Iterator[Service]:
    """An aiosmtpd server; with ``cert`` it offers STARTTLS."""
    from aiosmtpd.handlers import Sink
    from aiosmtpd.smtp import SMTP

    lt = LoopThread()
    tls = cert.context() if cert else None
    sessions: list[SMTP] = []

    def session() -> SMTP:
        sessions.append(SMTP(Sink(), hostname="mail.scan.test", tls_context=tls))
        return sessions[-1]

    async def start():
        return await asyncio.get_running_loop().create_server(session, HOST, 0)

    server = lt.run(start())
    try:
        yield Service(HOST, server.sockets[0].getsockname()[1], {"cert": cert, "hostname": "mail.scan.test"})
    finally:

        async def close():
            server.close()
            for smtp in sessions:
                if smtp.transport is not None:
                    smtp.transport.abort()
            await asyncio.sleep(0.01)

        with contextlib.suppress(Exception):
            lt.run(close())
        lt.stop()


@contextlib.contextmanager
def ftp_service(anonymous: bool = True) -> Iterator[Service]:
    """A pyftpdlib server (anonymous read-only login when ``anonymous``)."""
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler
    from pyftpdlib.servers import FTPServer

    with tempfile.TemporaryDirectory() as root:
        authorizer = DummyAuthorizer()
        if anonymous:
            authorizer.add_anonymous(root)
        # a refused login is answered after auth_failed_timeout (3 s by default): shorter for tests
        handler = type("Handler", (FTPHandler,), {"authorizer": authorizer, "auth_failed_timeout": 0.2})
        server = FTPServer((HOST, 0), handler)
        thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.05}, daemon=True)
        thread.start()
        try:
            yield Service(HOST, server.address[1], {"banner": handler.banner})
        finally:
            server.close_all()
            thread.join(5)


async def _read_command(reader: asyncio.StreamReader) -> list[bytes] | None:
    """One RESP command (an array of bulk strings) or an inline one; None at EOF."""
    line = await reader.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return line.split()
    args = []
    for _ in range(int(line[1:])):
        size = int((await reader.readline())[1:])
        args.append((await reader.readexactly(size + 2))[:-2])
    return args


@contextlib.contextmanager
def redis_service(password: str | None = None) -> Iterator[Service]:
    """A small Redis-speaking server (RESP): PING, INFO, AUTH; other commands are errors."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        authed = password is None
        try:
            while (cmd := await _read_command(reader)) is not None:
                name = cmd[0].upper() if cmd else b""
                if name == b"AUTH" and password is not None:
                    authed = cmd[-1].decode() == password
                    writer.write(b"+OK\r\n" if authed else b"-WRONGPASS invalid password\r\n")
                elif not authed:
                    writer.write(b"-NOAUTH Authentication required.\r\n")
                elif name == b"PING":
                    writer.write(b"+PONG\r\n")
                elif name == b"INFO":
                    body = REDIS_INFO.encode()
                    writer.write(b"$%d\r\n%s\r\n" % (len(body), body))
                else:
                    writer.write(b"-ERR unknown command '%s'\r\n" % name[:40])
                await writer.drain()
        except (OSError, ValueError, asyncio.IncompleteReadError):
            pass  # a client that sent something else, or left
        finally:
            writer.close()

    with asyncio_service(handle, {"version": "7.2.4"}) as svc:
        yield svc


# --- services that misbehave -----------------------------------------------------------------


@contextlib.contextmanager
def hostile_service(kind: str) -> Iterator[Service]:
    """``garbage``: random bytes then silence; ``flood``: endless data; ``reset``: a TCP reset on
    connect; ``silent``: accepts and says nothing; ``drip``: one byte at a time, forever;
    ``fake-ssh``: an SSH version line followed by garbage instead of a key exchange."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if kind == "garbage":
                writer.write(os.urandom(3000).replace(b"SSH-", b"xxxx"))
                await writer.drain()
                await reader.read(1 << 20)
            elif kind == "flood":
                chunk = b"A" * 65536
                while True:
                    writer.write(chunk)
                    await writer.drain()
            elif kind == "reset":
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif kind == "silent":  # reads what it is sent, answers nothing, ends when the peer does
                while await reader.read(1 << 20):
                    pass
            elif kind == "drip":
                while True:
                    writer.write(b"x")
                    await writer.drain()
                    await asyncio.sleep(0.05)
            elif kind == "fake-ssh":
                writer.write(b"SSH-2.0-Fake_1.0\r\n" + os.urandom(5000))
                await writer.drain()
                await reader.read(1 << 20)
        except Exception:
            pass  # the scanner went away: that is what these services are for
        finally:
            writer.close()

    with asyncio_service(handle) as svc:
        yield svc


def closed_port() -> Service:
    """A loopback port that nothing listens on (bound and released: refused on connect)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return Service(HOST, s.getsockname()[1])
