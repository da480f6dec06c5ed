"""Bulk data (``/{ns}/data...``, enterprise)."""

from __future__ import annotations

from spyglass import models as m
from spyglass.client.base import HostClient, segment


class DataClient(HostClient):
    """Datasets and their downloadable files."""

    async def datasets(self) -> list[m.Dataset]:
        return await self.call(list[m.Dataset], "GET", self.ns("/data"))

    async def files(self, dataset: str) -> list[m.DatasetFile]:
        return await self.call(list[m.DatasetFile], "GET", self.ns(f"/data/{segment(dataset)}"))
