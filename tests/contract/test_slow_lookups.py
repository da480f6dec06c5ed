"""Names whose name server never answers hold up nobody but who asked for them: a real DNS server
on loopback keeps quiet about ``*.slow.test`` while another account's notifications, requests and
lookups go on. Order, not time, is asserted: the others are served while the slow lookups are
still pending."""

from __future__ import annotations

import asyncio
import time

import httpx

from spyglass.client import Clients
from spyglass.server.alerts import delivery
from spyglass.server.alerts.delivery import TESTS_PER_ACCOUNT
from spyglass.server.geonet import MEASURING, GeonetSettings
from tests.conftest import start_backend
from tests.contract.test_alerts_delivery import Receiver, banner, watch
from tests.servers import ZONE_NETWORKS, DnsServer, TricklingServer

SLOW = 8.0  # the backend's lookup timeout: far longer than anything the test waits for meanwhile


async def wait_until(condition, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never {what}")
        await asyncio.sleep(0.02)


async def test_notifier_tests_of_silent_names_hold_up_nobody_else(tmp_path, monkeypatch):
    monkeypatch.setattr(delivery, "TEST_DEADLINE", 60.0)  # the lookups' timeout ends them, however loaded
    with DnsServer(silent=("slow.test",)) as dns, Receiver() as receiver:
        geonet = GeonetSettings(nameservers=[dns.host], dns_port=dns.port, dns_timeout=SLOW)
        server, backend = start_backend(tmp_path, geonet=geonet)
        with server:
            # a member: its requests at once (4) leave room past its notifier tests under way (2)
            guest, other = backend.key("member"), backend.key()
            async with (
                Clients.from_profile(backend.profile(guest)) as g,
                Clients.from_profile(backend.profile(backend.key())) as stuck,
                Clients.from_profile(backend.profile(other)) as o,
                httpx.AsyncClient(base_url=backend.url, params={"key": guest}, timeout=60) as raw,
            ):
                port = receiver.url.rsplit(":", 1)[1]
                await watch(o, f"http://loop.example.test:{port}/hook", ["127.0.3.0/24"], "any")
                # and a third account's deliveries to a silent name are under way
                await watch(stuck, "http://deliveries.slow.test/hook", ["127.0.2.0/24"], "any")
                backend.collect([banner("127.0.2.1", p) for p in range(1, 6)])
                slow = [(await g.notifiers.create("webhook", {"url": f"http://n{i}.slow.test/"})).id for i in range(8)]
                tests = [asyncio.create_task(raw.post(f"/notifier/{n}/test")) for n in slow]
                await wait_until(lambda: sum(t.done() for t in tests) == len(tests) - TESTS_PER_ACCOUNT, "refused")
                refused = [t.result() for t in tests if t.done()]
                assert {r.status_code for r in refused} == {429} and all(r.headers["retry-after"] for r in refused)
                assert "tests of this account's notifiers are under way" in refused[0].json()["error"]
                pending = [t for t in tests if not t.done()]
                await wait_until(lambda: dns.unanswered >= 2 * TESTS_PER_ACCOUNT, "asked the silent server")

                # meanwhile another account is answered, and its notification goes out
                assert len((await o.notifiers.list()).matches) == 2
                backend.collect([banner("127.0.3.1", 80)])
                await wait_until(lambda: "127.0.3.1:80" in receiver.services(), "delivered the other's notification")
                assert not any(t.done() for t in pending)  # while the slow lookups were still under way

                answers = [(await t).json() for t in pending]
        backend.store.close()
    assert all(a["success"] is False and "is not a destination" in a["detail"] for a in answers)


async def test_a_notifier_test_is_answered_by_its_deadline_however_slowly_the_receiver_answers(tmp_path, monkeypatch):
    """A receiver that trickles its answer a byte at a time never lets a read time out: the test
    is answered, as failed, by its deadline, while that receiver is still answering."""
    monkeypatch.setattr(delivery, "TEST_DEADLINE", 1.0)
    with TricklingServer() as trickling:
        server, backend = start_backend(tmp_path)
        with server:
            async with Clients.from_profile(backend.profile(backend.key())) as c:
                created = await c.notifiers.create("webhook", {"url": f"{trickling.url}/hook"})
                outcome = await asyncio.wait_for(c.notifiers.test(created.id), 60)  # a hang fails
                assert not trickling.stopping.is_set() and trickling.connections == 1
        backend.store.close()
    assert (outcome.success, outcome.detail) == (False, "no answer within 1 s")


async def test_geonet_pings_of_silent_names_hold_up_no_delivery(tmp_path):
    """Pings of names whose server never answers, with no key: past the agent's measuring cap
    they are refused at once, and meanwhile an account's notification to a name goes out."""
    with DnsServer(silent=("slow.test",)) as dns, Receiver() as receiver:
        geonet = GeonetSettings(nameservers=[dns.host], dns_port=dns.port, dns_timeout=SLOW, allow=ZONE_NETWORKS)
        server, backend = start_backend(tmp_path, geonet=geonet)
        with server:
            async with (
                Clients.from_profile(backend.profile(backend.key())) as o,
                httpx.AsyncClient(base_url=f"{backend.url}/geonet", timeout=60) as raw,
            ):
                port = receiver.url.rsplit(":", 1)[1]
                await watch(o, f"http://loop.example.test:{port}/hook", ["127.0.3.0/24"], "any")
                pings = [asyncio.create_task(raw.get(f"/api/ping/p{i}.slow.test")) for i in range(MEASURING + 4)]
                await wait_until(lambda: sum(t.done() for t in pings) == 4, "refused")
                assert {t.result().status_code for t in pings if t.done()} == {429}
                pending = [t for t in pings if not t.done()]
                await wait_until(lambda: dns.unanswered >= MEASURING, "asked the silent server")
                backend.collect([banner("127.0.3.1", 80)])
                await wait_until(lambda: "127.0.3.1:80" in receiver.services(), "delivered the notification")
                assert not any(t.done() for t in pending)  # while the pings' lookups were still under way
                answers = [await t for t in pending]
        backend.store.close()
    assert {a.status_code for a in answers} == {422}  # "cannot resolve"
