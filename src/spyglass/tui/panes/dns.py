"""The DNS pane: a domain's subdomains and records from the index (1 query credit a page), and
hostnames resolved or addresses reversed by the backend's name server; Enter on a row opens its
IP address in the host pane."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, Checkbox, DataTable, Input, Select, Static

from spyglass.present import dns
from spyglass.safetext import clean, safe_text
from spyglass.tui.messages import OpenHost
from spyglass.tui.panes.base import Pane
from spyglass.tui.widgets.boxes import put_text
from spyglass.tui.widgets.check import Check
from spyglass.tui.widgets.pagedtable import PagedTable, Row
from spyglass.tui.widgets.table import PADDING, Column

if TYPE_CHECKING:
    from spyglass.client import Clients

TOOLS = (("domain", "domain"), ("resolve", "resolve"), ("reverse", "reverse"))
MAX_NAME = 64  # cells of the Name column at most
RECORD_TYPES = ("any", "A", "AAAA", "CNAME", "NS", "SOA", "MX", "TXT")
COLUMNS = [
    Column("name", "Name", 26),
    Column("type", "Type", 4, rank=1),
    Column("value", "Value", 15, rank=0, flex=True),
    Column("seen", "Last seen", 19, rank=2),
]


def items_of(text: str) -> list[str]:
    """What was typed: names or addresses, separated by commas or spaces."""
    return [item for item in text.replace(",", " ").split() if item]


def pick_tool(items: list[str], chosen: str) -> str:
    """The lookup that can take ``items``: addresses are reversed, several names resolved."""
    from spyglass.netools.targets import is_ip

    if items and all(is_ip(i) for i in items):
        return "reverse"
    if chosen == "reverse" or (chosen == "domain" and (len(items) > 1 or items and "." not in items[0].strip("."))):
        return "resolve"  # several names, or one without a dot (localhost): no domain to look up
    return chosen


AMONG_NAMES = "a name: addresses are reversed, names resolved; look them up apart"


def not_for(tool: str, item: str) -> str:
    """What ``item`` is not, for ``tool`` ("" when it will do): an address among names is one
    (it was resolved as a name: newcomer trial 10)."""
    from spyglass.netools.targets import bad_address, is_hostname, is_ip

    if bad_address(item):
        return "a valid IP address (four numbers from 0 to 255)"
    if tool == "reverse":
        return "" if is_ip(item) else "an IP address"
    if is_ip(item):
        return AMONG_NAMES
    return "" if is_hostname(item) else "a domain or hostname"


class DnsPane(Pane):
    ID = "dns"
    TITLE = "DNS"
    KEYS = "f11,0"
    SECTION = "dns"
    TYPED_TERMS = frozenset({"dns-input"})  # names or addresses: demo.example then 198 is two
    HOME = "#dns-results"
    HELP = (
        "domain: the subdomains and records the index knows for a domain (1 query credit a page; "
        "past the last row loads the next). resolve: the address of hostnames; reverse: the names "
        "of IP addresses (free, asked of the backend's name server). Enter on a row opens its IP."
    )
    BINDINGS = [Binding("slash", "focus_input", "Lookup", id="dns.input")]
    DEFAULT_CSS = """
    DnsPane #dns-form { height: 1; margin: 1 0 0 0; }
    DnsPane #dns-form Input { width: 1fr; }
    DnsPane #dns-form Select { width: 12; }
    DnsPane #dns-form #dns-type { width: 9; }
    DnsPane #dns-form Checkbox { width: auto; border: none; padding: 0 1; margin: 0; }
    DnsPane #dns-form Button { min-width: 8; }
    DnsPane #dns-status { height: auto; max-height: 2; color: $text-muted; margin-top: 1; }
    DnsPane #dns-results { height: 1fr; border: round $primary 50%; }
    """

    # the widgets it drives
    input_box = getters.query_one("#dns-input", Input)
    results = getters.query_one("#dns-results", PagedTable)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.domain: tuple[str, bool, str | None] | None = None  # the domain lookup shown: name, history, type
        self.summary = ""  # of the domain shown
        self.tool_chosen = self.tool_shown = "domain"  # the lookup the user picked, and the one shown
        self.answered = ""  # what the rows shown answer, as it was typed

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(id="dns-form"):
            yield Input(
                placeholder="domain, hostnames or IPs, Enter",
                id="dns-input",
                compact=True,
                select_on_focus=False,
            )
            yield Select(TOOLS, value="domain", allow_blank=False, id="dns-tool", compact=True)
            yield Select([(t, t) for t in RECORD_TYPES], value="any", allow_blank=False, id="dns-type", compact=True)
            yield Check("history", id="dns-history", compact=True)
            yield Button("Look up", id="dns-run", compact=True, variant="primary")
        yield Static("", id="dns-status")
        results = PagedTable(COLUMNS, id="dns-results")
        results.border_title = "Records (Enter opens the IP)"
        yield results

    def on_mount(self) -> None:
        self.show_status("domain costs 1 query credit a page; resolve and reverse are free")

    def show_status(self, text: str) -> None:
        self.query_one("#dns-status", Static).update(safe_text(text, one_line=True, max_chars=300))

    def action_focus_input(self) -> None:
        self.focus_box("#dns-input")

    def refresh_cost(self) -> str | None:
        return "1 query credit" if self.domain else None

    def refresh_pane(self) -> None:
        if self.input_box.value.strip():
            self.run()

    def run_arg(self, arg: str) -> None:
        """Addresses are reversed, several names resolved, one name looked up as a domain."""
        put_text(self.input_box, clean(arg, one_line=True, max_chars=2000))
        self.tool_chosen = "domain"
        self.run()

    def show_tool(self, tool: str) -> None:
        """The lookup a run chose, shown in the selector (the next run chooses afresh from the
        user's own choice, not from this)."""
        self.tool_shown = tool
        self.query_one("#dns-tool", Select).value = tool

    @on(Select.Changed, "#dns-tool")
    def _tool_picked(self, event: Select.Changed) -> None:
        if event.value != self.tool_shown:  # the user's own choice (ours is what show_tool set)
            self.tool_chosen = self.tool_shown = str(event.value)

    @on(Input.Submitted, "#dns-input")
    @on(Button.Pressed, "#dns-run")
    def run(self) -> None:
        items = items_of(self.input_box.value)
        tool = pick_tool(items, self.tool_chosen)
        problems = [(item, why) for item in items if (why := not_for(tool, item))]
        problems.sort(key=lambda problem: problem[1] == AMONG_NAMES)  # an item that is wrong anyway first
        if not items or problems:
            # The rows shown stay, named: not read as this input's answer (they stood unnamed above
            # it once), nor wiped by a slip in the box (newcomer trial 17; as the Host pane does).
            shown = f" (still showing {clean(self.answered, one_line=True, max_chars=60)})" if self.answered else ""
            self.show_error(
                f"{clean(problems[0][0], one_line=True, max_chars=100)}: not {problems[0][1]}{shown}"
                if problems
                else "Type a domain, hostnames or IP addresses first."
            )
            return
        self.show_tool(tool)  # (after a refusal, it still names the lookup of the rows shown)
        clients = self.clients
        if clients is None:
            self.show_error("Not connected yet: what you typed stays here until you run it again.")
            return
        self.show_error(None)
        self.workers.cancel_group(self, "page-dns-results")
        if tool == "domain":
            kind = str(self.query_one("#dns-type", Select).value)
            history = self.query_one("#dns-history", Checkbox).value
            domain = (items[0], history, None if kind == "any" else kind)
            listing = self.results.begin(lambda page: self.records_of(clients, domain, page))
            self.call("dns", self.lookup_domain, clients, domain, listing)
        else:
            self.call("dns", self.lookup, clients, tool, items, self.results.begin())

    @property
    def ips(self) -> list[str]:
        """The IP address of each row, "" when it has none."""
        return self.results.items

    def failed(self, listing: int) -> None:
        """A lookup failed: the rows of the one before are not its answer, so they go (the error
        line says why)."""
        if listing == self.results.listing:
            self.domain = None
            self.answered = ""
            self.results.add_page(listing, 1, [], more=False)
            self.show_status("")

    async def lookup_domain(self, clients: Clients, domain: tuple[str, bool, str | None], listing: int) -> None:
        from spyglass.client import NotFound

        name = domain[0]
        self.show_status(f"looking up {name}…")
        try:
            rows, more = await self.records_of(clients, domain, 1)
        except NotFound:  # the index knows nothing under it: the name server may know the name
            if listing == self.results.listing:
                self.show_tool("resolve")
                await self.lookup(clients, "resolve", [name], listing, f"the index knows no records under {name}; ")
            return
        except Exception:
            self.failed(listing)
            raise  # the app reports why
        if listing != self.results.listing:
            return
        self.domain, self.answered = domain, name
        self.results.add_page(listing, 1, rows, more)

    async def records_of(
        self, clients: Clients, domain: tuple[str, bool, str | None], page: int
    ) -> tuple[list[Row], bool]:
        name, history, kind = domain
        info = await clients.dns.domain(name, history=history, type=kind, page=page)
        self.summary = dns.domain_summary(info)
        rows = [
            (
                {
                    "name": Text(name, no_wrap=True),
                    "type": Text(kind),
                    "value": Text(value, no_wrap=True),
                    "seen": Text(seen),
                },
                record.value if record.type in ("A", "AAAA") else "",
            )
            for (name, kind, value, seen), record in zip(dns.record_rows(info), info.data, strict=True)
        ]
        return rows, info.more

    @on(PagedTable.PageAdded, "#dns-results")
    def _fit_names(self) -> None:
        """The Name column as wide as the longest name shown (within reason): names are what the
        rows are about, so they take the room before the values do."""
        longest = max((len(str(cells["name"])) for cells in self.results.records.values()), default=0)
        others = sum(column.width + PADDING for column in COLUMNS[1:3])  # Type and Value keep their room
        width = min(max(COLUMNS[0].width, longest), MAX_NAME, max(COLUMNS[0].width, self.results.room() - others - 2))
        self.results.use_columns([replace(COLUMNS[0], width=width), *COLUMNS[1:]])

    @on(PagedTable.PageAdded, "#dns-results")
    def _domain_page(self) -> None:
        if self.domain is not None:
            more = " — past the last row loads 100 more (1 query credit)" if self.results.more else ""
            self.show_status(f"{self.summary}; {len(self.ips):,} shown{more}")

    async def lookup(self, clients: Clients, tool: str, items: list[str], listing: int, note: str = "") -> None:
        self.show_status(f"asking the name server about {len(items)} {'address' if tool == 'reverse' else 'name'}(s)…")
        try:
            found = await (clients.dns.reverse(items) if tool == "reverse" else clients.dns.resolve(items))
        except Exception:
            self.failed(listing)
            raise  # the app reports why
        if listing != self.results.listing:
            return
        self.domain = None
        rows: list[Row] = []
        answered = 0
        for asked, values in dns.answer_rows(found):
            answered += bool(values)
            for value in values or ["(none)"]:
                ip = asked if tool == "reverse" else value if values else ""
                cells = {
                    "name": Text(asked, no_wrap=True),
                    "type": Text("PTR" if tool == "reverse" else ("AAAA" if ":" in value else "A")),
                    "value": Text(value, no_wrap=True, style="" if values else "dim"),
                    "seen": Text(""),
                }
                rows.append((cells, ip))
        self.results.add_page(listing, 1, rows, more=False)
        self.answered = " ".join(items)
        self.show_status(f"{note}{answered} of {len(found)} answered by the backend's name server")

    @on(DataTable.RowSelected, "#dns-results")
    def open_host(self, event: DataTable.RowSelected) -> None:
        ip = self.results.item(event.row_key.value)
        if ip:
            self.post_message(OpenHost(ip))
        elif ip is not None:
            self.app.notify("This row has no IP address to open", severity="warning", markup=False)
