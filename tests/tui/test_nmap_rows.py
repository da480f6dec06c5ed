"""Rows as an nmap import makes them (``nmap -sV``: a product and version, no banner text, no title)
read at 80 columns, and their long values stay one line each in the pivot list."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input

from spyglass.tui.app import SpyglassApp
from spyglass.tui.messages import OpenHost
from spyglass.tui.widgets.pivots import PivotList
from tests.conftest import backend_with
from tests.tui.helpers import screen_text, settle

CPE = "cpe:2.3:a:giampaolo_rodola:pyftpdlib_with_a_long_name:2.2.0"
FINGERPRINT = "SHA256:" + "A1b2C3d4E5f6" * 4


def scanned(port: int, product: str, version: str, **more) -> dict:
    return {
        "ip_str": "192.0.2.77",
        "port": port,
        "transport": "tcp",
        "timestamp": "2026-11-27T15:09:54",
        "data": "",  # nmap -sV without scripts: no banner text
        "product": product,
        "version": version,
        "tags": ["nmap"],
        **more,
    }


BANNERS = [
    scanned(22, "OpenSSH", "9.2p1 Debian 2+deb12u3", ssh={"fingerprint": FINGERPRINT, "type": "ssh-ed25519"}),
    scanned(21, "pyftpdlib", "2.2.0", cpe23=[CPE]),
    scanned(80, "nginx", "1.22.1", http={"title": "Welcome to nginx!"}),
]


@pytest.fixture(scope="module")
def nmap_backend(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("tui-nmap-rows"), BANNERS) as backend:
        yield backend


async def test_a_row_without_title_or_banner_shows_its_product_at_80_columns(nmap_backend):
    """Issue 45: at 80 columns the Product column gives way, and rows of an nmap import, which have
    no title or banner text, showed an address and a port only."""
    app = SpyglassApp(nmap_backend.profile(nmap_backend.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.query_one("#query", Input).value = "net:192.0.2.77/32"
        await pilot.press("enter")
        await settle(pilot)
        results = app.query_one("#results", DataTable)
        assert "product" not in [column.key.value for column in results.ordered_columns]  # gave way
        rows = {results.get_row_at(r)[1].plain: results.get_row_at(r)[2] for r in range(results.row_count)}
        assert rows["21/tcp"].plain == "pyftpdlib 2.2.0" and rows["21/tcp"].style == "dim"
        assert rows["80/tcp"].plain == "Welcome to nginx!"  # a title is its own
        assert "OpenSSH 9.2p1" in screen_text(app)
    app = SpyglassApp(nmap_backend.profile(nmap_backend.key("member")))
    async with app.run_test(size=(160, 30)) as pilot:  # room for Product: the title cell stays empty
        await settle(pilot)
        app.query_one("#query", Input).value = "net:192.0.2.77/32"
        await pilot.press("enter")
        await settle(pilot)
        results = app.query_one("#results", DataTable)
        keys = [column.key.value for column in results.ordered_columns]
        rows = [results.get_row_at(r) for r in range(results.row_count)]
        row = next(row for row in rows if row[1].plain == "21/tcp")
        assert row[keys.index("product")].plain == "pyftpdlib 2.2.0" and row[keys.index("title")].plain == ""


async def test_long_values_stay_one_line_each_in_the_pivot_list(nmap_backend):
    """Issue 45: a fingerprint or a CPE wrapped mid-value onto the next line of the pivot list."""
    app = SpyglassApp(nmap_backend.profile(nmap_backend.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for port, long in ((22, FINGERPRINT), (21, CPE)):
            app.post_message(OpenHost("192.0.2.77", f"{port}/tcp"))
            await settle(pilot)
            pivots = app.query_one("#host-pivots", PivotList)
            assert any(p.value == long for p in pivots.pivots)
            assert pivots.virtual_size.height == len(pivots.pivots)  # one line each
            assert pivots.content_region.width < len(long)  # (it is long: cut, not wrapped)
            assert "…" in screen_text(app)
