"""What the scanner formats share: the banner every one yields around a tool's finding, the scan id
derived from a file's content, and reading a stream by lines with their numbers, never whole."""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import ipaddress
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO

from publicsuffixlist import PublicSuffixList

from spyglass.server.geoip import locate
from spyglass.server.ingest.formats import HEAD
from spyglass.server.ingest.formats.services import crawler

MAX_LINE = 16 << 20  # as the banner importer: a longer line is reported, never held whole
_STAMP = "%Y-%m-%dT%H:%M:%S.%f"  # as the crawler writes a banner's timestamp (UTC)


def stamp(when: datetime | float | int) -> str:
    """A banner's timestamp from a datetime (naive is UTC) or seconds since the epoch."""
    if not isinstance(when, datetime):
        return _stamp_of(float(when))
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime(_STAMP)


@functools.lru_cache(maxsize=4096)
def _stamp_of(seconds: float) -> str:
    """A scanner's records share their seconds (masscan: a second's hundreds of ports): each made once."""
    return datetime.fromtimestamp(seconds, UTC).strftime(_STAMP)


@functools.cache
def _suffixes() -> PublicSuffixList:
    """The public suffix list the package ships (read once, ~0.1 s; never fetched): its ICANN part,
    as the service's ``domains`` hold ``github.io`` for ``x.github.io``."""
    return PublicSuffixList(only_icann=True)


def domain_of(name: str) -> str | None:
    """The registered domain a hostname is under (``www.bbc.co.uk``: ``bbc.co.uk``); None for an
    address, a bare name or a public suffix itself."""
    name = name.strip().rstrip(".").lower()
    if "." not in name or ":" in name or name.rsplit(".", 1)[-1].isdigit():
        return None
    return _suffixes().privatesuffix(name)


def scan_id(*parts: str | bytes) -> str:
    """A run's id (16 characters, as the service's scan ids) from what identifies it: the tool's
    start time and command line, or the head of the file where the tool writes neither (so the
    same file always gives the same id, and another run, with other times, another)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big") + data)
    return base64.b32encode(digest.digest()[:10]).decode()


def banner(
    tool: dict,
    scan: str,
    ip: str,
    port: int,
    transport: str,
    when: str,
    module: str | None,
    record: object,
    members: dict | None = None,
) -> dict:
    """One banner of a scanner's finding: the members the service has (``members``) around the
    address, the tool's tag, the run in ``_shodan`` and the tool's own ``record`` under ``tool``."""
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} is out of range")
    out: dict = {"data": "", **(members or {})}
    out["hash"] = crawler().base.signed_hash(out["data"]) if isinstance(out["data"], str) else 0  # as the crawler's
    out.update(_address(ip))
    which = f"{tool['name']}:{scan}:{ip}:{port}:{transport}:{when}".encode(errors="surrogatepass")
    out.update(
        {
            "port": port,
            "transport": transport,
            "timestamp": when,
            "tags": [tool["name"]],
            "_shodan": {
                "id": _uuid_text(hashlib.blake2b(which, digest_size=16).hexdigest()),
                "module": module,
                "crawler": tool["name"],
                "options": {"scan": scan},
            },
            "tool": {**tool, "record": record},
        }
    )
    return locate(out)  # location and network owner, where the user named databases (geoip.py)


def _uuid_text(hex32: str) -> str:
    """``str(uuid.UUID(hex=hex32))`` without making the UUID (a banner's id, made for every one)."""
    return f"{hex32[:8]}-{hex32[8:12]}-{hex32[12:16]}-{hex32[16:20]}-{hex32[20:]}"


def _address(ip: str) -> dict:
    """``ip_str`` and ``ip`` of an IPv4 address, ``ipv6`` of an IPv6 one; ValueError for no address."""
    try:
        packed = socket.inet_pton(socket.AF_INET, ip)  # the common case, without ipaddress's cost
        return {"ip_str": socket.inet_ntoa(packed), "ip": int.from_bytes(packed, "big")}
    except (OSError, TypeError):
        address = ipaddress.ip_address(ip)
    if address.version == 4:  # (a form inet_pton refuses, e.g. with leading zeros)
        return {"ip_str": str(address), "ip": int(address)}
    return {"ipv6": str(address)}


class _Rejoined(io.RawIOBase):
    """``head`` (already read from ``rest``) followed by what is left of ``rest``."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self.head, self.rest = memoryview(head), rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # (typed as RawIOBase's)
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def peek(stream: IO[bytes]) -> tuple[bytes, IO[bytes]]:
    """The first HEAD bytes of ``stream`` and a stream that reads it from its start again."""
    head = stream.read(HEAD)
    return head, io.BufferedReader(_Rejoined(head, stream), 1 << 16)


def lines(stream: IO[bytes], first: int = 1) -> Iterator[tuple[int, bytes | None]]:
    """(line number from ``first``, the line without its end), None for a line past MAX_LINE (skipped)."""
    number = first - 1
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (more := stream.readline(1 << 20)) and not more.endswith(b"\n"):
                pass
            yield number, None
            continue
        yield number, line.rstrip(b"\r\n")


def text(data: bytes | str) -> str:
    """Tool output as text: UTF-8, else latin-1 (every byte kept as a character, none replaced)."""
    if isinstance(data, str):
        return data
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data.decode("latin-1")
