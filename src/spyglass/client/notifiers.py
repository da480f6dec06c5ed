"""Notifiers (``/notifier...``): where alerts are sent."""

from __future__ import annotations

from collections.abc import Mapping

from spyglass import models as m
from spyglass.client.base import HostClient, segment


class NotifiersClient(HostClient):
    """The account's notifiers and the providers they may use."""

    async def providers(self) -> dict[str, m.ProviderSpec]:
        return await self.call(dict[str, m.ProviderSpec], "GET", "/notifier/provider")

    async def create(self, provider: str, args: Mapping[str, str], description: str | None = None) -> m.NotifierCreated:
        form = {"provider": provider, **args}
        if description is not None:
            form["description"] = description
        return await self.call(m.NotifierCreated, "POST", "/notifier", data=form)

    async def get(self, notifier_id: str) -> m.Notifier:
        return await self.call(m.Notifier, "GET", f"/notifier/{segment(notifier_id)}")

    async def update(self, notifier_id: str, args: Mapping[str, str]) -> m.NotifierCreated:
        return await self.call(m.NotifierCreated, "PUT", f"/notifier/{segment(notifier_id)}", data=dict(args))

    async def delete(self, notifier_id: str) -> bool:
        return await self.success("DELETE", f"/notifier/{segment(notifier_id)}")

    async def list(self) -> m.NotifierList:
        return await self.call(m.NotifierList, "GET", "/notifier")

    async def test(self, notifier_id: str) -> m.NotifierTest:
        """Send a test notification now; the answer says whether it was delivered."""
        return await self.call(m.NotifierTest, "POST", f"/notifier/{segment(notifier_id)}/test")
