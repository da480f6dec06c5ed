"""Following the banner store: the stream of a backend that shares its store with others.

When several backends collect into one banner store (ClickHouse, the state on PostgreSQL), each
one's hub publishes what the store gained, read by mark, instead of what its own collector handed
it: so a banner collected by any backend reaches the readers of every backend, in mark order, and
each backend publishes it once (its own banners come back by the same read, never a second way),
under the same ``_id`` on every backend (made from its mark: a client that moves to another
backend can tell what it was sent already).

Marks are each writer's clock (see the ClickHouse store): a banner that another backend inserted
a moment late, or whose clock is a little behind, can carry a mark below one already read. So
each read looks LATE back from the newest mark seen and skips the marks it published already:
backends' clocks must agree within LATE (NTP does far better). Within the same window a banner
stored twice (two backends collected it at once: the later writer deletes its copy when it ends)
is published once.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from spyglass.exactjson import loads
from spyglass.server.banners.keys import banner_key
from spyglass.server.banners.shape import BadBanner, normalize
from spyglass.server.banners.store import BannerStore
from spyglass.server.stream.hub import StreamHub
from spyglass.server.tasks import cancel

log = logging.getLogger("spyglass.stream")

POLL = 0.2  # seconds between reads of the store when it gained nothing
LATE = 5_000_000_000  # marks (nanoseconds of the writers' clocks) each read looks back
PAGE = 5000  # marks read at once
IDS = uuid.UUID("0b5e7a3e-51c1-4c57-9d4e-5c0f0e5a7e11")  # a banner's _id is uuid5(IDS, its mark)


class StoreFollower:
    """A background service: reads what the store gained since the last read, publishes it."""

    def __init__(self, banners: BannerStore, hub: StreamHub, poll: float = POLL, late: int = LATE) -> None:
        self.banners = banners
        self.hub = hub
        self.poll = poll
        self.late = late
        self.floor = 0  # the store's last mark when we started: nothing older is published
        self.high = 0  # the newest mark published
        self.seen: set[int] = set()  # marks published, within ``late`` of ``high``
        # banners published (their keys: banner_key), within ``late``: two backends that collected one
        # banner at once stored it twice, until the later writer deletes its copy
        self.keys: dict[int, int] = {}
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        self.floor = self.high = await asyncio.to_thread(self.banners.last_mark)
        self._task = asyncio.create_task(self._run(), name="stream-follower")

    async def stop(self) -> None:
        await cancel(self._task)
        self._task = None

    async def _run(self) -> None:
        failing = False
        while True:
            try:
                banners = await asyncio.to_thread(self.read)
            except Exception as exc:  # the store away for a while: keep the mark, try again
                if not failing:
                    log.warning("the stream cannot read the banner store: %s", exc)
                failing, banners = True, []
            else:
                if failing:
                    log.warning("the stream reads the banner store again")
                failing = False
            for mark, banner in banners:
                self.hub.publish_banner(banner, str(uuid.uuid5(IDS, str(mark))))
            await asyncio.sleep(self.poll)

    def read(self) -> list[tuple[int, dict]]:
        """In a thread: the banners added since the last read, not published yet, in mark order
        (their bodies are read only while someone follows the stream)."""
        new: list[int] = []
        after = max(self.floor, self.high - self.late)
        while True:
            marks = self.banners.marks_since(after, PAGE)
            new += [m for m in marks if m not in self.seen]
            if len(marks) < PAGE:
                break
            after = marks[-1]
        if not new:
            return []
        bodies = self.banners.raw_bodies(new) if self.hub.subscriptions else {}
        self.seen.update(new)
        self.high = max(self.high, new[-1])
        self.seen = {m for m in self.seen if m > self.high - self.late}
        self.keys = {k: m for k, m in self.keys.items() if m > self.high - self.late}
        out = []
        for mark in new:
            if mark not in bodies:  # deleted since (a second copy), or no one follows the stream
                continue
            banner = loads(bodies[mark])
            key = identity(banner)
            if key is not None:
                if key in self.keys:
                    continue
                self.keys[key] = mark
            out.append((mark, banner))
        return out


def identity(banner: dict) -> int | None:
    """What identifies a banner in every store (None for one that has no address, port...)."""
    try:
        return banner_key(banner, normalize(banner))
    except (BadBanner, KeyError, TypeError):
        return None
