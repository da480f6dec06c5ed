"""A notification that fires for the account while the dashboard is open is said wherever the
user is: a toast and the status bar name the alert, the trigger and the service, and ctrl+o opens
the host. Against the real backend, its trigger engine and a real webhook receiver on loopback."""

from __future__ import annotations

import asyncio
import time

import pytest

from spyglass.client import Clients
from spyglass.server.stream.alerts import AlertNetworks
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.host import HostPane
from spyglass.tui.widgets.statusbar import StatusBar
from tests.conftest import start_backend
from tests.contract.test_alerts_delivery import Receiver
from tests.contract.test_stream import banner
from tests.tui.helpers import screen_text, settle, until

SIZE = (140, 40)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("alert-notices"))
    with server:
        yield backend
    backend.store.close()


async def test_a_fired_alert_is_said_on_any_pane_and_ctrl_o_opens_the_host(served):
    key = served.key()
    with Receiver() as receiver:
        async with Clients.from_profile(served.profile(key)) as c:
            hook = (await c.notifiers.create("webhook", {"url": receiver.url})).id
            # Rich markup in a name is text: said as typed, never interpreted
            alert = await c.alerts.create("[bold]dmz[/bold]", ["198.51.100.240/29"])
            await c.alerts.enable_triggers(alert.id, "any")
            await c.alerts.add_notifier(alert.id, hook)
        app = SpyglassApp(served.profile(key), pane="search")
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await settle(pilot)
            watch_ready = lambda: app.notice_watch is not None and app.notice_watch.ready  # noqa: E731
            await until(pilot, watch_ready, "the notification logs read")
            subs = served.app.state.hub.subscriptions
            await until(pilot, lambda: any(isinstance(s.match, AlertNetworks) for s in subs), "the /alert stream")
            await asyncio.to_thread(served.collect, [{**banner(port=8079), "ip_str": "198.51.100.242"}])
            await until(pilot, lambda: app.query_one(StatusBar).notice, "the first notice")
            # another service of the host fires after it: ctrl+o opens the host on that one (trial 27)
            await asyncio.to_thread(served.collect, [{**banner(port=8081), "ip_str": "198.51.100.242"}])
            await until(pilot, lambda: "8081" in app.query_one(StatusBar).notice, "the notice in the status bar")
            notice = app.query_one(StatusBar).notice
            assert "[bold]dmz[/bold]: any on 198.51.100.242:8081" in notice and "opens the host" in notice
            await until(pilot, lambda: " fired" in screen_text(app), "the toast")
            assert "[bold]dmz[/bold]: any on 198.51.100.242:8081" in screen_text(app)
            await pilot.press("ctrl+o")
            await settle(pilot)
            host = app.query_one(HostPane)
            assert app.current_pane() is host
            await until(pilot, lambda: "198.51.100.242" in screen_text(app), "the host opened")
            await until(pilot, lambda: "8081/tcp" in str(host.service_box.border_title), "its service shown")


async def test_ctrl_o_before_any_alert_fired_says_so(served):
    """Trial 28: it did nothing and said nothing."""
    app = SpyglassApp(served.profile(served.key()), pane="search")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert any("No alert has fired since the dashboard started" in n.message for n in app._notifications)


async def test_the_settings_screen_chooses_the_signal_and_saves_it(served):
    from textual.widgets import Select

    from spyglass.config import Config

    app = SpyglassApp(served.profile(served.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "comma")
        app.screen.query_one("#alert-signal", Select).value = "bell"
        await settle(pilot)
        assert "Saved: a fired alert is said on screen, with a terminal bell." in screen_text(app)
    assert Config.load().alert_signal == "bell" and app.config.alert_signal == "bell"


async def test_an_alert_made_after_the_start_is_said_too(served):
    key = served.key()
    with Receiver() as receiver:
        app = SpyglassApp(served.profile(key), pane="search")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await until(pilot, lambda: app.notice_watch is not None and app.notice_watch.ready, "the logs read")
            async with Clients.from_profile(served.profile(key)) as c:  # another dashboard, the CLI
                hook = (await c.notifiers.create("webhook", {"url": receiver.url})).id
                alert = await c.alerts.create("later", ["203.0.113.128/30"])
                await c.alerts.enable_triggers(alert.id, "any")
                await c.alerts.add_notifier(alert.id, hook)
            deadline = time.monotonic() + 30  # well before the minute after which every log is read
            port = 9000
            while not app.query_one(StatusBar).notice:  # the stream follows the new alert within a second
                assert time.monotonic() < deadline, "the new alert's notification was never said"
                port += 1
                await asyncio.to_thread(served.collect, [{**banner(port=port), "ip_str": "203.0.113.129"}])
                await pilot.pause(0.3)
            assert "later: any on 203.0.113.129:" in app.query_one(StatusBar).notice


async def test_the_alerts_pane_in_view_lists_an_alert_made_elsewhere_when_it_fires(served):
    """Trial 26: "Alert fired / lo" showed above the Alerts pane's "No alert yet"."""
    from spyglass.tui.panes.alerts import AlertsPane

    key = served.key()
    with Receiver() as receiver:
        app = SpyglassApp(served.profile(key), pane="alerts")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await until(pilot, lambda: app.notice_watch is not None and app.notice_watch.ready, "the logs read")
            pane = app.query_one(AlertsPane)
            assert not pane.alerts
            async with Clients.from_profile(served.profile(key)) as c:  # the CLI, beside
                hook = (await c.notifiers.create("webhook", {"url": receiver.url})).id
                alert = await c.alerts.create("made-elsewhere", ["203.0.113.64/30"])
                await c.alerts.enable_triggers(alert.id, "any")
                await c.alerts.add_notifier(alert.id, hook)
            deadline = time.monotonic() + 30
            port = 9100
            while not app.query_one(StatusBar).notice:
                assert time.monotonic() < deadline, "the new alert's notification was never said"
                port += 1
                await asyncio.to_thread(served.collect, [{**banner(port=port), "ip_str": "203.0.113.65"}])
                await pilot.pause(0.3)
            await until(pilot, lambda: alert.id in pane.alerts, "the alert listed")
            assert "made-elsewhere" in screen_text(app)


async def test_alerts_that_fire_together_share_one_toast_at_80x24(served):
    """Issue 45: at 80x24 a toast per fired alert (three a reading) filled the screen."""
    from spyglass.tui.alertnotices import Notice

    app = SpyglassApp(served.profile(served.key()), pane="search")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.clear_notifications()
        app.announce([Notice(f"lab{n}", ["any"], f"192.0.2.{n}:80") for n in range(1, 4)])
        await settle(pilot)
        assert len(app._notifications) == 1
        text = screen_text(app)
        assert "3 alerts fired" in text and "lab3: any on 192.0.2.3:80" in text
        app.announce([Notice("lab4", ["any"], "192.0.2.4:22")])  # while that toast is up: counted in
        await settle(pilot)
        assert len(app._notifications) == 1
        text = screen_text(app)
        assert "4 alerts fired" in text and "lab4: any on 192.0.2.4:22" in text and "3 alerts fired" not in text
        assert app.last_notice is not None and app.last_notice.alert == "lab4"


async def test_an_alert_notice_takes_the_address_place_at_80_columns(served):
    """Newcomer trial 22: at 80x24 the bar read `● connected │ alert lo… │ 127.0.0.1:40305 │ …`."""
    from spyglass.tui.alertnotices import Notice

    app = SpyglassApp(served.profile(served.key()), pane="search")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        bar = app.query_one(StatusBar)
        assert bar.endpoint.split("://")[-1] in str(bar.render())
        app.announce([Notice("loop", ["any"], "127.0.0.4:18095")])
        await until(pilot, lambda: bar.notice, "the notice")
        line = str(bar.render())
        assert "alert loop: any on 127.0" in line and "credits:" in line, line  # (was: "alert lo…")
        assert bar.endpoint.split("://")[-1] not in line  # for the notice's while


async def test_an_alert_deleted_as_a_banner_in_it_came_does_not_end_the_watch(served):
    """Newcomer trial 17, major: after an alert was deleted while banners in its networks came (the
    demo stream's), reading its log answered 404, which ended the watch: no alert was said again,
    though the webhooks of the others were sent."""
    key = served.key()
    with Receiver() as receiver:
        async with Clients.from_profile(served.profile(key)) as c:
            hook = (await c.notifiers.create("webhook", {"url": receiver.url})).id
            gone = await c.alerts.create("gone", ["192.0.2.192/29"])
            kept = await c.alerts.create("kept", ["192.0.2.200/29"])
            for alert in (gone, kept):
                await c.alerts.enable_triggers(alert.id, "any")
                await c.alerts.add_notifier(alert.id, hook)
            app = SpyglassApp(served.profile(key), pane="search")
            async with app.run_test(size=SIZE) as pilot:
                await settle(pilot)
                await until(pilot, lambda: app.notice_watch is not None and app.notice_watch.ready, "the logs read")
                watch = app.notice_watch
                assert watch is not None and gone.id in watch.alerts
                await c.alerts.delete(gone.id)
                watch.nudge("192.0.2.193")  # a banner of its networks, streamed just before
                await until(pilot, lambda: gone.id not in watch.alerts, "the deleted alert forgotten")
                await asyncio.to_thread(served.collect, [{**banner(port=8082), "ip_str": "192.0.2.201"}])
                await until(pilot, lambda: "kept: any on 192.0.2.201:8082" in app.query_one(StatusBar).notice, "kept")
