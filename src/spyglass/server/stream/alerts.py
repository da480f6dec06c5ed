"""The stream filter of ``/alert`` and ``/alert/{id}``: banners inside the networks of an
account's alerts (or of one of them), followed as the alerts change.

The hub calls a filter for every published banner on the event loop, so the alerts are not read
per banner: their networks become one :class:`Coverage` (a bisection per banner), shared by the
streams that follow the same alerts, and whether the alerts changed is asked of the store at most
once every ``REFRESH`` seconds, in a thread (building the coverage of 100,000 networks takes a
second): until it is built, the last one matches.
An alert that expired stops matching; one deleted while followed leaves its stream quiet.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
import weakref
from collections.abc import Callable

from spyglass.coverage import Coverage
from spyglass.server.state.alertrows import AlertRow, AlertSpans
from spyglass.server.state.alerts import AlertState
from spyglass.server.stream.hub import Published

log = logging.getLogger("spyglass.stream")

REFRESH = 1.0  # seconds between looks at whether the alerts changed


class SharedCoverage:
    """The coverage of one account's alerts (or of one alert), shared by every stream that follows
    them, and built once per change of the alerts however many streams ask: built per stream
    opened, an account's 250 opens dropped at once (25,800 alerts) queued 1-2 s of building each
    in the threads every account's requests use, for minutes (attacker trial 4). A build waits at
    least ``PACE`` times the last one's length after it, so one account's large alerts, changed
    again and again, keep at most a fifth of a core building."""

    PACE = 4.0

    def __init__(self, store: AlertState, account_id: int, alert_id: str | None) -> None:
        self.store, self.account_id, self.alert_id = store, account_id, alert_id
        self.version: tuple[int, int] | None = None
        self.coverage: Coverage[float] = Coverage(())
        self.spans = AlertSpans()
        self.took = 0.0  # seconds the last build took
        self.finished = time.monotonic()  # when it ended
        self.building: asyncio.Future[None] | None = None

    def start(self) -> asyncio.Future[None]:
        """A build if the alerts changed, begun unless one is under way: that one."""
        if self.building is None:
            self.building = asyncio.ensure_future(asyncio.to_thread(self._build))
            self.building.add_done_callback(self._built)
        return self.building

    async def ready(self) -> None:
        await asyncio.shield(self.start())

    def due(self, now: float) -> bool:
        return self.building is None and now - self.finished >= max(REFRESH, self.PACE * self.took)

    def _build(self) -> None:
        started = time.monotonic()
        version = self.store.version()
        if version != self.version:
            if self.alert_id is None:
                alerts = self.store.alerts(self.account_id, networks=False)
            else:
                alerts = [a for a in [self.store.alert(self.account_id, self.alert_id)] if a is not None]
            self.coverage = Coverage((ends(a), self.spans(a)) for a in alerts)
            self.spans.keep_only([a.id for a in alerts])
            self.version = version
        self.finished = time.monotonic()
        self.took = self.finished - started

    def _built(self, done: asyncio.Future) -> None:
        self.building = None
        if not done.cancelled() and done.exception() is not None:  # the last coverage goes on matching
            log.warning("the alerts of a stream could not be read again", exc_info=done.exception())


class AlertCoverages:
    """The shared coverages of the streams open now, by (account, alert id or None)."""

    def __init__(self, store: AlertState) -> None:
        self.store = store
        self._shared: weakref.WeakValueDictionary[tuple[int, str | None], SharedCoverage] = (
            weakref.WeakValueDictionary()
        )

    async def follow(self, account_id: int, alert_id: str | None = None) -> AlertNetworks:
        """A stream filter of the account's alerts (or one), once their coverage is built."""
        key = (account_id, alert_id)
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = SharedCoverage(self.store, account_id, alert_id)
        match = AlertNetworks(shared)  # held before the wait: the entry lives while anyone waits
        await shared.ready()
        return match


class AlertNetworks:
    """A hub ``Match``: is the banner inside the networks of one of the account's live alerts?"""

    def __init__(self, shared: SharedCoverage, clock: Callable[[], float] = time.monotonic) -> None:
        self.shared, self.alert_id, self.clock = shared, shared.alert_id, clock

    def __call__(self, p: Published) -> bool:
        if self.shared.due(self.clock()):
            self.shared.start()
        if p.ip is None:
            return False
        try:
            address = ipaddress.ip_address(p.ip)
        except ValueError:
            return False
        wall = time.time()
        return any(wall < end for end in self.shared.coverage.covering(address))


def ends(alert: AlertRow) -> float:
    """When the alert stops matching, as a Unix time (infinity: never)."""
    end = alert.expiration()
    return float("inf") if end is None else end.timestamp()
