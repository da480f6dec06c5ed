"""The organization pane: its facts, admins and members; admins add members (by username or
e-mail, optionally e-mailing them) and remove them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, Checkbox, Input

from spyglass.present.org import facts, people_rows
from spyglass.present.values import plural
from spyglass.safetext import clean
from spyglass.tui.panes.base import Pane
from spyglass.tui.widgets.boxes import put_text
from spyglass.tui.widgets.check import Check
from spyglass.tui.widgets.facts import Facts
from spyglass.tui.widgets.table import Column, Table

if TYPE_CHECKING:
    from spyglass.client import Clients

COLUMNS = [
    Column("username", "Username", 16),
    Column("email", "E-mail", 24, rank=1, flex=True),
    Column("role", "Role", 6, rank=2),
]


class OrgPane(Pane):
    ID = "org"
    TITLE = "Organization"
    LOADS_WITH_ARG = True
    KEYS = ""  # reached from ctrl+g and the pane bar
    SECTION = "org"
    HOME = "#org-people"
    HELP = (
        "The organization (enterprise): its admins and members. Admins add an existing user by "
        "username or e-mail (tick notify to e-mail them) and remove a member with Delete twice on its row."
    )
    BINDINGS = [Binding("delete", "remove", "Remove member", id="org.remove")]
    DEFAULT_CSS = """
    OrgPane #org-facts { height: auto; }
    OrgPane #org-people { height: 1fr; min-height: 5; border: round $primary 50%; }
    OrgPane #org-form { height: 1; margin: 1 0; }
    OrgPane #org-form Input { width: 1fr; }
    OrgPane #org-form Checkbox { width: auto; }
    OrgPane #org-form Button { min-width: 8; }
    """

    # the widgets it drives
    user_box = getters.query_one("#org-user", Input)
    people_table = getters.query_one("#org-people", Table)
    org_facts = getters.query_one("#org-facts", Facts)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.people: list[list[str]] = []

    def compose(self) -> ComposeResult:
        yield self.compose_error()
        yield Facts("Organization", id="org-facts")
        with Horizontal(id="org-form"):
            yield Input(placeholder="username or e-mail to add, then Enter", id="org-user", compact=True)
            yield Check("notify", id="org-notify", compact=True)
            yield Button("Add", id="org-add", compact=True, variant="primary")
        yield Table(COLUMNS, id="org-people")

    def on_mount(self) -> None:
        self.org_facts.show([("", "waiting for the connection…")])

    async def load(self, clients: Clients) -> None:
        self.org_facts.show([("", "loading…")])
        try:
            org = await clients.org.get()
        except Exception:
            # "waiting for the connection" would stand under a status bar that says connected
            self.org_facts.show([("", "not loaded: the line above says why (r tries again)")])
            raise  # the app reports why
        self.org_facts.show(facts(org))
        self.people = people_rows(org)
        table = self.people_table
        table.border_title = f"{plural(len(org.admins), 'admin')}, {plural(len(org.members), 'member')}"
        table.clear_records()
        for i, (username, email, role) in enumerate(self.people):
            table.add_record({"username": username, "email": email, "role": role}, key=str(i))

    def run_arg(self, arg: str) -> None:
        """``--pane org USER``: the user filled in, ready to add."""
        field = self.user_box
        put_text(field, clean(arg, one_line=True, max_chars=254))
        field.focus()

    def form_problem(self) -> str | None:
        if not self.user_box.value.strip():
            return "Type the username or e-mail address of a user to invite."
        return None

    @on(Input.Submitted, "#org-user")
    @on(Button.Pressed, "#org-add")
    def add(self) -> None:
        user = self.user_box.value.strip()
        clients = self.clients
        if not self.say_form_problem() and clients is not None:
            notify = self.query_one("#org-notify", Checkbox).value
            self.call("add", self.change, clients, "add", user, notify)

    def action_remove(self) -> None:
        table = self.people_table
        key = table.key_at(table.cursor_row)
        clients = self.clients
        if key is None or clients is None or not table.has_focus:
            return
        username, _, role = self.people[int(key)]
        if role != "member":
            self.show_error(f"{username} is an admin: only members can be removed.")
            return
        self.show_error(None)
        if self.second_press(f"remove {username}", "Delete"):  # the member named: a moved cursor asks again
            self.call("remove", self.change, clients, "remove", username, False)

    async def change(self, clients: Clients, action: str, user: str, notify: bool) -> None:
        if action == "add":
            await clients.org.add_member(user, notify=notify)
            self.user_box.value = ""
            done = f"Invited {user}, if that user can join: a member once they accept" + (
                " (e-mailed)" if notify else ""
            )
        else:
            await clients.org.remove_member(user)
            done = f"Removed {user}"
        self.app.notify(clean(done, one_line=True), markup=False)
        await self.load(clients)
