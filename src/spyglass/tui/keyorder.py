"""Keep keys in the order they were typed in text boxes (Textual 8.x, pinned in pyproject).

Over SSH several keys often arrive in one read: ctrl+u then `xyz`, or `ab`, Left, `c`. Textual's
parser emits them in order; the fault is after it. `Input` and `TextArea` insert printable keys
in their own `_on_key`, but their bound keys (ctrl+u, ctrl+a, Left, backspace...) are not handled
there: the event bubbles through every ancestor's message queue up to the app, which only then
runs the widget's binding. The characters that followed are inserted first, so ctrl+u then `xyz`
leaves the box empty and `ab`, Left, `c` gives `abc`. Upstream: Textualize/textual#6605 (open
fix: #6631, which does what this does).

`install()` wraps both `_on_key` methods to run the binding inline: for `Input`, the first
binding of the whole focus chain (its own, then its containers', the screen's and the app's: Tab
moves the focus, Esc leaves the box, before the keys after them are handled); for `TextArea`, its
own only (it handles Tab itself). What runs is unchanged (the app's own binding check and
`run_action`; priority bindings were checked before the key reached the widget); only when.
Remove this part once Textual ships the fix.

Esc then a digit in one read (a quick Esc, 1 or any lag over SSH) is what a terminal sends for
alt+digit, but Textual's table maps it to the character macOS types for option+digit (`ESC 1`
is `¡`), which a text box then inserts. `install()` makes it the key alt+digit, which the app
binds to the same pane as the digit, so Esc then 1 does the same typed slowly or together.
Esc then a letter in one read (Esc q, Esc p) is what a terminal sends for alt+letter, which
nothing here binds: :func:`esc_then_letter` gives the two keys typed slowly instead.

The keys of one read are all handed to the widget that has the focus when they arrive, before
the first of them has run: a Tab (or an Esc) among them moves the focus only once the box has
the keys after it already. A text box that is handed a character once it has lost the focus
passes it on to the widget that has it now, so `abc`, Tab, `xyz` fills two boxes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from types import SimpleNamespace

from textual import events
from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual.app import App
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


async def run_chain_binding(widget: Widget, event: events.Key) -> bool:
    """Run the focus chain's binding for this key now, as the app would once the key bubbled up."""
    if widget.app.focused is not widget or not await widget.app._check_bindings(event.key):
        return False
    event.stop()  # run: the app must not run it again once the key has bubbled up
    event.prevent_default()
    return True


def _inline_bindings(original: KeyHandler, run: Callable[[Widget, events.Key], Awaitable[bool]]) -> KeyHandler:
    @wraps(original)  # (its __wrapped__ says it is installed)
    async def _on_key(self: Widget, event: events.Key) -> None:
        focused = self.app.focused
        if event.is_printable and focused is not None and focused is not self:  # the focus moved on
            event.stop()
            event.prevent_default()
            focused._forward_event(events.Key(event.key, event.character))
            return
        if event.is_printable or not await run(self, event):
            await original(self, event)

    return _on_key


def install() -> None:
    """Patch Input, TextArea and the escape-digit keys once (idempotent)."""
    for digit in "0123456789":  # the parser takes a tuple of objects with .value as key names
        ANSI_SEQUENCES_KEYS["\x1b" + digit] = (SimpleNamespace(value=f"alt+{digit}"),)  # type: ignore[index]
    for cls, run in ((Input, run_chain_binding), (TextArea, run_own_binding)):
        handler = cls.__dict__["_on_key"]
        if not hasattr(handler, "__wrapped__"):
            cls._on_key = _inline_bindings(handler, run)  # type: ignore[method-assign,assignment]


class EscThenLetter(App[None]):
    """An app where alt+letter that nothing binds is handled as Esc then the letter (see above)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and event.key not in self.active_bindings:
            keys = esc_then_letter(event)
            if keys is not None:
                for key in keys:
                    await super().on_event(key)
                return
        await super().on_event(event)


def esc_then_letter(event: events.Key) -> list[events.Key] | None:
    """alt+letter (ESC then a letter in one read) as the two keys typed one after the other."""
    name = event.key.removeprefix("alt+")
    if name == event.key:
        return None
    letter = name.removeprefix("shift+").upper() if name.startswith("shift+") else name
    if len(letter) != 1 or not letter.isascii() or not letter.isalpha():
        return None
    return [events.Key("escape", "\x1b"), events.Key(letter, letter)]
