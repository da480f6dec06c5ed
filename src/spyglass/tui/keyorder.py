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
is `¡`), which a text box then inserts. `install()` makes it the key alt+digit. Esc then a
letter or a digit in one read (Esc q, Esc 4 4 3) is what a terminal sends for alt+letter or
alt+digit, which nothing here binds: :func:`esc_then_letter` gives the two keys typed slowly
instead, so `Esc 443` typed in one burst leaves the box and adds the term 443, as typed slowly
(alt+digit switched panes, and the digits after it were typed on that pane: newcomer trial 3).
Esc then Enter, Space, Backspace or a punctuation mark in one read were read by Textual's table as
that key alone (ctrl+w for Backspace), the Esc lost (Esc Enter on a query typed on: newcomer trial
4; Esc `,` typed a comma: trial 6): `install()` makes them alt+ keys, which are always the two.

The keys of one read are all handed to the widget that has the focus when they arrive, before
the first of them has run: a Tab (or an Esc) among them moves the focus only once the box has
the keys after it already. A text box that is handed a character once it has lost the focus
passes it on to the widget that has it now, so `abc`, Tab, `xyz` fills two boxes.

That covers keys a text box handles; a key that opens something does its work in messages that
go up the tree and back (a table's Enter posts the row, the pane asks the app for the host pane,
which mounts it and moves the focus), and the keys after it would reach the old focus first:
`Esc g j j Enter h` in one read ran `h` in the search pane (a new query term) before the host
opened. :class:`KeysInTurn` hands the app each key of a burst only once the one before it has
been handled through: no message waiting or being handled anywhere on the screen.

Keys typed while the app starts (a user who types at once, before the first pane is mounted)
would go to no box: with nothing focused the screen takes them and drops them (`-port:22 nginx`
became `rt:22 nginx`; an early `q` would even quit). :meth:`KeysInTurn.hold_keys` keeps them,
in order, until :meth:`KeysInTurn.release_keys`, once the widget that takes them has the focus;
then they take their turns as a burst does, before any key typed after them. Keys typed before
Textual put the terminal in raw mode went through the tty's line discipline, whose ICRNL made
Enter a newline: Textual reads it as ctrl+j, which no box binds (the query stayed in the box,
never run). A ctrl+j held is Enter.
"""

from __future__ import annotations

import asyncio
import string
from collections import deque
from collections.abc import Awaitable, Callable
from functools import wraps
from time import monotonic, process_time
from types import SimpleNamespace
from typing import cast

from textual import events
from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual.app import App
from textual.keys import _character_to_key
from textual.message import Message
from textual.message_pump import MessagePump
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
    """Patch Input, TextArea, the escape-digit keys and the count of messages in hand once
    (idempotent)."""
    for digit in "0123456789":  # the parser takes a tuple of objects with .value as key names
        ANSI_SEQUENCES_KEYS["\x1b" + digit] = (SimpleNamespace(value=f"alt+{digit}"),)  # type: ignore[index]
    for name, character in [*AFTER_ESC.items(), *ESC_LETTERS.items()]:
        ANSI_SEQUENCES_KEYS["\x1b" + character] = (SimpleNamespace(value=f"alt+{name}"),)  # type: ignore[index]
    if not hasattr(MessagePump._dispatch_message, "__wrapped__"):
        MessagePump._dispatch_message = _counted(MessagePump._dispatch_message)  # type: ignore[method-assign,assignment]
    for cls, run in ((Input, run_chain_binding), (TextArea, run_own_binding)):
        handler = cls.__dict__["_on_key"]
        if not hasattr(handler, "__wrapped__"):
            cls._on_key = _inline_bindings(handler, run)  # type: ignore[method-assign,assignment]


# A pane whose messages never stop (a live stream) must not hold keys back for good: past this much
# of the app's own CPU time the next key goes in as it would without turns. CPU time, not wall time:
# on a loaded machine the app waits seconds for a core between two messages, and a wall-clock cap
# let a key overtake the Enter before it (newcomer trial 10: `C-u ADDRESS Enter h` on Host, while
# both test tiers ran). The wall-clock cap is for a handler that awaits without using the CPU.
TURN_AT_MOST = 1.0
TURN_WALL_AT_MOST = 10.0
KEYS_WAIT_AT_MOST = 15.0  # seconds keys wait with an action that waits for the connection (KeysWait)


class KeysWait(Message):
    """A pane's action waits for the connection: the keys typed after it wait with it, until
    :class:`KeysGo` (or KEYS_WAIT_AT_MOST). `QUERY Enter Esc g j Enter` typed as the dashboard
    started ran the query once connected, its keys after it spent on the empty list before
    (newcomer trial 24)."""


class KeysGo(Message):
    """What the keys waited for has run: they take their turns."""


class KeysInTurn(App[None]):
    """An app that handles the keys of one read one at a time, each once the one before it has
    had its effects (see above). A key that arrives alone is handled at once, as before."""

    _keys_waiting: deque[events.Key | events.Paste]  # a paste takes its turn among the keys
    _keys_turns: asyncio.Task[None] | None = None
    _in_turn: set[int]
    _keys_held: list[events.Key | events.Paste] | None = None  # typed before the app was ready for them

    def hold_keys(self) -> None:
        """Keep the keys typed from now on (but priority bindings: ctrl+q still quits at once)
        until :meth:`release_keys`."""
        if self._keys_held is None:
            self._keys_held = []

    def release_keys(self) -> None:
        """The keys held take their turns, in the order typed, each once what the one before it
        (and what is under way now: a focus that moves) has been handled; keys typed from now on
        come after them."""
        held, self._keys_held = self._keys_held, None
        if not held:
            return
        self._start_turns()
        self._keys_waiting.extend(held)
        if self._keys_turns is None:
            self._keys_turns = asyncio.create_task(self._take_turns())

    def on_keys_wait(self, message: KeysWait) -> None:
        self._start_turns()
        self._keys_held = [*self._keys_waiting, *(self._keys_held or [])]
        self._keys_waiting.clear()
        self.set_timer(KEYS_WAIT_AT_MOST, self.release_keys)

    def on_keys_go(self, message: KeysGo) -> None:
        self.release_keys()

    def _start_turns(self) -> None:
        if not hasattr(self, "_keys_waiting"):
            self._keys_waiting, self._in_turn = deque(), set()

    async def on_event(self, event: events.Event) -> None:
        # A paste takes its turn as a key does: sent right after keys (F2 ctrl+u, then a paste), it
        # went in before them and ctrl+u emptied it (newcomer trial 28)
        if not isinstance(event, (events.Key, events.Paste)) or event.is_forwarded:
            await super().on_event(event)
            return
        if self._keys_held is not None:
            if isinstance(event, events.Key) and event.key == "ctrl+j":  # Enter, typed before raw mode (ICRNL)
                event = events.Key("enter", "\r")
            if isinstance(event, events.Paste) or not await self._check_bindings(event.key, priority=True):
                self._keys_held.append(event)
            return
        self._start_turns()
        if id(event) in self._in_turn:
            self._in_turn.discard(id(event))
        elif self._keys_turns is not None:
            self._keys_waiting.append(event)  # its turn comes once the key before it is through
            return
        else:
            self._keys_turns = asyncio.create_task(self._take_turns())
        if isinstance(event, events.Paste) and isinstance(self.focused, Input):
            event.text = one_line(event.text)
        await super().on_event(event)

    async def _take_turns(self) -> None:
        try:
            while True:
                await self._until_handled()
                if not self._keys_waiting or not self._screen_stack:  # (none left: the app has quit)
                    self._keys_waiting.clear()
                    return
                text = self._text_to_come()
                if text:  # one insert for the lot, as a paste (see _text_to_come)
                    paste = events.Paste(text)
                    self._in_turn.add(id(paste))
                    self.post_message(paste)
                    continue
                key = self._keys_waiting.popleft()
                self._in_turn.add(id(key))
                self.post_message(key)
        finally:
            self._keys_turns = None

    def _text_to_come(self) -> str:
        """The characters that wait next, taken from the keys waiting, where they all go into the
        plain text box that has the focus (one with no restriction or length cap, each such key
        inserts its character there and does nothing else), or "" (fewer than two). Each key's
        turn waits for a frame and each insert redraws the box: one key at a time, a long burst
        (a paste without bracketed paste) took minutes."""
        box, waiting = self.focused, self._keys_waiting
        if not isinstance(box, Input) or box.restrict or box.max_length or box.type != "text":
            return ""
        count = 0
        while count < len(waiting) and self._plain_character(waiting[count]):
            count += 1
        if count < 2:
            return ""
        return "".join(cast(events.Key, waiting.popleft()).character or "" for _ in range(count))  # (plain keys)

    def _plain_character(self, key: events.Key | events.Paste) -> bool:
        # Not alt+g: the parser gives it the character g, and it is Esc then g (EscThenLetter): put
        # in a box with the letters after it, the Esc was lost (`F2 Esc g j j Enter h` typed gjj
        # into the query and ran it: newcomer trial 14).
        if not isinstance(key, events.Key) or "+" in key.key or not key.is_printable:
            return False
        if not key.character or not key.character.isprintable():
            return False
        return not any(
            binding.priority
            for bindings in (self._bindings, self.screen._bindings)
            for binding in bindings.key_to_bindings.get(key.key, ())
        )

    async def _until_handled(self) -> None:
        """Until no message waits for, or is being handled by, the app or a node of its screen."""
        await asyncio.sleep(0)  # the key now in turn reaches the app's queue
        give_up, wall_give_up = process_time() + TURN_AT_MOST, monotonic() + TURN_WALL_AT_MOST
        while self._busy() and process_time() < give_up and monotonic() < wall_give_up:
            await asyncio.sleep(0.002)

    def _busy(self) -> bool:
        if _handling[0]:
            return True
        if not self._screen_stack:  # the app has quit (a q among the keys): nothing to wait for
            return False
        if self.screen._callbacks:  # (Textual 8) a scroll is done after the next refresh: each of
            return True  # ten Downs in one read scrolled from where the one before had not yet gone
        return any(
            node._message_queue.qsize() or node._next_callbacks
            for node in (self, *self.screen.walk_children(with_self=True))
        )


def one_line(text: str) -> str:
    """A paste for a one-line box: its lines as items a space separates. Textual's Input kept the
    first line alone, with no word: of three names pasted into DNS, two were lost (trial 28)."""
    return (
        " ".join(line.strip() for line in text.splitlines() if line.strip()) if "\n" in text or "\r" in text else text
    )


def keys_to_come(app: App) -> bool:
    """Whether keys of a burst still wait their turn: what looks at a whole box (a live check)
    can wait for the last of them, rather than run again on every key."""
    return bool(getattr(app, "_keys_waiting", None))


_handling = [0]  # messages being handled now, by any node (Textual's queue does not count them)


def _counted(original: Callable[[MessagePump, Message], Awaitable[None]]) -> Callable[..., Awaitable[None]]:
    @wraps(original)
    async def _dispatch_message(self: MessagePump, message: Message) -> None:
        _handling[0] += 1
        try:
            return await original(self, message)
        finally:
            _handling[0] -= 1

    return _dispatch_message


# Keys after Esc in one read, as typed: Textual's table reads ESC and these as the key alone (or, for
# f and b, a word's move), the Esc lost; `Esc ,` typed `,` into the box (newcomer trial 6). Not "[",
# which begins the sequences of the keys that have no character.
AFTER_ESC = {
    "enter": "\r",
    "space": " ",
    "backspace": "\x7f",
    **{_character_to_key(c): c for c in string.punctuation if c != "["},
}
# Esc then a letter in one read, as alt+letter: Textual reads it so only when nothing follows in
# the same read; with another sequence after it (an arrow, an F-key) it gave up on it and typed
# `^` and the letter (`Esc j Down` gave `port:22^j`: newcomer trial 16). Not the letters that begin
# longer sequences (O: SS3, F1 and arrows on some terminals; P, N, X: DCS, SS2, SOS).
ESC_LETTERS = {
    **{c: c for c in string.ascii_lowercase},
    **{f"shift+{c.lower()}": c for c in string.ascii_uppercase if c not in "OPNX"},
}
SPLIT_ALWAYS = frozenset(f"alt+{name}" for name in AFTER_ESC)  # (a text box binds alt+backspace)


class EscThenLetter(App[None]):
    """An app where alt+letter or alt+digit that nothing binds is handled as Esc then the key (see above)."""

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and (event.key in SPLIT_ALWAYS or event.key not in self.active_bindings):
            keys = esc_then_letter(event)
            if keys is not None:
                escape, letter = keys
                # The letter takes its turn once what Esc does is through (KeysInTurn). Handed over
                # with it, it reached a table before the Esc's binding, which runs once the key has
                # bubbled up: the letter went into the box, then Esc took the focus back to the
                # table: `Esc 4 4 3` gave `4 43`, on the stream the 4 was lost (newcomer trial 12).
                waiting = getattr(self, "_keys_waiting", None)
                if waiting is not None and getattr(self, "_keys_turns", None) is not None:
                    waiting.appendleft(letter)
                    await super().on_event(escape)
                    return
                for key in keys:
                    await super().on_event(key)
                return
        await super().on_event(event)


def esc_then_letter(event: events.Key) -> list[events.Key] | None:
    """alt+letter or alt+digit (ESC then it in one read) as the two keys typed one after the other."""
    name = event.key.removeprefix("alt+")
    if name == event.key:
        return None
    if name in AFTER_ESC:
        return [events.Key("escape", "\x1b"), events.Key(name, AFTER_ESC[name])]
    letter = name.removeprefix("shift+").upper() if name.startswith("shift+") else name
    if len(letter) != 1 or not letter.isascii() or not letter.isalnum():
        return None
    return [events.Key("escape", "\x1b"), events.Key(letter, letter)]
