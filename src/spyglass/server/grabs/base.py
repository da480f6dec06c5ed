"""What every protocol module shares: the result type, the target, bounded reads with a deadline.

Remote services are hostile by assumption: every read is capped in size and time and returns what
arrived instead of raising when the peer is slow, resets or closes. Only a refused or unreachable
connection raises (:class:`Closed`), so that the probe can stop early on a closed port.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import mmh3

MAX_READ = 64 * 1024  # bytes kept from any one reply


@dataclass
class Found:
    """What a module learned from a service: its banner ``data`` text and other banner members."""

    module: str
    data: str
    members: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    ip: str
    port: int
    timeout: float  # seconds for each connection (connect and exchange)


class Closed(Exception):
    """The port refused, was unreachable or did not accept within the timeout."""


def signed_hash(data: str | bytes) -> int:
    """The original service's hash of a text (MurmurHash3 32-bit, signed), as in ``html_hash``."""
    return int(mmh3.hash(data))


def favicon_hash(icon: bytes) -> int:
    """The original service's favicon hash: mmh3 of the icon's base64 with its newlines."""
    return signed_hash(base64.encodebytes(icon))


class Conn:
    """One TCP (or TLS) connection with a deadline; reads are bounded and never raise."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float) -> None:
        self.reader, self.writer = reader, writer
        self.deadline = time.monotonic() + timeout
        self.pending = b""  # read past the end of one reply: the start of the next

    @classmethod
    async def open(cls, t: Target, tls: ssl.SSLContext | None = None) -> Conn:
        """Connect (raising :class:`Closed`), then, with ``tls``, shake hands (raising :class:`NotTLS`)."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(t.ip, t.port, limit=MAX_READ), t.timeout)
        except (OSError, TimeoutError) as exc:  # refused, unreachable, filtered
            raise Closed(str(exc)) from exc
        conn = cls(reader, writer, t.timeout)
        if tls is not None:
            await conn.start_tls(tls)
        return conn

    async def start_tls(self, tls: ssl.SSLContext) -> None:
        self.pending = b""  # nothing sent in the clear may pass for what is said inside TLS
        try:
            await asyncio.wait_for(self.writer.start_tls(tls, server_hostname=None), self.left())
        except (OSError, TimeoutError, ValueError, RuntimeError) as exc:  # SSLError is an OSError
            self.writer.transport.abort()  # no goodbye to wait for from a handshake that failed
            raise NotTLS(str(exc)) from exc

    @property
    def ssl_object(self) -> ssl.SSLObject | None:
        return self.writer.get_extra_info("ssl_object")

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    async def send(self, data: bytes) -> bool:
        try:
            self.writer.write(data)
            await asyncio.wait_for(self.writer.drain(), self.left())
        except (OSError, TimeoutError, RuntimeError):
            return False
        return True

    async def read_until(
        self, done: Callable[[bytes], bool], limit: int = MAX_READ, wait: float | None = None
    ) -> bytes:
        """Bytes read until ``done(buffer)``, EOF, a reset, ``limit`` bytes or the deadline
        (or ``wait`` seconds, if shorter), whichever comes first."""
        end = self.deadline if wait is None else min(self.deadline, time.monotonic() + wait)
        buf, self.pending = self.pending, b""
        while len(buf) < limit and not done(buf):
            left = end - time.monotonic()
            if left <= 0:
                break
            try:
                chunk = await asyncio.wait_for(self.reader.read(limit - len(buf)), left)
            except (OSError, TimeoutError, asyncio.IncompleteReadError):
                break
            if not chunk:
                break
            buf += chunk
        return buf[:limit]

    async def read_all(self, limit: int = MAX_READ, wait: float | None = None) -> bytes:
        return await self.read_until(lambda _b: False, limit, wait)

    async def read_some(self, wait: float, settle: float = 0.2, limit: int = MAX_READ) -> bytes:
        """What the peer says first: the first chunk within ``wait``, then whatever follows within ``settle``."""
        first = await self.read_until(bool, limit, wait)
        if not first:
            return first
        return first + await self.read_until(lambda _b: False, limit - len(first), settle)

    async def close(self) -> None:
        """Close politely, but drop the connection if the peer does not finish a TLS goodbye within
        a second (asyncio would otherwise keep it for its 30 s shutdown timeout)."""
        try:
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), 1.0)
        except Exception:
            self.writer.transport.abort()


class NotTLS(Exception):
    """The port is open but the TLS handshake failed."""


def insecure_tls(alpn: list[str] | None = None) -> ssl.SSLContext:
    """A client context that accepts any certificate: a scanner records certificates, it does not trust them."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with contextlib.suppress(ssl.SSLError):
        ctx.set_ciphers("ALL:@SECLEVEL=0")  # so that old servers are still recorded
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


def cpe_members(product: str, version: str | None, cpe: str | None) -> dict:
    """``product``, ``version`` and, for a product with a known CPE (``vendor:product``), ``cpe23``/``cpe``."""
    out: dict = {"product": product}
    if version:
        out["version"] = version
    if cpe:
        suffix = f":{version}" if version else ""
        out["cpe23"] = [f"cpe:2.3:a:{cpe}{suffix}"]
        out["cpe"] = [f"cpe:/a:{cpe}{suffix}"]
    return out
