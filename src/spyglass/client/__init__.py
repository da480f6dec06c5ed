"""The client library: one async client per host over a shared transport core.

Usable on its own from a script::

    async with Clients.from_profile(Profile(url="http://127.0.0.1:8765", key="...")) as c:
        print(await c.intel.api_info())
"""

from __future__ import annotations

from dataclasses import dataclass

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
from spyglass.client.intel import IntelClient
from spyglass.client.ratelimit import RateLimiter
from spyglass.client.stream import StreamClient, StreamDebug
from spyglass.client.transport import Credits, Reachability, RetryPolicy, Transport
from spyglass.client.trends import TrendsClient
from spyglass.config import Profile


@dataclass
class Clients:
    """The four clients of one profile, sharing credits and (for main and trends) pacing."""

    intel: IntelClient
    stream: StreamClient
    trends: TrendsClient
    geonet: GeoNetClient
    credits: Credits
    reachability: Reachability

    @classmethod
    def from_profile(cls, profile: Profile, retry: RetryPolicy | None = None) -> Clients:
        credits = Credits()
        reachability = Reachability()  # of the main host: the one the status bar speaks for
        limiter = RateLimiter(profile.rate) if profile.rate else None

        def transport(host: str, key: str | None, limiter: RateLimiter | None) -> Transport:
            return Transport(profile.base(host), key, timeout=profile.timeout, rate_limiter=limiter,
                             retry=retry, credits=credits,
                             reachability=reachability if host == "main" else None)

        ns = profile.namespace
        return cls(
            intel=IntelClient(transport("main", profile.key, limiter), ns),
            stream=StreamClient(transport("stream", profile.key, None), ns),
            trends=TrendsClient(transport("trends", profile.key, limiter), ns),
            geonet=GeoNetClient(transport("geonet", None, None), ns),
            credits=credits,
            reachability=reachability,
        )

    async def aclose(self) -> None:
        for client in (self.intel, self.stream, self.trends, self.geonet):
            await client.aclose()

    async def __aenter__(self) -> Clients:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()


__all__ = [
    "APIError", "AuthenticationError", "BadRequest", "Clients", "ConnectFailed", "ConnectionDropped",
    "Credits", "Forbidden", "Reachability", "GeoNetClient", "IntelClient", "NoCredits", "NotFound", "RateLimited",
    "RateLimiter", "RequestTimeout", "ResponseFormatError", "RetryPolicy", "ServerError",
    "SpyglassError", "StreamClient", "StreamDebug", "Transport", "TransportError", "TrendsClient",
]
