"""Search and host lookup: ``/{ns}/host/...`` over the banner index, and what scans saw besides
banners (a query with ``host.state:`` or ``port.state:``, and a host's ``seen``: banners/seen.py)."""

from __future__ import annotations

import ipaddress

from fastapi import APIRouter, Path, Query, Response

from spyglass.exactjson import dumps, loads
from spyglass.models import HostRecord, SearchResponse, SearchTokens, SelectedFields
from spyglass.query import FACETS, FILTERS, Facet, tokens
from spyglass.query import Query as Parsed
from spyglass.server.banners import seen
from spyglass.server.banners.store import BannerStore
from spyglass.server.deps import AppSettings, Banners, Charge, Scans, Who
from spyglass.server.errors import bad_request, not_found, responses
from spyglass.server.memory import give_back_soon
from spyglass.server.routers.common import (
    charge_for_facets,
    facets_query,
    identifying,
    json_response,
    parse_facet_spec,
    parse_query,
    scoped_query,
    search_query,
)
from spyglass.server.scanner.private import visible
from spyglass.server.shaping import for_namespace, host_record, only_fields, seen_only, served

router = APIRouter()
SEARCH_QUERY = search_query("a search query")
FACETS_QUERY = facets_query(FACETS, "GET /{namespace}/host/search/facets")


def out(namespace: str, banners: list[dict]) -> list[dict]:
    return [for_namespace(b, namespace) for b in banners]


@router.get(
    "/host/count",
    response_model=SearchResponse,
    summary="Count matches (free; identifying facets such as ip cost a query credit)",
    responses=responses(402),
)
def host_count(
    banners: Banners, scans: Scans, charge: Charge, query: str = SEARCH_QUERY, facets: str | None = FACETS_QUERY
) -> Response:
    parsed, wanted = parse_query(query), parse_facet_spec(facets, charge.who.account.plan)
    if seen.asks(parsed):
        total, _ = _seen(banners, parsed, wanted, 1)
        return json_response({"matches": [], "total": total, **({"facets": _no_facets(wanted)} if wanted else {})})
    total, counts = banners.count(scoped_query(parsed, scans, charge.who), wanted)
    give_back_soon()
    charge_for_facets(charge, wanted)
    body: dict[str, object] = {"matches": [], "total": total}
    if wanted:
        body["facets"] = counts
    return json_response(body)


# With ``fields`` a match holds only those members (by dotted path): a partial banner.
@router.get(
    "/host/search", response_model=SearchResponse | SelectedFields, summary="Search banners", responses=responses(402)
)
def host_search(
    banners: Banners,
    scans: Scans,
    settings: AppSettings,
    charge: Charge,
    query: str = SEARCH_QUERY,
    facets: str | None = FACETS_QUERY,
    page: int = Query(1, ge=1, le=10_000),
    minify: bool = True,
    fields: str | None = None,
) -> Response:
    parsed, wanted = parse_query(query), parse_facet_spec(facets, charge.who.account.plan)
    charged = bool(parsed.has_filters or page > 1 or identifying(wanted))
    if seen.asks(parsed):
        with charge.meanwhile(query=1):
            total, rows = _seen(banners, parsed, wanted, page)
        names = [f.strip() for f in fields.split(",") if f.strip()] if fields else []
        kept = [only_fields(r, names) for r in rows] if names else rows
        return json_response({"matches": kept, "total": total, **({"facets": _no_facets(wanted)} if wanted else {})})
    with charge.meanwhile(query=int(charged)):  # a failed search costs nothing
        total, bodies, counts = banners.search_bodies(scoped_query(parsed, scans, charge.who), wanted, page)
    give_back_soon()
    namespace = settings.namespace
    if fields:
        names = [f.strip() for f in fields.split(",") if f.strip()]
        shaped = [loads(served(b, namespace, minify)) for b in bodies]
        matches = b",".join(dumps(only_fields(b, names)) for b in shaped)
    else:  # the stored bytes as they are, where nothing is to change
        matches = b",".join(served(b, namespace, minify) for b in bodies)
    content = b'{"matches":[' + matches + b'],"total":' + str(total).encode()
    if wanted:
        content += b',"facets":' + dumps(counts)
    return Response(content + b"}", media_type="application/json")


def _seen(banners: BannerStore, parsed: Parsed, wanted: list[Facet], page: int) -> tuple[int, list[dict]]:
    """What scans saw besides banners (``host.state:``, ``port.state:``): no facets, which count banners."""
    problem = seen.problem(parsed)
    if problem:
        raise bad_request(f"Invalid search query: {problem}")
    return seen.search(banners, parsed, page)


def _no_facets(wanted: list[Facet]) -> dict[str, list]:
    return {f.name: [] for f in wanted}  # facets count banners: none of these rows is one


@router.get("/host/search/facets", response_model=list[str])
def search_facets(who: Who) -> list[str]:
    return list(FACETS)


@router.get("/host/search/filters", response_model=list[str])
def search_filters(who: Who) -> list[str]:
    return sorted(FILTERS)


@router.get("/host/search/tokens", response_model=SearchTokens)
def search_tokens(who: Who, query: str = Query(...)) -> dict:
    return tokens(query)


@router.get("/host/{ip}", response_model=HostRecord, summary="All services of one address", responses=responses(404))
def host(
    banners: Banners,
    settings: AppSettings,
    who: Who,
    ip: str = Path(..., json_schema_extra={"anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}),
    history: bool = False,
    minify: bool = False,
) -> Response:
    try:
        parsed = ipaddress.ip_address(ip)
    except ValueError:
        raise bad_request(f"Invalid IP address: {ip}") from None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.scope_id:  # as shape.ip_address: no store holds one
        raise bad_request(f"Invalid IP address: {ip} (a zone id names an interface of one machine)")
    address = str(parsed)
    found = visible(banners.host(address), who.account.id)  # others' scans of the server's own: not theirs
    saw = seen.of_host(banners, address)  # hosts up, ports not open: what runs saw besides banners
    if not found and not saw:
        raise not_found("No information available for that IP.")
    record = host_record(out(settings.namespace, found), history, minify) if found else seen_only(address, saw)
    if saw:
        record["seen"] = saw
    return json_response(record)
