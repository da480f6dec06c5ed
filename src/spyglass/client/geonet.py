"""Client of the geographic network tools service: ping and DNS from one or many locations."""

from __future__ import annotations

import json
from typing import Generic, TypeVar

from spyglass import models as m
from spyglass.client.base import HostClient, segment
from spyglass.client.errors import ResponseFormatError
from spyglass.models.geonet import MISSING_HEADER

R = TypeVar("R", m.PingResult, m.DnsResult)


class GeoResults(list[R], Generic[R]):
    """One result per location that answered; ``missing`` names those that did not, and why."""

    missing: list[m.MissingAgent]


class GeoNetClient(HostClient):
    async def ping(self, target: str) -> m.PingResult:
        return await self.call(m.PingResult, "GET", f"/api/ping/{segment(target)}")

    async def geoping(self, target: str) -> GeoResults[m.PingResult]:
        return await self._geo(m.PingResult, f"/api/geoping/{segment(target)}", {})

    async def dns(self, hostname: str, rtype: str = "A") -> m.DnsResult:
        return await self.call(m.DnsResult, "GET", f"/api/dns/{segment(hostname)}", params={"rtype": rtype})

    async def geodns(self, hostname: str, rtype: str = "A") -> GeoResults[m.DnsResult]:
        return await self._geo(m.DnsResult, f"/api/geodns/{segment(hostname)}", {"rtype": rtype})

    async def _geo(self, model: type[R], path: str, params: dict) -> GeoResults[R]:
        body, headers = await self.transport.exchange("GET", path, params=params)
        results: GeoResults[R] = GeoResults(self.parse(list.__class_getitem__(model), body))
        try:
            results.missing = self.parse(list[m.MissingAgent], json.loads(headers.get(MISSING_HEADER, "[]")))
        except (ValueError, ResponseFormatError):  # a garbled header loses only the list
            results.missing = []
        return results
