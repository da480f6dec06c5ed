"""Accounts, keys (digests), plans, credits, organizations and invitations on PostgreSQL: the
:class:`~spyglass.server.state.accounts.AccountState` that several backends share.

Every statement takes its values as parameters. A charge is one conditional UPDATE, so credits
are exact across backends and never go below zero; the monthly reset is one too."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from spyglass.server.plans import PLANS
from spyglass.server.postgres.connect import Pool, holds_nul
from spyglass.server.postgres.schema import init_schema
from spyglass.server.sqlite import make_private
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
    utcnow,
)

BY_KEY = "SELECT a.* FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.key = %s"


class PostgresAccounts(KeysOnTop):
    """Thread-safe (a pool); every write is one transaction."""

    def __init__(self, url: str, data_dir: Path | str, clock: Callable[[], datetime] = utcnow) -> None:
        self.data_dir = Path(data_dir)
        make_private(self.data_dir)
        self.clock = clock
        init_schema(url)
        self._pool = Pool(url)

    def close(self) -> None:
        self._pool.close()

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
        if holds_nul(username, email, display_name):
            raise ValueError("an account's name, e-mail address or display name holds no NUL character")
        chosen = PLANS[plan]
        key = new_key()
        stamp = iso(created or self.clock())
        with self._pool.transaction() as db:
            row = db.execute(
                "INSERT INTO accounts (username, email, display_name, created, plan, researcher,"
                " query_credits, scan_credits, period, collector) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
                " ON CONFLICT (username) DO NOTHING RETURNING *",
                (
                    username,
                    email,
                    display_name,
                    stamp,
                    chosen.name,
                    researcher,
                    chosen.query_credits,
                    chosen.scan_credits,
                    self._period(),
                    collector,
                ),
            ).fetchone()
            if row is None:
                raise AccountExists(f"an account named {username!r} exists already")
            db.execute(
                "INSERT INTO api_keys (key, account_id, created) VALUES (%s,%s,%s)",
                (key_digest(key), row["id"], stamp),
            )
        return account_from(row), key

    def add_key(self, account_id: int) -> str:
        key = new_key()
        with self._pool.transaction() as db:
            db.execute(
                "INSERT INTO api_keys (key, account_id, created) VALUES (%s,%s,%s)",
                (key_digest(key), account_id, iso(self.clock())),
            )
        return key

    def account_for_key(self, key: str) -> Account | None:
        """The key's account; on a new month its allowances start again (one conditional UPDATE:
        of backends that meet the new month at once, one resets)."""
        row = self._pool.one(BY_KEY, (key_digest(key),))
        if row is None or row["period"] == self._period():
            return account_from(row) if row else None
        plan = PLANS[row["plan"]]
        reset = self._pool.one(
            "UPDATE accounts SET query_credits = %s, scan_credits = %s, period = %s"
            " WHERE id = %s AND period <> %s RETURNING *",
            (plan.query_credits, plan.scan_credits, self._period(), row["id"], self._period()),
        )
        return account_from(reset) if reset else self.account(row["id"])

    def account(self, account_id: int) -> Account:
        return account_from(self._pool.one("SELECT * FROM accounts WHERE id = %s", (account_id,)))

    def set_credits(self, account_id: int, *, query: int | None = None, scan: int | None = None) -> None:
        with self._pool.transaction() as db:
            if query is not None:
                db.execute("UPDATE accounts SET query_credits = %s WHERE id = %s", (query, account_id))
            if scan is not None:
                db.execute("UPDATE accounts SET scan_credits = %s WHERE id = %s", (scan, account_id))

    def charge(self, account_id: int, *, query: int = 0, scan: int = 0) -> Account:
        """Spend credits atomically; raises :class:`NoCreditsLeft` and spends nothing if short."""
        row = self._pool.one(
            "UPDATE accounts SET query_credits = query_credits - %s, scan_credits = scan_credits - %s"
            " WHERE id = %s AND query_credits >= %s AND scan_credits >= %s RETURNING *",
            (query, scan, account_id, query, scan),
        )
        if row is not None:
            return account_from(row)
        now = self.account(account_id)
        raise NoCreditsLeft("query" if query and now.query_credits < query else "scan")

    # -- organizations -----------------------------------------------------------------------
    def find_account(self, user: str) -> Account | None:
        """The account with this username, else with this e-mail address (any case);
        :class:`AmbiguousUser` if several accounts share that address."""
        if holds_nul(user):
            return None
        row = self._pool.one("SELECT * FROM accounts WHERE username = %s", (user,))
        if row is None:
            rows = self._pool.all("SELECT * FROM accounts WHERE lower(email) = lower(%s) LIMIT 2", (user,))
            if len(rows) > 1:
                raise AmbiguousUser(f"several accounts have the e-mail address {user}: give the username")
            row = rows[0] if rows else None
        return account_from(row) if row else None

    def organization_of(self, account_id: int) -> Organization | None:
        row = self._pool.one("SELECT org_id FROM org_members WHERE account_id = %s", (account_id,))
        return self.organization(row["org_id"]) if row else None

    def organization(self, org_id: str) -> Organization | None:
        if holds_nul(org_id):
            return None
        with self._pool.transaction() as db:
            org = db.execute("SELECT * FROM organizations WHERE id = %s", (org_id,)).fetchone()
            people = db.execute(
                "SELECT a.*, m.role FROM org_members m JOIN accounts a ON a.id = m.account_id"
                " WHERE m.org_id = %s ORDER BY m.added, a.id",
                (org_id,),
            ).fetchall()
        return organization_from(org, people) if org is not None else None

    def own_organization(self, admin: Account) -> Organization:
        """The account's organization, created with it as the admin if it has none."""
        with self._pool.transaction() as db:
            db.execute("SELECT 1 FROM accounts WHERE id = %s FOR UPDATE", (admin.id,))  # one creates it
            row = db.execute("SELECT org_id FROM org_members WHERE account_id = %s", (admin.id,)).fetchone()
            if row:
                org_id = row["org_id"]
            else:
                stamp = iso(self.clock())
                org_id, name, domains = new_organization(admin, stamp)
                db.execute(
                    "INSERT INTO organizations (id, name, created, upgrade_type, domains) VALUES (%s,%s,%s,%s,%s)",
                    (org_id, name, stamp, admin.plan.name, domains),
                )
                db.execute(
                    "INSERT INTO org_members (account_id, org_id, role, added) VALUES (%s,%s,'admin',%s)",
                    (admin.id, org_id, stamp),
                )
        org = self.organization(org_id)
        assert org is not None
        return org

    def invite(self, org_id: str, account_id: int | None, inviter: int) -> bool:
        """As the SQLite store's: True only for a new invitation, and every case writes the same."""
        stamp = iso(self.clock())
        add = "INSERT INTO org_invitations (org_id, account_id, invited) VALUES (%s,%s,%s) ON CONFLICT DO NOTHING"
        with self._pool.transaction() as db:
            added = 0
            if (
                account_id is not None
                and not db.execute("SELECT 1 FROM org_members WHERE account_id = %s", (account_id,)).fetchone()
            ):
                added = db.execute(add, (org_id, account_id, stamp)).rowcount
            if not added:
                db.execute(add, (org_id, inviter, stamp))
                db.execute("DELETE FROM org_invitations WHERE org_id = %s AND account_id = %s", (org_id, inviter))
        return added == 1

    def invitations(self, account_id: int) -> list[tuple[str, str, str]]:
        rows = self._pool.all(
            "SELECT o.id, o.name, i.invited FROM org_invitations i JOIN organizations o ON o.id = i.org_id"
            " WHERE i.account_id = %s ORDER BY i.invited",
            (account_id,),
        )
        return [(r["id"], r["name"], r["invited"]) for r in rows]

    def answer_invitation(self, org_id: str, account_id: int, accept: bool) -> bool:
        if holds_nul(org_id):
            return False
        with self._pool.transaction() as db:
            gone = db.execute(
                "DELETE FROM org_invitations WHERE org_id = %s AND account_id = %s", (org_id, account_id)
            ).rowcount
            if not gone or not accept:
                return bool(gone)
            joined = db.execute(
                "INSERT INTO org_members (account_id, org_id, role, added) VALUES (%s,%s,'member',%s)"
                " ON CONFLICT (account_id) DO NOTHING",
                (account_id, org_id, iso(self.clock())),
            ).rowcount
            if joined:
                db.execute("DELETE FROM org_invitations WHERE account_id = %s", (account_id,))  # one organization
        return bool(joined)

    def remove_member(self, org_id: str, account_id: int) -> bool:
        with self._pool.transaction() as db:
            cur = db.execute(
                "DELETE FROM org_members WHERE org_id = %s AND account_id = %s AND role = 'member'",
                (org_id, account_id),
            )
        return cur.rowcount > 0
