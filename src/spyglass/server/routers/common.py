"""What the routes that answer with banners share: their JSON responses and query arguments."""

from __future__ import annotations

from typing import Any

from fastapi import Response

from spyglass.exactjson import dumps
from spyglass.query import QuerySyntaxError, parse_facets, parse_strict
from spyglass.server.errors import bad_request


def json_response(body: Any) -> Response:
    # Bodies come from the record store as plain dicts; serializing them directly keeps a page
    # of 100 banners cheap. The routes still declare their response models for the OpenAPI spec.
    return Response(dumps(body), media_type="application/json")


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
