"""A list whose cursor is on a value whenever it has the keys."""

from __future__ import annotations

from textual import events
from textual.widgets import OptionList


class CursorList(OptionList):
    """An OptionList that, taking the keyboard with no value highlighted (a list that starts with
    a group heading has none), highlights the first value: Enter and - act on what is shown."""

    def _on_focus(self, event: events.Focus) -> None:
        super()._on_focus(event)
        if self.highlighted is None:
            self.action_first()
