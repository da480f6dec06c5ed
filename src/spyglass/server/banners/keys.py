"""What identifies a banner and a service, the same in every store.

A banner's key hashes its address, port, transport, time and hash (so adding it twice adds
nothing); a service's key hashes its address, port and transport (the current banner of a service
is the newest one with that key). An account's private scan result (scanner/private.py) is of a
service of its own, the account's: it never replaces the banner everyone reads of that address
and port (an nmap import's went out of every search once the account scanned the same port).
"""

from __future__ import annotations

import hashlib
from typing import Any

from spyglass.query.pivot import PRIVATE_SCAN
from spyglass.server.banners.shape import Shape


def _hasher(text: str) -> Any:
    return hashlib.blake2b(text.encode(errors="surrogatepass"), digest_size=8)


def _key(hasher: Any) -> int:
    return int.from_bytes(hasher.digest(), "big") >> 1


PRIVATE = PRIVATE_SCAN  # the tag of a result only its account reads (scanner/private.py)


def _service_text(ip: str, port: int, transport: str, private: str = "") -> str:
    return f"{ip}|{port}|{transport}{private}"


def _private(b: dict, shape: Shape) -> str:
    """ "" for a banner everyone reads; else what makes its service its account's own."""
    tags = b.get("tags")
    if tags.__class__ is not list or PRIVATE not in tags:
        return ""
    member = b.get(shape.crawler) if shape.crawler else None
    options = member.get("options") if isinstance(member, dict) else None
    return f"|{PRIVATE}:{options.get('account') if isinstance(options, dict) else None}"


def banner_key(b: dict, shape: Shape) -> int:
    """What identifies a banner (a re-import adds nothing): address, port, transport, time, hash."""
    service = _service_text(shape.ip_str, shape.port, b.get("transport", "tcp"), _private(b, shape))
    return _key(_hasher(service + _rest(b)))


def _rest(b: dict) -> str:
    """What a banner's key holds past its service's: its time and hash."""
    return f"|{b['timestamp']}|{b.get('hash')}"


def keys(b: dict, shape: Shape) -> tuple[int, int]:
    """:func:`banner_key` and :func:`service_key`, the one hashed on from the other where the
    banner's transport is as the service's is written (nearly always): the import's hot path."""
    hasher = _hasher(_service_text(shape.ip_str, shape.port, shape.transport, _private(b, shape)))
    service = _key(hasher)
    if b.get("transport", "tcp") != shape.transport:
        return banner_key(b, shape), service
    hasher.update(_rest(b).encode(errors="surrogatepass"))
    return _key(hasher), service


def service_key(b: dict, shape: Shape) -> int:
    return _key(_hasher(_service_text(shape.ip_str, shape.port, shape.transport, _private(b, shape))))


def public_service_key(b: dict, shape: Shape) -> int | None:
    """A private scan result's address and port as everyone reads them (the service an import or
    a public banner is of); None for a banner everyone reads. A private result is of a new service
    only when neither is known (an alert's new_service: newcomer trial 22)."""
    return service_key_of(shape.ip_str, shape.port, shape.transport) if _private(b, shape) else None


def service_key_of(ip: str, port: int, transport: str) -> int:
    return _key(_hasher(_service_text(ip, port, transport)))
