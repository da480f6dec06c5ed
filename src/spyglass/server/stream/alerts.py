"""The stream filter of ``/alert`` and ``/alert/{id}``: banners inside the networks of an
account's alerts (or of one of them), followed as the alerts change.

The hub calls a filter for every published banner on the event loop, so the alerts are not read
per banner: their networks become one :class:`Coverage` (a bisection per banner), and whether the
alerts changed is asked of the store at most once every ``REFRESH`` seconds (a cheap pragma).
An alert that expired stops matching; one deleted while followed leaves its stream quiet.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable

from spyglass.server.alerts.coverage import Coverage
from spyglass.server.alerts.store import AlertRow, AlertStore
from spyglass.server.stream.hub import Published

REFRESH = 1.0  # seconds between looks at whether the alerts changed


class AlertNetworks:
    """A hub ``Match``: is the banner inside the networks of one of the account's live alerts?"""

    def __init__(
        self,
        store: AlertStore,
        account_id: int,
        alert_id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.account_id, self.alert_id, self.clock = store, account_id, alert_id, clock
        self._version: tuple[int, int] | None = None
        self._coverage: Coverage[float] = Coverage(())
        self._checked = clock()
        self._refresh()

    def _refresh(self) -> None:
        version = self.store.version()
        if version == self._version:
            return
        if self.alert_id is None:
            alerts = self.store.alerts(self.account_id)
        else:
            alerts = [a for a in [self.store.alert(self.account_id, self.alert_id)] if a is not None]
        self._coverage = Coverage((ends(a), a.parsed_networks()) for a in alerts)
        self._version = version

    def __call__(self, p: Published) -> bool:
        now = self.clock()
        if now - self._checked >= REFRESH:
            self._checked = now
            self._refresh()
        if p.ip is None:
            return False
        try:
            address = ipaddress.ip_address(p.ip)
        except ValueError:
            return False
        wall = time.time()
        return any(wall < end for end in self._coverage.covering(address))


def ends(alert: AlertRow) -> float:
    """When the alert stops matching, as a Unix time (infinity: never)."""
    end = alert.expiration()
    return float("inf") if end is None else end.timestamp()
