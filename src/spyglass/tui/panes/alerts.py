"""The alerts pane: monitored networks, their triggers, ignored services, notifiers and the
notifications sent; a form that checks IPs and CIDR ranges as they are typed."""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Input, Select, Static

from spyglass import netblocks
from spyglass.present import alerts as present
from spyglass.present.values import plural
from spyglass.safetext import clean, safe_text
from spyglass.tui.messages import RunSearch
from spyglass.tui.panes.base import Pane, PaneFailure
from spyglass.tui.widgets.boxes import put_text
from spyglass.tui.widgets.table import Column, Table

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import Alert, Notifier

ALERT_COLUMNS = [
    Column("id", "ID", 16, rank=3),
    Column("name", "Name", 14),
    Column("size", "Size", 6, rank=1),
    Column("expires", "Expires", 16, rank=2),
    Column("triggers", "Triggers", 16, rank=1, flex=True),
    Column("networks", "Networks", 18, rank=4),
]
TRIGGER_COLUMNS = [
    Column("on", "On", 3),
    Column("name", "Trigger", 25),
    Column("ignored", "Ignored", 7, rank=2),
    Column("description", "Description", 20, rank=1, flex=True),
]
LOG_EVERY = 3.0  # seconds between looks at the notification log while the pane is in view
LOG_COLUMNS = [
    Column("at", "When", 19, rank=2),
    Column("service", "Service", 21),
    Column("notifier", "Notifier", 22, rank=3),
    Column("outcome", "Outcome", 13),
    Column("detail", "Detail", 10, rank=1, flex=True),
]


def service_problem(text: str) -> str | None:
    """Why ``text`` is not a service (``ip:port``, ``[v6]:port``), or None when it is one."""
    ip, sep, port = text.rpartition(":")
    try:
        ipaddress.ip_address(ip.removeprefix("[").removesuffix("]"))
    except ValueError:
        return f"{text!r} is not a service: give ip:port"
    if not sep or not port.isdigit() or int(port) > 65535:
        return f"{text!r}: the port must be a number from 0 to 65535"
    return None


def edit_at_end(box: Input, value: str) -> None:
    """``value`` in ``box``, its cursor after it, to add to it: a box keeps where its last use left it."""
    put_text(box, value)
    box.focus()


def log_rows(notifications: list) -> list[dict[str, Text]]:
    """The notification log's rows, the outcome coloured (sent, failed, held)."""
    rows = []
    for n in notifications:
        cells = present.notification_row(n)
        style = "" if n.outcome == "sent" else "red" if n.outcome == "failed" else "yellow"
        record = dict(zip(("at", "service", "notifier", "outcome", "detail"), cells, strict=True))
        rows.append({k: Text(v, style=style if k == "outcome" else "") for k, v in record.items()})
    return rows


class AlertsPane(Pane):
    ID = "alerts"
    TITLE = "Alerts"
    LOADS_WITH_ARG = True
    FOLLOWS_ELSEWHERE = True  # alerts and notifiers change in their own pane, the CLI, other dashboards
    KEYS = "f8,7"
    SECTION = "alerts"
    HOME = "#alerts-list"
    HELP = (
        "Network alerts: ctrl+n new (n from a list), e edit the selected alert's networks, D twice deletes it, Enter "
        "on a trigger turns it on or off, TRIGGER IP:PORT typed there ignores a service, Delete twice un-ignores the "
        "trigger's services, b opens the alert's banners in the search pane (net: query). Notifications go out when a "
        "trigger is on and a notifier is attached; the last ones are listed with their outcome."
    )
    BINDINGS = [
        # ctrl+n acts from the form's boxes too, where n is a letter of a name (footer: the first key).
        Binding("ctrl+n,n", "new", "New alert", id="alerts.new"),
        Binding("e", "edit", "Edit networks", id="alerts.edit"),
        Binding("D", "delete", "Delete alert", id="alerts.delete"),
        Binding("b", "banners", "Banners (search)", id="alerts.banners"),
        Binding("delete", "unignore", "Un-ignore", show=False, id="alerts.unignore"),
    ]
    TYPED_ALL = {"#alert-triggers": "#alert-ignore"}  # its letters type a service to ignore
    ACTIONS_CLEAR_ERRORS = True
    TYPED_TERMS = frozenset({"alert-name", "alert-nets", "alert-ignore"})  # abc, Esc 5: not abc5
    DEFAULT_CSS = """
    AlertsPane .alerts-row { height: 1; margin-top: 1; }
    AlertsPane .alerts-row Input { width: 1fr; }
    AlertsPane #alert-name { max-width: 24; }
    AlertsPane #alert-expires { max-width: 14; }
    AlertsPane .alerts-row Button { min-width: 8; }
    AlertsPane #alert-hint { height: 1; color: $text-muted; }
    AlertsPane #alert-hint.invalid { color: $error; }
    AlertsPane #alerts-list { height: auto; max-height: 8; }
    AlertsPane.short #alerts-list { max-height: 4; }
    AlertsPane #alert-title { height: auto; margin-top: 1; text-style: bold; }
    AlertsPane #alert-triggers { height: auto; max-height: 9; }
    AlertsPane.short #alert-triggers { max-height: 5; }  /* the log keeps rows at 80x24 */
    AlertsPane.short .alerts-row, AlertsPane.short #alert-title { margin-top: 0; }
    AlertsPane #alert-notifier { width: 1fr; margin-left: 1; }
    AlertsPane #alert-log { height: auto; min-height: 4; max-height: 10; }
    AlertsPane .alerts-note { height: auto; color: $text-muted; }
    """

    # the widgets it drives
    nets_box = getters.query_one("#alert-nets", Input)
    name_box = getters.query_one("#alert-name", Input)
    notifier_choice = getters.query_one("#alert-notifier", Select)
    log_table = getters.query_one("#alert-log", Table)
    expires_box = getters.query_one("#alert-expires", Input)
    triggers_table = getters.query_one("#alert-triggers", Table)
    save_button = getters.query_one("#alert-save", Button)
    notifiers_note = getters.query_one("#alert-notifiers", Static)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.alerts: dict[str, Alert] = {}
        self.selected: str | None = None
        self.editing: str | None = None  # the alert the form edits; None: the form creates
        self.trigger_info: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(classes="alerts-row"):
            yield Input(placeholder="name", id="alert-name", compact=True)
            # e puts an alert's networks here to be added to: typing must not replace them
            yield Input(placeholder="networks: 192.0.2.0/24", id="alert-nets", compact=True, select_on_focus=False)
            yield Input(placeholder="expires (s)", id="alert-expires", compact=True, type="integer")
            yield Button("Create", id="alert-save", compact=True, variant="primary")
        yield Static("Type a name and the networks to watch, then Enter.", id="alert-hint")
        yield Table(ALERT_COLUMNS, id="alerts-list")
        yield Static("", id="alert-title")
        yield Table(TRIGGER_COLUMNS, id="alert-triggers")
        with Horizontal(classes="alerts-row"):
            yield Input(placeholder="ignore: TRIGGER IP:PORT, Enter", id="alert-ignore", compact=True)
            yield Select([], prompt="notifier", id="alert-notifier", compact=True)
            yield Button("Attach", id="alert-attach", compact=True)
        yield Static("", id="alert-notifiers", classes="alerts-note")
        log = Table(LOG_COLUMNS, id="alert-log")
        log.border_title = "Notifications"
        yield log

    def on_mount(self) -> None:
        self.set_interval(LOG_EVERY, self.follow_log)

    def on_resize(self) -> None:
        self.set_class(self.size.height < 30, "short")

    def follow_log(self) -> None:
        """While the pane is in view, the notification log follows the deliveries (a free call)."""
        clients = self.clients
        if clients is not None and self.selected and not self.stale and self.dashboard.current_pane() is self:
            self.call("log", self.load_log, clients, self.selected)

    async def load_log(self, clients: Clients, alert_id: str) -> None:
        notifications = await clients.alerts.notifications(alert_id)
        if alert_id == self.selected and log_rows(notifications) != list(self.log_table.records.values()):
            # A delivery: the alert itself may have changed too (from another dashboard, the CLI),
            # and the pane must not show its triggers and notifiers as they were.
            await self.load(clients)

    def show_log(self, notifications: list) -> None:
        rows = log_rows(notifications)
        if rows == list(self.log_table.records.values()):
            return  # nothing new: the cursor and the scroll stay where they are
        log = self.log_table
        log.clear_records()
        for i, row in enumerate(rows):
            log.add_record(row, key=str(i))

    # -- loading -----------------------------------------------------------------------------
    async def load(self, clients: Clients) -> None:
        if not self.trigger_info:
            self.trigger_info = {t.name: t.description for t in await clients.alerts.triggers()}
        alerts = await clients.alerts.list()
        notifiers = (await clients.notifiers.list()).matches
        self.alerts = {a.id: a for a in alerts}
        table = self.query_one("#alerts-list", Table)
        table.clear_records()
        for a in alerts:
            row = present.alert_row(a)
            cells = dict(zip(("id", "name", "size", "expires", "triggers", "networks"), row, strict=True))
            table.add_record({k: Text(v) for k, v in cells.items()}, key=a.id)
        self.show_notifiers(notifiers)
        if self.selected not in self.alerts:
            self.selected = alerts[0].id if alerts else None
        if self.selected:
            table.move_cursor(row=table.get_row_index(self.selected))
        await self.show_alert(clients)

    def show_notifiers(self, notifiers: list[Notifier]) -> None:
        """The notifier choices, keeping the one chosen while it still exists."""
        select = self.notifier_choice
        chosen = select.value
        select.set_options(
            [
                (present.notifier_label(n) + (f" {clean(n.description, one_line=True)}" if n.description else ""), n.id)
                for n in notifiers
            ]
        )
        if any(n.id == chosen for n in notifiers):
            select.value = chosen

    async def show_alert(self, clients: Clients) -> None:
        """The selected alert in detail: triggers, notifiers, notifications."""
        title = self.query_one("#alert-title", Static)
        triggers = self.triggers_table
        log = self.log_table
        alert = self.alerts.get(self.selected or "")
        if alert is None:
            triggers.clear_records()
            log.clear_records()
            # Said for the name box, which has the keys when the pane opens empty (an `n` would type n).
            title.update("No alert yet: type a name and networks in the boxes above, then Enter.")
            self.notifiers_note.update("")
            return
        # Every await comes before the tables change: another load may run meanwhile, and the
        # last one to finish shows what it fetched whole.
        alert = await clients.alerts.get(alert.id)
        notifications = await clients.alerts.notifications(alert.id)
        if alert.id != self.selected:
            return  # another alert was picked meanwhile
        self.alerts[alert.id] = alert
        at = triggers.cursor_row  # a reload (a delivery, a toggle) leaves the cursor where it was
        triggers.clear_records()
        status = (alert.notify or {}).get("reason", "")
        title.update(
            Text.assemble(
                (clean(alert.name, one_line=True), "bold"),
                f"  {clean(', '.join(alert.filters.ip), one_line=True, max_chars=200)}",
                ("  " + clean(status, one_line=True), "italic"),
            )
        )
        for name, description in self.trigger_info.items():
            options = alert.triggers.get(name)
            ignored = options.get("ignore", []) if isinstance(options, dict) else []
            triggers.add_record(
                {
                    "on": Text(
                        "[x]" if name in alert.triggers else "[ ]", style="bold" if name in alert.triggers else ""
                    ),
                    "name": Text(name),
                    "ignored": Text(str(len(ignored)) if ignored else ""),
                    "description": safe_text(description, one_line=True),
                },
                key=name,
            )
        if triggers.row_count:
            triggers.move_cursor(row=min(at, triggers.row_count - 1), animate=False)
        ignored_lines = [
            f"{name}: {', '.join(map(str, opts.get('ignore', [])))}"
            for name, opts in sorted(alert.triggers.items())
            if isinstance(opts, dict) and opts.get("ignore")
        ]
        attached = ", ".join(present.notifier_label(n) for n in alert.notifiers or []) or "none"
        note = f"notifiers: {attached}" + (f"\nignored: {'; '.join(ignored_lines)}" if ignored_lines else "")
        self.notifiers_note.update(safe_text(note, one_line=False, max_chars=600))
        self.show_log(notifications)
        self.update_attach_button()

    def run_arg(self, arg: str) -> None:
        """``--pane alerts NETWORKS``: a new alert on those networks, waiting for its name."""
        self.action_new()
        put_text(self.nets_box, clean(arg, one_line=True, max_chars=2000))

    # -- the form ----------------------------------------------------------------------------
    @on(Input.Changed, "#alert-nets")
    def check_networks(self, event: Input.Changed) -> None:
        hint = self.query_one("#alert-hint", Static)
        if not event.value.strip():
            hint.update("Type a name and the networks to watch, then Enter.")
            hint.remove_class("invalid")
            return
        try:
            size = netblocks.network_size(netblocks.networks_from_text(event.value))
        except netblocks.BadNetwork as exc:
            hint.update(safe_text(str(exc).removeprefix("filters.ip: "), one_line=True))
            hint.add_class("invalid")
            return
        hint.update(plural(size, "address", "addresses"))
        hint.remove_class("invalid")

    def form_problem(self) -> str | None:
        nets_text = self.nets_box.value
        try:
            netblocks.networks_from_text(nets_text)
        except netblocks.BadNetwork:
            return "" if nets_text.strip() else "give the networks to watch"  # (the hint says why, in red)
        if not self.name_box.value.strip() and not self.editing:
            return "give the alert a name"
        expires_text = self.expires_box.value.strip()
        if expires_text and not expires_text.isdigit():
            return "expires: a whole number of seconds (0: never) is required"
        return None

    @on(Input.Submitted, "#alert-name, #alert-nets, #alert-expires")
    @on(Button.Pressed, "#alert-save")
    def save(self) -> None:
        clients = self.clients
        if self.say_form_problem() or clients is None:
            return
        name = self.name_box.value.strip()
        networks = [str(n) for n in netblocks.networks_from_text(self.nets_box.value)]
        expires_text = self.expires_box.value.strip()
        expires = int(expires_text) if expires_text else None
        self.call("save", self.write, clients, name, networks, expires)

    async def write(self, clients: Clients, name: str, networks: list[str], expires: int | None) -> None:
        from spyglass.client import NotFound

        if self.editing:
            try:
                alert = await clients.alerts.update(self.editing, networks)
            except NotFound:  # deleted elsewhere (newcomer trial 18: the list and the form kept it)
                self.editing, self.save_button.label = None, "Create"
                self.name_box.disabled = self.expires_box.disabled = False  # what was typed stays
                await self.load(clients)
                raise PaneFailure(f"Alert {name!r} was deleted elsewhere: Create makes it anew") from None
        else:
            alert = await clients.alerts.create(name, networks, expires=expires)
        self.selected = alert.id
        self.action_new(focus=False)
        self.app.notify(f"Saved alert {clean(alert.name, one_line=True)}", timeout=3, markup=False)
        await self.load(clients)

    def action_new(self, focus: bool = True) -> None:
        self.editing = None
        for field in ("#alert-name", "#alert-nets", "#alert-expires"):
            self.query_one(field, Input).value = ""
            self.query_one(field, Input).disabled = False
        self.save_button.label = "Create"
        if focus:
            self.name_box.focus()

    def action_edit(self) -> None:
        alert = self.alerts.get(self.selected or "")
        if alert is None:
            return
        self.editing = alert.id
        name = self.name_box
        name.value, name.disabled = clean(alert.name, one_line=True), True  # editing changes the networks only
        expires = self.expires_box
        expires.value, expires.disabled = str(alert.expires or ""), True
        self.save_button.label = "Save"
        edit_at_end(self.nets_box, ", ".join(alert.filters.ip))

    def action_delete(self) -> None:
        clients, alert_id = self.clients, self.selected
        if clients is None or alert_id is None:
            return
        alert = self.alerts.get(alert_id)
        named = clean(alert.name, one_line=True, max_chars=60) if alert is not None else alert_id
        if not self.second_press(f"delete the alert {named}", "D"):
            return

        async def delete() -> None:
            from spyglass.client import NotFound

            with contextlib.suppress(NotFound):  # deleted elsewhere meanwhile: gone all the same (its row
                await clients.alerts.delete(alert_id)  # stayed until r: newcomer trial 19)
            self.selected = None
            if self.editing == alert_id:  # its form edits an alert that is gone
                self.action_new(focus=False)
            self.app.notify("Alert deleted", timeout=3, markup=False)
            await self.load(clients)

        self.call("delete", delete)

    def action_banners(self) -> None:
        alert = self.alerts.get(self.selected or "")
        if alert is not None:
            self.post_message(RunSearch("net:" + ",".join(alert.filters.ip)))

    # -- the selected alert ----------------------------------------------------------------------
    @on(DataTable.RowHighlighted, "#alerts-list")
    def pick(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        clients = self.clients
        if key and key != self.selected and clients is not None:
            self.selected = key
            self.call("detail", self.show_alert, clients)

    @on(DataTable.RowSelected, "#alert-triggers")
    def toggle_trigger(self, event: DataTable.RowSelected) -> None:
        clients, alert = self.clients, self.alerts.get(self.selected or "")
        name = event.row_key.value
        if clients is None or alert is None or not name:
            return
        on_now = name in alert.triggers
        method = clients.alerts.disable_triggers if on_now else clients.alerts.enable_triggers
        self.call("trigger", self.change, clients, method, alert.id, name)

    async def change(self, clients: Clients, method: Callable[[str, str], Awaitable[object]], *args: str) -> None:
        answer = await method(*args)
        if warning := getattr(answer, "warning", None):  # done, but it says why it may not work (a notifier)
            self.app.notify(clean(warning, one_line=True, max_chars=300), severity="warning", markup=False)
        await self.load(clients)

    @on(Input.Submitted, "#alert-ignore")
    def ignore(self, event: Input.Submitted) -> None:
        clients, alert = self.clients, self.alerts.get(self.selected or "")
        parts = event.value.split()
        if clients is None or alert is None:
            return
        if len(parts) != 2:
            self.show_error("ignore: type a trigger and a service, e.g. new_service 192.0.2.1:80")
            return
        problem = service_problem(parts[1])
        if problem:
            self.show_error(f"ignore: {problem}")
            return
        self.show_error(None)

        async def add() -> None:
            await clients.alerts.ignore_service(alert.id, parts[0], parts[1])
            if event.input.value == event.value:  # what was typed stays until the server takes it
                event.input.value = ""
            await self.load(clients)
            now = self.alerts.get(alert.id)
            if now is not None and parts[0] not in now.triggers:  # kept, but shown nowhere while off
                said = f"Ignoring {parts[1]} for {parts[0]}, which is off: it applies once it is turned on."
                self.app.notify(clean(said, one_line=True, max_chars=300), markup=False)

        self.call("ignore", add)

    def action_unignore(self) -> None:
        """Un-ignore every service of the trigger under the cursor."""
        clients, alert, triggers = self.clients, self.alerts.get(self.selected or ""), self.triggers_table
        name = triggers.key_at(triggers.cursor_row)
        if clients is None or alert is None or not name or self.app.focused is not triggers:
            return
        options = alert.triggers.get(name)
        services = options.get("ignore", []) if isinstance(options, dict) else []
        if not services or not self.second_press(f"un-ignore {len(services)} of {name}", "Delete"):
            return

        async def unignore() -> None:
            for service in services:
                await clients.alerts.unignore_service(alert.id, name, str(service))
            await self.load(clients)

        self.call("unignore", unignore)

    @on(Select.Changed, "#alert-notifier")
    def update_attach_button(self) -> None:
        alert = self.alerts.get(self.selected or "")
        chosen = self.notifier_choice.value
        attached = {n.get("id") for n in (alert.notifiers or [])} if alert else set()
        self.query_one("#alert-attach", Button).label = "Detach" if chosen in attached else "Attach"

    @on(Button.Pressed, "#alert-attach")
    def attach(self) -> None:
        clients, alert = self.clients, self.alerts.get(self.selected or "")
        chosen = self.notifier_choice.value
        if clients is None or alert is None or not isinstance(chosen, str):
            return
        attached = {n.get("id") for n in (alert.notifiers or [])}
        method = clients.alerts.remove_notifier if chosen in attached else clients.alerts.add_notifier
        self.call("attach", self.change, clients, method, alert.id, chosen)
