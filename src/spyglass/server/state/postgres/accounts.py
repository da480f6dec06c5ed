"""Accounts, keys (digests), plans, credits, organizations and invitations on PostgreSQL: the
:class:`~spyglass.server.state.accounts.AccountState` that several backends share (written once,
in state/sql/accounts.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from spyglass.server.state.accounts import utcnow
from spyglass.server.state.datadir import make_private
from spyglass.server.state.postgres.connect import Pool
from spyglass.server.state.postgres.schema import init_schema
from spyglass.server.state.sql.accounts import SqlAccounts


class PostgresAccounts(SqlAccounts):
    """Thread-safe (a pool); every write is one transaction."""

    _db: Pool

    EMAIL_IS = "lower(email) = lower(?)"  # the accounts_by_email index

    def __init__(self, url: str, data_dir: Path | str, clock: Callable[[], datetime] = utcnow) -> None:
        self.data_dir = Path(data_dir)
        make_private(self.data_dir)
        self.clock = clock
        init_schema(url)
        self._db = Pool(url)
