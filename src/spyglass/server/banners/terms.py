"""Text as words and networks as address ranges, as every store matches them.

:func:`words` splits free text and TEXT filters as tantivy's default tokenizer does (the embedded
index) and as the ClickHouse store's expressions do; :func:`ip_ranges` is a ``net:`` filter as the
ranges of addresses the stores hold (IPv4 as IPv4-mapped IPv6).
"""

from __future__ import annotations

import ipaddress
import re

_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # as tantivy's default tokenizer splits, lower-cased below


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if len(w) <= 40]


_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")  # how the stores hold IPv4 addresses


def ip_ranges(net: ipaddress.IPv4Network | ipaddress.IPv6Network) -> list[tuple]:
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
