"""Issue 45, M5: the search pane's next pages while the backend collects. The service pages by
offset over a newest-first order, so banners arriving between two pages push rows down; the pane
shows each row once, in order, and none of the newcomers in the middle of the list."""

from __future__ import annotations

import asyncio
import ipaddress
from datetime import UTC, datetime, timedelta

import pytest
from textual.widgets import DataTable, Input

from spyglass.client import Clients
from spyglass.datagen import generate
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.search import SearchPane
from tests.conftest import backend_with
from tests.tui.helpers import screen_text, settle

QUERY = "has_ssl:false"


@pytest.fixture(scope="module")
def collecting_backend(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("tui-paging"), generate(1500, seed=12)) as backend:
        yield backend


def arrivals(count: int, first: int = 0) -> list[dict]:
    """``count`` new services that match QUERY, collected now (newer than every stored banner)."""
    now = datetime.now(UTC)
    made = []
    for i, banner in enumerate(generate(count, seed=99)):
        banner = {k: v for k, v in banner.items() if k != "ssl"}
        address = ipaddress.ip_address("203.0.113.0") + first + i
        banner.update(
            ip_str=str(address),
            ip=int(address),
            port=80,
            transport="tcp",
            timestamp=(now + timedelta(microseconds=i)).isoformat(),
        )
        made.append(banner)
    return made


async def listing(backend, key: str, pages: int) -> list[tuple]:
    async with Clients.from_profile(backend.profile(key)) as clients:
        rows = []
        for page in range(1, pages + 1):
            result = await clients.search.search(QUERY, page=page)
            rows += [(b.address, f"{b.port}/{b.transport}") for b in result.matches]
        return rows


async def test_next_pages_neither_repeat_nor_insert_rows_while_banners_arrive(collecting_backend):
    key = collecting_backend.key("enterprise")
    before = await listing(collecting_backend, key, 4)  # the listing as it is before anything arrives
    assert len(before) == 400 and len(set(before)) == 400
    app = SpyglassApp(collecting_backend.profile(key))
    async with app.run_test(size=(130, 40)) as pilot:
        await settle(pilot)
        app.query_one("#query", Input).value = QUERY
        await pilot.press("enter")
        await settle(pilot)
        pane = app.query_one(SearchPane)
        results = app.query_one("#results", DataTable)
        assert pane.results.items == before[:100]

        # More banners arrive than a page holds: page 2 at its offset is all rows shown already.
        collected = await asyncio.to_thread(collecting_backend.collect, arrivals(130))
        assert len(collected) == 130
        results.focus()
        results.move_cursor(row=results.row_count - 1)
        await pilot.press("down", "down")  # past the last row: asked, then spent
        await settle(pilot)
        assert pane.results.items == before[: len(pane.results.items)]
        assert len(pane.results.items) == 170  # pages 2 and 3 at their offsets: rows 101 to 170 are new

        collected = await asyncio.to_thread(collecting_backend.collect, arrivals(30, first=1000))
        assert len(collected) == 30
        results.move_cursor(row=results.row_count - 1)
        await pilot.press("down", "down")
        await settle(pilot)
        items = pane.results.items
        assert len(items) == len(set(items)), "a row shown twice"
        assert items == before[: len(items)], "a row lost, or a newcomer inserted"
        assert len(items) == 240
        assert "160 more since the first page (r shows them)" in screen_text(app)
        assert "loads more (1 query credit a page)" in screen_text(app)  # not 100: shown rows left out


async def test_services_collected_again_while_paging_are_counted_at_the_end(tmp_path):
    """Trial 26: a service collected again moves above the first page; paged to the end, the pane
    said "1,535 shown — past the last row loads 100 more" where no page was left to load."""
    stored = [{k: v for k, v in b.items() if k != "ssl"} for b in generate(700, seed=13)]
    with backend_with(tmp_path, stored) as backend:
        key = backend.key("enterprise")
        everything = await listing(backend, key, 9)
        app = SpyglassApp(backend.profile(key))
        async with app.run_test(size=(130, 40)) as pilot:
            await settle(pilot)
            app.query_one("#query", Input).value = QUERY
            await pilot.press("enter")
            await settle(pilot)
            pane = app.query_one(SearchPane)
            total = pane.total
            assert total == len(everything)
            # three services from the last page are collected again: they go to the top
            again = []
            for address, port in [(a, p) for a, p in everything[-3:]]:
                banner = next(b for b in stored if b["ip_str"] == address and f"{b['port']}/{b['transport']}" == port)
                again.append({**banner, "timestamp": datetime.now(UTC).isoformat(), "data": "again\n"})
            assert len(await asyncio.to_thread(backend.collect, again)) == 3
            results = app.query_one("#results", DataTable)
            results.focus()
            while pane.results.more:
                results.move_cursor(row=results.row_count - 1)
                await pilot.press("down", "down")
                await settle(pilot)
            assert len(pane.results.items) == total - 3 == len(set(pane.results.items))
            said = screen_text(app)
            assert f"{total - 3:,} shown; 3 more since the first page (r shows them)" in said
            assert "past the last row" not in said
