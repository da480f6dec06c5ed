"""Alerts end to end: banners the running backend collects become notifications that real
receivers on loopback get (an HTTP webhook receiver, an aiosmtpd SMTP server), once, durably.

Absence is proved without sleeping: after the banner that must not notify, a control banner
(on a second alert with the ``any`` trigger) is collected; deliveries go out in the order they
were queued, so when the control arrives, anything queued before it would have arrived too.
"""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest

from spyglass.backoff import Backoff
from spyglass.client import Clients
from spyglass.netblocks import parse_netblock
from spyglass.server.alerts import delivery, engine
from spyglass.testing.alerts import Receiver, banner, watch
from tests.conftest import start_backend
from tests.servers import SmtpServer


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 20, 12, 0, 0)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def receiver():
    with Receiver() as r:
        yield r


@pytest.fixture
def fast_retries(monkeypatch):
    monkeypatch.setattr(delivery, "RETRY", Backoff(base=0.05, cap=600.0))


async def test_new_service_notifies_once_and_never_when_ignored_disabled_or_expired(tmp_path, receiver):
    clock = Clock()
    server, backend = start_backend(tmp_path, clock=clock)
    with server:
        async with Clients.from_profile(backend.profile(backend.key())) as c:
            watched = await watch(c, receiver.url + "/hook", ["127.0.0.0/30"], "new_service", expires=3600)
            await watch(c, receiver.url + "/hook", ["127.0.1.1"], "any")  # the control alert
            control = iter(range(1000, 2000))

            def proved_silent(*services: str) -> None:
                port = next(control)
                backend.collect([banner("127.0.1.1", port)])
                receiver.wait_for(f"127.0.1.1:{port}")
                for service in services:
                    assert service not in receiver.services()

            # a new service: exactly one notification naming it, with the alert and the banner
            backend.collect([banner("127.0.0.1", 8080), banner("127.0.0.9", 8080)])  # .9: outside the alert
            receiver.wait_for("127.0.0.1:8080")
            path, body, headers = receiver.posts[0]
            assert path == "/hook"
            assert body["alert"] == {"id": watched, "name": "watch"}
            assert body["triggers"] == ["new_service"] and body["banner"]["port"] == 8080
            assert headers["Idempotency-Key"] == body["event"]
            # the same service again (a later banner) is not new: silence
            backend.collect([banner("127.0.0.1", 8080, "2026-11-20T11:00:00.000000")])
            proved_silent("127.0.0.9:8080")
            assert receiver.services().count("127.0.0.1:8080") == 1
            # an ignored service is not notified; un-ignored, the next new one is
            assert await c.alerts.ignore_service(watched, "new_service", "127.0.0.2:22")
            backend.collect([banner("127.0.0.2", 22)])
            proved_silent("127.0.0.2:22")
            assert await c.alerts.unignore_service(watched, "new_service", "127.0.0.2:22")
            backend.collect([banner("127.0.0.2", 23)])
            receiver.wait_for("127.0.0.2:23")
            # no trigger enabled: no notification
            assert await c.alerts.disable_triggers(watched, "new_service")
            backend.collect([banner("127.0.0.2", 24)])
            proved_silent("127.0.0.2:24")
            # expired: no notification
            assert await c.alerts.enable_triggers(watched, "new_service")
            clock.now += timedelta(seconds=3601)
            assert (await c.alerts.get(watched)).expired is True
            backend.collect([banner("127.0.0.2", 25)])
            proved_silent("127.0.0.2:25")
            # the log says when, which notifier, and the outcome
            log = await c.alerts.notifications(watched)
            assert [(n.service, n.outcome) for n in log] == [("127.0.0.2:23", "sent"), ("127.0.0.1:8080", "sent")]
            assert all(n.provider == "webhook" and n.attempt == 1 and n.at for n in log)
    backend.store.close()


async def test_email_notification_through_aiosmtpd(tmp_path):
    with SmtpServer() as smtp:
        server, backend = start_backend(tmp_path, smtp_server=smtp.address)
        with server:
            async with Clients.from_profile(backend.profile(backend.key())) as c:
                alert = await c.alerts.create("mail", ["127.0.0.1"])
                notifier = await c.notifiers.create("email", {"to": "ops@example.test"})
                await c.alerts.enable_triggers(alert.id, "new_service")
                await c.alerts.add_notifier(alert.id, notifier.id)
                backend.collect([banner("127.0.0.1", 2525)])
                deadline = time.monotonic() + 20
                while not smtp.messages and time.monotonic() < deadline:
                    time.sleep(0.02)
                backend.collect([banner("127.0.0.1", 2525, "2026-11-20T11:00:00.000000")])  # not new
                backend.collect([banner("127.0.0.1", 2526)])
                while len(smtp.messages) < 2 and time.monotonic() < deadline:
                    time.sleep(0.02)
        backend.store.close()
    received = [(to, content.decode()) for to, content in smtp.messages]
    assert [to for to, _ in received] == [["ops@example.test"], ["ops@example.test"]]
    assert (
        "127.0.0.1:2525" in received[0][1]
        and "Subject: [spyglass] mail: new_service on 127.0.0.1:2525" in received[0][1]
    )
    assert "127.0.0.1:2526" in received[1][1]


async def test_restart_between_event_and_delivery_loses_nothing_and_sends_nothing_twice(
    tmp_path, receiver, fast_retries
):
    receiver.status = 503  # the receiver is failing when the event happens
    server, backend = start_backend(tmp_path)
    with server:
        key = backend.key()
        async with Clients.from_profile(backend.profile(key)) as c:
            watched = await watch(c, receiver.url, ["127.0.0.1"], "new_service")
            await watch(c, receiver.url, ["127.0.1.1"], "any")
            backend.collect([banner("127.0.0.1", 7000)])
            deadline = time.monotonic() + 20
            while not [n for n in await c.alerts.notifications(watched) if n.outcome == "retry"]:
                assert time.monotonic() < deadline, "the failing delivery was never tried"
                time.sleep(0.02)
    backend.store.close()
    assert receiver.posts == []

    receiver.status = 200
    for _ in range(2):  # after the first restart it is delivered; after the second, not again
        server, backend = start_backend(tmp_path)
        with server:
            receiver.wait_for("127.0.0.1:7000")
            port = 7100 + len(receiver.posts)
            backend.collect([banner("127.0.1.1", port)])
            receiver.wait_for(f"127.0.1.1:{port}")
        backend.store.close()
    assert receiver.services().count("127.0.0.1:7000") == 1
    events = [body["event"] for _, body, _ in receiver.posts]
    assert len(events) == len(set(events)) == 3


async def test_banners_collected_as_the_server_stops_still_notify_after_restart(tmp_path, receiver):
    import asyncio

    server, backend = start_backend(tmp_path)
    with server:
        async with Clients.from_profile(backend.profile(backend.key())) as c:
            await watch(c, receiver.url, ["127.0.0.1"], "new_service")
        collector = backend.app.state.collector
        # handed over and not waited for: the server stops while the batch waits to be flushed
        collecting = collector.collect([banner("127.0.0.1", 6000)], "test")
        handed = asyncio.run_coroutine_threadsafe(collecting, collector._loop)
        deadline = time.monotonic() + 30  # (on a loaded machine the hand-over itself may come late)
        while not (collector._pending or handed.done()) and time.monotonic() < deadline:
            time.sleep(0.001)
    backend.store.close()
    server, backend = start_backend(tmp_path)
    with server:
        receiver.wait_for("127.0.0.1:6000")
    backend.store.close()
    assert receiver.services() == ["127.0.0.1:6000"]


async def test_an_alert_stored_with_an_expiry_past_the_year_9999_never_expires_and_breaks_nobody(tmp_path, receiver):
    """Issue 34: one alert stored (by an older version) with ``expires`` 300 billion seconds made
    matching raise for every banner, so no account was notified, and its owner's listing 500."""
    server, backend = start_backend(tmp_path)
    with server:
        key = backend.key()
        async with (
            Clients.from_profile(backend.profile(key)) as old,
            Clients.from_profile(backend.profile(backend.key())) as other,
        ):
            account = backend.store.account_for_key(key)
            assert account is not None
            far = backend.app.state.alerts.create_alert(
                account.id, "far", [parse_netblock("127.0.6.0/24")], 300_000_000_000
            )
            notifier = await old.notifiers.create("webhook", {"url": receiver.url + "/old"})
            assert await old.alerts.enable_triggers(far.id, "any")
            assert await old.alerts.add_notifier(far.id, notifier.id)
            await watch(other, receiver.url + "/other", ["127.0.7.0/24"], "any")
            backend.collect([banner("127.0.6.1", 80), banner("127.0.7.1", 80)])
            receiver.wait_for("127.0.7.1:80")
            receiver.wait_for("127.0.6.1:80")  # it never expires: it notifies
            (listed,) = await old.alerts.list()
            assert (listed.id, listed.expires, listed.expiration, listed.expired) == (
                far.id,
                300_000_000_000,
                None,
                False,
            )
            assert listed.notify == {"active": True, "reason": "notifying"}
    backend.store.close()


async def test_an_alert_that_cannot_be_matched_is_left_out_and_every_other_alert_still_notifies(
    tmp_path, receiver, caplog
):
    """Issue 34: one alert that raised in matching stopped every account's notifications."""
    server, backend = start_backend(tmp_path)
    with server:
        async with (
            Clients.from_profile(backend.profile(backend.key())) as broken,
            Clients.from_profile(backend.profile(backend.key())) as other,
        ):
            damaged = await watch(broken, receiver.url + "/broken", ["127.0.8.0/24"], "any")
            with contextlib.closing(sqlite3.connect(tmp_path / "alerts.db")) as db, db:  # damaged on disk
                db.execute(  # its networks and the ranges kept beside them
                    "UPDATE alerts SET networks = ?, spans = ? WHERE id = ?", ('["127.0.8.0/33"]', b"\x01", damaged)
                )
            await watch(other, receiver.url + "/other", ["127.0.9.0/24"], "any")
            for port in (80, 81):  # its failure is logged once, not for each banner
                backend.collect([banner("127.0.8.1", port), banner("127.0.9.1", port)])
                receiver.wait_for(f"127.0.9.1:{port}")
            assert (await broken.alerts.get(damaged)).filters.ip == ["127.0.8.0/33"]  # still listed
    backend.store.close()
    assert "127.0.8.1:80" not in receiver.services()
    left_out = [r for r in caplog.records if r.getMessage().startswith(f"alert {damaged} left out of matching")]
    assert [r.levelname for r in left_out if r.exc_info] == ["ERROR"]


class FailingMatcher:
    """The trigger matcher raising while ``failing`` (a fault no real part makes on demand)."""

    def __init__(self, monkeypatch, failing: int) -> None:
        self.failing, self.failed = failing, 0
        real = engine.matching

        def matching(*args):
            if self.failing:
                self.failing -= 1
                self.failed += 1
                raise RuntimeError("the trigger matcher failed")
            return real(*args)

        monkeypatch.setattr(engine, "matching", matching)


async def test_a_failed_matching_pass_is_tried_again_not_dropped(tmp_path, receiver, monkeypatch):
    """Issue 34: a batch whose matching raised was logged and dropped, its notifications lost."""
    monkeypatch.setattr(engine, "MATCH_RETRY", Backoff(base=0.05, cap=600.0))
    matcher = FailingMatcher(monkeypatch, failing=3)
    server, backend = start_backend(tmp_path)
    with server:
        async with Clients.from_profile(backend.profile(backend.key())) as c:
            await watch(c, receiver.url, ["127.0.10.0/24"], "any")
            backend.collect([banner("127.0.10.1", 80)])
            receiver.wait_for("127.0.10.1:80")
    backend.store.close()
    assert matcher.failed == 3 and receiver.services() == ["127.0.10.1:80"]


async def test_banners_a_failed_pass_left_unmatched_notify_after_a_restart(tmp_path, receiver, monkeypatch):
    """Issue 34: the events a failing pass blocked were never delivered, even after a restart."""
    matcher = FailingMatcher(monkeypatch, failing=10**6)
    server, backend = start_backend(tmp_path)
    with server:
        async with Clients.from_profile(backend.profile(backend.key())) as c:
            await watch(c, receiver.url, ["127.0.11.0/24"], "any")
        backend.collect([banner("127.0.11.1", 80)])
        deadline = time.monotonic() + 20
        while not matcher.failed:
            assert time.monotonic() < deadline, "the batch was never matched"
            time.sleep(0.02)
    backend.store.close()
    assert receiver.posts == []
    matcher.failing = 0  # the fault is gone; the banner is still held
    server, backend = start_backend(tmp_path)
    with server:
        receiver.wait_for("127.0.11.1:80")
    backend.store.close()
    assert receiver.services() == ["127.0.11.1:80"]


@contextmanager
def dead_receiver() -> Iterator[str]:
    """A loopback port that accepts connections (the kernel's backlog) and never answers. Closed,
    it resets the connections it held: an attempt under way fails then instead of timing out."""
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))
        dead.listen(128)
        yield f"http://127.0.0.1:{dead.getsockname()[1]}/hook"


async def test_a_receiver_that_never_answers_delays_only_its_own_notifications(tmp_path, receiver):
    """One account's dead receiver (each attempt waits out its 10 s timeout) and a queue of 30
    notifications for it: another account's notification still goes out at once."""
    server, backend = start_backend(tmp_path)
    with server:
        async with (
            Clients.from_profile(backend.profile(backend.key())) as stuck,
            Clients.from_profile(backend.profile(backend.key())) as other,
        ):
            with dead_receiver() as url:
                await watch(stuck, url, ["127.0.2.0/24"], "any")
                await watch(other, receiver.url + "/hook", ["127.0.3.0/24"], "any")
                backend.collect([banner("127.0.2.1", port) for port in range(1, 31)])
                backend.collect([banner("127.0.3.1", 80)])
                receiver.wait_for("127.0.3.1:80", timeout=5)  # queued one by one: 30 x 10 s
            # closed before the server stops, which lets the attempt under way finish (its 10 s)
    backend.store.close()


async def test_an_attempt_that_fails_in_an_unforeseen_way_is_retried_and_blocks_nothing(tmp_path, receiver):
    """A notifier stored before its arguments were checked (an e-mail 'to' with a line break) makes
    its delivery raise outside the providers' failure path: a failed attempt, not a stalled queue."""
    server, backend = start_backend(tmp_path, smtp_server=("127.0.0.1", 9))
    with server:
        key = backend.key()
        async with Clients.from_profile(backend.profile(key)) as c:
            alert = await c.alerts.create("broken", ["127.0.4.0/24"])
            await c.alerts.enable_triggers(alert.id, "any")
            account = backend.store.account_for_key(key)
            assert account is not None
            bad = backend.app.state.alerts.create_notifier(account.id, "email", None, {"to": "a@b.test\r\nBcc: x@y"})
            await c.alerts.add_notifier(alert.id, bad)
            await watch(c, receiver.url + "/hook", ["127.0.5.0/24"], "any")
            backend.collect([banner("127.0.4.1", port) for port in range(1, 4)])
            backend.collect([banner("127.0.5.1", 80)])
            receiver.wait_for("127.0.5.1:80")
            deadline = time.monotonic() + 20
            while len(log := await c.alerts.notifications(alert.id)) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
    backend.store.close()
    assert {n.outcome for n in log} == {"retry"} and len(log) >= 3
