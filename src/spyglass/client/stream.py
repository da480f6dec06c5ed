"""Client of the real-time stream host (``{stream_url}``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

import httpx
from httpx_sse import EventSource

from spyglass import models as m
from spyglass.client.base import HostClient, csv, segment
from spyglass.client.errors import ResponseFormatError
from spyglass.client.transport import error_from_response


@dataclass(frozen=True)
class StreamDebug:
    """The server discarded ``discarded`` messages because this reader fell behind."""

    discarded: int


StreamItem = m.Banner | StreamDebug


class StreamClient(HostClient):
    """Banners as they are collected. Each method yields until the caller stops iterating."""

    def banners(self, *, fmt: str = "json", debug: bool = False) -> AsyncIterator[StreamItem]:
        return self._follow("/banners", fmt, debug)

    def asn(self, asns: str | Iterable[str], **kw) -> AsyncIterator[StreamItem]:
        return self._follow(f"/asn/{segment(csv(asns))}", **kw)

    def countries(self, countries: str | Iterable[str], **kw) -> AsyncIterator[StreamItem]:
        return self._follow(f"/countries/{segment(csv(countries))}", **kw)

    def ports(self, ports: str | Iterable[int], **kw) -> AsyncIterator[StreamItem]:
        return self._follow(f"/ports/{segment(csv(ports))}", **kw)

    def vulns(self, vulns: str | Iterable[str], **kw) -> AsyncIterator[StreamItem]:
        return self._follow(f"/vulns/{segment(csv(vulns))}", **kw)

    async def _follow(self, path: str, fmt: str = "json", debug: bool = False) -> AsyncIterator[StreamItem]:
        if fmt not in ("json", "sse"):
            raise ValueError("fmt is 'json' or 'sse'")
        params = {"t": fmt, "debug": 1 if debug else None}
        try:
            async with self.transport.stream(self.ns(path), params) as response:
                if not response.is_success:
                    await response.aread()
                    raise error_from_response(response, None)
                if fmt == "sse":
                    lines = (sse.data async for sse in EventSource(response).aiter_sse())
                else:
                    lines = response.aiter_lines()
                async for line in lines:
                    if line.strip():
                        yield self._item(line)
        except httpx.TransportError as exc:
            raise self.transport.transport_error(exc) from None

    def _item(self, line: str) -> StreamItem:
        try:
            body = json.loads(line)
        except ValueError:
            raise ResponseFormatError("the stream sent a line that is not JSON") from None
        if isinstance(body, dict) and body.get("event") == "debug":
            return StreamDebug(int(body.get("discarded", 0)))
        return self.parse(m.Banner, body)
