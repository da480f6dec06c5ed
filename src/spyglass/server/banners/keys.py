"""What identifies a banner and a service, the same in every store.

A banner's key hashes its address, port, transport, time and hash (so adding it twice adds
nothing); a service's key hashes its address, port and transport (the current banner of a service
is the newest one with that key).
"""

from __future__ import annotations

import hashlib
from typing import Any

from spyglass.server.banners.shape import Shape


def _hasher(text: str) -> Any:
    return hashlib.blake2b(text.encode(errors="surrogatepass"), digest_size=8)


def _key(hasher: Any) -> int:
    return int.from_bytes(hasher.digest(), "big") >> 1


def _service_text(ip: str, port: int, transport: str) -> str:
    return f"{ip}|{port}|{transport}"


def banner_key(b: dict, shape: Shape) -> int:
    """What identifies a banner (a re-import adds nothing): address, port, transport, time, hash."""
    return _key(_hasher(_service_text(shape.ip_str, shape.port, b.get("transport", "tcp")) + _rest(b)))


def _rest(b: dict) -> str:
    """What a banner's key holds past its service's: its time and hash."""
    return f"|{b['timestamp']}|{b.get('hash')}"


def keys(b: dict, shape: Shape) -> tuple[int, int]:
    """:func:`banner_key` and :func:`service_key`, the one hashed on from the other where the
    banner's transport is as the service's is written (nearly always): the import's hot path."""
    hasher = _hasher(_service_text(shape.ip_str, shape.port, shape.transport))
    service = _key(hasher)
    if b.get("transport", "tcp") != shape.transport:
        return banner_key(b, shape), service
    hasher.update(_rest(b).encode(errors="surrogatepass"))
    return _key(hasher), service


def service_key(shape: Shape) -> int:
    return service_key_of(shape.ip_str, shape.port, shape.transport)


def service_key_of(ip: str, port: int, transport: str) -> int:
    return _key(_hasher(_service_text(ip, port, transport)))
