"""Scans, durably (``scans.db``): what each asked for, whose it is, where it stands.

``probed`` is a watermark: every probe before that position in the spec's order has finished, so a
backend that stops mid-scan resumes there (at most the probes in flight are made again).
"""

from __future__ import annotations

import secrets
import sqlite3
import string
from dataclasses import dataclass
from pathlib import Path

from spyglass.server.sqlite import Database
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


MIGRATIONS = (V1_SCANS, _v2_no_keys)

SUBMITTING, QUEUE, PROCESSING, DONE = "SUBMITTING", "QUEUE", "PROCESSING", "DONE"
CANCELLED = "CANCELLED"  # beyond the seed: stopped by its owner; never resumed
UNFINISHED = (SUBMITTING, QUEUE, PROCESSING)
ID_ALPHABET = string.ascii_uppercase + string.digits


def new_scan_id() -> str:
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(16))


@dataclass(frozen=True)
class Scan:
    id: str
    account_id: int
    api_key: str
    created: str
    status: str
    status_check: str
    size: int
    credits_left: int | None
    spec: str
    internet: bool
    probes: int
    probed: int
    found: int

    def status_body(self) -> dict:
        """The seed's status response, plus progress members clients may ignore."""
        return {
            "id": self.id,
            "count": self.size,
            "status": self.status,
            "created": self.created,
            "probes": self.probes,
            "probed": self.probed,
            "found": self.found,
        }

    def listing_item(self, key: str) -> dict:
        """As the listing shows it to the account, with ``key``, the one it called with."""
        return {
            "id": self.id,
            "status": self.status,
            "created": self.created,
            "status_check": self.status_check,
            "credits_left": self.credits_left,
            "api_key": key,
            "size": self.size,
            "probes": self.probes,
            "probed": self.probed,
            "found": self.found,
        }


class ScanStore:
    def __init__(self, data_dir: Path) -> None:
        self._db = Database(Path(data_dir) / "scans.db", synchronous="FULL", migrations=MIGRATIONS)

    def close(self) -> None:
        self._db.close()

    def create(
        self, *, account_id: int, api_key: str, size: int, spec: str, probes: int, internet: bool = False
    ) -> Scan:
        now = iso(utcnow())
        scan_id = new_scan_id()
        self._db.run(
            "INSERT INTO scans (id, account_id, api_key, created, status, status_check, size, spec,"
            " internet, probes) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (scan_id, account_id, api_key, now, SUBMITTING, now, size, spec, int(internet), probes),
        )
        created = self.get(scan_id)
        assert created is not None  # written just above
        return created

    def get(self, scan_id: str) -> Scan | None:
        row = self._db.one("SELECT * FROM scans WHERE id = ?", (scan_id,))
        return _scan(row) if row else None

    def of_account(self, account_id: int) -> list[Scan]:
        rows = self._db.read("SELECT * FROM scans WHERE account_id = ? ORDER BY created DESC", (account_id,))
        return [_scan(r) for r in rows]

    def unfinished(self) -> list[Scan]:
        rows = self._db.read(
            f"SELECT * FROM scans WHERE status IN ({','.join('?' * len(UNFINISHED))}) ORDER BY created", UNFINISHED
        )
        return [_scan(r) for r in rows]

    def set_credits_left(self, scan_id: str, credits_left: int) -> None:
        self._db.run("UPDATE scans SET credits_left = ? WHERE id = ?", (credits_left, scan_id))

    def delete(self, scan_id: str) -> None:
        self._db.run("DELETE FROM scans WHERE id = ?", (scan_id,))

    def set_status(self, scan_id: str, status: str) -> None:
        self._db.run("UPDATE scans SET status = ?, status_check = ? WHERE id = ?", (status, iso(utcnow()), scan_id))

    def progress(self, scan_id: str, probed: int, found: int) -> None:
        self._db.run("UPDATE scans SET probed = ?, found = ? WHERE id = ?", (probed, found, scan_id))


def _scan(row: sqlite3.Row) -> Scan:
    return Scan(**{**dict(row), "internet": bool(row["internet"])})
