"""A table of one listing at a time whose rows arrive a page at a time (Search, Directory, DNS).

It owns what every paged listing needs: the next page asked for when the cursor reaches the last
row, a page of an older listing dropped when it arrives late (each listing has a number), a bound
on the rows kept, and a stale state: after an error the rows shown are not the answer to what the
pane now asks, so they say so and never page (a page would be paid for a query no longer wanted).

The pane starts a listing with :meth:`PagedTable.begin`, gives it its first page with
:meth:`add_page`, and runs the page loads the table asks for (:class:`MoreWanted`) as its own calls,
so that their failures are reported like any other (:class:`~spyglass.tui.panes.base.Pane` does).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from textual import events, on
from textual.message import Message
from textual.widgets import DataTable

from spyglass.tui.widgets.table import Column, Table

MAX_ROWS = 10_000  # interactive tables stay small; export for the rest
KEY_SHOWN = {"down": "↓", "pagedown": "PgDn", "end": "End"}  # the keys that go past the last row

Row = tuple[dict[str, Any], Any]  # the cells by column key, and the item the row stands for
PageFetch = Callable[[int], Awaitable[tuple[list[Row], bool]]]  # page -> rows, and whether more follow


class PagedTable(Table):
    DEFAULT_CSS = """
    PagedTable.stale { opacity: 60%; }
    """

    class MoreWanted(Message):
        """The cursor reached (a costly listing: went past) the last row of a listing with more: the
        pane asks for the next page with :meth:`PagedTable.next_page`, once it may spend ``cost``."""

        def __init__(self, table: PagedTable, cost: str | None, key: str = "↓") -> None:
            super().__init__()
            self.table = table
            self.cost = cost
            self.key = key  # the key that went past the end: the one that spends, pressed again

        @property
        def control(self) -> PagedTable:
            return self.table

    class PageAdded(Message):
        """A page of the current listing is shown (the pane updates its counts)."""

        def __init__(self, table: PagedTable, page: int) -> None:
            super().__init__()
            self.table = table
            self.page = page

        @property
        def control(self) -> PagedTable:
            return self.table

    def __init__(
        self, columns: list[Column], max_rows: int = MAX_ROWS, page_cost: str | None = None, *, id: str | None = None
    ) -> None:
        super().__init__(columns, id=id)
        self.max_rows = max_rows
        # What a next page spends (e.g. "1 query credit"): then reaching the last row (G) does not
        # load it, going past it asks first, as r does; a free listing pages as the cursor arrives.
        self.page_cost = page_cost
        self.listing = 0  # the number of the listing shown; pages of others are dropped
        self.pages = 0  # of it, the pages shown
        self.more = False  # whether another page follows (within max_rows)
        self.items: list[Any] = []  # each row's item; a row's key is its index here
        self._fetch: PageFetch | None = None
        self._asked = 0  # the page asked for and not yet shown (or failed)
        self._key_shown = "↓"  # the last key pressed on it, as a prompt names it

    @property
    def stale(self) -> bool:
        return self.has_class("stale")

    @property
    def truncated(self) -> bool:
        """Rows stopped at :attr:`max_rows` though the listing had more."""
        return len(self.items) >= self.max_rows

    def begin(self, fetch: PageFetch | None = None) -> int:
        """A new listing (its first page comes with ``add_page(listing, 1, ...)``); ``fetch(page)``
        gets the next ones. Pages of earlier listings are dropped from now on."""
        self.listing += 1
        self._fetch = fetch
        self._asked = 0
        return self.listing

    def go_stale(self) -> None:
        """What the pane asks failed: the rows shown stay, marked as not its answer, and never page."""
        self.begin()
        self.more = False
        self.add_class("stale")

    def add_page(self, listing: int, page: int, rows: Iterable[Row], more: bool) -> bool:
        """Show a page of ``listing`` (the first replaces the rows); False if it is not wanted any
        more (another listing began, or this page is shown already)."""
        if listing != self.listing or page not in (1, self.pages + 1):
            return False
        with self.app.batch_update():
            if page == 1:
                self.clear_records()
                self.items = []
                self.remove_class("stale")
            for record, item in rows:
                if len(self.items) >= self.max_rows:
                    break
                self.add_record(record, key=str(len(self.items)))
                self.items.append(item)
        self.pages, self._asked = page, 0
        self.more = more and not self.truncated
        self.post_message(self.PageAdded(self, page))
        return True

    def item(self, key: str | None) -> Any:
        """The item of the row with this key (None if there is none)."""
        index = int(key) if key is not None and key.isdigit() else -1
        return self.items[index] if 0 <= index < len(self.items) else None

    def item_at_cursor(self) -> Any:
        return self.item(self.key_at(self.cursor_row)) if self.row_count else None

    @on(DataTable.RowHighlighted)
    def _near_the_end(self, event: DataTable.RowHighlighted) -> None:
        # (not stopped: the pane may show the highlighted row's detail)
        if self.page_cost is None and event.cursor_row >= self.row_count - 1:
            self._want_more()

    def on_key(self, event: events.Key) -> None:
        # (before the app runs its binding) the prompt to press it again names this key, not ↓
        self._key_shown = KEY_SHOWN.get(event.key) or (event.character if event.is_printable else None) or "↓"

    def _past_the_end(self) -> bool:
        """A move from the last row onwards: a costly listing's next page is wanted."""
        if self.page_cost is not None and self.row_count and self.cursor_row >= self.row_count - 1:
            self._want_more(self._key_shown)
            return True
        return False

    def action_cursor_down(self) -> None:
        if not self._past_the_end():
            super().action_cursor_down()

    def action_page_down(self) -> None:
        if not self._past_the_end():
            super().action_page_down()

    def action_scroll_bottom(self) -> None:
        if not self._past_the_end():
            super().action_scroll_bottom()

    def _want_more(self, key: str = "↓") -> None:
        if self.more and self.pages and self._fetch is not None and not self._asked:
            self.post_message(self.MoreWanted(self, self.page_cost, key))

    def next_page(self) -> Callable[[], Awaitable[None]] | None:
        """The load of the next page, to run as a call (None if it is asked for already or no more
        follow)."""
        if not (self.more and self.pages and self._fetch is not None and not self._asked):
            return None
        self._asked = self.pages + 1
        return self._load(self.listing, self._asked)

    def _load(self, listing: int, page: int) -> Callable[[], Awaitable[None]]:
        fetch = self._fetch
        assert fetch is not None

        async def load() -> None:
            try:
                rows, more = await fetch(page)
            except BaseException:
                if listing == self.listing:
                    self._asked = 0  # reaching the end again asks again
                raise
            self.add_page(listing, page, rows, more)

        return load
