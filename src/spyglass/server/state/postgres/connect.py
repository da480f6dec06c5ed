"""Reaching the PostgreSQL state: its address, a pool of connections, and its schema version.

The schema version is the one row of ``spyglass_schema``: the number of migration steps applied.
Steps are appended, never edited; the missing ones run in one transaction under an advisory lock,
so two backends starting at once never both migrate.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from itertools import cycle
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg.rows import DictRow, dict_row, tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout

from spyglass.server.banners.store import STATE, StoreUnavailable
from spyglass.server.state.accounts import StateURLError
from spyglass.server.state.sql import db
from spyglass.server.state.sql.db import SchemaTooNew, Step

__all__ = ["SchemaTooNew", "Step"]

SCHEMES = ("postgresql", "postgres")
CONNECT_TIMEOUT = 5  # seconds to reach the server, at start and for each new pooled connection
WAIT_FOR_CONNECTION = 5.0  # seconds a request waits for a pooled connection before it is a 503
MIGRATION_LOCK = 0x5379_5374  # the advisory lock migrations take ("SySt")


def shown(url: str) -> str:
    """An address as it may be shown: without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)).geturl()


def check_url(url: str) -> str:
    """``url`` if it is ``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?...]``, else :class:`StateURLError`."""
    usage = "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is no number raises here)
    except ValueError as exc:
        raise StateURLError(f"{shown(url)!r} is no state address ({exc}): give {usage}") from None
    if parts.scheme not in SCHEMES or not parts.path.strip("/") or not (parts.hostname or "host=" in parts.query):
        raise StateURLError(f"{shown(url)!r} is no state address: give {usage}")
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise StateURLError(f"{shown(url)!r} is no state address ({exc}): give {usage}") from None
    return url


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def connect_once(url: str) -> psycopg.Connection[DictRow]:
    """One connection, or a clear error: :class:`StateURLError` when the server refuses who we are
    (nothing a retry mends), :class:`StoreUnavailable` when it cannot be reached."""
    try:
        return psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT, row_factory=dict_row)
    except psycopg.OperationalError as exc:
        reason = first_line(exc)
        if "password" in reason or "authentication" in reason or "does not exist" in reason:
            raise StateURLError(f"the state at {shown(url)} refuses us: {reason}") from None
        raise StoreUnavailable(f"cannot reach the state at {shown(url)}: {reason}", what=STATE) from None


class Statements:
    """A connection (or a cursor) that takes the SQL states' statements: ``?`` placeholders (see
    state/sql/db.py), turned into psycopg's ``%s``."""

    def __init__(self, conn: psycopg.Connection[Any] | psycopg.Cursor[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> psycopg.Cursor[Any]:
        if not args:  # sent as it is (several statements may be one step of a migration)
            return self.conn.execute(sql)
        return self.conn.execute(placeholders(sql), args)


@lru_cache(maxsize=1024)
def placeholders(sql: str) -> str:
    """``sql`` with its ``?`` placeholders as psycopg's ``%s`` (and a ``%`` as ``%%``); a ``?``
    inside a quoted literal stays one."""
    parts = sql.replace("%", "%%").split("'")
    return "'".join(part if quoted else part.replace("?", "%s") for quoted, part in zip(cycle((0, 1)), parts))


class _Versions:
    """The schema version is the one row of ``spyglass_schema``."""

    @staticmethod
    def read(conn: Statements) -> int:
        conn.execute("CREATE TABLE IF NOT EXISTS spyglass_schema (version INTEGER NOT NULL)")
        row = conn.execute("SELECT version FROM spyglass_schema").fetchone()
        if row is None:
            conn.execute("INSERT INTO spyglass_schema (version) VALUES (0)")
        return row[0] if row else 0

    @staticmethod
    def write(conn: Statements, version: int) -> None:
        conn.execute("UPDATE spyglass_schema SET version = ?", (version,))

    @staticmethod
    def script(conn: Statements, sql: str) -> None:
        conn.execute(sql)  # our own constant SQL, no parameters: several statements in one


def migrate(url: str, steps: Sequence[Step]) -> int:
    """Bring the database at ``url`` to the last of ``steps``; returns the version it is now at."""
    with connect_once(url) as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        steps_conn = Statements(conn.cursor(row_factory=tuple_row))  # a step's rows are tuples, as on SQLite
        return db.migrate(steps_conn, steps, _Versions(), name=f"the state at {shown(url)}", verb="use")


def holds_nul(*texts: str | None) -> bool:
    """Whether any of ``texts`` holds NUL, which PostgreSQL's text never does: such a value names no
    row (a lookup finds nothing, as on SQLite) and cannot be stored (psycopg would refuse it)."""
    return any("\x00" in text for text in texts if text)


def row_of(cursor: psycopg.Cursor[DictRow]) -> DictRow:
    """The row of a statement that always returns one (a count, an INSERT ... RETURNING)."""
    row = cursor.fetchone()
    if row is None:
        raise LookupError("a statement that always returns a row returned none")
    return row


# One process's connections to one state, shared by every part of it (accounts, alerts, scans, the
# directory): each statement holds a connection for about one round trip, so a few serve many
# request threads, and PostgreSQL's default max_connections (100, 3 kept for superusers) then fits
# a dozen backends rather than one pool per part (4 x 16) filling it with two.
POOL_SIZE = 8

_pools: dict[str, tuple[ConnectionPool[psycopg.Connection[DictRow]], int]] = {}
_pools_lock = threading.Lock()
_checking: set[int] = set()  # the pools whose idle connections a thread is testing now


def _acquire(url: str) -> ConnectionPool[psycopg.Connection[DictRow]]:
    """The process's pool for ``url``, opened by its first user."""
    with _pools_lock:
        pool, users = _pools.get(url) or (None, 0)
        if pool is None:
            pool = ConnectionPool(
                url,
                connection_class=psycopg.Connection[DictRow],  # (the rows' type, for the type checker)
                min_size=1,
                max_size=POOL_SIZE,
                # autocommit: a statement alone is one round trip (no BEGIN and COMMIT around it); a
                # connection the server dropped is discarded when it is handed back
                kwargs={"connect_timeout": CONNECT_TIMEOUT, "row_factory": dict_row, "autocommit": True},
                open=True,
                name="spyglass-state",
            )
        _pools[url] = (pool, users + 1)
        return pool


def _release(url: str) -> None:
    """One user fewer of ``url``'s pool; the last one closes it."""
    with _pools_lock:
        pool, users = _pools[url]
        if users > 1:
            _pools[url] = (pool, users - 1)
            return
        del _pools[url]
    pool.close()


def _check_soon(pool: ConnectionPool[psycopg.Connection[DictRow]]) -> None:
    """One connection was found broken (the server restarted, or is gone): test the idle ones in a
    thread, so that they are replaced at once rather than each failing one request after a restart
    (testing each connection as it is handed out would cost every statement a round trip)."""
    with _pools_lock:
        if id(pool) in _checking:
            return
        _checking.add(id(pool))

    def check() -> None:
        try:
            pool.check()
        except psycopg.Error:  # a closed pool, or the server gone while testing: the pool copes
            pass
        finally:
            with _pools_lock:
                _checking.discard(id(pool))

    threading.Thread(target=check, name="spyglass-state-check", daemon=True).start()


class Pool:
    """A use of the process's pool of connections to the state at ``url`` (one per address, however
    many parts open it; :meth:`close` hands this use back). Every use of it either works or raises
    :class:`StoreUnavailable` (the API answers 503 with Retry-After, and the pool reconnects)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool = _acquire(url)
        self._closed = False

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[DictRow]]:
        """A connection of the pool, each statement its own transaction."""
        try:
            with self._pool.connection(timeout=WAIT_FOR_CONNECTION) as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
            if not isinstance(exc, PoolTimeout):
                _check_soon(self._pool)
            raise StoreUnavailable(f"the state at {shown(self.url)} failed: {first_line(exc)}", what=STATE) from exc

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[Statements]:
        """A connection in a transaction, committed on leaving, rolled back on any error (always
        durable: ``durable`` is SQLite's)."""
        with self.connection() as conn, conn.transaction():
            yield Statements(conn)

    reading = transaction  # read committed: one transaction's reads see one state only if a lock says so

    def one(self, sql: str, args: Sequence[Any] = (), *, durable: bool = True) -> Any:
        """The first row of one statement (run alone: one round trip; always durable)."""
        with self.connection() as conn:
            return Statements(conn).execute(sql, args).fetchone()

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        """One statement that returns no rows (run alone, its own transaction: one round trip);
        how many rows it changed."""
        with self.connection() as conn:
            return Statements(conn).execute(sql, args).rowcount

    def all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self.connection() as conn:
            return Statements(conn).execute(sql, args).fetchall()

    # -- what PostgreSQL spells its own way (state/sql/db.py's Db) ------------------------
    for_update = " FOR UPDATE"

    @staticmethod
    def any_of(column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [list(values)]

    @staticmethod
    def one_at_a_time(tx: db.Tx, what: str, key: int | str) -> None:
        """The advisory lock of ``what`` for ``key`` to the end of ``tx``: read committed alone
        lets two writers each see the other's row absent."""
        tx.execute(f"SELECT pg_advisory_xact_lock(hashtextextended('{what} ' || ?, 0))", (key,))

    unstorable = staticmethod(holds_nul)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            _release(self.url)
