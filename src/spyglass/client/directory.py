"""The directory of saved queries (``/{ns}/query...``)."""

from __future__ import annotations

from collections.abc import Sequence

from spyglass import models as m
from spyglass.client.base import HostClient, csv, segment


class DirectoryClient(HostClient):
    """Browse and search saved queries (10 a page); save, vote on and tag them."""

    async def queries(self, page: int = 1, sort: str | None = None, order: str | None = None) -> m.SavedQueryList:
        return await self.call(
            m.SavedQueryList, "GET", self.ns("/query"), params={"page": page, "sort": sort, "order": order}
        )

    async def search(self, query: str, page: int = 1) -> m.SavedQueryList:
        return await self.call(m.SavedQueryList, "GET", self.ns("/query/search"), params={"query": query, "page": page})

    async def tags(self, size: int = 10) -> m.QueryTags:
        return await self.call(m.QueryTags, "GET", self.ns("/query/tags"), params={"size": size})

    async def save(self, title: str, query: str, description: str = "", tags: str | Sequence[str] = ()) -> m.SavedQuery:
        """Save ``query`` in the directory (it must parse); the answer carries its ``id``."""
        params = {"title": title, "query": query, "description": description, "tags": csv(tags) or None}
        return await self.call(m.SavedQuery, "POST", self.ns("/query"), params=params)

    async def vote(self, query_id: int, value: int = 1) -> m.SavedQuery:
        """Vote up (1) or down (-1); voting again replaces the account's vote."""
        return await self.call(
            m.SavedQuery, "POST", self.ns(f"/query/{segment(query_id)}/vote"), params={"value": value}, idempotent=True
        )

    async def add_tags(self, query_id: int, tags: str | Sequence[str]) -> m.SavedQuery:
        """Tag a query this account saved."""
        return await self.call(
            m.SavedQuery,
            "POST",
            self.ns(f"/query/{segment(query_id)}/tags"),
            params={"tags": csv(tags)},
            idempotent=True,
        )

    async def delete(self, query_id: int) -> m.Success:
        """Delete a query this account saved."""
        return await self.call(m.Success, "DELETE", self.ns(f"/query/{segment(query_id)}"))
