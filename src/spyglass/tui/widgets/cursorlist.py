"""A list whose cursor is on a value whenever it has the keys."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widgets import OptionList


class CursorList(OptionList):
    """An OptionList that, taking the keyboard with no value highlighted (a list that starts with
    a group heading has none), highlights the first value: Enter and - act on what is shown. It
    moves with j and k, g and G as the tables do (a newcomer's j and k were typed into the query
    box: a letter that is no list's key goes there)."""

    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "first", "First", show=False),
        Binding("G", "last", "Last", show=False),
    ]

    def _on_focus(self, event: events.Focus) -> None:
        super()._on_focus(event)
        if self.highlighted is None:
            self.action_first()
