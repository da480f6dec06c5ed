"""A live tail: the newest lines of a bounded ring buffer, drawn with the Line API.

Only the visible lines are rendered, and new lines never repaint at once: they mark the view
dirty and a timer repaints at a capped rate, lower on a bigger screen, so that the bytes sent
to the terminal stay within a budget however fast lines arrive (over SSH the screen, not the
data, is the bottleneck). Keys repaint at once: the person at the keyboard never waits.

Following the live edge, a repaint draws only the new lines: below the last one while the view
fills, else after scrolling the terminal's rows up (see tui/terminalscroll.py). That costs a thin
link about what ``spyglass stream`` prints for the same lines, not the whole view per batch.

Scrolling up leaves the live edge: the view stays on the same lines while new ones arrive below
(and old ones fall off the top of the ring); End goes back to following.
"""

from __future__ import annotations

import time
from collections import deque

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from spyglass.tui.streambuffer import TailEntry
from spyglass.tui.terminalscroll import scroll_up, settled

BYTES_PER_SECOND = 40_000  # the repaint budget: under the 50 KB/s a slow link is given
BYTES_PER_CELL = 2.0  # measured: a repainted cell costs less on the wire (text, cursor moves, styles)
MAX_FPS = 5.0
MIN_FPS = 1.0
PATIENCE = 1.0  # seconds a scroll may wait for the screen's other repaints before all is drawn again


class Tail(Widget, can_focus=True):
    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "move(-20)", "Page up", show=False),
        Binding("pagedown", "move(20)", "Page down", show=False),
        Binding("home,g", "oldest", "Oldest", show=False),
        Binding("end,G", "live", "Live", id="tail.live"),
        Binding("enter", "open", "Open host", id="tail.open"),
    ]
    DEFAULT_CSS = """
    Tail { height: 1fr; }
    """

    class Selected(Message):
        """The cursor moved to ``entry`` (None: following the live edge, nothing selected)."""

        def __init__(self, entry: TailEntry | None) -> None:
            super().__init__()
            self.entry = entry

    class Opened(Message):
        def __init__(self, entry: TailEntry) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, capacity: int = 5000, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.ring: deque[TailEntry] = deque(maxlen=capacity)
        self.added = 0  # entries ever added: entry n (0-based) is at ring[n - first]
        self.following = True
        self.cursor: int | None = None  # the selected entry's number, when not following
        self.top = 0  # the number of the first visible entry, when not following
        self.dirty = False
        self.drawn = 0  # following: the view on the terminal ends before entry ``drawn`` (render_line draws it)
        self.drawn_top = 0  # and starts at this entry (at the last repaint)
        self.repaints = 0
        self._painted = 0.0
        self._dirty_since = 0.0
        self.empty = ""  # what shows while no line has come (why none may come)

    # -- the buffer ---------------------------------------------------------------------------
    @property
    def capacity(self) -> int:
        return self.ring.maxlen or 0

    @property
    def first(self) -> int:
        return self.added - len(self.ring)

    def resize_ring(self, capacity: int) -> None:
        self.ring = deque(self.ring, maxlen=capacity)
        self._clamp()
        self._repaint()

    def add(self, entries: list[TailEntry]) -> None:
        """New lines (from the UI thread); drawn at the next capped repaint."""
        self.ring.extend(entries)
        self.added += len(entries)
        if not self.following:
            self._clamp()
        if not self.dirty:
            self.dirty, self._dirty_since = True, time.monotonic()

    def show(self, entries: list[TailEntry]) -> None:
        """Show these entries instead (a filter applied or cleared). The selected line stays
        selected, on the same row, if still shown; else the view goes back to the live edge."""
        selected, row = self.selected, (self.cursor or 0) - self.top
        self.ring = deque(entries, maxlen=self.capacity)
        self.added = len(self.ring)
        number = next((n for n, entry in enumerate(self.ring) if entry is selected), None)
        if number is None:
            self.action_live()
            return
        self.cursor = number
        self.top = max(0, number - row)
        self._moved()

    def drop_older(self, number: int) -> None:
        """Let go of the entries older than the buffer keeps (numbered below ``number``)."""
        while self.ring and self.ring[0].number < number:
            self.ring.popleft()
        if not self.following:
            self._clamp()

    def clear(self) -> None:
        self.ring.clear()
        self.added = 0
        self.action_live()

    def entry(self, number: int | None) -> TailEntry | None:
        if number is None or not self.first <= number < self.added:
            return None
        return self.ring[number - self.first]

    @property
    def selected(self) -> TailEntry | None:
        return None if self.following else self.entry(self.cursor)

    @property
    def below(self) -> int:
        """Lines that arrived below the view while scrolled back."""
        if self.following:
            return 0
        return max(0, self.added - (self._view_top() + self.size.height))

    def _clamp(self) -> None:
        first = self.first
        if self.cursor is not None and self.cursor < first:
            self.cursor = first if self.ring else None
        self.top = max(self.top, first)

    # -- drawing ------------------------------------------------------------------------------
    def fps(self) -> float:
        """Repaints per second this size may have within the byte budget."""
        cells = max(1, self.size.width * self.size.height)
        return max(MIN_FPS, min(MAX_FPS, BYTES_PER_SECOND / (cells * BYTES_PER_CELL)))

    def on_mount(self) -> None:
        self.set_interval(0.1, self._tick)

    def _tick(self) -> None:
        now = time.monotonic()
        if not self.dirty or now - self._painted < 1 / self.fps():
            return
        if self.following:
            if not settled(self) and now - self._dirty_since < PATIENCE:
                return  # another widget's repaint is on its way out: scroll after it, at the next tick
            if self._draw_new_lines():
                self.dirty, self._painted = False, now
                self.repaints += 1
                return
        self._repaint(now)

    def _draw_new_lines(self) -> bool:
        """Draw the lines added since the last repaint, and only those (False: they cannot be)."""
        height, old_top, new_top = self.size.height, self.drawn_top, self._top_at(self.added)
        shift, start = new_top - old_top, self.drawn - new_top  # start: the first new line's row
        if not self.drawn or old_top != self._top_at(self.drawn) or start < 0 or shift >= height:
            return False  # nothing drawn yet (the empty view's text), lines dropped in view, all rows change
        drawn, self.drawn, self.drawn_top = self.drawn, self.added, new_top  # render_line draws this view now
        if not shift:  # the view still fills: the new lines go below the others
            self.refresh(Region(0, start, self.size.width, min(height, self.added - new_top) - start))
            return True
        if scroll_up(self, shift, height - min(start, height - shift)):
            return True
        self.drawn, self.drawn_top = drawn, old_top
        return False

    def _repaint(self, now: float | None = None) -> None:
        self.dirty = False
        self.drawn, self.drawn_top = self.added, self._top_at(self.added)
        self._painted = now or time.monotonic()
        self.repaints += 1
        self.refresh()

    def _top_at(self, end: int) -> int:
        return max(self.first, end - self.size.height)

    def _view_top(self) -> int:
        return self._top_at(self.drawn) if self.following else self.top

    def on_resize(self) -> None:
        """Keep the selected line in view when the view changes height (the detail panel opens)."""
        if not self.following and self.cursor is not None:
            height = max(1, self.size.height)
            self.top = min(max(self.top, self.cursor - height + 1), self.cursor)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        number = self._view_top() + y
        entry = self.entry(number) if number < self.drawn or not self.following else None
        if entry is None:
            return self._empty_line(y, width) if not self.ring else Strip.blank(width)
        style = self.rich_style
        if not self.following and number == self.cursor:
            style += Style(reverse=True)
        line = entry.line
        if width > 1 and cell_len(line) > width:  # cut where the box ends, and said so, as tables do
            line = set_cell_size(line, width - 1) + "…"
        return Strip([Segment(line, style)]).crop_extend(0, width, style)

    def _empty_line(self, y: int, width: int) -> Strip:
        import textwrap

        lines = textwrap.wrap(self.empty, max(10, width - 1))
        text = lines[y] if y < len(lines) else ""
        style = self.rich_style + Style(italic=True)
        return Strip([Segment(text, style)]).crop_extend(0, width, self.rich_style)

    # -- keys ---------------------------------------------------------------------------------
    def action_move(self, delta: int) -> None:
        if not self.ring:
            return
        height = max(1, self.size.height)
        if self.following:  # the first move leaves the live edge on its newest line
            self.following = False
            self.top = max(self.first, self.added - height)
            self.cursor = self.added - 1
            self._moved()
            return
        assert self.cursor is not None
        self.cursor = min(self.added - 1, max(self.first, self.cursor + delta))
        if self.cursor < self.top:
            self.top = self.cursor
        elif self.cursor >= self.top + height:
            self.top = self.cursor - height + 1
        self._moved()

    def action_oldest(self) -> None:
        if not self.ring:
            return
        self.following = False
        self.cursor = self.top = self.first
        self._moved()

    def action_live(self) -> None:
        self.following = True
        self.cursor = None
        self._moved()

    def action_open(self) -> None:
        entry = self.selected or (self.ring[-1] if self.ring else None)
        if entry is not None:
            self.post_message(self.Opened(entry))

    def _moved(self) -> None:
        self.post_message(self.Selected(self.selected))
        self._repaint()
