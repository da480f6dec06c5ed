"""The notifiers pane: where alerts are sent. A form built from the provider's required
arguments (secrets typed masked and shown masked), delete, and a test send with its outcome."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text
from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Input, Select, Static

from spyglass.present import alerts as present
from spyglass.safetext import clean, safe_text
from spyglass.tui.panes.base import Pane
from spyglass.tui.widgets.table import Column, Table

if TYPE_CHECKING:
    from spyglass.client import Clients
    from spyglass.models import Alert, Notifier

COLUMNS = [
    Column("id", "ID", 11),
    Column("provider", "Provider", 9),
    Column("description", "Description", 14, rank=2),
    Column("args", "Arguments", 20, rank=1, flex=True),
]


class NotifiersPane(Pane):
    ID = "notifiers"
    TITLE = "Notifiers"
    KEYS = ""  # reached from ctrl+g and the pane bar
    SECTION = "notifiers"
    FOLLOWS_ELSEWHERE = True  # notifiers change in the CLI and other dashboards too
    HOME = "#notifiers-list"
    HELP = (
        "Where alerts are sent: e-mail, webhook, Slack, PagerDuty, Telegram, Gitter, phone. "
        "ctrl+n new (n from the list), e edit the selected notifier, D twice deletes it, t send it a test "
        "notification. "
        "Secret arguments are masked; left empty when editing, they stay as they are."
    )
    BINDINGS = [
        Binding("ctrl+n,n", "new", "New notifier", id="notifiers.new"),  # ctrl+n from a box too
        Binding("e", "edit", "Edit", id="notifiers.edit"),
        Binding("D", "delete", "Delete", id="notifiers.delete"),
        Binding("t", "test", "Test send", id="notifiers.test"),
    ]
    DEFAULT_CSS = """
    NotifiersPane .notifiers-row { height: 1; margin-top: 1; }
    NotifiersPane #notifier-provider { width: 16; }
    NotifiersPane #notifier-args { height: 1; width: 1fr; }
    NotifiersPane #notifier-args Input, NotifiersPane #notifier-description { width: 1fr; }
    NotifiersPane .notifiers-row Button { min-width: 8; }
    NotifiersPane #notifier-outcome { height: auto; margin-top: 1; }
    NotifiersPane #notifiers-list { height: auto; max-height: 14; margin-top: 1; }
    """

    # the widgets it drives
    provider_choice = getters.query_one("#notifier-provider", Select)
    outcome = getters.query_one("#notifier-outcome", Static)
    description_box = getters.query_one("#notifier-description", Input)
    list_table = getters.query_one("#notifiers-list", Table)
    save_button = getters.query_one("#notifier-save", Button)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.providers: dict[str, list[str]] = {}
        self.notifiers: dict[str, Notifier] = {}
        self.alerts: list[Alert] = []
        self.editing: str | None = None
        self.tested = ""  # the notifier whose test outcome is shown

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        with Horizontal(classes="notifiers-row"):
            yield Select([], prompt="provider", id="notifier-provider", compact=True)
            yield Horizontal(id="notifier-args")
        with Horizontal(classes="notifiers-row"):
            yield Input(placeholder="description (optional)", id="notifier-description", compact=True)
            yield Button("Create", id="notifier-save", compact=True, variant="primary")
            yield Button("Test", id="notifier-test", compact=True)
        yield Static("Choose a provider: its required arguments appear beside it.", id="notifier-outcome")
        yield Table(COLUMNS, id="notifiers-list")

    def focus_first(self) -> None:
        """The list has the keys: e, D and t (the footer's) act on its notifier; ctrl+n or n starts
        the form on the provider (the drop-down, focused, took t and e as a search)."""
        self.list_table.focus()

    async def load(self, clients: Clients) -> None:
        if not self.providers:
            self.providers = {name: spec.required for name, spec in (await clients.notifiers.providers()).items()}
            self.provider_choice.set_options([(p, p) for p in self.providers])
        listed = await clients.notifiers.list()
        self.alerts = await clients.alerts.list()  # which a delete leaves without a notifier
        self.notifiers = {n.id: n for n in listed.matches}
        table = self.list_table
        chosen = table.key_at(table.cursor_row)  # kept across the reload of a return to the pane: D acted on row 0
        table.clear_records()
        for n in listed.matches:
            cells = dict(zip(("id", "provider", "description", "args"), present.notifier_row(n), strict=True))
            table.add_record({k: Text(v) for k, v in cells.items()}, key=n.id)
        if chosen in self.notifiers:
            table.move_cursor(row=table.get_row_index(chosen), animate=False)

    # -- one message area: the latest said wins -------------------------------------------------
    def say(self, text: str | Text) -> None:
        """What an action did, in place of any failure still shown above."""
        self.show_error(None)
        self.outcome.update(safe_text(text, one_line=True) if isinstance(text, str) else text)

    def show_error(self, message: str | None, source: str | None = None) -> None:
        super().show_error(message, source)
        if message:  # a failure now: what an earlier action did no longer stands beside it
            self.tested = ""
            for box in self.query("#notifier-outcome").results(Static):
                box.update("")

    # -- the form ----------------------------------------------------------------------------
    @on(Select.Changed, "#notifier-provider")
    async def provider_chosen(self, event: Select.Changed) -> None:
        """Its arguments appear beside it; the keys stay on the drop-down, where the cursor is
        (letters typed there search it), and Tab goes on to the first argument."""
        await self.build_args(str(event.value) if isinstance(event.value, str) else None)

    async def build_args(self, provider: str | None, values: dict[str, str] | None = None) -> None:
        box = self.query_one("#notifier-args", Horizontal)
        await box.remove_children()
        if provider is None:
            return
        fields = []
        for name in self.providers.get(provider, []):
            secret = name in present.SECRET_ARGS
            value = (values or {}).get(name, "")
            placeholder = name + (" (unchanged if empty)" if secret and self.editing else "")
            fields.append(
                Input(
                    "" if secret else clean(value, one_line=True),
                    placeholder=placeholder,
                    password=secret,
                    name=name,
                    compact=True,
                    classes="notifier-arg",
                )
            )
        await box.mount_all(fields)
        self.say_requirements()

    def form_args(self) -> dict[str, str]:
        return {field.name or "": field.value.strip() for field in self.query(".notifier-arg").results(Input)}

    def missing_args(self) -> list[str]:
        """The provider's arguments still to type: every empty one, but for a secret being edited
        that has a value (left empty, it stays as it is). The default e-mail notifier comes with an
        empty ``to``: it is to type like any other."""
        editing = self.notifiers.get(self.editing or "")
        kept = {k for k, v in editing.args.items() if k in present.SECRET_ARGS and str(v).strip()} if editing else set()
        return [k for k, v in self.form_args().items() if not v and k not in kept]

    def say_requirements(self) -> None:
        """What the chosen provider still needs, said until it is typed."""
        provider = self.provider_choice.value
        if isinstance(provider, str):
            missing = self.missing_args()
            self.outcome.update(
                f"{provider}: {', '.join(missing)} required" if missing else f"{provider}: Enter saves it"
            )

    @on(Input.Changed, ".notifier-arg")
    def arg_typed(self) -> None:
        self.say_requirements()

    def form_problem(self) -> str | None:
        provider = self.provider_choice.value
        if not isinstance(provider, str):
            return "choose a provider"
        missing = self.missing_args()
        return f"{provider} needs {', '.join(missing)}" if missing else None

    @on(Input.Submitted, ".notifier-arg, #notifier-description")
    @on(Button.Pressed, "#notifier-save")
    def save(self) -> None:
        clients = self.clients
        provider = self.provider_choice.value
        if clients is None or self.say_form_problem() or not isinstance(provider, str):
            return
        args = {k: v for k, v in self.form_args().items() if v}  # editing: an empty one stays as it is
        description = self.description_box.value.strip()
        self.call("save", self.write, clients, provider, args, description)

    async def write(self, clients: Clients, provider: str, args: dict[str, str], description: str) -> None:
        if self.editing:
            await clients.notifiers.update(self.editing, {**args, "description": description})
            saved = self.editing
        else:
            saved = (await clients.notifiers.create(provider, args, description=description or None)).id
        self.say(f"Saved notifier {saved}.")
        await self.reset()
        await self.load(clients)

    async def reset(self) -> None:
        self.editing = None
        self.description_box.value = ""
        self.provider_choice.disabled = False
        self.save_button.label = "Create"
        await self.build_args(None)
        self.provider_choice.clear()

    async def action_new(self) -> None:
        await self.reset()
        self.provider_choice.focus()

    def selected(self) -> Notifier | None:
        table = self.list_table
        return self.notifiers.get(table.key_at(table.cursor_row) or "")

    async def action_edit(self) -> None:
        n = self.selected()
        if n is None:
            return
        self.editing = n.id
        provider = self.provider_choice
        with provider.prevent(Select.Changed):
            provider.value = n.provider
        provider.disabled = True
        await self.build_args(n.provider, {k: str(v) for k, v in n.args.items()})
        self.description_box.value = clean(n.description or "", one_line=True)
        self.save_button.label = "Save"
        for field in self.query(".notifier-arg").results(Input):
            field.focus()
            break

    def action_delete(self) -> None:
        clients, n = self.clients, self.selected()
        if clients is None or n is None:
            return
        losing = present.losing_notifier(self.alerts, n.id)
        if not self.second_press(f"delete notifier {n.id}" + (f": {losing}" if losing else ""), "D"):
            return

        async def delete() -> None:
            await clients.notifiers.delete(n.id)
            self.say(f"Deleted notifier {n.id}.")
            await self.load(clients)

        self.call("delete", delete)

    @on(DataTable.RowHighlighted, "#notifiers-list")
    def another_notifier(self) -> None:
        """A test's outcome speaks of one notifier: it goes once the cursor is on another."""
        chosen = self.selected()
        if self.tested and (chosen is None or chosen.id != self.tested):
            self.tested = ""
            self.outcome.update("")

    @on(Button.Pressed, "#notifier-test")
    def action_test(self) -> None:
        clients = self.clients
        n = self.notifiers.get(self.editing or "") or self.selected()
        if clients is None or n is None:
            return
        self.say(f"Sending a test to {n.id}…")

        async def test() -> None:
            result = await clients.notifiers.test(n.id)
            style = "green" if result.success else "red"
            said = ("sent" if result.success else "failed") + (":" if result.detail else "")
            self.tested = n.id  # said while that notifier is the one in view, and when
            self.say(
                Text.assemble(
                    (
                        clean(f"{datetime.now():%H:%M:%S} test to {n.id} ({n.provider}): {said}", one_line=True),
                        f"bold {style}",
                    ),
                    " ",
                    safe_text(result.detail, one_line=True, max_chars=300),
                )
            )

        self.call("test", test)
