"""The one-line pane bar: each pane with the key that shows it; a click switches too. Cheaper to draw
than Tabs, which keeps the first frame fast."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

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
        text = Text(no_wrap=True, overflow="ellipsis")
        self._spans = []
        for index, (title, key) in enumerate(self.titles):
            start = len(text)
            if index == self.active:
                text.append(f" {key} {title} ", style=selected)
            else:
                text.append(f" {key} ", style="dim")
                text.append(f"{title} ")
            self._spans.append((start, len(text)))
            text.append(" ")
        return text

    def on_click(self, event: events.Click) -> None:
        for index, (start, end) in enumerate(self._spans):
            if start <= event.x < end:
                self.post_message(self.Picked(index))
