"""Status lines that repaint only the cells that changed.

A status line shown again every second (a counter, a rate) changes in a few cells; Textual would
rewrite all of the widget, trailing blanks included, which over a thin link costs more than the
live tail beside it. Each line is cut at the width (with "…"), never wrapped.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget


def changed_span(old: Strip, new: Strip) -> tuple[int, int] | None:
    """The first and last cell (inclusive) where two strips of one width differ; None if alike.
    Text with wide characters counts as changed throughout (its cells are not its characters)."""
    if old == new:
        return None
    cells = []
    for strip in (old, new):
        text = "".join(segment.text for segment in strip)
        if cell_len(text) != len(text):
            return 0, max(old.cell_length, new.cell_length) - 1
        cells.append([(char, segment.style) for segment in strip for char in segment.text])
    was, now = cells
    if len(was) != len(now):
        return 0, max(len(was), len(now)) - 1
    differ = [x for x, (a, b) in enumerate(zip(was, now, strict=True)) if a != b]
    return (differ[0], differ[-1]) if differ else None


class StatusLines(Widget):
    DEFAULT_CSS = """
    StatusLines { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = Text()
        self.strips: list[Strip] = []  # as drawn (what the next update is compared with)

    def update(self, text: Text) -> None:
        """Show ``text``: the cells that differ from what is shown are drawn again."""
        self.text = text
        old, self.strips = self.strips, [self._strip(line) for line in self._lines()]
        if len(old) != len(self.strips):  # (its height may follow)
            self.refresh(layout=True)
            return
        for y, (before, after) in enumerate(zip(old, self.strips, strict=True)):
            if span := changed_span(before, after):
                self.refresh(Region(span[0], y, span[1] - span[0] + 1, 1))

    def _lines(self) -> list[Text]:
        return list(self.text.split("\n", allow_blank=True))

    def _strip(self, line: Text) -> Strip:
        width, style = self.size.width, self.rich_style
        line = line.copy()
        line.truncate(width, overflow="ellipsis")
        return Strip(Segment.apply_style(line.render(self.app.console), style)).crop_extend(0, width, style)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines())

    def on_resize(self) -> None:
        self.strips = [self._strip(line) for line in self._lines()]

    def render_line(self, y: int) -> Strip:
        """Drawn afresh (a theme may have changed the style), as the last update drew it."""
        lines = self._lines()
        return self._strip(lines[y]) if y < len(lines) else Strip.blank(self.size.width, self.rich_style)
