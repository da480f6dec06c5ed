"""Netblocks as an alert's ``filters.ip`` holds them: read, checked and measured. Shared by the
backend (which enforces the rules) and the dashboard (which checks a form as it is typed).

``Network`` and ``Address`` are the project's one name for an IPv4-or-IPv6 network and address;
:class:`Netblock` is an alert's network as integers, cheap to make by the hundred thousand."""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from spyglass.safetext import cut_said

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


SHOWN = 64  # characters of a refused value its message repeats (16 MiB came back whole, escaped: trial 7)


class BadNetwork(ValueError):
    pass


class Netblock(NamedTuple):
    """One network of an alert as integers: its first address and prefix length. An ipaddress
    network is costly to make, and an alert may hold 120,000: parsing them as objects held the
    interpreter while other accounts' notifications waited."""

    version: int  # 4 or 6
    start: int  # the network's first address, host bits cleared
    prefixlen: int

    @property
    def max_prefixlen(self) -> int:
        return 32 if self.version == 4 else 128

    @property
    def num_addresses(self) -> int:
        return 1 << (self.max_prefixlen - self.prefixlen)

    def __contains__(self, address: object) -> bool:
        if not isinstance(address, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
            return False
        return address.version == self.version and self.start <= int(address) < self.start + self.num_addresses

    def __str__(self) -> str:
        """As an alert keeps it: the network, or a single address without its prefix length."""
        first = _v4_text(self.start) if self.version == 4 else str(ipaddress.IPv6Address(self.start))
        return first if self.prefixlen == self.max_prefixlen else f"{first}/{self.prefixlen}"


# A dotted quad and a prefix length written the one way (no leading zeros): read with integers.
# Anything else (IPv6, a netmask, "/08") goes to ipaddress, which decides as it always did.
_OCTET = r"(0|[1-9][0-9]{0,2})"
_PLAIN_V4 = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}(?:/(3[0-2]|[12]?[0-9]))?", re.ASCII)


def _v4_text(n: int) -> str:
    return f"{n >> 24}.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


def parse_netblock(text: str) -> Netblock:
    """``text`` as ``ipaddress.ip_network(text.strip(), strict=False)`` reads it (host bits
    cleared); ValueError where it would raise."""
    text = text.strip()
    if "%" in text:  # a zone (fe80::1%lo) names an interface of one machine: ip_network dropped it
        raise ValueError(f"{text!r} has a zone")
    plain = _PLAIN_V4.fullmatch(text)
    if plain:
        a, b, c, d, prefix = plain.groups()
        octets = int(a), int(b), int(c), int(d)
        if max(octets) <= 255:
            length = int(prefix) if prefix else 32
            value = (octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]
            return Netblock(4, value & ~((1 << (32 - length)) - 1), length)
    network = ipaddress.ip_network(text, strict=False)
    return Netblock(network.version, int(network.network_address), network.prefixlen)


def parse_networks(values: Any) -> list[Netblock]:
    """``filters.ip``: a list of IPs and CIDR ranges (a single string is taken as a list of one),
    each network once, in the order first given: an alert kept every repeat, so one address given
    500,000 times (its plan counting it once) grew the account's alerts without limit (attacker
    trial 5)."""
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not values:
        raise BadNetwork("filters.ip: give a list of one or more IPs or CIDR ranges")
    out = []
    for value in values:
        if not isinstance(value, str):
            raise BadNetwork(f"filters.ip: {cut_said(json.dumps(value), SHOWN)} is not an IP or CIDR range")
        try:
            out.append(parse_netblock(value))
        except ValueError:
            raise BadNetwork(f"filters.ip: {cut_said(value, SHOWN, repr)} is not an IP or CIDR range") from None
    return list(dict.fromkeys(out))


def network_size(networks: Iterable[Netblock]) -> int:
    """How many addresses the networks cover, overlaps counted once: a sweep over integer spans."""
    total = 0
    for version in (4, 6):
        bits = 32 if version == 4 else 128
        spans = sorted((n.start, n.start + (1 << (bits - n.prefixlen))) for n in networks if n.version == version)
        covered = 0  # every address below it is counted
        for start, stop in spans:
            if stop > covered:
                total += stop - max(start, covered)
                covered = stop
    return total


def networks_from_text(text: str) -> list[Netblock]:
    """What a person types in a form: IPs and CIDR ranges separated by commas or spaces."""
    return parse_networks(text.replace(",", " ").split())
