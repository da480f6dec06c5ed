"""Keys that come in a burst (typed faster than the screen draws, or pasted without bracketed
paste) cost each a small, fixed work: what looks at the whole box waits for the burst to end."""

from __future__ import annotations

import asyncio

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


async def test_a_pane_whose_messages_never_stop_holds_keys_back_for_a_while_only():
    # A key's turn waits until no message waits anywhere on the screen; a live list never gets
    # there. Its turns end after a second of the app's own CPU time, so the keys still arrive.
    from time import monotonic, process_time

    from textual.app import ComposeResult
    from textual.message import Message
    from textual.widgets import Static

    from spyglass.tui.keyorder import KeysInTurn, install

    class Tick(Message):
        pass

    class Live(Static):
        def on_mount(self) -> None:
            self.post_message(Tick())

        async def on_tick(self) -> None:
            spin = process_time() + 0.002  # what a row costs: the CPU the cap counts
            while process_time() < spin:
                pass
            await asyncio.sleep(0.001)  # (its queue is never empty: a pump takes the next without a pause)
            self.post_message(Tick())

    class Busy(KeysInTurn):
        def compose(self) -> ComposeResult:
            yield Input(id="box")
            yield Live()

    install()
    app = Busy()
    async with app.run_test(size=(80, 24)) as pilot:
        box = app.query_one("#box", Input)
        box.focus()
        await pilot.pause()
        for key in [*typed("ab"), events.Key("left", None), *typed("c")]:
            app.post_message(key)
        give_up = monotonic() + 120  # a loaded machine's CPU second may take this long
        while box.value != "acb" and monotonic() < give_up:
            await pilot.pause(0.05)
        assert box.value == "acb"
