"""Keys that come in a burst (typed faster than the screen draws, or pasted without bracketed
paste) cost each a small, fixed work: what looks at the whole box waits for the burst to end."""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from spyglass.tui.app import SpyglassApp
from spyglass.tui.keyorder import keys_to_come
from spyglass.tui.widgets import queryinput
from tests.tui.helpers import screen_text, settle
from tests.tui.test_keyorder import typed


async def test_a_burst_into_the_query_box_is_checked_once_it_ends(backend, monkeypatch):
    # The live check parsed the whole box on every key: a 76-character query took 4 s to show,
    # and 6,000 characters pasted locked the keys for minutes (each growing prefix checked).
    checked: list[str] = []
    real = queryinput.describe

    def counted(source: str, count_only: bool = False):
        checked.append(source)
        return real(source, count_only)

    monkeypatch.setattr(queryinput, "describe", counted)
    app = SpyglassApp(backend.profile(backend.key()))
    changes: list[bool] = []  # the box's changes (each one redraws it)
    monkeypatch.setattr(queryinput, "keys_to_come", lambda app: changes.append(keys_to_come(app)) or changes[-1])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = "product:nginx country:DE " * 12 + "bogus:1"
        checked.clear()
        changes.clear()
        for key in typed(text):  # in one read, as a terminal hands a burst over
            app.post_message(key)
        await settle(pilot)
        assert app.query_one("#query", Input).value == text
        assert len(checked) <= 3, len(checked)  # not one per key
        assert len(changes) <= 3, len(changes)  # the characters waiting go in together
        assert checked[-1] == text  # what shows is the check of the whole query
        assert "✗ unknown filter 'bogus'" in screen_text(app)
        checked.clear()
        await pilot.press("backspace")  # a key alone is checked at once, as before
        assert checked == [text[:-1]]
        app.post_message(events.Key("enter", "\r"))
        await settle(pilot)
        assert "Fix the query first" in screen_text(app)
