"""Utility methods (``/tools/...``) and what a spyglass backend says of itself."""

from __future__ import annotations

from spyglass.client.base import HostClient
from spyglass.client.errors import NotFound


class ToolsClient(HostClient):
    """Your address and headers as the server sees them; a spyglass backend's status."""

    async def http_headers(self) -> dict[str, str]:
        return await self.call(dict[str, str], "GET", "/tools/httpheaders")

    async def my_ip(self) -> str:
        return await self.call(str, "GET", "/tools/myip")

    async def backend_info(self) -> dict | None:
        """What a spyglass backend holds (banners, demo data); None from other services."""
        try:
            return await self.call(dict, "GET", "/spyglass/info")
        except NotFound:
            return None
