"""DNS over HTTP: ``/dns/domain/{domain}`` from what the index knows, ``/dns/resolve`` and
``/dns/reverse`` asked of the configured name server (``serve --nameserver``; the system's
otherwise). The work is :mod:`spyglass.server.dnsinfo`'s."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Path, Query

from spyglass.models import DomainInfo
from spyglass.netools.dns import Resolver
from spyglass.netools.targets import HOSTNAME_PATTERN, IP_PATTERN, is_hostname, is_ip
from spyglass.server.deps import AppSettings, Banners, Charge, Who
from spyglass.server.dnsinfo import NameServerSilent, domain_page, lookups
from spyglass.server.errors import ApiError, bad_request, not_found, responses
from spyglass.server.settings import Settings

router = APIRouter()

MAX_NAMES = 100  # names (or addresses) one resolve (or reverse) call may ask for
RecordType = Literal["A", "AAAA", "CNAME", "NS", "SOA", "MX", "TXT"]


@router.get(
    "/dns/domain/{domain}",
    response_model=DomainInfo,
    response_model_exclude_unset=True,
    summary="Subdomains and records of a domain, from the index (1 query credit)",
    responses=responses(402, 404),
)
def domain_info(
    banners: Banners,
    charge: Charge,
    domain: str = Path(..., json_schema_extra={"pattern": f"^{HOSTNAME_PATTERN}$", "maxLength": 253}),
    history: bool = False,
    type: RecordType | None = None,
    page: int = Query(1, ge=1),
) -> DomainInfo:
    domain = domain.strip().lower().rstrip(".")
    if not is_hostname(domain):
        raise bad_request(f"Invalid domain: {domain!r} is not a domain name")
    info = domain_page(banners, domain, history, type, page)
    if info is None:
        raise not_found(f"No information available for {domain}")
    charge(query=1)
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


def resolver_of(settings: Settings) -> Resolver:
    geonet = settings.geonet
    return Resolver(geonet.nameservers, geonet.dns_port, geonet.dns_timeout)


# One name of a list: at most 253 characters, as each is checked (a list's pattern has no maxLength).
LISTED_NAME = rf"(?=[^,]{{1,253}}(?:,|$)){HOSTNAME_PATTERN}"


@router.get(
    "/dns/resolve",
    response_model=dict[str, str | None],
    summary="The IP address of each hostname (null when it has none)",
    responses=responses(502),
)
async def resolve(
    settings: AppSettings,
    who: Who,
    hostnames: str = Query(
        ...,
        description=f"comma-separated hostnames, at most {MAX_NAMES}",
        # declared for generated clients; checked below, with messages a person can read
        json_schema_extra={"pattern": f"^{LISTED_NAME}(?:,{LISTED_NAME}){{0,{MAX_NAMES - 1}}}$"},
    ),
) -> dict[str, str | None]:
    found = await ask(resolver_of(settings), listed(hostnames, "hostnames", is_hostname), ("A", "AAAA"))
    return {name: values[0] if values else None for name, values in found.items()}


@router.get(
    "/dns/reverse",
    response_model=dict[str, list[str] | None],
    summary="The hostnames of each IP address (null when it has none)",
    responses=responses(502),
)
async def reverse(
    settings: AppSettings,
    who: Who,
    ips: str = Query(
        ...,
        description=f"comma-separated IP addresses, at most {MAX_NAMES}",
        json_schema_extra={"pattern": f"^{IP_PATTERN}(?:,{IP_PATTERN}){{0,{MAX_NAMES - 1}}}$"},
    ),
) -> dict[str, list[str] | None]:
    return await ask(resolver_of(settings), listed(ips, "ips", is_ip), ("PTR",))


async def ask(resolver: Resolver, names: list[str], rtypes: tuple[str, ...]) -> dict[str, list[str] | None]:
    try:
        return await lookups(resolver, names, rtypes)
    except NameServerSilent as exc:
        raise ApiError(502, str(exc)) from None
