"""The geographic network tools service: ping and DNS from this agent, and (geo forms) from this
agent and its peers at once.

Peers are other spyglass geonet agents, one per location. A geo form asks each peer's
single-location endpoint concurrently and answers when all have answered or the deadline has
passed, whichever is first. A peer that is down, slow or failing is left out of the array (whose
items must each be a real measurement) and named, with the reason, in the ``X-Geonet-Missing``
response header: a JSON array of ``{"agent": URL, "reason": text}``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Annotated, Any

import httpx
from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import AfterValidator, BaseModel

from spyglass import __version__
from spyglass.models import DnsResult, GeoLocation, PingResult
from spyglass.models.geonet import MISSING_HEADER, MissingAgent
from spyglass.netools.dns import RECORD_TYPES, Resolver
from spyglass.netools.ping import PingFailed, ping
from spyglass.netools.targets import check_target
from spyglass.server.auth import KeyRateLimiter, client_address, too_many
from spyglass.server.errors import describe_validation, install_error_handlers

# The seed's Location has three required strings and no way to say "not known"; an agent started
# without --location says so in each of them rather than inventing a place or sending "".
UNKNOWN_LOCATION = GeoLocation(city="unknown location", country="unknown", latlon="unknown")


@dataclass
class GeonetSettings:
    location: GeoLocation = field(default_factory=lambda: UNKNOWN_LOCATION.model_copy())
    peers: list[str] = field(default_factory=list)
    deadline: float = 4.0  # seconds a geo form waits for its slowest location
    nameservers: list[str] | None = None  # None: the system's resolvers
    dns_port: int = 53
    dns_timeout: float = 3.0
    ping_count: int = 3
    # Requests a second from one address (with a burst): geonet takes no key, and a backend bound
    # beyond loopback would otherwise be an open ping and DNS relay.
    rate_limit: float = 5.0
    burst: int = 20


def parse_location(text: str) -> GeoLocation:
    """``"City,CC,lat,lon"`` (as on the command line) as a Location."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4:
        raise ValueError("a location is City,CC,latitude,longitude")
    city, country, lat, lon = parts
    latitude, longitude = float(lat), float(lon)
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        raise ValueError("latitude is -90..90 and longitude -180..180")
    return GeoLocation(city=city, country=country, latlon=f"{latitude:g},{longitude:g}")


def _check_rtype(value: str) -> str:
    value = value.upper()
    if value not in RECORD_TYPES:
        raise ValueError(f"rtype must be one of {', '.join(RECORD_TYPES)}")
    return value


Target = Annotated[str, AfterValidator(check_target)]
RecordType = Annotated[str, AfterValidator(_check_rtype), Query(description=f"record type: {', '.join(RECORD_TYPES)}")]


def _invalid(where: str, message: str) -> RequestValidationError:
    return RequestValidationError([{"loc": ("path", where), "msg": message, "type": "value_error"}])


class Agent:
    """What the geonet routes work with: the settings and a resolver bound to them."""

    def __init__(self, settings: GeonetSettings) -> None:
        self.settings = settings
        self.here = settings.location
        self.resolver = Resolver(settings.nameservers, settings.dns_port, settings.dns_timeout)

    async def ping(self, target: str) -> PingResult:
        try:
            return await ping(target, self.here, resolver=self.resolver, count=self.settings.ping_count)
        except PingFailed as exc:
            raise _invalid("ip", str(exc)) from None

    async def dns(self, hostname: str, rtype: str) -> DnsResult:
        return await self.resolver.query(hostname, rtype, self.here)

    async def fan_out(
        self, local, peer_path: str, params: dict[str, str], model: type[BaseModel], response: Response
    ) -> list[Any]:
        deadline = self.settings.deadline
        async with httpx.AsyncClient(timeout=deadline) as http:
            tasks = {asyncio.ensure_future(local): "this agent"}
            for peer in self.settings.peers:
                tasks[asyncio.ensure_future(_ask_peer(http, peer.rstrip("/") + peer_path, params, model))] = peer
            done, pending = await asyncio.wait(tasks, timeout=deadline)
            for task in pending:
                task.cancel()
        first = next(iter(tasks))
        if first in done and isinstance(first.exception(), RequestValidationError):
            raise first.exception()  # the target itself is bad: 422, as for the single form
        results, missing = [], []
        for task, agent in tasks.items():
            if task in pending:
                missing.append(MissingAgent(agent=agent, reason=f"no answer within {deadline:g} s"))
            elif task.exception() is not None:
                missing.append(MissingAgent(agent=agent, reason=_reason(task.exception())))
            else:
                results.append(task.result())
        if missing:
            response.headers[MISSING_HEADER] = json.dumps([m.model_dump() for m in missing])
        return results


def agent_of(request: Request) -> Agent:
    return request.app.state.agent


async def limit_address(request: Request) -> None:
    limiter: KeyRateLimiter = request.app.state.address_limiter
    if (wait := limiter.check(client_address(request))) is not None:
        raise too_many(wait, "Rate limit reached: too many requests from this address")


router = APIRouter(dependencies=[Depends(limit_address)])


@router.get(
    "/api/ping/{ip}", response_model=PingResult, response_model_exclude_none=True, summary="Ping from this location"
)
async def ping_one(ip: Target, agent: Agent = Depends(agent_of)) -> PingResult:
    return await agent.ping(ip)


@router.get(
    "/api/geoping/{ip}",
    response_model=list[PingResult],
    response_model_exclude_none=True,
    summary="Ping from every location",
)
async def ping_everywhere(ip: Target, response: Response, agent: Agent = Depends(agent_of)) -> list[PingResult]:
    return await agent.fan_out(agent.ping(ip), f"/api/ping/{ip}", {}, PingResult, response)


@router.get(
    "/api/dns/{hostname}",
    response_model=DnsResult,
    response_model_exclude_none=True,
    summary="DNS lookup from this location",
)
async def dns_one(hostname: Target, rtype: RecordType = "A", agent: Agent = Depends(agent_of)) -> DnsResult:
    return await agent.dns(hostname, rtype)


@router.get(
    "/api/geodns/{hostname}",
    response_model=list[DnsResult],
    response_model_exclude_none=True,
    summary="DNS lookup from every location",
)
async def dns_everywhere(
    hostname: Target, response: Response, rtype: RecordType = "A", agent: Agent = Depends(agent_of)
) -> list[DnsResult]:
    return await agent.fan_out(
        agent.dns(hostname, rtype), f"/api/dns/{hostname}", {"rtype": rtype}, DnsResult, response
    )


def create_geonet_app(settings: GeonetSettings) -> FastAPI:
    """The geonet host: its own app (mounted at ``/geonet``, or alone as an agent) and OpenAPI 3.1
    document; validation errors are 422 ``HTTPValidationError`` as its seed says, others ``{error}``."""
    app = FastAPI(
        title="spyglass geonet",
        version="1.0.0",
        description=(
            f"Ping and DNS from one location or many (spyglass {__version__}). Round-trip "
            "times are milliseconds; packet_loss is a fraction from 0 to 1. Geo forms list "
            f"locations that did not answer in the {MISSING_HEADER} header. An agent started "
            f"without a location answers from_loc {json.dumps(UNKNOWN_LOCATION.to_api())}."
        ),
    )
    app.state.agent = Agent(settings)
    app.state.address_limiter = KeyRateLimiter(settings.rate_limit, settings.burst)
    install_error_handlers(app, validation_as_400=False)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        # 422 with ``detail`` as the seed says, and the ``error`` every other answer of ours has
        body = {"detail": jsonable_encoder(exc.errors()), "error": describe_validation(exc)}
        return JSONResponse(body, status_code=422)

    app.include_router(router)
    return app


async def _ask_peer(http: httpx.AsyncClient, url: str, params: dict[str, str], model: type[BaseModel]):
    response = await http.get(url, params=params)
    if response.status_code == 422:
        detail = response.json().get("detail") or [{}]
        raise PeerRefused(str(detail[0].get("msg", "rejected the request")))
    response.raise_for_status()
    return model.model_validate(response.json())


class PeerRefused(Exception):
    pass


def _reason(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused or unreachable"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"answered HTTP {exc.response.status_code}"
    if isinstance(exc, RequestValidationError):
        return str(exc.errors()[0].get("msg"))
    return str(exc) or type(exc).__name__
