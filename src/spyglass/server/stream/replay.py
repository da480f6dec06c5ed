"""``POST /spyglass/collect``: banners handed to a running backend (``spyglass replay``), through
the same path as scan results: indexed, then published on the stream. Outside the seed's paths:
it is spyglass's own method, for keys an operator gave the collector role (``keys create
--collector``): what is collected is what every account searches, streams and is alerted on.

Each banner collected here records the account that sent it, as ``collected_by`` (its id, never
its key) in its crawler member (``_intel`` when it has none), over whatever the sender wrote
there: the operator can tell where any banner came from."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel

from spyglass.exactjson import loads
from spyglass.server.banners.shape import crawler_member
from spyglass.server.basedeps import Who
from spyglass.server.errors import ApiError, bad_request, responses

MAX_BODY = 16 * 1024 * 1024  # bytes per request: a replay sends a big file in several

router = APIRouter()


MAX_PROBLEMS = 20


class CollectResult(BaseModel):
    received: int  # banners in the body
    collected: int  # of those, new to the index (and so published)
    bad: int = 0  # lines refused (not a banner, or one the stores cannot hold): as `spyglass import` skips them
    problems: list[str] = []  # the first of them, "line N: why"


BODY_DOC = {
    "requestBody": {
        "required": True,
        "description": "Banner records, one JSON object per line (at most 16 MiB)",
        "content": {"application/x-ndjson": {"schema": {"type": "object", "description": "one banner per line"}}},
    }
}


def collected_by(banner: dict, account_id: int) -> dict:
    """``banner`` with ``collected_by`` set in its crawler member (see above)."""
    member = crawler_member(banner) or "_intel"
    meta = banner.get(member)
    return {**banner, member: {**(meta if isinstance(meta, dict) else {}), "collected_by": account_id}}


@router.post(
    "/spyglass/collect",
    response_model=CollectResult,
    responses=responses(400, 403, 413),
    openapi_extra=BODY_DOC,
)
async def collect(request: Request, who: Who) -> CollectResult:
    """Collect banners as the backend's crawlers would: the new ones are indexed and published on
    the real-time stream; one already in the index is skipped; a line that is no banner the
    stores can hold (its address, port, transport or timestamp), or dated more than 5 minutes
    ahead, is refused and reported in `bad` and `problems`."""
    who.require_collector()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ApiError(413, "The body is over 16 MiB: send the banners in several requests")
    banners: list[dict] = []
    lines: list[int] = []  # each banner's line number
    problems: list[tuple[int, str]] = []
    for number, line in enumerate(bytes(body).splitlines(), 1):
        if not line.strip():
            continue
        try:
            banner = loads(line)
        except ValueError as exc:
            problems.append((number, f"not JSON ({exc})"))
            continue
        if not isinstance(banner, dict):
            problems.append((number, "not a JSON object"))
            continue
        banners.append(collected_by(banner, who.account.id))
        lines.append(number)
    if not banners:
        why = f": line {problems[0][0]}: {problems[0][1]}" if problems else ""
        raise bad_request(f"Invalid body: no banners (send one JSON object per line){why}")
    refused: list[tuple[int, str]] = []
    new = await request.app.state.collector.collect(banners, "replay", refused)
    problems += [(lines[i], why) for i, why in refused]
    problems.sort()
    return CollectResult(
        received=len(banners),
        collected=len(new),
        bad=len(problems),
        problems=[f"line {n}: {why}" for n, why in problems[:MAX_PROBLEMS]],
    )
