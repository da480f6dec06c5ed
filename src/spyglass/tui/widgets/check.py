"""A checkbox whose state reads without colour: X when on, blank when off (Textual's shows an X
either way and tells them apart by colour alone, which NO_COLOR and some 16-colour palettes lose)."""

from __future__ import annotations

from textual.widgets import Checkbox


class Check(Checkbox):
    BUTTON_INNER = " "  # off until on_mount says otherwise

    def on_mount(self) -> None:
        self.BUTTON_INNER = "X" if self.value else " "

    def watch_value(self) -> None:
        self.BUTTON_INNER = "X" if self.value else " "
        super().watch_value()
