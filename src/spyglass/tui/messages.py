"""The messages that move between panes, widgets, the palette and the app: a pane asks for another
pane through the app (it never calls the app, nor another pane), and the app tells panes what
happened to the connection. A pane's own calls are reported with the messages in panes/base.py."""

from __future__ import annotations

from typing import ClassVar

from textual.message import Message


class BackendGone(Message, bubble=False):
    """The app gave up the embedded backend: a pane that follows something live stops saying it
    will reconnect (ctrl+r starts it again)."""

    def __init__(self, why: str) -> None:
        super().__init__()
        self.why = why


class Navigate(Message):
    """Ask the app to show pane ``PANE`` and call its ``METHOD`` with ``arg``."""

    PANE: ClassVar[str] = ""
    METHOD: ClassVar[str] = "run_arg"

    def __init__(self, arg: str) -> None:
        super().__init__()
        self.arg = arg


class OpenHost(Navigate):
    """The host pane on ``address``, on one of its services (``22/tcp``) if given."""

    PANE = "host"

    def __init__(self, address: str, service: str = "") -> None:
        super().__init__(f"{address} {service}".strip())


class RunSearch(Navigate):
    PANE = "search"
    METHOD = "run_from_elsewhere"


class PingTarget(Navigate):
    PANE = "geo"


class ExcludeInSearch(Navigate):
    """The search pane's query without ``arg`` (a term such as ``org:"X"``), run again."""

    PANE = "search"
    METHOD = "exclude"


class Outdated(Message):
    """What pane ``PANE`` shows has changed elsewhere: the app marks it stale, so that it loads
    again when next shown."""

    PANE: ClassVar[str] = ""


class QuerySaved(Outdated):
    """A query was saved in the directory (the search pane's ctrl+s)."""

    PANE = "directory"
