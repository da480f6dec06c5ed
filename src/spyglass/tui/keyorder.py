"""Keep keys in the order they were typed in text boxes (Textual 8.x, pinned in pyproject).

Over SSH several keys often arrive in one read: ctrl+u then `xyz`, or `ab`, Left, `c`. Textual's
parser emits them in order; the fault is after it. `Input` and `TextArea` insert printable keys
in their own `_on_key`, but their bound keys (ctrl+u, ctrl+a, Left, backspace...) are not handled
there: the event bubbles through every ancestor's message queue up to the app, which only then
runs the widget's binding. The characters that followed are inserted first, so ctrl+u then `xyz`
leaves the box empty and `ab`, Left, `c` gives `abc`. Upstream: Textualize/textual#6605 (open
fix: #6631, which does what this does).

`install()` wraps both `_on_key` methods to run the widget's own non-priority bindings inline,
with the app's own `run_action`, so what runs is unchanged (the focused widget is first in the
binding chain; priority bindings were checked before the key reached it); only when it runs.
Remove this part once Textual ships the fix.

Esc then a digit in one read (a quick Esc, 1 or any lag over SSH) is what a terminal sends for
alt+digit, but Textual's table maps it to the character macOS types for option+digit (`ESC 1`
is `¡`), which a text box then inserts. `install()` makes it the key alt+digit, which the app
binds to the same pane as the digit, so Esc then 1 does the same typed slowly or together.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import SimpleNamespace

from textual import events
from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual.widget import Widget
from textual.widgets import Input, TextArea

KeyHandler = Callable[[Widget, events.Key], Awaitable[None]]


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run `widget`'s own binding for this key now, as the app would after bubbling."""
    for binding in widget._bindings.key_to_bindings.get(event.key, ()):
        if not binding.priority and await widget.app.run_action(binding.action, widget):
            event.stop()
            event.prevent_default()
            return True
    return False


def _inline_bindings(original: KeyHandler) -> KeyHandler:
    async def _on_key(self: Widget, event: events.Key) -> None:
        if event.is_printable or not await run_own_binding(self, event):
            await original(self, event)

    _on_key.__wrapped__ = original  # type: ignore[attr-defined]
    return _on_key


def install() -> None:
    """Patch Input, TextArea and the escape-digit keys once (idempotent)."""
    for digit in "0123456789":  # the parser takes a tuple of objects with .value as key names
        ANSI_SEQUENCES_KEYS["\x1b" + digit] = (SimpleNamespace(value=f"alt+{digit}"),)  # type: ignore[index]
    for cls in (Input, TextArea):
        handler = cls.__dict__["_on_key"]
        if not hasattr(handler, "__wrapped__"):
            cls._on_key = _inline_bindings(handler)  # type: ignore[method-assign,assignment]
