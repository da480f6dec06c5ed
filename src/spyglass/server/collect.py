"""The one path of banners the backend newly collects (scan results, the demo collector, replays).

``await app.state.collector.collect(banners, source)`` stores them in the index and then tells
every listener (the stream hub, the alert triggers) about the ones that were new. Listeners run
on the event loop and must not block: they queue work of their own.

Writes are batched: concurrent ``collect`` calls within one flush share one index commit, and
flushes are at least FLUSH_EVERY apart. While
another process holds the index writer (``spyglass import``), batches wait and retry; nothing
is dropped, and callers wait with them.

A banner a store cannot hold (shape.py's rules: address, port, transport, timestamp), or one dated
more than FUTURE_SLACK ahead of this server's clock (it would stay the current banner of its
service, for every account, past every genuine one), is refused: the caller learns which and why.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from spyglass.exactjson import dumps
from spyglass.server.banners.store import BannerStore, OpensElsewhere, ReadsAfresh, StoreBusy
from spyglass.server.ingest.collecting import Outcome, WriterProcess, write_collected
from spyglass.server.tasks import cancel

log = logging.getLogger("spyglass.collect")

FLUSH_EVERY = 0.25  # seconds: how long a banner may wait for the batch it joins
BUSY_RETRY = 1.0  # seconds between tries while another process writes the index
FUTURE_SLACK = timedelta(minutes=5)  # how far ahead of this server's clock a banner may be dated
AHEAD = f"more than {FUTURE_SLACK.seconds // 60} minutes"


@dataclass(frozen=True)
class Collected:
    """A banner that was new to the index, as it was stored (never changed)."""

    banner: dict
    new_service: bool  # the first banner ever of its (address, port, transport)
    source: str  # "scan", "demo", "replay", ...


Listener = Callable[[list[Collected]], None]


@dataclass
class _Pending:
    banners: list[dict]
    source: str
    done: asyncio.Future[list[Collected]]
    refused: list[tuple[int, str]] = field(default_factory=list)  # (index among banners, why)


class Collector:
    def __init__(self, banners: BannerStore, apart: bool = False) -> None:
        """``apart``: once started, write in a process of its own where the store can be opened
        from one (ingest/collecting.py)."""
        self.banners = banners
        self._apart = apart
        self._writer: WriterProcess | None = None
        self._listeners: list[Listener] = []
        self._pending: list[_Pending] = []
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        opener = self.banners.opener() if self._apart and isinstance(self.banners, OpensElsewhere) else None
        self._writer = WriterProcess(opener) if opener is not None else None
        self._task = asyncio.create_task(self._run(), name="collector")

    async def stop(self) -> None:
        await cancel(self._task)
        self._task = None
        if self._pending:  # stop means the process is ending: store what was handed over, tell
            # the listeners still running (the alert engine stops after the collector) and the callers
            self._notify_all(await asyncio.to_thread(self._store_pending, self._take()))
        if self._writer is not None:
            await asyncio.to_thread(self._writer.close)
            self._writer = None

    async def collect(
        self, banners: list[dict], source: str, refused: list[tuple[int, str]] | None = None
    ) -> list[Collected]:
        """Store ``banners`` and publish the new ones; returns those that were new (a banner the
        index already holds is skipped). Those refused (see above) are logged, and added to
        ``refused`` if given, as (their index among ``banners``, why)."""
        if not banners:
            return []
        done: asyncio.Future[list[Collected]] = asyncio.get_running_loop().create_future()
        pending = _Pending(list(banners), source, done, refused if refused is not None else [])
        self._pending.append(pending)
        if self._task is None:  # not started (a script or test using the app without a server)
            self._notify_all(await asyncio.to_thread(self._store_pending, self._take()))
        elif self._wake:
            self._wake.set()
        return await done

    def collect_from_thread(self, banners: list[dict], source: str, timeout: float = 60.0) -> list[Collected]:
        """:meth:`collect` from another thread (a test, a worker thread) while the server runs."""
        if self._loop is None:
            raise RuntimeError("the collector is not running")
        return asyncio.run_coroutine_threadsafe(self.collect(banners, source), self._loop).result(timeout)

    def _take(self) -> list[_Pending]:
        taken, self._pending = self._pending, []
        return taken

    async def _run(self) -> None:
        """Flushes start no closer than FLUSH_EVERY apart: what comes while one is stored, or soon
        after, joins the next. What comes after a quiet spell is stored at once: a banner alone
        waited out the whole pause, ahead of its alerts' notifications. A flush that took longer
        than the pause is followed at once by the next (a pause then left the writer idle while
        collectors waited: a quarter of its time at 8 collectors)."""
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        began = -FLUSH_EVERY  # when the last flush began (loop time)
        while True:
            await self._wake.wait()
            if (pause := began + FLUSH_EVERY - loop.time()) > 0:
                await asyncio.sleep(pause)
            self._wake.clear()
            began = loop.time()
            batch = self._take()
            while True:
                try:
                    results = await asyncio.to_thread(self._store_pending, batch)
                    break
                except StoreBusy:
                    await asyncio.sleep(BUSY_RETRY)
                except Exception as exc:  # never lose the loop: fail these callers, keep serving
                    log.exception("storing collected banners failed")
                    for item in batch:
                        if not item.done.done():
                            item.done.set_exception(exc)
                    results = None
                    break
            if results is not None:
                self._notify_all(results)

    def _store_pending(self, batch: list[_Pending]) -> list[tuple[_Pending, list[Collected]]]:
        """In a thread: one writer's block for the whole batch, here or in the writer process."""
        places = [(item, number, banner) for item in batch for number, banner in enumerate(item.banners)]
        latest = (datetime.now(UTC) + FUTURE_SLACK).strftime("%Y-%m-%dT%H:%M:%S")
        future = f"{AHEAD} in the future"
        if self._writer is None:
            outcome = write_collected(self.banners, [(b, None) for _, _, b in places], latest, future)
        else:
            outcome = self._write_apart([banner for _, _, banner in places], latest, future)
        for item in batch:
            item.refused.clear()  # tried again after StoreBusy: counted once
        for place, why in outcome.refused:
            item, number, _ = places[place]
            item.refused.append((number, why))
        for item in batch:
            if item.refused:  # one line per call, however many (a replay of a bad file)
                log.warning("%d collected banners refused (%s): %s", len(item.refused), item.source, item.refused[0][1])
        out: dict[int, list[Collected]] = {id(item): [] for item in batch}
        for place, new_service in outcome.new:
            item, _, banner = places[place]
            out[id(item)].append(Collected(banner, new_service, item.source))
        return [(item, out[id(item)]) for item in batch]

    def _write_apart(self, banners: list[dict], latest: str, future: str) -> Outcome:
        """The batch written by the writer process; a banner that is no JSON is refused here."""
        assert self._writer is not None
        bodies: list[bytes] = []
        unwritable: list[tuple[int, str]] = []
        kept: list[int] = []  # each body's place in the batch
        for place, banner in enumerate(banners):
            try:
                bodies.append(dumps(banner))
                kept.append(place)
            except Exception as exc:  # as prepare would refuse it here
                unwritable.append((place, f"unreadable banner ({type(exc).__name__})"))
        outcome = self._writer.write(bodies, latest, future)
        if isinstance(self.banners, ReadsAfresh):
            self.banners.read_afresh()
        return Outcome(
            sorted(unwritable + [(kept[i], why) for i, why in outcome.refused]),
            [(kept[i], new_service) for i, new_service in outcome.new],
        )

    def _notify_all(self, results: list[tuple[_Pending, list[Collected]]]) -> None:
        everything: list[Collected] = []
        for item, collected in results:
            everything.extend(collected)
            if not item.done.done():
                item.done.set_result(collected)
        if not everything:
            return
        for listener in self._listeners:
            try:
                listener(everything)
            except Exception:  # one broken listener never stops the others or the collector
                log.exception("a listener of collected banners failed")
