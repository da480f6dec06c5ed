"""The trends pane driven like a person would: a query charted month by month, the facet views,
the table, a comparison, a month range, and errors that keep what was typed."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.trends import TrendsPane
from spyglass.tui.widgets.trendchart import TrendChart
from tests.conftest import backend_with
from tests.contract.test_trends import BANNERS, scan
from tests.tui.helpers import screen_text, settle

SIZE = (100, 40)
HOSTILE = scan("198.19.1.9", 8080, "2025-05", "US") | {"org": "Evil\x1b[31mRed\x1b]52;c;QQ==\x07"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("trends-pane"), [*BANNERS, HOSTILE]) as backend:
        yield backend


async def run(pilot, query: str, **fields: str) -> TrendsPane:
    pane = pilot.app.query_one(TrendsPane)
    for name, value in fields.items():
        pane.query_one(f"#trend-{name}", Input).value = value
    box = pane.query_one("#query", Input)
    box.value = query
    box.focus()
    await pilot.press("enter")
    await settle(pilot)
    return pane


def table_rows(pane: TrendsPane) -> list[list[str]]:
    table = pane.query_one("#trend-table", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_a_query_is_charted_with_its_zero_months_and_tabled(served):
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.focused is not None and app.focused.id == "query"  # the query box takes the keys
        pane = await run(pilot, "net:198.19.1.0/24")
        text = screen_text(app)
        assert "up to 3 a month, 2025-01 to 2025-06" in text
        assert "2025-01" in text and "█" in text  # a month tick and bars
        assert table_rows(pane) == [
            ["2025-01", "3"],
            ["2025-02", "2"],
            ["2025-03", "0"],
            ["2025-04", "1"],
            ["2025-05", "1"],
            ["2025-06", "1"],
        ]
        await pilot.press("escape", "t")
        assert pane.has_class("tabled") and not pane.query_one(TrendChart).display
        text = screen_text(app)
        assert "Month" in text and "┌" not in text  # the table in the chart's place


async def test_facet_views_stack_the_top_values_with_a_legend_of_inert_text(served):
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = await run(pilot, "net:198.19.1.0/24", facets="org:2,port:3")
        await pilot.press("escape", "v")
        text = screen_text(app)
        assert "[org]" in text and "stacked, bottom to top:" in text
        assert "Evil␛[31mRed" in text and "\x1b" not in text  # the escape shows as a symbol
        await pilot.press("v")
        assert "[port]" in screen_text(app)
        # 22 and 80 (3 banners each, ties by value), then 443 (not among January's values)
        assert table_rows(pane)[0] == ["2025-01", "1", "2", "·"]
        await pilot.press("v")
        assert "[matches]" in screen_text(app)


async def test_two_queries_compare_on_one_line_chart_over_a_month_range(served):
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = await run(pilot, "port:22", compare="port:80", **{"from": "2025-02", "to": "2025-04"})
        chart = pane.query_one(TrendChart)
        assert chart.kind == "line" and [s.label for s in chart.series] == ["port:22", "port:80"]
        assert table_rows(pane) == [["2025-02", "1", "1"], ["2025-03", "0", "0"], ["2025-04", "0", "0"]]
        text = screen_text(app)
        assert "━━ port:22" in text and "━━ port:80" in text
        # a new range is applied without asking again
        month = pane.query_one("#trend-to", Input)
        month.value = "2025-02"
        month.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert table_rows(pane) == [["2025-02", "1", "1"]]


async def test_enter_in_any_box_and_r_chart_the_whole_form(served):
    """Issue 45 (second trial), major 3: a "vs" typed, then a month and Enter in the month's box,
    was not charted (nor by r): only Enter in the vs box itself asked for it."""
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = await run(pilot, "port:22")
        await pilot.press("escape", "slash", "tab", "tab", *"port:80", "tab", *"2025-02", "enter")
        await settle(pilot)
        chart = pane.query_one(TrendChart)
        assert [s.label for s in chart.series] == ["port:22", "port:80"]
        assert table_rows(pane)[0] == ["2025-02", "1", "1"]
        pane.query_one("#trend-compare", Input).value = "port:443"  # typed, no Enter
        await pilot.press("escape", "r")
        await settle(pilot)
        assert [s.label for s in chart.series] == ["port:22", "port:443"]


async def test_at_80_columns_the_status_wraps_rather_than_cutting_a_view_off(served):
    """Issue 45 (second trial), minor 8: `… view (v): [matches] · country ·`, the port view cut."""
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        pane = await run(pilot, "net:198.19.1.0/24", compare="port:22")
        status = pane.query_one("#trend-status")
        rows = screen_text(app).splitlines()[status.region.y : status.region.bottom]
        shown = " ".join(" ".join(rows).split())
        assert "up to 3 vs 1 a month, 2025-01 to 2025-06 — view (v): [matches] · country · port" in shown


async def test_refresh_asks_again_and_sees_newly_collected_scans(tmp_path):
    with backend_with(tmp_path, BANNERS) as backend:
        app = SpyglassApp(backend.profile(backend.key()), pane="trends")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            pane = await run(pilot, "port:443", facets="port:1")
            assert table_rows(pane)[3] == ["2025-04", "1"]
            rescan, found = scan("198.19.1.4", 443, "2025-04", "FR", day=20), scan("198.19.1.5", 443, "2025-04", "FR")
            assert backend.collect([rescan, found])  # a service once a month however often it is seen
            await pilot.press("escape", "r")
            await settle(pilot)
            assert table_rows(pane)[3] == ["2025-04", "2"]
            assert "up to 2 a month" in screen_text(app)


@pytest.mark.parametrize(
    ("query", "fields", "message"),
    [
        ("after:2025-01-01", {}, "trends have no filter 'after'"),
        ("port:22", {"facets": "transport"}, "trends have no facet 'transport'"),
        ("port:22", {"compare": "port:"}, "Compared query"),
        ("port:22", {"from": "2025-13"}, "Months are YYYY-MM"),
        ("port:22", {"from": "2025-07", "to": "2025-06"}, "the start month 2025-07 is after the end month 2025-06"),
        ("", {}, "Type a query first"),
    ],
)
async def test_what_cannot_run_is_said_and_kept(served, query, fields, message):
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = await run(pilot, query, **fields)
        assert message in screen_text(app)
        assert pane.query_one("#query", Input).value == query
        assert all(pane.query_one(f"#trend-{name}", Input).value == value for name, value in fields.items())
        assert pane.result is None


async def test_the_check_as_typed_knows_the_filters_trends_serve(served):
    """Trial 26: `after:2026-01-01 nginx` was checked ✓ as typed, then refused at Enter."""
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#query", Input).focus()
        await pilot.press(*"after:2026-01-01 nginx")
        await settle(pilot)
        said = screen_text(app)
        assert "✗ trends have no filter 'after'" in said and "✓" not in said
        app.query_one("#query", Input).value = "port:22 nginx"
        await settle(pilot)
        assert "✓ count: free" in screen_text(app)


async def test_digits_after_esc_go_into_the_query_not_to_another_pane(served):
    """Newcomer trial 11, major 2: Esc then 4 on Trends opened Account, and `Esc 4 4 3` ended on
    Geo; on every other pane with a box, text typed once the box is left goes into it."""
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = await run(pilot, "product:nginx")
        box = pane.query_one("#query", Input)
        await pilot.press("escape", "2")
        await settle(pilot)
        assert pane.display and box.value == "product:nginx 2" and box.has_focus
        box.value = "product:nginx"
        await pilot.press("alt+4", "4", "3")  # what ESC 4 4 3 in one read parses to
        await settle(pilot)
        assert pane.display and box.value == "product:nginx 443"


async def test_a_plan_without_trends_is_told_so(served):
    app = SpyglassApp(served.profile(served.key("member")), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = await run(pilot, "port:22")
        assert "Trends requires an enterprise plan" in screen_text(app)
        assert pane.query_one("#query", Input).value == "port:22"


async def test_without_colour_compared_queries_have_their_own_marks_and_c_gives_bars(served, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = SpyglassApp(served.profile(served.key()), pane="trends")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = await run(pilot, "net:198.19.1.0/24", compare="port:80")
        chart = pane.query_one(TrendChart)
        assert chart.kind == "line"
        legend = str(pane.query_one("#trend-legend").render())
        assert "** net:198.19.1.0/24" in legend and "++ port:80" in legend  # told apart without colour
        plotted = screen_text(app).split("view (v)", 1)[1].split("net:198.19.1.0/24", 1)[0]  # the chart
        assert "*" in plotted and "+" in plotted
        await pilot.press("escape", "c")
        await settle(pilot)
        assert chart.kind == "bar" and not chart.stack  # side by side: a comparison is not a sum
        legend = str(pane.query_one("#trend-legend").render())
        assert "██ net:198.19.1.0/24" in legend and "▓▓ port:80" in legend and "stacked" not in legend
