"""Issue 44, minor 2: a paying account scanned the server's own loopback services (its ClickHouse,
PostgreSQL, mail relay), and every account, free keys too, read the results. They are now the
asking account's alone, on SQLite and PostgreSQL state alike."""

from __future__ import annotations

import asyncio

import pytest

from spyglass.client import Clients, NotFound
from spyglass.testing.alerts import Receiver, banner, watch
from spyglass.testing.backend import backend_with
from tests.contract.test_scans import Greeter, wait_done


@pytest.fixture(params=["sqlite", "postgresql"])
def state(request) -> str | None:
    return request.getfixturevalue("postgres_url") if request.param == "postgresql" else None


async def test_results_of_a_scan_of_the_servers_own_networks_are_the_askers_alone(tmp_path, state):
    imported = banner("127.0.9.2", 8080)  # loopback, but imported: everyone's, as before
    with (
        Greeter(["127.0.9.1"], b"220 the operator's relay\r\n") as service,
        backend_with(tmp_path / "data", [imported], state=state) as backend,
    ):
        port = service.port
        asker, other, free = (backend.key("member"), backend.key("enterprise"), backend.key("free"))
        async with Clients.from_profile(backend.profile(asker)) as c:
            scan = await c.scans.submit({"127.0.9.1": [port]})
            assert (await wait_done(c, scan.id)).found == 1
            mine = await c.search.search(f"scan:{scan.id}", facets="port")
            assert mine.total == 1 and mine.facets["port"][0].value == str(port)
            assert port in (await c.search.host("127.0.9.1")).ports
            assert (await c.search.count(f"port:{port}")).total == 0  # beyond its own scans: nobody's
        for key in (other, free):
            async with Clients.from_profile(backend.profile(key)) as c:
                assert (await c.search.count(f"scan:{scan.id}")).total == 0
                assert (await c.search.count(f"scan:{scan.id} port:{port}", facets="port")).facets["port"] == []
                with pytest.raises(NotFound):
                    await c.search.host("127.0.9.1")
                assert (await c.search.count("port:8080")).total == 1
        async with Clients.from_profile(backend.profile(other)) as c:
            assert (await c.search.search(f"port:{port}")).total == 0
            trends = await c.trends.search(f"port:{port}")
            assert trends.total == 0


async def test_nor_do_they_reach_another_accounts_streams_or_alerts(tmp_path, state):
    """What comes after them, a banner collected on the same port, is the first the other
    account's stream and alert see."""
    with (
        Receiver() as receiver,
        Greeter(["127.0.9.1"], b"220 the operator's relay\r\n") as service,
        backend_with(tmp_path / "data", [], state=state) as backend,
    ):
        port, hub = service.port, backend.app.state.hub
        async with (
            Clients.from_profile(backend.profile(backend.key("member"))) as asker,
            Clients.from_profile(backend.profile(backend.key("enterprise"))) as other,
        ):
            await watch(other, receiver.url + "/hook", ["127.0.9.0/29"], "any")

            async def first_banner():
                async for item in other.stream.ports([port]):
                    return item

            subscribers = len(hub.subscriptions)
            listening = asyncio.create_task(first_banner())
            while len(hub.subscriptions) == subscribers:  # subscribed before anything is scanned
                await asyncio.sleep(0.02)
            scan = await asker.scans.submit({"127.0.9.1": [port]})
            assert (await wait_done(asker, scan.id)).found == 1
            backend.collect([banner("127.0.9.3", port)])
            assert (await asyncio.wait_for(listening, 30))["ip_str"] == "127.0.9.3"
            receiver.wait_for(f"127.0.9.3:{port}")
            assert receiver.services() == [f"127.0.9.3:{port}"]
