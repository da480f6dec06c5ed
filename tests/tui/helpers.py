"""Driving the real dashboard in tests: wait on its workers, never on the clock."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input


async def settle(pilot: Pilot, rounds: int = 100) -> None:
    """Wait until no worker is running and no message is waiting (workers may start others, e.g.
    panes after connect; a message may post one that starts a worker)."""
    from textual.worker import WorkerCancelled, WorkerFailed

    app = pilot.app
    for _ in range(rounds):
        try:
            await app.workers.wait_for_complete()
        except WorkerFailed:
            pass  # a failed call is the app's to report; tests look at what it shows
        except WorkerCancelled:
            pass  # a call a newer one replaced (an exclusive worker): the newer one is waited for next
        await pilot.pause()
        if not any(w.is_running for w in app.workers) and not _messages_waiting(app):
            return
    raise AssertionError("workers kept running")


async def until(pilot: Pilot, condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Wait for ``condition``, however slow the machine (a live stream, a lookup that answers late)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def _messages_waiting(app: App) -> bool:
    """Whether the app or a widget of its screen has a message still to handle. pilot.pause()
    handles those queued when it starts and then waits for the process to look idle, which a busy
    machine fakes (the process waits for a CPU, not for input): a chain of messages (a pane
    switch, then the lookup it asks for) can still be under way. Keys taking their turns
    (tui/keyorder.py) are posted one at a time, each once the one before it is through: between
    two, nothing is queued, yet keys are still to come."""
    if getattr(app, "_keys_turns", None) is not None or getattr(app, "_keys_held", None):
        return True
    return any(not node._message_queue.empty() for node in (app, *app.screen.walk_children(with_self=True)))


def screen_text(app: App) -> str:
    """What a person sees: the plain text of the screen, as export_screenshot renders it."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def no_blink(app: App) -> None:
    for field in app.screen.query(Input):
        field.cursor_blink = False


def one_read(app: App, *keys: str) -> None:
    """Keys as the driver hands them over when they arrive in one read (a fast typist, a slow
    link): all posted to the app before the first is handled."""
    from textual import events

    for key in keys:
        plain = key.removeprefix("alt+")  # Esc then a letter in one read: the parser's alt+g holds "g"
        character = {"enter": "\r", "escape": "\x1b", "tab": "\t"}.get(key, plain if len(plain) == 1 else None)
        app.post_message(events.Key(key, character))
