"""The few members of an untyped banner that are required, read into one normalized view.

A banner is stored exactly as it came; only its address (``ip_str``, ``ip`` or ``ipv6``),
``port``, ``transport`` and ``timestamp`` are typed. :func:`normalize` reads those into a
:class:`Shape` and never changes the banner; everything else is read defensively where it is used.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from datetime import datetime
from typing import NamedTuple

from spyglass.netblocks import Address

FIRST_YEAR, LAST_YEAR = 1678, 2261  # the index's dates are nanoseconds in an i64
_FRACTION = re.compile(r"\.[0-9]{1,6}")


class BadBanner(ValueError):
    pass


def ip_address(value: str | int) -> Address:
    """``ipaddress.ip_address``, less the zone id it accepts (``fe80::1%eth0``): a zone names an
    interface of one machine, no store can hold it (tantivy and ClickHouse refuse it), and an
    address that is not the same everywhere is no key of a service. ValueError, as for any other."""
    address = ipaddress.ip_address(value)
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
        raise ValueError(f"{value!r} has a zone id (%{address.scope_id}): an address of one machine's interface")
    return address


class Shape(NamedTuple):  # a tuple: built ~20k times a second on import
    ip_str: str
    port: int
    transport: str
    stamp: str  # the timestamp as tantivy takes it (RFC 3339, UTC) and as banners are ordered by
    crawler: str | None  # the name of the crawler member (``_intel``, ``_shodan``...), if any


def crawler_member(b: dict) -> str | None:
    """``_intel``, or another namespace's member of the same kind (e.g. the original's)."""
    if "_intel" in b:
        return "_intel"
    for name, value in b.items():
        if (
            name.startswith("_")
            and name != "_id"
            and isinstance(value, dict)
            and ("crawler" in value or "module" in value)
        ):
            return name
    return None


def _address(b: dict) -> str:
    ip_str = b.get("ip_str")
    if isinstance(ip_str, str) and ip_str.count(".") == 3:
        try:  # inet_aton is much faster than ipaddress for the common IPv4 case
            if socket.inet_ntoa(socket.inet_aton(ip_str)) == ip_str:
                return ip_str
        except OSError:
            pass
    why = "no valid ip_str, ipv6 or ip"
    for candidate in (ip_str, b.get("ipv6"), b.get("ip")):
        if isinstance(candidate, bool) or not isinstance(candidate, (str, int)) or candidate == "":
            continue
        try:
            return str(ip_address(candidate))
        except ValueError as exc:
            if "zone id" in str(exc):
                why = "an address with a zone id (%...): no store can hold it"
    raise BadBanner(why)


def normalize(b: object) -> Shape:
    """The required members of banner ``b``; BadBanner says which one is missing or wrong."""
    if not isinstance(b, dict):
        raise BadBanner("not a JSON object")
    ip_str = _address(b)
    port = b.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise BadBanner("no valid port (an integer 0 to 65535)")
    stamp = b.get("timestamp")
    head = stamp[:19] if isinstance(stamp, str) else ""
    if len(head) != 19 or head[4] != "-" or head[10] != "T" or head[13] != ":" or not head.isascii():
        raise BadBanner("no ISO 8601 timestamp")
    try:
        when = datetime.fromisoformat(head)
    except ValueError:
        when = None
    if when is None:
        raise BadBanner(f"timestamp out of range: {head}")
    if not FIRST_YEAR <= when.year <= LAST_YEAR:
        raise BadBanner(f"timestamp out of range: {head} (the stores hold years {FIRST_YEAR} to {LAST_YEAR})")
    assert isinstance(stamp, str)  # checked above, by its head
    fraction = _FRACTION.match(stamp, 19)
    transport = b.get("transport")
    if transport is None:
        transport = "tcp"
    elif not isinstance(transport, str) or not transport:
        raise BadBanner("transport is not a name")
    elif not transport.islower():
        transport = transport.lower()
    return Shape(ip_str, port, transport, head + fraction.group() + "Z" if fraction else head + "Z", crawler_member(b))
