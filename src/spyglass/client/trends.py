"""Client of the trends host (``{trends_url}``): month-by-month counts."""

from __future__ import annotations

from collections.abc import Sequence

from spyglass import models as m
from spyglass.client.base import HostClient, csv


class TrendsClient(HostClient):
    async def search(self, query: str, facets: str | Sequence[str] | None = None) -> m.TrendsResponse:
        params = {"query": query, "facets": csv(facets) if facets else None}
        return await self.call(m.TrendsResponse, "GET", "/api/v1/search", params=params)

    async def filters(self) -> list[str]:
        return await self.call(list[str], "GET", "/api/v1/search/filters")

    async def facets(self) -> list[str]:
        return await self.call(list[str], "GET", "/api/v1/search/facets")
