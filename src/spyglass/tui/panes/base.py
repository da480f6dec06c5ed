"""What every pane shares: loading data in a worker, and showing failures in words."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.containers import VerticalScroll
from textual.widgets import Static

from spyglass.safetext import safe_text

if TYPE_CHECKING:
    from spyglass.client import Clients


class Pane(VerticalScroll):
    """A job of the dashboard. Subclasses implement :meth:`load`; it runs in a worker."""

    TITLE: ClassVar[str] = ""
    DEFAULT_CSS = """
    Pane { padding: 0 1; }
    Pane > .pane-error { color: $error; height: auto; display: none; }
    Pane > .pane-error.shown { display: block; }
    """

    def focus_first(self) -> None:
        """Put the keyboard where the pane's work starts (its first input, or table)."""
        for widget in self.query("*"):
            if widget.focusable:
                widget.focus()
                return

    def compose_error(self) -> Static:
        return Static("", classes="pane-error")

    @property
    def clients(self) -> Clients | None:
        """The app's clients, or None until it is connected."""
        return getattr(self.app, "clients", None)

    def reload(self) -> None:
        clients = self.clients
        if clients is None:
            return
        self.run_worker(self._load(clients), exclusive=True, group="load", exit_on_error=False)

    async def _load(self, clients: Clients) -> None:
        from spyglass.client import SpyglassError

        try:
            await self.load(clients)
        except SpyglassError as exc:
            self.show_error(str(exc))
        else:
            self.show_error(None)

    async def load(self, clients: Clients) -> None:
        raise NotImplementedError

    def show_error(self, message: str | None) -> None:
        """Show (or clear, with None) a failure above the pane's content; data shown stays."""
        for box in self.query(".pane-error"):
            box.update(safe_text(message or "", one_line=False, max_chars=500))
            box.set_class(bool(message), "shown")
