from __future__ import annotations

from pydantic import Field

from spyglass.models.base import APIModel
from spyglass.models.search import FacetValue


class MonthCount(APIModel):
    month: str
    count: int


class MonthFacet(APIModel):
    key: str
    values: list[FacetValue] = Field(default_factory=list)


class TrendsResponse(APIModel):
    total: int = 0
    matches: list[MonthCount] = Field(default_factory=list)
    facets: dict[str, list[MonthFacet]] = Field(default_factory=dict)
