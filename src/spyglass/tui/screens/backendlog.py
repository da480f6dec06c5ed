"""The embedded backend's log (``backend.log`` in the data dir), followed while the screen is open.

The log holds text from the wild (a banner file's lines, request paths): every line is shown
through the safe-text path. Only the last lines are kept; the file is read off the UI thread, and
only what was added since the last look.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import RichLog, Static

from spyglass.local.launcher import read_tail
from spyglass.safetext import clean

KEEP_LINES = 500
CHUNK = 256 * 1024  # more than this added between two looks: start again from the tail


class LogFollower:
    """What a log gained since the last call: its tail the first time and after a rotation."""

    def __init__(self, path: Path, keep: int = KEEP_LINES) -> None:
        self.path = path
        self.keep = keep
        self.offset: int | None = None  # just after the last complete line read
        self.inode: int | None = None

    def poll(self) -> tuple[bool, list[str]]:
        """(start again, lines): ``True`` when the lines replace what was shown."""
        try:
            stat = os.stat(self.path)
        except OSError:
            restart, self.offset = self.offset is not None, None
            return restart, []
        offset = self.offset
        restart = offset is None or stat.st_ino != self.inode or stat.st_size < offset
        start = 0 if restart or offset is None else offset
        if stat.st_size - start > CHUNK:
            start, restart = stat.st_size - CHUNK, True
        with open(self.path, "rb") as fh:
            fh.seek(start)
            data = fh.read(stat.st_size - start)
        complete = data[: data.rfind(b"\n") + 1]  # a line still being written is read next time
        self.offset, self.inode = start + len(complete), stat.st_ino
        if restart and start > 0:
            complete = complete[complete.find(b"\n") + 1 :]  # read from the middle of a line
        lines = complete.decode("utf-8", errors="replace").splitlines()
        if restart and len(lines) < self.keep:  # just rotated: the older file holds the rest
            lines = read_tail(self.path.with_name(self.path.name + ".1"), self.keep - len(lines)) + lines
        return restart, lines[-self.keep :]


class BackendLogScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="backendlog.close")]  # Screen.action_dismiss
    DEFAULT_CSS = """
    BackendLogScreen { align: center middle; }
    BackendLogScreen > Vertical { width: 95%; height: 90%; border: round $primary; background: $surface; }
    BackendLogScreen RichLog { height: 1fr; }
    BackendLogScreen .hint { color: $text-muted; height: auto; }
    """

    def __init__(self, path: Path | None, interval: float = 1.0) -> None:
        """``path``: the embedded backend's log, or None when the profile has a server of its own."""
        super().__init__()
        self.follower = LogFollower(path) if path is not None else None
        self.interval = interval
        self._reading = False

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Backend log"
            # wrapped: a long line (where a backend serves already) was cut at 80 columns; to the
            # room there is (min_width's default, 78, cut the last columns of each line at 80x24)
            yield RichLog(
                max_lines=KEEP_LINES, auto_scroll=True, wrap=True, markup=False, highlight=False, min_width=20
            )
            if self.follower is None:
                hint = "This profile connects to a server of its own: there is no embedded backend log."
            else:
                hint = f"{self.follower.path} · the last {KEEP_LINES} lines, followed · scroll up to pause · Esc closes"
            yield Static(clean(hint, one_line=True), classes="hint", markup=False)

    async def on_mount(self) -> None:
        if self.follower is not None:
            await self.read_more()
            self.set_interval(self.interval, self.read_more)

    async def read_more(self) -> None:
        if self._reading or self.follower is None:
            return  # a slow disk: the previous look is still reading
        self._reading = True
        try:
            restart, lines = await asyncio.to_thread(self.follower.poll)
        except OSError as exc:
            restart, lines = True, [f"cannot read the log: {exc}"]
        finally:
            self._reading = False
        if not self.is_attached:
            return  # closed while reading
        log = self.query_one(RichLog)
        if restart:
            log.clear()
        at_end = log.is_vertical_scroll_end  # scrolled up: read where it is, not followed (the hint says so)
        for line in lines:
            log.write(Text(clean(line, one_line=True, max_chars=2000)), scroll_end=at_end)
