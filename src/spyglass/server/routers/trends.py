"""The trends host (``{trends_url}``, enterprise): month-by-month counts of historical search
results, with the top facet values of each month. Mounted at ``/trends``; its paths carry the
``/api/v1`` version segment as the seed writes them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI

from spyglass import __version__
from spyglass.models import TrendsResponse
from spyglass.server.auth import Caller, KeyCheck, KeyRateLimiter
from spyglass.server.banners.store import BannerStore
from spyglass.server.banners.trends import TRENDS_FACETS, TRENDS_FILTERS, NotForTrends, check
from spyglass.server.deps import Banners, Charge, Who
from spyglass.server.errors import bad_request, document_errors, install_error_handlers, responses
from spyglass.server.memory import give_back_soon
from spyglass.server.routers.common import (
    charge_for_facets,
    facets_query,
    json_response,
    parse_facet_spec,
    parse_query,
    search_query,
)
from spyglass.server.scanner.private import scoped

router = APIRouter(prefix="/api/v1")


async def enterprise(who: Who) -> Caller:
    who.require_enterprise("Trends")
    return who


Enterprise = Annotated[Caller, Depends(enterprise)]


@router.get(
    "/search",
    response_model=TrendsResponse,
    responses=responses(402, 403),
    summary="Monthly counts of historical matches, with the top facet values of each month "
    "(identifying facets such as ip cost a query credit)",
)
def trends_search(
    banners: Banners,
    who: Enterprise,
    charge: Charge,
    query: str = search_query("search query over every banner the index has held"),
    facets: str | None = facets_query(TRENDS_FACETS, "GET /trends/api/v1/search/facets"),
):
    parsed, wanted = parse_query(query), parse_facet_spec(facets, who.account.plan)
    try:
        check(parsed, wanted)
    except NotForTrends as exc:
        raise bad_request(f"Invalid search query: {exc}") from None
    found = banners.trends(scoped(parsed, lambda _: False), wanted)  # others' scans of the server's own: not theirs
    give_back_soon()
    charge_for_facets(charge, wanted)
    body: dict[str, object] = {"total": found.total, "matches": found.matches}
    if wanted:
        body["facets"] = found.facets
    return json_response(body)


@router.get("/search/filters", response_model=list[str], responses=responses(403))
def trends_filters(who: Enterprise) -> list[str]:
    return list(TRENDS_FILTERS)


@router.get("/search/facets", response_model=list[str], responses=responses(403))
def trends_facets(who: Enterprise) -> list[str]:
    return list(TRENDS_FACETS)


def create_trends_app(banners: BannerStore, keys: KeyCheck, rate_limiter: KeyRateLimiter | None) -> FastAPI:
    """The trends host over the backend's banner store, sharing its accounts and key limits."""
    app = FastAPI(
        redirect_slashes=False,  # a path with a slash too many is a 404, never a 307 to one built from Host
        title="spyglass trends",
        version=__version__,
        description="Month-by-month counts of historical search results (enterprise). "
        'Errors answer a status code and a JSON body {"error": message}.',
    )
    app.state.keys = keys
    app.state.rate_limiter = rate_limiter
    app.state.banners = banners
    install_error_handlers(app)
    document_errors(app)
    app.include_router(router)
    return app
