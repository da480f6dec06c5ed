"""Scans, written once over :class:`~spyglass.server.state.sql.db.Db`: SQLite's
(server/state/sqlite/scans.py) and PostgreSQL's (server/state/postgres/scans.py)
:class:`~spyglass.server.state.scans.ScanState`.

A claim takes the oldest claimable scan in one statement; where the clock of a lease is read
(:attr:`SqlScans.NOW`) and how a claim keeps other backends off the row are each state's own."""

from __future__ import annotations

import time

from spyglass.server.state import OverBudget
from spyglass.server.state.accounts import iso, utcnow
from spyglass.server.state.scans import (
    CANCELLED,
    DONE,
    KEPT,
    PAGE,
    PROCESSING,
    QUEUE,
    SUBMITTING,
    UNFINISHED,
    Scan,
    check_hourly,
    hour_ago,
    new_scan_id,
    scan_from,
)
from spyglass.server.state.sql.db import Db, Tx


class SqlScans:
    """Thread-safe; every write is one statement or one transaction."""

    _db: Db
    # A lease is on this process's clock (one backend owns the data dir): now, and ``lease`` on.
    NOW = "?"
    UNTIL = "?"
    CLAIMING = ""  # what keeps two backends claiming at once off one row (SQLite's writers queue)
    kept = KEPT  # an account's latest scans kept (a test keeps fewer)

    def _times(self, lease: float) -> tuple[list[float], list[float]]:
        """The arguments of :attr:`NOW` and of :attr:`UNTIL` (a lease of ``lease`` seconds)."""
        now = time.time()
        return [now], [now + lease]

    def close(self) -> None:
        self._db.close()

    def create(
        self,
        *,
        account_id: int,
        api_key: str,
        size: int,
        spec: str,
        probes: int,
        internet: bool = False,
        most: int | None = None,
        per_hour: int | None = None,
    ) -> Scan:
        now = iso(utcnow())
        with self._db.transaction() as db:
            if per_hour is not None or (internet and most is not None):
                self._db.one_at_a_time(db, "scans", account_id)  # counted and written with no create between
            if per_hour is not None:
                self._check_hourly(db, account_id, per_hour)
            if internet and most is not None:
                unfinished, values = self._db.any_of("status", UNFINISHED)
                under_way = db.execute(
                    f"SELECT count(*) AS n FROM scans WHERE account_id = ? AND internet AND {unfinished}",
                    (account_id, *values),
                ).fetchone()["n"]
                if under_way >= most:
                    raise OverBudget(int(under_way))
            row = db.execute(
                "INSERT INTO scans (id, account_id, api_key, created, status, status_check, size, spec,"
                " internet, probes) VALUES (?,?,?,?,?,?,?,?,?,?) RETURNING *",
                (new_scan_id(), account_id, api_key, now, SUBMITTING, now, size, spec, internet, probes),
            ).fetchone()
            finished, values = self._db.any_of("status", (DONE, CANCELLED))
            db.execute(
                f"DELETE FROM scans WHERE account_id = ? AND {finished} AND id NOT IN"
                " (SELECT id FROM scans WHERE account_id = ? ORDER BY created DESC, id DESC LIMIT ?)",
                (account_id, *values, account_id, self.kept),
            )
        return scan_from(row)

    def _check_hourly(self, db: Tx, account_id: int, per_hour: int) -> None:
        row = db.execute(
            "SELECT count(*) AS n, min(created) AS oldest FROM scans WHERE account_id = ? AND created > ?",
            (account_id, hour_ago()),
        ).fetchone()
        check_hourly(per_hour, int(row["n"]), row["oldest"])

    def hourly_room(self, account_id: int, per_hour: int) -> None:
        with self._db.reading() as db:
            self._check_hourly(db, account_id, per_hour)

    def get(self, scan_id: str) -> Scan | None:
        if self._db.unstorable(scan_id):
            return None
        row = self._db.one("SELECT * FROM scans WHERE id = ?", (scan_id,))
        return scan_from(row) if row else None

    def of_account(self, account_id: int, page: int = 1) -> tuple[list[Scan], int]:
        rows = self._db.all(
            "SELECT * FROM scans WHERE account_id = ? ORDER BY created DESC, id DESC LIMIT ? OFFSET ?",
            (account_id, PAGE, (page - 1) * PAGE),
        )
        total = self._db.one("SELECT count(*) AS n FROM scans WHERE account_id = ?", (account_id,))
        return [scan_from(r) for r in rows], int(total["n"]) if total else 0

    def set_credits_left(self, scan_id: str, credits_left: int) -> None:
        self._db.run("UPDATE scans SET credits_left = ? WHERE id = ?", (credits_left, scan_id))

    def set_status(self, scan_id: str, status: str) -> None:
        self._db.run("UPDATE scans SET status = ?, status_check = ? WHERE id = ?", (status, iso(utcnow()), scan_id))

    def queue(self, scan_id: str) -> None:
        self._db.run("UPDATE scans SET status = ? WHERE id = ? AND status = ?", (QUEUE, scan_id, SUBMITTING))

    def progress(self, scan_id: str, probed: int, found: int) -> None:
        self._db.run("UPDATE scans SET probed = ?, found = ? WHERE id = ?", (probed, found, scan_id))

    def finish(self, scan_id: str) -> None:
        self._db.run(
            "UPDATE scans SET status = CASE WHEN status = ? THEN status ELSE ? END, status_check = ?,"
            " owner = NULL, lease_until = NULL WHERE id = ?",
            (CANCELLED, DONE, iso(utcnow()), scan_id),
        )

    def claim(self, owner: str, lease: float) -> Scan | None:
        """The oldest unfinished scan no lease holds, now ``owner``'s for ``lease`` seconds."""
        now, until = self._times(lease)
        unfinished, values = self._db.any_of("status", UNFINISHED)
        row = self._db.one(
            f"UPDATE scans SET status = ?, status_check = ?, owner = ?, lease_until = {self.UNTIL}"
            f" WHERE id = (SELECT id FROM scans WHERE {unfinished}"
            f" AND (lease_until IS NULL OR lease_until < {self.NOW}) ORDER BY created LIMIT 1{self.CLAIMING})"
            " RETURNING *",
            (PROCESSING, iso(utcnow()), owner, *until, *values, *now),
        )
        return scan_from(row) if row else None

    def renew(self, scan_id: str, owner: str, lease: float) -> bool:
        _, until = self._times(lease)
        unfinished, values = self._db.any_of("status", UNFINISHED)
        done = self._db.run(
            f"UPDATE scans SET lease_until = {self.UNTIL} WHERE id = ? AND owner = ? AND {unfinished}",
            (*until, scan_id, owner, *values),
        )
        return done == 1

    def release(self, owner: str) -> None:
        self._db.run("UPDATE scans SET owner = NULL, lease_until = NULL WHERE owner = ?", (owner,))
