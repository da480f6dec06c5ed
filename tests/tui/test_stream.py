"""The live-tail pane against the real backend: banners the backend collects appear, pause holds
them with a pending count, the client-side filter applies as they arrive, scrolling back keeps
the view while the stream goes on, saving writes the buffer, and Enter opens the host."""

from __future__ import annotations

import asyncio
import gzip
import json
import time

import pytest
from textual.widgets import Input

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.host import HostPane
from spyglass.tui.panes.stream import StreamPane
from spyglass.tui.widgets.tail import Tail
from tests.conftest import start_backend
from tests.contract.test_stream import banner
from tests.tui.helpers import screen_text, settle

SIZE = (100, 30)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("stream-pane"))
    with server:
        yield backend
    backend.store.close()


async def until(pilot, condition, what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


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
        await until(pilot, lambda: len(pane.pending) == 4, "four pending")
        assert ports_in(tail) == [1000, 1001, 1002]
        await until(pilot, lambda: "PAUSED: 4 pending" in screen_text(app), "the pending count")
        await pilot.press("p")
        assert ports_in(tail) == [1000, 1001, 1002, 2000, 2001, 2002, 2003] and not pane.pending
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
        assert pane.matches is not None
        mixed = [
            dict(banner(port=80), product="nginx"),
            dict(banner(port=8080), product="nginx"),
            dict(banner(port=443), product="Apache httpd"),
            dict(banner(port=8443), product="nginx"),
        ]
        await publish(live, mixed)
        await until(pilot, lambda: pane.received >= 4 and not pane.inbox, "the batch")
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
        assert pane.received == 45


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
