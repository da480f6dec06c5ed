"""What a ping or DNS target may be: an IP address (v4 or v6) or a hostname."""

from __future__ import annotations

import ipaddress
import re

_LABEL = re.compile(r"^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$")
# The same rule as a pattern an OpenAPI document can carry (no look-arounds); with a length of at
# most 253, what it matches is_hostname takes.
HOSTNAME_PATTERN = (
    r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?"
)


# An IPv4 or IPv6 address as the API document says one (RFC 3986's grammar: every spelling
# ipaddress takes, but a zone id), and a network: one with a prefix length.
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_V4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H = "[0-9A-Fa-f]{1,4}"
_LS32 = rf"(?:{_H}:{_H}|{_V4})"
_V6 = "|".join(
    [
        rf"(?:{_H}:){{6}}{_LS32}",
        rf"::(?:{_H}:){{5}}{_LS32}",
        rf"(?:{_H})?::(?:{_H}:){{4}}{_LS32}",
        *(rf"(?:(?:{_H}:){{0,{n}}}{_H})?::(?:{_H}:){{{3 - n}}}{_LS32}" for n in (1, 2)),
        rf"(?:(?:{_H}:){{0,3}}{_H})?::{_H}:{_LS32}",
        rf"(?:(?:{_H}:){{0,4}}{_H})?::{_LS32}",
        rf"(?:(?:{_H}:){{0,5}}{_H})?::{_H}",
        rf"(?:(?:{_H}:){{0,6}}{_H})?::",
    ]
)
IP_PATTERN = rf"(?:{_V4}|{_V6})"
NETWORK_PATTERN = rf"(?:{_V4}(?:/(?:3[0-2]|[12]?[0-9]))?|(?:{_V6})(?:/(?:12[0-8]|1[01][0-9]|[1-9]?[0-9]))?)"


def is_ip(value: str) -> bool:
    """An IPv4 or IPv6 address as IP_PATTERN has it: with no scope (``fe80::1%lo`` names an
    interface of one machine; the reverse look-up of one was a 500: attacker trial 7)."""
    if "%" in value:
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def is_hostname(value: str) -> bool:
    name = value[:-1] if value.endswith(".") else value
    if not name or len(name) > 253:
        return False
    return all(_LABEL.match(label) for label in name.split("."))


_NUMBERS = re.compile(r"[0-9]+(?:\.[0-9]+)*\.?")


def bad_address(value: str) -> bool:
    """Numbers and dots that are no IP address (``999.999.1.1``, ``10.0.0``): meant as an address,
    though a hostname's rules would take them (no top-level domain is all digits, RFC 3696)."""
    return bool(_NUMBERS.fullmatch(value)) and not is_ip(value)


def check_target(value: str) -> str:
    """``value`` if it is an IP address or a well-formed hostname; ValueError otherwise."""
    value = value.strip()
    if bad_address(value):
        raise ValueError("not a valid IP address (four numbers from 0 to 255)")
    if is_ip(value) or is_hostname(value):
        return value
    raise ValueError("not an IP address or a hostname")
