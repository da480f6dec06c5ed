"""Scans on SQLite (``scans.db``): the embedded :class:`~spyglass.server.state.scans.ScanState`
(written once, in state/sql/scans.py).

One backend owns a data dir, so the leases it finds on opening are its own from before a stop or a
crash: they are let go at once, and the scans they held resume without waiting for them to lapse.
"""

from __future__ import annotations

from pathlib import Path

from spyglass.server.state.accounts import key_digest
from spyglass.server.state.sql.scans import SqlScans
from spyglass.server.state.sqlite.database import Database

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


class ScanStore(SqlScans):
    _db: Database

    def __init__(self, data_dir: Path) -> None:
        self._db = Database(Path(data_dir) / "scans.db", synchronous="FULL", migrations=MIGRATIONS)
        self._db.run("UPDATE scans SET owner = NULL, lease_until = NULL WHERE owner IS NOT NULL")
