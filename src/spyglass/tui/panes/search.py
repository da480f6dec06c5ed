"""The search pane: a checked query, facet counts as bars that refine the query, results that
page lazily (bounded), count-only mode, opening a result in the host pane, and export."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Checkbox, DataTable, Input, OptionList, Static
from textual.widgets.option_list import Option

from spyglass.present.search import facet_groups, paging_line, result_cells
from spyglass.present.values import pad, plural
from spyglass.query import Facet, parse, parse_facets
from spyglass.query.pivot import term
from spyglass.safetext import clean, fit, safe_text
from spyglass.tui.console import for_console
from spyglass.tui.messages import OpenHost, QuerySaved
from spyglass.tui.panes.base import Pane, PaneFailure
from spyglass.tui.stablepages import StablePages
from spyglass.tui.widgets.check import Check
from spyglass.tui.widgets.cursorlist import CursorList
from spyglass.tui.widgets.cutinput import CutInput
from spyglass.tui.widgets.facts import bar
from spyglass.tui.widgets.pagedtable import MAX_ROWS, PagedTable, Row
from spyglass.tui.widgets.queryinput import QueryInput
from spyglass.tui.widgets.table import Column

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import Banner, SearchResponse

DEFAULT_FACETS = "port,org,country,product,vuln"
FACETS_TITLE = "Facets (Enter adds, - excludes)"
FACETS_TITLE_NARROW = "⏎ adds · - excludes"  # what the keys do matters more than the word "Facets"
PAGE = 100
# In display order; rank says what goes first when the table is narrow (the highest rank first).
COLUMNS = [
    Column("ip", "IP", 15),
    Column("port", "Port", 9, rank=1),
    Column("org", "Org", 20, rank=5),
    Column("country", "CC", 2, rank=6),
    Column("product", "Product", 18, rank=3),
    Column("title", "Title / banner", 12, rank=2, flex=True, stand_in="product"),
    Column("seen", "Seen", 10, rank=4),
]


QUERY_TERM = re.compile(r'(?:[^\s"]+|"[^"]*")+')  # a word of a query, quotes and all


LIST_VALUE = re.compile(r'"[^"]*"|[^,]+')  # a value of ``field:a,"b c"``


def with_term(query: str, term: str, exclude: bool) -> str:
    """``query`` with ``term`` (``-term`` to exclude it): the opposite term is taken out rather than
    contradicted (``org:X -org:X`` finds nothing, for a credit), and the same one is not repeated.
    A list that holds the value gives way: excluded, the value leaves it (``country:DE,FR`` less FR
    is ``country:DE``); added, the list becomes that value."""
    wanted = f"-{term}" if exclude else term
    unwanted = {term.casefold(), f"-{term}".casefold()}
    field, _, value = term.casefold().partition(":")
    kept, said = [], False
    for word in QUERY_TERM.findall(query):
        if word.casefold() in unwanted:
            continue
        name, colon, values = word.partition(":")
        listed = LIST_VALUE.findall(values) if colon and name.casefold() == field else []
        if len(listed) > 1 and value in (v.casefold() for v in listed):
            if not exclude:
                continue  # narrowed to the one value, added below
            word, said = f"{name}:{','.join(v for v in listed if v.casefold() != value)}", True
        kept.append(word)
    return " ".join(kept if said else [*kept, wanted])


def refine(query: str, facet: str, value: str, exclude: bool) -> str:
    """``query`` narrowed to (or, with ``exclude``, without) ``facet:value``."""
    # Facet values come from banners: controls arrive in the query box as visible symbols only.
    return with_term(query, term(facet, clean(value, one_line=True, max_chars=200)), exclude)


def row_of(b: Banner) -> Row:
    """A result's cells by column name (``present.search.result_cells`` is in COLUMNS' order), and
    what Enter opens: the host, on this service."""
    cells = {col.key: Text(cell, no_wrap=True) for col, cell in zip(COLUMNS, result_cells(b), strict=True)}
    return cells, (b.address, f"{b.port}/{b.transport}")


# The filters that pin a result column to one value (port:22 fills Port with 22 on every row).
PINNING = {"port": "port", "org": "org", "country": "country", "product": "product"}


def columns_for(query: str) -> list[Column]:
    """The result columns, those the query pins to one value (``port:22``, ``country:DE``) dropped
    first when the table is narrow: the room goes to what tells the rows apart. Decided by the
    query, never by the rows of a page, so one query always shows the same columns."""
    pinned = {
        PINNING[f.name] for f in parse(query).filters if f.name in PINNING and not f.negated and len(f.values) == 1
    }
    return [replace(c, rank=c.rank + 100) if c.key in pinned else c for c in COLUMNS]


def facet_spec(spec: str) -> tuple[list[Facet], list[str]]:
    """The facets of ``port,org:20``, and what is wrong with the others (they are left out)."""
    facets: list[Facet] = []
    problems: list[str] = []
    for item in spec.split(","):
        try:
            for facet in parse_facets(item):
                if any(f.name == facet.name for f in facets):
                    raise ValueError(f"facet '{facet.name}' is named twice")  # the server refuses it
                facets.append(facet)
        except ValueError as exc:
            problems.append(str(exc))
    return facets, problems


class SearchPane(Pane):
    ID = "search"
    TITLE = "Search"
    KEYS = "f2,1"
    SECTION = "search"
    HOME = "#results"
    WIDGETS = (QueryInput,)
    HELP = (
        "Free text and filters (nginx country:DE -port:22); up/down in the box recall earlier queries. "
        "Enter on a facet value adds it, - excludes it; Enter on a result opens the host."
    )
    BINDINGS = [
        Binding("slash", "focus_query", "Query", id="search.query"),
        Binding("e", "export", "Export", id="search.export"),
        Binding("ctrl+s", "save_query", "Save query", id="search.save"),
        Binding("minus", "exclude_facet", "Exclude value", show=False, id="search.exclude"),
    ]
    DEFAULT_CSS = """
    SearchPane #search-bar { height: auto; }
    SearchPane #search-bar QueryInput { width: 1fr; }
    SearchPane #search-bar Checkbox { width: auto; border: none; padding: 0 1; margin-top: 0; }
    SearchPane #search-body { height: 1fr; }
    SearchPane #facet-side { width: 40; }
    SearchPane #facet-spec { width: 1fr; }
    SearchPane #facets { height: 1fr; border: round $primary 50%; }
    SearchPane #results { width: 1fr; height: 1fr; border: round $primary 50%; }
    SearchPane #search-status { height: auto; max-height: 2; color: $text-muted; }
    """

    # the widgets it drives
    query_box = getters.query_one(QueryInput)
    facet_list = getters.query_one("#facets", OptionList)
    results = getters.query_one("#results", PagedTable)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.facet_items: list[tuple[str, str] | None] = []
        self.current_query = ""
        self.count_only = False
        self.total = 0
        self.facet_result: SearchResponse | None = None
        self.refined = ""  # the query a facet's Enter or - made: its facets keep the cursor's value
        self.pages: StablePages | None = None  # the pages of the results shown

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(id="search-bar"):
            yield QueryInput("search: free text and filters, e.g. nginx country:DE -port:22 — Enter runs")
            yield Check("count only", id="count-only")
        yield Static("", id="search-status")
        with Horizontal(id="search-body"):
            with Vertical(id="facet-side"):
                yield CutInput(
                    DEFAULT_FACETS,
                    placeholder="facets, e.g. port,org:20",
                    id="facet-spec",
                    compact=True,
                    select_on_focus=False,
                )
                facets = CursorList(id="facets", markup=False)
                facets.border_title = FACETS_TITLE
                yield facets
            results = PagedTable(COLUMNS, id="results", page_cost="1 query credit")
            results.border_title = "Results (Enter opens the host)"
            yield results

    async def load(self, clients: Clients) -> None:
        """When shown (first, or after a reconnect): say whether the backend holds demo data, asked
        again each time, so the note goes once real data is imported. Once a query ran, its count
        line stays over its rows (after a new backend, the note took its place: trial 25)."""
        if self.current_query:
            return
        info = await clients.tools.backend_info() or {}
        if info.get("demo"):
            demo, own = info.get("demo_banners", 0), info.get("own_banners", 0)
            self.show_status(
                Text(
                    # services (search's count: each one's latest banner), as README's 20,000
                    # banners are with their history (newcomer trials 2 and 4)
                    f"Demo data: {demo:,} synthetic services in 198.18.0.0/15 beside {own:,} of yours."
                    if own
                    else f"Demo data: {info.get('banners', 0):,} synthetic services in 198.18.0.0/15. "
                    "Load real data with: spyglass import FILE.json.gz"
                )
            )
        else:
            self.show_status("")

    def refresh_query(self) -> str:
        """What r runs: the query in the box as it is now (edits not yet run are not thrown away),
        else the last one run."""
        return self.query_box.value.strip() or self.current_query

    def refresh_cost(self) -> str | None:
        query = self.refresh_query()
        if query and not self.query_one("#count-only", Checkbox).value and parse(query).has_filters:
            return "1 query credit"
        return None

    def refresh_pane(self) -> None:
        """r: the query in the box (its first page), else the last one run, else the demo-data check."""
        query = self.refresh_query()
        if query:
            if not self.query_box.value.strip():
                self.query_box.value = query  # emptied: the last one run
            self.run_query()
        else:
            self.reload()

    def run_arg(self, arg: str) -> None:
        self.query_box.value = arg
        self.focus_box("#query")
        self.run_query()

    def run_from_elsewhere(self, arg: str) -> None:
        """A search asked for in another pane (a scan's results, a saved query, a pivot, an alert's
        banners, the palette): its results have the keys, as a host opened from a result does; `j`
        in the box was glued onto the query and spent a credit (newcomer trial 13). One that cannot
        run leaves the box the keys, to fix it; `--pane search QUERY` too, as typed at start."""
        self.run_arg(arg)
        if self.query_box.check():
            self.results.focus()  # (after the focus the pane takes when shown)

    def exclude(self, term: str) -> None:
        """A pivot's ``-``: the query in force (or in the box) without ``term``, run again."""
        box = self.query_box
        box.value = with_term(box.value or self.current_query, term, exclude=True)
        self.focus_box("#query")
        self.run_query()

    def show_status(self, text: Text | str) -> None:
        shown = text if isinstance(text, Text) else safe_text(text, one_line=True)
        self.query_one("#search-status", Static).update(shown)

    def action_focus_query(self) -> None:
        self.focus_box("#query")

    @on(Checkbox.Changed, "#count-only")
    def count_mode(self, event: Checkbox.Changed) -> None:
        box = self.query_box
        box.count_only = event.value
        box.check()

    @on(QueryInput.Checked)
    def _query_typed(self, event: QueryInput.Checked) -> None:
        """Once the query is fixed (the check under the box says so), "fix the query first" goes."""
        if event.ok and self.error_source == "query":
            self.show_error(None)

    @on(Input.Submitted, "#query")
    @on(Input.Submitted, "#facet-spec")
    def submitted(self) -> None:
        self.run_query()

    def run_query(self) -> None:
        """Run what is in the box, if the parser accepts it; the box keeps its text either way. A
        query that cannot run leaves the results of the last one marked stale (they never page)."""
        box = self.query_box
        if not box.check():
            self.show_error(
                "Fix the query first: " + str(parse(box.value).errors[0])
                if box.value.strip()
                else "Type a query first.",
                "query",
            )
            self.go_stale()
            return
        facets, problems = facet_spec(self.query_one("#facet-spec", Input).value)
        clients = self.clients
        if clients is None:
            self.when_connected(self.run_query)
            return
        # A facet that is not one is left out and said, the search runs all the same.
        self.show_error(f"Facets: {'; '.join(problems)} (left out)" if problems else None)
        box.remember()
        spec = ",".join(f"{f.name}:{f.size}" for f in facets)
        query = box.value
        pages = StablePages(partial(self._search_page, clients, query))
        listing = self.results.begin(partial(self.page_of, pages))
        self.workers.cancel_group(self, "page-results")
        count_only = self.query_one("#count-only", Checkbox).value
        self.call("search", self.fetch, clients, query, spec, count_only, listing, pages)

    def go_stale(self) -> None:
        """The rows shown are not the answer to what was asked: they say so, and never page."""
        if not self.current_query:
            return
        self.results.go_stale()
        self.show_status(f"stale: the results below are of {self.current_query!r}, not of the query in the box")

    async def fetch(
        self, clients: Clients, query: str, facets: str, count_only: bool, listing: int, pages: StablePages
    ) -> None:
        self.show_status(f"searching: {query}")
        try:
            if count_only:
                result = await clients.search.count(query, facets or None)
            else:
                result = await clients.search.search(query, facets or None, page=1)
        except Exception:
            if listing == self.results.listing:
                self.show_status("")  # "searching: …" is over
                self.go_stale()  # (says so in the status, when there are results to mark)
            raise
        if listing != self.results.listing:
            return  # a newer query was started while this one ran
        self.current_query = query
        self.count_only = count_only
        self.pages = pages
        pages.first(result.matches, result.total)
        self.total = result.total
        self.show_facets(result, keep=query == self.refined)
        rows = [] if count_only else [row_of(b) for b in result.matches]
        self.results.use_columns(columns_for(query))
        self.results.add_page(listing, 1, rows, more=not count_only and len(rows) < result.total)

    @staticmethod
    async def _search_page(clients: Clients, query: str, page: int) -> SearchResponse:
        return await clients.search.search(query, page=page)

    async def page_of(self, pages: StablePages, page: int) -> tuple[list[Row], bool]:
        """The table's next page: the service's next rows that are neither shown nor newer than
        the first page (stablepages.py), so banners arriving meanwhile neither repeat nor insert rows."""
        banners, more = await pages.next()
        return [row_of(b) for b in banners], more

    @on(PagedTable.PageAdded, "#results")
    def show_progress(self) -> None:
        arrived = self.pages.arrived if self.pages is not None and not self.count_only else 0
        results = self.results
        self.show_status(
            paging_line(
                self.total,
                len(results.items),
                self.count_only,
                MAX_ROWS if results.truncated else None,
                results.more,
                arrived,
            )
        )

    def show_facets(self, result: SearchResponse, keep: bool = True) -> None:
        """Facet values as label, bar and count, sized to the list's width."""
        self.facet_result = result
        facet_list = self.facet_list
        wide = facet_list.outer_size.width >= 36
        facet_list.border_title = FACETS_TITLE if wide else for_console(self.app, FACETS_TITLE_NARROW)
        # The cells inside the border, padding and scrollbar, less an option's own padding (1 a side).
        room = max(12, facet_list.scrollable_content_region.width - 2)
        bar_cells = 6 if room >= 30 else 0  # narrow: the count alone
        groups = facet_groups(result.facets)
        counts = [row.count for _, rows in groups for row in rows]
        count_cells = len(f"{max(counts, default=0):,}")
        label_cells = max(4, room - bar_cells - count_cells - 2)
        options: list[Option] = []
        previous, self.facet_items = self.facet_items, []
        for name, rows in groups:
            options.append(Option(Text(name, style="bold", no_wrap=True), disabled=True))
            self.facet_items.append(None)
            for row in rows:
                label = pad(fit(row.label, label_cells), label_cells)
                options.append(
                    Option(
                        Text.assemble(
                            f"{label} ",
                            (for_console(self.app, bar(row.share, bar_cells)), "dim"),
                            f" {row.count:>{count_cells},}",
                        )
                    )
                )
                self.facet_items.append((name, row.value))
        was = facet_list.highlighted
        kept = previous[was] if was is not None and was < len(previous) else None
        facet_list.clear_options()
        facet_list.add_options(options)
        # After Enter adds a value (``keep``) the cursor stays on it (else on the first): the list
        # still shows where the keyboard is. A new query starts on the first (trial 28).
        values = [i for i, item in enumerate(self.facet_items) if item is not None]
        if values and was is not None:
            facet_list.highlighted = next((i for i in values if keep and self.facet_items[i] == kept), values[0])

    def on_resize(self) -> None:
        self.call_after_refresh(self._refit_facets)

    def _refit_facets(self) -> None:
        """The facets in force refitted to the list's new width: those of the search that answered
        last by then (a pane shown by a search resizes, and its answer may come first)."""
        if self.facet_result is not None:
            self.show_facets(self.facet_result)

    @on(DataTable.RowSelected, "#results")
    def open_host(self, event: DataTable.RowSelected) -> None:
        item = self.results.item(event.row_key.value)
        if item is not None:
            address, service = item
            self.post_message(OpenHost(address, service))

    @on(OptionList.OptionSelected, "#facets")
    def add_facet(self, event: OptionList.OptionSelected) -> None:
        self._refine(event.option_index, exclude=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """'-' excludes a facet's value on the facets only: elsewhere it is typed (on the results,
        '-port:80' lost its dash and searched for port 80: newcomer trial 3)."""
        return self.facet_list.has_focus if action == "exclude_facet" else True

    def action_exclude_facet(self) -> None:
        facets = self.facet_list
        if facets.has_focus and facets.highlighted is not None:
            self._refine(facets.highlighted, exclude=True)

    def _refine(self, index: int, exclude: bool) -> None:
        item = self.facet_items[index] if 0 <= index < len(self.facet_items) else None
        if item is None:
            return
        box = self.query_box
        box.value = self.refined = refine(box.value or self.current_query, item[0], item[1], exclude)
        self.run_query()

    def action_save_query(self) -> None:
        """Save the query in the box (else the last one run) in the directory, if it parses."""
        from spyglass.tui.screens.savequery import SaveQueryScreen

        box = self.query_box
        if box.value.strip() and not box.check():
            self.show_error("Fix the query first: " + str(parse(box.value).errors[0]), "query")  # goes once fixed
            return
        query = box.value.strip() or self.current_query
        if not query:
            self.show_error("Type a query first; ctrl+s saves it in the directory.")
            return

        clients = self.clients
        if clients is None:
            self.show_error("Not connected yet: ctrl+s again once the status line says connected.")
            return
        self.app.push_screen(SaveQueryScreen(query, partial(self.save_query, clients, query)))

    async def save_query(self, clients: Clients, query: str, title: str, tags: str, description: str) -> None:
        saved = await clients.directory.save(title, query, description, tags)
        self.post_message(QuerySaved())  # the directory pane shows it when next opened
        self.app.notify(
            f"Saved in the directory as #{saved.id}: {clean(title, one_line=True, max_chars=60)}", markup=False
        )

    def action_export(self) -> None:
        from spyglass.tui.screens.export import ExportScreen

        if not self.current_query:
            self.show_error("Run a query first; export writes all of its results.")
            return

        def chosen(path: Path | None) -> None:
            clients = self.clients
            if path is not None and clients is not None:
                self.call("export", self.export_to, clients, path)

        self.app.push_screen(ExportScreen(self.current_query), chosen)

    async def export_to(self, clients: Clients, path: Path) -> None:
        from spyglass.client import SpyglassError
        from spyglass.export import export

        self.show_status(f"exporting to {path}…")
        try:
            count = await export(clients.search, self.current_query, path)
        except (SpyglassError, OSError) as exc:
            # Worded here rather than by the app: it says how to resume.
            raise PaneFailure(f"export stopped: {exc} — export again to resume") from exc
        self.app.notify(f"Exported {plural(count, 'banner')} to {path}", markup=False)
        self.show_progress()
