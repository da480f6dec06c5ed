"""The seam the SQL states are written over, and the one migration runner.

Statements are written once, with ``?`` placeholders, in SQL both databases run (SQLite 3.35 or
later: ``INSERT ... ON CONFLICT ... DO NOTHING``, ``RETURNING``); a :class:`Db` runs them, PostgreSQL's
after turning ``?`` into ``%s``. What the two spell differently is the Db's to say: a test of one
value against a list (:meth:`Db.any_of`), a row lock (:attr:`Db.for_update`), one writer at a time
per account (:meth:`Db.one_at_a_time`), and text a database cannot hold (:meth:`Db.unstorable`).
Rows are read by column name.

A database's schema version is the number of migration steps applied: steps are appended, never
edited, and :func:`migrate` applies those missing, inside the transaction its caller holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Tx(Protocol):
    """A connection inside a transaction (sqlite3's, or a PostgreSQL one that takes ``?``)."""

    def execute(self, sql: str, args: Sequence[Any] = (), /) -> Cursor: ...


class Db(Protocol):
    """One database a state is kept in; each method is safe to call from any thread."""

    for_update: str  # what locks a selected row to the end of the transaction ("" where writers queue)

    def transaction(self, durable: bool = True) -> AbstractContextManager[Tx]:
        """A write transaction, committed on leaving, rolled back on any error (``durable``: see sqlite.py)."""
        ...

    def reading(self) -> AbstractContextManager[Tx]:
        """Several reads together: under SQLite's lock (no write of this process between), in
        one PostgreSQL transaction."""
        ...

    def one(self, sql: str, args: Sequence[Any] = (), *, durable: bool = True) -> Any:
        """The first row of one statement (its own transaction), or None."""
        ...

    def all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]: ...

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        """One statement, its own transaction; how many rows it changed."""
        ...

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """A condition that ``column`` is one of ``values`` (not empty), and its arguments."""
        ...

    def one_at_a_time(self, tx: Tx, what: str, key: int | str) -> None:
        """Writers of ``what`` for ``key`` (an account, an alert) one at a time to the end of ``tx``."""
        ...

    def unstorable(self, *texts: str | None) -> bool:
        """Whether any of ``texts`` is text this database cannot hold (it names no row)."""
        ...

    def close(self) -> None: ...


class SchemaTooNew(ValueError):
    """The database was written by a newer spyglass: using it here could lose what it holds."""


C = TypeVar("C")
C_contra = TypeVar("C_contra", contravariant=True)
Step = str | Callable[[Any], None]  # SQL statements, or a function of the connection (it must not commit)


class Versions(Protocol[C_contra]):
    """How one kind of database keeps its schema version and runs a step's SQL."""

    def read(self, conn: C_contra) -> int: ...

    def write(self, conn: C_contra, version: int) -> None: ...

    def script(self, conn: C_contra, sql: str) -> None: ...


def migrate(conn: C, steps: Sequence[Step], versions: Versions[C], *, name: str, verb: str = "open") -> int:
    """Apply the steps ``conn`` lacks (its caller holds the transaction and the lock that keeps
    two migrations apart); returns the version it is now at. A step's rows are tuples."""
    version = versions.read(conn)
    if version > len(steps):
        raise SchemaTooNew(
            f"{name} is at schema version {version}, newer than this spyglass knows "
            f"({len(steps)}): upgrade spyglass to {verb} it"
        )
    for step in steps[version:]:
        if callable(step):
            step(conn)
        else:
            versions.script(conn, step)
    versions.write(conn, len(steps))
    return len(steps)
