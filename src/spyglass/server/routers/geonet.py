"""The geographic network tools service over HTTP (the agent itself: :mod:`spyglass.server.geonet`).

A geo form's array holds only real measurements: a location that gave none is named, with the
reason, in the ``X-Geonet-Missing`` response header, a JSON array of ``{"agent": URL, "reason": text}``.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import AfterValidator

from spyglass import __version__
from spyglass.models import DnsResult, PingResult
from spyglass.models.geonet import MISSING_HEADER, MissingAgent
from spyglass.netools.dns import RECORD_TYPES
from spyglass.netools.ping import PingFailed
from spyglass.netools.targets import check_target
from spyglass.server.auth import KeyRateLimiter, client_address, too_many
from spyglass.server.errors import describe_validation, document_errors, install_error_handlers
from spyglass.server.geonet import UNKNOWN_LOCATION, Agent, Busy, GeonetSettings


def _check_rtype(value: str) -> str:
    value = value.upper()
    if value not in RECORD_TYPES:
        raise ValueError(f"rtype must be one of {', '.join(RECORD_TYPES)}")
    return value


Target = Annotated[str, AfterValidator(check_target)]
RecordType = Annotated[str, AfterValidator(_check_rtype), Query(description=f"record type: {', '.join(RECORD_TYPES)}")]


def _invalid(where: str, message: str) -> RequestValidationError:
    return RequestValidationError([{"loc": ("path", where), "msg": message, "type": "value_error"}])


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
    try:
        return await agent.ping(ip)
    except PingFailed as exc:
        raise _invalid("ip", str(exc)) from None
    except Busy as exc:
        raise too_many(1, str(exc)) from None


@router.get(
    "/api/geoping/{ip}",
    response_model=list[PingResult],
    response_model_exclude_none=True,
    summary="Ping from every location",
)
async def ping_everywhere(ip: Target, response: Response, agent: Agent = Depends(agent_of)) -> list[PingResult]:
    try:
        results, missing = await agent.fan_out(agent.ping(ip), f"/api/ping/{ip}", {}, PingResult)
    except PingFailed as exc:
        raise _invalid("ip", str(exc)) from None
    return name_missing(response, results, missing)


@router.get(
    "/api/dns/{hostname}",
    response_model=DnsResult,
    response_model_exclude_none=True,
    summary="DNS lookup from this location",
)
async def dns_one(hostname: Target, rtype: RecordType = "A", agent: Agent = Depends(agent_of)) -> DnsResult:
    try:
        return await agent.dns(hostname, rtype)
    except Busy as exc:
        raise too_many(1, str(exc)) from None


@router.get(
    "/api/geodns/{hostname}",
    response_model=list[DnsResult],
    response_model_exclude_none=True,
    summary="DNS lookup from every location",
)
async def dns_everywhere(
    hostname: Target, response: Response, rtype: RecordType = "A", agent: Agent = Depends(agent_of)
) -> list[DnsResult]:
    results, missing = await agent.fan_out(
        agent.dns(hostname, rtype), f"/api/dns/{hostname}", {"rtype": rtype}, DnsResult
    )
    return name_missing(response, results, missing)


def name_missing(response: Response, results: list, missing: list[MissingAgent]) -> list:
    if missing:
        response.headers[MISSING_HEADER] = json.dumps([m.model_dump() for m in missing])
    return results


def create_geonet_app(settings: GeonetSettings) -> FastAPI:
    """The geonet host: its own app (mounted at ``/geonet``, or alone as an agent) and OpenAPI 3.1
    document; validation errors are 422 ``HTTPValidationError`` as its seed says, others ``{error}``."""
    app = FastAPI(
        redirect_slashes=False,  # a path with a slash too many is a 404, never a 307 to one built from Host
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
    document_errors(app, keyless=True)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        # 422 with ``detail`` as the seed says, and the ``error`` every other answer of ours has
        body = {"detail": jsonable_encoder(exc.errors()), "error": describe_validation(exc)}
        return JSONResponse(body, status_code=422)

    app.include_router(router)
    return app
