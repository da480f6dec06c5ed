"""Pastes as a user makes them (newcomer trial 28): in turn with the keys typed before them, every
line of them kept in a one-line box, and into the pane's box when a list has the keys."""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.search import SearchPane
from tests.tui.helpers import one_read, settle


async def test_a_paste_after_keys_in_one_read_takes_its_turn_after_them(backend):
    """F2 ctrl+u, then a paste: the paste went in first and ctrl+u emptied it (4 of 4)."""
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        box = app.query_one("#query", Input)
        box.value = "old words"
        await pilot.press("f3")
        await settle(pilot)
        one_read(app, "f2", "ctrl+u")
        app.post_message(events.Paste("port:8080"))
        await settle(pilot)
        assert box.value == "port:8080"


async def test_every_line_of_a_paste_stays_in_a_one_line_box(backend):
    app = SpyglassApp(backend.profile(backend.key()), pane="dns")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        box = app.focused
        assert isinstance(box, Input)
        app.post_message(events.Paste("www.example.test\nmail.example.test\r\n\nlocalhost\n"))
        await settle(pilot)
        assert box.value == "www.example.test mail.example.test localhost"


async def test_a_paste_while_the_results_have_the_keys_goes_into_the_query(backend):
    app = SpyglassApp(backend.profile(backend.key()), pane="search", arg="port:22")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.focused is app.query_one(SearchPane).results
        app.post_message(events.Paste("country:DE\n"))
        await settle(pilot)
        assert app.query_one("#query", Input).value == "port:22 country:DE"
        assert app.focused is app.query_one("#query", Input)
