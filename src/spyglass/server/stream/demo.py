"""The demo collector: synthetic banners (``spyglass.datagen``, 198.18.0.0/15) stamped with the
current time and handed to the collector at a steady rate, so the stream is live offline.

They are rescans of the demo data's own hosts (the same organisations, software and names, seen
on a later pass), so a banner pivoted on from the stream leads to a host with its history.

It never mixes synthetic banners into real data: it runs on an empty data dir or one holding
the demo data, and otherwise logs why it does not.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime

from spyglass.server.banners.keys import service_key_of
from spyglass.server.banners.store import BannerStore
from spyglass.server.collect import Collector
from spyglass.server.tasks import cancel

log = logging.getLogger("spyglass.demo")

BURST = 2.0  # seconds of banners at most in one batch, after a stall (a slow index commit)
# A month of the demo data's history sees about a ninth of its services (6,864 services, 700-860 a
# month): the collector rescans that share of them, so that the month it adds to charts in its
# trends like the months before (rescanning all of them, it held 9 times any other month).
MONTHLY_SHARE = 9


def rescans(visit: int) -> Iterator[dict]:
    """The demo data's hosts (``generate(DEMO_BANNERS, DEMO_SEED)``), pass after pass from ``visit``
    on (the demo data is the first pass: a later one is a rescan), each service once a pass; of
    them the services a month of the demo's history would see (MONTHLY_SHARE), always the same."""
    from spyglass.datagen import generate
    from spyglass.server.demostore import DEMO_BANNERS, DEMO_SEED

    passes = generate(2**62, seed=DEMO_SEED, hosts=DEMO_BANNERS // 6, visit=visit)
    return (b for b in each_service_once(passes) if _monthly(b))


def _monthly(banner: dict) -> bool:
    return service_key_of(banner["ip_str"], banner["port"], banner.get("transport", "tcp")) % MONTHLY_SHARE == 0


def each_service_once(banners: Iterator[dict]) -> Iterator[dict]:
    """The generator gives each service's history in a row; a crawler pass sees a service once
    (stamped with the same time, the history would read as one service collected several times)."""
    last = None
    for banner in banners:
        service = (banner.get("ip_str"), banner.get("port"), banner.get("transport"))
        if service != last:
            yield banner
        last = service


class DemoCollector:
    def __init__(self, collector: Collector, banners: BannerStore, rate: float) -> None:
        self.collector = collector
        self.banners = banners
        self.rate = rate  # banners per second
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        if self.rate <= 0:
            return
        banners = self.banners
        if banners.last_mark() and not banners.get_meta("demo"):
            log.warning("the demo collector does not run: this data dir holds real data, not the demo's")
            return
        banners.set_meta("demo", "1")
        self._task = asyncio.create_task(self._run(), name="demo-collector")

    async def stop(self) -> None:
        await cancel(self._task)
        self._task = None

    async def _run(self) -> None:
        source = rescans(visit=1 + int(time.time()) % 1_000_000)  # another pass each start
        started, produced = time.monotonic(), 0
        while True:
            due = int((time.monotonic() - started) * self.rate) - produced
            if due > self.rate * BURST:  # fell behind: skip ahead rather than flood
                produced += due - int(self.rate * BURST)
                due = int(self.rate * BURST)
            if due <= 0:
                await asyncio.sleep(max(0.01, 1 / self.rate))
                continue
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
            batch = [{**next(source), "timestamp": now} for _ in range(due)]
            produced += due
            try:
                await self.collector.collect(batch, "demo")
            except Exception:  # e.g. the index failed once: the next batch tries again
                log.exception("the demo collector's batch failed")
                await asyncio.sleep(1.0)
