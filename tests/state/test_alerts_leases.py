"""The delivery workers of two backends on one PostgreSQL queue: an attempt that outlasts the
lease is still its backend's (the lease is renewed), and one whose backend stops renewing is taken
over by the other. The lease is shortened here so that the test takes seconds, not minutes."""

from __future__ import annotations

import asyncio
import time

import pytest

from spyglass.netools.networks import Reach
from spyglass.server.alerts import delivery
from spyglass.server.alerts.delivery import DeliveryWorker
from spyglass.server.alerts.destinations import Destinations
from spyglass.server.state.postgres import alerts as postgres_alerts
from spyglass.server.state.postgres.alerts import PostgresAlerts
from spyglass.testing.alerts import Receiver

LEASE = 1.0


@pytest.fixture
def short_lease(monkeypatch):
    monkeypatch.setattr(postgres_alerts, "LEASE", LEASE)
    monkeypatch.setattr(delivery, "RENEW_EVERY", LEASE / 4)
    monkeypatch.setattr(delivery, "IDLE", LEASE / 5)  # each worker looks at the queue this often


@pytest.fixture
def queue(postgres_url, short_lease):
    """Two backends' connections to one alert state: the second is the first's neighbour."""
    states = [PostgresAlerts(postgres_url), PostgresAlerts(postgres_url)]
    yield states
    for state in states:
        state.close()


def workers(states: list[PostgresAlerts]) -> list[DeliveryWorker]:
    return [DeliveryWorker(s, Destinations(Reach(["127.0.0.0/8"]))) for s in states]


def queued(state: PostgresAlerts, receiver: Receiver) -> None:
    notifier = state.create_notifier(1, "webhook", None, {"url": receiver.url + "/hook"})
    payload = {"event": "e1", "service": "192.0.2.7:80", "triggers": ["any"]}
    state.enqueue([("e1", 1, "ALERT", notifier, payload)], time.time())


async def wait_until(done, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)


async def test_an_attempt_longer_than_the_lease_is_sent_once(queue):
    with Receiver() as receiver:
        both = workers(queue)
        try:
            receiver.answering.clear()
            queued(queue[0], receiver)
            for worker in both:
                await worker.start()
            await wait_until(lambda: receiver.arrived)
            await asyncio.sleep(4 * LEASE)  # the other worker looks many times meanwhile
            assert len(receiver.arrived) == 1
            receiver.answering.set()
            await wait_until(lambda: receiver.posts)
        finally:
            receiver.answering.set()
            for worker in both:
                await worker.stop()
        assert len(receiver.arrived) == 1 and [e["outcome"] for e in queue[1].log(1, "ALERT")] == ["sent"]


async def test_a_claim_no_longer_renewed_is_taken_over(queue):
    with Receiver() as receiver:
        first, second = workers(queue)
        try:
            receiver.answering.clear()
            queued(queue[0], receiver)
            await first.start()
            await wait_until(lambda: receiver.arrived)
            first._renewing.cancel()  # as a backend killed now: its attempt hangs, nothing renews
            await second.start()
            await wait_until(lambda: len(receiver.arrived) == 2)
            receiver.answering.set()
            await wait_until(lambda: len(receiver.posts) == 2)
        finally:
            receiver.answering.set()
            for worker in (first, second):
                await worker.stop()
        assert [body["event"] for _, body in receiver.arrived] == ["e1", "e1"]
