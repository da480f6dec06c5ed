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


def is_ip(value: str) -> bool:
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


def check_target(value: str) -> str:
    """``value`` if it is an IP address or a well-formed hostname; ValueError otherwise."""
    value = value.strip()
    if is_ip(value) or is_hostname(value):
        return value
    raise ValueError("not an IP address or a hostname")
