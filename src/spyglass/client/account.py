"""The account: its profile and its plan (``/account/profile``, ``/api-info``)."""

from __future__ import annotations

from spyglass import models as m
from spyglass.client.base import HostClient


class AccountClient(HostClient):
    """Who the key belongs to, its plan and its credits."""

    async def profile(self) -> m.AccountProfile:
        return await self.call(m.AccountProfile, "GET", "/account/profile")

    async def api_info(self) -> m.ApiInfo:
        info = await self.call(m.ApiInfo, "GET", "/api-info")
        limits = info.usage_limits
        self.credits.update(
            query=info.query_credits,
            scan=info.scan_credits,
            plan=info.plan,
            monitored_ips=limits.monitored_ips if limits else info.monitored_ips,
        )
        return info
