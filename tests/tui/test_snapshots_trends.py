"""The trends pane pinned with a chart: the monthly series at 80x24, 200x50 and in 16 colours, a
facet's stacked bars, a comparison of two queries over a month range, and the table view. Fixed
size, frozen backend clock and demo data, fixed port, no blinking cursor; the chart's ticks are
explicit, so it renders the same every run (run with PYTHONHASHSEED=0 like the other snapshots).

Update after a deliberate change with ``pytest tests/tui/test_snapshots_trends.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

import itertools

import pytest

from spyglass.tui.app import SpyglassApp
from tests.tui.test_snapshots import SIZES, steps

_analysts = itertools.count()


@pytest.fixture
def enterprise_profile(snapshot_backend):
    """Trends are enterprise methods: a fresh enterprise account for each snapshot."""
    _, key = snapshot_backend.store.create_account(
        f"trends-analyst-{next(_analysts)}", "enterprise", display_name="Ada Analyst"
    )
    return snapshot_backend.profile(key)


def typed(text: str) -> list[str]:
    return ["space" if c == " " else c for c in text]


QUERY = [*typed("port:22,80,443"), "enter"]
VIEWS = {
    "matches": [*QUERY, "escape"],
    "facet": [*QUERY, "escape", "v"],
    "table": [*QUERY, "escape", "v", "t"],
    # the second query and the months typed in the form, then the query run again
    "compare": [
        "tab",
        "tab",
        *typed("port:22"),
        "tab",
        *typed("2025-06"),
        "tab",
        *typed("2026-05"),
        "shift+tab",
        "shift+tab",
        "shift+tab",
        "enter",
        "escape",
    ],
}


@pytest.mark.parametrize("size", SIZES)
def test_trends_series(snap_compare, enterprise_profile, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(enterprise_profile, theme=theme, pane="trends")
    assert snap_compare(app, terminal_size=terminal, run_before=steps(*VIEWS["matches"]))


@pytest.mark.parametrize("view", ["facet", "table"])
def test_trends_views(snap_compare, enterprise_profile, view):
    app = SpyglassApp(enterprise_profile, theme="spyglass-16", pane="trends")
    assert snap_compare(app, terminal_size=SIZES["80x24"][0], run_before=steps(*VIEWS[view]))


def test_trends_compare_over_a_month_range(snap_compare, enterprise_profile):
    app = SpyglassApp(enterprise_profile, theme="spyglass", pane="trends", arg="port:80")
    assert snap_compare(app, terminal_size=SIZES["200x50"][0], run_before=steps(*VIEWS["compare"]))
