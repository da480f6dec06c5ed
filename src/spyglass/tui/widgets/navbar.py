"""The one-line pane bar: each pane with the key that shows it; a click switches too. Cheaper to draw
than Tabs, which keeps the first frame fast."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from spyglass.tui.console import for_console
from spyglass.tui.widgets.colours import theme_background


class NavBar(Widget):
    DEFAULT_CSS = """
    NavBar { height: 1; background: $panel; }
    """

    active: reactive[int] = reactive(0)
    titles: reactive[list[tuple[str, str]]] = reactive(list, always_update=True)  # (title, key label)

    class Picked(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._spans: list[tuple[int, int]] = []

    def render(self) -> Text:
        # Bold and underlined as well as coloured: told apart with NO_COLOR or 16 colours too.
        selected = theme_background(self.app, "primary", bold=True, underline=True, reverse=self.app.current_theme.ansi)
        labels = []
        for index, (title, key) in enumerate(self.titles):
            label = Text()
            key_part = f" {key}" if key else ""
            if index == self.active:
                label.append(f"{key_part} {title} ", style=selected)
            else:
                label.append(f"{key_part} ", style="dim")
                label.append(f"{title} ")
            labels.append(label)
        first = self._first_shown([label.cell_len + 1 for label in labels], self.size.width)
        text = Text(no_wrap=True, overflow="ellipsis")
        self._spans = [(-1, -1)] * len(labels)
        if first:
            text.append(for_console(self.app, "‹ "), style="dim")
        for index in range(first, len(labels)):
            start = len(text)
            text.append_text(labels[index])
            self._spans[index] = (start, len(text))
            text.append(" ")
        return text

    def _first_shown(self, widths: list[int], room: int) -> int:
        """The first pane shown: 0 when all fit, else far enough along that the active one does."""
        if not widths or sum(widths) <= room or room <= 0:
            return 0
        first = 0
        while first < self.active and 2 + sum(widths[first : self.active + 1]) > room:
            first += 1
        return first

    def on_click(self, event: events.Click) -> None:
        for index, (start, end) in enumerate(self._spans):
            if start <= event.x < end:
                self.post_message(self.Picked(index))
