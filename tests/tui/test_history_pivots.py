"""A pivot from a banner of a host's history: search sees each service's latest banner, so the
pivot says what it will find (newcomer trial 17: `0 results`, and nothing said why)."""

from __future__ import annotations

from textual.widgets import DataTable

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.host import HostPane
from spyglass.tui.panes.search import SearchPane
from spyglass.tui.widgets.pivots import PivotList
from tests.conftest import backend_with
from tests.tui.helpers import settle, until

IP = "192.0.2.10"


def seen(stamp: str, **more) -> dict:
    return {"ip_str": IP, "port": 8080, "transport": "tcp", "timestamp": stamp, "data": "HTTP/1.1 200", **more}


async def test_a_pivot_from_an_older_banner_says_search_sees_the_latest(tmp_path):
    banners = [seen("2026-10-01T00:00:00", org="Gone Org"), seen("2026-11-01T00:00:00")]
    with backend_with(tmp_path, banners) as backend:
        app = SpyglassApp(backend.profile(backend.key("member")), pane="host", arg=IP)
        async with app.run_test(size=(140, 40)) as pilot:
            await settle(pilot)
            host = app.query_one(HostPane)
            await until(pilot, lambda: host.record is not None, "the host")
            await pilot.press("h")
            await until(pilot, lambda: host.history and len(host.banners) == 2, "the history")
            pivots = app.query_one(PivotList)
            table = app.query_one("#services", DataTable)
            table.focus()
            older = next(i for i, b in enumerate(host.banners) if b.timestamp.startswith("2026-10"))
            table.move_cursor(row=table.get_row_index(str(older)))
            await until(pilot, lambda: pivots.older and any(p.filter == "org" for p in pivots.pivots), "its pivots")
            pivots.focus()
            pivots.highlighted = next(i for i, p in enumerate(pivots.pivots) if p.filter == "org")
            await pilot.press("enter")
            search = app.query_one(SearchPane)
            await until(pilot, lambda: search.display and search.total == 0, "the pivot's search")
            said = [n.message for n in app._notifications]
            assert any("Search sees each service's latest banner" in m for m in said), said
            latest = next(i for i, b in enumerate(host.banners) if b.timestamp.startswith("2026-11"))
            host.show_service(latest)
            assert not pivots.older  # the latest banner's pivots find it: nothing to say
