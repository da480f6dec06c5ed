"""Search and host lookup: ``/{ns}/host/...`` over the banner index."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any

import orjson
from fastapi import APIRouter, Depends, Query, Request, Response

from spyglass.models import HostRecord, SearchResponse, SearchTokens, SelectedFields
from spyglass.query import FACETS, FILTERS, QuerySyntaxError, parse_facets, parse_strict, tokens
from spyglass.server.auth import Caller, caller
from spyglass.server.errors import bad_request, not_found
from spyglass.server.index import BannerIndex
from spyglass.server.index.shape import normalize

MINIFY_DROP = (("http", "html"), ("ssl", "chain"), ("opts", "raw"))

router = APIRouter()


def json_response(body: Any) -> Response:
    # Bodies come from the record store as plain dicts; serializing them directly keeps a page
    # of 100 banners cheap. The routes still declare their response models for the OpenAPI spec.
    try:
        content = orjson.dumps(body)
    except TypeError:  # an integer past 64 bits (e.g. a certificate serial): kept exact
        content = json.dumps(body, separators=(",", ":")).encode()
    return Response(content, media_type="application/json")


def for_namespace(banner: dict, namespace: str) -> dict:
    """A stored banner as this namespace serves it: only the crawler member is renamed (to
    ``_{namespace}``) and ``ip_str`` is added if the banner had none; every other member is
    exactly as imported."""
    shape = normalize(banner)
    target = f"_{namespace}"
    if shape.crawler and shape.crawler != target and target not in banner:
        banner = {(target if k == shape.crawler else k): v for k, v in banner.items()}
    if "ip_str" not in banner:
        banner["ip_str"] = shape.ip_str
    return banner


def minified(banner: dict) -> dict:
    for member, inner in MINIFY_DROP:
        if isinstance(banner.get(member), dict) and inner in banner[member]:
            banner[member] = {k: v for k, v in banner[member].items() if k != inner}
    return banner


def only_fields(banner: dict, fields: list[str]) -> dict:
    out: dict = {}
    for path in fields:
        value: Any = banner
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            out[path] = value
    return out


def parse_query(text: str):
    try:
        return parse_strict(text)
    except QuerySyntaxError as exc:
        raise bad_request(f"Invalid search query: {exc}") from None


def parse_facet_spec(spec: str | None):
    try:
        return parse_facets(spec)
    except ValueError as exc:
        raise bad_request(f"Invalid facets: {exc}") from None


def _strings(value: Any) -> list[str]:
    """The names a member holds: a list's strings, an object's keys, or one string."""
    if isinstance(value, dict):
        return [k for k in value if isinstance(k, str)]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return [value] if isinstance(value, str) else []


def host_record(banners: list[dict], history: bool, minify: bool) -> dict:
    """The host view of an address's banners (newest first); members read defensively."""
    latest = banners[0]
    shape = normalize(latest)
    current: dict[tuple, dict] = {}
    for b in banners:
        s = normalize(b)
        current.setdefault((s.port, s.transport), b)
    shown = banners if history else list(current.values())

    def union(member: str) -> list:
        return sorted({v for b in current.values() for v in _strings(b.get(member))})

    loc = latest.get("location")
    loc = loc if isinstance(loc, dict) else {}
    record: dict[str, Any] = {
        "ip": latest.get("ip"),
        "ip_str": shape.ip_str,
        "asn": latest.get("asn"),
        "isp": latest.get("isp"),
        "org": latest.get("org"),
        "os": next((b["os"] for b in banners if isinstance(b.get("os"), str) and b["os"]), None),
        "hostnames": union("hostnames"),
        "domains": union("domains"),
        "tags": union("tags"),
        "ports": sorted({port for port, _ in current}),
        "vulns": union("vulns"),
        "last_update": latest["timestamp"],
        **{
            k: loc.get(k)
            for k in (
                "city",
                "region_code",
                "area_code",
                "dma_code",
                "postal_code",
                "country_code",
                "country_code3",
                "country_name",
                "latitude",
                "longitude",
            )
        },
    }
    if not minify:
        record["data"] = shown
    return record


def index_of(request: Request) -> BannerIndex:
    return request.app.state.index


def out(request: Request, banners: Iterable[dict]) -> list[dict]:
    namespace = request.app.state.settings.namespace
    return [for_namespace(b, namespace) for b in banners]


@router.get("/host/count", response_model=SearchResponse, summary="Count matches (no credits)")
def host_count(
    request: Request, query: str = Query(...), facets: str | None = None, who: Caller = Depends(caller)
) -> Response:
    parsed, wanted = parse_query(query), parse_facet_spec(facets)
    total, counts = index_of(request).count(parsed, wanted)
    body: dict[str, Any] = {"matches": [], "total": total}
    if wanted:
        body["facets"] = counts
    return json_response(body)


# With ``fields`` a match holds only those members (by dotted path): a partial banner.
@router.get("/host/search", response_model=SearchResponse | SelectedFields, summary="Search banners")
def host_search(
    request: Request,
    query: str = Query(...),
    facets: str | None = None,
    page: int = Query(1, ge=1, le=10_000),
    minify: bool = True,
    fields: str | None = None,
    who: Caller = Depends(caller),
) -> Response:
    parsed, wanted = parse_query(query), parse_facet_spec(facets)
    total, matches, counts = index_of(request).search(parsed, wanted, page)
    if parsed.has_filters or page > 1:
        who.charge(query=1)  # only once the index has answered: a failed search costs nothing
    if minify:
        matches = [minified(b) for b in matches]
    matches = out(request, matches)
    if fields:
        names = [f.strip() for f in fields.split(",") if f.strip()]
        matches = [only_fields(b, names) for b in matches]
    body: dict[str, Any] = {"matches": matches, "total": total}
    if wanted:
        body["facets"] = counts
    return json_response(body)


@router.get("/host/search/facets", response_model=list[str])
def search_facets(who: Caller = Depends(caller)) -> list[str]:
    return list(FACETS)


@router.get("/host/search/filters", response_model=list[str])
def search_filters(who: Caller = Depends(caller)) -> list[str]:
    return sorted(FILTERS)


@router.get("/host/search/tokens", response_model=SearchTokens)
def search_tokens(query: str = Query(...), who: Caller = Depends(caller)) -> dict:
    return tokens(query)


@router.get("/host/{ip}", response_model=HostRecord, summary="All services of one address")
def host(
    request: Request, ip: str, history: bool = False, minify: bool = False, who: Caller = Depends(caller)
) -> Response:
    try:
        address = str(ipaddress.ip_address(ip))
    except ValueError:
        raise bad_request(f"Invalid IP address: {ip}") from None
    banners = index_of(request).host(address)
    if not banners:
        raise not_found("No information available for that IP.")
    return json_response(host_record(out(request, banners), history, minify))
