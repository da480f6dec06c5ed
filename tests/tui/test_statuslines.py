"""Status lines repaint only the cells that changed (issue 45: a status line shown again each
second cost more bytes than the live tail beside it)."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.strip import Strip

from spyglass.tui.widgets.statuslines import StatusLines, changed_span

PLAIN, BOLD = Style(), Style(bold=True)


def strip(*parts: tuple[str, Style]) -> Strip:
    return Strip([Segment(text, style) for text, style in parts])


def test_only_the_cells_that_differ_are_changed():
    assert changed_span(strip(("12 received", PLAIN)), strip(("12 received", PLAIN))) is None
    assert changed_span(strip(("12 received  ", PLAIN)), strip(("13 received  ", PLAIN))) == (1, 1)
    assert changed_span(strip(("9 received ", PLAIN)), strip(("10 received", PLAIN))) == (0, 10)
    assert changed_span(strip(("a", PLAIN), ("bc", PLAIN)), strip(("ab", PLAIN), ("c", BOLD))) == (2, 2)
    assert changed_span(strip(("日本", PLAIN)), strip(("日木", PLAIN))) == (0, 3)  # wide: all of it


class Lines(App):
    def compose(self) -> ComposeResult:
        yield StatusLines()


async def test_an_update_marks_only_the_changed_cells_dirty():
    app = Lines()
    async with app.run_test(size=(40, 5)) as pilot:
        lines = app.query_one(StatusLines)
        lines.update(Text("live · 12 received\nbuffer 12"))
        await pilot.pause()
        lines._repaint_regions.clear()
        lines.update(Text("live · 13 received\nbuffer 12"))
        assert [(r.x, r.y, r.width, r.height) for r in lines._repaint_regions] == [(8, 0, 1, 1)]
        await pilot.pause()
        assert lines.size.height == 2  # as many rows as lines
        assert lines.render_line(0).text.rstrip() == "live · 13 received"
        assert lines.render_line(1).text.rstrip() == "buffer 12"
