"""What panes read from the app they run in, typed without importing the app (which imports
the panes): :class:`~spyglass.tui.app.SpyglassApp` is the one implementation, checked by mypy
there. A pane changes nothing here but the status bar's note; it asks the app for the rest with
messages (tui/messages.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.widget import Widget

    from spyglass.client import Clients
    from spyglass.config import Config
    from spyglass.tui.widgets.statusbar import StatusBar


class Dashboard(Protocol):
    @property
    def config(self) -> Config: ...

    @property
    def clients(self) -> Clients | None:
        """None until the app is connected."""

    @property
    def backend_info(self) -> dict[str, Any]:
        """What a spyglass backend says it holds (demo data or not); empty for another service."""

    @property
    def status(self) -> StatusBar: ...

    def current_pane(self) -> Widget | None: ...
