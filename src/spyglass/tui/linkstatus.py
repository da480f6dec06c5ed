"""The status bar's account of the link (a base of the app class): what state it says, which
clients it hears from (only those in use), the health check that asks between calls, and the
probe that asks again after a drop until the server answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import getters, work
from textual.app import App

from spyglass.backoff import Backoff
from spyglass.tui.connection import Connection, State
from spyglass.tui.widgets.statusbar import StatusBar

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.timer import Timer

    from spyglass.client import Clients
    from spyglass.client.transport import Reachability

PROBE_BACKOFF = Backoff(base=1.0, cap=30.0, jitter=0.5)  # seconds between the checks after a drop


class LinkStatus(App[None]):
    status = getters.query_one(StatusBar)
    _probe: Timer | None = None  # the next check after a drop
    _probe_attempt = 0
    clients: Clients | None
    connection: Connection
    connect: Callable[[], object]  # (the app's: a fresh connection, in a worker)

    def set_state(self, state: State, detail: str = "", hint: str = "") -> None:
        self.status.state = state
        self.status.detail = detail
        self.status.hint = hint
        self.status.endpoint = self.connection.endpoint

    def stop_following(self, clients: Clients | None) -> None:
        """The app no longer hears from ``clients`` (those of a backend that died, or of the profile
        left): a call of theirs still retrying fails after the reconnect, and would say "unreachable"
        of the server the dashboard now uses, until its own calls changed something."""
        if clients is not None:
            mine = [each for each in clients.credits.listeners if getattr(each, "__self__", None) is self]
            heard = [each for each in clients.reachability.listeners if getattr(each, "__self__", None) is self]
            for spent in mine:
                clients.credits.listeners.remove(spent)
            for reached in heard:
                clients.reachability.listeners.remove(reached)

    def _reachability_changed(self, reach: Reachability) -> None:
        """Any call that loses the server shows at once; the next that reaches it clears it."""
        if self.clients is None or reach is not self.clients.reachability:
            return  # the clients of another connection (closed, or of a dead backend)
        if reach.reachable:
            self.set_state(State.CONNECTED)
            if self._probe is not None:
                self._probe.stop()
                self._probe = None
        else:
            self.set_state(State.FAILED, reach.problem, "ctrl+r reconnects")
            if self._probe is None:
                self._probe_attempt = 0
                self._next_probe()

    def _next_probe(self) -> None:
        """After a drop the dashboard asks again by itself, ever less often, until the server
        answers: "unreachable" must not stay while it is up. (A timer between the calls, not a
        worker that waits: nothing runs in between.)"""
        self._probe_attempt += 1
        self._probe = self.set_timer(PROBE_BACKOFF.delay(self._probe_attempt), self.probe_link)

    def keep_connecting(self) -> None:
        """The first connection failed (the server not up yet): asked again as after a drop, ever
        less often, until it answers (a dashboard started before its server stayed 'unreachable')."""
        if self._probe is None:
            self._next_probe()

    @work(exclusive=True, group="probe", exit_on_error=False)
    async def probe_link(self) -> None:
        clients = self.clients
        if clients is None:  # never connected: connect (a failure asks again: keep_connecting)
            self._probe = None
            self.connect()
            return
        await self._ask(clients)
        if clients is self.clients and clients.reachability.reachable is False and self._probe is not None:
            self._next_probe()
        else:
            self._probe = None

    @work(exclusive=True, group="health", exit_on_error=False)
    async def check_health(self) -> None:
        if self.clients is not None:
            await self._ask(self.clients)

    async def _ask(self, clients: Clients) -> None:
        """One light call; what it finds shows in the status bar (when ``clients`` are still in use)."""
        from spyglass.client import APIError, SpyglassError

        if clients is not self.clients:
            return
        try:
            await clients.account.api_info()  # reachability listeners follow the link itself
        except APIError as exc:  # reached, but refused: a revoked key, an expired plan
            if clients is self.clients:
                self.set_state(State.REFUSED, str(exc), "ctrl+r retries")
        except SpyglassError:
            pass
        else:  # an answer: a failure or refusal the bar still shows is over
            if clients is self.clients and self.status.state in (State.FAILED, State.REFUSED):
                self.set_state(State.CONNECTED)
