"""What the dashboard looks like, pinned: fixed size, frozen backend clock, fixed port, no blinking.

Update after a deliberate change with ``pytest tests/tui/test_snapshots.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

import pytest

from spyglass.tui.app import SpyglassApp
from tests.tui.helpers import no_blink, settle

SIZE = (120, 34)


def dashboard(profile, **kw) -> SpyglassApp:
    return SpyglassApp(profile, theme="spyglass", **kw)


def steps(*keys: str):
    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        no_blink(pilot.app)
        await pilot.pause()

    return run_before


def test_account_pane(snap_compare, snapshot_profile):
    assert snap_compare(dashboard(snapshot_profile), terminal_size=SIZE, run_before=steps("alt+4"))


def test_account_pane_16_colours(snap_compare, snapshot_profile):
    app = SpyglassApp(snapshot_profile, theme="spyglass-16")
    assert snap_compare(app, terminal_size=SIZE, run_before=steps("alt+4"))


def test_help(snap_compare, snapshot_profile):
    assert snap_compare(dashboard(snapshot_profile), terminal_size=SIZE, run_before=steps("question_mark"))


def test_settings(snap_compare, snapshot_profile):
    assert snap_compare(dashboard(snapshot_profile), terminal_size=SIZE, run_before=steps("comma"))


@pytest.mark.parametrize("key", ["wrong-key-0000"])
def test_bad_key(snap_compare, snapshot_profile, key):
    profile = snapshot_profile.replace(key=key)
    assert snap_compare(dashboard(profile), terminal_size=SIZE, run_before=steps())


def test_geo_pane_idle(snap_compare, snapshot_profile):
    assert snap_compare(dashboard(snapshot_profile), terminal_size=SIZE, run_before=steps("alt+3"))


def test_search_results_with_facets(snap_compare, snapshot_profile):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("slash")
        pilot.app.query_one("#query").value = "port:22,80 country:US"
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("escape")
        no_blink(pilot.app)
        await pilot.pause()

    assert snap_compare(dashboard(snapshot_profile), terminal_size=SIZE, run_before=run_before)


def test_host_pane(snap_compare, snapshot_profile):
    async def run_before(pilot) -> None:
        await settle(pilot)
        pilot.app.show_host("198.18.0.0")
        await settle(pilot)
        no_blink(pilot.app)
        await pilot.pause()

    assert snap_compare(dashboard(snapshot_profile), terminal_size=SIZE, run_before=run_before)
