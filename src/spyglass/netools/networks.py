"""The backend's own networks: which addresses no account (or, for geonet, nobody) may make it reach.

One rule for notifier destinations and geonet targets: an address is internal when it is loopback,
private, link-local, multicast, reserved, unspecified, carrier-grade NAT or site-local, and an IPv6
address that carries an IPv4 one (mapped, 6to4, Teredo, NAT64) is judged by that IPv4 address too,
since a relay or translator on the way may deliver it there. The operator opens networks with
``serve --notifier-allow`` and ``--geonet-allow``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from spyglass.netblocks import Address, Network

SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not "private" to ipaddress, not public
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known prefix: the last 32 bits are the IPv4 address
LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215: a site's own translators


def embedded(address: Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo server and client, NAT64)."""
    if address.version == 4:
        return []
    assert isinstance(address, ipaddress.IPv6Address)
    found = [a for a in (address.ipv4_mapped, address.sixtofour) if a is not None]
    if address.teredo is not None:
        found += address.teredo
    if address in NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def internal(address: Address) -> bool:
    """Whether ``address``, or an IPv4 address it carries, lies in a network of the machine's own."""
    return _internal(address) or any(_internal(inner) for inner in embedded(address))


def _internal(address: Address) -> bool:
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or (address.version == 4 and address in SHARED)
        or (address.version == 6 and (address.is_site_local or address in LOCAL_NAT64))
    )


def parse_address(text: str) -> Address:
    """An address as a resolver or a socket writes it (an IPv6 zone, ``%eth0``, dropped)."""
    return ipaddress.ip_address(text.split("%")[0])


class Reach:
    """The public internet, and the internal networks an operator opened (``allowed``)."""

    def __init__(self, allowed: Iterable[str | Network] = ()) -> None:
        self.allowed = [ipaddress.ip_network(n, strict=False) if isinstance(n, str) else n for n in allowed]

    def permitted(self, address: Address) -> bool:
        """Public, or opened: the address and every IPv4 address it carries."""
        return all(self._opened(a) or not _internal(a) for a in (address, *embedded(address)))

    def _opened(self, address: Address) -> bool:
        return any(address.version == n.version and address in n for n in self.allowed)
