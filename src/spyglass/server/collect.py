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

from spyglass.server.banners.shape import BadBanner
from spyglass.server.banners.store import BannerStore, Prepared, StoreBusy
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
    def __init__(self, banners: BannerStore) -> None:
        self.banners = banners
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
        self._task = asyncio.create_task(self._run(), name="collector")

    async def stop(self) -> None:
        await cancel(self._task)
        self._task = None
        if self._pending:  # stop means the process is ending: store what was handed over, tell
            # the listeners still running (the alert engine stops after the collector) and the callers
            self._notify_all(await asyncio.to_thread(self._store_pending, self._take()))

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
        """Flushes no closer than FLUSH_EVERY after the last one ended: what comes while one is
        stored, or soon after, joins the next. What comes after a quiet spell is stored at once: a
        banner alone waited out the whole pause, ahead of its alerts' notifications."""
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        flushed = -FLUSH_EVERY  # when the last flush ended (loop time)
        while True:
            await self._wake.wait()
            if (pause := flushed + FLUSH_EVERY - loop.time()) > 0:
                await asyncio.sleep(pause)
            self._wake.clear()
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
            flushed = loop.time()
            if results is not None:
                self._notify_all(results)

    def _store_pending(self, batch: list[_Pending]) -> list[tuple[_Pending, list[Collected]]]:
        """In a thread: one index commit for the whole batch."""
        prepared: list[tuple[_Pending, dict, Prepared]] = []
        latest = (datetime.now(UTC) + FUTURE_SLACK).strftime("%Y-%m-%dT%H:%M:%S")
        for item in batch:
            item.refused.clear()  # tried again after StoreBusy: counted once
            for number, banner in enumerate(item.banners):
                try:
                    p = self.banners.prepare(banner)
                except BadBanner as exc:
                    item.refused.append((number, str(exc)))
                except Exception as exc:  # one banner stands alone, whatever it holds
                    item.refused.append((number, f"unreadable banner ({type(exc).__name__})"))
                else:
                    if p.stamp[:19] > latest:  # both "YYYY-MM-DDTHH:MM:SS": ordered as text
                        item.refused.append((number, f"timestamp {p.stamp} is {AHEAD} in the future"))
                    else:
                        prepared.append((item, banner, p))
            if item.refused:  # one line per call, however many (a replay of a bad file)
                log.warning("%d collected banners refused (%s): %s", len(item.refused), item.source, item.refused[0][1])
        known = self.banners.known_services([p.service for _, _, p in prepared])
        with self.banners.writing() as writer:
            added = set(writer.add([p for _, _, p in prepared]))
        out: dict[int, list[Collected]] = {id(item): [] for item in batch}
        seen: set[int] = set()
        for item, banner, p in prepared:
            if p.key in added and p.key not in seen:
                seen.add(p.key)
                new_service = p.service not in known
                known.add(p.service)
                out[id(item)].append(Collected(banner, new_service, item.source))
        return [(item, out[id(item)]) for item in batch]

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
