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

from spyglass.server.plans import PLANS
from spyglass.server.sqlite import Database, LostDatabase, is_empty, make_private
from spyglass.server.state.accounts import (
    LOCAL_KEY_FILE,
    LOCAL_USER,
    Account,
    AccountExists,
    AmbiguousUser,
    KeysOnTop,
    NoCreditsLeft,
    Organization,
    account_from,
    iso,
    key_digest,
    new_key,
    new_organization,
    organization_from,
    utcnow,
    write_private,
)

# Where they were first defined: their importers keep importing them from here.
__all__ = ["Account", "AccountExists", "AmbiguousUser", "NoCreditsLeft", "Organization", "iso", "key_digest", "utcnow"]

# Schema versions (see spyglass.server.sqlite): append a step for a new layout, never edit one.
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


class Store(KeysOnTop):
    """Thread-safe; every write is one transaction, committed durably before it is acknowledged."""

    def __init__(self, data_dir: Path | str, clock: Callable[[], datetime] = utcnow) -> None:
        self.data_dir = Path(data_dir)
        make_private(self.data_dir)
        self.clock = clock
        path = self.data_dir / "spyglass.db"
        # The accounts come first: beside what only a backend that had them writes, they are lost.
        if is_empty(path) and (kept := [n for n in ACCOUNTS_KEPT if not is_empty(self.data_dir / n)]):
            raise LostDatabase(path, f"{kept[0]} beside it shows it held accounts")
        # FULL: an acknowledged account or key survives even an OS crash (a charge is committed
        # without waiting for the disk: see charge).
        self._db = Database(path, synchronous="FULL", migrations=MIGRATIONS)
        self._db.run("PRAGMA foreign_keys=ON")

    def close(self) -> None:
        self._db.close()

    def _period(self) -> str:
        return self.clock().strftime("%Y-%m")

    # -- accounts and keys -----------------------------------------------------------------
    def create_account(
        self,
        username: str,
        plan: str = "free",
        *,
        researcher: bool = False,
        collector: bool = False,
        email: str | None = None,
        display_name: str | None = None,
        created: datetime | None = None,
    ) -> tuple[Account, str]:
        """Create an account with a fresh key; returns both."""
        chosen = PLANS[plan]
        key = new_key()
        stamp = iso(created or self.clock())
        with self._db.transaction() as db:
            if db.execute("SELECT 1 FROM accounts WHERE username = ?", (username,)).fetchone():
                raise AccountExists(f"an account named {username!r} exists already")
            cur = db.execute(
                "INSERT INTO accounts (username, email, display_name, created, plan, researcher,"
                " query_credits, scan_credits, period, collector) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    username,
                    email,
                    display_name,
                    stamp,
                    chosen.name,
                    int(researcher),
                    chosen.query_credits,
                    chosen.scan_credits,
                    self._period(),
                    int(collector),
                ),
            )
            db.execute(
                "INSERT INTO api_keys (key, account_id, created) VALUES (?,?,?)",
                (key_digest(key), cur.lastrowid, stamp),
            )
        account = self.account_for_key(key)
        assert account is not None
        return account, key

    def add_key(self, account_id: int) -> str:
        """A new key for an existing account (shown once: only its digest is kept)."""
        key = new_key()
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO api_keys (key, account_id, created) VALUES (?,?,?)",
                (key_digest(key), account_id, iso(self.clock())),
            )
        return key

    def account_for_key(self, key: str) -> Account | None:
        """The key's account; on a new month its allowances start again. Every request asks
        this, so the write transaction is taken only in the rare case of a reset."""
        lookup = (
            "SELECT a.* FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.key = ?",
            (key_digest(key),),
        )
        with self._db.lock:
            row = self._db.conn.execute(*lookup).fetchone()
        if row is None or row["period"] == self._period():
            return account_from(row) if row else None
        with self._db.transaction() as db:
            row = db.execute(*lookup).fetchone()
            if row["period"] != self._period():  # checked again: another thread may have reset it
                plan = PLANS[row["plan"]]
                db.execute(
                    "UPDATE accounts SET query_credits=?, scan_credits=?, period=? WHERE id=?",
                    (plan.query_credits, plan.scan_credits, self._period(), row["id"]),
                )
                row = db.execute("SELECT * FROM accounts WHERE id = ?", (row["id"],)).fetchone()
        return account_from(row)

    def account(self, account_id: int) -> Account:
        with self._db.lock:
            row = self._db.conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
        return account_from(row)

    def set_credits(self, account_id: int, *, query: int | None = None, scan: int | None = None) -> None:
        with self._db.transaction() as db:
            if query is not None:
                db.execute("UPDATE accounts SET query_credits=? WHERE id=?", (query, account_id))
            if scan is not None:
                db.execute("UPDATE accounts SET scan_credits=? WHERE id=?", (scan, account_id))

    def charge(self, account_id: int, *, query: int = 0, scan: int = 0) -> Account:
        """Spend credits atomically; raises :class:`NoCreditsLeft` and spends nothing if short.

        Committed without waiting for the disk: a charged search would otherwise wait on a flush
        under the lock every request takes, and an OS crash that undoes a charge gives a credit
        back, never spends one twice."""
        with self._db.transaction(durable=False) as db:
            row = db.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
            if query and row["query_credits"] < query:
                raise NoCreditsLeft("query")
            if scan and row["scan_credits"] < scan:
                raise NoCreditsLeft("scan")
            db.execute(
                "UPDATE accounts SET query_credits = query_credits - ?, scan_credits = scan_credits - ? WHERE id = ?",
                (query, scan, account_id),
            )
            row = db.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
        return account_from(row)

    # -- organizations -----------------------------------------------------------------------
    def find_account(self, user: str) -> Account | None:
        """The account with this username, else with this e-mail address (any case);
        :class:`AmbiguousUser` if several accounts share that address."""
        with self._db.lock:
            row = self._db.conn.execute("SELECT * FROM accounts WHERE username = ?", (user,)).fetchone()
            rows = (
                []
                if row
                else self._db.conn.execute(
                    "SELECT * FROM accounts WHERE email = ? COLLATE NOCASE LIMIT 2", (user,)
                ).fetchall()
            )
        if len(rows) > 1:
            raise AmbiguousUser(f"several accounts have the e-mail address {user}: give the username")
        row = row or (rows[0] if rows else None)
        return account_from(row) if row else None

    def organization_of(self, account_id: int) -> Organization | None:
        with self._db.lock:
            row = self._db.conn.execute("SELECT org_id FROM org_members WHERE account_id = ?", (account_id,)).fetchone()
        return self.organization(row[0]) if row else None

    def organization(self, org_id: str) -> Organization | None:
        with self._db.lock:
            org = self._db.conn.execute("SELECT * FROM organizations WHERE id = ?", (org_id,)).fetchone()
            people = self._db.conn.execute(
                "SELECT a.*, m.role FROM org_members m JOIN accounts a ON a.id = m.account_id"
                " WHERE m.org_id = ? ORDER BY m.added, a.id",
                (org_id,),
            ).fetchall()
        return organization_from(org, people) if org is not None else None

    def own_organization(self, admin: Account) -> Organization:
        """The account's organization, created with it as the admin if it has none: an enterprise
        plan comes with one, named after the account, its domain the account's e-mail domain."""
        with self._db.transaction() as db:
            row = db.execute("SELECT org_id FROM org_members WHERE account_id = ?", (admin.id,)).fetchone()
            if row:
                org_id = row[0]
            else:
                stamp = iso(self.clock())
                org_id, name, domains = new_organization(admin, stamp)
                db.execute(
                    "INSERT INTO organizations (id, name, created, upgrade_type, domains) VALUES (?,?,?,?,?)",
                    (org_id, name, stamp, admin.plan.name, domains),
                )
                db.execute(
                    "INSERT INTO org_members (account_id, org_id, role, added) VALUES (?,?,'admin',?)",
                    (admin.id, org_id, stamp),
                )
        org = self.organization(org_id)
        assert org is not None
        return org

    def invite(self, org_id: str, account_id: int | None, inviter: int) -> bool:
        """``inviter`` (an admin of the organization) invites the account to join; True only for a
        new invitation: False if one is pending already, the account belongs to an organization,
        or there is no account (None). Every case makes the same durable write, so its time tells
        nobody which it was: one that invites nobody writes the inviter's own row (never a real
        invitation: an admin is a member) and deletes it."""
        stamp = iso(self.clock())
        add = "INSERT OR IGNORE INTO org_invitations (org_id, account_id, invited) VALUES (?,?,?)"
        with self._db.transaction() as db:
            added = 0
            if (
                account_id is not None
                and not db.execute("SELECT 1 FROM org_members WHERE account_id = ?", (account_id,)).fetchone()
            ):
                added = db.execute(add, (org_id, account_id, stamp)).rowcount
            if not added:
                db.execute(add, (org_id, inviter, stamp))
                db.execute("DELETE FROM org_invitations WHERE org_id = ? AND account_id = ?", (org_id, inviter))
        return added == 1

    def invitations(self, account_id: int) -> list[tuple[str, str, str]]:
        """(organization id, its name, when) of the account's pending invitations, oldest first."""
        with self._db.lock:
            rows = self._db.conn.execute(
                "SELECT o.id, o.name, i.invited FROM org_invitations i JOIN organizations o ON o.id = i.org_id"
                " WHERE i.account_id = ? ORDER BY i.invited",
                (account_id,),
            ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def answer_invitation(self, org_id: str, account_id: int, accept: bool) -> bool:
        """Join (``accept``) or decline; False if there is no such invitation, or, to join, the
        account belongs to an organization already."""
        with self._db.transaction() as db:
            gone = db.execute(
                "DELETE FROM org_invitations WHERE org_id = ? AND account_id = ?", (org_id, account_id)
            ).rowcount
            if not gone:
                return False
            if not accept:
                return True
            if db.execute("SELECT 1 FROM org_members WHERE account_id = ?", (account_id,)).fetchone():
                return False
            db.execute(
                "INSERT INTO org_members (account_id, org_id, role, added) VALUES (?,?,'member',?)",
                (account_id, org_id, iso(self.clock())),
            )
            db.execute("DELETE FROM org_invitations WHERE account_id = ?", (account_id,))  # one organization
        return True

    def remove_member(self, org_id: str, account_id: int) -> bool:
        """Remove a (non-admin) member; False if the account is no member of this organization."""
        with self._db.transaction() as db:
            cur = db.execute(
                "DELETE FROM org_members WHERE org_id = ? AND account_id = ? AND role = 'member'", (org_id, account_id)
            )
        return cur.rowcount > 0
