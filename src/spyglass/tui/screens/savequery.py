"""The dialog the search pane saves its query in the directory with (ctrl+s there)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from spyglass.safetext import safe_text
from spyglass.tags import check_tags

NO_TITLE = "A title is needed."
Save = Callable[[str, str, str], Awaitable[object]]  # (title, tags, description): saves, or raises


class SaveQueryScreen(ModalScreen[tuple[str, str, str] | None]):
    """Title, tags and description for a query the search pane saves in the directory. The
    dialog saves it itself (``save``) and stays open, with what was typed and the server's
    answer, until it is saved or cancelled; it closes with what was saved."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="savequery.cancel")]
    DEFAULT_CSS = """
    SaveQueryScreen { align: center middle; }
    SaveQueryScreen > Vertical { width: 76; height: auto; border: round $primary; background: $surface; padding: 0 1; }
    SaveQueryScreen Input { margin: 1 0 0 0; }
    SaveQueryScreen #save-error { color: $error; height: auto; }
    """

    # the widgets it drives
    title_box = getters.query_one("#save-title", Input)
    error_line = getters.query_one("#save-error", Static)

    def __init__(self, query: str, save: Save) -> None:
        super().__init__()
        self.search = query
        self.send = save
        self.said = ""  # what the error line says

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Save to the directory"
            yield Static(safe_text(f"query: {self.search}", one_line=True, max_chars=300))
            yield Input(placeholder="title (required)", id="save-title", max_length=100, compact=True)
            yield Input(placeholder="tags, comma-separated (optional)", id="save-tags", compact=True)
            yield Input(placeholder="description (optional)", id="save-description", max_length=1000, compact=True)
            yield Static("Enter goes to the next field and saves from the last; Esc cancels.", classes="hint")
            yield Static("", id="save-error")

    def on_mount(self) -> None:
        self.title_box.focus()

    @on(Input.Submitted, "#save-title")
    @on(Input.Submitted, "#save-tags")
    def next_field(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input is self.title_box:
            if not self.title_box.value.strip():
                self.refuse(NO_TITLE, "#save-title")  # said where it is typed, not at the end
                return
            if self.said == NO_TITLE:
                self.refuse("", None)  # typed since: that was said of it
        following = {"save-title": "#save-tags", "save-tags": "#save-description"}
        self.query_one(following[event.input.id or "save-title"], Input).focus()

    @on(Input.Submitted, "#save-description")
    def save(self, event: Input.Submitted) -> None:
        event.stop()
        title = self.title_box.value.strip()
        if not title:
            self.refuse(NO_TITLE, "#save-title")
            return
        tags = self.query_one("#save-tags", Input).value
        try:
            check_tags(tags.split(","))  # the server's rule: said before asking
        except ValueError as exc:
            self.refuse(f"Tags: {exc}", "#save-tags")
            return
        self.error_line.update("Saving…")
        self.saving(title, tags, self.query_one("#save-description", Input).value.strip())

    @work(exclusive=True, group="save")
    async def saving(self, title: str, tags: str, description: str) -> None:
        try:
            await self.send(title, tags, description)
        except Exception as exc:  # whatever it was, said here: the dialog keeps what was typed
            said = str(exc)
            # The server names the parameter it refuses (e.g. "tags: tag 'x y': 1-32 letters…").
            field = next((f for f in ("tags", "description", "title") if f"{f}:" in said), None)
            self.refuse(f"Not saved: {said}", f"#save-{field}" if field else None)
            return
        self.dismiss((title, tags, description))

    def refuse(self, message: str, field: str | None) -> None:
        """Say why in the dialog, everything typed kept, and put the cursor where it needs fixing."""
        self.said = message
        self.error_line.update(safe_text(message, max_chars=500))
        if field:
            self.query_one(field, Input).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)
