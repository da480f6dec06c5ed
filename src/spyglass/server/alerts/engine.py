"""The trigger engine: turns newly collected banners into queued notifications.

The collector calls :meth:`AlertEngine.listener` on the event loop; the batch is queued and
matched in a thread against every live alert (not expired, a trigger enabled, a notifier
attached). A banner inside an alert's networks that an enabled trigger matches, on a service
not ignored for that trigger, becomes ONE event per alert (whatever the number of triggers),
queued once per notifier; the event id makes a repeat of the same banner a no-op.

Each alert is matched on its own: one that cannot be (a damaged row) is logged and left out, and
every other alert is still matched.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import time
from collections.abc import Iterator

from spyglass.server.alerts.delivery import DeliveryWorker
from spyglass.server.alerts.store import AlertRow, AlertStore
from spyglass.server.alerts.triggers import TRIGGERS, matching
from spyglass.server.collect import Collected
from spyglass.server.index.shape import BadBanner, normalize
from spyglass.server.tasks import cancel

log = logging.getLogger("spyglass.alerts")


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
    def __init__(self, store: AlertStore, delivery: DeliveryWorker) -> None:
        self.store = store
        self.delivery = delivery
        self._queue: asyncio.Queue[list[Collected]] = asyncio.Queue()
        self._task: asyncio.Task | None = None
        self._faulty: set[str] = set()  # alerts whose failure was logged with its traceback

    def listener(self, collected: list[Collected]) -> None:
        self._queue.put_nowait(collected)  # never blocks the collector

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="alert triggers")

    async def stop(self) -> None:
        await cancel(self._task)
        self._task = None
        while not self._queue.empty():  # what was collected before stop still notifies after restart
            await asyncio.to_thread(self.process, self._queue.get_nowait())

    async def _run(self) -> None:
        while True:
            batch = await self._queue.get()
            try:
                added = await asyncio.to_thread(self.process, batch)
            except Exception:
                log.exception("matching collected banners against alerts failed")
                continue
            if added:
                self.delivery.wake()

    def process(self, batch: list[Collected]) -> int:
        """Match a batch and queue its notifications (blocking); returns how many were queued."""
        now = self.store.clock()
        nets = []
        for a in self.store.alerts():
            with self._alone(a):
                if a.triggers and a.notifiers and not a.expired(now):
                    nets.append((a, a.parsed_networks()))
        if not nets:
            return 0
        candidates: list[tuple[Collected, str, int, str, str]] = []
        wanted: list[list[AlertRow]] = []
        for c in batch:
            try:
                shape = normalize(c.banner)
                address = ipaddress.ip_address(shape.ip_str)
            except (BadBanner, ValueError):
                continue
            inside = [a for a, ns in nets if any(address in n for n in ns)]
            if inside:
                candidates.append((c, str(address), shape.port, shape.transport, shape.stamp))
                wanted.append(inside)
        if not candidates:
            return 0
        names = {t for alerts in wanted for a in alerts for t in a.triggers if t in TRIGGERS}
        matched = matching([(c.banner, c.new_service) for c, *_ in candidates], names)
        items: list[tuple[str, int, str, str, dict]] = []
        for (c, ip, port, transport, stamp), alerts, hits in zip(candidates, wanted, matched, strict=True):
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
        return self.store.enqueue(items, time.time()) if items else 0

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
