"""Alerts, notifiers, the delivery queue and its log on PostgreSQL: the
:class:`~spyglass.server.state.alerts.AlertState` that several backends share (written once, in
state/sql/alerts.py).

Every backend's trigger engine reads the same alerts (``alert_changes`` counts their writes, so an
engine knows when to read them again), and every backend's delivery worker takes deliveries from
the same queue: :meth:`PostgresAlerts.due` claims rows with ``FOR UPDATE SKIP LOCKED`` and moves
their ``next_try`` to the end of a lease (:data:`~spyglass.server.state.alerts.LEASE`), which the
worker renews while an attempt runs. A backend killed mid-attempt stops renewing; the row is due
again when its lease ends, and another backend takes it over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from spyglass.server.state.accounts import utcnow
from spyglass.server.state.alertrows import Busy, Delivery
from spyglass.server.state.alerts import LEASE, PENDING, delivery_from
from spyglass.server.state.postgres.connect import Pool
from spyglass.server.state.postgres.schema import init_schema
from spyglass.server.state.sql.alerts import SqlAlerts
from spyglass.server.state.sql.db import Tx

CHANGED = "UPDATE alert_changes SET n = n + 1"


class PostgresAlerts(SqlAlerts):
    """Thread-safe (a pool); every write is one transaction."""

    _db: Pool

    def __init__(self, url: str, clock: Callable[[], datetime] = utcnow) -> None:
        self.clock = clock
        init_schema(url)
        self._db = Pool(url)

    def version(self) -> tuple[int, int]:
        return 0, self._db.one("SELECT n FROM alert_changes")["n"]

    @contextmanager
    def _changing(self) -> Iterator[Tx]:
        """A transaction that changes alerts: every backend's version moves with it."""
        with self._db.transaction() as db:
            yield db
            db.execute(CHANGED)

    def due(self, now: float, limit: int = 20, *, busy: Busy = ((), (), ())) -> list[Delivery]:
        """Claims pending deliveries due by ``now`` (the longest waiting first, less ``busy``) for
        :data:`LEASE` seconds; rows another backend is claiming at this moment are skipped."""
        skip, values = self._skipping(busy)
        rows = self._db.all(
            "WITH picked AS (SELECT id, next_try AS was FROM deliveries"
            f" WHERE state = ? AND next_try <= ?{skip} ORDER BY next_try, id LIMIT ? FOR UPDATE SKIP LOCKED)"
            " UPDATE deliveries d SET next_try = ? FROM picked WHERE d.id = picked.id RETURNING d.*, picked.was",
            (PENDING, now, *values, limit, now + LEASE),
        )
        return [delivery_from(r) for r in sorted(rows, key=lambda r: (r["was"], r["id"]))]

    def renew(self, delivery_ids: list[int], now: float) -> None:
        self._due_at(delivery_ids, now + LEASE)

    def unclaim(self, delivery_ids: list[int], now: float) -> None:
        """A notifier's deliveries were all claimed at once and one started: the others waited out
        the lease, one delivery of a notifier every 15 s (a burst of 600 alerts to one webhook,
        paced at 5 a second on SQLite, would have taken hours here: test_delivery_rates.py)."""
        self._due_at(delivery_ids, now)

    def _due_at(self, delivery_ids: list[int], when: float) -> None:
        if delivery_ids:
            among, ids = self._db.any_of("id", delivery_ids)
            self._db.run(f"UPDATE deliveries SET next_try = ? WHERE {among} AND state = ?", (when, *ids, PENDING))
