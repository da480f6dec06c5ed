"""The DNS pane: a domain's subdomains and records from the index (1 query credit a page), and
hostnames resolved or addresses reversed by the backend's name server; Enter on a row opens its
IP address in the host pane."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, Checkbox, DataTable, Input, Select, Static

from spyglass.present import dns
from spyglass.safetext import clean, safe_text
from spyglass.tui.panes.base import OpenHost, Pane
from spyglass.tui.widgets.table import Column, Table

if TYPE_CHECKING:
    from spyglass.client import Clients

TOOLS = (("domain", "domain"), ("resolve", "resolve"), ("reverse", "reverse"))
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
    if chosen == "reverse" or (chosen == "domain" and len(items) > 1):
        return "resolve"
    return chosen


class DnsPane(Pane):
    ID = "dns"
    TITLE = "DNS"
    KEYS = "f11,0"
    SECTION = "dns"
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
            yield Checkbox("history", id="dns-history", compact=True)
            yield Button("Look up", id="dns-run", compact=True, variant="primary")
        yield Static("", id="dns-status")
        results = Table(COLUMNS, id="dns-results")
        results.border_title = "Records (Enter opens the IP)"
        yield results

    def on_mount(self) -> None:
        self.ips: list[str] = []  # the IP address of each row, "" when it has none
        self.domain: tuple[str, bool, str | None] | None = None  # the domain lookup shown: name, history, type
        self.pages = 0
        self.more = False
        self.generation = 0
        self.show_status("domain costs 1 query credit a page; resolve and reverse are free")

    def show_status(self, text: str) -> None:
        self.query_one("#dns-status", Static).update(safe_text(text, one_line=True, max_chars=300))

    def action_focus_input(self) -> None:
        self.focus_box("#dns-input")

    def refresh_cost(self) -> str | None:
        return "1 query credit" if self.domain else None

    def refresh_pane(self) -> None:
        if self.query_one("#dns-input", Input).value.strip():
            self.run()

    def run_arg(self, arg: str) -> None:
        """Addresses are reversed, several names resolved, one name looked up as a domain."""
        self.query_one("#dns-input", Input).value = clean(arg, one_line=True, max_chars=2000)
        self.query_one("#dns-tool", Select).value = "domain"
        self.run()

    @on(Input.Submitted, "#dns-input")
    @on(Button.Pressed, "#dns-run")
    def run(self) -> None:
        from spyglass.netools.targets import is_hostname, is_ip

        items = items_of(self.query_one("#dns-input", Input).value)
        tool = pick_tool(items, str(self.query_one("#dns-tool", Select).value))
        self.query_one("#dns-tool", Select).value = tool
        valid = is_ip if tool == "reverse" else is_hostname
        wrong = next((i for i in items if not valid(i)), None)
        if not items:
            self.show_error("Type a domain, hostnames or IP addresses first.")
            return
        if wrong is not None:
            what = "an IP address" if tool == "reverse" else "a domain or hostname"
            self.show_error(f"{clean(wrong, one_line=True, max_chars=100)}: not {what}")
            return
        clients = self.clients
        if clients is None:
            self.show_error("Not connected yet: what you typed stays here until you run it again.")
            return
        self.show_error(None)
        self.generation += 1
        self.workers.cancel_group(self, "dns-page")
        if tool == "domain":
            kind = str(self.query_one("#dns-type", Select).value)
            history = self.query_one("#dns-history", Checkbox).value
            self.call("dns", self.lookup_domain, clients, items[0], history, None if kind == "any" else kind)
        else:
            self.call("dns", self.lookup, clients, tool, items, self.generation)

    def clear(self) -> Table:
        table = self.query_one("#dns-results", Table)
        table.clear_records()
        self.ips = []
        return table

    def failed(self, generation: int, status: str) -> None:
        """A lookup failed: the rows of the one before are not its answer, so they go."""
        if generation == self.generation:
            self.domain, self.more = None, False
            self.clear()
            self.show_status(status)

    async def lookup_domain(self, clients: Clients, name: str, history: bool, kind: str | None) -> None:
        generation = self.generation
        self.show_status(f"looking up {name}…")
        try:
            info = await clients.dns.domain(name, history=history, type=kind)
        except Exception:
            self.failed(generation, f"no records for {name}: the lookup failed")
            raise  # the app reports why
        if generation != self.generation:
            return
        self.domain = (name, history, kind)
        self.pages, self.more = 1, info.more
        self.clear()
        self.add_records(info)

    def add_records(self, info) -> None:
        table = self.query_one("#dns-results", Table)
        with self.app.batch_update():
            for (name, kind, value, seen), record in zip(dns.record_rows(info), info.data, strict=True):
                table.add_record(
                    {
                        "name": Text(name, no_wrap=True),
                        "type": Text(kind),
                        "value": Text(value, no_wrap=True),
                        "seen": Text(seen),
                    },
                    key=str(len(self.ips)),
                )
                self.ips.append(record.value if record.type in ("A", "AAAA") else "")
        more = " — past the last row loads 100 more (1 query credit)" if self.more else ""
        self.show_status(f"{dns.domain_summary(info)}; {len(self.ips):,} shown{more}")

    async def lookup(self, clients: Clients, tool: str, items: list[str], generation: int) -> None:
        self.show_status(f"asking the name server about {len(items)} {'address' if tool == 'reverse' else 'name'}(s)…")
        try:
            found = await (clients.dns.reverse(items) if tool == "reverse" else clients.dns.resolve(items))
        except Exception:
            self.failed(generation, "no answers: the lookup failed")
            raise  # the app reports why
        if generation != self.generation:
            return
        self.domain = None
        table = self.clear()
        answered = 0
        for asked, values in dns.answer_rows(found):
            answered += bool(values)
            for value in values or ["(none)"]:
                ip = asked if tool == "reverse" else value if values else ""
                table.add_record(
                    {
                        "name": Text(asked, no_wrap=True),
                        "type": Text("PTR" if tool == "reverse" else ("AAAA" if ":" in value else "A")),
                        "value": Text(value, no_wrap=True, style="" if values else "dim"),
                        "seen": Text(""),
                    },
                    key=str(len(self.ips)),
                )
                self.ips.append(ip)
        self.show_status(f"{answered} of {len(found)} answered by the backend's name server")

    @on(DataTable.RowHighlighted, "#dns-results")
    def maybe_next_page(self, event: DataTable.RowHighlighted) -> None:
        clients = self.clients
        if self.domain and self.more and event.cursor_row >= len(self.ips) - 1 and clients is not None:
            self.call("dns-page", self.next_page, clients, self.domain, self.pages + 1, self.generation)

    async def next_page(self, clients: Clients, domain: tuple[str, bool, str | None], page: int, generation: int):
        name, history, kind = domain
        info = await clients.dns.domain(name, history=history, type=kind, page=page)
        if generation != self.generation or page != self.pages + 1:
            return
        self.pages, self.more = page, info.more
        self.add_records(info)

    @on(DataTable.RowSelected, "#dns-results")
    def open_host(self, event: DataTable.RowSelected) -> None:
        index = int(event.row_key.value or -1)
        if 0 <= index < len(self.ips) and self.ips[index]:
            self.post_message(OpenHost(self.ips[index]))
        elif 0 <= index < len(self.ips):
            self.app.notify("This row has no IP address to open", severity="warning", markup=False)
