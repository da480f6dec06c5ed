"""The organization (``/org...``, enterprise)."""

from __future__ import annotations

from spyglass import models as m
from spyglass.client.base import HostClient, segment


class OrgClient(HostClient):
    """The account's organization and its members."""

    async def get(self) -> m.Organization:
        return await self.call(m.Organization, "GET", "/org")

    async def add_member(self, user: str, notify: bool = False) -> bool:
        return await self.success("PUT", f"/org/member/{segment(user)}", params={"notify": notify})

    async def remove_member(self, user: str) -> bool:
        return await self.success("DELETE", f"/org/member/{segment(user)}")
