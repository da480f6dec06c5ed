"""The stream host (mounted at ``/stream``): newly collected banners as they arrive.

Formats: ``t=json`` (the default: the original service's own library sends no ``t`` and reads
JSON lines) is one JSON object per line; ``t=sse`` is Server-Sent Events with the JSON as each event's data. When the
stream is quiet, a keep-alive goes out every ``hub.heartbeat`` seconds so that proxies keep the
connection open: an empty line in json, an SSE comment line in sse (both are skipped by readers).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Literal

import orjson
from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import StreamingResponse

from spyglass import __version__
from spyglass.server.auth import Caller
from spyglass.server.basedeps import Alerts, Who
from spyglass.server.errors import (
    ApiError,
    bad_request,
    document_errors,
    install_error_handlers,
    not_found,
    responses,
    shown_id,
)
from spyglass.server.stream.alerts import AlertCoverages
from spyglass.server.stream.hub import (
    CHUNK_BYTES,
    Match,
    StreamHub,
    Subscription,
    TooManyStreams,
    match_all,
    match_asn,
    match_countries,
    match_ports,
    match_vulns,
)

VULN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")  # CVE-2021-44228, ms17-010, GHSA-...
MEDIA = {"json": "application/x-ndjson", "sse": "text/event-stream"}
KEEPALIVE = {"json": b"\n", "sse": b": keep-alive\n\n"}
STREAM_DOC = {
    200: {
        "description": "Banner records as they are collected, until the client disconnects",
        "content": {MEDIA["json"]: {}, MEDIA["sse"]: {}},
    },
    **responses(403, 429),
}

router = APIRouter()

Format = Query("json", description="json: one JSON object per line (default); sse: Server-Sent Events")
Debug = Query(0, ge=0, le=1, description='1: add {"event": "debug", "discarded": N} when banners were discarded')


def frames(lines: list[bytes], fmt: str) -> bytes:
    """``lines`` framed in one chunk: one join for them all, not a call a banner for each reader."""
    if fmt == "sse":
        return b"data: " + b"\n\ndata: ".join(lines) + b"\n\n"
    return b"\n".join(lines) + b"\n"


async def follow(hub: StreamHub, sub: Subscription, fmt: str, debug: bool) -> AsyncIterator[bytes]:
    """The response body: what the subscription queued since the last write, in one chunk."""
    try:
        while not sub.closed:
            try:
                await asyncio.wait_for(sub.wake.wait(), hub.heartbeat)
            except TimeoutError:
                yield KEEPALIVE[fmt]
                continue
            items, discarded = sub.take(CHUNK_BYTES)
            if debug and discarded:
                items.insert(0, orjson.dumps({"event": "debug", "discarded": discarded}))
            if items:
                yield frames(items, fmt)
    finally:
        hub.unsubscribe(sub)


def open_stream(request: Request, who: Caller, match: Match, fmt: str, debug: int) -> StreamingResponse:
    who.require_enterprise("The real-time stream")
    hub: StreamHub = request.app.state.hub
    try:
        sub = hub.subscribe(
            match, who.key, account=who.account.id
        )  # before the answer starts: nothing collected after it is missed
    except TooManyStreams as exc:
        raise ApiError(429, f"{exc}: close one first", headers={"Retry-After": "5"}) from None
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(follow(hub, sub, fmt, bool(debug)), media_type=MEDIA[fmt], headers=headers)


def comma_list(text: str, what: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values:
        raise bad_request(f"Invalid {what}: give one or more, separated by commas")
    return values


@router.get("/banners", response_class=StreamingResponse, responses=STREAM_DOC)
async def banners(
    request: Request, who: Who, t: Literal["json", "sse"] = Format, debug: int = Debug
) -> StreamingResponse:
    """Every banner the service collects."""
    return open_stream(request, who, match_all, t, debug)


# The filters take ``:path``: a value holding a slash ("22/") is the filter's to refuse with a 400,
# not a path that redirects elsewhere (a 307 a client cannot make sense of).
@router.get("/asn/{asn:path}", response_class=StreamingResponse, responses={**STREAM_DOC, **responses(400)})
async def asn(
    request: Request, asn: str, who: Who, t: Literal["json", "sse"] = Format, debug: int = Debug
) -> StreamingResponse:
    """Banners from the given comma-separated ASNs (``AS15169`` or ``15169``)."""
    asns = comma_list(asn, "asn")
    for a in asns:
        if not a.upper().removeprefix("AS").isdigit():
            raise bad_request(f"Invalid asn: {a!r} is not AS<number>")
    return open_stream(request, who, match_asn(asns), t, debug)


@router.get("/countries/{countries:path}", response_class=StreamingResponse, responses={**STREAM_DOC, **responses(400)})
async def countries(
    request: Request,
    countries: str,
    who: Who,
    t: Literal["json", "sse"] = Format,
    debug: int = Debug,
) -> StreamingResponse:
    """Banners from the given comma-separated 2-letter country codes."""
    codes = comma_list(countries, "countries")
    for c in codes:
        if len(c) != 2 or not c.isalpha() or not c.isascii():
            raise bad_request(f"Invalid countries: {c!r} is not a 2-letter country code")
    return open_stream(request, who, match_countries(codes), t, debug)


@router.get("/ports/{ports:path}", response_class=StreamingResponse, responses={**STREAM_DOC, **responses(400)})
async def ports(
    request: Request, ports: str, who: Who, t: Literal["json", "sse"] = Format, debug: int = Debug
) -> StreamingResponse:
    """Banners for the given comma-separated ports."""
    numbers = []
    for p in comma_list(ports, "ports"):
        if not p.isdigit() or not 0 <= int(p) <= 65535:
            raise bad_request(f"Invalid ports: {p!r} is not a port number")
        numbers.append(int(p))
    return open_stream(request, who, match_ports(numbers), t, debug)


@router.get("/vulns/{vulns:path}", response_class=StreamingResponse, responses={**STREAM_DOC, **responses(400)})
async def vulns(
    request: Request, vulns: str, who: Who, t: Literal["json", "sse"] = Format, debug: int = Debug
) -> StreamingResponse:
    """Banners with any of the given comma-separated vulnerability ids (case-insensitive)."""
    ids = comma_list(vulns, "vulns")
    for v in ids:
        if not VULN_ID.fullmatch(v):
            raise bad_request(f"Invalid vulns: {v!r} is not a vulnerability id (e.g. CVE-2021-44228)")
    return open_stream(request, who, match_vulns(ids), t, debug)


@router.get("/alert", response_class=StreamingResponse, responses=STREAM_DOC)
async def alerts(
    request: Request, who: Who, t: Literal["json", "sse"] = Format, debug: int = Debug
) -> StreamingResponse:
    """Banners inside the networks of every alert of the caller's account (as the alerts change)."""
    who.require_enterprise("The real-time stream")
    match = await request.app.state.coverages.follow(who.account.id)
    return open_stream(request, who, match, t, debug)


@router.get("/alert/{alert_id}", response_class=StreamingResponse, responses={**STREAM_DOC, **responses(404)})
async def alert(
    request: Request,
    alert_id: str,
    who: Who,
    store: Alerts,
    t: Literal["json", "sse"] = Format,
    debug: int = Debug,
) -> StreamingResponse:
    """Banners inside the networks of one of the caller's alerts. An unknown id and another
    account's alert are the same 404."""
    who.require_enterprise("The real-time stream")
    if await asyncio.to_thread(store.alert, who.account.id, alert_id) is None:
        raise not_found(f"No alert with id {shown_id(alert_id)}")
    match = await request.app.state.coverages.follow(who.account.id, alert_id)
    return open_stream(request, who, match, t, debug)


def create_stream_app(hub: StreamHub, parent: FastAPI) -> FastAPI:
    """The stream host: its own app and OpenAPI document, sharing ``parent``'s accounts and rate
    limit (the key is checked as on the main API)."""
    app = FastAPI(
        redirect_slashes=False,  # a path with a slash too many is a 404, never a 307 to one built from Host
        title="spyglass stream",
        version=__version__,
        description="The real-time stream of newly collected banners (enterprise plans). "
        + (__doc__ or "").split("\n\n", 1)[1].replace("\n", " ").strip(),
    )
    app.state.hub = hub
    app.state.alerts = parent.state.alerts  # the /alert streams follow the account's alerts
    app.state.coverages = AlertCoverages(parent.state.alerts)  # (shared by the streams of one account)
    app.state.rate_limiter = parent.state.rate_limiter
    app.state.keys = parent.state.keys
    install_error_handlers(app)
    document_errors(app)
    app.include_router(router, prefix=f"/{parent.state.settings.namespace}")
    return app
