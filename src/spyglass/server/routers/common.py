"""What the routes that answer with banners share: their JSON responses and query arguments."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from fastapi import Query, Response

from spyglass.exactjson import dumps
from spyglass.query import IDENTIFYING_FACETS, Facet, QuerySyntaxError, parse_facets, parse_strict
from spyglass.query.ast import Query as Parsed
from spyglass.query.filters import MAX_FACET_SIZE
from spyglass.server.auth import Caller, Charger
from spyglass.server.errors import ApiError, bad_request
from spyglass.server.plans import Plan
from spyglass.server.scanner.private import scoped
from spyglass.server.scanner.service import ScanService


def json_response(body: object) -> Response:
    # Bodies come from the record store as plain dicts; serializing them directly keeps a page
    # of 100 banners cheap. The routes still declare their response models for the OpenAPI spec.
    return Response(dumps(body), media_type="application/json")


def search_query(description: str) -> Any:
    """The ``query`` argument of a search. The grammar is more than a pattern says (filters'
    names and values): not blank, at least, as an empty query is refused."""
    return Query(..., description=description, json_schema_extra={"pattern": r"\S"})


def facets_query(names: Iterable[str], listed_at: str) -> Any:
    """The ``facets`` argument over the facet ``names`` (listed by ``listed_at``): what
    parse_facets reads, as a pattern (names in any case; blank items skipped). A name given
    twice, and the plan's bounds on how many facets and values (api-info's usage_limits), no
    pattern says."""
    name = "(?:" + "|".join(_any_case(n) for n in names) + ")"
    count = rf"0*(?:[1-9][0-9]{{0,{len(str(MAX_FACET_SIZE)) - 2}}}|{MAX_FACET_SIZE})"
    item = rf"\s*(?:{name}\s*(?::\s*(?:{count}\s*)?)?)?"  # "port:" is port's default count
    description = (
        f"comma-separated facet names, each once, each with :COUNT (1 to {MAX_FACET_SIZE} values) or not; "
        f"the names: {listed_at}; the plan bounds how many facets and values (api-info's usage_limits)"
    )
    return Query(None, description=description, json_schema_extra={"pattern": f"^{item}(?:,{item})*$"})


def _any_case(name: str) -> str:
    """``name`` as a pattern that matches it in any case (parse_facets lowers it)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in name)


def parse_query(text: str):
    try:
        return parse_strict(text)
    except QuerySyntaxError as exc:
        raise bad_request(f"Invalid search query: {exc}") from None


def scoped_query(query: Parsed, scans: ScanService, who: Caller) -> Parsed:
    """``query`` as ``who`` may run it: others' results of scans of the server's own networks
    left out (scanner/private.py). What it costs is the query as asked."""

    def owns(scan_id: str) -> bool:
        scan = scans.store.get(scan_id.upper())  # the query keeps it in lower case; ids are upper
        return scan is not None and scan.account_id == who.account.id

    return scoped(query, owns)


def parse_facet_spec(spec: str | None, plan: Plan) -> list[Facet]:
    """The facets asked for, within the plan's caps: each facet is a pass over every match, so
    thousands of them (or of values) are seconds of work and memory that one request must not buy.
    Counted before they are parsed: parsing 5,000 was 17 ms of each refusal."""
    asked = sum(1 for item in (spec or "").split(",") if item.strip())
    if asked > plan.facets:
        raise bad_request(f"Invalid facets: {asked:,} facets; the {plan.name} plan allows {plan.facets} a request")
    try:
        facets = parse_facets(spec)
    except ValueError as exc:
        raise bad_request(f"Invalid facets: {exc}") from None
    if too_big := [f for f in facets if f.size > plan.facet_size]:
        raise bad_request(
            f"Invalid facets: facet {too_big[0].name}: {too_big[0].size:,} values;"
            f" the {plan.name} plan allows {plan.facet_size} a facet"
        )
    return facets


def identifying(facets: list[Facet]) -> list[str]:
    """The facets asked for that list hosts or banners (IDENTIFYING_FACETS): they cost a search."""
    return [f.name for f in facets if f.name in IDENTIFYING_FACETS]


def charge_for_facets(charge: Charger, facets: list[Facet]) -> None:
    """A query credit, once the answer is ready, for identifying facets on a request otherwise free
    (count, trends): without it a count lists for free what a search charges for. A 402 says why."""
    names = identifying(facets)
    if names:
        try:
            charge(query=1)
        except ApiError as exc:
            why = f"Facets of identifying fields ({', '.join(names)}) cost a query credit, as a search does"
            raise ApiError(exc.status, f"{why}. {exc.message}", exc.headers) from None
