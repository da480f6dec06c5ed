"""What a scan asks for: the ``ips`` form field read, checked and expanded into probes.

``ips`` is a comma list of addresses and CIDR netblocks (each scanned on the crawler's ports) or a
JSON object mapping each address or netblock to ``[port, protocol]`` pairs; beyond the seed, a bare
port number there means "this port, any protocol" (the module is chosen by port, then by what the
service says first). A spec is kept as JSON
in the scan's row and expanded lazily, in the same order every time: a resumed scan skips the
probes it had finished by their position, and a /16 never sits in memory as a list.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from spyglass.netblocks import Network

DEFAULT_ALLOWED = ("127.0.0.0/8", "::1/128")


class BadTargets(ValueError):
    """The ``ips`` field cannot be read (the message says which part and why)."""


class NotAllowed(ValueError):
    """A target lies outside the networks this backend may scan."""


@dataclass(frozen=True)
class Probe:
    ip: str
    port: int
    protocol: str | None  # None: the crawler picks by port, then by what the service says


@dataclass
class ScanSpec:
    """Netblocks on the default ports, and netblocks on given ``(port, protocol)`` pairs."""

    networks: list[str] = field(default_factory=list)
    services: dict[str, list[tuple[int, str | None]]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"networks": self.networks, "services": self.services})

    @classmethod
    def from_json(cls, text: str) -> ScanSpec:
        body = json.loads(text)
        return cls(body["networks"], {k: [(int(p), n) for p, n in v] for k, v in body["services"].items()})

    def blocks(self) -> list[Network]:
        return [network(n) for n in [*self.networks, *self.services]]

    def addresses(self) -> int:
        """How many distinct addresses the scan covers (what it costs in scan credits)."""
        return sum(n.num_addresses for n in _collapse(self.blocks()))

    def probes(self, default_ports: Iterable[int]) -> Iterator[Probe]:
        ports = sorted(default_ports)
        for text in self.networks:
            for ip in network(text):
                for port in ports:
                    yield Probe(str(ip), port, None)
        for text, pairs in self.services.items():
            for ip in network(text):
                for port, protocol in pairs:
                    yield Probe(str(ip), port, protocol)

    def probe_count(self, default_ports: int) -> int:
        return sum(network(n).num_addresses * default_ports for n in self.networks) + sum(
            network(n).num_addresses * len(pairs) for n, pairs in self.services.items()
        )


def network(text: str) -> Network:
    try:
        return ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise BadTargets(f"{text.strip()!r} is not an IP address or CIDR netblock") from None


def _collapse(blocks: list[Network]) -> list[Network]:
    v4 = [b for b in blocks if b.version == 4]
    v6 = [b for b in blocks if b.version == 6]
    return [*ipaddress.collapse_addresses(v4), *ipaddress.collapse_addresses(v6)]


def parse_ips(text: str, protocols: Iterable[str] | None) -> ScanSpec:
    """Read the ``ips`` form field; BadTargets says what is wrong with it. ``protocols``: the
    names a pair may use (None: any, when the list is not known yet)."""
    text = text.strip()
    if not text:
        raise BadTargets("no IPs given: 'ips' is a comma list of IPs or netblocks, or a JSON object")
    if text.startswith("{"):
        return _parse_services(text, None if protocols is None else set(protocols))
    parts = [p.strip() for p in text.split(",")]
    if any(not p for p in parts):
        raise BadTargets("an empty item in the list of IPs (two commas in a row?)")
    return ScanSpec(networks=[str(n) for n in _collapse([network(p) for p in parts])])  # overlaps probed once


def _parse_services(text: str, protocols: set[str] | None) -> ScanSpec:
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise BadTargets(f"'ips' looks like JSON but is not: {exc}") from None
    except RecursionError:  # thousands of nested brackets: Python's decoder gives up
        raise BadTargets("'ips' as JSON is nested too deeply: give [port, protocol] pairs") from None
    if not isinstance(body, dict) or not body:
        raise BadTargets("'ips' as JSON is an object mapping each address to [port, protocol] pairs")
    services: dict[str, list[tuple[int, str | None]]] = {}
    for address, pairs in body.items():
        block = str(network(address))
        if not isinstance(pairs, list) or not pairs:
            raise BadTargets(f"{address}: give a list of [port, protocol] pairs")
        checked = []
        for pair in pairs:
            if isinstance(pair, int) and not isinstance(pair, bool):
                pair = [pair, None]
            if not (isinstance(pair, list) and len(pair) == 2):
                raise BadTargets(f"{address}: {json.dumps(pair)} is not a [port, protocol] pair")
            port, protocol = pair
            if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
                raise BadTargets(f"{address}: port {json.dumps(port)} is not a port number (1-65535)")
            if protocol is not None and not isinstance(protocol, str):
                # a list or object here was a TypeError (unhashable) in the check below: a 500
                raise BadTargets(f"{address}: protocol {json.dumps(protocol)} is not a protocol's name")
            if protocol is not None and protocols is not None and protocol not in protocols:
                known = ", ".join(sorted(protocols))
                raise BadTargets(f"{address}: unknown protocol {json.dumps(protocol)}: one of {known}")
            checked.append((port, protocol))
        services.setdefault(block, []).extend(dict.fromkeys(checked))
    return ScanSpec(services=services)


def check_allowed(spec: ScanSpec, allowed: list[Network]) -> None:
    """NotAllowed, naming the setting, when any target lies outside ``allowed``."""
    for block in spec.blocks():
        if not any(block.version == a.version and block.subnet_of(a) for a in allowed):  # type: ignore[arg-type]
            shown = ", ".join(str(a) for a in allowed) or "none"
            raise NotAllowed(
                f"{block} is outside the networks this backend may scan ({shown}); "
                "the backend's operator allows more with SPYGLASS_SCAN_ALLOW=CIDR,... in its "
                "environment (the dashboard's backend too) or 'spyglass serve --scan-allow CIDR'"
            )


def scan_request(targets: list[str], ports: str = "") -> str | dict[str, list]:
    """What a client sends as ``ips`` for ``targets`` (addresses and netblocks) and ``ports``: a
    comma list of ports and ranges of ports (any protocol) and ``port/protocol`` pairs, e.g.
    ``"1-200,443/https"``; none means the crawler's ports. ValueError names a bad part."""
    blocks = [str(network(t)) for t in targets if t.strip()]
    if not blocks:
        raise BadTargets("no targets: give IP addresses or CIDR netblocks")
    pairs: list = []
    for part in ports.replace(" ", ",").split(","):
        if not part.strip():
            continue
        numbers, slash, protocol = part.strip().partition("/")
        if slash and not protocol:
            raise BadTargets(f"{part.strip()!r}: a protocol after the '/', e.g. 443/https")
        for port in _port_range(numbers):
            pairs.append([port, protocol] if slash else port)
    if not pairs:
        return ",".join(blocks)
    return {block: pairs for block in blocks}


def _port_range(text: str) -> range:
    """``80`` or ``1-200``: the ports it names (1-65535); BadTargets otherwise."""
    first, dash, last = text.partition("-")
    for port in (first, last) if dash else (first,):
        if not port.isdigit() or not 1 <= int(port) <= 65535:
            raise BadTargets(f"{port!r} is not a port (1-65535)")
    low, high = int(first), int(last if dash else first)
    if high < low:
        raise BadTargets(f"{text!r}: a range of ports runs from the lower, e.g. 1-200")
    return range(low, high + 1)


def request_spec(request: str | dict[str, list], protocols: Iterable[str] | None) -> ScanSpec:
    """The spec a server reads from ``request`` (what a form shows before submitting: the size)."""
    text = request if isinstance(request, str) else json.dumps(request)
    return parse_ips(text, protocols)
