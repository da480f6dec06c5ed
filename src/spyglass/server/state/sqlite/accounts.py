"""The embedded store of accounts, API keys, plans and credit balances (SQLite, WAL, fsync on
commit): the :class:`~spyglass.server.state.accounts.AccountState` of a backend with no --state.

Only the standard library is imported here: the launcher uses this module to create the local
account without loading the web stack.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from spyglass.server.state.accounts import (
    LOCAL_KEY_FILE,
    LOCAL_USER,
    key_digest,
    utcnow,
    write_private,
)
from spyglass.server.state.datadir import make_private
from spyglass.server.state.sql.accounts import SqlAccounts
from spyglass.server.state.sqlite.database import Database, LostDatabase, is_empty

# Schema versions (see spyglass.server.state.sqlite.database): append a step for a new layout, never edit one.
# Version 1 is the layout spyglass 0.1.0 wrote at version 0; "IF NOT EXISTS" lets those files
# take the step as they are.
V1_ACCOUNTS_AND_KEYS = """
CREATE TABLE IF NOT EXISTS accounts (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    email TEXT,
    display_name TEXT,
    created TEXT NOT NULL,
    plan TEXT NOT NULL,
    researcher INTEGER NOT NULL DEFAULT 0,
    query_credits INTEGER NOT NULL,
    scan_credits INTEGER NOT NULL,
    period TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    key TEXT PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    created TEXT NOT NULL
);
"""

# Organizations (enterprise): an account belongs to at most one, as its admin or a member.
V2_ORGANIZATIONS = """
CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    upgrade_type TEXT NOT NULL,
    domains TEXT NOT NULL DEFAULT '[]',
    logo INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE org_members (
    account_id INTEGER PRIMARY KEY REFERENCES accounts(id),
    org_id TEXT NOT NULL REFERENCES organizations(id),
    role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    added TEXT NOT NULL
);
CREATE INDEX org_members_by_org ON org_members(org_id);
CREATE INDEX accounts_by_email ON accounts(email COLLATE NOCASE);
"""


def _v3_hashed_keys(db: sqlite3.Connection) -> None:
    """Keys stored as their digests. The local account's key is kept beside the database first
    (the dashboard needs it to call its own backend)."""
    folder = Path(db.execute("PRAGMA database_list").fetchone()[2]).parent
    row = db.execute(
        "SELECT k.key FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE a.username = ?"
        " ORDER BY k.created LIMIT 1",
        (LOCAL_USER,),
    ).fetchone()
    if row is not None:
        write_private(folder / LOCAL_KEY_FILE, row[0])
    for (key,) in db.execute("SELECT key FROM api_keys").fetchall():
        db.execute("UPDATE api_keys SET key = ? WHERE key = ?", (key_digest(key), key))


# An organization's admin invites; the account joins when it accepts (its e-mail address is the
# organization's to see only then).
V4_INVITATIONS = """
CREATE TABLE org_invitations (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    account_id INTEGER NOT NULL REFERENCES accounts(id),
    invited TEXT NOT NULL,
    PRIMARY KEY (account_id, org_id)
);
"""

# Collecting banners (POST /spyglass/collect) is a role the operator gives (keys create
# --collector), not every enterprise key's: what is collected is what every account sees.
V5_COLLECTORS = "ALTER TABLE accounts ADD COLUMN collector INTEGER NOT NULL DEFAULT 0;"

MIGRATIONS = (V1_ACCOUNTS_AND_KEYS, V2_ORGANIZATIONS, _v3_hashed_keys, V4_INVITATIONS, V5_COLLECTORS)

ACCOUNTS_KEPT = (LOCAL_KEY_FILE, "alerts.db", "scans.db")  # written only where spyglass.db was


class Store(SqlAccounts):
    """Thread-safe; every write is one transaction, committed durably before it is acknowledged
    (a charge excepted: see :meth:`~spyglass.server.state.sql.accounts.SqlAccounts.charge`)."""

    _db: Database

    def __init__(self, data_dir: Path | str, clock: Callable[[], datetime] = utcnow) -> None:
        self.data_dir = Path(data_dir)
        make_private(self.data_dir)
        self.clock = clock
        path = self.data_dir / "spyglass.db"
        # The accounts come first: beside what only a backend that had them writes, they are lost.
        if is_empty(path) and (kept := [n for n in ACCOUNTS_KEPT if not is_empty(self.data_dir / n)]):
            raise LostDatabase(path, f"{kept[0]} beside it shows it held accounts")
        # FULL: an acknowledged account or key survives even an OS crash.
        self._db = Database(path, synchronous="FULL", migrations=MIGRATIONS)
        self._db.run("PRAGMA foreign_keys=ON")
