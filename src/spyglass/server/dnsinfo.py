"""DNS from what the index knows and from the configured name server (the routes of
:mod:`spyglass.server.routers.dns` are its HTTP face).

Domain information is built from the hostnames banners carry: each hostname under the domain is
an ``A`` (or ``AAAA``) record of the banner's address, last seen when the banner was. Without
``history`` only the current banner of each service counts; with it, every banner ever stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime

from spyglass.models import DomainInfo, DomainRecord
from spyglass.netools.dns import Resolver
from spyglass.netools.targets import is_ip
from spyglass.server.banners.store import BannerStore
from spyglass.server.geonet import UNKNOWN_LOCATION

PAGE_SIZE = 100
MAX_BANNERS = 5_000  # the newest banners of a domain that its records are built from
FAILED = ("TIMEOUT", "SERVFAIL", "ERROR")  # lookups the name server did not answer


class NameServerSilent(RuntimeError):
    """The name server answered none of the lookups."""


def last_seen(timestamp: object) -> str:
    """A banner's timestamp as ISO 8601 with a zone offset (stored ones are UTC, often naive)."""
    try:
        when = datetime.fromisoformat(str(timestamp))
    except ValueError:
        return str(timestamp)
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()


def names_of(value: object) -> list[str]:
    return [v.lower().rstrip(".") for v in value if isinstance(v, str)] if isinstance(value, list) else []


def domain_records(domain: str, banners: Iterable[dict]) -> dict[tuple[str, str, str], str]:
    """(subdomain, type, value) -> last seen, for every hostname under ``domain``."""
    records: dict[tuple[str, str, str], str] = {}
    suffix = "." + domain
    for banner in banners:
        address = banner.get("ip_str")
        if not isinstance(address, str) or not is_ip(address):
            continue
        kind = "AAAA" if ":" in address else "A"
        seen = last_seen(banner.get("timestamp"))
        for name in names_of(banner.get("hostnames")):
            if name == domain or name.endswith(suffix):
                key = (name[: -len(suffix)] if name != domain else "", kind, address)
                records[key] = max(records.get(key, ""), seen)
    return records


def domain_page(banners: BannerStore, domain: str, history: bool, kind: str | None, page: int) -> DomainInfo | None:
    """A page of ``domain``'s records (of type ``kind`` if given), or None when the index knows none."""
    records = domain_records(domain, banners.under_domain(domain, history, MAX_BANNERS))
    if not records:
        return None
    rows = sorted(records.items())
    shown = [r for r in rows if kind is None or r[0][1] == kind]
    start = (page - 1) * PAGE_SIZE
    return DomainInfo(
        domain=domain,
        tags=["ipv6"] if any(kind == "AAAA" for (_, kind, _), _ in rows) else [],
        subdomains=sorted({sub for (sub, _, _), _ in rows if sub}),
        data=[
            DomainRecord(subdomain=sub, type=kind, value=value, last_seen=seen)
            for (sub, kind, value), seen in shown[start : start + PAGE_SIZE]
        ],
        more=len(shown) > start + PAGE_SIZE,
    )


async def lookups(resolver: Resolver, names: list[str], rtypes: tuple[str, ...]) -> dict[str, list[str] | None]:
    """Each name's values of the first of ``rtypes`` that has some, or None; a 502 if the name
    server answered none of them."""

    async def one(name: str) -> tuple[list[str] | None, bool]:
        failed = False
        for rtype in rtypes:
            result = await resolver.query(name, rtype, UNKNOWN_LOCATION)
            failed = result.status in FAILED
            if result.answers:
                return [a.value for a in result.answers if a.type == rtype] or None, False
        return None, failed

    answers = await asyncio.gather(*(one(name) for name in names))
    if all(failed for _, failed in answers):
        raise NameServerSilent("The DNS server did not answer: try again later")
    return {name: values for name, (values, _) in zip(names, answers, strict=True)}
