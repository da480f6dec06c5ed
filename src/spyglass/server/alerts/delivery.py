"""The delivery worker: sends queued notifications, durably, with backoff.

Deliveries wait in ``alerts.db``; each attempt's outcome and its log line are written in one
transaction, so after a restart a sent notification is never sent again and a pending one is
sent then. On stop, the delivery in flight finishes and is recorded before the worker ends.
Every notification carries its event id (``Idempotency-Key`` header, ``event`` member, PagerDuty
``dedup_key``) so that a receiver can recognise a repeat.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from spyglass.safetext import clean
from spyglass.server.alerts.providers import DeliveryFailed, Message, deliver
from spyglass.server.alerts.store import AlertStore, Delivery, NotifierRow
from spyglass.server.tasks import cancel

log = logging.getLogger("spyglass.alerts")

RETRY_BASE = 2.0  # seconds before the first retry; doubles with each attempt
RETRY_MAX = 600.0
MAX_ATTEMPTS = 10
IDLE = 30.0  # seconds between looks at the queue when nothing wakes the worker
STOP_GRACE = 15.0  # seconds a delivery in flight may take to finish when the server stops


def backoff(attempts: int) -> float:
    return min(RETRY_MAX, RETRY_BASE * 2 ** max(0, attempts - 1))


def message_for(payload: dict) -> Message:
    triggers = ", ".join(payload.get("triggers", []))
    alert = payload.get("alert", {}).get("name", "")
    service = payload.get("service", "")
    subject = f"[spyglass] {alert}: {triggers} on {service}"
    banner = payload.get("banner") or {}
    lines = [
        f"Alert: {alert} ({payload.get('alert', {}).get('id', '')})",
        f"Service: {service}/{payload.get('transport', '')}",
        f"Triggers: {triggers}",
        f"Seen: {payload.get('timestamp', '')}",
    ]
    for name in ("product", "org", "hostnames"):
        if banner.get(name):
            lines.append(f"{name.capitalize()}: {str(banner[name])[:200]}")
    lines.append(f"Event: {payload.get('event', '')}")
    text = "\n".join(clean(line, one_line=True) for line in lines)  # banner text is untrusted
    return Message(payload.get("event", ""), clean(subject, one_line=True)[:250], text, payload)


@dataclass
class DeliveryWorker:
    store: AlertStore
    urls: dict[str, str] = field(default_factory=dict)
    smtp: tuple[str, int] | None = None

    def __post_init__(self) -> None:
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._stopping = False

    def wake(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def start(self) -> None:
        self._stopping = False
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="alert deliveries")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._stopping = True
        self.wake()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), STOP_GRACE)
        except TimeoutError:
            await cancel(self._task)
        self._task = None

    async def _run(self) -> None:
        assert self._wake is not None
        while not self._stopping:
            self._wake.clear()
            try:
                due = await asyncio.to_thread(self.store.due, time.time())
                for delivery in due:
                    if self._stopping:
                        return
                    await self._attempt(delivery)
                if due:
                    continue
                upcoming = await asyncio.to_thread(self.store.next_due)
            except Exception:  # a broken row or disk never ends the worker: try again later
                log.exception("the delivery worker failed; trying again")
                upcoming = None
            wait = IDLE if upcoming is None else min(IDLE, max(0.0, upcoming - time.time()))
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                pass

    async def _attempt(self, delivery: Delivery) -> None:
        notifier = await asyncio.to_thread(self.store.notifier, delivery.account_id, delivery.notifier_id)
        if notifier is None:
            await asyncio.to_thread(self.store.record, delivery, "?", "failed", "the notifier was deleted", None)
            return
        try:
            detail = await self.send(notifier, message_for(delivery.payload))
            outcome, next_try = "sent", None
        except DeliveryFailed as exc:
            detail = exc.detail
            if exc.retry and delivery.attempts + 1 < MAX_ATTEMPTS:
                outcome, next_try = "retry", time.time() + backoff(delivery.attempts + 1)
            else:
                outcome, next_try = "failed", None
        await asyncio.to_thread(self.store.record, delivery, notifier.provider, outcome, detail, next_try)

    async def send(self, notifier: NotifierRow, msg: Message) -> str:
        return await deliver(notifier.provider, notifier.args, msg, self.urls, self.smtp)
