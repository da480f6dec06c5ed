"""A probe's findings as a banner of the seed's shape: the members the crawler itself writes
(address, time, ``_intel`` metadata, hash, location and organization) around what the protocol
module extracted."""

from __future__ import annotations

import ipaddress
import socket
import uuid
from datetime import UTC, datetime

from spyglass import DEFAULT_NAMESPACE
from spyglass.netools.scantargets import Probe
from spyglass.server import geoip
from spyglass.server.scanner.probe import Found, signed_hash

CRAWLER = f"spyglass-{uuid.uuid5(uuid.NAMESPACE_DNS, socket.gethostname()).hex[:12]}"  # stable per machine

LOCAL_NETWORK = {
    "city": None,
    "region_code": None,
    "area_code": None,
    "dma_code": None,
    "postal_code": None,
    "country_code": None,
    "country_code3": None,
    "country_name": "Local network",
    "latitude": None,
    "longitude": None,
}
KNOWN_MEMBERS = ("location", "org", "isp", "asn", "hostnames", "domains")


def is_local(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.is_loopback or ip.is_private or ip.is_link_local


def about(address: str, last_seen: dict | None) -> dict:
    """What the backend knows of an address: a local one is the "Local network", with no guesses;
    another takes location and organization from its latest banner in the index, if any, else
    from the MaxMind-format databases ``serve --geoip`` names, if any."""
    if is_local(address):
        return {"location": dict(LOCAL_NETWORK), "org": None, "isp": None, "asn": None, "hostnames": [], "domains": []}
    known = {k: last_seen.get(k) for k in KNOWN_MEMBERS} if last_seen else {}
    located = geoip.lookup(address)  # where the operator named databases (serve --geoip)
    return {"hostnames": [], "domains": [], **located, **{k: v for k, v in known.items() if v is not None}}


def banner_of(
    probe: Probe, found: Found, scan_id: str, last_seen: dict | None = None, now: datetime | None = None
) -> dict:
    ip = ipaddress.ip_address(probe.ip)
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%f")
    banner: dict = {**about(str(ip), last_seen), **found.members}
    banner.update(  # what the crawler itself knows wins over anything a module extracted
        {
            "ip_str": str(ip),
            "port": probe.port,
            "transport": "tcp",
            "timestamp": stamp,
            "data": found.data,
            "hash": signed_hash(found.data),
            f"_{DEFAULT_NAMESPACE}": {
                "id": str(uuid.uuid4()),
                "module": found.module,
                "crawler": CRAWLER,
                "ptr": False,  # no reverse lookups: they would leave loopback through the system resolver
                "options": {"scan": scan_id},
            },
        }
    )
    if ip.version == 4:
        banner["ip"] = int(ip)
    else:
        banner["ipv6"] = str(ip)
    return banner
