"""The search box: checks the query with the shared parser on every keystroke, before any
request, and says what it will cost."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.suggester import Suggester
from textual.containers import Vertical
from textual.widgets import Input, Static

from spyglass.query import FILTERS, parse
from spyglass.safetext import clean
from spyglass.tui.widgets.colours import theme_style


def describe(source: str, count_only: bool = False) -> tuple[bool, Text]:
    """(runnable, a line saying what is wrong, or what the query will cost)."""
    query = parse(source)
    if query.errors:
        first = query.errors[0]
        text = Text("✗ ", style="bold")
        text.append(clean(str(first), one_line=True, max_chars=200))
        if len(query.errors) > 1:
            text.append(f"  (+{len(query.errors) - 1} more)")
        return False, text
    if count_only:
        cost = "count: free"
    elif query.has_filters:
        cost = "costs 1 query credit (it has a filter), and 1 per further page"
    else:
        cost = "first page free, 1 query credit per further page"
    return True, Text(f"✓ {cost}")


class FilterSuggester(Suggester):
    """Completes the filter name being typed: ``coun`` suggests ``country:`` (right arrow takes it)."""

    def __init__(self) -> None:
        super().__init__(use_cache=True, case_sensitive=True)
        self.names = sorted(FILTERS)

    async def get_suggestion(self, value: str) -> str | None:
        word = value.rsplit(" ", 1)[-1].lstrip("-")
        if not word or ":" in word or '"' in word:
            return None
        for name in self.names:
            if name.startswith(word.lower()) and name != word:
                return value + name[len(word):] + ":"
        return None


class QueryInput(Vertical):
    DEFAULT_CSS = """
    QueryInput { height: auto; }
    QueryInput Input { width: 1fr; }
    QueryInput #query-check { height: 1; color: $text-muted; padding-left: 1; }
    QueryInput #query-check.bad { color: $error; }
    QueryInput #query-caret { height: 1; color: $error; padding-left: 1; display: none; }
    QueryInput #query-caret.shown { display: block; }
    """

    def __init__(self, placeholder: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.placeholder = placeholder
        self.count_only = False

    def compose(self) -> ComposeResult:
        yield Input(placeholder=self.placeholder, id="query", suggester=FilterSuggester())
        yield Static("", id="query-caret")
        yield Static("", id="query-check")

    @property
    def value(self) -> str:
        return self.query_one("#query", Input).value

    @value.setter
    def value(self, text: str) -> None:
        self.query_one("#query", Input).value = text

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.check()

    def check(self) -> bool:
        source = self.value
        check = self.query_one("#query-check", Static)
        caret = self.query_one("#query-caret", Static)
        if not source.strip():
            check.update("")
            caret.remove_class("shown")
            return False
        ok, line = describe(source, self.count_only)
        check.update(line)
        check.set_class(not ok, "bad")
        query = parse(source)
        if query.errors:
            span = query.errors[0].span
            # Input has one cell of padding; the caret lines up under the offending text.
            marks = " " * (span.start + 1) + "^" * max(1, min(span.end, len(source)) - span.start)
            caret.update(Text(marks, style=theme_style(self.app, "error")))
        caret.set_class(bool(query.errors), "shown")
        return ok
