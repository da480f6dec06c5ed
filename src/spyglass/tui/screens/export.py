"""Where to export a query's results: a path ending in .json.gz, .json or .csv."""

from __future__ import annotations

from pathlib import Path

from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from spyglass.export import check_output
from spyglass.safetext import safe_text


class ExportScreen(ModalScreen[Path | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="export.cancel")]
    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    ExportScreen > Vertical { width: 80; height: auto; border: round $primary; background: $surface; padding: 0 1; }
    ExportScreen #export-error { color: $error; height: auto; }
    """

    # the widgets it drives
    error_line = getters.query_one("#export-error", Static)

    def __init__(self, query: str) -> None:
        super().__init__()
        self.search = query
        self.replacing: Path | None = None  # a finished file the user was told of: Enter again replaces it

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Export all results"
            yield Static(safe_text(f"query: {self.search}", one_line=True, max_chars=200))
            yield Input(str(Path.cwd() / "spyglass-export.json.gz"), id="export-path")
            yield Static(
                safe_text(
                    ".json.gz or .json: one banner per line (spyglass import reads it); .csv: main fields. "
                    "Each 100 results cost a query credit. Enter starts, Esc cancels. A stopped export resumes."
                )
            )
            yield Static("", id="export-error")

    @on(Input.Submitted, "#export-path")
    def start(self, event: Input.Submitted) -> None:
        path = Path(event.value).expanduser()
        if (problem := check_output(path)) is not None:  # the CLI's rule: the same suffixes, the same words
            self.error_line.update(safe_text(problem))
            return
        stopped = path.with_name(path.name + ".resume").exists()  # export.py's note of a stopped one
        if path.exists() and not stopped and self.replacing != path:
            self.replacing = path
            self.error_line.update(safe_text(f"{path.name} exists: Enter again to replace it, or type another name"))
            return
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)
