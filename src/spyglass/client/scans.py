"""On-demand scanning (``/{ns}/scan...``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from spyglass import models as m
from spyglass.client.base import HostClient, csv, segment


class ScansClient(HostClient):
    """Ask for scans and follow them. Submissions spend scan credits and are never repeated blindly."""

    async def ports(self) -> list[int]:
        return await self.call(list[int], "GET", self.ns("/ports"))

    async def protocols(self) -> dict[str, str]:
        return await self.call(dict[str, str], "GET", self.ns("/protocols"))

    async def submit(
        self, ips: str | Sequence[str] | Mapping[str, Sequence[tuple[int, str] | int]]
    ) -> m.ScanSubmission:
        """Scan IPs or netblocks; a mapping asks for given ``(port, protocol)`` pairs per address (a
        bare port: any protocol, which the embedded backend accepts beyond the original service)."""
        if isinstance(ips, Mapping):
            form = json.dumps({ip: [p if isinstance(p, int) else list(p) for p in pairs] for ip, pairs in ips.items()})
        else:
            form = csv(ips)
        result = await self.call(m.ScanSubmission, "POST", self.ns("/scan"), data={"ips": form})
        self.credits.update(scan=result.credits_left)
        return result

    async def internet(self, port: int, protocol: str) -> m.ScanSubmission:
        return await self.call(
            m.ScanSubmission, "POST", self.ns("/scan/internet"), data={"port": port, "protocol": protocol}
        )

    async def status(self, scan_id: str) -> m.ScanStatus:
        return await self.call(m.ScanStatus, "GET", self.ns(f"/scan/{segment(scan_id)}"))

    async def cancel(self, scan_id: str) -> m.ScanStatus:
        """Stop a scan for good (spyglass's backend, beyond the seed); what it found stays."""
        return await self.call(m.ScanStatus, "DELETE", self.ns(f"/scan/{segment(scan_id)}"))

    async def list(self, page: int | None = None) -> m.ScanList:
        """A page of the account's scans, newest first (100 a page; ``total``: all of them)."""
        params = {"page": page} if page is not None else None
        return await self.call(m.ScanList, "GET", self.ns("/scans"), params=params)
