"""What an nmap run saw of a host besides its open ports (read by :mod:`.nmap`): a
:class:`~spyglass.server.ingest.formats.Seen` per host, which no store keeps as a banner.

- the host's ``<status state="up" reason="echo-reply" reason_ttl="64"/>`` (an ``nmap -sn`` sweep's
  hosts have nothing else), and how many ports of it were open;
- every port nmap listed that is not open, with its reason and TTL
  (``<state state="filtered" reason="no-response" reason_ttl="0"/>``: closed, filtered, unfiltered,
  open|filtered, closed|filtered);
- ``<extraports state="closed" count="995">`` and its ``<extrareasons reason="reset" count="995"
  proto="tcp" ports="1-21,23-79"/>`` (``ports`` since nmap 7.9x): the ports nmap counted rather
  than listed.

nmap's files are from the wild: every value is read defensively (words capped, numbers only
where digits, lists capped), and nothing here fails a host.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

WORD = 64  # characters of a state, reason or protocol kept
ARGS = 4096  # characters of the run's command line kept
RANGES = 4096  # characters of an extrareasons' list of ports kept
EXTRA = 16  # extraports (and reasons of each) kept of a host: nmap writes one or two


def seen(host: ET.Element, run: dict, ip: str, stamp: str, opened: int) -> dict:
    """The host's record: ``{"ip_str", "timestamp", "scan", "tool": {"name", "version", "args"},
    "state", "reason", "ttl", "open", "ports": [{"port", "transport", "state", "reason", "ttl"}],
    "extraports": [{"state", "count", "reasons": [{"reason", "count", "transport", "ports"}]}]}``."""
    status = host.find("status")
    attrib = status.attrib if status is not None else {}
    ports = []
    for port in host.iter("port"):
        state = port.find("state")
        number = _count(port.get("portid"))
        if state is None or number is None or number > 65535 or state.get("state") == "open":
            continue
        ports.append(
            {
                "port": number,
                "transport": _word(port.get("protocol")) or "tcp",
                "state": _word(state.get("state")),
                "reason": _word(state.get("reason")),
                "ttl": _count(state.get("reason_ttl")),
            }
        )
    return {
        "ip_str": ip,
        "timestamp": stamp,
        "scan": run["scan"],
        "tool": {"name": "nmap", "version": _word(run.get("version")), "args": _text(run.get("args"), ARGS)},
        "state": _word(attrib.get("state")),
        "reason": _word(attrib.get("reason")),
        "ttl": _count(attrib.get("reason_ttl")),
        "open": opened,
        "ports": ports,
        "extraports": [_extra(e) for e in host.iter("extraports")][:EXTRA],
    }


def _extra(element: ET.Element) -> dict:
    reasons = [
        {
            "reason": _word(r.get("reason")),
            "count": _count(r.get("count")),
            "transport": _word(r.get("proto")),
            "ports": _text(r.get("ports"), RANGES),
        }
        for r in element.iter("extrareasons")
    ]
    return {"state": _word(element.get("state")), "count": _count(element.get("count")), "reasons": reasons[:EXTRA]}


def _text(value: object, most: int) -> str:
    return value[:most] if isinstance(value, str) else ""


def _word(value: object) -> str:
    return _text(value, WORD).strip()


def _count(text: object) -> int | None:
    """A number nmap wrote (a port, a TTL, a count); None for anything else, or past what JSON keeps exactly."""
    if not (isinstance(text, str) and text.isascii() and text.isdigit() and len(text) < 16):
        return None
    return int(text)
