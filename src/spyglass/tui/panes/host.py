"""The host pane: who holds an address and where, its open services in detail, and how each
service changed between scans."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Input, Static

from spyglass.safetext import clean, safe_text
from spyglass.tui.panes.base import Pane
from spyglass.tui.widgets.facts import Facts

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import Banner, HostRecord


class HostPane(Pane):
    TITLE = "Host"
    BINDINGS = [
        Binding("h", "toggle_history", "History", id="host.history"),
        Binding("c", "copy_ip", "Copy IP", id="host.copy_ip"),
        Binding("y", "copy_banner", "Copy banner", id="host.copy_banner"),
        Binding("g", "geo", "Ping from everywhere", id="host.geo"),
    ]
    DEFAULT_CSS = """
    HostPane #host-ip { margin: 1 0 0 0; }
    HostPane #host-top { height: auto; }
    HostPane #host-summary { width: 1fr; }
    HostPane #services { width: 1fr; height: auto; max-height: 14; border: round $primary 50%; }
    HostPane #service-detail { height: auto; border: round $primary 50%; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        yield Input(placeholder="IP address, then Enter", id="host-ip", compact=True)
        yield self.compose_error()
        with Horizontal(id="host-top"):
            yield Facts("Host", id="host-summary")
            services = DataTable(id="services", cursor_type="row", zebra_stripes=True)
            services.border_title = "Services"
            yield services
        detail = Static("", id="service-detail")
        detail.border_title = "Service"
        yield detail

    def on_mount(self) -> None:
        self.query_one("#services", DataTable).add_columns("Port", "Product", "Seen", "Changes")
        self.record: HostRecord | None = None
        self.history = False
        self.banners: list[Banner] = []
        self.query_one("#host-summary", Facts).show([("", "open a result from Search, or type an address")])

    def focus_first(self) -> None:
        # With a host shown, the services have the keyboard (h, c, y, g work); else the address box.
        target = "#services" if self.record is not None else "#host-ip"
        self.query_one(target).focus()

    async def load(self, clients: Clients) -> None:
        if self.record is not None:
            await self._fetch(clients, self.record.ip_str)

    def show_ip(self, ip: str) -> None:
        self.query_one("#host-ip", Input).value = clean(ip, one_line=True, max_chars=64)  # from a server
        self.lookup()

    @on(Input.Submitted, "#host-ip")
    def lookup(self) -> None:
        raw = self.query_one("#host-ip", Input).value.strip()
        try:
            ip = str(ipaddress.ip_address(raw))
        except ValueError:
            self.show_error(f"{raw or 'nothing'}: not an IP address")
            return
        clients = self.clients
        if clients is None:
            self.show_error("Not connected yet.")
            return
        self.show_error(None)
        self.fetch(clients, ip)

    @work(exclusive=True, group="host", exit_on_error=False)
    async def fetch(self, clients: Clients, ip: str) -> None:
        from spyglass.client import SpyglassError

        try:
            await self._fetch(clients, ip)
        except SpyglassError as exc:
            self.show_error(str(exc))
            return
        self.query_one("#services", DataTable).focus()

    async def _fetch(self, clients: Clients, ip: str) -> None:
        record = await clients.intel.host(ip, history=self.history)
        self.record = record
        self.show_record(record)

    def show_record(self, r: HostRecord) -> None:
        where = ", ".join(x for x in (r.city, r.region_code, r.country_name) if x)
        coords = f" ({r.latitude:.2f}, {r.longitude:.2f})" if r.latitude is not None and r.longitude is not None else ""
        vulns = safe_text(", ".join(r.vulns), "bold red", one_line=True) if r.vulns else "-"
        self.query_one("#host-summary", Facts).show([
            ("ip", Text(clean(r.ip_str, one_line=True), style="bold")), ("org", r.org or "-"), ("isp", r.isp or "-"),
            ("asn", r.asn or "-"), ("location", (where + coords) or "-"), ("os", r.os or "-"),
            ("hostnames", ", ".join(r.hostnames) or "-"), ("domains", ", ".join(r.domains) or "-"),
            ("tags", ", ".join(r.tags) or "-"), ("vulns", vulns),
            ("ports", ", ".join(map(str, r.ports))), ("last update", (r.last_update or "-")[:19].replace("T", " ")),
            ("view", "history: every scan (h for current)" if self.history else "current services (h for history)"),
        ])
        from spyglass.tui.panes.hostview import changes

        table = self.query_one("#services", DataTable)
        table.clear()
        self.banners = list(r.data)
        previous: dict[tuple[int, str], Banner] = {}
        rows = []
        for b in reversed(self.banners):  # oldest first, to compare each scan with the one before
            key = (b.port, b.transport)
            diff = changes(previous[key], b) if key in previous else []
            previous[key] = b
            rows.append((b, "; ".join(diff)))
        for b, diff in reversed(rows):
            product = b.product_line or (b.module or "")
            table.add_row(safe_text(f"{b.port}/{b.transport}", one_line=True), safe_text(product, one_line=True),
                          safe_text(b.timestamp[:16].replace("T", " "), one_line=True),
                          safe_text(diff, one_line=True, max_chars=120))
        if self.banners:
            self.show_service(0)

    def show_service(self, index: int) -> None:
        from spyglass.tui.panes.hostview import service_details

        banner = self.banners[index]
        detail = self.query_one("#service-detail", Static)
        detail.border_title = safe_text(f"Service {banner.port}/{banner.transport}", one_line=True)
        detail.update(Group(service_details(banner)))

    @on(DataTable.RowHighlighted, "#services")
    def highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.banners):
            self.show_service(event.cursor_row)

    def action_toggle_history(self) -> None:
        self.history = not self.history
        clients = self.clients
        if self.record is not None and clients is not None:
            self.fetch(clients, self.record.ip_str)

    def action_copy_ip(self) -> None:
        if self.record is not None:
            self.app.copy_to_clipboard(self.record.ip_str)  # OSC 52: works over SSH and in tmux
            self.app.report(f"Copied {self.record.ip_str}", error=False)

    def action_copy_banner(self) -> None:
        table = self.query_one("#services", DataTable)
        if self.banners and 0 <= table.cursor_row < len(self.banners):
            self.app.copy_to_clipboard(self.banners[table.cursor_row].data)
            self.app.report("Copied the raw banner", error=False)

    def action_geo(self) -> None:
        if self.record is not None:
            self.app.show_geo(self.record.ip_str)
