"""The embedded backend's log stays bounded (rotated, one older file kept), and the log screen shows its
tail inert, follows what is added, starts again after a rotation, and closes on Esc."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from textual.app import App, ComposeResult
from textual.widgets import RichLog, Static

from spyglass.local.launcher import EmbeddedBackend, read_tail
from spyglass.tui.screens.backendlog import KEEP_LINES, BackendLogScreen, LogFollower

HOSTILE = "GET /\x1b]52;c;cm0gLXJmIH4=\x07 [@click=app.quit]quit[/] [bold]x\x9b31m"


def test_read_tail_returns_the_last_lines_only(tmp_path):
    path = tmp_path / "backend.log"
    path.write_text("".join(f"line {n}\n" for n in range(10_000)))
    assert read_tail(path, 3) == ["line 9997", "line 9998", "line 9999"]
    assert read_tail(path, 3, chunk=30) == ["line 9997", "line 9998", "line 9999"]  # first, cut line dropped
    assert read_tail(tmp_path / "missing.log", 3) == []


@pytest.mark.external
def test_the_log_is_rotated_under_a_running_writer(tmp_path):
    """A running backend appends to the log: after a rotation its next line starts the new file
    (append mode: no gap of NUL bytes), and the older lines are in backend.log.1."""
    backend = EmbeddedBackend(tmp_path)
    with open(backend.log_path, "ab") as log:  # as the launcher hands the log to the backend
        echo = subprocess.Popen(
            [sys.executable, "-u", "-c", "import sys\nfor line in sys.stdin: print(line, end='')"],
            stdin=subprocess.PIPE,
            stdout=log,
            text=True,
        )
    backend.process = echo
    try:

        def say(text: str) -> None:
            echo.stdin.write(text + "\n")
            echo.stdin.flush()
            for _ in range(2000):  # bounded wait until the writer wrote it
                if backend.log_path.read_text().endswith(text + "\n"):
                    return
                time.sleep(0.005)
            raise AssertionError(f"the writer did not write {text!r}")

        for n in range(50):
            say(f"old {n:03} " + "x" * 100)
        size = backend.log_path.stat().st_size
        backend.rotate_log(limit=size * 2)
        assert not backend.old_log_path.exists()  # under the limit: nothing to do
        backend.rotate_log(limit=size // 2)
        assert backend.old_log_path.read_text().count("old ") == 50
        say("new line")
        assert backend.log_path.read_bytes() == b"new line\n"
        assert backend.log_tail(3)[-1] == "new line" and backend.log_tail(3)[0].startswith("old 048")
    finally:
        echo.stdin.close()
        echo.wait()


def test_a_stopped_backend_log_is_rotated_by_moving_it(tmp_path):
    backend = EmbeddedBackend(tmp_path)
    backend.log_path.write_text("a" * 100 + "\n")
    backend.old_log_path.write_text("older\n")
    backend.rotate_log(limit=10)
    assert not backend.log_path.exists() and backend.old_log_path.read_text().startswith("aaa")


def test_the_follower_reads_only_complete_new_lines(tmp_path):
    path = tmp_path / "backend.log"
    path.write_text("one\ntwo\nthr")
    follower = LogFollower(path, keep=10)
    assert follower.poll() == (True, ["one", "two"])
    assert follower.poll() == (False, [])
    with open(path, "a") as fh:
        fh.write("ee\nfour\n")
    assert follower.poll() == (False, ["three", "four"])
    path.with_name("backend.log.1").write_text(path.read_text())
    path.write_text("five\n")  # rotated
    assert follower.poll() == (True, ["one", "two", "three", "four", "five"])


class LogApp(App[None]):
    def __init__(self, screen: BackendLogScreen) -> None:
        super().__init__()
        self.log_screen = screen

    def compose(self) -> ComposeResult:
        yield Static("main")

    def on_mount(self) -> None:
        self.push_screen(self.log_screen)


def shown(log: RichLog) -> list[str]:
    """The log's lines as drawn (a long one wrapped over several)."""
    return [strip.text.rstrip() for strip in log.lines]


async def wait_until(pilot, condition, rounds: int = 400) -> None:
    for _ in range(rounds):  # bounded: the screen looks once a second (0.05 s here)
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("the log screen did not catch up")


async def test_the_log_screen_shows_the_tail_inert_and_follows(tmp_path):
    path = tmp_path / "backend.log"
    path.write_text("".join(f"start {n}\n" for n in range(KEEP_LINES + 200)))
    app = LogApp(BackendLogScreen(path, interval=0.05))
    async with app.run_test(size=(100, 30)) as pilot:
        log = app.screen.query_one(RichLog)
        await wait_until(pilot, lambda: shown(log))
        assert len(shown(log)) == KEEP_LINES
        assert shown(log)[0] == "start 200" and shown(log)[-1] == f"start {KEEP_LINES + 199}"

        with open(path, "a") as fh:
            fh.write(HOSTILE + "\nlast\n")
        await wait_until(pilot, lambda: shown(log)[-1] == "last")
        hostile = shown(log)[-2]
        assert "\x1b" not in hostile and "\x07" not in hostile and "\x9b" not in hostile
        assert "␛]52;c;cm0gLXJmIH4=␇" in hostile and "[@click=app.quit]quit[/] [bold]x" in hostile
        assert len(shown(log)) == KEEP_LINES  # bounded while it follows

        path.with_name("backend.log.1").write_text(path.read_text())
        path.write_text("after rotation\n")
        await wait_until(pilot, lambda: shown(log)[-1] == "after rotation")
        assert shown(log)[-2] == "last"  # the older file's tail comes first

        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, BackendLogScreen)


async def test_without_an_embedded_backend_the_screen_says_so():
    app = LogApp(BackendLogScreen(None))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        hint = str(app.screen.query_one(".hint", Static).render())
        assert "no embedded backend log" in hint
        assert not shown(app.screen.query_one(RichLog))


@pytest.mark.parametrize("width", [80, 60])
async def test_a_long_line_wraps_rather_than_being_cut(tmp_path, width):
    """Newcomer trials 13 and 14, minor: at 80x24 `... is served already, by the backend at URL`
    ended at the screen's edge; trial 19: wrapped at 78 columns where fewer were shown, each line
    lost its last ones (`is s` / `already`)."""
    path = tmp_path / "backend.log"
    line = "spyglass: serve: " + "/very/long/data/dir" * 6 + " is served already, by the backend at http://x"
    path.write_text(line + "\n")
    app = LogApp(BackendLogScreen(path, interval=0.05))
    async with app.run_test(size=(width, 24)) as pilot:
        log = app.screen.query_one(RichLog)
        await wait_until(pilot, lambda: shown(log))
        assert len(shown(log)) > 1 and "".join(shown(log)).replace(" ", "") == line.replace(" ", "")
        room = log.scrollable_content_region.width  # every wrapped line within what is shown
        assert all(len(text) <= room for text in shown(log)), (room, shown(log))


async def test_a_log_scrolled_up_stays_where_it_is_read_as_lines_come(tmp_path):
    """The hint says scrolling up pauses the follow: RichLog scrolls to the end on every write."""
    path = tmp_path / "backend.log"
    path.write_text("".join(f"line {n}\n" for n in range(200)))
    app = LogApp(BackendLogScreen(path, interval=0.05))
    async with app.run_test(size=(100, 30)) as pilot:
        log = app.screen.query_one(RichLog)
        await wait_until(pilot, lambda: len(shown(log)) == 200 and log.is_vertical_scroll_end)
        log.scroll_to(y=10, animate=False, immediate=True)
        with open(path, "a") as fh:
            fh.write("one more\n")
        await wait_until(pilot, lambda: shown(log)[-1] == "one more")
        refreshed: list[bool] = []  # after the scroll a write would ask for (after the next refresh)
        log.call_after_refresh(lambda: log.call_after_refresh(refreshed.append, True))
        await wait_until(pilot, lambda: refreshed)
        assert log.scroll_y == 10
        log.scroll_end(animate=False, immediate=True)  # back at the end: followed again
        with open(path, "a") as fh:
            fh.write("and another\n")
        await wait_until(pilot, lambda: shown(log)[-1] == "and another" and log.is_vertical_scroll_end)
