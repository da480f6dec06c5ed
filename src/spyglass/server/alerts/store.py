"""``<data_dir>/alerts.db``: alerts, their triggers, ignored services and notifiers, the
account's notifiers, the delivery queue and the delivery log.

Every write is one transaction under the store's lock. A delivery's outcome is written in the
same transaction that logs it, so a restart never sends a delivered notification again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from spyglass.netblocks import Netblock
from spyglass.server.alerts.rows import AlertRow, Busy, Delivery, Held, NotifierRow
from spyglass.server.sqlite import Database
from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import iso, utcnow
from spyglass.server.state.alerts import (
    DEFAULT_NOTIFIER,
    FAILED,
    PENDING,
    SENT,
    alert_from,
    delivery_from,
    held_from,
    log_entry,
    nets,
    new_id,
    notifier_from,
)

# Schema versions (see spyglass.server.sqlite): append a step for a new layout, never edit one.
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

MIGRATIONS = (V1_ALERTS, V2_HELD)

__all__ = ["DEFAULT_NOTIFIER", "AlertStore"]


class AlertStore:
    """The :class:`~spyglass.server.state.alerts.AlertState` of one backend, in its data dir."""

    def __init__(self, data_dir: Path, clock: Callable[[], datetime] = utcnow) -> None:
        self.clock = clock
        # FULL: a queued or delivered notification survives even an OS crash.
        self._db = Database(Path(data_dir) / "alerts.db", synchronous="FULL", migrations=MIGRATIONS)
        self._changes = 0  # alert writes through this store (see version)

    def close(self) -> None:
        self._db.close()

    # -- alerts ----------------------------------------------------------------------------
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

    def monitored(self, account_id: int, leaving_out: str | None = None) -> int:
        rows = self._db.read("SELECT id, size FROM alerts WHERE account_id = ?", (account_id,))
        return sum(r["size"] for r in rows if r["id"] != leaving_out)

    @staticmethod
    def _within(db: sqlite3.Connection, account_id: int, size: int, budget: int | None, leaving_out: str = "") -> None:
        """OverBudget unless ``size`` more addresses keep the account within ``budget``; read in the
        write transaction (BEGIN IMMEDIATE), so no other create or edit comes between."""
        if budget is None:
            return
        in_use = db.execute(
            "SELECT COALESCE(SUM(size), 0) FROM alerts WHERE account_id = ? AND id != ?", (account_id, leaving_out)
        ).fetchone()[0]
        if in_use + size > budget:
            raise OverBudget(in_use)

    def create_alert(
        self, account_id: int, name: str, networks: list[Netblock], expires: int, budget: int | None = None
    ) -> AlertRow:
        alert_id = new_id(16)
        text, size = nets(networks)
        with self._changing() as db:
            self._within(db, account_id, size, budget)
            db.execute(
                "INSERT INTO alerts (id, account_id, name, created, expires, networks, size) VALUES (?,?,?,?,?,?,?)",
                (alert_id, account_id, name, iso(self.clock()), expires, text, size),
            )
        created = self.alert(account_id, alert_id)
        assert created is not None  # written just above
        return created

    def set_networks(
        self,
        account_id: int,
        alert_id: str,
        networks: list[Netblock],
        expires: int | None = None,
        budget: int | None = None,
    ) -> None:
        """New networks, and a new ``expires`` (seconds after its creation) when one is given."""
        text, size = nets(networks)
        with self._changing() as db:
            self._within(db, account_id, size, budget, alert_id)
            db.execute(
                "UPDATE alerts SET networks = ?, size = ?, expires = COALESCE(?, expires)"
                " WHERE id = ? AND account_id = ?",
                (text, size, expires, alert_id, account_id),
            )

    def alert(self, account_id: int, alert_id: str) -> AlertRow | None:
        rows = self._db.read("SELECT * FROM alerts WHERE id = ? AND account_id = ?", (alert_id, account_id))
        return self._complete(rows)[0] if rows else None

    def alerts(self, account_id: int | None = None) -> list[AlertRow]:
        """The account's alerts (every account's with None), oldest first."""
        if account_id is None:
            return self._complete(self._db.read("SELECT * FROM alerts ORDER BY created, id"))
        return self._complete(
            self._db.read("SELECT * FROM alerts WHERE account_id = ? ORDER BY created, id", (account_id,))
        )

    def _complete(self, rows: list[Any]) -> list[AlertRow]:
        alerts = {r["id"]: alert_from(r) for r in rows}
        if not alerts:
            return []
        marks = ",".join("?" * len(alerts))
        ids = tuple(alerts)
        for r in self._db.read(f"SELECT * FROM alert_triggers WHERE alert_id IN ({marks}) ORDER BY trigger", ids):
            alerts[r["alert_id"]].triggers.append(r["trigger"])
        for r in self._db.read(f"SELECT * FROM alert_ignores WHERE alert_id IN ({marks}) ORDER BY service", ids):
            alerts[r["alert_id"]].ignores.setdefault(r["trigger"], []).append(r["service"])
        for r in self._db.read(f"SELECT * FROM alert_notifiers WHERE alert_id IN ({marks}) ORDER BY notifier_id", ids):
            alerts[r["alert_id"]].notifiers.append(r["notifier_id"])
        return list(alerts.values())

    def delete_alert(self, account_id: int, alert_id: str) -> bool:
        with self._changing() as db:
            gone = db.execute("DELETE FROM alerts WHERE id = ? AND account_id = ?", (alert_id, account_id)).rowcount
            if gone:
                for table in ("alert_triggers", "alert_ignores", "alert_notifiers"):
                    db.execute(f"DELETE FROM {table} WHERE alert_id = ?", (alert_id,))
                db.execute("DELETE FROM deliveries WHERE alert_id = ? AND state = ?", (alert_id, PENDING))
        return bool(gone)

    def set_triggers(self, alert_id: str, names: list[str], enabled: bool) -> None:
        with self._changing() as db:
            for name in names:
                if enabled:
                    db.execute("INSERT OR IGNORE INTO alert_triggers VALUES (?, ?)", (alert_id, name))
                else:
                    db.execute("DELETE FROM alert_triggers WHERE alert_id = ? AND trigger = ?", (alert_id, name))

    def set_ignored(self, alert_id: str, trigger: str, service: str, ignored: bool) -> None:
        with self._changing() as db:
            if ignored:
                db.execute("INSERT OR IGNORE INTO alert_ignores VALUES (?, ?, ?)", (alert_id, trigger, service))
            else:
                db.execute(
                    "DELETE FROM alert_ignores WHERE alert_id = ? AND trigger = ? AND service = ?",
                    (alert_id, trigger, service),
                )

    def set_attached(self, alert_id: str, notifier_id: str, attached: bool) -> None:
        with self._changing() as db:
            if attached:
                db.execute("INSERT OR IGNORE INTO alert_notifiers VALUES (?, ?)", (alert_id, notifier_id))
            else:
                db.execute(
                    "DELETE FROM alert_notifiers WHERE alert_id = ? AND notifier_id = ?", (alert_id, notifier_id)
                )

    # -- notifiers -------------------------------------------------------------------------
    def ensure_default(self, account_id: int, email: str | None) -> None:
        """Every account has the e-mail notifier ``default``, to the account's address."""
        with self._db.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO notifiers VALUES (?, ?, 'email', NULL, ?, ?)",
                (account_id, DEFAULT_NOTIFIER, json.dumps({"to": email or ""}), iso(self.clock())),
            )

    def create_notifier(
        self, account_id: int, provider: str, description: str | None, args: dict[str, str], most: int | None = None
    ) -> str:
        notifier_id = new_id(11)
        with self._db.transaction() as db:  # BEGIN IMMEDIATE: counted and written with no create between
            kept = db.execute("SELECT count(*) FROM notifiers WHERE account_id = ?", (account_id,)).fetchone()[0]
            if most is not None and kept >= most:
                raise OverBudget(kept)
            db.execute(
                "INSERT INTO notifiers VALUES (?, ?, ?, ?, ?, ?)",
                (account_id, notifier_id, provider, description, json.dumps(args), iso(self.clock())),
            )
        return notifier_id

    def update_notifier(self, account_id: int, notifier_id: str, description: str | None, args: dict[str, str]) -> None:
        with self._db.transaction() as db:
            db.execute(
                "UPDATE notifiers SET args = ?, description = ? WHERE account_id = ? AND id = ?",
                (json.dumps(args), description, account_id, notifier_id),
            )

    def notifier(self, account_id: int, notifier_id: str) -> NotifierRow | None:
        rows = self._db.read("SELECT * FROM notifiers WHERE account_id = ? AND id = ?", (account_id, notifier_id))
        return notifier_from(rows[0]) if rows else None

    def notifiers(self, account_id: int) -> list[NotifierRow]:
        rows = self._db.read(
            "SELECT * FROM notifiers WHERE account_id = ? ORDER BY id != ?, created, id", (account_id, DEFAULT_NOTIFIER)
        )
        return [notifier_from(r) for r in rows]

    def delete_notifier(self, account_id: int, notifier_id: str) -> bool:
        with self._changing() as db:
            gone = db.execute(
                "DELETE FROM notifiers WHERE account_id = ? AND id = ?", (account_id, notifier_id)
            ).rowcount
            if gone:
                mine = "SELECT id FROM alerts WHERE account_id = ?"
                db.execute(
                    f"DELETE FROM alert_notifiers WHERE notifier_id = ? AND alert_id IN ({mine})",
                    (notifier_id, account_id),
                )
                db.execute(
                    "DELETE FROM deliveries WHERE account_id = ? AND notifier_id = ? AND state = ?",
                    (account_id, notifier_id, PENDING),
                )
        return bool(gone)

    # -- collected banners held until matched ----------------------------------------------
    def hold(self, batches: list[list[tuple[dict, bool, str]]], now: float) -> None:
        """Hold batches of collected banners until :meth:`enqueue` releases them; due at once.
        Empty ones are skipped: where no alert watches, holding writes nothing."""
        if not any(batches):
            return
        with self._db.transaction() as db:
            for batch in filter(None, batches):
                db.execute(
                    "INSERT INTO held_banners (batch, held, next_try) VALUES (?, ?, ?)", (json.dumps(batch), now, now)
                )

    def held(self, now: float, limit: int = 20) -> list[Held]:
        """Held batches due by ``now``, the oldest first."""
        rows = self._db.read(
            "SELECT * FROM held_banners WHERE next_try <= ? ORDER BY next_try, id LIMIT ?", (now, limit)
        )
        return [held_from(r) for r in rows]

    def next_held(self) -> float | None:
        return self._db.one("SELECT MIN(next_try) FROM held_banners")[0]

    def hold_again(self, held_id: int, next_try: float) -> None:
        """A held batch whose matching failed: due again at ``next_try``."""
        self._db.run("UPDATE held_banners SET attempts = attempts + 1, next_try = ? WHERE id = ?", (next_try, held_id))

    def held_due(self, now: float) -> None:
        """Every held batch due by ``now`` (a start tries at once what the last run held)."""
        self._db.run("UPDATE held_banners SET next_try = ? WHERE next_try > ?", (now, now))

    def release(self, held_id: int) -> None:
        self._db.run("DELETE FROM held_banners WHERE id = ?", (held_id,))

    # -- the delivery queue ----------------------------------------------------------------
    def enqueue(self, items: list[tuple[str, int, str, str, dict]], now: float, release: int | None = None) -> int:
        """Queue (event, account, alert, notifier, payload) deliveries; an event already queued
        for a notifier is not queued again. Returns how many were new. ``release``: the held
        batch they were matched from, let go in the same transaction."""
        added = 0
        with self._db.transaction() as db:
            if release is not None:
                db.execute("DELETE FROM held_banners WHERE id = ?", (release,))
            for event, account_id, alert_id, notifier_id, payload in items:
                added += db.execute(
                    "INSERT OR IGNORE INTO deliveries (event, account_id, alert_id, notifier_id, payload, created,"
                    " next_try, state) VALUES (?,?,?,?,?,?,?,?)",
                    (event, account_id, alert_id, notifier_id, json.dumps(payload), iso(self.clock()), now, PENDING),
                ).rowcount
        return added

    def due(self, now: float, limit: int = 20, *, busy: Busy = ((), (), ())) -> list[Delivery]:
        """Pending deliveries due by ``now``, the longest waiting first, less those in flight and
        those of notifiers and accounts already at their share of the worker (``busy``)."""
        skip = self._skipping(busy)
        rows = self._db.read(
            f"SELECT * FROM deliveries WHERE state = ? AND next_try <= ?{skip[0]} ORDER BY next_try, id LIMIT ?",
            (PENDING, now, *skip[1], limit),
        )
        return [delivery_from(r) for r in rows]

    def next_due(self, *, busy: Busy = ((), (), ())) -> float | None:
        skip = self._skipping(busy)
        rows = self._db.read(f"SELECT MIN(next_try) AS t FROM deliveries WHERE state = ?{skip[0]}", (PENDING, *skip[1]))
        return rows[0]["t"]

    @staticmethod
    def _skipping(busy: Busy) -> tuple[str, list]:
        ids, notifiers, accounts = busy
        sql, values = "", []
        columns: list[tuple[str, list]] = [
            ("id", list(ids)),
            ("account_id || ' ' || notifier_id", [f"{a} {n}" for a, n in notifiers]),
            ("account_id", list(accounts)),
        ]
        for column, items in columns:
            if items:
                sql += f" AND {column} NOT IN ({','.join('?' * len(items))})"
                values += items
        return sql, values

    def renew(self, delivery_ids: list[int], now: float) -> None:
        """Nothing to renew: one backend owns this queue, and its worker skips what it has in flight."""

    def record(self, delivery: Delivery, provider: str, outcome: str, detail: str, next_try: float | None) -> None:
        """A delivery's outcome and its log line, in one transaction: ``sent``; ``retry`` (due
        again at ``next_try``); or ``failed`` (given up)."""
        state = {"sent": SENT, "retry": PENDING}.get(outcome, FAILED)
        with self._db.transaction() as db:
            db.execute(
                "UPDATE deliveries SET state = ?, attempts = attempts + 1, next_try = ? WHERE id = ?",
                (state, next_try if next_try is not None else 0, delivery.id),
            )
            self._log(db, delivery.id, delivery.account_id, delivery.alert_id, delivery.notifier_id, provider,
                      delivery.event, delivery.attempts + 1, outcome, detail)  # fmt: skip

    def log_test(self, account_id: int, notifier_id: str, provider: str, event: str, outcome: str, detail: str) -> None:
        with self._db.transaction() as db:
            self._log(db, None, account_id, None, notifier_id, provider, event, 1, outcome, detail)

    def _log(self, db: sqlite3.Connection, *values: Any) -> None:
        delivery_id, account_id, alert_id, notifier_id, provider, event, attempt, outcome, detail = values
        db.execute(
            "INSERT INTO delivery_log (delivery_id, account_id, alert_id, notifier_id, provider, event, at, attempt,"
            " outcome, detail) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                delivery_id,
                account_id,
                alert_id,
                notifier_id,
                provider,
                event,
                iso(self.clock()),
                attempt,
                outcome,
                detail,
            ),
        )

    def log(self, account_id: int, alert_id: str, limit: int = 50) -> list[dict]:
        """The alert's most recent delivery attempts, newest first."""
        rows = self._db.read(
            "SELECT l.*, d.payload FROM delivery_log l LEFT JOIN deliveries d ON d.id = l.delivery_id"
            " WHERE l.account_id = ? AND l.alert_id = ? ORDER BY l.id DESC LIMIT ?",
            (account_id, alert_id, limit),
        )
        return [log_entry(r) for r in rows]
