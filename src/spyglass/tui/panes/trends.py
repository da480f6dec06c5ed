"""The trends pane: a query's services month by month over the index's history, as a chart or a
table; per facet its top values as stacked bars; a second query compared on the same chart; a
month range that narrows what is shown without asking again."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Input, Label, Static

from spyglass.present import trends as t
from spyglass.query import parse, parse_facets
from spyglass.safetext import safe_text
from spyglass.tui.panes.base import Pane
from spyglass.tui.widgets.queryinput import QueryInput
from spyglass.tui.widgets.trendchart import TrendChart

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import TrendsResponse

DEFAULT_FACETS = "country:5,port:5"
MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")


class TrendsPane(Pane):
    ID = "trends"
    TITLE = "Trends"
    KEYS = "f9,8"
    SECTION = "trends"
    HOME = "#trend-chart"
    # Text typed on the chart goes to the query, as on any list (digits switched panes: `Esc 443`
    # to narrow the chart opened Account, then Geo; newcomer trial 11).
    TYPED_FROM = (*Pane.TYPED_FROM, TrendChart)
    TYPED_INTO = "#query"
    WIDGETS = (QueryInput,)
    HELP = (
        "Banners of a query month by month over the whole history (enterprise). Enter runs; 'vs' "
        "compares a second query on one chart; from/to (YYYY-MM) narrow the months. "
        "v: next view (matches, then each facet), t: table, c: bars or lines."
    )
    BINDINGS = [
        Binding("slash", "focus_query", "Query", id="trends.query"),
        Binding("v", "next_view", "View", id="trends.view"),
        Binding("t", "toggle_table", "Table", id="trends.table"),
        Binding("c", "toggle_kind", "Bars/lines", id="trends.kind"),
    ]
    DEFAULT_CSS = """
    TrendsPane #trend-form { height: 1; }
    TrendsPane #trend-form Label { width: auto; padding: 0 1 0 1; color: $text-muted; }
    TrendsPane #trend-facets { width: 18; }
    TrendsPane #trend-compare { width: 1fr; }
    TrendsPane .month { width: 8; }
    TrendsPane #trend-status { height: auto; max-height: 2; color: $text-muted; }
    TrendsPane #trend-legend { height: auto; max-height: 2; }
    TrendsPane #trend-table { height: 1fr; display: none; }
    TrendsPane.tabled #trend-table { display: block; }
    TrendsPane.tabled TrendChart { display: none; }
    """

    # the widgets it drives
    query_box = getters.query_one(QueryInput)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.result: TrendsResponse | None = None
        self.compared: TrendsResponse | None = None
        self.shown_query = ""
        self.shown_compare = ""
        self.shown_form = ("", "", "")  # the query, facets and vs charted, as they were typed
        self.view = 0  # 0: matches; 1..: each facet in the order asked
        self.sizes: dict[str, int] = {}
        self.kind = "bar"
        self.compare_kind = "line"  # two queries: lines, or bars side by side (never stacked)
        self.vocabulary: tuple[set[str], set[str]] | None = None  # the host's filters and facets

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        yield QueryInput("trends: a query over every month seen, e.g. product:nginx — Enter runs")
        with Horizontal(id="trend-form"):
            yield Label("facets")
            yield Input(DEFAULT_FACETS, id="trend-facets", compact=True, select_on_focus=False)
            yield Label("vs")
            yield Input(placeholder="query to compare", id="trend-compare", compact=True, select_on_focus=False)
            yield Label("from")
            yield Input(placeholder="YYYY-MM", id="trend-from", classes="month", compact=True, select_on_focus=False)
            yield Label("to")
            yield Input(placeholder="YYYY-MM", id="trend-to", classes="month", compact=True, select_on_focus=False)
        yield Static("", id="trend-status")
        yield TrendChart("Type a query and press Enter to chart its services month by month.", id="trend-chart")
        yield DataTable(id="trend-table", zebra_stripes=True, cursor_type="row")
        yield Static("", id="trend-legend")

    def on_mount(self) -> None:
        self.query_box.count_only = True  # trends cost no credits: the box says "free"

    async def load(self, clients: Clients) -> None:
        """The names this trends host serves, so that the pane can say which one it does not."""
        filters, facets = await clients.trends.filters(), await clients.trends.facets()
        self.vocabulary = (set(filters), set(facets))
        self.query_box.known_filters = ("trends", frozenset(filters))  # its check says so as typed

    def refresh_pane(self) -> None:
        """r: the names the host serves again, and what the form says asked again (trends are free):
        a "vs" typed since the last Enter is charted too."""
        self.reload()
        if self.result is not None or self.query_box.value.strip():
            self.run_query(again=True)

    def run_arg(self, arg: str) -> None:
        self.query_box.value = arg
        self.focus_box("#query")
        self.run_query()

    def action_focus_query(self) -> None:
        self.focus_box("#query")

    @on(Input.Submitted)
    def submitted(self, event: Input.Submitted) -> None:
        """Enter in any box of the form charts what the whole form says: a "vs" typed, then a month,
        then Enter in the month's box is compared (it was left out until Enter in its own box)."""
        self.run_query(again=not event.input.has_class("month"))

    def problem(self, query: str, facets: str, compare: str) -> str | None:
        """What stops these from running, in words; None when they may run."""
        if not query.strip():
            return "Type a query first."
        for label, source in (("Query", query), ("Compared query", compare)):
            if not source.strip():
                continue
            parsed = parse(source)
            if parsed.errors:
                return f"{label}: {parsed.errors[0]}"
            unknown = [f.name for f in parsed.filters if self.vocabulary and f.name not in self.vocabulary[0]]
            if unknown:
                return f"{label}: trends have no filter '{unknown[0]}'"
        try:
            wanted = parse_facets(facets)
        except ValueError as exc:
            return f"Facets: {exc}"
        unknown = [f.name for f in wanted if self.vocabulary and f.name not in self.vocabulary[1]]
        return f"Facets: trends have no facet '{unknown[0]}'" if unknown else None

    def run_query(self, again: bool = False) -> None:
        """Chart what the form says: asked for, unless ``again`` is False and only the months changed."""
        box = self.query_box
        facets = self.query_one("#trend-facets", Input).value
        compare = self.query_one("#trend-compare", Input).value.strip()
        problem = self.problem(box.value, facets, compare)
        if problem is None and self.month_bounds() is None:
            return
        clients = self.clients
        if problem is not None:
            self.show_error(problem)
            return
        if not again and self.result is not None and (box.value, facets, compare) == self.shown_form:
            self.show()  # a new month range narrows what is shown without asking again
            return
        if clients is None:
            self.when_connected(self.run_query)
            return
        self.show_error(None)
        box.remember()
        self.call("trends", self.fetch, clients, box.value, facets, compare)

    async def fetch(self, clients: Clients, query: str, facets: str, compare: str) -> None:
        self.show_status(f"asking: {query}")
        try:
            result = await clients.trends.search(query, facets or None)
            compared = await clients.trends.search(compare) if compare else None
        except Exception:
            self.show_status("")
            raise
        self.result, self.compared = result, compared
        self.sizes = {f.name: f.size for f in parse_facets(facets)}  # the values charted per facet
        self.shown_query, self.shown_compare = query, compare
        self.shown_form = (query, facets, compare)
        self.view = min(self.view, len(result.facets))
        self.show()

    def month_bounds(self) -> tuple[str | None, str | None] | None:
        """The from and to months typed (None where empty); None, with the error shown, if one
        is not a month or the start is after the end."""
        bounds = []
        for name in ("#trend-from", "#trend-to"):
            text = self.query_one(name, Input).value.strip()
            if text and not MONTH.fullmatch(text):
                self.show_error(f"Months are YYYY-MM, e.g. 2025-06: not {text!r}")
                return None
            bounds.append(text or None)
        problem = t.range_problem(bounds[0], bounds[1])
        if problem:
            self.show_error(f"No months: {problem}.")
            return None
        self.show_error(None)
        return bounds[0], bounds[1]

    def views(self) -> list[str]:
        return ["matches", *(self.result.facets if self.result else [])]

    def current(self) -> tuple[list[str], list[t.Series], str, str]:
        """(months, series, chart kind, what the view is) of what is to be shown."""
        assert self.result is not None
        months = [m.month for m in self.result.matches]
        start, end = self.month_bounds() or (None, None)
        window = t.month_window(months, start, end)
        name = self.views()[self.view]
        if name == "matches":
            series = [t.Series(t.label(self.shown_query, 40), [m.count for m in self.result.matches][window])]
            if self.compared is not None:
                counts = {m.month: m.count for m in self.compared.matches}
                series.append(t.Series(t.label(self.shown_compare, 40), [counts.get(m, 0) for m in months][window]))
            kind = self.compare_kind if len(series) > 1 else self.kind
            return months[window], series, kind, "services per month"
        series = t.facet_series(self.result, name, min(self.sizes.get(name, 5), len(t.PALETTE)), window)
        return months[window], series, self.kind, f"{t.label(name)}: top values per month"

    def show(self) -> None:
        if self.result is None:
            return
        months, series, kind, title = self.current()
        chart = self.query_one(TrendChart)
        chart.border_title = title
        chart.show(months, series, kind, stack=not self.comparing)
        self.fill_table(months, series)
        self.show_legend(series, kind, chart.look)
        span = f"{months[0]} to {months[-1]}" if months else "no months in that range"
        views = " · ".join(f"[{v}]" if i == self.view else v for i, v in enumerate(self.views()))
        # the busiest month: a sum of months would count a service once for each month it was seen in
        peaks = " vs ".join(f"{max(s.counts, default=0):,}" for s in series)
        counted = f"up to {peaks} a month, " if self.view == 0 else ""
        self.show_status(f"{counted}{span} — view (v): {views}")

    def fill_table(self, months: list[str], series: list[t.Series]) -> None:
        header, rows = t.table(months, series)
        table = self.query_one("#trend-table", DataTable)
        table.clear(columns=True)
        table.add_columns(*(Text(h, no_wrap=True) for h in header))
        for row in rows:
            table.add_row(*(Text(cell, justify="left" if i == 0 else "right") for i, cell in enumerate(row)))

    @property
    def comparing(self) -> bool:
        """Two queries on the chart (the matches view with a "vs")."""
        return self.compared is not None and self.view == 0

    def show_legend(self, series: list[t.Series], kind: str, look: t.Look) -> None:
        text = Text()
        order = "stacked, bottom to top: " if kind == "bar" and len(series) > 1 and look.stack else ""
        text.append(order, style="dim")
        for colour, swatch, name in t.legend(series, kind, look):
            text.append(f"{swatch * 2} ", style=colour)
            text.append(name)
            text.append("   ")
        self.query_one("#trend-legend", Static).update(text)

    def show_status(self, text: str) -> None:
        # It takes a second line where it needs one (80 columns, a "vs"): the last view was cut off.
        self.query_one("#trend-status", Static).update(safe_text(text, one_line=True))

    def action_next_view(self) -> None:
        if self.result is not None:
            self.view = (self.view + 1) % len(self.views())
            self.show()

    def action_toggle_table(self) -> None:
        self.toggle_class("tabled")

    def action_toggle_kind(self) -> None:
        if self.comparing:
            self.compare_kind = "line" if self.compare_kind == "bar" else "bar"
        else:
            self.kind = "line" if self.kind == "bar" else "bar"
        self.show()
