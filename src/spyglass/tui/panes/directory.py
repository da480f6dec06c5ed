"""The directory pane: saved search queries to browse (by votes or date), search and filter by
tag; Enter runs one in the search pane; + and - vote."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, OptionList, Select, Static
from textual.widgets.option_list import Option

from spyglass.present.directory import query_cells
from spyglass.present.values import plural
from spyglass.safetext import clean, fit, safe_text
from spyglass.tui.messages import RunSearch
from spyglass.tui.panes.base import Pane
from spyglass.tui.widgets.boxes import put_text
from spyglass.tui.widgets.cursorlist import CursorList
from spyglass.tui.widgets.pagedtable import PagedTable, Row
from spyglass.tui.widgets.table import Column

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import SavedQuery, SavedQueryList

PAGE = 10
MAX_ROWS = 1_000
COLUMNS = [
    Column("votes", "Votes", 5),
    Column("title", "Title", 24, rank=0),
    Column("query", "Query", 14, rank=1, flex=True),
    Column("tags", "Tags", 18, rank=3),
    Column("date", "Saved", 10, rank=4),
]
SORTS = (("most votes", "votes"), ("newest", "timestamp"))


class DirectoryPane(Pane):
    ID = "directory"
    TITLE = "Directory"
    KEYS = "f10,9"
    SECTION = "directory"
    TYPED_TERMS = frozenset({"dir-search"})
    HOME = "#dir-queries"
    HELP = (
        "Saved search queries: type words (or tag:NAME) and Enter to search, empty lists them all; "
        "Enter on a tag filters by it; Enter on a query runs it in the search pane; + and - vote. "
        "Save the search pane's query there with ctrl+s."
    )
    BINDINGS = [
        Binding("slash", "focus_search", "Search", id="directory.search"),
        Binding("plus", "vote(1)", "Vote up", id="directory.up"),
        Binding("minus", "vote(-1)", "Vote down", id="directory.down"),
        Binding("t", "focus_tags", "Tags", show=False, id="directory.tags"),
    ]
    DEFAULT_CSS = """
    DirectoryPane #dir-bar { height: 1; margin: 1 0 0 0; }
    DirectoryPane #dir-bar Input { width: 1fr; }
    DirectoryPane #dir-bar Select { width: 16; }
    DirectoryPane #dir-status { height: 1; color: $text-muted; }
    DirectoryPane #dir-body { height: 1fr; }
    DirectoryPane #dir-tags { width: 23; height: 1fr; border: round $primary 50%; }
    DirectoryPane #dir-side { width: 1fr; }
    DirectoryPane #dir-queries { height: 1fr; border: round $primary 50%; }
    DirectoryPane #dir-detail { height: auto; max-height: 5; padding: 0 1; }
    """

    # the widgets it drives
    search_box = getters.query_one("#dir-search", Input)
    tags_list = getters.query_one("#dir-tags", OptionList)
    table = getters.query_one("#dir-queries", PagedTable)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.words = ""  # the search shown; "" is the listing
        self.total = 0
        self.tag_values: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(id="dir-bar"):
            yield Input(
                placeholder="search: words or tag:NAME, Enter (empty: all)",
                id="dir-search",
                compact=True,
                select_on_focus=False,
            )
            # no type to search: + and - vote on the selected query from here too (they opened it)
            yield Select(SORTS, value="votes", allow_blank=False, id="dir-sort", compact=True, type_to_search=False)
        yield Static("", id="dir-status")
        with Horizontal(id="dir-body"):
            tags = CursorList(id="dir-tags", markup=False)
            tags.border_title = "Tags"
            yield tags
            with Vertical(id="dir-side"):
                table = PagedTable(COLUMNS, max_rows=MAX_ROWS, id="dir-queries")
                table.border_title = "Queries (Enter runs, + / - vote)"
                yield table
                yield Static("", id="dir-detail")

    async def load(self, clients: Clients) -> None:
        """Shown first (or after a reconnect): the tags, and what the search box says."""
        tags = await clients.directory.tags(size=30)
        self.tag_values = [t.value for t in tags.matches]
        box = self.tags_list
        box.clear_options()
        box.add_options([Option(Text(f"{fit(t.value, 13):<13} {t.count:>3}", no_wrap=True)) for t in tags.matches])
        words = self.search_box.value.strip()
        await self.fetch(clients, words, self.sort, self.begin(clients, words))

    @property
    def shown(self) -> list[SavedQuery]:
        return self.table.items

    def begin(self, clients: Clients, words: str) -> int:
        sort = self.sort
        self.workers.cancel_group(self, "page-dir-queries")
        return self.table.begin(lambda page: self.rows_of(clients, words, sort, page))

    @property
    def sort(self) -> str:
        return str(self.query_one("#dir-sort", Select).value)

    def run_arg(self, arg: str) -> None:
        """Search for ``arg`` (words or tag:NAME); the tags load with it."""
        put_text(self.search_box, clean(arg, one_line=True, max_chars=200))
        self.reload()

    def action_focus_search(self) -> None:
        self.focus_box("#dir-search")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the search box has the keys, / and +/- are text it takes: the footer does not
        offer them (a newcomer pressed the / it showed, and searched for '/apache')."""
        if action in ("focus_search", "vote") and self.search_box.has_focus:
            return False
        return True

    def action_focus_tags(self) -> None:
        self.tags_list.focus()

    @on(Input.Submitted, "#dir-search")
    @on(Select.Changed, "#dir-sort")
    def run(self) -> None:
        clients = self.clients
        if clients is None:
            return  # the first load runs what the box says once connected
        self.show_error(None)
        words = self.search_box.value.strip()
        self.call("directory", self.fetch, clients, words, self.sort, self.begin(clients, words))

    @on(OptionList.OptionSelected, "#dir-tags")
    def filter_by_tag(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.tag_values):
            put_text(self.search_box, clean(f"tag:{self.tag_values[event.option_index]}", one_line=True, max_chars=200))
            self.run()
            self.table.focus()

    async def page(self, clients: Clients, words: str, sort: str, page: int) -> SavedQueryList:
        if words:
            return await clients.directory.search(words, page=page)
        return await clients.directory.queries(page=page, sort=sort, order="desc")

    async def fetch(self, clients: Clients, words: str, sort: str, listing: int) -> None:
        result = await self.page(clients, words, sort, 1)
        if listing != self.table.listing:
            return
        self.words, self.total = words, result.total
        self.table.add_page(listing, 1, [(self.row(q), q) for q in result.matches], len(result.matches) < result.total)
        self.show_detail(0)

    async def rows_of(self, clients: Clients, words: str, sort: str, page: int) -> tuple[list[Row], bool]:
        result = await self.page(clients, words, sort, page)
        shown = len(self.shown) + len(result.matches)
        return [(self.row(q), q) for q in result.matches], bool(result.matches) and shown < result.total

    @on(PagedTable.PageAdded, "#dir-queries")
    def show_count(self) -> None:
        what = f"matching {self.words!r}" if self.words else "in the directory"
        found = plural(self.total, "saved query", "saved queries")
        self.query_one("#dir-status", Static).update(
            safe_text(f"{found} {what}, {len(self.shown):,} shown", one_line=True)
        )

    @staticmethod
    def row(saved: SavedQuery) -> dict[str, Text]:
        cells = query_cells(saved)
        return {key: Text(cells[key], no_wrap=True) for key in ("votes", "title", "query", "tags", "date")}

    def show_detail(self, index: int) -> None:
        detail = self.query_one("#dir-detail", Static)
        if not 0 <= index < len(self.shown):
            detail.update("")
            return
        cells = query_cells(self.shown[index])
        text = Text(no_wrap=False)
        text.append(cells["title"], style="bold")
        if cells["tags"]:
            text.append(f"  [{cells['tags']}]", style="dim")
        text.append("\n" + cells["query"])
        if cells["description"]:
            text.append("\n" + cells["description"], style="italic")
        detail.update(text)

    @on(DataTable.RowHighlighted, "#dir-queries")
    def highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(int(event.row_key.value or 0))

    def selected(self) -> tuple[int, SavedQuery] | None:
        table = self.table
        if not self.shown or table.cursor_row < 0:
            return None
        index = int(table.key_at(table.cursor_row) or -1)
        return (index, self.shown[index]) if 0 <= index < len(self.shown) else None

    @on(DataTable.RowSelected, "#dir-queries")
    def run_query(self, event: DataTable.RowSelected) -> None:
        index = int(event.row_key.value or -1)
        if 0 <= index < len(self.shown):
            self.post_message(RunSearch(self.shown[index].query))

    def action_vote(self, value: int) -> None:
        chosen = self.selected()
        clients = self.clients
        if chosen is None or clients is None:
            return
        index, saved = chosen
        if saved.id is None:
            self.show_error("This server gives its saved queries no id to vote on.")
            return
        self.call("vote", self.vote, clients, index, saved.id, value)

    async def vote(self, clients: Clients, index: int, query_id: int, value: int) -> None:
        saved = await clients.directory.vote(query_id, value)
        before = None
        if index < len(self.shown) and self.shown[index].id == query_id:
            before = self.shown[index].votes
            self.shown[index] = saved
            self.table.update_record(str(index), self.row(saved))
        way, title = "up" if value > 0 else "down", clean(saved.title, one_line=True, max_chars=60)
        if before == saved.votes:  # (newcomer trial 17: a second + changed nothing and said nothing)
            other = "-" if value > 0 else "+"
            self.app.notify(f"You voted {way} already (one vote a query; {other} changes it): {title}", markup=False)
        else:
            self.app.notify(f"Voted {way}: {title}", markup=False)
