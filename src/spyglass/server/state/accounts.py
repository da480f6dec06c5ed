"""Accounts, API keys (kept as digests), plans, credits, organizations and invitations: what a
store of them is (:class:`AccountState`) and the values they hand out.

Only the standard library is imported here: the launcher creates the local account without
loading the web stack.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from spyglass.server.plans import PLANS, Plan

LOCAL_USER = "local"
LOCAL_KEY_FILE = "local.key"  # the local account's key, readable by its owner only (0600)


class StateURLError(ValueError):
    """Not an address of a state, or one its server refuses (wrong user or password)."""


class AccountExists(ValueError):
    """The username is taken."""


class AmbiguousUser(LookupError):
    """Several accounts have that e-mail address."""


class NoCreditsLeft(Exception):
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True)
class Account:
    id: int
    username: str
    email: str | None
    display_name: str | None
    created: str
    plan: Plan
    researcher: bool
    query_credits: int
    scan_credits: int
    collector: bool = False  # may collect banners (POST /spyglass/collect)


@dataclass(frozen=True)
class Organization:
    id: str
    name: str
    created: str
    upgrade_type: str
    domains: list[str]
    logo: bool
    admins: list[Account]
    members: list[Account]

    def role_of(self, account_id: int) -> str | None:
        if any(a.id == account_id for a in self.admins):
            return "admin"
        return "member" if any(a.id == account_id for a in self.members) else None


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def iso(dt: datetime) -> str:
    """Timestamps as the service writes them: ISO 8601, no zone, microseconds."""
    return dt.strftime("%Y-%m-%dT%H:%M:%S.%f")


def new_key() -> str:
    return secrets.token_hex(16)


def key_digest(key: str) -> str:
    """What a store keeps of a key: its SHA-256. Keys are 128 random bits, so a fast hash is the
    right one (nothing to guess from), and the store alone never lets anyone call as an account."""
    return hashlib.sha256(key.encode()).hexdigest()


def write_private(path: Path, text: str) -> None:
    """``text`` in a file only its owner reads, written whole or not at all."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(temp, path)


def account_from(row: Mapping[str, Any]) -> Account:
    """An account from its row (every store's ``accounts`` table has these columns)."""
    return Account(
        id=row["id"],
        username=row["username"],
        email=row["email"],
        display_name=row["display_name"],
        created=row["created"],
        plan=PLANS[row["plan"]],
        researcher=bool(row["researcher"]),
        query_credits=row["query_credits"],
        scan_credits=row["scan_credits"],
        collector=bool(row["collector"]),
    )


def organization_from(org: Mapping[str, Any], people: Sequence[Mapping[str, Any]]) -> Organization:
    """An organization from its row and its people's account rows (each with its ``role``)."""
    return Organization(
        id=org["id"],
        name=org["name"],
        created=org["created"],
        upgrade_type=org["upgrade_type"],
        domains=json.loads(org["domains"]),
        logo=bool(org["logo"]),
        admins=[account_from(p) for p in people if p["role"] == "admin"],
        members=[account_from(p) for p in people if p["role"] == "member"],
    )


def new_organization(admin: Account, stamp: str) -> tuple[str, str, str]:
    """(id, name, domains as JSON) of the organization an enterprise admin's plan comes with: named
    after the account, its domain the account's e-mail domain."""
    # From its admin's (unique) username and its start: an 11-character id like the service's.
    seed = hashlib.blake2b(f"{admin.username}|{stamp}".encode(), digest_size=8).digest()
    # never a leading "-": an id on a command line would read as an option
    org_id = base64.urlsafe_b64encode(seed).decode().rstrip("=").replace("-", "A", 1 if seed[0] >> 2 == 62 else 0)
    domain = admin.email.rpartition("@")[2].lower() if admin.email and "@" in admin.email else ""
    return org_id, admin.display_name or admin.username, json.dumps([domain] if domain else [])


class AccountState(Protocol):
    """What the API asks of the accounts. Thread-safe; every write is one transaction, committed
    before it is acknowledged. A store whose server is away raises
    :class:`~spyglass.server.banners.store.StoreUnavailable` (answered 503 with Retry-After)."""

    data_dir: Path  # this backend's own files (the local account's key)
    clock: Callable[[], datetime]

    def close(self) -> None: ...

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
    ) -> tuple[Account, str]: ...
    def create_key(
        self,
        plan: str = "free",
        researcher: bool = False,
        *,
        collector: bool = False,
        username: str | None = None,
        email: str | None = None,
        display_name: str | None = None,
    ) -> str: ...
    def local_key(self) -> str: ...
    def add_key(self, account_id: int) -> str: ...
    def account_for_key(self, key: str) -> Account | None: ...
    def account(self, account_id: int) -> Account: ...
    def set_credits(self, account_id: int, *, query: int | None = None, scan: int | None = None) -> None: ...
    def charge(self, account_id: int, *, query: int = 0, scan: int = 0) -> Account: ...
    def find_account(self, user: str) -> Account | None: ...
    def organization_of(self, account_id: int) -> Organization | None: ...
    def organization(self, org_id: str) -> Organization | None: ...
    def own_organization(self, admin: Account) -> Organization: ...
    def invite(self, org_id: str, account_id: int | None, inviter: int) -> bool: ...
    def invitations(self, account_id: int) -> list[tuple[str, str, str]]: ...
    def answer_invitation(self, org_id: str, account_id: int, accept: bool) -> bool: ...
    def remove_member(self, org_id: str, account_id: int) -> bool: ...


LOCAL_LOCK = threading.Lock()  # one local account made at a time in this process


class KeysOnTop:
    """What every store builds on its own primitives: keys for new accounts, and this machine's
    local account, whose key is kept in ``local.key`` in the data dir (stores keep only digests)."""

    def create_key(
        self: AccountState,
        plan: str = "free",
        researcher: bool = False,
        *,
        collector: bool = False,
        username: str | None = None,
        email: str | None = None,
        display_name: str | None = None,
    ) -> str:
        """A new account of ``plan`` with its key (what ``spyglass keys create`` prints); without
        a username it gets a random one, and without a display name the username given, if any.
        :class:`AccountExists` if the username is taken."""
        name = username or f"user-{secrets.token_hex(4)}"
        shown = display_name or username
        _, key = self.create_account(
            name, plan, researcher=researcher, collector=collector, email=email, display_name=shown
        )
        return key

    def local_key(self: AccountState) -> str:
        """The key of this machine's own account, created (enterprise, researcher) on first use and
        kept in ``local.key`` beside the database (the store itself keeps only digests)."""
        path = self.data_dir / LOCAL_KEY_FILE
        with LOCAL_LOCK:
            try:
                key = path.read_text().strip()
            except FileNotFoundError:
                key = ""
            account = self.account_for_key(key) if key else None
            if account is not None and account.username == LOCAL_USER:
                return key
            local = self.find_account(LOCAL_USER)
            if local is None:
                try:
                    _, key = self.create_account(
                        LOCAL_USER, "enterprise", researcher=True, display_name="Local analyst"
                    )
                except AccountExists:  # another backend on the same state made it just now
                    local = self.find_account(LOCAL_USER)
            if local is not None:  # its key file was lost (or is another backend's): a new key
                key = self.add_key(local.id)
            write_private(path, key)
            return key
