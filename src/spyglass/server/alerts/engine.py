"""The trigger engine: turns newly collected banners into queued notifications.

The collector calls :meth:`AlertEngine.listener` on the event loop; the batch is matched in a
thread against every live alert (not expired, a trigger enabled, a notifier attached). A banner
inside an alert's networks that an enabled trigger matches, on a service not ignored for that
trigger, becomes ONE event per alert (whatever the number of triggers), queued once per
notifier; the event id makes a repeat of the same banner a no-op.

Which alerts watch an address is one bisection (see coverage), not a test of every network of
every alert, over a structure rebuilt only when the alerts change.

Each alert is matched on its own: one that cannot be (a damaged row) is logged and left out, and
every other alert is still matched.

Nothing collected is lost to a failed pass or a restart: the banners inside a live alert's
networks are held in ``alerts.db`` before they are matched, and let go in the transaction that
queues their notifications. A pass that fails leaves them held, tried again with backoff (given
up, logged, after a day); a restart matches what the last run held.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import threading
import time
from collections.abc import Iterator
from datetime import datetime

from spyglass.backoff import Backoff
from spyglass.coverage import Coverage
from spyglass.server.alerts.delivery import DeliveryWorker
from spyglass.server.alerts.triggers import TRIGGERS, matching
from spyglass.server.banners.shape import BadBanner, normalize
from spyglass.server.collect import Collected
from spyglass.server.scanner.private import owner
from spyglass.server.state.alertrows import AlertRow, AlertSpans, Held
from spyglass.server.state.alerts import AlertState
from spyglass.server.tasks import cancel

log = logging.getLogger("spyglass.alerts")

MATCH_RETRY = Backoff(base=1.0, cap=600.0)  # before a failed pass is tried again: 1 s, doubled each time
HOLD_FOR = 86_400.0  # seconds: banners that still cannot be matched after this are given up

Candidate = tuple[Collected, str, int, str, str]  # the banner, its address, port, transport, timestamp
Watching = Coverage[tuple[AlertRow, datetime | None]]  # alerts with a trigger and a notifier, and when they expire


def service_of(ip: str, port: int) -> str:
    return f"{ip}:{port}"


def parse_service(text: str) -> str:
    """``ip:port`` (``[v6]:port`` too) in its one written form; ValueError if it is not one."""
    ip, sep, port = text.strip().rpartition(":")
    ip = ip.strip("[]")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not a service: give ip:port")
    try:
        return service_of(str(ipaddress.ip_address(ip)), int(port))
    except ValueError:
        raise ValueError(f"{text!r} is not a service: give ip:port") from None


class AlertEngine:
    def __init__(self, store: AlertState, delivery: DeliveryWorker) -> None:
        self.store = store
        self.delivery = delivery
        self._incoming: list[list[Collected]] = []  # handed over, not yet held (event loop only)
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._passing = threading.Lock()  # one pass at a time; what follows is the pass's own
        self._unheld: list[list[Collected]] = []  # batches whose holding failed: tried again
        self._faulty: set[str] = set()  # alerts whose failure was logged with its traceback
        self._watching: tuple[tuple[int, int], Watching] | None = None  # for the alerts' version
        self._spans = AlertSpans()

    def listener(self, collected: list[Collected]) -> None:
        self._incoming.append(collected)  # never blocks the collector
        self._wake.set()

    async def start(self) -> None:
        await asyncio.to_thread(self.store.held_due, time.time())  # what the last run held: at once
        self._task = asyncio.create_task(self._run(), name="alert triggers")

    async def stop(self) -> None:
        await cancel(self._task)
        self._task = None
        # what was collected before stop is held, so that it still notifies after a restart
        await asyncio.to_thread(self.run_pass, self._take())

    def _take(self) -> list[list[Collected]]:
        taken, self._incoming = self._incoming, []
        return taken

    async def _run(self) -> None:
        wait: float | None = 0.0
        while True:
            if wait is None or wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), wait)
            self._wake.clear()
            try:
                added, wait = await asyncio.to_thread(self.run_pass, self._take())
            except Exception:  # alerts.db itself failing: nothing is let go, the pass is tried again
                log.exception("matching collected banners against alerts failed: tried again")
                added, wait = 0, MATCH_RETRY.base
            if added:
                self.delivery.wake()

    def run_pass(self, batches: list[list[Collected]]) -> tuple[int, float | None]:
        """Hold ``batches``, then match every held batch that is due (blocking). Returns how
        many notifications were queued and the seconds until a held batch is due (None: none)."""
        with self._passing:
            now = time.time()
            self._unheld += batches
            if self._unheld:
                self.store.hold(self._watched(self._unheld), now)
                self._unheld = []
            added = 0
            while due := self.store.held(now):
                for held in due:
                    try:
                        added += self.process([Collected(*c) for c in held.batch], release=held.id)
                    except Exception:
                        self._failed(held, now)
            next_try = self.store.next_held()
            return added, None if next_try is None else max(0.0, next_try - time.time())

    def _failed(self, held: Held, now: float) -> None:
        if now - held.held >= HOLD_FOR:
            log.exception("matching %d collected banners failed for %.0f s: given up", len(held.batch), HOLD_FOR)
            self.store.release(held.id)
            return
        delay = MATCH_RETRY.delay(held.attempts + 1)
        log.warning(
            "matching %d collected banners failed (try %d): tried again in %.0f s",
            len(held.batch),
            held.attempts + 1,
            delay,
            exc_info=held.attempts == 0,  # the traceback once
        )
        self.store.hold_again(held.id, now + delay)

    def _watched(self, batches: list[list[Collected]]) -> list[list[tuple[dict, bool, str]]]:
        """What of each batch to hold: the banners inside a live alert's networks (all of them
        when the alerts cannot be read: matching will tell)."""
        try:
            live = self._live()
            chosen = [[found[0] for found, _ in self._candidates(batch, live)] for batch in batches]
        except Exception:
            chosen = batches
        return [[(c.banner, c.new_service, c.source) for c in batch] for batch in chosen]

    def _live(self) -> Watching:
        """The alerts that may notify, by their networks (one that cannot be read left out);
        built again only when the alerts changed."""
        version = self.store.version()
        if self._watching is None or self._watching[0] != version:
            owners = []
            for a in self.store.alerts(networks=False):  # their ranges are what it needs
                with self._alone(a):
                    if a.triggers and a.notifiers:
                        owners.append(((a, a.expiration()), self._spans(a)))
            self._spans.keep_only([a.id for (a, _), _ in owners])
            self._watching = (version, Coverage(owners))
        return self._watching[1]

    def _candidates(self, batch: list[Collected], live: Watching) -> list[tuple[Candidate, list[AlertRow]]]:
        """The banners of ``batch`` inside live alerts' networks, each with those alerts."""
        now = self.store.clock()
        out = []
        for c in batch:
            try:
                shape = normalize(c.banner)
                address = ipaddress.ip_address(shape.ip_str)
            except (BadBanner, ValueError):
                continue
            only = owner(c.banner)  # a scan of the server's own: its account's alerts alone
            inside = [
                a for a, end in live.covering(address) if (end is None or now < end) and only in (None, a.account_id)
            ]
            if inside:
                out.append(((c, str(address), shape.port, shape.transport, shape.stamp), inside))
        return out

    def process(self, batch: list[Collected], release: int | None = None) -> int:
        """Match a batch and queue its notifications (blocking); returns how many were queued.
        ``release``: the held batch it is, let go once they are queued."""
        found = self._candidates(batch, self._live())
        names = {t for _, alerts in found for a in alerts for t in a.triggers if t in TRIGGERS}
        matched = matching([(c.banner, c.new_service) for (c, *_), _ in found], names) if found else []
        items: list[tuple[str, int, str, str, dict]] = []
        for ((c, ip, port, transport, stamp), alerts), hits in zip(found, matched, strict=True):
            service = service_of(ip, port)
            for alert in alerts:
                with self._alone(alert):
                    fired = sorted(t for t in alert.triggers if t in hits and service not in alert.ignores.get(t, ()))
                    if not fired:
                        continue
                    event = f"{alert.id}:{service}/{transport}:{stamp}"
                    payload = {
                        "event": event,
                        "alert": {"id": alert.id, "name": alert.name},
                        "triggers": fired,
                        "service": service,
                        "ip_str": ip,
                        "port": port,
                        "transport": transport,
                        "timestamp": stamp,
                        "banner": c.banner,
                    }
                    items.extend((event, alert.account_id, alert.id, n, payload) for n in alert.notifiers)
        if not items and release is None:
            return 0
        return self.store.enqueue(items, time.time(), release=release)

    @contextlib.contextmanager
    def _alone(self, alert: AlertRow) -> Iterator[None]:
        """One alert's failure stays its own: logged (its traceback once), the alert left out."""
        try:
            yield
        except Exception:
            first = alert.id not in self._faulty
            self._faulty.add(alert.id)
            level = logging.ERROR if first else logging.DEBUG  # not a traceback for each banner
            log.log(level, "alert %s left out of matching: it cannot be matched", alert.id, exc_info=first)
