"""What the dashboard looks like, pinned: every pane at 80x24 and 200x50 and in 16 colours, with a
fixed size, a frozen backend clock, a fixed port and no blinking cursor (run with PYTHONHASHSEED=0).

Update after a deliberate change with ``pytest tests/tui/test_snapshots.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

import pytest

from spyglass.tui.app import SpyglassApp
from spyglass.tui.messages import OpenHost, RunSearch
from tests.tui.helpers import no_blink, settle

SMALL, LARGE = (80, 24), (200, 50)
SIZES = {"80x24": (SMALL, "spyglass"), "200x50": (LARGE, "spyglass"), "16-colours": (SMALL, "spyglass-16")}
HOST = "198.18.0.0"


def steps(*actions):
    """Keys (strings) and callables on the app, each followed by waiting for the app to settle."""

    async def run_before(pilot) -> None:
        await settle(pilot)
        for action in actions:
            if isinstance(action, str):
                await pilot.press(action)
            else:
                action(pilot.app)
            await settle(pilot)
        no_blink(pilot.app)
        await pilot.pause()

    return run_before


PANES = {
    "search": (lambda app: app.post_message(RunSearch("port:22,80 country:US")), "escape"),
    "host": (lambda app: app.post_message(OpenHost(HOST)),),
    "geo": ("f4",),
    "account": ("f5",),
    "scans": ("f6", *"127.0.0.0/30", "tab", *"80,443/https"),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("pane", PANES)
def test_pane(snap_compare, snapshot_profile, pane, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(snapshot_profile, theme=theme)
    assert snap_compare(app, terminal_size=terminal, run_before=steps(*PANES[pane]))


@pytest.mark.parametrize("size", ["80x24", "200x50"])
def test_help(snap_compare, snapshot_profile, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(snapshot_profile, theme=theme)
    assert snap_compare(app, terminal_size=terminal, run_before=steps("f1"))


def test_settings(snap_compare, snapshot_profile):
    app = SpyglassApp(snapshot_profile, theme="spyglass")
    assert snap_compare(app, terminal_size=SMALL, run_before=steps("escape", "comma"))


def test_first_screen_with_the_search_input_focused(snap_compare, snapshot_profile):
    app = SpyglassApp(snapshot_profile, theme="spyglass")
    assert snap_compare(app, terminal_size=SMALL, run_before=steps(*"nginx"))


@pytest.mark.parametrize("key", ["wrong-key-0000"])
def test_bad_key(snap_compare, snapshot_profile, key):
    app = SpyglassApp(snapshot_profile.replace(key=key), theme="spyglass")
    assert snap_compare(app, terminal_size=SMALL, run_before=steps())
