"""Keys that arrive in one read keep their order in a text box (issue 20, point 2).

The app runs in a child process on a real pty, so the bytes go through Textual's own driver,
parser and message queues exactly as they do over SSH when several keys come in one packet.
"""

from __future__ import annotations

import asyncio
import os
import pty
import signal
import sys
import time
from pathlib import Path

import pytest
from textual import events
from textual.keys import _character_to_key
from textual.widgets import ContentSwitcher, Input

from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.search import SearchPane
from tests.tui.helpers import settle

pytestmark = pytest.mark.external  # the dashboard in a pty (most tests)

CHILD = """
import sys
from pathlib import Path
from textual.app import App
from textual.widgets import Input
from spyglass.tui import keyorder

out = Path(sys.argv[1])

class Box(App):
    BINDINGS = [("f5", "dump")]
    def compose(self):
        yield Input()
    def on_mount(self):
        keyorder.install()
        self.query_one(Input).focus()
        self.call_after_refresh(lambda: out.with_suffix(".ready").touch())
    def action_dump(self):
        box = self.query_one(Input)
        out.with_suffix(".part").write_text(f"{box.value}|{box.cursor_position}")  # whole or not at all:
        out.with_suffix(".part").rename(out)  # the test reads it as soon as it exists
        self.exit()

Box().run()
"""


def type_into_box(tmp_path: Path, *writes: bytes, child: str = CHILD) -> str:
    """Start the app on a pty, write each chunk in one write(), then F5; return `value|cursor`."""
    out = tmp_path / "box.txt"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the app on the pty
        os.execv(sys.executable, [sys.executable, "-c", child, str(out)])
    deadline = time.monotonic() + 90  # a busy machine is slow, never this slow
    try:
        while not out.with_suffix(".ready").exists():
            assert time.monotonic() < deadline, "the app did not start"
            drain(fd)
        for chunk in (*writes, b"\x1b[15~"):  # F5 in its own write, after the keys under test
            os.write(fd, chunk)
            while drain(fd, 0.2):  # the app repaints after each key; let it finish this read
                pass
        while not out.exists():  # F5 writes the box and exits (a quiet second is no answer)
            assert time.monotonic() < deadline, "the app did not answer F5"
            drain(fd)
        return out.read_text()
    finally:
        os.close(fd)
        stop(pid)


def stop(pid: int) -> None:
    """Reap the app; one that has not exited within seconds is killed (it would go on running,
    on a closed terminal, through the rest of the suite)."""
    for _ in range(50):
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def drain(fd: int, wait: float = 1.0) -> int:
    """Read what the app wrote to the terminal (it must not block on a full pty); bytes read."""
    import select

    readable, _, _ = select.select([fd], [], [], wait)
    if not readable:
        return 0
    try:
        return len(os.read(fd, 65536))
    except OSError:
        return 0


@pytest.mark.parametrize(
    ("writes", "expected"),
    [
        ((b"hello", b"\x15xyz"), "xyz|3"),  # ctrl+u then text: the text stays
        ((b"hello", b"\x01P"), "Phello|1"),  # ctrl+a then P: P at the start
        ((b"ab\x1b[Dc",), "acb|2"),  # ab, Left, c
        ((b"abc\x7fd",), "abd|3"),  # backspace between letters
        # Esc j then Left in one read: alt+j (nothing here binds it), then Left; it typed ^j (trial 16)
        ((b"ab", b"\x1bj\x1b[D"), "ab|1"),
    ],
)
def test_keys_in_one_read_keep_their_order(tmp_path, writes, expected):
    assert type_into_box(tmp_path, *writes) == expected


def test_esc_then_a_digit_in_one_read_types_nothing(tmp_path):
    # A terminal sends alt+1 as ESC 1; Textual's table made it the macOS option+1 character "¡".
    assert type_into_box(tmp_path, b"ab", b"\x1b1") == "ab|2"


async def test_esc_then_digits_in_one_read_leave_the_box_and_add_the_term(backend):
    """Esc 4 4 3 typed in one burst is alt+4, 4, 3 to a terminal: alt+4 switched to the fourth
    pane and 43 was typed there (newcomer trial 3). As typed slowly: Esc leaves the box, and a
    port typed on the results is a new term of the query."""
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        box = app.query_one("#pane-search").query_one(Input)
        assert app.focused is box
        await pilot.press(*"port:22")
        await pilot.press("alt+4", "4", "3")  # what ESC 4 4 3 in one read parses to
        await settle(pilot)
        assert app.query_one("#panes", ContentSwitcher).current == "pane-search"
        assert box.value == "port:22 443"


async def test_esc_then_digits_in_one_read_from_a_list_add_the_term_whole(backend):
    """Newcomer trial 12, major 1: with the results already holding the keys, `Esc 4 4 3` in one
    burst gave `port:22 4 43`: the 4 reached the table before Esc's binding ran (it runs once the
    key has bubbled up), went into the box, and Esc then took the keys back to the table."""
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        box = app.query_one("#pane-search").query_one(Input)
        await pilot.press(*"port:22", "enter", "escape")
        await settle(pilot)
        assert app.focused is app.query_one("#results")
        await pilot.press("alt+4", "4", "3")  # what ESC 4 4 3 in one read parses to
        await settle(pilot)
        assert box.value == "port:22 443" and app.focused is box


TWO_BOXES = """
import sys
from pathlib import Path
from textual.app import App
from textual.widgets import Button, Input
from spyglass.tui import keyorder

out = Path(sys.argv[1])

class Boxes(keyorder.EscThenLetter, App):
    BINDINGS = [("f5", "dump"), ("escape", "leave"), ("p", "mark")]
    marks = ""
    def compose(self):
        yield Input(id="a")
        yield Input(id="b")
        yield Button("home", id="home")
    def on_mount(self):
        keyorder.install()
        self.query_one("#a").focus()
        self.call_after_refresh(lambda: out.with_suffix(".ready").touch())
    def action_leave(self):  # as the panes leave a box: at once
        self.screen.set_focus(self.query_one("#home"))
    def action_mark(self):
        self.marks += "p"
    def on_button_pressed(self):
        self.marks += "e"
    def action_dump(self):
        a, b = self.query_one("#a").value, self.query_one("#b").value
        out.write_text(f"{a}|{b}|{self.marks}")
        self.exit()

Boxes().run()
"""


@pytest.mark.parametrize(
    ("writes", "expected"),
    [
        ((b"abc\txyz",), "abc|xyz|"),  # Tab in the middle of a read: the rest goes to the next box
        ((b"ab\x1bp",), "ab||p"),  # Esc then p in one read (alt+p): leaves the box, then p acts
        ((b"ab", b"\x1bp"), "ab||p"),
        # Esc then Enter, Space or Backspace in one read: Textual's table read them as Enter, Space
        # and ctrl+w, the Esc lost (newcomer trial 4: Esc Enter on a query ran nothing)
        ((b"ab", b"\x1b\r"), "ab||e"),
        ((b"ab", b"\x1b x"), "ab||"),  # (a space on a button presses nothing)
        ((b"ab", b"\x1b\x7f"), "ab||"),
        ((b"ab", b"\x1b,"), "ab||"),  # Esc then a punctuation mark: `,` was typed into the box (trial 6)
        ((b"ab", b"\x1b?"), "ab||"),
        ((b"ab", b"\x1bf"), "ab||"),  # (Textual's table made it a word's move)
    ],
)
def test_keys_that_move_the_focus_in_one_read_keep_their_order(tmp_path, writes, expected):
    assert type_into_box(tmp_path, *writes, child=TWO_BOXES) == expected


def typed(text: str) -> list[events.Key]:
    """``text`` as the keys a terminal's read of it parses to."""
    return [events.Key(_character_to_key(char), char) for char in text]


async def test_keys_typed_while_the_dashboard_starts_reach_the_search_box(backend):
    # A newcomer types at once: the keys come before the first pane is mounted and focused (the
    # screen, focused on nothing, dropped them: `-port:22 nginx` became `rt:22 nginx`).
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        assert not app.query("#pane-search")  # not mounted yet: what the keys meet
        for key in [*typed("-port:22 nginx"), events.Key("enter", "\r")]:
            app.post_message(key)
        await settle(pilot)
        search = app.query_one("#pane-search", SearchPane)
        box = search.query_one("#query", Input)
        assert box.value == "-port:22 nginx"
        assert box.cursor_position == len("-port:22 nginx")
        assert app.focused is box
        assert search.current_query == "-port:22 nginx"  # the early Enter ran it, once connected


async def test_keys_typed_after_an_early_enter_act_on_its_results(tmp_path):
    """Newcomer trial 24 (3 of 3): `QUERY Enter Esc g j Enter` typed as the dashboard started ran
    the query, but the keys after it had acted on the empty list before it ran (the connection
    not open yet): no host opened. They wait for what the Enter waits for, and then act."""
    from spyglass.datagen import generate
    from spyglass.testing.backend import backend_with

    with backend_with(tmp_path, generate(300, seed=2)) as backend:
        await early_enter_then_keys(backend)


async def early_enter_then_keys(backend) -> None:
    from spyglass.tui.panes.host import HostPane

    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(100, 30)) as pilot:
        keys = [*typed("net:198.18.0.0/15"), events.Key("enter", "\r"), events.Key("escape", "\x1b")]
        for key in [*keys, *typed("gj"), events.Key("enter", "\r")]:
            app.post_message(key)
        await settle(pilot)
        for _ in range(100):  # the host opens once its lookup is through
            if isinstance(app.current_pane(), HostPane) and app.query_one(HostPane).record is not None:
                break
            await pilot.pause(0.1)
        assert isinstance(app.current_pane(), HostPane), app.current_pane()  # (was: Search, on row 1)
        second = app.query_one(SearchPane).results.items[1]
        record = app.query_one(HostPane).record
        assert record is not None and record.ip_str == second[0], (record, second)  # (address, port, ...)


async def test_keys_waiting_their_turn_when_the_app_quits_stop_quietly(backend):
    # Esc then q, and keys after them: the turns went on once the screens were gone and raised
    # ScreenStackError in a task nobody awaited (a traceback on the terminal after quitting).
    app = SpyglassApp(backend.profile(backend.key()))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in [events.Key("escape", "\x1b"), *typed("qab")]:
            app.post_message(key)
        await pilot.pause()
    assert not app._screen_stack
    app._keys_waiting.extend(typed("xy"))
    await asyncio.wait_for(app._take_turns(), 5)  # returns, raises nothing
    assert not app._keys_waiting


TYPED_AHEAD = """
import sys
from pathlib import Path
from spyglass.config import Profile
import spyglass.tui.app
from spyglass.tui.app import SpyglassApp

url, key, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])

class Watched(SpyglassApp):
    CSS_PATH = Path(spyglass.tui.app.__file__).with_name("app.tcss")  # (this class has no file)
    waited = 0
    def on_mount(self):
        self.set_interval(0.1, self.report)
    def report(self):
        search = self.query("#pane-search")
        if self.clients is None or not search:
            return
        pane = search.first()
        if pane.query_one('#query').value:
            self.waited += 1  # the typed text is in: its Enter came with it
        # ran, or 20 s after the text arrived without running it (a loaded machine is slow)
        if pane.current_query or self.waited > 200:
            # whole or not at all: the test reads it as soon as it exists
            out.with_suffix(".part").write_text(f"{pane.query_one('#query').value}|{pane.current_query}")
            out.with_suffix(".part").rename(out)
            self.exit()

Watched(Profile(name="t", url=url, key=key, rate=None)).run()
"""


def test_enter_typed_before_the_terminal_is_raw_runs_the_query(backend, tmp_path):
    # Keys typed before Textual sets raw mode go through the tty's line discipline: ICRNL makes
    # Enter a newline, which Textual reads as ctrl+j. The box had the text; nothing ran.
    out = tmp_path / "typed.txt"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the dashboard on a tty still in cooked mode
        os.execv(sys.executable, [sys.executable, "-c", TYPED_AHEAD, backend.url, backend.key(), str(out)])
    try:
        os.write(fd, b"-port:22 nginx\r")  # at once: the child has not even started Python
        deadline = time.monotonic() + 90
        while not out.exists():
            assert time.monotonic() < deadline, "the dashboard did not answer"
            drain(fd)
        assert out.read_text() == "-port:22 nginx|-port:22 nginx"
    finally:
        os.close(fd)
        stop(pid)
