"""The client library: one async client per host over a shared transport core.

Usable on its own from a script::

    async with Clients.from_profile(Profile(url="http://127.0.0.1:8765", key="...")) as c:
        print(await c.account.api_info())
        print((await c.search.count("port:22")).total)

One sub-client per section of the seeds, named as the section: ``search``, ``scans``, ``alerts``,
``notifiers``, ``directory``, ``data``, ``org``, ``account``, ``dns``, ``tools`` on the main host,
and ``stream``, ``trends``, ``geonet`` on theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from spyglass.client.account import AccountClient
from spyglass.client.alerts import AlertsClient
from spyglass.client.base import HostClient
from spyglass.client.data import DataClient
from spyglass.client.directory import DirectoryClient
from spyglass.client.dns import DnsClient
from spyglass.client.errors import (
    APIError,
    AuthenticationError,
    BadRequest,
    ConnectFailed,
    ConnectionDropped,
    Forbidden,
    NoCredits,
    NotFound,
    RateLimited,
    RequestTimeout,
    ResponseFormatError,
    ServerError,
    SpyglassError,
    TransportError,
)
from spyglass.client.geonet import GeoNetClient
from spyglass.client.notifiers import NotifiersClient
from spyglass.client.org import OrgClient
from spyglass.client.ratelimit import RateLimiter
from spyglass.client.scans import ScansClient
from spyglass.client.search import SearchClient
from spyglass.client.stream import Stream, StreamClient, StreamDebug, StreamState
from spyglass.client.streamparse import StreamBanner
from spyglass.client.tools import ToolsClient
from spyglass.client.transport import Credits, Reachability, RetryPolicy, Transport
from spyglass.client.trends import TrendsClient
from spyglass.config import Profile

MAIN_SECTIONS = {
    "search": SearchClient,
    "scans": ScansClient,
    "alerts": AlertsClient,
    "notifiers": NotifiersClient,
    "directory": DirectoryClient,
    "data": DataClient,
    "org": OrgClient,
    "account": AccountClient,
    "dns": DnsClient,
    "tools": ToolsClient,
}


KNOWN_NAMESPACES = ("intel", "shodan")  # this project's, and the original service's


@dataclass
class Clients:
    """The clients of one profile: a sub-client per section of the main host (sharing its
    transport), and one each for the stream, trends and geonet hosts. All share the credits; the
    main and trends hosts share the pacing."""

    search: SearchClient
    scans: ScansClient
    alerts: AlertsClient
    notifiers: NotifiersClient
    directory: DirectoryClient
    data: DataClient
    org: OrgClient
    account: AccountClient
    dns: DnsClient
    tools: ToolsClient
    stream: StreamClient
    trends: TrendsClient
    geonet: GeoNetClient
    credits: Credits
    reachability: Reachability

    @classmethod
    def from_profile(
        cls, profile: Profile, retry: RetryPolicy | None = None, http_transport: httpx.AsyncBaseTransport | None = None
    ) -> Clients:
        """The clients of ``profile``; ``http_transport`` replaces the network (e.g. an httpx.MockTransport)."""
        credits = Credits()
        reachability = Reachability()  # of the main host: the one the status bar speaks for
        limiter = RateLimiter(profile.rate) if profile.rate else None

        def transport(host: str, key: str | None, limiter: RateLimiter | None) -> Transport:
            return Transport(
                profile.base(host),
                key,
                timeout=profile.timeout,
                rate_limiter=limiter,
                retry=retry,
                credits=credits,
                reachability=reachability if host == "main" else None,
                http_transport=http_transport,
            )

        ns = profile.namespace
        main = transport("main", profile.key, limiter)
        sections = {name: client(main, ns) for name, client in MAIN_SECTIONS.items()}
        return cls(
            **sections,  # type: ignore[arg-type]
            stream=StreamClient(transport("stream", profile.key, None), ns),
            trends=TrendsClient(transport("trends", profile.key, limiter), ns),
            geonet=GeoNetClient(transport("geonet", None, None), ns),
            credits=credits,
            reachability=reachability,
        )

    @property
    def transport(self) -> Transport:
        """The main host's transport (for raw requests)."""
        return self.search.transport

    async def find_namespace(self) -> str | None:
        """The namespace the main host's methods answer under: this profile's if they do there, else
        the first of :data:`KNOWN_NAMESPACES` that does; None when none does (a free call each)."""
        from spyglass.client.errors import APIError, NotFound

        for namespace in dict.fromkeys((self.search.namespace, *KNOWN_NAMESPACES)):
            try:
                await self.transport.request("GET", f"/{namespace}/ports")
            except NotFound:
                continue
            except APIError:  # refused (a key, a plan), but the method is there
                return namespace
            return namespace
        return None

    async def aclose(self) -> None:
        for transport in (self.transport, self.stream.transport, self.trends.transport, self.geonet.transport):
            await transport.aclose()

    async def __aenter__(self) -> Clients:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


__all__ = [
    "APIError",
    "AccountClient",
    "AlertsClient",
    "AuthenticationError",
    "BadRequest",
    "Clients",
    "DataClient",
    "DirectoryClient",
    "DnsClient",
    "NotifiersClient",
    "OrgClient",
    "ScansClient",
    "SearchClient",
    "ToolsClient",
    "ConnectFailed",
    "ConnectionDropped",
    "Credits",
    "Forbidden",
    "Reachability",
    "GeoNetClient",
    "HostClient",
    "NoCredits",
    "NotFound",
    "RateLimited",
    "RateLimiter",
    "RequestTimeout",
    "ResponseFormatError",
    "RetryPolicy",
    "ServerError",
    "SpyglassError",
    "StreamClient",
    "Stream",
    "StreamBanner",
    "StreamDebug",
    "StreamState",
    "Transport",
    "TransportError",
    "TrendsClient",
]
