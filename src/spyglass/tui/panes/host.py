"""The host pane: who holds an address and where, its open services in detail, and how each
service changed between scans; what scans saw besides (up, ports closed or filtered) in its summary,
and in full where the host has no open service."""

from __future__ import annotations

import ipaddress
from functools import partial
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Input, Label, Static

from spyglass.present.host import host_facts, service_rows
from spyglass.present.seen import seen_lines
from spyglass.present.service import banner_for_clipboard
from spyglass.safetext import clean, safe_text
from spyglass.tui.messages import PingTarget
from spyglass.tui.panes.base import Pane, PaneFailure
from spyglass.tui.widgets.boxes import put_text
from spyglass.tui.widgets.facts import Facts
from spyglass.tui.widgets.pivots import PivotList
from spyglass.tui.widgets.table import Column, Table

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import Banner, HostRecord


# Current: when each was seen outranks what changed, often nothing there (newcomer trial 19: at 120
# columns Seen gave way to an empty Changes).
COLUMNS = [
    Column("port", "Port", 9),
    Column("product", "Product", 20, rank=1),
    Column("seen", "Seen", 16, rank=2),
    Column("changes", "Changes", 10, rank=3, flex=True),
]
# History: the same service once per scan, told apart by when it was seen and what changed.
HISTORY_COLUMNS = [
    Column("port", "Port", 9),
    Column("product", "Product", 16, rank=3),
    Column("seen", "Seen", 16, rank=1),
    Column("changes", "Changes", 8, rank=2, flex=True),
]


class HostPane(Pane):
    ID = "host"
    TITLE = "Host"
    KEYS = "f3,2"
    SECTION = "search"
    HOME = "#services"
    HELP = (
        "An address: who holds it and where, its services in detail, and what changed between scans. "
        "Type an IP and Enter, or open a search result."
    )
    BINDINGS = [
        Binding("h", "toggle_history", "History", id="host.history"),
        Binding("c", "copy_ip", "Copy IP", id="host.copy_ip"),
        Binding("y", "copy_banner", "Copy banner", id="host.copy_banner"),
        Binding("p", "geo", "Ping from everywhere", id="host.geo"),
    ]
    DEFAULT_CSS = """
    HostPane { overflow-y: hidden; }
    HostPane #host-form { height: 1; margin: 1 0 0 0; }
    HostPane #host-form Label { width: auto; padding: 0 1 0 0; }
    HostPane #host-ip { width: 1fr; }
    HostPane #host-top, HostPane #host-bottom { height: 1fr; }
    HostPane #summary-box { width: 1fr; border: round $primary 50%; padding: 0 1; }
    HostPane #summary-box:focus-within { border: round $primary; }
    HostPane #summary-box Facts { border: none; padding: 0; }
    HostPane #services { width: 1fr; height: 1fr; border: round $primary 50%; }
    HostPane #service-box { width: 2fr; border: round $primary 50%; padding: 0 1; }
    HostPane #service-box:focus-within { border: round $primary; }
    HostPane #service-detail { height: auto; }
    HostPane #host-pivots { width: 1fr; height: 1fr; }
    """

    # the widgets it drives
    services = getters.query_one("#services", Table)
    summary = getters.query_one("#host-summary", Facts)
    pivot_list = getters.query_one(PivotList)
    service_detail = getters.query_one("#service-detail", Static)
    service_box = getters.query_one("#service-box", VerticalScroll)
    ip_box = getters.query_one("#host-ip", Input)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.record: HostRecord | None = None
        self.history = False
        self.banners: list[Banner] = []
        self.wanted_service = ""  # the service to select once the host is shown (opened from a result)
        self.looking_up = ""  # the address being fetched: h while it comes asks for its history

    def compose(self) -> ComposeResult:
        with Horizontal(id="host-form"):
            yield Label("Address")
            yield Input(placeholder="IP address, then Enter", id="host-ip", compact=True, select_on_focus=False)
        yield self.compose_error()
        with Horizontal(id="host-top"):
            with VerticalScroll(id="summary-box") as summary:  # every row within reach at 80x24
                summary.border_title = "Host"
                yield Facts("", id="host-summary")
            services = Table(COLUMNS, id="services")
            services.border_title = "Services"
            yield services
        with Horizontal(id="host-bottom"):
            with VerticalScroll(id="service-box") as box:  # scrolls on its own: the services stay in view
                box.border_title = "Service"
                yield Static("", id="service-detail")
            yield PivotList(id="host-pivots")

    def on_mount(self) -> None:
        self.summary.show([("", "open a result from Search, or type an address")])

    def focus_first(self) -> None:
        # With a host shown, the services have the keyboard (h, c, y, p work); else the address box.
        target = "#services" if self.record is not None else "#host-ip"
        self.query_one(target).focus()

    async def load(self, clients: Clients) -> None:
        """The host shown, again: as a lookup, which a newer one cancels, and never once another is
        asked for (a host opened on a stale pane lost to the old one's answer: newcomer trial 13)."""
        if self.record is not None and not self.looking_up:
            self.fetch(clients, self.record.ip_str)

    def type_into(self, box: Input, character: str) -> None:
        """Typing while the services have the keyboard starts another address: the box holds one,
        and the shown one would become 198.18.0.93192.0.2.77 (a refused one left with Esc, whose
        problem then went, 198.18.232198.19.52.122: newcomer trial 12)."""
        box.value = ""
        super().type_into(box, character)

    def run_arg(self, arg: str) -> None:
        """``ADDRESS``, or ``ADDRESS PORT/TRANSPORT``: the host, on that service, on its current
        services (h then shows its history whatever the last host showed: `Esc g j j Enter h`
        does the same every time)."""
        address, _, service = arg.strip().partition(" ")
        self.history = False
        self.wanted_service = service.strip()
        put_text(self.ip_box, clean(address, one_line=True, max_chars=64))  # it may come from a server
        self.submitted()

    def form_problem(self) -> str | None:
        raw = self.ip_box.value.strip()
        shown = f" (still showing {self.record.ip_str})" if self.record is not None else ""
        try:
            address = ipaddress.ip_address(raw)
        except ValueError:
            try:  # a network: its hosts are a search
                network = ipaddress.ip_network(raw, strict=False)
            except ValueError:
                return f"{raw or 'nothing'}: not an IP address{shown}"
            return f"{raw}: a network, not one address: search net:{network} in Search (F2){shown}"
        if getattr(address, "scope_id", None):  # as the backend refuses it (newcomer trial 19: it wiped the host)
            return f"{raw}: a zone id names an interface of one machine: give the address alone{shown}"
        return None

    @on(Input.Submitted, "#host-ip")
    def submitted(self) -> None:
        """Enter (or a host opened from elsewhere): the services take the keyboard at once, so h, c,
        y and p typed while the host comes act on it rather than being typed after its address
        (text typed there still goes to the box). The focus moves here, on the user's key, and
        never when an answer arrives: by then the user may have moved on (Tab to the pivots)."""
        if self.lookup():
            self.services.focus()

    def lookup(self) -> bool:
        """Ask for the address in the box; False if it is none. A refused one never clears the host
        shown (its problem says which host that is): a slip in the box loses nothing."""
        if self.say_form_problem():  # (it stays while the box holds no address, then goes)
            self.ip_box.select_all()  # the next address typed replaces it: 999.1.1.1198.18.0.0 was none
            self.workers.cancel_group(self, "lookup")
            return False
        ip = str(ipaddress.ip_address(self.ip_box.value.strip()))
        if self.record is not None and ip != self.record.ip_str:
            self.history = False  # another host starts on its current services, as one opened from a result
        self.ask(ip)
        return True

    def ask(self, ip: str) -> None:
        clients = self.clients
        if clients is None:
            self.when_connected(partial(self.ask, ip))
            return
        self.show_error(None)
        self.fetch(clients, ip)

    def fetch(self, clients: Clients, ip: str) -> None:
        self.looking_up = ip
        self.call("lookup", self._fetch, clients, ip)

    async def _fetch(self, clients: Clients, ip: str) -> None:
        from spyglass.client import NotFound

        try:
            record = await clients.search.host(ip, history=self.history)
        except Exception as exc:
            if self.record is not None and self.record.ip_str != ip:
                self.clear_record()  # never show one host under another's address
            if self.ip_box.value.strip() == ip:
                self.ip_box.select_all()  # refused (no such host): the next address typed replaces it
            if isinstance(exc, NotFound):  # which address, in words ("for that IP. (HTTP 404)": trial 26)
                raise PaneFailure(f"No information available for {ip}: nothing is indexed there") from None
            raise
        finally:
            if self.looking_up == ip:
                self.looking_up = ""
        new_host = self.record is None or self.record.ip_str != record.ip_str
        index = self.selected_index()
        if not new_host and not self.wanted_service and index is not None:
            # The same host again (h, r, a reload): on the service selected, not on its first one.
            self.wanted_service = self._service_of(str(index))
        self.record = record
        self.show_record(record)
        if new_host:  # another host starts at the top, not where the last one was scrolled to
            for box in self.query("#summary-box, #service-box, #host-pivots"):
                box.scroll_home(animate=False, immediate=True)

    def clear_record(self) -> None:
        self.record, self.banners = None, []
        self.summary.show([("", "open a result from Search, or type an address")])
        self.services.clear_records()
        self.service_detail.update("")
        self.service_box.border_title = "Service"
        self.pivot_list.show(None)

    def show_record(self, r: HostRecord) -> None:
        view = "history: every scan (h for current)" if self.history else "current services (h for history)"
        self.summary.show([*host_facts(r), ("view", view)])
        table = self.services
        # History: the services take the summary's room too (it is the same host), for Seen and Changes.
        self.query_one("#summary-box").display = not self.history
        table.use_columns(HISTORY_COLUMNS if self.history else COLUMNS)
        table.border_title = "Services: every scan (h: current)" if self.history else "Services (h: history)"
        table.clear_records()
        self.banners = list(r.data)
        for index, cells in enumerate(service_rows(r)):
            table.add_record(
                {col.key: Text(cell, no_wrap=True) for col, cell in zip(COLUMNS, cells, strict=True)}, key=str(index)
            )
        # In port order (then newest first: the record lists them so), or as the user sorted them:
        # sorted again, as rows added are not (history came newest first where no column moved)
        table.sort_by(*(table.sorted_by or ("port", False)))
        wanted, self.wanted_service = self.wanted_service, ""
        keys = [table.key_at(row) for row in range(table.row_count)]
        # (a port alone, as an alert's notice names a service, is its first service on that port)
        chosen = next((n for n, k in enumerate(keys) if wanted in (s := self._service_of(k), s.split("/")[0])), 0)
        if keys:
            table.move_cursor(row=chosen, animate=False)
            self.show_service(int(keys[chosen] or 0))
        else:  # no open service: what scans saw of the host (up, its ports not open), if anything
            saw = seen_lines(r, indent=" ")
            self.service_box.border_title = "Seen by scans: no open service" if saw else "Service"
            self.service_detail.update(Text("\n".join(saw), no_wrap=True) if saw else "")
            self.pivot_list.show(None)

    def _service_of(self, key: str | None) -> str:
        index = int(key) if key is not None else -1
        banner = self.banners[index] if 0 <= index < len(self.banners) else None
        return f"{banner.port}/{banner.transport}" if banner is not None else ""

    def show_service(self, index: int) -> None:
        from spyglass.tui.panes.hostview import service_details

        banner = self.banners[index]
        detail = self.service_detail
        self.service_box.border_title = safe_text(f"Service {banner.port}/{banner.transport}", one_line=True)
        detail.update(Group(service_details(banner)))
        service = (banner.port, banner.transport)
        older = self.history and any(
            (b.port, b.transport) == service and b.timestamp > banner.timestamp for b in self.banners
        )
        self.pivot_list.show(banner, older=older)

    def selected_index(self) -> int | None:
        """The banner under the cursor (rows move when the table is sorted)."""
        key = self.services.key_at(self.services.cursor_row)
        return int(key) if key is not None and int(key) < len(self.banners) else None

    @on(DataTable.RowHighlighted, "#services")
    def highlighted(self) -> None:
        # The row under the cursor now, not the event's: one posted before a sort arrives after it.
        index = self.selected_index()
        if index is not None:
            self.show_service(index)

    def action_toggle_history(self) -> None:
        self.history = not self.history
        clients = self.clients
        shown = self.looking_up or (self.record.ip_str if self.record is not None else "")
        if shown and clients is not None:
            self.fetch(clients, shown)  # (one still coming was asked for in the other view)

    def action_copy_ip(self) -> None:
        shown = self.looking_up or (self.record.ip_str if self.record is not None else "")
        if shown:
            self.app.copy_to_clipboard(shown)  # OSC 52: works over SSH and in tmux
            self.app.notify(f"Copied {shown}", markup=False)

    def action_copy_banner(self) -> None:
        index = self.selected_index()
        if index is not None:
            copied = banner_for_clipboard(self.banners[index])  # no controls, bounded: see safetext
            self.app.copy_to_clipboard(copied.text)
            self.app.notify(copied.note("the raw banner"), markup=False)

    def action_geo(self) -> None:
        if self.record is not None:
            self.post_message(PingTarget(self.record.ip_str))
