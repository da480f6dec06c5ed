"""The dashboard shell and the account pane, driven like a person would, against the real backend."""

from __future__ import annotations

import asyncio
import io
import os
import stat

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
from textual.widgets import Button, Input, ListView, Select

from spyglass.config import Config, Profile
from spyglass.tui.app import SpyglassApp
from spyglass.tui.connection import State
from spyglass.tui.screens.help import HelpScreen
from spyglass.tui.screens.settings import SettingsScreen
from spyglass.tui.widgets.footer import KeyFooter
from spyglass.tui.widgets.statusbar import StatusBar
from tests.servers import ThreadedServer
from tests.tui.helpers import screen_text, settle

SIZE = (120, 36)


async def test_connects_and_shows_account(backend):
    key = backend.key("member")
    app = SpyglassApp(backend.profile(key))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        status = app.query_one(StatusBar)
        assert status.state is State.CONNECTED
        assert (status.plan, status.query_credits, status.scan_credits) == ("member", 100, 100)
        text = screen_text(app)
        assert "connected" in text and backend.url in text
        assert "100 of 100 left" in text  # credits with their limits
        assert "User-Agent" in text and "127.0.0.1" in text
        assert key not in text


async def test_credits_in_status_bar_follow_the_server(backend):
    key = backend.key("member")
    app = SpyglassApp(backend.profile(key))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        backend.store.set_credits(backend.store.account_for_key(key).id, query=7)
        await pilot.press("r")  # refresh the pane: any response carries the balances
        await settle(pilot)
        assert app.query_one(StatusBar).query_credits == 7


async def test_bad_key_is_a_message_not_a_crash(backend):
    app = SpyglassApp(backend.profile("wrong-key-123456"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = app.query_one(StatusBar)
        assert status.state is State.REFUSED  # the server answered: not "unreachable"
        assert "Invalid API key" in status.detail
        assert "wrong-key-123456" not in screen_text(app)


async def test_server_down_then_reconnect(backend):
    app = SpyglassApp(Profile(name="down", url="http://127.0.0.1:9", key="k", rate=None))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = app.query_one(StatusBar)
        assert status.state is State.FAILED
        assert "Cannot connect to http://127.0.0.1:9" in status.detail
        # The user points the app at a live server from settings: it connects.
        app.use_profile(backend.profile(backend.key()))
        await settle(pilot)
        assert status.state is State.CONNECTED


async def test_hostile_server_message_is_inert():
    async def hostile(request):
        return JSONResponse({"error": "\x1b]52;c;cHduZWQ=\x07\x1b[2J[bold red]pwned[/] \u202eevil"}, 401)

    with ThreadedServer(Starlette(routes=[Route("/api-info", hostile)])) as server:
        app = SpyglassApp(Profile(name="hostile", url=server.url, key="k", rate=None))
        async with app.run_test(size=(200, 36)) as pilot:  # the refusal names profile and URL first
            await settle(pilot)
            text = screen_text(app)
    assert "␛]52;c;cHduZWQ=␇␛[2J[bold red]pwned[/] \ufffdevil" in text
    assert "\x1b]52" not in text


async def test_help_lists_keys_with_binding_ids(backend):
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        for binding_id in ("help", "settings", "refresh", "reconnect", "quit", "pane.search"):
            assert f" {binding_id} " in text
        await pilot.press("pagedown")  # the panes' own keys follow every pane's "go to" key
        await pilot.pause()
        assert " search.query " in screen_text(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_help_gives_each_pane_its_whole_text_and_no_empty_keys(backend):
    from rich.console import Console
    from textual.widgets import Static

    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        console = Console(width=96, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#keys", Static).content)
        text = " ".join(console.export_text().split())
        for cls in app.panes:
            assert " ".join(cls.HELP.split()) in text, cls.ID
            assert f"{cls.TITLE} ()" not in text
        assert "Notifiers (^g)" in text  # reached from the pane list


async def test_keymap_remaps_a_binding(backend):
    app = SpyglassApp(backend.profile(backend.key()), keymap={"help": "h"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "h")
        assert isinstance(app.screen, HelpScreen)


async def test_settings_rejects_bad_url_and_keeps_what_was_typed(backend):
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "comma")
        assert isinstance(app.screen, SettingsScreen)
        screen = app.screen
        screen.query_one("#name", Input).value = "work"
        screen.query_one("#url", Input).value = "ftp://intel.example"
        await pilot.click("#save")
        await pilot.pause()
        text = screen_text(app)
        assert "url: a URL starts with http:// or https://" in text
        assert screen.query_one("#url", Input).value == "ftp://intel.example"
        assert "work" not in Config.load().profiles


async def test_every_focus_stop_of_settings_is_one_that_shows_it(backend):
    """Newcomer trial 4: Tab from the profiles reached the form's scroll container, invisible:
    typed text went nowhere, and `l` opened the backend log."""
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "comma")
        assert isinstance(app.screen, SettingsScreen)
        stops = []
        for _ in range(12):
            await pilot.press("tab")
            stops.append(app.focused)
        assert all(isinstance(w, (Input, Button, Select, ListView)) for w in stops), stops


async def test_settings_tests_saves_and_uses_a_profile(backend):
    key = backend.key("member")
    app = SpyglassApp(Profile(name="down", url="http://127.0.0.1:9", key="k", rate=None))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "comma")
        screen = app.screen
        for field, value in (("name", "lab"), ("url", backend.url), ("key", key), ("rate", "")):
            screen.query_one(f"#{field}", Input).value = value
        await pilot.click("#test")
        await settle(pilot)
        text = screen_text(app)
        assert "Connected: plan member, 100 query credits" in text
        assert key not in text and key[-4:] in text  # masked, but recognisable
        await pilot.click("#use")
        await settle(pilot)
        assert app.query_one(StatusBar).state is State.CONNECTED
        assert app.query_one(StatusBar).endpoint == backend.url
    config = Config.load()
    assert config.active == "lab" and config.profiles["lab"].key == key
    assert stat.S_IMODE(os.stat(Config.path()).st_mode) == 0o600


async def test_theme_choice_is_remembered(backend):
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.theme = "spyglass-16"
        await pilot.pause()
    assert Config.load().theme == "spyglass-16"


async def test_a_dropped_server_shows_at_the_next_call(tmp_path):
    from tests.conftest import start_backend

    server, backend = start_backend(tmp_path)
    server.__enter__()
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = app.query_one(StatusBar)
        assert status.state is State.CONNECTED
        server.__exit__(None, None, None)  # the backend goes away mid-session
        await pilot.press("f5", "r")  # any call finds out
        await settle(pilot)
        assert status.state is State.FAILED
        assert "Cannot connect" in status.detail and "ctrl+r" in status.hint
    backend.store.close()


async def test_a_dashboard_started_before_its_server_connects_once_it_is_up(backend):
    """Started while its server was down, the dashboard said 'unreachable' for good: only ctrl+r
    connected it once the server was up (newcomer trial, major 1). It asks again by itself."""
    from spyglass.client.errors import ConnectFailed

    app = SpyglassApp(backend.profile(backend.key()))
    opened, tries = app.connection.open, []

    async def down_at_first():
        tries.append(1)
        if len(tries) == 1:  # the first connection finds nothing listening
            raise ConnectFailed(f"Cannot connect to {backend.url}: All connection attempts failed")
        return await opened()

    app.connection.open = down_at_first  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        status = app.query_one(StatusBar)
        seen: list[State] = []
        deadline = asyncio.get_running_loop().time() + 60
        while status.state is not State.CONNECTED:  # no key pressed
            seen.append(status.state)
            assert asyncio.get_running_loop().time() < deadline, (status.state, status.detail)
            await pilot.pause(0.05)
        assert State.FAILED in seen and len(tries) == 2 and app.clients is not None


async def test_a_drop_while_the_server_is_up_clears_by_itself(backend):
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = app.query_one(StatusBar)
        assert app.clients is not None and status.state is State.CONNECTED
        # What a call whose connection dropped reports, while the server still answers:
        app.clients.reachability.lost(f"Connection to {backend.url} dropped: Server disconnected")
        # Said at once, with no pause: on a loaded machine a pause can outlast the first probe,
        # which (rightly) clears it before the assertion would look.
        assert status.state is State.FAILED
        deadline = asyncio.get_running_loop().time() + 15
        while status.state is not State.CONNECTED:  # no key pressed: the dashboard asks again itself
            assert asyncio.get_running_loop().time() < deadline, status.detail
            await pilot.pause(0.05)
        assert app.clients.reachability.reachable is True


async def test_ctrl_l_repaints_the_whole_screen(backend):
    from textual._compositor import LayoutUpdate

    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        written: list[str] = []
        updates: list[object] = []
        app._driver.write = written.append  # type: ignore[union-attr, method-assign]
        display = app._display
        app._display = lambda screen, update: (updates.append(update), display(screen, update))[1]  # type: ignore[method-assign]
        await pilot.press("ctrl+l")  # from the search box: a priority key
        await settle(pilot)
        assert "\x1b[2J" in written
        full = [u for u in updates if isinstance(u, LayoutUpdate) and u.region == app.screen.region]
        assert full, updates


async def test_at_80_columns_the_status_keeps_what_to_do_and_names_a_refusal(backend):
    app = SpyglassApp(Profile(name="down", url="http://127.0.0.1:9", key="k", rate=None))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "● unreachable (ctrl+r retries): Cannot connect" in screen_text(app)
    app = SpyglassApp(backend.profile("wrong-key-123456"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "● refused (ctrl+r retries)" in text and "unreachable" not in text


async def test_at_80_columns_the_status_reason_wraps_whole_and_a_plain_status_keeps_one_line(backend):
    app = SpyglassApp(Profile(name="down", url="http://127.0.0.1:9", key="k", rate=None))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        reason = " ".join(app.status.detail.split()[-3:])  # its last words
        assert reason and reason in " ".join(screen_text(app).split())
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.query_one(StatusBar).region.height == 1


async def test_a_reason_shown_leaves_out_the_alert_notice_and_the_plan(backend):
    """Newcomer trial 18, minor: a backend that stopped answering took three lines of the bar at
    80x24 (the reason, then an alert's notice, the address, the plan and the credits)."""
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        status = app.query_one(StatusBar)
        status.plan, status.notice = "enterprise", "alert office: any on 198.51.100.7:443"
        status.detail = "http://127.0.0.1:40579 did not answer within 30 s"
        await settle(pilot)
        bar = " ".join(str(status.render()).split())
        assert "did not answer within 30 s" in bar and "office" not in bar and "plan" not in bar
        assert status.region.height == 2
        status.detail = ""
        await settle(pilot)
        assert "alert" in str(status.render()) and status.region.height == 1  # (cut to the room left)


async def test_toasts_leave_the_status_bar_in_view(backend):
    from textual.widgets._toast import Toast

    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        app.notify("a long message that takes the whole width of a toast " * 3, timeout=30)
        await settle(pilot)
        toasts = list(app.screen.query(Toast))
        assert toasts
        status, footer = app.query_one(StatusBar).region, app.query_one(KeyFooter).region
        assert all(not t.region.overlaps(status) and not t.region.overlaps(footer) for t in toasts)


async def test_without_colour_the_cursor_shows_in_reverse_video(backend, monkeypatch):
    from textual.widgets import DataTable

    monkeypatch.setenv("NO_COLOR", "1")
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.focused
        assert isinstance(box, Input) and box.get_component_rich_style("input--cursor").reverse
        await pilot.press("f12")
        await settle(pilot)
        table = app.focused
        assert isinstance(table, DataTable) and table.get_component_rich_style("datatable--cursor").reverse


async def test_without_colour_only_the_focused_query_box_shows_its_reverse_video_bar(backend, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.query_one("#query", Input)

        def bar() -> bool:  # the left edge of the box, on the row of its text
            return bool(app.screen.get_style_at(box.region.x, box.region.y + 1).reverse)

        assert box.has_focus and bar()
        await pilot.press("escape")  # the keys leave for the pane: the box looks unfocused
        await settle(pilot)
        assert not box.has_focus and not bar()
        text = screen_text(app)
        assert "search: free text" in text and "▔▔▔" in text  # still a box, with its placeholder
        assert "port,org,country" in text  # a compact box (the facets) is left as it was


async def test_the_linux_console_gets_boxes_and_marks_its_fonts_have(backend, monkeypatch):
    monkeypatch.setenv("TERM", "linux")
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "┌" in text and "* connected" in text
        assert not set(text) & set("╭╮╰╯▔▁▊▎●")  # rounded corners, eighth blocks, the round dot
        await pilot.press("f4")  # the geo pane's map: ASCII, not braille
        await settle(pilot)
        text = screen_text(app)
        assert "map: * < 50 ms" in text and ":::" in text
        assert not any(0x2800 <= ord(c) <= 0x28FF for c in text) and "●" not in text
        missing = set("✓✗⏎↓↑❚‹▁▂▃▄▅▆▇▏▎▍▋▊▉●╭╮╰╯")  # glyphs the console fonts lack
        await pilot.press("ctrl+p")  # the palette's icon
        await pilot.pause()
        assert "🔎" not in screen_text(app)
        await pilot.press("escape")
        for keys in (["f2", *"nginx"], ["enter"], ["f5"], ["f7"]):  # the query check, facets, bars, stream
            await pilot.press(*keys)
            await settle(pilot) if keys[0] != "f7" else await pilot.pause(1.5)
            text = screen_text(app)
            assert not set(text) & missing, (keys, set(text) & missing)
    monkeypatch.setenv("TERM", "xterm-256color")
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:  # nothing stays patched for the next app
        await settle(pilot)
        assert "╭" in screen_text(app) and "● connected" in screen_text(app)


async def test_over_ssh_the_text_cursor_does_not_blink(backend, monkeypatch):
    monkeypatch.setenv("SSH_CONNECTION", "192.0.2.1 50022 192.0.2.2 22")
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.focused
        assert isinstance(box, Input) and not box.cursor_blink
        await pilot.press(*"port:22", "tab")  # typing, and another box, change nothing
        await settle(pilot)
        assert not box.cursor_blink and not any(i.cursor_blink for i in app.screen.query(Input) if i.has_focus)


async def test_the_text_cursor_stops_blinking_when_idle_and_blinks_again_at_a_key(backend, monkeypatch):
    import asyncio

    monkeypatch.delenv("SSH_CONNECTION", raising=False)
    monkeypatch.delenv("SSH_TTY", raising=False)
    app = SpyglassApp(backend.profile(backend.key()))
    app.blink.idle = 0.3  # (the default is some seconds)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.focused
        assert isinstance(box, Input)
        await pilot.press("p")
        assert box.cursor_blink  # typed just now: it blinks
        async with asyncio.timeout(30):
            while box.cursor_blink:
                await pilot.pause(0.1)
        await pilot.press("o")
        assert box.cursor_blink and box.value == "po"


async def test_at_80_columns_a_notice_leaves_the_address_and_credits_and_a_note_is_whole(backend):
    """Issue 45, minor 3: a fired alert's notice pushed the address and credits out, and a note
    ("Press ↓ again ...") wrapped the bar to two lines. A note that asks for a second key is read
    whole, on one line: the rest gives way while it shows (the notice was a toast too)."""
    app = SpyglassApp(backend.profile(backend.key("member")))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        status = app.query_one(StatusBar)
        status.notice = "alert 'edge watch' fired: 198.18.0.1:443 (https) Acme Corp, a long product name"
        status.note = "Press ↓ again to load the next page (1 query credit)"
        await settle(pilot)
        bar = screen_text(app).splitlines()[status.region.y]
        address = backend.url.split("://", 1)[1]
        assert status.region.height == 1 and "connected" in bar
        assert "Press ↓ again to load the next page (1 query credit)" in bar, bar
        status.note = ""  # answered: the notice and the address and credits again
        await settle(pilot)
        bar = screen_text(app).splitlines()[status.region.y]
        assert status.region.height == 1 and "connected" in bar and "alert 'edge" in bar
        assert bar.rstrip().endswith(f"{address} │ credits: 100 query 100 scan"), bar
        status.notice = ""
        status.note = "Press D again to delete the alert"  # room for the credits: they stay
        await settle(pilot)
        bar = screen_text(app).splitlines()[status.region.y]
        assert "Press D again to delete the alert" in bar and "credits: 100 query 100 scan" in bar, bar


async def test_a_pane_key_typed_in_settings_leaves_the_pane_behind_it(backend):
    """Newcomer trial 8: F5, `,`, `2`, Esc landed on Host, not Account: the digit had switched
    the pane behind Settings, seen only once it closed."""
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("comma")
        assert isinstance(app.screen, SettingsScreen)
        app.screen.query_one(ListView).focus()  # the keys on the profiles list, not in a box
        await pilot.press("2", "f3", "r", "q")  # (q quit the app from the form: newcomer trial 9)
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, SettingsScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, SettingsScreen)
        assert app.switcher.current == "pane-account"
