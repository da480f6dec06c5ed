"""Accounts, keys (digests), plans, credits, organizations and invitations, written once over
:class:`~spyglass.server.state.sql.db.Db`: SQLite's (server/state/sqlite/accounts.py) and PostgreSQL's
(server/state/postgres/accounts.py) :class:`~spyglass.server.state.accounts.AccountState`.

Every statement takes its values as parameters. A charge is one conditional UPDATE, so credits are
exact across backends and never go below zero; the monthly reset is one too."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from spyglass.server.plans import PLANS
from spyglass.server.state.accounts import (
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
)
from spyglass.server.state.sql.db import Db

BY_KEY = "SELECT a.* FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.key = ?"
ADD_KEY = "INSERT INTO api_keys (key, account_id, created) VALUES (?,?,?)"


class SqlAccounts(KeysOnTop):
    """Thread-safe; every write is one transaction."""

    _db: Db
    data_dir: Path
    clock: Callable[[], datetime]
    # an address in any case, as the accounts_by_email index has it
    EMAIL_IS = "email = ? COLLATE NOCASE"

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
        if self._db.unstorable(username, email, display_name):
            raise ValueError("an account's name, e-mail address or display name holds no NUL character")
        chosen = PLANS[plan]
        key = new_key()
        stamp = iso(created or self.clock())
        values = (username, email, display_name, stamp, chosen.name, researcher, chosen.query_credits,
                  chosen.scan_credits, self._period(), collector)  # fmt: skip
        with self._db.transaction() as db:
            row = db.execute(
                "INSERT INTO accounts (username, email, display_name, created, plan, researcher,"
                " query_credits, scan_credits, period, collector) VALUES (?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT (username) DO NOTHING RETURNING *",
                values,
            ).fetchone()
            if row is None:
                raise AccountExists(f"an account named {username!r} exists already")
            db.execute(ADD_KEY, (key_digest(key), row["id"], stamp))
        return account_from(row), key

    def add_key(self, account_id: int) -> str:
        """A new key for an existing account (shown once: only its digest is kept)."""
        key = new_key()
        with self._db.transaction() as db:
            db.execute(ADD_KEY, (key_digest(key), account_id, iso(self.clock())))
        return key

    def account_for_key(self, key: str) -> Account | None:
        """The key's account; on a new month its allowances start again (one conditional UPDATE:
        of backends that meet the new month at once, one resets). Every request asks this, so a
        write is made only in the rare case of a reset."""
        row = self._db.one(BY_KEY, (key_digest(key),))
        if row is None or row["period"] == self._period():
            return account_from(row) if row else None
        plan = PLANS[row["plan"]]
        reset = self._db.one(
            "UPDATE accounts SET query_credits = ?, scan_credits = ?, period = ?"
            " WHERE id = ? AND period <> ? RETURNING *",
            (plan.query_credits, plan.scan_credits, self._period(), row["id"], self._period()),
        )
        return account_from(reset) if reset else self.account(row["id"])

    def account(self, account_id: int) -> Account:
        return account_from(self._db.one("SELECT * FROM accounts WHERE id = ?", (account_id,)))

    def set_credits(self, account_id: int, *, query: int | None = None, scan: int | None = None) -> None:
        with self._db.transaction() as db:
            if query is not None:
                db.execute("UPDATE accounts SET query_credits = ? WHERE id = ?", (query, account_id))
            if scan is not None:
                db.execute("UPDATE accounts SET scan_credits = ? WHERE id = ?", (scan, account_id))

    def charge(self, account_id: int, *, query: int = 0, scan: int = 0) -> Account:
        """Spend credits atomically; raises :class:`NoCreditsLeft` and spends nothing if short.

        Not ``durable`` (SQLite's): a charged search would otherwise wait on a flush under the lock
        every request takes, and an OS crash that undoes a charge gives a credit back, never spends
        one twice."""
        row = self._db.one(
            "UPDATE accounts SET query_credits = query_credits - ?, scan_credits = scan_credits - ?"
            " WHERE id = ? AND query_credits >= ? AND scan_credits >= ? RETURNING *",
            (query, scan, account_id, query, scan),
            durable=False,
        )
        if row is not None:
            return account_from(row)
        now = self.account(account_id)
        raise NoCreditsLeft("query" if query and now.query_credits < query else "scan")

    # -- organizations -----------------------------------------------------------------------
    def find_account(self, user: str) -> Account | None:
        """The account with this username, else with this e-mail address (any case);
        :class:`AmbiguousUser` if several accounts share that address."""
        if self._db.unstorable(user):
            return None
        row = self._db.one("SELECT * FROM accounts WHERE username = ?", (user,))
        if row is None:
            rows = self._db.all(f"SELECT * FROM accounts WHERE {self.EMAIL_IS} LIMIT 2", (user,))
            if len(rows) > 1:
                raise AmbiguousUser(f"several accounts have the e-mail address {user}: give the username")
            row = rows[0] if rows else None
        return account_from(row) if row else None

    def organization_of(self, account_id: int) -> Organization | None:
        row = self._db.one("SELECT org_id FROM org_members WHERE account_id = ?", (account_id,))
        return self.organization(row["org_id"]) if row else None

    def organization(self, org_id: str) -> Organization | None:
        if self._db.unstorable(org_id):
            return None
        with self._db.reading() as db:
            org = db.execute("SELECT * FROM organizations WHERE id = ?", (org_id,)).fetchone()
            people = db.execute(
                "SELECT a.*, m.role FROM org_members m JOIN accounts a ON a.id = m.account_id"
                " WHERE m.org_id = ? ORDER BY m.added, a.id",
                (org_id,),
            ).fetchall()
        return organization_from(org, people) if org is not None else None

    def own_organization(self, admin: Account) -> Organization:
        """The account's organization, created with it as the admin if it has none: an enterprise
        plan comes with one, named after the account, its domain the account's e-mail domain."""
        with self._db.transaction() as db:
            db.execute(f"SELECT 1 FROM accounts WHERE id = ?{self._db.for_update}", (admin.id,))  # one creates it
            row = db.execute("SELECT org_id FROM org_members WHERE account_id = ?", (admin.id,)).fetchone()
            if row:
                org_id = row["org_id"]
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
        add = "INSERT INTO org_invitations (org_id, account_id, invited) VALUES (?,?,?) ON CONFLICT DO NOTHING"
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
        rows = self._db.all(
            "SELECT o.id, o.name, i.invited FROM org_invitations i JOIN organizations o ON o.id = i.org_id"
            " WHERE i.account_id = ? ORDER BY i.invited",
            (account_id,),
        )
        return [(r["id"], r["name"], r["invited"]) for r in rows]

    def answer_invitation(self, org_id: str, account_id: int, accept: bool) -> bool:
        """Join (``accept``) or decline; False if there is no such invitation, or, to join, the
        account belongs to an organization already."""
        if self._db.unstorable(org_id):
            return False
        with self._db.transaction() as db:
            gone = db.execute(
                "DELETE FROM org_invitations WHERE org_id = ? AND account_id = ?", (org_id, account_id)
            ).rowcount
            if not gone or not accept:
                return bool(gone)
            joined = db.execute(
                "INSERT INTO org_members (account_id, org_id, role, added) VALUES (?,?,'member',?)"
                " ON CONFLICT (account_id) DO NOTHING",
                (account_id, org_id, iso(self.clock())),
            ).rowcount
            if joined:
                db.execute("DELETE FROM org_invitations WHERE account_id = ?", (account_id,))  # one organization
        return bool(joined)

    def remove_member(self, org_id: str, account_id: int) -> bool:
        """Remove a (non-admin) member; False if the account is no member of this organization."""
        gone = self._db.run(
            "DELETE FROM org_members WHERE org_id = ? AND account_id = ? AND role = 'member'", (org_id, account_id)
        )
        return gone > 0
