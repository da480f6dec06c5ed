"""The scan monitor driven like a person would: targets checked and priced as typed, a scan
submitted and followed to DONE, its results opened in the search pane."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.scans import ScansPane
from spyglass.tui.panes.search import SearchPane
from tests.conftest import start_backend
from tests.contract.test_scans import Greeter
from tests.tui.helpers import screen_text, settle, until

SIZE = (100, 30)


@pytest.fixture(scope="module")
def scan_backend(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("scan-pane"), scan_timeout=2.0)
    with server:
        yield backend
    backend.store.close()


async def open_scans(pilot) -> ScansPane:
    await settle(pilot)
    await pilot.press("f6")
    await settle(pilot)
    return pilot.app.query_one(ScansPane)


async def test_the_form_checks_and_prices_targets_as_typed(scan_backend):
    app = SpyglassApp(scan_backend.profile(scan_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_scans(pilot)
        check = pane.query_one("#scan-check", Static)
        assert app.focused is pane.query_one("#scan-targets", Input)
        await pilot.press(*"127.0.0.0/30")
        assert "4 IPs: costs 4 scan credits (100 left)" in str(check.render())
        await pilot.press(*",nope")
        assert "'nope' is not an IP address" in str(check.render()) and check.has_class("bad")
        await pilot.press("enter")  # refused in words; nothing typed is lost, nothing submitted
        await settle(pilot)
        assert "Not submitted" in screen_text(app)
        assert pane.query_one("#scan-targets", Input).value == "127.0.0.0/30,nope"
        pane.query_one("#scan-targets", Input).value = "10.0.0.1"
        await pilot.press("enter")
        await settle(pilot)
        assert "--scan-allow" in screen_text(app)  # the server's refusal, shown as it said it


async def test_a_refused_submit_gives_way_to_the_live_check_once_the_form_changes(scan_backend):
    """Issue 45: after a refused submit, the refusal stayed above the form while the ports field's
    live check said the form was right: what was said of the old form hid what holds now."""
    app = SpyglassApp(scan_backend.profile(scan_backend.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_scans(pilot)
        check = pane.query_one("#scan-check", Static)
        await pilot.press(*"127.0.0.1", "tab", *"80,99999", "enter")
        await settle(pilot)
        assert "Not submitted: '99999' is not a port (1-65535)" in screen_text(app)
        await pilot.press("backspace")
        await settle(pilot)
        assert "1 IP: costs 1 scan credit" in str(check.render()) and not check.has_class("bad")
        assert "Not submitted" not in screen_text(app) and "'99999'" not in screen_text(app)
        pane.query_one("#scan-targets", Input).value = "10.0.0.1"  # the server refuses this one
        await pilot.press("enter")
        await settle(pilot)
        assert "--scan-allow" in screen_text(app)
        await pilot.press("backspace")  # the ports changed: the refusal spoke of another request
        await settle(pilot)
        assert "--scan-allow" not in screen_text(app)
        assert "1 IP: costs 1 scan credit" in str(check.render())


async def test_a_scan_is_followed_to_done_and_opens_in_search(scan_backend):
    app = SpyglassApp(scan_backend.profile(scan_backend.key("member")))
    with Greeter(["127.0.0.1"], b"220 pane test service\r\n", delay=0.2) as service:
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_scans(pilot)
            pane.query_one("#scan-targets", Input).value = "127.0.0.1"
            pane.query_one("#scan-ports", Input).value = str(service.port)
            await pilot.press("enter")
            for _ in range(200):  # the pane polls on its own until the scan is DONE
                await pilot.pause(0.05)
                if "DONE" in screen_text(app):
                    break
            text = screen_text(app)
            assert "DONE" in text and "100% of 1 probe" in text
            assert "99 left" in text  # the credit it spent, shown in the form's price line
            assert not pane.following  # nothing in flight: polling stopped
            pane.query_one("#scan-list").focus()
            await pilot.press("enter")
            await settle(pilot)
            search = app.query_one(SearchPane)
            assert search.current_query.startswith("scan:")
            assert "pane test service" in screen_text(app)


async def test_enter_on_the_same_form_again_asks_before_a_second_scan(scan_backend):
    """Issue 45: Esc, Tab, Enter after a submit scanned the same targets again, spending credits."""
    app = SpyglassApp(scan_backend.profile(scan_backend.key("member")))
    with Greeter(["127.0.0.1"], b"220 twice\r\n") as service:
        async with app.run_test(size=(80, 24)) as pilot:
            pane = await open_scans(pilot)
            await pilot.press(*"127.0.0.1", "tab", *str(service.port), "enter")
            await settle(pilot)
            assert len((await app.clients.scans.list()).matches) == 1
            await pilot.press("escape", "tab")
            await settle(pilot)
            assert app.focused is pane.query_one("#scan-targets", Input)
            await pilot.press("enter")
            await settle(pilot)
            assert "Press Enter again to submit the same scan again" in screen_text(app)
            assert len((await app.clients.scans.list()).matches) == 1  # asked, not sent
            await pilot.press("escape", "tab")  # Esc says no (newcomer trial 10: Tab Enter sent it)
            await settle(pilot)
            assert "Press Enter again" not in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
            assert len((await app.clients.scans.list()).matches) == 1  # asked again, not sent
            await pilot.press("enter")  # asked for: sent
            await settle(pilot)
            assert len((await app.clients.scans.list()).matches) == 2
            await pilot.press("end", "backspace")  # another form: no question
            await settle(pilot)
            await pilot.press(*"2", "enter")
            await settle(pilot)
            assert len((await app.clients.scans.list()).matches) == 3


async def test_x_cancels_the_scan_in_flight_under_the_cursor(scan_backend):
    from tests.scanservers import hostile_service

    app = SpyglassApp(scan_backend.profile(scan_backend.key("member")))
    with hostile_service("silent") as service:  # each probe waits out its timeouts: the scan lasts
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_scans(pilot)
            pane.query_one("#scan-targets", Input).value = "127.0.0.1"
            pane.query_one("#scan-ports", Input).value = str(service.port)
            await pilot.press("enter")
            await settle(pilot)
            pane.query_one("#scan-list").focus()
            await pilot.press("x")
            for _ in range(50):
                await settle(pilot)
                if "CANCELLED" in set(pane.statuses.values()):
                    break
                await pilot.pause(0.1)
            assert set(pane.statuses.values()) == {"CANCELLED"}


async def test_esc_x_after_a_submit_cancels_the_scan_just_submitted(scan_backend):
    """Trial 24: the cursor stayed on the scan it was on, now second and done: x met that one."""
    from tests.scanservers import hostile_service

    app = SpyglassApp(scan_backend.profile(scan_backend.key("member")))
    with Greeter(["127.0.0.1"], b"220 quick\r\n") as quick, hostile_service("silent") as slow:
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_scans(pilot)
            await pilot.press(*"127.0.0.1", "tab", *str(quick.port), "enter")
            await until(pilot, lambda: set(pane.statuses.values()) == {"DONE"}, "the first scan done")
            ports = pane.query_one("#scan-ports", Input)
            ports.value = str(slow.port)
            ports.focus()
            await pilot.press("enter")
            await until(pilot, lambda: len(pane.statuses) == 2, "the second scan listed")
            await pilot.press("escape", "x")
            await until(pilot, lambda: "CANCELLED" in pane.statuses.values(), "a scan cancelled", timeout=30)
            assert sorted(pane.statuses.values()) == ["CANCELLED", "DONE"]
            await pilot.press("down", "x")  # a scan that is over: said so (trial 26: nothing said)
            await settle(pilot)
            assert any("DONE: nothing to cancel" in n.message for n in app._notifications)


async def test_the_age_column_goes_on_when_no_scan_runs(scan_backend):
    from datetime import UTC, datetime, timedelta

    app = SpyglassApp(scan_backend.profile(scan_backend.key("member")))
    with Greeter(["127.0.0.1"], b"220 aged\r\n") as service:
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_scans(pilot)
            pane.query_one("#scan-targets", Input).value = "127.0.0.1"
            pane.query_one("#scan-ports", Input).value = str(service.port)
            await pilot.press("enter")
            for _ in range(100):
                await settle(pilot)
                if set(pane.statuses.values()) == {"DONE"} and not pane.following:
                    break
                await pilot.pause(0.1)
            ((scan_id, created),) = pane.created.items()
            assert created is not None
            later = datetime.fromisoformat(created.replace("Z", "+00:00")).replace(tzinfo=UTC) + timedelta(minutes=5)
            pane.refresh_ages(later)  # nothing polls any more: the ticker still moves it
            assert pane.query_one("#scan-list").records[scan_id]["age"] == "5m"


async def test_digits_typed_on_the_list_start_another_target(scan_backend):
    """Newcomer trial 10, minor: 127.0.0.1, Esc, then 5 (Esc 5 in one read, or typed on the list)
    went onto the target, 127.0.0.15: another host, scanned without a word."""
    app = SpyglassApp(scan_backend.profile(scan_backend.key("member")))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_scans(pilot)
        await pilot.press(*"127.0.0.1", "escape")
        await settle(pilot)
        assert not isinstance(app.focused, Input)
        await pilot.press("5")
        await settle(pilot)
        assert pane.query_one("#scan-targets", Input).value == "127.0.0.1 5"
        assert "'5' is not an IP address" in str(pane.query_one("#scan-check", Static).render())


async def test_a_scan_submitted_elsewhere_is_listed_when_the_pane_is_shown_again(scan_backend):
    """Newcomer trial 17, minor: a scan the CLI submitted was listed only after r."""
    from spyglass.client import Clients

    key = scan_backend.key("member")
    app = SpyglassApp(scan_backend.profile(key))
    with Greeter(["127.0.0.1"], b"220 elsewhere\r\n") as service:
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_scans(pilot)
            await until(pilot, lambda: pane.protocols is not None, "the first listing")
            await pilot.press("f2")
            async with Clients.from_profile(scan_backend.profile(key)) as c:  # the CLI, another dashboard
                scan = await c.scans.submit({"127.0.0.1": [service.port]})
            await pilot.press("f6")
            await until(pilot, lambda: scan.id in pane.statuses, "the scan listed")
