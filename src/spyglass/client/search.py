"""Search and host lookup (``/{ns}/host/...``)."""

from __future__ import annotations

from collections.abc import Sequence

from spyglass import models as m
from spyglass.client.base import HostClient, csv, segment


class SearchClient(HostClient):
    """Search the banner index and look hosts up."""

    async def host(self, ip: str, *, history: bool = False, minify: bool = False) -> m.HostRecord:
        return await self.call(
            m.HostRecord, "GET", self.ns(f"/host/{segment(ip)}"), params={"history": history, "minify": minify}
        )

    async def count(self, query: str, facets: str | Sequence[str] | None = None) -> m.SearchResponse:
        params = {"query": query, "facets": csv(facets) if facets else None}
        return await self.call(m.SearchResponse, "GET", self.ns("/host/count"), params=params)

    async def search(
        self, query: str, facets: str | Sequence[str] | None = None, *, page: int = 1, minify: bool = True
    ) -> m.SearchResponse:
        params = {"query": query, "facets": csv(facets) if facets else None, "page": page, "minify": minify}
        # May spend a query credit: not repeated once it may have reached the server.
        return await self.call(m.SearchResponse, "GET", self.ns("/host/search"), params=params, idempotent=False)

    async def select(
        self, query: str, fields: str | Sequence[str], facets: str | Sequence[str] | None = None, *, page: int = 1
    ) -> m.SelectedFields:
        """A search page with only ``fields`` of each match (partial banners, so plain objects)."""
        params = {"query": query, "fields": csv(fields), "facets": csv(facets) if facets else None, "page": page}
        return await self.call(m.SelectedFields, "GET", self.ns("/host/search"), params=params, idempotent=False)

    async def facets(self) -> list[str]:
        return await self.call(list[str], "GET", self.ns("/host/search/facets"))

    async def filters(self) -> list[str]:
        return await self.call(list[str], "GET", self.ns("/host/search/filters"))

    async def tokens(self, query: str) -> m.SearchTokens:
        return await self.call(m.SearchTokens, "GET", self.ns("/host/search/tokens"), params={"query": query})
