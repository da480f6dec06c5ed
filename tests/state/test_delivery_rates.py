"""Real deliveries to one destination, whichever accounts they are of, are at most a rate a second
(issue 44, M4): twenty notifiers to one URL, fifty alerts and a burst of banners were thousands of
POSTs to one destination within seconds. Past the burst a delivery waits its turn, else it is held
(tried again, not counted as a try: trial 30 lost 353 of 600 to holds counted), and the backend
logs it once; other destinations are not held. On each alert state."""

from __future__ import annotations

import asyncio
import logging
import time

from spyglass.netools.networks import Reach
from spyglass.server.alerts import delivery
from spyglass.server.alerts.delivery import DeliveryWorker
from spyglass.server.alerts.destinations import Destinations
from spyglass.testing.alerts import Receiver

BURST = 5
SPELLINGS = ["127.0.0.1", "localhost", "LOCALHOST", "localhost.", "LocalHost"]


async def test_deliveries_to_one_destination_are_held_past_its_rate(open_alerts, monkeypatch, caplog):
    monkeypatch.setattr(delivery, "DESTINATION_RATE", 1e-6)  # nothing given back while the test runs
    monkeypatch.setattr(delivery, "DESTINATION_BURST", BURST)
    state = open_alerts()
    worker = DeliveryWorker(state, Destinations(Reach(["127.0.0.0/8"])))
    with Receiver() as flooded, Receiver() as elsewhere:
        port = flooded.url.rsplit(":", 1)[1]
        items = []
        for n in range(12):  # twelve notifiers of three accounts, one URL spelled five ways
            url = f"http://{SPELLINGS[n % len(SPELLINGS)]}:{port}/hook{n}"
            notifier = state.create_notifier(1 + n % 3, "webhook", None, {"url": url})
            items.append((f"e{n}", 1 + n % 3, "ALERT", notifier, {"event": f"e{n}", "triggers": ["any"]}))
        other = state.create_notifier(4, "webhook", None, {"url": elsewhere.url + "/hook"})
        items.append(("e-other", 4, "ALERT", other, {"event": "e-other", "triggers": ["any"]}))
        state.enqueue(items, time.time())
        caplog.set_level(logging.WARNING, "spyglass.alerts")
        await worker.start()
        try:
            deadline = time.monotonic() + 30  # a guard against a hang, not a measure
            while sum(len(state.log(account, "ALERT")) for account in range(1, 5)) < 13:
                assert time.monotonic() < deadline, "not every delivery was attempted"
                await asyncio.sleep(0.05)
        finally:
            await worker.stop()
        outcomes = [e for account in range(1, 4) for e in state.log(account, "ALERT")]
        held = [e for e in outcomes if e["outcome"] == "retry"]
        assert len(flooded.posts) == BURST and len(held) == 12 - BURST
        assert all("held: more than" in e["detail"] and "from any account" in e["detail"] for e in held)
        assert len(elsewhere.posts) == 1  # another destination's delivery is its own
        pending = state.due(time.time() + 60, 100)
        assert len(pending) == 12 - BURST and all(d.attempts == 0 for d in pending)  # a hold is not a try
        assert [r.getMessage() for r in caplog.records if "held" in r.getMessage()] == [
            f"deliveries to address 127.0.0.1:{port} held: over 1e-06 a second (0 more held since the last line)"
        ]


async def test_a_burst_to_one_receiver_is_paced_in_order_and_all_of_it_arrives(open_alerts, monkeypatch):
    """600 banners of one alert to one webhook: each delivery past the burst was held, retried with
    its backoff, and dropped after ten holds (trial 30: 353 of 600 never sent). Now each waits its
    turn, the notifier's next behind it, and every one arrives, in order, none held. (On PostgreSQL
    the queue claimed a notifier's deliveries all at once and started one: one every 15 s.)"""
    monkeypatch.setattr(delivery, "DESTINATION_RATE", 20.0)
    monkeypatch.setattr(delivery, "DESTINATION_BURST", 2)
    state = open_alerts()
    worker = DeliveryWorker(state, Destinations(Reach(["127.0.0.0/8"])))
    with Receiver() as receiver:
        notifier = state.create_notifier(1, "webhook", None, {"url": receiver.url + "/hook"})
        events = [f"e{n:02d}" for n in range(12)]
        state.enqueue([(e, 1, "ALERT", notifier, {"event": e, "triggers": ["any"]}) for e in events], time.time())
        await worker.start()
        try:
            deadline = time.monotonic() + 60  # a guard against a hang, not a measure
            while len(receiver.posts) < len(events):
                assert time.monotonic() < deadline, f"{len(receiver.posts)} of {len(events)} arrived"
                await asyncio.sleep(0.05)
        finally:
            await worker.stop()

        assert [body["event"] for _, body, _ in receiver.posts] == events
        assert {e["outcome"] for e in state.log(1, "ALERT")} == {"sent"}


async def test_one_attempt_at_a_time_waits_for_a_destination_the_others_are_held(open_alerts, monkeypatch):
    """An attempt waiting for its destination's turn holds one of the worker's slots: a flood to one
    place from many notifiers would fill them all. One waits; another finds it waiting and is held
    (not a try), and all arrive."""
    monkeypatch.setattr(delivery, "DESTINATION_RATE", 2.0)
    monkeypatch.setattr(delivery, "DESTINATION_BURST", 1)
    state = open_alerts()
    worker = DeliveryWorker(state, Destinations(Reach(["127.0.0.0/8"])))
    with Receiver() as receiver:
        items = []
        for n in range(3):  # three notifiers of three accounts, one receiver
            notifier = state.create_notifier(1 + n, "webhook", None, {"url": f"{receiver.url}/hook{n}"})
            items.append((f"e{n}", 1 + n, "ALERT", notifier, {"event": f"e{n}", "triggers": ["any"]}))
        state.enqueue(items, time.time())
        await worker.start()
        try:
            deadline = time.monotonic() + 60  # a guard against a hang, not a measure
            while len(receiver.posts) < 3:
                assert time.monotonic() < deadline, f"{len(receiver.posts)} of 3 arrived"
                await asyncio.sleep(0.05)
        finally:
            await worker.stop()
    outcomes = [e for account in (1, 2, 3) for e in state.log(account, "ALERT")]
    assert sorted(body["event"] for _, body, _ in receiver.posts) == ["e0", "e1", "e2"]
    assert any(e["outcome"] == "retry" and e["detail"].startswith("held:") for e in outcomes)
    assert all(e["attempt"] == 1 for e in outcomes) and "failed" not in {e["outcome"] for e in outcomes}
