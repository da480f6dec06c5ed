"""The stream hub: every newly collected banner, fanned out to the subscribers whose filter it
matches.

Each banner is serialized once and the same bytes go to every subscriber. A subscriber has a
bounded queue, in banners and in bytes: when its reader falls behind (the socket stops taking
data, so its response waits), the oldest queued banners are dropped and counted instead of slowing
the collector, the other subscribers, or growing memory; and it is written at most
``CHUNK_BYTES`` at a time, so a reader that never reads holds up no more than that besides its
queue. One key may follow at most ``STREAMS_PER_KEY`` streams at once. Nothing here ever waits on
a subscriber.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import orjson

from spyglass.server.collect import Collected
from spyglass.server.memory import give_back_memory  # readers that left: their queues' memory
from spyglass.server.scanner.private import owner
from spyglass.server.shaping import for_namespace

log = logging.getLogger("spyglass.stream")

# Banners and bytes a subscriber may have waiting; past either the oldest are discarded (the
# newest banner is kept whatever its size). The queued bytes are those every subscriber shares
# (serialized once), so the budget bounds how much of the newest banners is kept, not a copy per
# reader; it holds a whole collect body (16 MiB at most), published at once, or even a reader
# keeping up lost most of every large batch (at 1 MiB and 2,000, 6,000 of each 8,000).
QUEUE_LIMIT = 20_000
QUEUE_BYTES = 16 << 20
CHUNK_BYTES = 64 << 10  # written to a reader at once (one banner at least)
STREAMS_PER_KEY = 8
HEARTBEAT = 15.0  # seconds of silence after which a subscriber gets a keep-alive


@dataclass(frozen=True)
class Published:
    """One banner as the stream sends it, with what the filters look at, taken out once."""

    line: bytes  # the banner's JSON, no newline
    ip: str | int | None  # as the banner writes it (``ip_str``, or the integer ``ip``)
    asn: str | None
    country: str | None
    port: int | None
    vulns: frozenset[str]

    @classmethod
    def of(cls, banner: dict) -> Published:
        try:
            line = orjson.dumps(banner)
        except TypeError:  # an integer past 64 bits (a certificate serial): kept exact
            line = json.dumps(banner, separators=(",", ":")).encode()
        asn = banner.get("asn")
        location = banner.get("location")
        country = location.get("country_code") if isinstance(location, dict) else None
        port = banner.get("port")
        vulns = banner.get("vulns")
        ids: Iterable = vulns.keys() if isinstance(vulns, dict) else vulns if isinstance(vulns, list) else ()
        ip = banner.get("ip_str", banner.get("ip"))
        return cls(
            line=line,
            ip=ip if isinstance(ip, str | int) and not isinstance(ip, bool) else None,
            # real exports carry the ASN as "AS3356" or as 3356
            asn=normal_asn(str(asn)) if isinstance(asn, str | int) and not isinstance(asn, bool) else None,
            country=country.upper() if isinstance(country, str) else None,
            port=port if isinstance(port, int) and not isinstance(port, bool) else None,
            vulns=frozenset(v.upper() for v in ids if isinstance(v, str)),
        )


def normal_asn(text: str) -> str:
    """``AS15169`` for ``as15169`` or ``15169``."""
    text = text.strip().upper()
    return text if text.startswith("AS") else f"AS{text}"


Match = Callable[[Published], bool]


def match_all(p: Published) -> bool:
    return True


def match_asn(asns: Iterable[str]) -> Match:
    wanted = frozenset(normal_asn(a) for a in asns)
    return lambda p: p.asn in wanted


def match_countries(countries: Iterable[str]) -> Match:
    wanted = frozenset(c.strip().upper() for c in countries)
    return lambda p: p.country in wanted


def match_ports(ports: Iterable[int]) -> Match:
    wanted = frozenset(ports)
    return lambda p: p.port in wanted


def match_vulns(vulns: Iterable[str]) -> Match:
    wanted = frozenset(v.strip().upper() for v in vulns)
    return lambda p: not wanted.isdisjoint(p.vulns)


class TooManyStreams(Exception):
    """The key already follows as many streams as it may."""


class Subscription:
    def __init__(
        self, match: Match, limit: int, budget: int = QUEUE_BYTES, key: str = "", account: int | None = None
    ) -> None:
        self.match = match
        self.limit = limit
        self.budget = budget
        self.key = key
        self.account = account  # whose reader: the only one a private scan result reaches
        self.queue: deque[bytes] = deque()
        self.queued_bytes = 0
        self.discarded = 0  # since the reader last took its queue
        self.discarded_total = 0
        self.closed = False
        self.wake = asyncio.Event()

    def offer(self, line: bytes) -> None:
        self.queue.append(line)
        self.queued_bytes += len(line)
        while len(self.queue) > self.limit or (self.queued_bytes > self.budget and len(self.queue) > 1):
            self.queued_bytes -= len(self.queue.popleft())
            self.discarded += 1
            self.discarded_total += 1
        self.wake.set()

    def take(self, most_bytes: int = CHUNK_BYTES) -> tuple[list[bytes], int]:
        """The oldest queued banners, up to ``most_bytes`` (one at least), and how many were
        discarded since the last take. The wake stays set while more is queued."""
        items: list[bytes] = []
        size = 0
        while self.queue and (not items or size + len(self.queue[0]) <= most_bytes):
            line = self.queue.popleft()
            size += len(line)
            items.append(line)
        self.queued_bytes -= size
        discarded, self.discarded = self.discarded, 0
        if not self.queue:
            self.wake.clear()
        return items, discarded

    def close(self) -> None:
        self.closed = True
        self.wake.set()


class StreamHub:
    """Subscribed to the collector; also a background service (stopping it ends every stream)."""

    def __init__(
        self,
        namespace: str,
        queue_limit: int = QUEUE_LIMIT,
        heartbeat: float = HEARTBEAT,
        per_key: int = STREAMS_PER_KEY,
        queue_bytes: int = QUEUE_BYTES,
    ) -> None:
        self.namespace = namespace
        self.queue_limit = queue_limit
        self.queue_bytes = queue_bytes
        self.heartbeat = heartbeat
        self.per_key = per_key
        self.subscriptions: set[Subscription] = set()
        self.published = 0

    def subscribe(
        self,
        match: Match = match_all,
        key: str = "",
        *,
        queue: tuple[int, int] | None = None,
        account: int | None = None,
    ) -> Subscription:
        """A new subscription; :class:`TooManyStreams` if ``key`` follows ``per_key`` already.
        ``queue``: (banners, bytes) it may hold, rather than the hub's bounds for a reader."""
        if key and sum(1 for s in self.subscriptions if s.key == key) >= self.per_key:
            raise TooManyStreams(f"This key follows {self.per_key} streams already, the most it may at once")
        limit, budget = queue or (self.queue_limit, self.queue_bytes)
        sub = Subscription(match, limit, budget, key, account)
        self.subscriptions.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self.subscriptions:
            self.subscriptions.discard(sub)
            held = sub.queued_bytes
            sub.queue.clear()
            if held > CHUNK_BYTES or not self.subscriptions:
                give_back_memory()

    def publish(self, collected: list[Collected]) -> None:
        """The collector's listener: runs on the event loop, never waits."""
        for item in collected:
            self.publish_banner(item.banner)

    def publish_banner(self, banner: dict, ident: str | None = None) -> None:
        """``ident``: its ``_id`` (a new one when None)."""
        self.published += 1
        if not self.subscriptions:
            return
        only = owner(banner)  # a scan of the server's own networks: its account's readers alone
        # As search serves it, plus the ``_id`` the seed says every stream item carries.
        banner = for_namespace(dict(banner), self.namespace)
        banner.setdefault("_id", ident or str(uuid.uuid4()))
        p = Published.of(banner)
        for sub in self.subscriptions:
            if only in (None, sub.account) and sub.match(p):
                sub.offer(p.line)

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        for sub in list(self.subscriptions):
            sub.close()
