"""The scan worker: runs every accepted scan to DONE, in the background, bounded and durable.

Each scan walks its probes in the spec's order, a chunk at a time: a connect pass over the chunk
(:mod:`.sweep`) finds the open ports, and a pool of workers runs the protocol modules on those
only. All scans share one cap on open connections (``scan_concurrency``) and one pace of connects
(``scan_rate``, less while the server's loop is busy: sweep.Pace). What is found goes
through the collector (indexed, then published to the stream and alert triggers) in batches; after
each batch is stored, the scan's watermark is saved, so a restart resumes where the stored results
end and nothing is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import socket
from collections import OrderedDict
from collections.abc import Iterator

from spyglass.netools.scantargets import Probe, ScanSpec
from spyglass.server.banners.store import BannerStore, StoreUnavailable
from spyglass.server.collect import Collector
from spyglass.server.scanner.crawler import banner_of, is_local
from spyglass.server.scanner.private import mark
from spyglass.server.scanner.probe import probe
from spyglass.server.scanner.protocols import PORTS
from spyglass.server.scanner.sweep import CONNECT_TIMEOUT, Pace, Slots, connect_sweep
from spyglass.server.state.scans import CANCELLED, Scan, ScanState

log = logging.getLogger("spyglass.scans")

KNOWN_ADDRESSES = 1024  # addresses whose latest banner is remembered during a scan
FLUSH_EVERY = 0.5  # seconds between batches of results (and progress saves)
CHUNK = 4096  # probes in one connect pass
MODULE_WORKERS = 512  # at most, protocol modules running at once in one scan
LOOK_EVERY = 2.0  # seconds at most between looks for scans to claim (a released one waits no longer)


class ScanService:
    def __init__(
        self,
        store: ScanState,
        collector: Collector,
        banners: BannerStore,
        *,
        concurrency: int,
        timeout: float,
        rate: int = 20_000,
        lease: float = 30.0,
    ) -> None:
        self.store = store
        self.collector = collector
        self.banners = banners
        self.concurrency = max(1, concurrency)
        self.timeout = timeout
        self.lease = max(1.0, lease)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"  # this backend, in leases
        self.rate = rate
        self._slots: Slots | None = None
        self._pace: Pace | None = None
        self._tasks: dict[str, asyncio.Task] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._tending: asyncio.Task | None = None

    async def start(self) -> None:
        self._slots = Slots(self.concurrency)
        self._pace = Pace(self.rate)
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._tending = asyncio.create_task(self._tend(), name="scan claims")

    async def stop(self) -> None:
        tasks = [t for t in (self._tending, *self._tasks.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        with contextlib.suppress(StoreUnavailable):  # unreachable: the leases lapse by themselves
            await asyncio.to_thread(self.store.release, self.owner)  # another backend resumes them now

    async def _tend(self) -> None:
        """Renew the leases of the scans running here, stop those no longer ours, claim new ones."""
        while True:
            try:
                for scan_id in list(self._tasks):
                    if not await asyncio.to_thread(self.store.renew, scan_id, self.owner, self.lease):
                        log.info("scan %s is no longer this backend's (cancelled or taken over)", scan_id)
                        self._stop_task(scan_id)
                while scan := await asyncio.to_thread(self.store.claim, self.owner, self.lease):
                    log.info("running scan %s from probe %d of %d", scan.id, scan.probed, scan.probes)
                    self._launch(scan)
            except StoreUnavailable as exc:  # the shared state is away: try again next round
                log.warning("scans: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), min(self.lease / 3, LOOK_EVERY))
            self._wake.clear()

    def submit(self, scan: Scan) -> None:
        """Queue an accepted scan (its row is written and its credits spent): this backend is
        woken to claim it (another may claim it first)."""
        self.store.queue(scan.id)
        if self._loop is not None:  # routes run in worker threads: the claim happens on the server's loop
            self._loop.call_soon_threadsafe(self._wake.set)
        # else: not serving (a script using the app without a server): the next start runs it

    def running(self) -> int:
        return len(self._tasks)

    def cancel(self, scan_id: str) -> None:
        """Stop a scan for good: marked CANCELLED first (a restart does not resume it), then its
        probes end; what it found before is kept. From a route's thread or the loop."""
        self.store.set_status(scan_id, CANCELLED)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop_task, scan_id)

    def _stop_task(self, scan_id: str) -> None:
        # Once: a second cancel (the cancel route, then a failed renewal) would cut off the run's
        # last flush, whose results are stored but not yet counted.
        if (task := self._tasks.get(scan_id)) and not task.cancelling():
            task.cancel()

    def _launch(self, scan: Scan) -> None:
        if scan.id in self._tasks:  # claimed again after its lease lapsed here: it is still running
            return
        task = asyncio.create_task(ScanRun(self, scan).run(), name=f"scan {scan.id}")
        self._tasks[scan.id] = task
        task.add_done_callback(lambda _: self._tasks.pop(scan.id, None))


class ScanRun:
    """One scan's walk through its probes."""

    def __init__(self, service: ScanService, scan: Scan) -> None:
        self.service = service
        self.scan = scan
        spec = ScanSpec.from_json(scan.spec)
        self.probes: Iterator[tuple[int, Probe]] = itertools.islice(enumerate(spec.probes(PORTS)), scan.probed, None)
        self.next_position = scan.probed
        self.in_flight: set[int] = set()
        self.results: list[dict] = []
        self.found = scan.found
        self.saved = scan.probed
        # address -> its latest banner, for the banners' org and location (ordered: the oldest is let go)
        self.known: OrderedDict[str, dict | None] = OrderedDict()
        self.finished = asyncio.Event()  # every probe has ended (or been cut off by a stop)

    def watermark(self) -> int:
        """Every probe before this position has finished and its banner, if any, is in results."""
        return min(self.in_flight) if self.in_flight else self.next_position

    async def run(self) -> None:
        store = self.service.store
        count = min(self.service.concurrency, MODULE_WORKERS)
        open_probes: asyncio.Queue[tuple[int, Probe] | None] = asyncio.Queue(maxsize=2 * count)
        sweeper = asyncio.create_task(self._sweep(open_probes, count))
        workers = [asyncio.create_task(self._work(open_probes)) for _ in range(count)]
        flusher = asyncio.create_task(self._flush_every())
        try:
            await asyncio.gather(sweeper, *workers)
        except asyncio.CancelledError:  # the server is stopping: probes end, what they found is kept
            for task in (sweeper, *workers):
                task.cancel()
            await asyncio.gather(sweeper, *workers, return_exceptions=True)
            self.finished.set()
            await flusher  # never cut off mid-batch: its last flush stores and counts what was found
            raise
        self.finished.set()
        await flusher
        await asyncio.to_thread(store.progress, self.scan.id, self.scan.probes, self.found)
        await asyncio.to_thread(store.finish, self.scan.id)
        log.info("scan %s done: %d services found", self.scan.id, self.found)

    async def _sweep(self, open_probes: asyncio.Queue[tuple[int, Probe] | None], workers: int) -> None:
        """Connect passes over the probes, a chunk at a time; the open ones go to the workers."""
        assert self.service._slots is not None
        timeout = min(self.service.timeout, CONNECT_TIMEOUT)
        while chunk := list(itertools.islice(self.probes, CHUNK)):
            self.in_flight.update(position for position, _ in chunk)
            self.next_position = chunk[-1][0] + 1
            targets = [(t.ip, t.port) for _, t in chunk]
            accepted = await connect_sweep(targets, self.service._slots, timeout, self.service._pace)
            for (position, target), is_open in zip(chunk, accepted, strict=True):
                if is_open:
                    await open_probes.put((position, target))
                else:  # closed or filtered: nothing more to learn there
                    self.in_flight.discard(position)
        for _ in range(workers):
            await open_probes.put(None)

    async def _work(self, open_probes: asyncio.Queue[tuple[int, Probe] | None]) -> None:
        assert self.service._slots is not None
        while (item := await open_probes.get()) is not None:
            position, target = item
            async with self.service._slots:
                found = await self._probe(target)
            # Cancelled above (the server stopping), the probe stays in flight: the watermark stays
            # below it and the resumed scan makes it again.
            if found is not None:
                self.results.append(found)
            self.in_flight.discard(position)

    async def _probe(self, target: Probe) -> dict | None:
        try:
            found = await probe(target.ip, target.port, target.protocol, timeout=self.service.timeout)
        except Exception:  # a module's bug must not end the scan: log it, go on
            log.exception("probe of %s:%d failed", target.ip, target.port)
            return None
        if found is None:
            return None
        return mark(banner_of(target, found, self.scan.id, await self._last_seen(target.ip)), self.scan.account_id)

    async def _last_seen(self, ip: str) -> dict | None:
        """The address's latest banner in the index, asked once per address of the scan (its
        probes come one port after another), never for a local address."""
        if is_local(ip):
            return None
        if ip not in self.known:
            if len(self.known) >= KNOWN_ADDRESSES:
                self.known.popitem(last=False)  # the oldest: probes move on through the spec
            self.known[ip] = await asyncio.to_thread(_latest, self.service.banners, ip)
        return self.known[ip]

    async def _flush_every(self) -> None:
        """Flush every FLUSH_EVERY seconds, and a last time once the probes are over."""
        while True:
            last = self.finished.is_set()  # read first: a flush under way when it is set is not the last
            if not last:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.finished.wait(), FLUSH_EVERY)
            await self._flush()
            if last:
                return

    async def _flush(self) -> None:
        mark = self.watermark()
        batch, self.results = self.results, []
        if batch:
            collected = await self.service.collector.collect(batch, "scan")
            self.found += len(collected)
        if mark != self.saved or batch:  # in a thread: a write to the state (PostgreSQL's a round trip) holds no loop
            await asyncio.to_thread(self.service.store.progress, self.scan.id, mark, self.found)
            self.saved = mark


def _latest(banners: BannerStore, ip: str) -> dict | None:
    history = banners.host(ip)
    return history[0] if history else None
