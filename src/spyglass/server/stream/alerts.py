"""The stream filter of ``/alert`` and ``/alert/{id}``: banners inside the networks of an
account's alerts (or of one of them), followed as the alerts change.

The hub calls a filter for every published banner on the event loop, so the alerts are not read
per banner: their networks become one :class:`Coverage` (a bisection per banner), and whether the
alerts changed is asked of the store at most once every ``REFRESH`` seconds, in a thread (building
the coverage of 100,000 networks takes a second): until it is built, the last one matches.
An alert that expired stops matching; one deleted while followed leaves its stream quiet.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections.abc import Callable

from spyglass.coverage import Coverage
from spyglass.server.state.alertrows import AlertRow, AlertSpans
from spyglass.server.state.alerts import AlertState
from spyglass.server.stream.hub import Published

log = logging.getLogger("spyglass.stream")

REFRESH = 1.0  # seconds between looks at whether the alerts changed


class AlertNetworks:
    """A hub ``Match``: is the banner inside the networks of one of the account's live alerts?"""

    def __init__(
        self,
        store: AlertState,
        account_id: int,
        alert_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.account_id, self.alert_id, self.clock = store, account_id, alert_id, clock
        self._version: tuple[int, int] | None = None
        self._coverage: Coverage[float] = Coverage(())
        self._spans = AlertSpans()
        self._checked = clock()
        self._refreshing: asyncio.Future | None = None
        self._refresh()  # the first: the caller builds it off the event loop

    def _refresh(self) -> None:
        version = self.store.version()
        if version == self._version:
            return
        if self.alert_id is None:
            alerts = self.store.alerts(self.account_id, networks=False)
        else:
            alerts = [a for a in [self.store.alert(self.account_id, self.alert_id)] if a is not None]
        self._coverage = Coverage((ends(a), self._spans(a)) for a in alerts)
        self._spans.keep_only([a.id for a in alerts])
        self._version = version

    def __call__(self, p: Published) -> bool:
        now = self.clock()
        if now - self._checked >= REFRESH and self._refreshing is None:
            self._checked = now
            self._refreshing = asyncio.get_running_loop().run_in_executor(None, self._refresh)
            self._refreshing.add_done_callback(self._refreshed)
        if p.ip is None:
            return False
        try:
            address = ipaddress.ip_address(p.ip)
        except ValueError:
            return False
        wall = time.time()
        return any(wall < end for end in self._coverage.covering(address))

    def _refreshed(self, done: asyncio.Future) -> None:
        self._refreshing = None
        if not done.cancelled() and done.exception() is not None:  # the last coverage goes on matching
            log.warning("the alerts of a stream could not be read again", exc_info=done.exception())


def ends(alert: AlertRow) -> float:
    """When the alert stops matching, as a Unix time (infinity: never)."""
    end = alert.expiration()
    return float("inf") if end is None else end.timestamp()
