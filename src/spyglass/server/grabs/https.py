"""HTTPS: the TLS handshake's ``ssl`` member, then the http module over TLS."""

from __future__ import annotations

from . import http
from .base import Found, NotTLS, Target, insecure_tls
from .tls import grab_ssl


async def grab(t: Target) -> Found | None:
    member = await grab_ssl(t)
    if member is None:
        return None
    try:
        found = await http.grab(t, insecure_tls(["http/1.1"]))
    except NotTLS:
        found = None
    if found is None:  # TLS, but not HTTP inside: still a TLS service worth recording
        found = Found("https", "", {})
    found.members["ssl"] = member
    return found
