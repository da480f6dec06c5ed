"""Which of the Host pane's service columns a narrow terminal keeps: in the current view, when each
service was seen outranks what changed (newcomer trial 19: at 120x30 Seen gave way to an empty
Changes column)."""

from __future__ import annotations

from textual.widgets import DataTable

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.host import HostPane
from tests.conftest import backend_with
from tests.tui.helpers import settle, until

IP = "192.0.2.20"


def seen(port: int, product: str) -> dict:
    return {"ip_str": IP, "port": port, "transport": "tcp", "timestamp": "2026-11-01T00:00:00", "product": product}


async def test_at_120_columns_the_current_view_keeps_seen(tmp_path):
    with backend_with(tmp_path, [seen(22, "OpenSSH"), seen(443, "nginx")]) as backend:
        app = SpyglassApp(backend.profile(backend.key("member")), pane="host", arg=IP)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            host = app.query_one(HostPane)
            await until(pilot, lambda: host.record is not None, "the host")
            labels = [str(c.label) for c in app.query_one("#services", DataTable).columns.values()]
            assert "Seen" in labels, labels
