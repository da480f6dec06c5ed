"""Alerts, notifiers, the delivery queue and its log, and collected banners held until matched,
written once over :class:`~spyglass.server.state.sql.db.Db`: SQLite's (server/state/sqlite/alerts.py)
and PostgreSQL's (server/state/postgres/alerts.py) :class:`~spyglass.server.state.alerts.AlertState`.

Every write is one transaction. A delivery's outcome is written in the same transaction that logs
it, so a restart never sends a delivered notification again. How :meth:`SqlAlerts.version` moves,
and how a worker takes deliveries from the queue (:meth:`SqlAlerts.due`, ``renew``) when several
backends share it, are each state's own."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from spyglass.coverage import pack_spans, spans_of
from spyglass.netblocks import Netblock, parse_netblock
from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import iso
from spyglass.server.state.alertrows import AlertRow, Busy, Delivery, Held, NotifierRow
from spyglass.server.state.alerts import (
    DEFAULT_NOTIFIER,
    DROPPED,
    FAILED,
    PENDING,
    SENT,
    StoredNetworks,
    alert_from,
    delivery_from,
    held_from,
    log_entry,
    new_id,
    notifier_from,
    stored,
)
from spyglass.server.state.sql.db import Db, Tx


def add_spans(column_type: str) -> Callable[[Tx], None]:
    """A migration step: each alert's ranges packed beside its networks (``column_type``: the
    database's for bytes), for alerts written before them. A row that cannot be read keeps none,
    and matching leaves it out as before."""

    def step(db: Tx) -> None:
        db.execute(f"ALTER TABLE alerts ADD COLUMN spans {column_type}")
        for alert_id, networks in db.execute("SELECT id, networks FROM alerts").fetchall():
            try:
                parsed = [parse_netblock(n) for n in json.loads(networks)]
            except (ValueError, TypeError, AttributeError):
                continue
            db.execute("UPDATE alerts SET spans = ? WHERE id = ?", (pack_spans(spans_of(parsed)), alert_id))

    return step


# An alert's columns, its networks left out where its ranges are kept.
_BUT_NETWORKS = (
    "id, account_id, name, created, expires, size, spans,"
    " CASE WHEN spans IS NULL THEN networks ELSE '[]' END AS networks"
)


class SqlAlerts:
    """Thread-safe; every write is one transaction."""

    _db: Db
    clock: Callable[[], datetime]

    def close(self) -> None:
        self._db.close()

    def version(self) -> tuple[int, int]:
        """Moves whenever what :meth:`alerts` returns may have changed."""
        raise NotImplementedError

    def _changing(self) -> AbstractContextManager[Tx]:
        """A transaction that changes alerts: :meth:`version` moves with it."""
        raise NotImplementedError

    # -- alerts ----------------------------------------------------------------------------
    def monitored(self, account_id: int, leaving_out: str | None = None) -> int:
        row = self._db.one(
            "SELECT COALESCE(SUM(size), 0) AS n FROM alerts WHERE account_id = ? AND id != ?",
            (account_id, leaving_out or ""),  # (no alert's id is empty)
        )
        return int(row["n"])

    def _within(self, db: Tx, account_id: int, size: int, budget: int | None, leaving_out: str = "") -> None:
        """OverBudget unless ``size`` more addresses keep the account within ``budget``; read with
        the account's creates and edits of its alerts one at a time to the end of the transaction."""
        if budget is None:
            return
        self._db.one_at_a_time(db, "alert budget", account_id)
        in_use = db.execute(
            "SELECT COALESCE(SUM(size), 0) AS n FROM alerts WHERE account_id = ? AND id != ?", (account_id, leaving_out)
        ).fetchone()["n"]
        if in_use + size > budget:
            raise OverBudget(int(in_use))

    def create_alert(
        self,
        account_id: int,
        name: str,
        networks: list[Netblock] | StoredNetworks,
        expires: int,
        budget: int | None = None,
    ) -> AlertRow:
        alert_id = new_id(16)
        kept = stored(networks)
        with self._changing() as db:
            self._within(db, account_id, kept.size, budget)
            db.execute(
                "INSERT INTO alerts (id, account_id, name, created, expires, networks, size, spans)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (alert_id, account_id, name, iso(self.clock()), expires, kept.text, kept.size, kept.spans),
            )
        created = self.alert(account_id, alert_id)
        assert created is not None  # written just above
        return created

    def set_networks(
        self,
        account_id: int,
        alert_id: str,
        networks: list[Netblock] | StoredNetworks,
        expires: int | None = None,
        budget: int | None = None,
    ) -> None:
        """New networks, and a new ``expires`` (seconds after its creation) when one is given."""
        kept = stored(networks)
        with self._changing() as db:
            self._within(db, account_id, kept.size, budget, alert_id)
            db.execute(
                "UPDATE alerts SET networks = ?, size = ?, spans = ?, expires = COALESCE(?, expires)"
                " WHERE id = ? AND account_id = ?",
                (kept.text, kept.size, kept.spans, expires, alert_id, account_id),
            )

    def alert(self, account_id: int, alert_id: str) -> AlertRow | None:
        if self._db.unstorable(alert_id):
            return None
        rows = self._complete("SELECT * FROM alerts WHERE id = ? AND account_id = ?", (alert_id, account_id))
        return rows[0] if rows else None

    def alerts(self, account_id: int | None = None, *, networks: bool = True) -> list[AlertRow]:
        """The account's alerts (every account's with None), oldest first; not ``networks``: their
        ``networks`` left empty where their ``spans`` are kept (what matching needs)."""
        columns = "*" if networks else _BUT_NETWORKS
        if account_id is None:
            return self._complete(f"SELECT {columns} FROM alerts ORDER BY created, id", ())
        return self._complete(f"SELECT {columns} FROM alerts WHERE account_id = ? ORDER BY created, id", (account_id,))

    def _complete(self, sql: str, args: tuple) -> list[AlertRow]:
        """The alerts ``sql`` selects with their triggers, ignores and notifiers, read together."""
        with self._db.reading() as db:
            alerts = {r["id"]: alert_from(r) for r in db.execute(sql, args).fetchall()}
            if not alerts:
                return []
            among, ids = self._db.any_of("alert_id", list(alerts))
            for r in db.execute(f"SELECT * FROM alert_triggers WHERE {among} ORDER BY trigger", ids).fetchall():
                alerts[r["alert_id"]].triggers.append(r["trigger"])
            for r in db.execute(f"SELECT * FROM alert_ignores WHERE {among} ORDER BY service", ids).fetchall():
                alerts[r["alert_id"]].ignores.setdefault(r["trigger"], []).append(r["service"])
            for r in db.execute(f"SELECT * FROM alert_notifiers WHERE {among} ORDER BY notifier_id", ids).fetchall():
                alerts[r["alert_id"]].notifiers.append(r["notifier_id"])
        return list(alerts.values())

    def delete_alert(self, account_id: int, alert_id: str) -> bool:
        if self._db.unstorable(alert_id):
            return False
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
                    db.execute("INSERT INTO alert_triggers VALUES (?, ?) ON CONFLICT DO NOTHING", (alert_id, name))
                else:
                    db.execute("DELETE FROM alert_triggers WHERE alert_id = ? AND trigger = ?", (alert_id, name))

    def set_ignored(self, alert_id: str, trigger: str, service: str, ignored: bool, most: int | None = None) -> None:
        with self._changing() as db:
            if ignored and most is not None:  # counted and written with no other ignore of the alert's between
                self._db.one_at_a_time(db, "alert_ignores", alert_id)
                kept = db.execute("SELECT count(*) AS n FROM alert_ignores WHERE alert_id = ?", (alert_id,)).fetchone()
                there = db.execute(
                    "SELECT 1 FROM alert_ignores WHERE alert_id = ? AND trigger = ? AND service = ?",
                    (alert_id, trigger, service),
                ).fetchone()
                if kept["n"] >= most and there is None:
                    raise OverBudget(int(kept["n"]))
            if ignored:
                db.execute(
                    "INSERT INTO alert_ignores VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (alert_id, trigger, service)
                )
            else:
                db.execute(
                    "DELETE FROM alert_ignores WHERE alert_id = ? AND trigger = ? AND service = ?",
                    (alert_id, trigger, service),
                )

    def set_attached(self, alert_id: str, notifier_id: str, attached: bool) -> None:
        with self._changing() as db:
            if attached:
                db.execute("INSERT INTO alert_notifiers VALUES (?, ?) ON CONFLICT DO NOTHING", (alert_id, notifier_id))
            else:
                db.execute(
                    "DELETE FROM alert_notifiers WHERE alert_id = ? AND notifier_id = ?", (alert_id, notifier_id)
                )

    # -- notifiers -------------------------------------------------------------------------
    def ensure_default(self, account_id: int, email: str | None) -> None:
        """Every account has the e-mail notifier ``default``, to the account's address."""
        self._db.run(
            "INSERT INTO notifiers VALUES (?, ?, 'email', NULL, ?, ?) ON CONFLICT DO NOTHING",
            (account_id, DEFAULT_NOTIFIER, json.dumps({"to": email or ""}), iso(self.clock())),
        )

    def create_notifier(
        self, account_id: int, provider: str, description: str | None, args: dict[str, str], most: int | None = None
    ) -> str:
        notifier_id = new_id(11)
        with self._db.transaction() as db:
            if most is not None:  # counted and written with no create of the account's between
                self._db.one_at_a_time(db, "notifiers", account_id)
                kept = db.execute("SELECT count(*) AS n FROM notifiers WHERE account_id = ?", (account_id,)).fetchone()
                if kept["n"] >= most:
                    raise OverBudget(int(kept["n"]))
            db.execute(
                "INSERT INTO notifiers VALUES (?, ?, ?, ?, ?, ?)",
                (account_id, notifier_id, provider, description, json.dumps(args), iso(self.clock())),
            )
        return notifier_id

    def update_notifier(self, account_id: int, notifier_id: str, description: str | None, args: dict[str, str]) -> None:
        self._db.run(
            "UPDATE notifiers SET args = ?, description = ? WHERE account_id = ? AND id = ?",
            (json.dumps(args), description, account_id, notifier_id),
        )

    def notifier(self, account_id: int, notifier_id: str) -> NotifierRow | None:
        if self._db.unstorable(notifier_id):
            return None
        row = self._db.one("SELECT * FROM notifiers WHERE account_id = ? AND id = ?", (account_id, notifier_id))
        return notifier_from(row) if row else None

    def notifiers(self, account_id: int) -> list[NotifierRow]:
        rows = self._db.all(
            "SELECT * FROM notifiers WHERE account_id = ? ORDER BY id != ?, created, id", (account_id, DEFAULT_NOTIFIER)
        )
        return [notifier_from(r) for r in rows]

    def delete_notifier(self, account_id: int, notifier_id: str) -> bool:
        if self._db.unstorable(notifier_id):
            return False
        with self._changing() as db:
            provider = db.execute(
                "SELECT provider FROM notifiers WHERE account_id = ? AND id = ?", (account_id, notifier_id)
            ).fetchone()
            gone = db.execute(
                "DELETE FROM notifiers WHERE account_id = ? AND id = ?", (account_id, notifier_id)
            ).rowcount
            if gone:
                db.execute(
                    "DELETE FROM alert_notifiers WHERE notifier_id = ?"
                    " AND alert_id IN (SELECT id FROM alerts WHERE account_id = ?)",
                    (notifier_id, account_id),
                )
                self._drop(db, account_id, notifier_id, provider["provider"] if provider else "")
        return bool(gone)

    def _drop(self, db: Tx, account_id: int, notifier_id: str, provider: str) -> None:
        """Its pending deliveries end, each said in its alert's log (newcomer trial 21: the log's
        last line read "retry", as if they were still to be tried); kept, not deleted, so that
        their log rows still say what each was about."""
        pending = db.execute(
            "SELECT id, alert_id, event, attempts FROM deliveries"
            " WHERE account_id = ? AND notifier_id = ? AND state = ?",
            (account_id, notifier_id, PENDING),
        ).fetchall()
        db.execute(
            "UPDATE deliveries SET state = ? WHERE account_id = ? AND notifier_id = ? AND state = ?",
            (DROPPED, account_id, notifier_id, PENDING),
        )
        for row in pending:
            self._log(db, row["id"], account_id, row["alert_id"], notifier_id, provider, row["event"],
                      row["attempts"], "dropped", "its notifier was deleted: not sent")  # fmt: skip

    # -- collected banners held until matched (by any backend: queuing is idempotent) -------
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
        rows = self._db.all(
            "SELECT * FROM held_banners WHERE next_try <= ? ORDER BY next_try, id LIMIT ?", (now, limit)
        )
        return [held_from(r) for r in rows]

    def next_held(self) -> float | None:
        return self._db.one("SELECT MIN(next_try) AS t FROM held_banners")["t"]

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
                    "INSERT INTO deliveries (event, account_id, alert_id, notifier_id, payload, created, next_try,"
                    " state) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (event, notifier_id) DO NOTHING",
                    (event, account_id, alert_id, notifier_id, json.dumps(payload), iso(self.clock()), now, PENDING),
                ).rowcount
        return added

    def due(self, now: float, limit: int = 20, *, busy: Busy = ((), (), ())) -> list[Delivery]:
        """Pending deliveries due by ``now``, the longest waiting first, less those in flight and
        those of notifiers and accounts already at their share of the worker (``busy``)."""
        skip, values = self._skipping(busy)
        rows = self._db.all(
            f"SELECT * FROM deliveries WHERE state = ? AND next_try <= ?{skip} ORDER BY next_try, id LIMIT ?",
            (PENDING, now, *values, limit),
        )
        return [delivery_from(r) for r in rows]

    def next_due(self, *, busy: Busy = ((), (), ())) -> float | None:
        skip, values = self._skipping(busy)
        return self._db.one(f"SELECT MIN(next_try) AS t FROM deliveries WHERE state = ?{skip}", (PENDING, *values))["t"]

    def _skipping(self, busy: Busy) -> tuple[str, list[Any]]:
        """What the worker has in flight, left out of a look at the queue (as parameters)."""
        ids, notifiers, accounts = busy
        sql, values = "", list[Any]()
        columns: list[tuple[str, list]] = [
            ("id", list(ids)),
            ("(CAST(account_id AS TEXT) || ' ' || notifier_id)", [f"{a} {n}" for a, n in notifiers]),
            ("account_id", list(accounts)),
        ]
        for column, items in columns:
            if items:
                among, args = self._db.any_of(column, items)
                sql, values = f"{sql} AND NOT ({among})", [*values, *args]
        return sql, values

    def record(self, delivery: Delivery, provider: str, outcome: str, detail: str, next_try: float | None) -> None:
        """A delivery's outcome and its log line, in one transaction: ``sent``; ``retry`` (due
        again at ``next_try``); ``held`` (due again at ``next_try``, not counted as a try: its log
        line says ``retry``); or ``failed`` (given up)."""
        state = {"sent": SENT, "retry": PENDING, "held": PENDING}.get(outcome, FAILED)
        with self._db.transaction() as db:
            db.execute(  # (the event and notifier too: a delivery deleted while in flight left its id
                # free for the next one queued, which this must not mark: see log)
                "UPDATE deliveries SET state = ?, attempts = attempts + ?, next_try = ?"
                " WHERE id = ? AND event = ? AND notifier_id = ?",
                (state, int(outcome != "held"), next_try if next_try is not None else 0, delivery.id, delivery.event,
                 delivery.notifier_id),
            )  # fmt: skip
            self._log(db, delivery.id, delivery.account_id, delivery.alert_id, delivery.notifier_id, provider,
                      delivery.event, delivery.attempts + 1, "retry" if outcome == "held" else outcome,
                      detail)  # fmt: skip

    def log_test(self, account_id: int, notifier_id: str, provider: str, event: str, outcome: str, detail: str) -> None:
        with self._db.transaction() as db:
            self._log(db, None, account_id, None, notifier_id, provider, event, 1, outcome, detail)

    def _log(self, db: Tx, *values: Any) -> None:
        delivery_id, account_id, alert_id, notifier_id, provider, event, attempt, outcome, detail = values
        db.execute(
            "INSERT INTO delivery_log (delivery_id, account_id, alert_id, notifier_id, provider, event, at, attempt,"
            " outcome, detail) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (delivery_id, account_id, alert_id, notifier_id, provider, event, iso(self.clock()), attempt, outcome,
             detail),
        )  # fmt: skip

    def log(self, account_id: int, alert_id: str, limit: int = 50) -> list[dict]:
        """The alert's most recent delivery attempts, newest first."""
        # The delivery by its id and by what it was: a pending one is deleted with its notifier, and
        # SQLite gives its id again to the next queued, maybe another account's (newcomer trial 20:
        # this log showed another account's private scan result as its service).
        rows = self._db.all(
            "SELECT l.*, d.payload FROM delivery_log l LEFT JOIN deliveries d ON d.id = l.delivery_id"
            " AND d.event = l.event AND d.notifier_id = l.notifier_id AND d.account_id = l.account_id"
            " WHERE l.account_id = ? AND l.alert_id = ? ORDER BY l.id DESC LIMIT ?",
            (account_id, alert_id, limit),
        )
        return [log_entry(r) for r in rows]
