"""Alerts, notifiers, the delivery queue and its log on PostgreSQL: the
:class:`~spyglass.server.state.alerts.AlertState` that several backends share.

Every backend's trigger engine reads the same alerts (``alert_changes`` counts their writes, so an
engine knows when to read them again), and every backend's delivery worker takes deliveries from
the same queue: :meth:`PostgresAlerts.due` claims rows with ``FOR UPDATE SKIP LOCKED`` and moves
their ``next_try`` to the end of a lease (:data:`~spyglass.server.state.alerts.LEASE`), which the
worker renews while an attempt runs. A backend killed mid-attempt stops renewing; the row is due
again when its lease ends, and another backend takes it over. Every statement takes its values as
parameters.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg

from spyglass.netblocks import Netblock
from spyglass.server.alerts.rows import AlertRow, Busy, Delivery, Held, NotifierRow
from spyglass.server.postgres.connect import Pool, holds_nul, row_of
from spyglass.server.postgres.schema import init_schema
from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import iso, utcnow
from spyglass.server.state.alerts import (
    DEFAULT_NOTIFIER,
    FAILED,
    LEASE,
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

CHANGED = "UPDATE alert_changes SET n = n + 1"


class PostgresAlerts:
    """Thread-safe (a pool); every write is one transaction."""

    def __init__(self, url: str, clock: Callable[[], datetime] = utcnow) -> None:
        self.clock = clock
        init_schema(url)
        self._pool = Pool(url)

    def close(self) -> None:
        self._pool.close()

    @contextmanager
    def _changing(self) -> Iterator[psycopg.Connection[Any]]:
        """A transaction that changes alerts: every backend's version moves with it."""
        with self._pool.transaction() as db:
            yield db
            db.execute(CHANGED)

    # -- alerts ----------------------------------------------------------------------------
    def version(self) -> tuple[int, int]:
        return 0, self._pool.one("SELECT n FROM alert_changes")["n"]

    def monitored(self, account_id: int, leaving_out: str | None = None) -> int:
        row = self._pool.one(
            "SELECT COALESCE(SUM(size), 0) AS n FROM alerts WHERE account_id = %s AND id IS DISTINCT FROM %s",
            (account_id, leaving_out),
        )
        return int(row["n"])

    @staticmethod
    def _within(
        db: psycopg.Connection[Any], account_id: int, size: int, budget: int | None, leaving_out: str = ""
    ) -> None:
        """OverBudget unless ``size`` more addresses keep the account within ``budget``. The
        account's lock, held to the end of the transaction, makes every backend's creates and edits
        of its alerts one at a time: read committed alone lets two each see the other's absent."""
        if budget is None:
            return
        db.execute("SELECT pg_advisory_xact_lock(hashtextextended('alert budget ' || %s, 0))", (account_id,))
        in_use = row_of(
            db.execute(
                "SELECT COALESCE(SUM(size), 0) AS n FROM alerts WHERE account_id = %s AND id != %s",
                (account_id, leaving_out),
            )
        )["n"]
        if in_use + size > budget:
            raise OverBudget(int(in_use))

    def create_alert(
        self, account_id: int, name: str, networks: list[Netblock], expires: int, budget: int | None = None
    ) -> AlertRow:
        alert_id = new_id(16)
        text, size = nets(networks)
        with self._changing() as db:
            self._within(db, account_id, size, budget)
            db.execute(
                "INSERT INTO alerts (id, account_id, name, created, expires, networks, size)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s)",
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
        text, size = nets(networks)
        with self._changing() as db:
            self._within(db, account_id, size, budget, alert_id)
            db.execute(
                "UPDATE alerts SET networks = %s, size = %s, expires = COALESCE(%s, expires)"
                " WHERE id = %s AND account_id = %s",
                (text, size, expires, alert_id, account_id),
            )

    def alert(self, account_id: int, alert_id: str) -> AlertRow | None:
        if holds_nul(alert_id):
            return None
        rows = self._complete("SELECT * FROM alerts WHERE id = %s AND account_id = %s", (alert_id, account_id))
        return rows[0] if rows else None

    def alerts(self, account_id: int | None = None) -> list[AlertRow]:
        """The account's alerts (every account's with None), oldest first."""
        if account_id is None:
            return self._complete("SELECT * FROM alerts ORDER BY created, id", ())
        return self._complete("SELECT * FROM alerts WHERE account_id = %s ORDER BY created, id", (account_id,))

    def _complete(self, sql: str, args: tuple) -> list[AlertRow]:
        """The alerts ``sql`` selects with their triggers, ignores and notifiers, read in one transaction."""
        with self._pool.transaction() as db:
            alerts = {r["id"]: alert_from(r) for r in db.execute(sql, args).fetchall()}
            if not alerts:
                return []
            ids = list(alerts)
            for r in db.execute(
                "SELECT * FROM alert_triggers WHERE alert_id = ANY(%s) ORDER BY trigger", (ids,)
            ).fetchall():
                alerts[r["alert_id"]].triggers.append(r["trigger"])
            for r in db.execute(
                "SELECT * FROM alert_ignores WHERE alert_id = ANY(%s) ORDER BY service", (ids,)
            ).fetchall():
                alerts[r["alert_id"]].ignores.setdefault(r["trigger"], []).append(r["service"])
            for r in db.execute(
                "SELECT * FROM alert_notifiers WHERE alert_id = ANY(%s) ORDER BY notifier_id", (ids,)
            ).fetchall():
                alerts[r["alert_id"]].notifiers.append(r["notifier_id"])
        return list(alerts.values())

    def delete_alert(self, account_id: int, alert_id: str) -> bool:
        if holds_nul(alert_id):
            return False
        with self._changing() as db:
            gone = db.execute("DELETE FROM alerts WHERE id = %s AND account_id = %s", (alert_id, account_id)).rowcount
            if gone:
                db.execute("DELETE FROM alert_triggers WHERE alert_id = %s", (alert_id,))
                db.execute("DELETE FROM alert_ignores WHERE alert_id = %s", (alert_id,))
                db.execute("DELETE FROM alert_notifiers WHERE alert_id = %s", (alert_id,))
                db.execute("DELETE FROM deliveries WHERE alert_id = %s AND state = %s", (alert_id, PENDING))
        return bool(gone)

    def set_triggers(self, alert_id: str, names: list[str], enabled: bool) -> None:
        with self._changing() as db:
            for name in names:
                if enabled:
                    db.execute("INSERT INTO alert_triggers VALUES (%s, %s) ON CONFLICT DO NOTHING", (alert_id, name))
                else:
                    db.execute("DELETE FROM alert_triggers WHERE alert_id = %s AND trigger = %s", (alert_id, name))

    def set_ignored(self, alert_id: str, trigger: str, service: str, ignored: bool) -> None:
        with self._changing() as db:
            if ignored:
                db.execute(
                    "INSERT INTO alert_ignores VALUES (%s, %s, %s) ON CONFLICT DO NOTHING", (alert_id, trigger, service)
                )
            else:
                db.execute(
                    "DELETE FROM alert_ignores WHERE alert_id = %s AND trigger = %s AND service = %s",
                    (alert_id, trigger, service),
                )

    def set_attached(self, alert_id: str, notifier_id: str, attached: bool) -> None:
        with self._changing() as db:
            if attached:
                db.execute(
                    "INSERT INTO alert_notifiers VALUES (%s, %s) ON CONFLICT DO NOTHING", (alert_id, notifier_id)
                )
            else:
                db.execute(
                    "DELETE FROM alert_notifiers WHERE alert_id = %s AND notifier_id = %s", (alert_id, notifier_id)
                )

    # -- notifiers -------------------------------------------------------------------------
    def ensure_default(self, account_id: int, email: str | None) -> None:
        with self._pool.transaction() as db:
            db.execute(
                "INSERT INTO notifiers VALUES (%s, %s, 'email', NULL, %s, %s) ON CONFLICT DO NOTHING",
                (account_id, DEFAULT_NOTIFIER, json.dumps({"to": email or ""}), iso(self.clock())),
            )

    def create_notifier(
        self, account_id: int, provider: str, description: str | None, args: dict[str, str], most: int | None = None
    ) -> str:
        notifier_id = new_id(11)
        with self._pool.transaction() as db:
            if most is not None:  # the account's lock to the end of the transaction: its creates one at a time
                db.execute("SELECT pg_advisory_xact_lock(hashtextextended('notifiers ' || %s, 0))", (account_id,))
                kept = row_of(db.execute("SELECT count(*) AS n FROM notifiers WHERE account_id = %s", (account_id,)))
                if kept["n"] >= most:
                    raise OverBudget(int(kept["n"]))
            db.execute(
                "INSERT INTO notifiers VALUES (%s, %s, %s, %s, %s, %s)",
                (account_id, notifier_id, provider, description, json.dumps(args), iso(self.clock())),
            )
        return notifier_id

    def update_notifier(self, account_id: int, notifier_id: str, description: str | None, args: dict[str, str]) -> None:
        with self._pool.transaction() as db:
            db.execute(
                "UPDATE notifiers SET args = %s, description = %s WHERE account_id = %s AND id = %s",
                (json.dumps(args), description, account_id, notifier_id),
            )

    def notifier(self, account_id: int, notifier_id: str) -> NotifierRow | None:
        if holds_nul(notifier_id):
            return None
        row = self._pool.one("SELECT * FROM notifiers WHERE account_id = %s AND id = %s", (account_id, notifier_id))
        return notifier_from(row) if row else None

    def notifiers(self, account_id: int) -> list[NotifierRow]:
        rows = self._pool.all(
            "SELECT * FROM notifiers WHERE account_id = %s ORDER BY id != %s, created, id",
            (account_id, DEFAULT_NOTIFIER),
        )
        return [notifier_from(r) for r in rows]

    def delete_notifier(self, account_id: int, notifier_id: str) -> bool:
        if holds_nul(notifier_id):
            return False
        with self._changing() as db:
            gone = db.execute(
                "DELETE FROM notifiers WHERE account_id = %s AND id = %s", (account_id, notifier_id)
            ).rowcount
            if gone:
                db.execute(
                    "DELETE FROM alert_notifiers WHERE notifier_id = %s"
                    " AND alert_id IN (SELECT id FROM alerts WHERE account_id = %s)",
                    (notifier_id, account_id),
                )
                db.execute(
                    "DELETE FROM deliveries WHERE account_id = %s AND notifier_id = %s AND state = %s",
                    (account_id, notifier_id, PENDING),
                )
        return bool(gone)

    # -- collected banners held until matched (by any backend: queuing is idempotent) -------
    def hold(self, batches: list[list[tuple[dict, bool, str]]], now: float) -> None:
        if not any(batches):
            return
        with self._pool.transaction() as db:
            for batch in filter(None, batches):
                db.execute(
                    "INSERT INTO held_banners (batch, held, next_try) VALUES (%s, %s, %s)",
                    (json.dumps(batch), now, now),
                )

    def held(self, now: float, limit: int = 20) -> list[Held]:
        rows = self._pool.all(
            "SELECT * FROM held_banners WHERE next_try <= %s ORDER BY next_try, id LIMIT %s", (now, limit)
        )
        return [held_from(r) for r in rows]

    def next_held(self) -> float | None:
        return self._pool.one("SELECT MIN(next_try) AS t FROM held_banners")["t"]

    def hold_again(self, held_id: int, next_try: float) -> None:
        self._pool.one(
            "UPDATE held_banners SET attempts = attempts + 1, next_try = %s WHERE id = %s RETURNING id",
            (next_try, held_id),
        )

    def held_due(self, now: float) -> None:
        with self._pool.transaction() as db:
            db.execute("UPDATE held_banners SET next_try = %s WHERE next_try > %s", (now, now))

    def release(self, held_id: int) -> None:
        with self._pool.transaction() as db:
            db.execute("DELETE FROM held_banners WHERE id = %s", (held_id,))

    # -- the delivery queue, shared by every backend ----------------------------------------
    def enqueue(self, items: list[tuple[str, int, str, str, dict]], now: float, release: int | None = None) -> int:
        added = 0
        with self._pool.transaction() as db:
            if release is not None:
                db.execute("DELETE FROM held_banners WHERE id = %s", (release,))
            for event, account_id, alert_id, notifier_id, payload in items:
                added += db.execute(
                    "INSERT INTO deliveries (event, account_id, alert_id, notifier_id, payload, created, next_try,"
                    " state) VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (event, notifier_id) DO NOTHING",
                    (event, account_id, alert_id, notifier_id, json.dumps(payload), iso(self.clock()), now, PENDING),
                ).rowcount
        return added

    def due(self, now: float, limit: int = 20, *, busy: Busy = ((), (), ())) -> list[Delivery]:
        """Claims pending deliveries due by ``now`` (the longest waiting first, less ``busy``) for
        :data:`LEASE` seconds; rows another backend is claiming at this moment are skipped."""
        skip, values = _skipping(busy)
        rows = self._pool.all(
            "WITH picked AS (SELECT id, next_try AS was FROM deliveries"
            f" WHERE state = %s AND next_try <= %s{skip} ORDER BY next_try, id LIMIT %s FOR UPDATE SKIP LOCKED)"
            " UPDATE deliveries d SET next_try = %s FROM picked WHERE d.id = picked.id RETURNING d.*, picked.was",
            (PENDING, now, *values, limit, now + LEASE),
        )
        return [delivery_from(r) for r in sorted(rows, key=lambda r: (r["was"], r["id"]))]

    def next_due(self, *, busy: Busy = ((), (), ())) -> float | None:
        skip, values = _skipping(busy)
        return self._pool.one(f"SELECT MIN(next_try) AS t FROM deliveries WHERE state = %s{skip}", (PENDING, *values))[
            "t"
        ]

    def renew(self, delivery_ids: list[int], now: float) -> None:
        if delivery_ids:
            with self._pool.transaction() as db:
                db.execute(
                    "UPDATE deliveries SET next_try = %s WHERE id = ANY(%s) AND state = %s",
                    (now + LEASE, delivery_ids, PENDING),
                )

    def record(self, delivery: Delivery, provider: str, outcome: str, detail: str, next_try: float | None) -> None:
        state = {"sent": SENT, "retry": PENDING}.get(outcome, FAILED)
        with self._pool.transaction() as db:
            db.execute(
                "UPDATE deliveries SET state = %s, attempts = attempts + 1, next_try = %s WHERE id = %s",
                (state, next_try if next_try is not None else 0, delivery.id),
            )
            self._log(db, delivery.id, delivery.account_id, delivery.alert_id, delivery.notifier_id, provider,
                      delivery.event, delivery.attempts + 1, outcome, detail)  # fmt: skip

    def log_test(self, account_id: int, notifier_id: str, provider: str, event: str, outcome: str, detail: str) -> None:
        with self._pool.transaction() as db:
            self._log(db, None, account_id, None, notifier_id, provider, event, 1, outcome, detail)

    def _log(self, db: psycopg.Connection[Any], *values: Any) -> None:
        delivery_id, account_id, alert_id, notifier_id, provider, event, attempt, outcome, detail = values
        db.execute(
            "INSERT INTO delivery_log (delivery_id, account_id, alert_id, notifier_id, provider, event, at, attempt,"
            " outcome, detail) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            (delivery_id, account_id, alert_id, notifier_id, provider, event, iso(self.clock()), attempt, outcome,
             detail),
        )  # fmt: skip

    def log(self, account_id: int, alert_id: str, limit: int = 50) -> list[dict]:
        rows = self._pool.all(
            "SELECT l.*, d.payload FROM delivery_log l LEFT JOIN deliveries d ON d.id = l.delivery_id"
            " WHERE l.account_id = %s AND l.alert_id = %s ORDER BY l.id DESC LIMIT %s",
            (account_id, alert_id, limit),
        )
        return [log_entry(r) for r in rows]


def _skipping(busy: Busy) -> tuple[str, list]:
    """What the worker has in flight, left out of a look at the queue (as parameters)."""
    ids, notifiers, accounts = busy
    sql, values = "", list[Any]()
    if ids:
        sql, values = sql + " AND NOT (id = ANY(%s))", [*values, list(ids)]
    if notifiers:
        sql += " AND NOT ((account_id::text || ' ' || notifier_id) = ANY(%s))"
        values.append([f"{a} {n}" for a, n in notifiers])
    if accounts:
        sql, values = sql + " AND NOT (account_id = ANY(%s))", [*values, list(accounts)]
    return sql, values
