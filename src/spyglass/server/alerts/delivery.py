"""The delivery worker: sends queued notifications, durably, with backoff.

Deliveries wait in ``alerts.db``; each attempt's outcome and its log line are written in one
transaction, so after a restart a sent notification is never sent again and a pending one is
sent then. On stop, the deliveries in flight finish and are recorded before the worker ends.

Deliveries run side by side, one per notifier at a time (so each receiver gets them in order) and
at most ``PER_ACCOUNT`` of one account, the longest waiting first: a receiver that never answers
holds up only its own notifications.
Whatever goes wrong in one attempt (a provider's bug, a malformed argument stored before it was
checked) is a failed attempt of that delivery, retried with its backoff, never a stall.
Each attempt has a deadline (a receiver that trickles its answer a byte at a time does not hold its
slot for ever), and a notifier test another, shorter one, answered as a failure when it passes, at
most ``TESTS_PER_ACCOUNT`` of one account, ``FREE_TESTS_AT_ONCE`` of free accounts and
``TESTS_AT_ONCE`` in all at a time: a test holds a request in flight, and the backend answers only
so many at once.
Where several backends share the queue (PostgreSQL), each claims what it attempts for a lease that
it renews while the attempt runs (see spyglass.server.state.alerts): a backend that dies
mid-attempt leaves the delivery to another once its lease ends.
Deliveries to one destination (the address and port a URL is sent to, an e-mail address) are at
most ``DESTINATION_RATE`` a second with a burst of ``DESTINATION_BURST``, whichever accounts they
are of: past it an attempt waits its turn (``HOLD_WAIT`` at most; one attempt a destination at a
time, so that a flood to one place does not fill every slot of the worker), else it is held, tried
again after ``HELD_AGAIN`` without counting as one of its ``MAX_ATTEMPTS`` (so a flood to one place
is spread out, never dropped; each hold a line of the alert's log, so their pace backs off), and
logged once a minute per destination with a count. Twenty
notifiers to one URL, fifty alerts and a burst of banners were thousands of POSTs to one
destination within seconds; a hold that counted as a try dropped 353 of 600 notifications of one
burst to one receiver (trial 30).
Every notification carries its event id (``Idempotency-Key`` header, ``event`` member, PagerDuty
``dedup_key``) so that a receiver can recognise a repeat.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import Counter
from dataclasses import dataclass, field

from spyglass.backoff import Backoff
from spyglass.netools.networks import Reach
from spyglass.safetext import clean
from spyglass.server.alerts.destinations import Destinations
from spyglass.server.alerts.providers import Admit, DeliveryFailed, Message, contacts_chosen, deliver
from spyglass.server.alerts.testrates import TestRates, destination
from spyglass.server.auth import KeyRateLimiter
from spyglass.server.plans import Plan
from spyglass.server.state.alertrows import Busy, Delivery, NotifierRow
from spyglass.server.state.alerts import LEASE, RENEW_EVERY, AlertState
from spyglass.server.tasks import cancel

log = logging.getLogger("spyglass.alerts")

RETRY = Backoff(base=2.0, cap=600.0)  # before each retry: 2 s, doubled with each attempt, at most 10 min
MAX_ATTEMPTS = 10
# Seconds between looks at the queue when nothing wakes the worker: a lease, so a delivery whose
# backend died (its claim seen or not) is taken over at most a lease after the last renewal.
IDLE = LEASE
STOP_GRACE = 15.0  # seconds deliveries in flight may take to finish when the server stops
PER_ACCOUNT = 4  # deliveries of one account in flight at once (one per notifier)
IN_FLIGHT = 32  # deliveries in flight at once, over all accounts
ATTEMPT_DEADLINE = 60.0  # seconds one attempt may take, name lookup and every retransmission included
TEST_DEADLINE = 10.0  # seconds a notifier test may take before it is answered as failed
TESTS_PER_ACCOUNT = 2  # notifier tests of one account under way at once
TESTS_AT_ONCE = 16  # and of all accounts
# and of all free accounts, so that free keys pointed at receivers that never answer leave the
# rest to paying accounts (eight of them held all 16 and every other account's test was a 429)
FREE_TESTS_AT_ONCE = TESTS_AT_ONCE // 2
DESTINATION_RATE = 5.0  # deliveries a second to one destination, over all accounts
DESTINATION_BURST = 20
HELD_LOG_EVERY = 60.0  # seconds between log lines of one destination's held deliveries
HOLD_WAIT = 10.0  # seconds an attempt may wait for its destination's turn (under STOP_GRACE)
HELD_AGAIN = Backoff(base=1.0, cap=60.0, jitter=0.5)  # before a held delivery is tried again: 1 s, doubling


class Held(Exception):
    """A delivery not sent now: its destination's rate is spent (the message says so)."""


class TooManyTests(Exception):
    """As many notifier tests are under way as are allowed (the message says whose)."""


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
    store: AlertState
    destinations: Destinations = field(default_factory=lambda: Destinations(Reach()))  # none internal
    urls: dict[str, str] = field(default_factory=dict)
    smtp: tuple[str, int] | None = None
    test_rates: TestRates = field(default_factory=TestRates)  # tests an hour, by account and destination

    def __post_init__(self) -> None:
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._renewing: asyncio.Task | None = None
        self._stopping = False
        self._in_flight: dict[int, tuple[Delivery, asyncio.Task]] = {}  # by delivery id
        self._tests: Counter[int] = Counter()  # notifier tests under way, by account
        self._free_tests = 0  # of those, free accounts' tests
        self._destinations = KeyRateLimiter(DESTINATION_RATE, DESTINATION_BURST)
        self._held_at: dict[str, tuple[float, int]] = {}  # by destination: (last logged, held since)
        self._holds: Counter[int] = Counter()  # by delivery: how often it was held
        self._waiting: set[str] = set()  # destinations an attempt waits for

    def wake(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def start(self) -> None:
        self._stopping = False
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="alert deliveries")
        self._renewing = asyncio.create_task(self._renew(), name="alert delivery leases")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._stopping = True
        self.wake()
        await cancel(self._task)  # it starts nothing more; the deliveries under way finish, then
        self._task = None
        attempts = [task for _, task in self._in_flight.values()]
        if attempts:
            _, late = await asyncio.wait(attempts, timeout=STOP_GRACE)
            for task in late:
                await cancel(task)
        await cancel(self._renewing)  # after the last attempt: its lease is kept while it runs
        self._renewing = None

    async def _renew(self) -> None:
        """Renew the leases of the deliveries in flight, so that no other backend takes them over."""
        while True:
            await asyncio.sleep(RENEW_EVERY)
            if self._in_flight:
                try:
                    await asyncio.to_thread(self.store.renew, list(self._in_flight), time.time())
                except Exception:  # the state away: the next renewal tries again
                    log.warning("the leases of deliveries in flight could not be renewed", exc_info=True)

    def _busy(self) -> Busy:
        """What is in flight, as the queue's look-ups skip it."""
        flying = [d for d, _ in self._in_flight.values()]
        counts = Counter(d.account_id for d in flying)
        full = {account for account, n in counts.items() if n >= PER_ACCOUNT}
        return set(self._in_flight), {(d.account_id, d.notifier_id) for d in flying}, full

    async def _run(self) -> None:
        assert self._wake is not None
        while not self._stopping:
            self._wake.clear()
            try:
                if await self._start_due():
                    continue
                upcoming = await asyncio.to_thread(self.store.next_due, busy=self._busy())
            except Exception:  # a broken row or disk never ends the worker: try again later
                log.exception("the delivery worker failed; trying again")
                upcoming = None
            wait = IDLE if upcoming is None else min(IDLE, max(0.0, upcoming - time.time()))
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                pass

    async def _start_due(self) -> int:
        """Start the due deliveries there is room for; how many started."""
        room = IN_FLIGHT - len(self._in_flight)
        if room <= 0:
            return 0
        due = await asyncio.to_thread(self.store.due, time.time(), room, busy=self._busy())
        started, skipped = 0, []
        for delivery in due:
            _, notifiers, full = self._busy()
            if (
                self._stopping
                or (delivery.account_id, delivery.notifier_id) in notifiers
                or delivery.account_id in full
            ):
                skipped.append(delivery.id)  # its notifier or account is busy: a later look picks it up
                continue
            task = asyncio.create_task(self._attempt(delivery), name=f"delivery {delivery.id}")
            self._in_flight[delivery.id] = (delivery, task)
            task.add_done_callback(functools.partial(self._ended, delivery.id))
            started += 1
        if skipped:  # (claimed where the queue is shared: given back)
            await asyncio.to_thread(self.store.unclaim, skipped, time.time())
        return started

    def _ended(self, delivery_id: int, _task: asyncio.Task) -> None:
        self._in_flight.pop(delivery_id, None)
        self.wake()

    async def _attempt(self, delivery: Delivery) -> None:
        try:
            notifier = await asyncio.to_thread(self.store.notifier, delivery.account_id, delivery.notifier_id)
            if notifier is None:
                await asyncio.to_thread(self.store.record, delivery, "?", "failed", "the notifier was deleted", None)
                return
            try:
                detail = await self._send_at_rate(notifier, message_for(delivery.payload))
                outcome, next_try = "sent", None
            except Held as exc:  # not a try: tried again later, however often
                detail = str(exc)
                outcome, next_try = "held", self._held_again(delivery.id)
            except DeliveryFailed as exc:
                detail, retry = exc.detail, exc.retry
                outcome, next_try = self._failed(delivery, retry)
            except Exception:  # any other fault of one attempt is that delivery's, retried with its backoff
                log.exception("delivery %s through notifier %s failed", delivery.id, notifier.id)
                detail = "the delivery failed (an error in spyglass; see the backend's log)"
                outcome, next_try = self._failed(delivery, retry=True)
            if outcome != "held":
                self._holds.pop(delivery.id, None)
            await asyncio.to_thread(self.store.record, delivery, notifier.provider, outcome, detail, next_try)
        except Exception:  # recording failed (the disk?): the delivery stays pending, tried again later
            log.exception("delivery %s could not be attempted or recorded", delivery.id)

    async def _send_at_rate(self, notifier: NotifierRow, msg: Message) -> str:
        """:meth:`send` once its destination's rate allows it, or :class:`Held`."""
        if contacts_chosen(notifier.provider, self.urls):
            return await self.send(notifier, msg, admit=lambda address: self._turn(f"address {address}"))
        await self._turn(destination(notifier))
        return await self.send(notifier, msg)

    async def _turn(self, where: str) -> None:
        """Wait until ``where`` may be sent one more delivery, HOLD_WAIT at most, one attempt at a
        time (else :class:`Held`): a burst to one receiver is paced, in order (the notifier's next
        waits behind this one)."""
        if (wait := self._destinations.check(where)) is None:
            return
        if where in self._waiting or wait > HOLD_WAIT:
            raise self._held(where)
        self._waiting.add(where)
        try:
            waited = 0.0
            while wait is not None:
                if waited + wait > HOLD_WAIT:
                    raise self._held(where)
                await asyncio.sleep(wait)
                waited += wait
                wait = self._destinations.check(where)
        finally:
            self._waiting.discard(where)

    def _held(self, where: str) -> Held:
        """``where``'s rate spent: logged once every HELD_LOG_EVERY with a count."""
        last, held = self._held_at.get(where, (float("-inf"), 0))
        now = time.monotonic()
        if now - last >= HELD_LOG_EVERY:
            shown = where.replace("\x00", " ")
            log.warning(
                "deliveries to %s held: over %g a second (%d more held since the last line)",
                shown,
                DESTINATION_RATE,
                held,
            )
            last, held = now, -1
        if len(self._held_at) > 10_000:
            self._held_at.clear()  # only the log's pace is lost
        self._held_at[where] = (last, held + 1)
        return Held(f"held: more than {DESTINATION_RATE:g} deliveries a second to this destination, from any account")

    def _held_again(self, delivery_id: int) -> float:
        """When a delivery just held is tried again (HELD_AGAIN after its holds so far)."""
        if len(self._holds) > 10_000:
            self._holds.clear()  # only the backoff's pace is lost
        self._holds[delivery_id] += 1
        return time.time() + HELD_AGAIN.delay(self._holds[delivery_id])

    @staticmethod
    def _failed(delivery: Delivery, retry: bool) -> tuple[str, float | None]:
        if retry and delivery.attempts + 1 < MAX_ATTEMPTS:
            return "retry", time.time() + RETRY.delay(delivery.attempts + 1)
        return "failed", None

    async def send(
        self, notifier: NotifierRow, msg: Message, deadline: float = ATTEMPT_DEADLINE, admit: Admit | None = None
    ) -> str:
        """Deliver ``msg`` through ``notifier``; :class:`DeliveryFailed` (to retry) past ``deadline``."""
        try:
            return await asyncio.wait_for(
                deliver(notifier.provider, notifier.args, msg, self.urls, self.smtp, self.destinations, admit),
                deadline,
            )
        except TimeoutError:
            raise DeliveryFailed(f"no answer within {deadline:g} s", retry=True) from None

    async def test(self, notifier: NotifierRow, msg: Message, plan: Plan) -> str:
        """Send a test now, within :data:`TEST_DEADLINE`; :class:`TooManyTests` when the notifier's
        account, or the backend, has as many tests under way as it may, else OverTestRate past the
        plan's tests an hour (a test refused for the first reason spends none of them)."""
        account = notifier.account_id
        if self._tests[account] >= TESTS_PER_ACCOUNT:
            raise TooManyTests(f"{TESTS_PER_ACCOUNT} tests of this account's notifiers are under way")
        if self._tests.total() >= TESTS_AT_ONCE:
            raise TooManyTests(f"{TESTS_AT_ONCE} notifier tests are under way")
        free = not plan.paid
        if free and self._free_tests >= FREE_TESTS_AT_ONCE:
            raise TooManyTests(f"{FREE_TESTS_AT_ONCE} notifier tests of free accounts are under way")
        by_address = contacts_chosen(notifier.provider, self.urls)  # counted by the address it goes to
        self.test_rates.check(notifier, plan, by_address=by_address)
        self._tests[account] += 1
        self._free_tests += free
        try:

            async def admit(address: str) -> None:  # its destination's tests an hour
                self.test_rates.check_contacted(address, plan=plan)

            return await self.send(notifier, msg, TEST_DEADLINE, admit if by_address else None)
        finally:
            self._free_tests -= free
            self._tests[account] -= 1
            if not self._tests[account]:
                del self._tests[account]
