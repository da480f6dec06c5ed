"""Two backends that are one service (one ClickHouse, one PostgreSQL, each backend a ``spyglass
serve`` process with a data dir of its own): the dashboard attached to one lists, with its status,
a scan started through the other."""

from __future__ import annotations

import pytest

from spyglass.client import Clients
from spyglass.server.state.postgres import PostgresAccounts
from spyglass.testing.clickhouse import ClickHouseServer
from spyglass.testing.postgres import PostgresServer
from spyglass.tui.app import SpyglassApp
from tests.contract.test_scans import Greeter, wait_done
from tests.servers import installed
from tests.state.shared import ServeProcess
from tests.tui.helpers import screen_text
from tests.tui.test_scans import SIZE, open_scans

pytestmark = pytest.mark.external  # PostgreSQL, ClickHouse and two backends as processes


@pytest.fixture
def shared(tmp_path):
    """(banner store, state): a ClickHouse database and a PostgreSQL one, fresh."""
    with installed():
        postgres = PostgresServer().start()
        clickhouse = ClickHouseServer(tmp_path / "clickhouse").start()
    try:
        yield clickhouse.address("intel"), postgres.create_database("spyglass")
    finally:
        postgres.remove()
        clickhouse.stop()


async def test_the_dashboard_on_one_backend_shows_a_scan_started_through_the_other(tmp_path, shared):
    store, state = shared
    accounts = PostgresAccounts(state, tmp_path / "keys")
    key = accounts.create_key("member")
    accounts.close()
    with (
        Greeter(["127.0.0.1"], b"220 shared scan\r\n") as service,
        ServeProcess(tmp_path / "a", store, state) as a,
        ServeProcess(tmp_path / "b", store, state) as b,
    ):
        async with Clients.from_profile(b.profile(key)) as on_b:
            submitted = await on_b.scans.submit({"127.0.0.1": [service.port]})
            await wait_done(on_b, submitted.id)
        app = SpyglassApp(a.profile(key))
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_scans(pilot)
            for _ in range(100):  # the pane loads its list once shown
                if pane.statuses:
                    break
                await pilot.pause(0.05)
            assert pane.statuses == {submitted.id: "DONE"}
            text = screen_text(app)
            assert submitted.id in text and "DONE" in text
