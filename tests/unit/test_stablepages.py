"""Issue 45, M5: the search pane's pages stay one list while banners arrive (tui/stablepages.py)."""

from __future__ import annotations

import asyncio

from spyglass.models import Banner, SearchResponse
from spyglass.tui.stablepages import PAGE, StablePages


def banner(n: int, stamp: str) -> Banner:
    return Banner.model_validate(
        {"ip_str": f"10.0.{n // 256}.{n % 256}", "port": 80, "transport": "tcp", "timestamp": stamp}
    )


def stamp(second: int) -> str:
    return f"2026-01-01T{second // 3600:02}:{second // 60 % 60:02}:{second % 60:02}"


def pages_over(rows: list[Banner]) -> StablePages:
    async def fetch(page: int) -> SearchResponse:
        return SearchResponse(matches=rows[(page - 1) * PAGE : page * PAGE], total=len(rows))

    pager = StablePages(fetch)
    pager.first(rows[:PAGE], len(rows))
    return pager


def test_rows_pushed_down_by_arrivals_are_shown_once_and_arrivals_not_at_all():
    old = [banner(n, stamp(10_000 - n)) for n in range(300)]  # newest first
    pager = pages_over(old)
    old[:0] = [banner(1000 + n, stamp(20_000 - n)) for n in range(150)]  # 150 newer arrive on top
    rows, more = asyncio.run(pager.next())
    assert rows == old[150 + 100 : 150 + 150] and more  # page 2 all seen or newer: page 3 at once
    assert pager.arrived == 150


def test_a_listing_that_is_not_newest_first_only_leaves_out_rows_shown():
    rows = [banner(n, stamp(n)) for n in range(250)]  # oldest first: no moment to pin
    pager = pages_over(rows)
    assert pager.pin is None
    rows.insert(0, banner(999, stamp(5)))  # one arrives: page 2 repeats page 1's last row
    shown, more = asyncio.run(pager.next())
    assert shown == rows[101:200] and more
