"""Networks as address ranges, as every store matches them: :func:`ip_ranges` is a ``net:``
filter as the ranges of addresses the stores hold (IPv4 as IPv4-mapped IPv6). Text as words, for
the stores and the in-memory matcher alike, is :mod:`spyglass.query.words`.

TOOL_TAGS are the tags the importer gives every banner of a scanner's output (formats/): a fact
of the service's history, not only of one banner, so that ``tag:nmap`` finds every service an nmap
run found, also once another tool has scanned it since (its current banner is the other tool's).
"""

from __future__ import annotations

import ipaddress

from spyglass.netblocks import Network

_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")  # how the stores hold IPv4 addresses
TOOL_TAGS = frozenset(("nmap", "masscan", "zmap", "zgrab2"))  # the formats' names (formats/)


def tool_tags(values: tuple) -> list[str]:
    """The values of a ``tag:`` filter that name a tool (any case), lower-cased."""
    return [t for t in (str(v).lower() for v in values) if t in TOOL_TAGS]


def ip_ranges(net: Network) -> list[tuple]:
    """Address ranges of ``net`` as the stores hold them: an IPv6 network that is not itself
    IPv4-mapped leaves out the mapped block, so ``net:::/0`` means IPv6 only."""
    if isinstance(net, ipaddress.IPv4Network) or net.subnet_of(_MAPPED) or not net.overlaps(_MAPPED):
        return [(net.network_address, net.broadcast_address)]
    low, high = net.network_address, net.broadcast_address
    ranges: list[tuple] = []
    if low < _MAPPED.network_address:
        ranges.append((low, _MAPPED.network_address - 1))
    if high > _MAPPED.broadcast_address:
        ranges.append((_MAPPED.broadcast_address + 1, high))
    return ranges
