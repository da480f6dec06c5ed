"""The shared Table: text cells are inert and cut with a visible "…"."""

from __future__ import annotations

from textual.app import App, ComposeResult

from spyglass.tui.widgets.table import Column, Table
from tests.tui.helpers import screen_text


class OneTable(App):
    def compose(self) -> ComposeResult:
        yield Table([Column("name", "Name", 12), Column("rest", "Rest", 10, flex=True)])


async def test_cells_are_never_markup_and_long_ones_end_in_an_ellipsis():
    app = OneTable()
    async with app.run_test(size=(40, 6)) as pilot:
        table = app.query_one(Table)
        table.add_record({"name": "[red]x[/red] [link=http://e.test]y", "rest": "a" * 80}, key="k")
        table.update_record("k", {"name": "[bold]served[/]" + "c" * 60, "rest": "b" * 80})
        await pilot.pause()
        text = screen_text(app)
    assert "[bold]served[/]c" in text and "c…" in text  # the server's text as it came, cut with a sign
    assert "bbbb…" in text
