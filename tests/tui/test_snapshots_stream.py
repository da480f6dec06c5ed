"""The stream pane pinned at 80x24, 200x50 and in 16 colours: a backend of its own (frozen clock,
fixed port) publishes fixed banners; the rate counters are zeroed before the picture (they count
real seconds). Update with ``--snapshot-update`` and look at the SVGs."""

from __future__ import annotations

import time

import pytest

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.stream import StreamPane
from spyglass.tui.streambuffer import RATE_WINDOW
from spyglass.tui.widgets.tail import Tail
from tests.conftest import start_backend
from tests.tui.conftest import FROZEN, shown_on
from tests.tui.helpers import no_blink, settle
from tests.tui.test_snapshots import SIZES

STREAM_PORT = 47823  # what the status bar shows (tests/tui/conftest.py: shown_on)

BANNERS = [
    {
        "ip_str": f"198.18.7.{n}",
        "port": port,
        "transport": "tcp",
        "timestamp": f"2026-03-14T09:26:{n:02d}.000000",
        "org": org,
        "product": product,
        "location": {"country_code": cc},
        "data": f"{product} ready\n",
    }
    for n, (port, org, product, cc) in enumerate(
        [
            (22, "Meridian Telecom", "OpenSSH", "DE"),
            (80, "Orchid Retail Group", "nginx", "US"),
            (443, "Aurora TV", "Apache httpd", "JP"),
            (3306, "Redwood Manufacturing", "MySQL", "BR"),
            (8080, "Lumen Fiber Co-op", "Jetty", "NL"),
        ],
        start=10,
    )
]


@pytest.fixture
def stream_backend(tmp_path):
    """One per picture: the same banners are new to each."""
    server, backend = start_backend(tmp_path, clock=lambda: FROZEN)
    with server:
        yield shown_on(backend, STREAM_PORT)
    backend.store.close()


async def tail_of_fixed_banners(pilot, backend) -> None:
    await settle(pilot)
    await pilot.press("f7")
    pane = pilot.app.query_one(StreamPane)
    tail = pilot.app.query_one(Tail)
    deadline = time.monotonic() + 15
    while pane.state is None or pane.state.status != "connected":
        assert time.monotonic() < deadline
        await pilot.pause(0.05)
    backend.app.state.collector.collect_from_thread([dict(b) for b in BANNERS], "test")
    while len(tail.ring) < len(BANNERS):
        assert time.monotonic() < deadline
        await pilot.pause(0.05)
    pane.buffer.rates.extend([0] * RATE_WINDOW)  # real seconds: zeroed for a fixed picture
    pane.buffer.this_second = 0
    pane._show_status()
    tail._repaint()
    no_blink(pilot.app)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_stream_pane(snap_compare, stream_backend, size):
    terminal, theme = SIZES[size]
    _, key = stream_backend.store.create_account(f"analyst-{size}", "enterprise", display_name="Ada Analyst")
    app = SpyglassApp(stream_backend.profile(key), theme=theme)

    async def run_before(pilot) -> None:
        await tail_of_fixed_banners(pilot, stream_backend)

    assert snap_compare(app, terminal_size=terminal, run_before=run_before)


@pytest.mark.parametrize("size", ["80x24", "200x50"])
def test_stream_pane_selected_banner(snap_compare, stream_backend, size):
    """Scrolled back onto a banner: the detail box (its first line cut with …, taller when the
    terminal is)."""
    terminal, theme = SIZES[size]
    _, key = stream_backend.store.create_account(f"analyst-sel-{size}", "enterprise", display_name="Ada Analyst")
    app = SpyglassApp(stream_backend.profile(key), theme=theme)

    async def run_before(pilot) -> None:
        await tail_of_fixed_banners(pilot, stream_backend)
        await pilot.press("up", "up")
        pilot.app.query_one(Tail)._repaint()
        await pilot.pause()

    assert snap_compare(app, terminal_size=terminal, run_before=run_before)
