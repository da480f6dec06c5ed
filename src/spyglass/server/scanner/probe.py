"""Probe one address and port: pick a protocol module, run it, return what it found.

Choice: the requested protocol, else the one :data:`.protocols.PORTS` tries first on the port, else
by what the service sends first (``SSH-``, an FTP or SMTP ``220``, an HTTP or RESP answer to a GET,
a TLS refusal of it); failing all, the generic module records what the port said (maybe nothing:
an open port that stays silent is still found).
"""

from __future__ import annotations

import asyncio
import logging

from spyglass.server.grabs import GRABBERS, generic
from spyglass.server.grabs.base import Closed, Conn, Found, NotTLS, Target, signed_hash

from .protocols import PORTS, PROTOCOLS

# signed_hash is the original service's hash of a text: a banner's "hash" is signed_hash(data).
__all__ = ["Found", "probe", "signed_hash"]

log = logging.getLogger(__name__)
GREETING_WAIT = 2.0  # at most, seconds a service that speaks first gets to say something (and half the timeout)
# A hard cap on one probe, in connection timeouts: modules make a few connections one after the
# other (https: handshake, version checks, page, redirects, documents) and each has the timeout.
MAX_STEPS = 10
SNIFF_REQUEST = b"GET / HTTP/1.0\r\n\r\n"


async def probe(ip: str, port: int, protocol: str | None = None, *, timeout: float = 5.0) -> Found | None:
    """What the service at ``ip``:``port`` says, through the module for ``protocol`` (or the port's,
    or the one its first words call for). None when closed or filtered (or the probe failed).

    ``timeout`` bounds each connection (connect and exchange); a probe makes a few, one after the
    other, and is cut off after ``MAX_STEPS`` timeouts in all."""
    if protocol is not None and protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}: one of {', '.join(sorted(PROTOCOLS))}")
    try:
        return await asyncio.wait_for(_probe(Target(ip, port, timeout), protocol), timeout * MAX_STEPS)
    except Closed:
        return None
    except TimeoutError:
        log.warning("probe of %s:%s (%s) ran past %s connection timeouts", ip, port, protocol, MAX_STEPS)
        return None
    except Exception:  # a module bug must not take a scan down; it is logged for a fix
        log.exception("probe of %s:%s (%s) failed", ip, port, protocol)
        return None


async def _probe(t: Target, protocol: str | None) -> Found | None:
    tried: set[str] = set()
    first = protocol or PORTS.get(t.port)
    if first is not None and first != "generic":
        tried.add(first)
        found = await _run(first, t)
        if found is not None:
            return found
    kind, said = await sniff(t)
    if kind is not None and kind not in tried and protocol != "generic":
        found = await _run(kind, t)
        if found is not None:
            return found
    return generic.found(said)


async def _run(name: str, t: Target) -> Found | None:
    try:
        return await GRABBERS[name](t)
    except NotTLS:
        return None


async def sniff(t: Target) -> tuple[str | None, bytes]:
    """(module its words call for, or None; what it said). A silent service is sent a GET."""
    conn = await Conn.open(t)
    try:
        said = await conn.read_some(min(t.timeout / 2, GREETING_WAIT))
        if said:
            return by_greeting(said), said
        await conn.send(SNIFF_REQUEST)
        answer = await conn.read_all()
    finally:
        await conn.close()
    return by_answer(answer), answer


def by_greeting(said: bytes) -> str | None:
    if said.startswith(b"SSH-") or b"\nSSH-" in said:
        return "ssh"
    if said[:3] in (b"220", b"120"):
        upper = said.upper()
        return "smtp" if b"SMTP" in upper or b"MAIL" in upper else "ftp"
    return None


def by_answer(answer: bytes) -> str | None:
    if answer.startswith(b"HTTP/"):
        return "http"
    if answer[:1] in (b"+", b"-", b":", b"$", b"*"):
        return "redis"
    if not answer or answer[:1] == b"\x15":  # closed on a GET or a TLS alert: maybe TLS
        return "https"
    return None
