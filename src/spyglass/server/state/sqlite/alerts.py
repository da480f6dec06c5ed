"""``<data_dir>/alerts.db``: alerts, their triggers, ignored services and notifiers, the
account's notifiers, the delivery queue and the delivery log (written once, in state/sql/alerts.py).

Every write is one transaction under the store's lock.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from spyglass.server.state.accounts import utcnow
from spyglass.server.state.alerts import DEFAULT_NOTIFIER
from spyglass.server.state.sql.alerts import SqlAlerts, add_spans
from spyglass.server.state.sqlite.database import Database

# Schema versions (see spyglass.server.state.sqlite.database): append a step for a new layout, never edit one.
V1_ALERTS = """
CREATE TABLE alerts (
    id TEXT PRIMARY KEY,
    account_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    expires INTEGER NOT NULL,
    networks TEXT NOT NULL,
    size INTEGER NOT NULL
);
CREATE INDEX alerts_account ON alerts(account_id);
CREATE TABLE alert_triggers (
    alert_id TEXT NOT NULL,
    trigger TEXT NOT NULL,
    PRIMARY KEY (alert_id, trigger)
);
CREATE TABLE alert_ignores (
    alert_id TEXT NOT NULL,
    trigger TEXT NOT NULL,
    service TEXT NOT NULL,
    PRIMARY KEY (alert_id, trigger, service)
);
CREATE TABLE notifiers (
    account_id INTEGER NOT NULL,
    id TEXT NOT NULL,
    provider TEXT NOT NULL,
    description TEXT,
    args TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (account_id, id)
);
CREATE TABLE alert_notifiers (
    alert_id TEXT NOT NULL,
    notifier_id TEXT NOT NULL,
    PRIMARY KEY (alert_id, notifier_id)
);
CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY,
    event TEXT NOT NULL,
    account_id INTEGER NOT NULL,
    alert_id TEXT NOT NULL,
    notifier_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    created TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_try REAL NOT NULL,
    state TEXT NOT NULL,
    UNIQUE (event, notifier_id)
);
CREATE INDEX deliveries_due ON deliveries(state, next_try);
CREATE TABLE delivery_log (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER,
    account_id INTEGER NOT NULL,
    alert_id TEXT,
    notifier_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    event TEXT NOT NULL,
    at TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX delivery_log_alert ON delivery_log(alert_id, id);
"""

# Collected banners inside an alert's networks, held from before they are matched until their
# notifications are queued: a pass that fails is tried again, and a restart matches them.
V2_HELD = """
CREATE TABLE held_banners (
    id INTEGER PRIMARY KEY,
    batch TEXT NOT NULL,
    held REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_try REAL NOT NULL
);
CREATE INDEX held_banners_due ON held_banners(next_try);
"""

MIGRATIONS = (V1_ALERTS, V2_HELD, add_spans("BLOB"))

__all__ = ["DEFAULT_NOTIFIER", "AlertStore"]


class AlertStore(SqlAlerts):
    """The :class:`~spyglass.server.state.alerts.AlertState` of one backend, in its data dir
    (written once, in state/sql/alerts.py)."""

    _db: Database

    def __init__(self, data_dir: Path, clock: Callable[[], datetime] = utcnow) -> None:
        self.clock = clock
        # FULL: a queued or delivered notification survives even an OS crash.
        self._db = Database(Path(data_dir) / "alerts.db", synchronous="FULL", migrations=MIGRATIONS)
        self._changes = 0  # alert writes through this store (see version)

    def version(self) -> tuple[int, int]:
        """Moves whenever what :meth:`alerts` returns may have changed: at each alert write here,
        and at any commit to the file by another connection (SQLite's ``data_version``)."""
        return self._changes, self._db.one("PRAGMA data_version")[0]

    @contextmanager
    def _changing(self) -> Iterator[sqlite3.Connection]:
        """A transaction that changes alerts: the version moves with it, under the same lock."""
        with self._db.lock:
            with self._db.transaction() as db:
                yield db
            self._changes += 1

    def renew(self, delivery_ids: list[int], now: float) -> None:
        """Nothing to renew: one backend owns this queue, and its worker skips what it has in flight."""

    def unclaim(self, delivery_ids: list[int], now: float) -> None:
        """Nothing claimed (as renew)."""
