"""Netblocks as an alert's ``filters.ip`` holds them: read, checked and measured. Shared by the
backend (which enforces the rules) and the dashboard (which checks a form as it is typed).

``Network`` and ``Address`` are the project's one name for an IPv4-or-IPv6 network and address."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class BadNetwork(ValueError):
    pass


def parse_networks(values: Any) -> list[Network]:
    """``filters.ip``: a list of IPs and CIDR ranges (a single string is taken as a list of one)."""
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not values:
        raise BadNetwork("filters.ip: give a list of one or more IPs or CIDR ranges")
    out = []
    for value in values:
        if not isinstance(value, str):
            raise BadNetwork(f"filters.ip: {json.dumps(value)} is not an IP or CIDR range")
        try:
            out.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError:
            raise BadNetwork(f"filters.ip: {value!r} is not an IP or CIDR range") from None
    return out


def network_size(networks: list[Network]) -> int:
    """How many addresses the networks cover, overlaps counted once: a sweep over integer spans
    (ipaddress.collapse_addresses compares address objects: seconds for 120,000 networks)."""
    total = 0
    for version in (4, 6):
        spans = sorted(
            (start := int(n.network_address), start + (1 << (n.max_prefixlen - n.prefixlen)))
            for n in networks
            if n.version == version
        )
        covered = 0  # every address below it is counted
        for start, stop in spans:
            if stop > covered:
                total += stop - max(start, covered)
                covered = stop
    return total


def networks_from_text(text: str) -> list[Network]:
    """What a person types in a form: IPs and CIDR ranges separated by commas or spaces."""
    return parse_networks(text.replace(",", " ").split())
