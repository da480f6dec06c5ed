"""DNS methods of the main API (``/dns/...``)."""

from __future__ import annotations

from collections.abc import Sequence

from spyglass import models as m
from spyglass.client.base import HostClient, csv, segment


class DnsClient(HostClient):
    """Domain information (spends a query credit), forward and reverse lookups."""

    async def domain(
        self, domain: str, *, history: bool = False, type: str | None = None, page: int = 1
    ) -> m.DomainInfo:
        return await self.call(
            m.DomainInfo,
            "GET",
            f"/dns/domain/{segment(domain)}",
            params={"history": history, "type": type, "page": page},
            idempotent=False,
        )

    async def resolve(self, hostnames: str | Sequence[str]) -> dict[str, str | None]:
        return await self.call(dict[str, str | None], "GET", "/dns/resolve", params={"hostnames": csv(hostnames)})

    async def reverse(self, ips: str | Sequence[str]) -> dict[str, list[str] | None]:
        return await self.call(dict[str, list[str] | None], "GET", "/dns/reverse", params={"ips": csv(ips)})
