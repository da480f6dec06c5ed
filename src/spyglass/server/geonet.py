"""The geonet agent: ping and DNS from this location, and the same from every location at once
(this agent and its peers, other spyglass geonet agents, one per location). The routes of
:mod:`spyglass.server.routers.geonet` are its HTTP face.

A geo form asks each peer's single-location endpoint concurrently and answers when all have
answered or the deadline has passed, whichever is first; a peer that is down, slow or failing is
left out and named, with the reason.

Geonet takes no key, so it measures only the public internet unless the operator opens a network
(``serve --geonet-allow CIDR``; the dashboard's own backend opens loopback): a ping of an address
in the machine's own networks, or of a name that resolves there, is refused before any packet,
and DNS answers that point there are withheld (the rule of :mod:`spyglass.netools.networks`); a
name is then answered as one that does not exist, so that no one learns the internal names.
Probes run in a small pool of their own and lookups hold no thread, at most ``MEASURING`` at once
(429 beyond): a flood of pings to hosts that never answer waits on nothing but itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import BaseModel

from spyglass.models import DnsResult, GeoLocation, PingResult
from spyglass.models.geonet import MissingAgent
from spyglass.netools.dns import Resolver
from spyglass.netools.networks import Reach, parse_address
from spyglass.netools.ping import PingFailed, ping
from spyglass.netools.targets import is_ip
from spyglass.server.outbound import tls

# The seed's Location has three required strings and no way to say "not known"; an agent started
# without --location says so in each of them rather than inventing a place or sending "".
UNKNOWN_LOCATION = GeoLocation(city="unknown location", country="unknown", latlon="unknown")


@dataclass
class GeonetSettings:
    location: GeoLocation = field(default_factory=lambda: UNKNOWN_LOCATION.model_copy())
    peers: list[str] = field(default_factory=list)
    deadline: float = 4.0  # seconds a geo form waits for its slowest location
    nameservers: list[str] | None = None  # None: the system's resolvers
    dns_port: int = 53
    dns_timeout: float = 3.0
    ping_count: int = 3
    # Requests a second from one address (with a burst): geonet takes no key, and a backend bound
    # beyond loopback would otherwise be an open ping and DNS relay.
    rate_limit: float = 5.0
    burst: int = 20
    allow: list[str] = field(default_factory=list)  # internal networks it may measure (serve --geonet-allow)


MEASURING = 16  # pings and lookups under way at once, from every client
PROBE_THREADS = 8  # pings whose replies are awaited at once (each holds a thread for its probes)
WITHHELD = "answers in a network this agent does not measure are withheld"


class Busy(Exception):
    """As many measurements are under way as the agent takes at once."""


def parse_location(text: str) -> GeoLocation:
    """``"City,CC,lat,lon"`` (as on the command line) as a Location."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4:
        raise ValueError("a location is City,CC,latitude,longitude")
    city, country, lat, lon = parts
    latitude, longitude = float(lat), float(lon)
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        raise ValueError("latitude is -90..90 and longitude -180..180")
    return GeoLocation(city=city, country=country, latlon=f"{latitude:g},{longitude:g}")


class Agent:
    """What the geonet routes work with: the settings and a resolver bound to them."""

    def __init__(self, settings: GeonetSettings) -> None:
        self.settings = settings
        self.here = settings.location
        self.resolver = Resolver(settings.nameservers, settings.dns_port, settings.dns_timeout)
        self.reach = Reach(settings.allow)
        self.probes = ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="geonet probe")
        self.measuring = 0

    def permitted(self, address: str) -> bool:
        return self.reach.permitted(parse_address(address))

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self.measuring >= MEASURING:
            raise Busy(f"{MEASURING} pings and lookups are under way: try again in a moment")
        self.measuring += 1
        try:
            yield
        finally:
            self.measuring -= 1

    async def ping(self, target: str) -> PingResult:
        """:class:`~spyglass.netools.ping.PingFailed` when the target cannot (or may not) be pinged."""
        async with self.slot():
            return await ping(
                target,
                self.here,
                resolver=self.resolver,
                count=self.settings.ping_count,
                permitted=self.permitted,
                executor=self.probes,
            )

    async def dns(self, hostname: str, rtype: str) -> DnsResult:
        if rtype == "PTR" and is_ip(hostname) and not self.permitted(hostname):
            return DnsResult(answers=[], from_loc=self.here, status="REFUSED", error=WITHHELD)
        async with self.slot():
            result = await self.resolver.query(hostname, rtype, self.here)
        shown = [r for r in result.answers if r.type not in ("A", "AAAA") or self.permitted(r.value)]
        if len(shown) == len(result.answers):
            return result
        # A name is not told apart from one that does not exist (geonet takes no key): its inside
        # addresses are left out with no word of it, and with none left it is answered as NXDOMAIN.
        if not shown:
            return DnsResult(answers=[], from_loc=self.here, status="NXDOMAIN")
        return result.model_copy(update={"answers": shown})

    async def fan_out(
        self, local: Awaitable[Any], peer_path: str, params: dict[str, str], model: type[BaseModel]
    ) -> tuple[list[Any], list[MissingAgent]]:
        """This agent's ``local`` answer and each peer's at ``peer_path``, within the deadline: the
        answers, and the locations that gave none (with why). The local answer's own failure (a bad
        target) is raised as it is."""
        deadline = self.settings.deadline
        async with httpx.AsyncClient(timeout=deadline, verify=tls()) as http:
            tasks = {asyncio.ensure_future(local): "this agent"}
            for peer in self.settings.peers:
                tasks[asyncio.ensure_future(_ask_peer(http, peer.rstrip("/") + peer_path, params, model))] = peer
            done, pending = await asyncio.wait(tasks, timeout=deadline)
            for task in pending:
                task.cancel()
        first = next(iter(tasks))
        if first in done and isinstance(error := first.exception(), PingFailed):
            raise error  # the target itself is bad: the router says so (422)
        results, missing = [], []
        for task, agent in tasks.items():
            if task in pending:
                missing.append(MissingAgent(agent=agent, reason=f"no answer within {deadline:g} s"))
            elif (failure := task.exception()) is not None:
                missing.append(MissingAgent(agent=agent, reason=_reason(failure)))
            else:
                results.append(task.result())
        return results, missing


async def _ask_peer(http: httpx.AsyncClient, url: str, params: dict[str, str], model: type[BaseModel]):
    response = await http.get(url, params=params)
    if response.status_code == 422:
        detail = response.json().get("detail") or [{}]
        raise PeerRefused(str(detail[0].get("msg", "rejected the request")))
    response.raise_for_status()
    return model.model_validate(response.json())


class PeerRefused(Exception):
    pass


def _reason(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        return "connection refused or unreachable"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"answered HTTP {exc.response.status_code}"
    if isinstance(exc, PingFailed):
        return str(exc)
    return str(exc) or type(exc).__name__
