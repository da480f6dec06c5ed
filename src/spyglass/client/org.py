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

    async def invitations(self) -> list[m.OrgInvitation]:
        """The organizations that invited this account (spyglass's backend, beyond the seed)."""
        return await self.call(list[m.OrgInvitation], "GET", "/org/invitations")

    async def accept(self, org_id: str, accept: bool = True) -> bool:
        """Join the organization that invited this account (or decline, with ``accept=False``)."""
        return await self.success("POST", f"/org/invitations/{segment(org_id)}", params={"accept": accept})
