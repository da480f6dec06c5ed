"""Where a notification may be sent: not into the backend's own networks, unless the operator says so.

A webhook URL is the account holder's to choose, so without this rule any account could make the
server send requests to its loopback, private or link-local neighbours, in any spelling
(``2130706433``, ``0x7f000001``, ``127.1``, ``[::ffff:127.0.0.1]``, a name that resolves there)
and read what answered from the notifier test. So a destination's name is resolved, every address
it resolves to must be public or inside ``serve --notifier-allow CIDR``, and the request goes to
the address that was checked (a second lookup could answer otherwise). This is checked when a
notifier is created or changed and again at every send.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not "private" to ipaddress, not public


class Refused(ValueError):
    """The destination lies in a network notifications may not reach (or cannot be resolved)."""


@dataclass(frozen=True)
class Pinned:
    """A URL to request with its host replaced by the address that was checked."""

    url: str
    host: str  # the Host header and the TLS server name: the name the URL gave
    auth: tuple[str, str] | None  # the URL's user:password, sent as Basic authentication


def internal(address: Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or (address.version == 4 and address in SHARED)
        or (address.version == 6 and address.is_site_local)
    )


class Destinations:
    def __init__(self, allowed: list[Network]) -> None:
        self.allowed = allowed

    def permitted(self, address: Address) -> bool:
        return not internal(address) or any(address.version == n.version and address in n for n in self.allowed)

    async def pin(self, url: str) -> Pinned:
        """The URL aimed at a checked address of its host; :class:`Refused` if none may be used."""
        parts = urlsplit(url)
        host = parts.hostname
        if not host:
            raise Refused("the URL names no host")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise Refused(f"{host} does not resolve") from exc
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]
        if not addresses or not all(self.permitted(a) for a in addresses):
            raise Refused(f"{host} is in a network this backend does not send notifications to")
        auth = (parts.username or "", parts.password or "") if parts.username is not None else None
        return Pinned(_with_host(parts, addresses[0], port), parts.netloc.rpartition("@")[2], auth)

    def check_literal(self, url: str) -> None:
        """At create and edit, without a lookup: a URL whose host is an address (in any spelling the
        system's resolver reads) must be a permitted one. Names are checked at every send."""
        host = urlsplit(url).hostname or ""
        try:
            infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
        except (OSError, UnicodeError):
            if host.lower().rstrip(".") in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
                if not self.permitted(ipaddress.ip_address("127.0.0.1")):
                    raise Refused(f"{host} is in a network this backend does not send notifications to") from None
            return
        for info in infos:
            if not self.permitted(ipaddress.ip_address(str(info[4][0]).split("%")[0])):
                raise Refused(f"{host} is in a network this backend does not send notifications to")


def _with_host(parts: SplitResult, address: Address, port: int) -> str:
    shown = f"[{address}]" if address.version == 6 else str(address)
    netloc = f"{shown}:{port}"  # user:password@ goes in Pinned.auth
    return parts._replace(netloc=netloc).geturl()
