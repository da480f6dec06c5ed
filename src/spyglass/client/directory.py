"""The directory of saved queries (``/{ns}/query...``)."""

from __future__ import annotations

from spyglass import models as m
from spyglass.client.base import HostClient


class DirectoryClient(HostClient):
    """Browse and search saved queries; 10 a page."""

    async def queries(self, page: int = 1, sort: str | None = None, order: str | None = None) -> m.SavedQueryList:
        return await self.call(
            m.SavedQueryList, "GET", self.ns("/query"), params={"page": page, "sort": sort, "order": order}
        )

    async def search(self, query: str, page: int = 1) -> m.SavedQueryList:
        return await self.call(m.SavedQueryList, "GET", self.ns("/query/search"), params={"query": query, "page": page})

    async def tags(self, size: int = 10) -> m.QueryTags:
        return await self.call(m.QueryTags, "GET", self.ns("/query/tags"), params={"size": size})
