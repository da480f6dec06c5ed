"""``?``: every key that works where you are, with the binding id to remap it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from spyglass.safetext import safe_text


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "dismiss", "Close", id="help.close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical { width: 84; max-width: 95%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1; }
    HelpScreen DataTable { height: auto; max-height: 30; }
    HelpScreen .hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Keys"
            yield DataTable(cursor_type="row", zebra_stripes=True)
            yield Static(safe_text(
                'Remap a key in config.json: "keymap": {"<binding id>": "<keys>"}. '
                "ctrl+p opens the command palette: panes, actions and themes."), classes="hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Key", "Does", "Binding id")
        for key, description, binding_id in self.rows:
            table.add_row(safe_text(key), safe_text(description), safe_text(binding_id))

    def action_dismiss(self) -> None:
        self.dismiss(None)
