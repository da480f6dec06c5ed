"""Client of the geographic network tools service: ping and DNS from one or many locations."""

from __future__ import annotations

from spyglass import models as m
from spyglass.client.base import HostClient
from spyglass.client.intel import _seg


class GeoNetClient(HostClient):
    async def ping(self, target: str) -> m.PingResult:
        return await self.call(m.PingResult, "GET", f"/api/ping/{_seg(target)}")

    async def geoping(self, target: str) -> list[m.PingResult]:
        return await self.call(list[m.PingResult], "GET", f"/api/geoping/{_seg(target)}")

    async def dns(self, hostname: str, rtype: str = "A") -> m.DnsResult:
        return await self.call(m.DnsResult, "GET", f"/api/dns/{_seg(hostname)}", params={"rtype": rtype})

    async def geodns(self, hostname: str, rtype: str = "A") -> list[m.DnsResult]:
        return await self.call(list[m.DnsResult], "GET", f"/api/geodns/{_seg(hostname)}", params={"rtype": rtype})
