"""The search box: checks the query with the shared parser as it is typed, before any request,
and says what it will cost; up and down recall the queries run before (kept between runs).

A key typed alone is checked at once. The keys of a burst (typed faster than the screen draws, or
pasted without bracketed paste) are checked once the last has its turn: the check parses the
whole box, and running it on every key made a burst's work grow with the square of its length
(6,000 characters pasted held the keys for minutes)."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len
from rich.text import Text
from textual import getters
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.suggester import Suggester
from textual.timer import Timer
from textual.widgets import Input, Static

from spyglass.query import FILTERS, parse
from spyglass.safetext import clean
from spyglass.tui.console import for_console, on_console
from spyglass.tui.keyorder import keys_to_come
from spyglass.tui.widgets.colours import theme_style


def describe(source: str, count_only: bool = False) -> tuple[bool, Text]:
    """(runnable, a line saying what is wrong, or what the query will cost)."""
    query = parse(source)
    if query.errors:
        first = query.errors[0]
        text = Text("✗ ", style="bold")
        if len(query.errors) > 1:  # said first: a narrow box cuts the end (newcomer trial 7)
            text.append(f"{len(query.errors)} problems, the first: ")
        text.append(clean(str(first), one_line=True, max_chars=200))
        return False, text
    if count_only:
        cost = "count: free"
    elif query.has_filters:
        cost = "costs 1 query credit (a filter), +1 per further page"
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
                return value + name[len(word) :] + ":"
        return None


HISTORY_SIZE = 500
CHECK_LATER = 0.2  # s: a burst that ends on a key that leaves the box is checked after this


class History:
    """Queries run, oldest first, one per line in a small file in the config dir, bounded."""

    def __init__(self, path: Path, size: int = HISTORY_SIZE) -> None:
        self.path = path
        self.size = size
        self.entries = self._read()

    def _read(self) -> list[str]:
        try:
            return [line for line in self.path.read_text(encoding="utf-8").splitlines() if line][-self.size :]
        except (OSError, UnicodeDecodeError):
            return []

    def add(self, query: str) -> None:
        """``query`` last; the file read again first, so that another dashboard's queries since
        are kept (each rewrote the file with its own alone: newcomer trial 3)."""
        query = " ".join(query.split())  # one line per entry
        if not query:
            return
        self.entries = self._read() or self.entries
        if query in self.entries:
            self.entries.remove(query)
        self.entries = [*self.entries, query][-self.size :]
        try:
            from spyglass.config import write_private

            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_private(self.path, "\n".join(self.entries) + "\n")  # what was searched, as config.json: 0600
        except OSError:
            pass  # history is a convenience: a read-only config dir must not stop a search


def history_path() -> Path:
    from spyglass.config import config_dir

    return config_dir() / "search-history"


class QueryInput(Vertical):
    DEFAULT_CSS = """
    QueryInput { height: auto; }
    QueryInput Input { width: 1fr; }
    QueryInput #query-check { height: 1; color: $text-muted; padding-left: 1; }
    QueryInput #query-check { text-wrap: nowrap; text-overflow: ellipsis; }
    QueryInput #query-check.bad { color: $error; }
    QueryInput #query-caret { height: 1; color: $error; padding-left: 1; display: none; }
    QueryInput #query-caret.shown { display: block; }
    """

    BINDINGS = [
        Binding("up", "history(-1)", "Earlier query", show=False, id="search.history_back"),
        Binding("down", "history(1)", "Later query", show=False, id="search.history_forward"),
    ]

    # the widgets it drives
    field = getters.query_one("#query", Input)

    def __init__(self, placeholder: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.placeholder = placeholder
        self.count_only = False
        self.history = History(history_path())
        self.recalled = len(self.history.entries)  # where up/down are in the history; the end is "new"
        self.draft = ""  # what was typed before going back in the history
        self._check_later: Timer | None = None  # the check a burst put off
        self.known_filters: tuple[str, frozenset[str]] | None = None  # (whose, the filters they serve)

    def compose(self) -> ComposeResult:
        yield Input(placeholder=self.placeholder, id="query", suggester=FilterSuggester(), select_on_focus=False)
        yield Static("", id="query-caret")
        yield Static("", id="query-check")

    def on_mount(self) -> None:
        # the marks follow their text as the box scrolls (Home, End, the cursor: newcomer trial 24)
        self.watch(self.field, "scroll_x", self._scrolled, init=False)

    def _scrolled(self) -> None:
        if self.query_one("#query-caret").has_class("shown"):
            self._place_carets(self.value, parse(self.value))

    @property
    def value(self) -> str:
        return self.field.value

    @value.setter
    def value(self, text: str) -> None:
        """A query put in the box (a facet added, one run again): the cursor after it, where what
        is typed next adds to it (it stayed where it was: in the middle of a longer query)."""
        self.field.value = text
        self.field.cursor_position = len(text)

    def remember(self) -> None:
        self.history.add(self.value)
        self.recalled = len(self.history.entries)

    def action_history(self, step: int) -> None:
        entries = self.history.entries
        if self.recalled == len(entries):
            self.draft = self.value
        # The query just run stays in the box and is the newest entry: Up goes past it at once.
        showing, target = " ".join(self.value.split()), self.recalled + step
        while 0 < target < len(entries) and entries[target] == showing:
            target += step
        self.recalled = max(0, min(len(entries), target))
        field = self.field
        field.value = entries[self.recalled] if self.recalled < len(entries) else self.draft
        field.cursor_position = len(field.value)

    class Checked(Message):
        """The query was checked as it was typed: ``ok`` when it would run."""

        def __init__(self, box: QueryInput, ok: bool) -> None:
            super().__init__()
            self.box = box
            self.ok = ok

        @property
        def control(self) -> QueryInput:
            return self.box

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._check_later is not None:
            self._check_later.stop()
            self._check_later = None
        if keys_to_come(self.app):  # the last key of the burst checks (or the timer, if it is no text)
            self._check_later = self.set_timer(CHECK_LATER, self._checked)
        else:
            self._checked()

    def _checked(self) -> None:
        self._check_later = None
        self.post_message(self.Checked(self, self.check()))

    def check(self) -> bool:
        source = self.value
        check = self.query_one("#query-check", Static)
        if not source.strip():
            check.update("")
            self.query_one("#query-caret").remove_class("shown")
            return False
        ok, line = describe(source, self.count_only)
        query = parse(source)
        if ok and self.known_filters is not None:  # a host that serves fewer filters (trends)
            unknown = [f.name for f in query.filters if f.name not in self.known_filters[1]]
            if unknown:
                ok, line = False, Text(f"✗ {self.known_filters[0]} have no filter '{unknown[0]}'", style="bold")
        if on_console(self.app):  # ✓ and ✗ are not in its fonts
            line = Text(for_console(self.app, line.plain))
        check.update(line)
        check.set_class(not ok, "bad")
        self._place_carets(source, query)
        return ok

    def _place_carets(self, source: str, query) -> None:
        """Carets under the first problem's text as the box shows it: where its text starts (its
        border and padding: one cell off by a guess, newcomer trial 7), scrolled, in cells (CJK:
        two). (The caret line may not be laid out yet: it starts where this box's content does.)"""
        caret = self.query_one("#query-caret", Static)
        if query.errors:
            span = query.errors[0].span
            start = self.field.content_region.x - self.content_region.x - caret.styles.padding.left
            start += cell_len(source[: span.start]) - self.field.scroll_offset.x
            width = max(1, cell_len(source[span.start : max(span.end, span.start + 1)]))
            if start < 0:  # scrolled off to the left: what is left of it in view, if any
                start, width = 0, start + width
            caret.update(Text(" " * start + "^" * width, style=theme_style(self.app, "error")))
        caret.set_class(bool(query.errors), "shown")
