from __future__ import annotations

from typing import Any

from pydantic import Field

from spyglass.models.banner import Banner, Raw
from spyglass.models.base import APIModel


class FacetValue(APIModel):
    count: int
    value: Raw = Field(default=None, description="string (the seed's type); other JSON types are kept as sent")


class SearchResponse(APIModel):
    """Search, count and directory-style results: ``matches`` is empty for a count."""

    matches: list[Banner] = Field(default_factory=list)
    facets: dict[str, list[FacetValue]] | None = None
    total: int = 0
    scroll_id: str | None = Field(default=None, alias="_scroll_id")


class SelectedFields(APIModel):
    """A search page restricted to ``fields``: each match holds only those members, by dotted path."""

    matches: list[dict[str, Any]] = Field(default_factory=list)
    facets: dict[str, list[FacetValue]] | None = None
    total: int = 0


class SearchTokens(APIModel):
    """What the query parser understood of a query."""

    attributes: dict[str, Any] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    string: str = ""
    filters: list[str] = Field(default_factory=list)
