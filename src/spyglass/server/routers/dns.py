"""DNS: ``/dns/domain/{domain}`` from what the index knows, ``/dns/resolve`` and ``/dns/reverse``
asked of the configured name server (``serve --nameserver``; the system's otherwise).

Domain information is built from the hostnames banners carry: each hostname under the domain is
an ``A`` (or ``AAAA``) record of the banner's address, last seen when the banner was. Without
``history`` only the current banner of each service counts; with it, every banner ever stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request

from spyglass.models import DomainInfo, DomainRecord
from spyglass.netools.dns import Resolver
from spyglass.netools.targets import HOSTNAME_PATTERN, is_hostname, is_ip
from spyglass.server.auth import Caller, caller
from spyglass.server.deps import Banners
from spyglass.server.errors import ApiError, bad_request, not_found, responses
from spyglass.server.routers.geonet import UNKNOWN_LOCATION

router = APIRouter()

PAGE_SIZE = 100
MAX_BANNERS = 5_000  # the newest banners of a domain that its records are built from
MAX_NAMES = 100  # names (or addresses) one resolve (or reverse) call may ask for
RecordType = Literal["A", "AAAA", "CNAME", "NS", "SOA", "MX", "TXT"]
FAILED = ("TIMEOUT", "SERVFAIL", "ERROR")  # lookups the name server did not answer


def last_seen(timestamp: Any) -> str:
    """A banner's timestamp as ISO 8601 with a zone offset (stored ones are UTC, often naive)."""
    try:
        when = datetime.fromisoformat(str(timestamp))
    except ValueError:
        return str(timestamp)
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).isoformat()


def names_of(value: Any) -> list[str]:
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


@router.get(
    "/dns/domain/{domain}",
    response_model=DomainInfo,
    response_model_exclude_unset=True,
    summary="Subdomains and records of a domain, from the index (1 query credit)",
    responses=responses(402, 404),
)
def domain_info(
    banners: Banners,
    domain: str = Path(..., json_schema_extra={"pattern": f"^{HOSTNAME_PATTERN}$", "maxLength": 253}),
    history: bool = False,
    type: RecordType | None = None,
    page: int = Query(1, ge=1),
    who: Caller = Depends(caller),
) -> DomainInfo:
    domain = domain.strip().lower().rstrip(".")
    if not is_hostname(domain):
        raise bad_request(f"Invalid domain: {domain!r} is not a domain name")
    records = domain_records(domain, banners.under_domain(domain, history, MAX_BANNERS))
    if not records:
        raise not_found(f"No information available for {domain}")
    rows = sorted(records.items())
    shown = [r for r in rows if type is None or r[0][1] == type]
    start = (page - 1) * PAGE_SIZE
    info = DomainInfo(
        domain=domain,
        tags=["ipv6"] if any(kind == "AAAA" for (_, kind, _), _ in rows) else [],
        subdomains=sorted({sub for (sub, _, _), _ in rows if sub}),
        data=[
            DomainRecord(subdomain=sub, type=kind, value=value, last_seen=seen)
            for (sub, kind, value), seen in shown[start : start + PAGE_SIZE]
        ],
        more=len(shown) > start + PAGE_SIZE,
    )
    who.charge(query=1)
    return info


def listed(text: str, what: str, valid) -> list[str]:
    items = list(dict.fromkeys(item.strip() for item in text.split(",") if item.strip()))
    if not items:
        raise bad_request(f"Invalid request: {what}: give at least one")
    if len(items) > MAX_NAMES:
        raise bad_request(f"Invalid request: {what}: at most {MAX_NAMES} at a time, not {len(items)}")
    for item in items:
        if not valid(item):
            raise bad_request(f"Invalid request: {what}: {item!r} is not valid")
    return items


def resolver_of(request: Request) -> Resolver:
    settings = request.app.state.settings.geonet
    return Resolver(settings.nameservers, settings.dns_port, settings.dns_timeout)


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
        raise ApiError(502, "The DNS server did not answer: try again later")
    return {name: values for name, (values, _) in zip(names, answers, strict=True)}


@router.get(
    "/dns/resolve",
    response_model=dict[str, str | None],
    summary="The IP address of each hostname (null when it has none)",
    responses=responses(502),
)
async def resolve(
    request: Request,
    hostnames: str = Query(
        ...,
        description=f"comma-separated hostnames, at most {MAX_NAMES}",
        # declared for generated clients; checked below, with messages a person can read
        json_schema_extra={"pattern": f"^{HOSTNAME_PATTERN}(?:,{HOSTNAME_PATTERN}){{0,{MAX_NAMES - 1}}}$"},
    ),
    who: Caller = Depends(caller),
) -> dict[str, str | None]:
    names = listed(hostnames, "hostnames", is_hostname)
    found = await lookups(resolver_of(request), names, ("A", "AAAA"))
    return {name: values[0] if values else None for name, values in found.items()}


@router.get(
    "/dns/reverse",
    response_model=dict[str, list[str] | None],
    summary="The hostnames of each IP address (null when it has none)",
    responses=responses(502),
)
async def reverse(
    request: Request,
    ips: str = Query(..., description="comma-separated IP addresses"),
    who: Caller = Depends(caller),
) -> dict[str, list[str] | None]:
    return await lookups(resolver_of(request), listed(ips, "ips", is_ip), ("PTR",))
