"""The scan monitor: submit a scan (checked and priced as you type), follow your scans while any
is in flight, and open a finished one's results in the search pane."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Input, Static

from spyglass.present.values import plural
from spyglass.safetext import safe_text
from spyglass.tui.messages import RunSearch
from spyglass.tui.panes.base import FORM, Pane
from spyglass.tui.widgets.boxes import put_text
from spyglass.tui.widgets.table import Column, Table

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import ScanList

POLL_EVERY = 1.0  # seconds between listings while a scan is in flight
AGE_EVERY = 5.0  # seconds between updates of the Age column (it goes on when no scan runs)
COLUMNS = [
    Column("id", "Scan", 16),
    Column("status", "Status", 10),
    Column("size", "IPs", 7, rank=2),
    Column("age", "Age", 4, rank=3),
    Column("found", "Found", 6, rank=1),
    Column("progress", "Progress", 12, rank=4, flex=True),
]


class ScansPane(Pane):
    ID = "scans"
    TITLE = "Scans"
    LOADS_WITH_ARG = True
    FOLLOWS_ELSEWHERE = True  # scans are submitted from the CLI and other dashboards too (a free listing)
    KEYS = "f6,5"
    SECTION = "scans"
    TYPED_TERMS = frozenset({"scan-targets"})  # 127.0.0.1 then 5 is not 127.0.0.15
    HOME = "#scan-list"
    HELP = (
        "Scan addresses and netblocks (1 scan credit per IP): targets like 127.0.0.1, 127.0.0.0/28 and "
        "optionally ports like 80,443/https (none: the crawler's ports). The list follows scans in "
        "flight; Enter on a finished or cancelled scan opens what it found in the search pane; x on a "
        "scan in flight cancels it (it keeps what it found and is not resumed)."
    )
    BINDINGS = [
        Binding("n", "new_scan", "New scan", id="scans.new"),
        Binding("x", "cancel_scan", "Cancel scan", id="scans.cancel"),
    ]
    DEFAULT_CSS = """
    ScansPane #scan-form { height: 1; margin: 1 0 0 0; }
    ScansPane #scan-targets { width: 2fr; }
    ScansPane #scan-ports { width: 1fr; }
    ScansPane #scan-form Button { min-width: 8; }
    ScansPane #scan-check { height: 1; margin: 0 0 1 0; color: $text-muted; }
    ScansPane #scan-check.bad { color: $error; }
    ScansPane #scan-list { height: 1fr; border: round $primary 50%; }
    """

    # the widgets it drives
    targets_box = getters.query_one("#scan-targets", Input)
    scan_table = getters.query_one("#scan-list", Table)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.protocols: list[str] | None = None  # from the server, for checking port/protocol pairs
        self.statuses: dict[str, str] = {}
        self.created: dict[str, str | None] = {}  # scan id -> when, for the Age column
        self.following = False  # a scan is in flight: the list polls
        self.submitted: tuple[str, str] | None = None  # the form (targets, ports) as last submitted

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(id="scan-form"):
            yield Input(placeholder="targets: 127.0.0.1, 127.0.0.0/28", id="scan-targets", compact=True)
            yield Input(placeholder="ports: 80,443/https", id="scan-ports", compact=True)
            yield Button("Scan", id="scan-submit", compact=True, variant="primary")
        yield Static("", id="scan-check")
        table = Table(COLUMNS, id="scan-list")
        table.border_title = "Your scans (Enter on a finished one opens its results)"
        yield table

    def on_mount(self) -> None:
        self._poll = self.set_interval(POLL_EVERY, self.poll, pause=True)
        self.set_interval(AGE_EVERY, self.refresh_ages)
        self.check_form()

    # -- the form ------------------------------------------------------------------------------
    def action_new_scan(self) -> None:
        self.targets_box.focus()

    def run_arg(self, arg: str) -> None:
        """``--pane scans 127.0.0.1/30``: the targets filled in and checked, not submitted (it spends credits)."""
        field = self.targets_box
        put_text(field, arg)
        field.focus()

    def request(self):
        """The form as a request and its spec; ValueError says what is wrong."""
        from spyglass.netools.scantargets import request_spec, scan_request

        targets = self.targets_box.value.replace(" ", ",").split(",")
        request = scan_request(targets, self.query_one("#scan-ports", Input).value)
        return request, request_spec(request, self.protocols)

    @on(Input.Changed, "#scan-targets")
    @on(Input.Changed, "#scan-ports")
    def check_form(self, event: Input.Changed | None = None) -> None:
        """The line under the form says what it would cost or what is wrong, as typed. Once the
        form changes, a refusal of what was submitted (the pane's own or the server's) goes: it spoke
        of a form no longer there, above a live check that said otherwise."""
        if event is not None and self.error_source in (FORM, f"{self.TITLE}: submit"):
            self.show_error(None)
        line = self.query_one("#scan-check", Static)
        if not self.targets_box.value.strip():
            line.update("Type targets, then Enter: each IP costs one scan credit")
            line.remove_class("bad")
            return
        try:
            _, spec = self.request()
        except ValueError as exc:
            line.update(safe_text(str(exc), one_line=True, max_chars=300))
            line.add_class("bad")
            return
        count = spec.addresses()
        clients = self.clients
        left = clients.credits.scan if clients is not None else None
        cost = f"{plural(count, 'IP')}: costs {plural(count, 'scan credit')}"
        if left is not None:
            cost += f" ({left:,} left)" if left >= count else f", but only {left:,} are left"
        line.update(cost)
        line.set_class(left is not None and left < count, "bad")

    @on(Input.Submitted, "#scan-targets")
    @on(Input.Submitted, "#scan-ports")
    @on(Button.Pressed, "#scan-submit")
    def submit(self) -> None:
        clients = self.clients
        if clients is None:
            self.show_error("Not connected yet: the scan was not submitted")
            return
        try:
            request, _ = self.request()
        except ValueError as exc:
            self.show_error(f"Not submitted: {exc}", source=FORM)
            return
        self.show_error(None)
        form = self.form()
        # The form stays filled after a submit: Enter from it again (Esc, Tab, Enter) asks first.
        if form == self.submitted and not self.second_press("submit the same scan again", "Enter"):
            return
        self.call("submit", self.send, clients, request, form)

    def form(self) -> tuple[str, str]:
        return self.targets_box.value.strip(), self.query_one("#scan-ports", Input).value.strip()

    async def send(self, clients: Clients, request, form: tuple[str, str]) -> None:
        result = await clients.scans.submit(request)
        self.submitted = form
        self.app.notify(f"Scan {result.id}: {plural(result.count or 0, 'IP')} queued", title="Scans", markup=False)
        self.check_form()
        await self.load(clients)
        table = self.scan_table  # on the new scan: x cancels it (trial 24: x met the one before)
        if result.id in self.statuses:
            table.move_cursor(row=table.get_row_index(result.id))

    # -- the list ------------------------------------------------------------------------------
    async def load(self, clients: Clients) -> None:
        if self.protocols is None:
            self.protocols = list(await clients.scans.protocols())
        self.show_list(await clients.scans.list())

    def poll(self) -> None:
        """Each tick while a scan is in flight; a poll still on its way is never doubled."""
        clients = self.clients
        if clients is None or any(w.name.endswith(": poll") and w.is_running for w in self.workers):
            return
        self.call("poll", self.refresh_list, clients)

    async def refresh_list(self, clients: Clients) -> None:
        self.show_list(await clients.scans.list())

    def show_list(self, scans: ScanList) -> None:
        from spyglass.present.scans import age, in_flight, progress

        table = self.scan_table
        chosen = table.key_at(table.cursor_row)  # kept across a reload: x cancels the scan it was on
        table.clear_records()
        self.statuses = {}
        self.created = {}
        for scan in scans.matches:
            self.statuses[scan.id] = str(scan.status)
            self.created[scan.id] = scan.created
            table.add_record(
                {
                    "id": safe_text(scan.id, one_line=True, max_chars=32),
                    "status": Text(str(scan.status), style="bold" if in_flight(scan) else ""),
                    "size": f"{scan.size or 0:,}",
                    "age": age(scan.created),
                    "found": f"{scan.found:,}" if scan.found is not None else "-",
                    "progress": progress(scan),
                },
                key=scan.id,
            )
        if chosen is not None and chosen in self.statuses:
            table.move_cursor(row=table.get_row_index(chosen))
        self.following = any(in_flight(s) for s in scans.matches)
        if self.following:
            self._poll.resume()
        else:
            self._poll.pause()
        self.check_form()  # the credits left may have changed

    def action_cancel_scan(self) -> None:
        from spyglass.present.scans import IN_FLIGHT

        table = self.scan_table
        clients = self.clients
        if not table.has_focus or table.row_count == 0 or clients is None:
            self.app.notify("Choose a scan in the list first (Tab to it), then x", title="Scans", markup=False)
            return
        scan_id = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        if self.statuses.get(scan_id) not in IN_FLIGHT:
            status = self.statuses.get(scan_id, "?")
            self.app.notify(f"Scan {scan_id} is {status}: nothing to cancel", title="Scans", markup=False)
            return
        self.call("cancel", self.cancel, clients, scan_id)

    async def cancel(self, clients: Clients, scan_id: str) -> None:
        await clients.scans.cancel(scan_id)
        self.app.notify(f"Scan {scan_id} cancelled: what it found stays", title="Scans", markup=False)
        await self.load(clients)

    def refresh_ages(self, now: datetime | None = None) -> None:
        """The Age column from each scan's creation, also while no scan runs (nothing polls then)."""
        from spyglass.present.scans import age

        table = self.scan_table
        for scan_id, created in self.created.items():
            if scan_id in table.records:
                table.update_record(scan_id, {**table.records[scan_id], "age": age(created, now)})

    @on(DataTable.RowSelected, "#scan-list")
    def open_results(self, event: DataTable.RowSelected) -> None:
        scan_id = str(event.row_key.value)
        status = self.statuses.get(scan_id)
        if status in ("DONE", "CANCELLED"):
            self.post_message(RunSearch(f"scan:{scan_id}"))
        elif status:
            self.app.notify(
                f"Scan {scan_id} is {status}: its results open once it is DONE", title="Scans", markup=False
            )
