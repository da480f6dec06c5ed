"""The live-tail pane against the real backend: banners the backend collects appear, pause holds
them with a pending count, the client-side filter applies as they arrive, scrolling back keeps
the view while the stream goes on, saving writes the buffer, and Enter opens the host."""

from __future__ import annotations

import asyncio
import gzip
import json

import pytest
from textual.widgets import Input

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.host import HostPane
from spyglass.tui.panes.stream import GAP_SHOWN, StreamPane
from spyglass.tui.widgets.statusbar import StatusBar
from spyglass.tui.widgets.tail import Tail
from tests.conftest import start_backend
from tests.contract.test_stream import banner
from tests.tui.helpers import screen_text, settle, until

SIZE = (100, 30)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("stream-pane"))
    with server:
        yield backend
    backend.store.close()


async def open_stream(pilot) -> StreamPane:
    await settle(pilot)
    await pilot.press("f7")
    pane = pilot.app.query_one(StreamPane)
    await until(pilot, lambda: pane.state is not None and pane.state.status == "connected", "the stream")
    return pane


async def publish(backend, banners: list[dict]) -> None:
    await asyncio.to_thread(backend.collect, banners)


def saved_lines(path) -> list[bytes]:
    try:
        return gzip.open(path).read().splitlines()
    except EOFError:  # still being written
        return []


def ports_in(tail: Tail) -> list[int]:
    return [json.loads(entry.raw)["port"] for entry in tail.ring]


async def test_banners_appear_and_pause_holds_them_with_a_count(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        tail = app.query_one(Tail)
        await publish(live, [banner(port=1000 + i) for i in range(3)])
        await until(pilot, lambda: len(tail.ring) == 3, "three lines")
        await until(pilot, lambda: "1002/tcp" in screen_text(app), "the lines on screen")
        await pilot.press("p")
        await publish(live, [banner(port=2000 + i) for i in range(4)])
        await until(pilot, lambda: len(pane.buffer.pending) == 4, "four pending")
        assert ports_in(tail) == [1000, 1001, 1002]
        await until(pilot, lambda: "PAUSED: 4 pending" in screen_text(app), "the pending count")
        await pilot.press("p")
        assert ports_in(tail) == [1000, 1001, 1002, 2000, 2001, 2002, 2003] and not pane.buffer.pending
        await until(pilot, lambda: "2003/tcp" in screen_text(app), "the released lines on screen")


async def test_the_client_side_filter_applies_as_banners_arrive(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        tail = app.query_one(Tail)
        await pilot.press("slash")
        box = app.query_one("#stream-filter", Input)
        assert box.has_focus
        box.value = "product:nginx -port:80"
        await pilot.press("enter")
        assert pane.buffer.matches is not None
        mixed = [
            dict(banner(port=80), product="nginx"),
            dict(banner(port=8080), product="nginx"),
            dict(banner(port=443), product="Apache httpd"),
            dict(banner(port=8443), product="nginx"),
        ]
        await publish(live, mixed)
        await until(pilot, lambda: pane.buffer.received >= 4 and not pane.buffer.inbox, "the batch")
        await until(pilot, lambda: ports_in(tail) == [8080, 8443], "the filtered lines")
        assert "filter product:nginx -port:80" in screen_text(app)
        box.value = "port:"  # a broken filter says why and keeps the one in force
        await pilot.press("slash", "enter")
        assert "filter:" in screen_text(app) and pane.filter_text == "product:nginx -port:80"


async def test_scrolling_back_keeps_the_view_and_end_follows_again(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        tail = app.query_one(Tail)
        await publish(live, [banner(port=3000 + i) for i in range(40)])
        await until(pilot, lambda: len(tail.ring) == 40, "forty lines")
        await pilot.press("up", "up")
        selected = tail.selected
        assert selected is not None and json.loads(selected.raw)["port"] == 3038
        assert selected.address in screen_text(app)  # the detail panel shows it
        top = tail.top
        await publish(live, [banner(port=4000 + i) for i in range(5)])
        await until(pilot, lambda: len(tail.ring) == 45, "five more")
        assert tail.top == top and tail.selected == selected
        await until(pilot, lambda: "5 newer" in screen_text(app), "the count of newer lines")
        await pilot.press("end")
        assert tail.following and tail.selected is None
        await until(pilot, lambda: "4004/tcp" in screen_text(app), "the live edge")
        assert pane.buffer.received == 45


async def test_save_writes_the_buffer_and_enter_opens_the_host(live, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        await open_stream(pilot)
        tail = app.query_one(Tail)
        sent = [banner(port=5000 + i) for i in range(3)]
        await publish(live, sent)
        await until(pilot, lambda: len(tail.ring) == 3, "three lines")
        await pilot.press("s")
        await until(pilot, lambda: list(tmp_path.glob("spyglass-stream-*.json.gz")), "the saved file")
        (saved,) = tmp_path.glob("spyglass-stream-*.json.gz")
        await until(pilot, lambda: len(saved_lines(saved)) == 3, "the whole file")
        rows = [json.loads(line) for line in saved_lines(saved)]
        assert [(r["ip_str"], r["port"]) for r in rows] == [(b["ip_str"], b["port"]) for b in sent]
        await pilot.press("up", "up", "enter")  # the first leaves the live edge on the newest line
        await until(pilot, lambda: bool(app.query(HostPane)) and app.query_one(HostPane).display, "the host pane")
        assert app.query_one("#host-ip", Input).value == sent[-2]["ip_str"]


async def test_the_pane_says_when_it_reconnects_and_the_gap(tmp_path):
    from tests.contract.test_stream import Restartable

    live = Restartable(tmp_path)
    try:
        app = SpyglassApp(live.backend.profile(live.key))
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_stream(pilot)
            await asyncio.to_thread(live.stop)
            await until(pilot, lambda: "reconnecting in" in screen_text(app), "the countdown")
            await asyncio.to_thread(live.restart_stopped)
            await until(pilot, lambda: "missed" in screen_text(app), "the gap", timeout=30)
            await publish(live.backend, [banner(port=6500)])
            await until(pilot, lambda: 6500 in ports_in(app.query_one(Tail)), "a banner after the restart")
            assert pane.state is not None and pane.state.status == "connected" and pane.state.gap > 0
            pane.connected_at -= GAP_SHOWN  # the gap was a while ago: it leaves the status line
            await until(pilot, lambda: "missed" not in screen_text(app), "the gap gone")
            assert "buffer 1/5,000" in screen_text(app)
    finally:
        live.stop()


async def test_when_the_backend_is_given_up_the_stream_stops_saying_it_reconnects(tmp_path):
    from tests.contract.test_stream import Restartable

    live = Restartable(tmp_path)
    try:
        app = SpyglassApp(live.backend.profile(live.key))
        async with app.run_test(size=SIZE) as pilot:
            await open_stream(pilot)
            await asyncio.to_thread(live.stop)
            await until(pilot, lambda: "reconnecting in" in screen_text(app), "the countdown")
            app._backend_event("failed", "embedded backend exited (signal 9) soon after each of 3 restarts")
            await until(pilot, lambda: "stopped: the embedded backend was given up" in screen_text(app), "stopped")
            await pilot.pause(1.5)  # the stream's own retries are over: nothing says it reconnects
            assert "reconnecting" not in screen_text(app)
    finally:
        live.stop()


async def test_the_buffer_size_bounds_the_tail(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        await open_stream(pilot)
        tail = app.query_one(Tail)
        box = app.query_one("#stream-buffer", Input)
        box.focus()
        box.value = "100"
        await pilot.press("enter")
        assert tail.capacity == 100
        await publish(live, [banner(port=7100 + i) for i in range(150)])
        await until(pilot, lambda: ports_in(tail)[-1:] == [7249], "the newest line")
        assert ports_in(tail) == list(range(7150, 7250))
        box.value = "5"
        await pilot.press("enter")
        assert tail.capacity == 100 and "buffer: between 100" in screen_text(app)


async def test_text_typed_on_the_live_list_goes_to_the_filter(live):
    """A newcomer typed on the list the filter had handed the keys to: the letters went nowhere.
    Then (issue 45) they went on the filter's last term (port:443abc): they start a new one."""
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        await open_stream(pilot)
        box = app.query_one("#stream-filter", Input)
        await pilot.press("slash", *"port:443", "enter")
        app.query_one(Tail).focus()
        await pilot.press(*"abc")
        assert box.value == "port:443 abc" and box.has_focus


async def test_esc_then_text_in_one_read_on_the_filter_adds_a_term(live):
    """Newcomer trial 11, major 1: `/`, then `Esc 8 0` in one burst: the 8 was lost and the 0
    glued onto the last term (port:22,4430). Leaving undid the box's text once the 8 was in it."""
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        await open_stream(pilot)
        box = app.query_one("#stream-filter", Input)
        await pilot.press("slash", *"port:22,443", "enter")
        await until(pilot, lambda: not box.has_focus, "the filter applied")
        await pilot.press("alt+8", "0")  # what ESC 8 0 in one read parses to
        await until(pilot, lambda: box.value == "port:22,443 80" and box.has_focus, "Esc 8 0 in the box")


async def test_esc_keeps_what_was_typed_in_the_filter_box(live):
    """Newcomer trial 13: Esc in the stream's filter dropped text not yet applied, while every other
    box keeps it. It stays, the filter in force stays too until Enter applies the box."""
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        box = app.query_one("#stream-filter", Input)
        await pilot.press("slash", *"port:22", "enter")
        await until(pilot, lambda: not box.has_focus, "the filter applied")
        await pilot.press("slash", *" product:nginx", "escape")
        await until(pilot, lambda: app.focused is app.query_one(Tail), "the list has the keys")
        assert box.value == "port:22 product:nginx" and pane.filter_text == "port:22"
        await pilot.press(*"80")  # typed on the list: a new term after what was kept
        await until(pilot, lambda: box.value == "port:22 product:nginx 80" and box.has_focus, "80 added")


async def test_esc_then_text_in_one_read_on_the_live_list_adds_a_term(live):
    """Newcomer trial 12, major 2: the list holding the keys, `Esc 4 4 3` in one burst gave
    `product:nginx 43`: the 4 went into the box before Esc's binding ran, which then left it."""
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        await open_stream(pilot)
        box = app.query_one("#stream-filter", Input)
        await pilot.press("slash", *"product:nginx", "enter")
        await until(pilot, lambda: app.focused is app.query_one(Tail), "the list has the keys")
        await pilot.press("alt+4", "4", "3")  # what ESC 4 4 3 in one read parses to
        await until(pilot, lambda: box.value == "product:nginx 443" and box.has_focus, "Esc 4 4 3 in the box")


async def test_an_empty_filter_box_clears_the_filter(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        tail = app.query_one(Tail)
        box = app.query_one("#stream-filter", Input)
        await pilot.press("slash", *"port:443", "enter")
        assert pane.filter_text == "port:443"
        await pilot.press("slash", "ctrl+u")
        assert box.value == "" and "empty query" not in screen_text(app)
        await pilot.press("enter")
        assert pane.buffer.matches is None and pane.filter_text == ""
        screen = screen_text(app)
        assert "filter port:443" not in screen and "empty query" not in screen, screen
        await publish(live, [banner(port=7700), banner(port=7701)])
        await until(pilot, lambda: ports_in(tail) == [7700, 7701], "every banner again")


async def test_a_reconnect_keeps_the_buffer_and_another_stream_clears_it(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        tail = app.query_one(Tail)
        await publish(live, [banner(port=7800 + i) for i in range(3)])
        await until(pilot, lambda: len(tail.ring) == 3, "three lines")
        await pilot.press("p")
        await publish(live, [banner(port=7810)])
        await until(pilot, lambda: len(pane.buffer.pending) == 1, "one pending")
        states: list[str] = []
        pane._on_state = lambda state: (states.append(state.status), StreamPane._on_state(pane, state))  # type: ignore[method-assign]
        app.connect()  # what the app does when the embedded backend comes back: the pane loads again
        await until(pilot, lambda: states[-1:] == ["connected"], "the stream followed again")
        assert ports_in(tail) == [7800, 7801, 7802] and len(pane.buffer.pending) == 1 and pane.buffer.received == 4
        await until(pilot, lambda: "buffer 4/5,000" in screen_text(app), "the buffer kept")  # one held by the pause
        await pilot.press("p")
        assert ports_in(tail) == [7800, 7801, 7802, 7810]
        pane.run_arg("ports 7899")  # another stream: another buffer
        await until(pilot, lambda: not tail.ring and pane.source == ("ports", "7899"), "the buffer cleared")
        await until(pilot, lambda: "buffer 0/5,000" in screen_text(app), "the status")
        assert pane.buffer.received == 0


async def test_a_bad_filter_keeps_the_one_in_force_and_the_buffer_box_restores(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        box = app.query_one("#stream-filter", Input)
        await pilot.press("slash", *"port:443", "enter")
        await pilot.press("slash", "ctrl+u", *"port:", "enter")
        assert "port: missing value" in screen_text(app) and box.value == "port:"
        await pilot.press("escape")  # what was typed stays, and what is wrong with it
        assert box.value == "port:" and pane.filter_text == "port:443"
        assert "missing value" in screen_text(app)
        await pilot.press("slash", *"22")  # mended: the error goes
        assert box.value == "port:22" and "missing value" not in screen_text(app)
        assert pane.error_source is None
        buffer = app.query_one("#stream-buffer", Input)
        buffer.focus()
        buffer.value = "2"
        await pilot.press("enter")
        assert "buffer: between 100" in screen_text(app)
        buffer.value = "250"  # true again: the error goes
        await pilot.pause()
        assert "buffer: between 100" not in screen_text(app)
        buffer.value = "abc"
        await pilot.press("enter")
        assert "buffer: between 100" in screen_text(app)
        await pilot.press("escape")
        assert buffer.value == "5000" and "buffer: between 100" not in screen_text(app)
        buffer.focus()
        buffer.value = "300"
        await pilot.press("enter")
        assert app.query_one(Tail).capacity == 300 and pane.error_source is None


async def test_a_filter_applies_to_what_is_buffered_and_s_saves_the_whole_buffer(live, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        tail = app.query_one(Tail)
        await publish(live, [banner(port=443 if i % 3 == 0 else 7900 + i) for i in range(12)])
        await until(pilot, lambda: len(tail.ring) == 12, "twelve lines")
        await pilot.press("up", "up", "up")  # on a 443 line (the 10th)
        selected = tail.selected
        assert selected is not None and json.loads(selected.raw)["port"] == 443
        await pilot.press("p")
        await publish(live, [banner(port=443), banner(port=7999)])
        await until(pilot, lambda: len(pane.buffer.pending) == 2, "two pending")
        await pilot.press("slash", *"port:443", "enter", "s")
        await until(pilot, lambda: not pane.refiltering, "the buffer filtered")
        assert ports_in(tail) == [443] * 4 and tail.selected is selected
        assert [json.loads(e.raw)["port"] for e in pane.buffer.pending] == [443]
        await until(pilot, lambda: list(tmp_path.glob("spyglass-stream-*.json.gz")), "the saved file")
        (saved,) = tmp_path.glob("spyglass-stream-*.json.gz")
        await until(pilot, lambda: len(saved_lines(saved)) == 14, "the whole file")
        saved_ports = [json.loads(line)["port"] for line in saved_lines(saved)]
        assert saved_ports == [json.loads(entry.raw)["port"] for entry in pane.buffer.kept]  # not only 443
        await pilot.press("p")
        assert ports_in(tail) == [443] * 5


async def test_a_filter_is_a_view_clearing_it_shows_the_whole_buffer_again(live):
    """Applying a filter lets nothing go: what did not match shows again when it is cleared, and
    lines that arrive under a filter are kept too (a filter used to delete what it hid)."""
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        tail = app.query_one(Tail)
        await publish(live, [banner(port=22 if i % 4 == 0 else 8000 + i) for i in range(12)])
        await until(pilot, lambda: len(tail.ring) == 12, "twelve lines")
        await pilot.press("slash", *"port:22", "enter")
        await until(pilot, lambda: not pane.refiltering and ports_in(tail) == [22] * 3, "the view")
        assert "buffer 12/5,000 (3 shown)" in screen_text(app)
        await publish(live, [banner(port=9001), banner(port=22)])
        await until(pilot, lambda: pane.buffer.received == 14 and ports_in(tail) == [22] * 4, "new lines")
        box = app.query_one("#stream-filter", Input)
        await pilot.press("slash")
        box.value = ""
        await pilot.press("enter")
        await until(pilot, lambda: not pane.refiltering and len(tail.ring) == 14, "the whole buffer")
        assert ports_in(tail)[-2:] == [9001, 22] and ports_in(tail)[0] == 22


async def test_the_status_says_paused_and_counts_read_in_the_singular(live, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        await until(pilot, lambda: "● live" in screen_text(app), "live")
        await pilot.press("p")
        status = screen_text(app)
        assert "❚❚ paused" in status and "● live" not in status
        await pilot.press("p", "w")
        await until(pilot, lambda: pane.recorder is not None, "recording")
        await publish(live, [banner(port=8100)])
        await until(pilot, lambda: pane.recorder is not None and pane.recorder.lines == 1, "one recorded")
        await pilot.press("w")
        await until(
            pilot, lambda: any(n.message.startswith("Recorded 1 banner to ") for n in app._notifications), "the notice"
        )


async def test_at_80_columns_the_boxes_fit_and_the_detail_cuts_its_first_line(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_stream(pilot)
        tail = app.query_one(Tail)
        assert "values: 22,443" in screen_text(app)
        long = dict(banner(port=8200), product="Very Long Product Name " * 4, org="Org of the long one")
        await publish(live, [long])
        await until(pilot, lambda: len(tail.ring) == 1, "the line")
        await pilot.press("up")
        await until(pilot, lambda: "Org of the long one" in screen_text(app), "the detail")
        rows = screen_text(app).splitlines()
        (title,) = [n for n, row in enumerate(rows) if "Selected banner" in row]
        first = rows[title + 1].split("││")[0]  # (the pivot list is beside it)
        assert first.rstrip(" │").endswith("…") and "8200/tcp" in first
        assert "seen" in rows[title + 2]  # the cut line does not wrap onto the next row
    async with SpyglassApp(live.profile(live.key())).run_test(size=(200, 50)) as pilot:
        await open_stream(pilot)
        await publish(live, [banner(port=8201)])
        await until(pilot, lambda: len(pilot.app.query_one(Tail).ring) == 1, "the line")
        await pilot.press("up")
        detail = pilot.app.query_one("#stream-detail")
        await until(pilot, lambda: detail.display and detail.size.height > 8, "a taller detail box")


async def test_a_stream_without_values_says_so_until_they_are_given(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        pane.run_arg("ports")
        await until(pilot, lambda: "Give the ports to follow" in screen_text(app), "the error")
        assert pane.query_one(".pane-error").has_class("shown")
        values = app.query_one("#stream-values", Input)
        values.focus()
        values.value = "8300"
        await pilot.press("enter")
        await until(pilot, lambda: pane.state is not None and pane.state.status == "connected", "the ports stream")
        await publish(live, [banner(port=8300)])
        await until(pilot, lambda: ports_in(app.query_one(Tail)) == [8300], "the banner")
        error_row = pane.query_one(".pane-error")
        assert pane.error_source is None and not error_row.has_class("shown")
        assert "Give the ports" not in app.query_one(StatusBar).note  # the new call superseded it


async def test_the_selected_banner_offers_its_values_to_pivot_on(live):
    from spyglass.tui.panes.search import SearchPane
    from spyglass.tui.widgets.pivots import PivotList

    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        await open_stream(pilot)
        tail = app.query_one(Tail)
        await publish(live, [dict(banner(port=8400), org="Pivot Org", product="nginx")])
        await until(pilot, lambda: len(tail.ring) == 1, "the line")
        await pilot.press("up")
        pivots = app.query_one("#stream-pivots", PivotList)
        await until(pilot, lambda: bool(pivots.pivots), "the pivots")
        assert {"org", "product", "port"} <= {p.filter for p in pivots.pivots}
        pivots.focus()
        pivots.highlighted = next(n for n, p in enumerate(pivots.pivots) if p.filter == "org")
        await pilot.press("enter")
        await until(pilot, lambda: app.query_one(SearchPane).display, "the search pane")
        assert app.query_one("#query", Input).value == 'org:"Pivot Org"'


async def test_after_a_reconnect_the_stream_follows_on_the_new_clients_out_of_view(live):
    app = SpyglassApp(live.profile(live.key()))
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_stream(pilot)
        await pilot.press("f2")  # the stream pane out of view, still following
        old = app.clients
        await pilot.press("ctrl+r")  # the clients are replaced (as after a backend handover)
        await until(pilot, lambda: app.clients is not None and app.clients is not old, "new clients")
        await until(pilot, lambda: pane.state is not None and pane.state.status == "connected", "the stream")
        await publish(live, [banner(port=6601)])
        await until(pilot, lambda: 6601 in ports_in(app.query_one(Tail)), "a banner after the reconnect")
        await pilot.pause()
        assert "internal error" not in screen_text(app) and not pane.error_source


async def test_a_backend_that_collects_nothing_says_so_in_the_pane(tmp_path):
    server, backend = start_backend(tmp_path)  # no --demo-rate: nothing is collected live
    backend.app.state.banners.records.set_meta("demo", "1")  # as a first run's demo data
    with server:
        app = SpyglassApp(backend.profile(backend.key()))
        async with app.run_test(size=(80, 24)) as pilot:
            await open_stream(pilot)
            await until(pilot, lambda: "Nothing has arrived" in screen_text(app), "the hint")
            assert "--demo-rate N" in screen_text(app)  # what fills it, within the 80 columns
            await publish(backend, [banner(port=6700)])
            await until(pilot, lambda: "Nothing has arrived" not in screen_text(app), "the hint gone")
    backend.store.close()


async def test_a_backend_info_without_a_numeric_demo_rate_still_streams(tmp_path):
    # another backend version may say anything there: the hint is left out, the stream followed
    server, backend = start_backend(tmp_path)
    backend.app.state.settings.demo_rate = "unknown"
    with server:
        app = SpyglassApp(backend.profile(backend.key()))
        async with app.run_test(size=SIZE) as pilot:
            pane = await open_stream(pilot)
            await publish(backend, [banner(port=6710)])
            await until(pilot, lambda: 6710 in ports_in(app.query_one(Tail)), "the banner")
            assert not pane.error_source and "Nothing has arrived" not in screen_text(app)
    backend.store.close()


async def test_a_plan_without_the_stream_says_why_and_no_empty_reason(live):
    """Newcomer trial 23: a member's pane said the 403, then `not connected:  · buffer 0/5,000`."""
    app = SpyglassApp(live.profile(live.key(plan="member")))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f7")
        await until(pilot, lambda: "enterprise" in screen_text(app), "the refusal")
        await until(pilot, lambda: "not connected" in screen_text(app), "the status line")
        text = screen_text(app)
        assert "not connected:" not in text and "not connected · buffer" in text, text
