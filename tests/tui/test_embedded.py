"""With no profile, the dashboard starts its own backend, shows its first screen at once, and
stops the backend when it quits."""

from __future__ import annotations

import pytest

from spyglass.config import Profile
from spyglass.tui.app import SpyglassApp
from spyglass.tui.connection import Connection, KeyRefused, State
from spyglass.tui.messages import PingTarget
from spyglass.tui.panes.host import HostPane
from spyglass.tui.widgets.statusbar import StatusBar
from tests.tui.helpers import screen_text, settle

pytestmark = pytest.mark.external  # the dashboard's backend as a process


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


async def test_the_embedded_backend_uses_the_key_from_the_environment(tmp_path, monkeypatch):
    """SPYGLASS_API_KEY applies in every mode: with the embedded backend it replaces the local key."""
    from spyglass.config import active_profile
    from spyglass.server.state.sqlite.accounts import Store

    store = Store(tmp_path)
    try:
        _, key = store.create_account("scripted", "free")
    finally:
        store.close()
    monkeypatch.setenv("SPYGLASS_API_KEY", key)
    connection = Connection(active_profile(), data=tmp_path)
    try:
        info = await connection.open()
        assert connection.profile.key == key
        assert info.plan == "free"  # the local account is on enterprise: this is the given key's
    finally:
        await connection.close()


@pytest.mark.parametrize("from_env", [True, False])
async def test_a_refused_key_names_the_profile_and_the_url(tmp_path, monkeypatch, from_env):
    from spyglass.config import active_profile

    if from_env:
        monkeypatch.setenv("SPYGLASS_API_KEY", "no-such-key-0000")
        profile = active_profile()
    else:
        profile = Profile(name="lab", key="no-such-key-0000")
    connection = Connection(profile, data=tmp_path)
    try:
        with pytest.raises(KeyRefused) as refused:
            await connection.open()
        message = str(refused.value)
        assert message.startswith(f"the key of profile {profile.name} was refused by {connection.profile.url}: ")
        assert connection.profile.url.startswith("http://127.0.0.1:")
        assert ("SPYGLASS_API_KEY" in message) is from_env
        assert "no-such-key-0000" not in message  # the key itself is never shown
    finally:
        await connection.close()


async def test_host_urls_from_the_environment_still_apply_to_the_embedded_backend(tmp_path, monkeypatch):
    """The embedded backend stands in for the main URL only: SPYGLASS_GEONET_URL (an agent elsewhere) stays."""
    from spyglass.config import active_profile

    monkeypatch.setenv("SPYGLASS_GEONET_URL", "http://127.0.0.2:8770")
    connection = Connection(active_profile(), data=tmp_path)
    try:
        await connection.open()
        assert connection.profile.url.startswith("http://127.0.0.1:")
        assert connection.profile.base("geonet") == "http://127.0.0.2:8770"
        assert connection.profile.base("trends") == f"{connection.profile.url}/trends"
    finally:
        await connection.close()


async def test_the_embedded_backend_starts_beside_a_folder_named_spyglass(tmp_path, monkeypatch):
    """Right after cloning and installing, the clone (a folder named spyglass) is in the current
    directory: the backend must still import the installed package, not that folder."""
    from spyglass.local.launcher import EmbeddedBackend

    (tmp_path / "spyglass" / "src").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    backend = EmbeddedBackend(tmp_path / "data")
    backend.start()
    try:
        await backend.wait_ready()
    finally:
        backend.stop()


async def test_pane_host_on_the_very_first_start_waits_for_the_demo_data(tmp_path):
    """``spyglass --pane host ADDRESS`` on a fresh data dir: the address is looked up once the demo
    data is in (it was a 404 while the data was loading)."""
    address = "198.18.232.198"  # in the demo data (seed 1), as the README's example
    app = SpyglassApp(Profile(), data=tmp_path, pane="host", arg=address)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "HTTP 404" not in text and "No information" not in text  # not "404": the backend's port may hold it
        assert app.query_one(HostPane).record is not None and address in text
