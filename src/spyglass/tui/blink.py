"""The text cursor's blink. A blinking cursor repaints its box twice a second: over SSH an idle
Search pane sent bytes every second for it. On a remote terminal the cursor does not blink; elsewhere it stops
once no key or click has come for IDLE seconds, and blinks again with the next one."""

from __future__ import annotations

from collections.abc import Mapping

from textual.app import App
from textual.timer import Timer
from textual.widget import Widget

IDLE = 10.0  # seconds without a key or a click after which the cursor stops blinking


def remote_terminal(environ: Mapping[str, str]) -> bool:
    """Whether the terminal is at the far end of an SSH link (OpenSSH sets these)."""
    return bool(environ.get("SSH_CONNECTION") or environ.get("SSH_TTY"))


class CursorBlink:
    def __init__(self, app: App, remote: bool, idle: float = IDLE) -> None:
        self.app = app
        self.remote = remote
        self.idle = idle
        self.quiet = remote  # whether the cursor holds still now
        self._timer: Timer | None = None

    def start(self) -> None:
        """Count idle time from now (the app is mounted)."""
        if not self.remote:
            self._timer = self.app.set_interval(self.idle, self._went_idle)

    def focused(self, widget: Widget) -> None:
        """A widget took the keyboard: a text box blinks, or not, as the others do now."""
        if hasattr(widget, "cursor_blink"):
            widget.cursor_blink = not self.quiet

    def activity(self) -> None:
        """A key or a click: the cursor blinks again (not on a remote terminal)."""
        if self.remote or self._timer is None:
            return
        self._timer.reset()
        if self.quiet:
            self.quiet = False
            self._apply()

    def _went_idle(self) -> None:
        if not self.quiet:
            self.quiet = True
            self._apply()

    def _apply(self) -> None:
        focused = self.app.focused
        if focused is not None:
            self.focused(focused)
