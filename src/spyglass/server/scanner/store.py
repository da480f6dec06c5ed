"""Scans on SQLite (``scans.db``): the embedded :class:`~spyglass.server.state.scans.ScanState`.

One backend owns a data dir, so the leases it finds on opening are its own from before a stop or a
crash: they are let go at once, and the scans they held resume without waiting for them to lapse.
"""

from __future__ import annotations

import time
from pathlib import Path

from spyglass.server.sqlite import Database
from spyglass.server.state import OverBudget
from spyglass.server.state.scans import (
    CANCELLED,
    DONE,
    PROCESSING,
    QUEUE,
    SUBMITTING,
    UNFINISHED,
    Scan,
    new_scan_id,
    scan_from,
)
from spyglass.server.store import iso, key_digest, utcnow

V1_SCANS = """
CREATE TABLE scans (
    id TEXT PRIMARY KEY,
    account_id INTEGER NOT NULL,
    api_key TEXT NOT NULL,
    created TEXT NOT NULL,
    status TEXT NOT NULL,
    status_check TEXT NOT NULL,
    size INTEGER NOT NULL,
    credits_left INTEGER,
    spec TEXT NOT NULL,
    internet INTEGER NOT NULL DEFAULT 0,
    probes INTEGER NOT NULL,
    probed INTEGER NOT NULL DEFAULT 0,
    found INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX scans_by_account ON scans (account_id, created);
"""


def _v2_no_keys(db) -> None:
    """The key a scan was made with is not kept (a listing shows the caller's own): only its digest."""
    for scan_id, key in db.execute("SELECT id, api_key FROM scans").fetchall():
        db.execute("UPDATE scans SET api_key = ? WHERE id = ?", (key_digest(key), scan_id))


V3_LEASES = """
ALTER TABLE scans ADD COLUMN owner TEXT;
ALTER TABLE scans ADD COLUMN lease_until REAL;
"""

MIGRATIONS = (V1_SCANS, _v2_no_keys, V3_LEASES)
IN_UNFINISHED = f"status IN ({','.join('?' * len(UNFINISHED))})"


class ScanStore:
    def __init__(self, data_dir: Path) -> None:
        self._db = Database(Path(data_dir) / "scans.db", synchronous="FULL", migrations=MIGRATIONS)
        self._db.run("UPDATE scans SET owner = NULL, lease_until = NULL WHERE owner IS NOT NULL")

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
    ) -> Scan:
        now = iso(utcnow())
        scan_id = new_scan_id()
        with self._db.transaction() as db:  # BEGIN IMMEDIATE: counted and written with no create between
            if internet and most is not None:
                under_way = db.execute(
                    f"SELECT count(*) FROM scans WHERE account_id = ? AND internet = 1 AND {IN_UNFINISHED}",
                    (account_id, *UNFINISHED),
                ).fetchone()[0]
                if under_way >= most:
                    raise OverBudget(under_way)
            db.execute(
                "INSERT INTO scans (id, account_id, api_key, created, status, status_check, size, spec,"
                " internet, probes) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (scan_id, account_id, api_key, now, SUBMITTING, now, size, spec, int(internet), probes),
            )
        created = self.get(scan_id)
        assert created is not None  # written just above
        return created

    def get(self, scan_id: str) -> Scan | None:
        row = self._db.one("SELECT * FROM scans WHERE id = ?", (scan_id,))
        return scan_from(row) if row else None

    def of_account(self, account_id: int) -> list[Scan]:
        rows = self._db.read("SELECT * FROM scans WHERE account_id = ? ORDER BY created DESC", (account_id,))
        return [scan_from(r) for r in rows]

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
        now = time.time()
        with self._db.transaction() as db:
            row = db.execute(
                f"SELECT id FROM scans WHERE {IN_UNFINISHED} AND (lease_until IS NULL OR lease_until < ?)"
                " ORDER BY created LIMIT 1",
                (*UNFINISHED, now),
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE scans SET status = ?, status_check = ?, owner = ?, lease_until = ? WHERE id = ?",
                (PROCESSING, iso(utcnow()), owner, now + lease, row["id"]),
            )
            return scan_from(db.execute("SELECT * FROM scans WHERE id = ?", (row["id"],)).fetchone())

    def renew(self, scan_id: str, owner: str, lease: float) -> bool:
        done = self._db.run(
            f"UPDATE scans SET lease_until = ? WHERE id = ? AND owner = ? AND {IN_UNFINISHED}",
            (time.time() + lease, scan_id, owner, *UNFINISHED),
        )
        return done.rowcount == 1

    def release(self, owner: str) -> None:
        self._db.run("UPDATE scans SET owner = NULL, lease_until = NULL WHERE owner = ?", (owner,))
