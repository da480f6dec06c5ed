"""With no profile, the dashboard starts its own backend, shows its first screen at once, and
stops the backend when it quits."""

from __future__ import annotations

from spyglass.config import Profile
from spyglass.tui.app import SpyglassApp
from spyglass.tui.connection import State
from spyglass.tui.panes.base import PingTarget
from spyglass.tui.widgets.statusbar import StatusBar
from tests.tui.helpers import screen_text, settle


async def test_embedded_backend_lifecycle(tmp_path):
    app = SpyglassApp(Profile(), data=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        status = app.query_one(StatusBar)
        assert status.state is State.STARTING  # the screen is up before the backend is
        await settle(pilot)
        assert status.state is State.CONNECTED, status.detail
        assert status.endpoint.startswith("http://127.0.0.1:")
        assert "Demo data:" in screen_text(app)  # a first run is filled with synthetic banners, and says so
        await pilot.press("f5")
        await settle(pilot)
        assert "Local analyst" in screen_text(app)
        # Demo hosts are synthetic: the geo pane will not send packets to them.
        assert app.backend_info.get("demo") is True  # else stop here: never ping off loopback
        app.post_message(PingTarget("198.19.31.39"))
        await settle(pilot)
        assert "synthetic demo address" in screen_text(app)
        process = app.connection.backend.process
        assert process.poll() is None
    assert process.poll() is not None  # quitting the dashboard stopped the backend
