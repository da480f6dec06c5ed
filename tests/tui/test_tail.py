"""The live tail draws only what changed while it follows the stream (issue 45). Under the test
driver there is no terminal to scroll: a view that moves is drawn whole, which is checked too.
tests/tui/test_stream_bytes.py checks the scrolling on a real terminal."""

from __future__ import annotations

from textual.app import App, ComposeResult

from spyglass.tui.streambuffer import TailEntry
from spyglass.tui.widgets.tail import Tail


def entries(start: int, count: int) -> list[TailEntry]:
    made = []
    for n in range(start, start + count):
        entry = TailEntry(b"", lambda raw, n=n: (f"line {n}", ""))
        entry.number = n
        made.append(entry)
    return made


class OneTail(App):
    def compose(self) -> ComposeResult:
        yield Tail(100)


def drawn_rows(tail: Tail) -> list[tuple[int, int, int, int]]:
    rows = [(r.x, r.y, r.width, r.height) for r in tail._repaint_regions]
    tail._repaint_regions.clear()
    return rows


async def test_new_lines_are_drawn_below_the_others_and_nothing_else():
    app = OneTail()
    async with app.run_test(size=(30, 10)) as pilot:
        tail = app.query_one(Tail)
        tail.add(entries(0, 3))
        tail._painted = tail._dirty_since = 0.0
        tail._tick()
        await pilot.pause()
        assert tail.render_line(2).text.rstrip() == "line 2"
        drawn_rows(tail)
        tail.add(entries(3, 2))
        assert tail.render_line(3).text.strip() == ""  # not drawn before its repaint
        tail._painted = 0.0
        tail._tick()
        assert drawn_rows(tail) == [(0, 3, 30, 2)]
        assert [tail.render_line(y).text.rstrip() for y in (3, 4)] == ["line 3", "line 4"]


async def test_a_view_that_moves_is_drawn_whole_where_the_terminal_cannot_scroll():
    app = OneTail()
    async with app.run_test(size=(30, 10)) as pilot:
        tail = app.query_one(Tail)
        tail.add(entries(0, 10))
        tail._painted = 0.0
        tail._tick()
        await pilot.pause()
        drawn_rows(tail)
        tail.add(entries(10, 1))
        tail._painted = 0.0
        tail._tick()
        assert drawn_rows(tail) == [(0, 0, 30, 10)]
        assert tail.render_line(9).text.rstrip() == "line 10"


async def test_a_line_wider_than_the_view_ends_in_an_ellipsis():
    # Cut where the box ended, a title read as whole (newcomer trial 10, 80 columns).
    app = OneTail()
    async with app.run_test(size=(30, 10)) as pilot:
        tail = app.query_one(Tail)
        entry = TailEntry(b"", lambda raw: ("220 198.18.186.185 ESMTP Exim 4.94 ready 漢字", ""))
        entry.number = 0
        tail.add([entry, *entries(1, 1)])
        tail._painted = tail._dirty_since = 0.0
        tail._tick()
        await pilot.pause()
        assert tail.render_line(0).text == "220 198.18.186.185 ESMTP Exim…"
        assert tail.render_line(1).text.rstrip() == "line 1"  # one that fits is as it was
