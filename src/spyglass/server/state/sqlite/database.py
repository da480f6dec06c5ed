"""Opening the backend's SQLite files the one way they are all opened, and their schema versions.

A file's schema version is its ``PRAGMA user_version``: the number of migration steps applied.
A store lists its steps in order (``migrations[0]`` makes version 1, and so on) and never edits a
released one; a change of layout is a new step at the end. On open, the missing steps run in
order in one transaction, so a file is at one version or the next, never in between.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from spyglass.server.state.sql import db as seam
from spyglass.server.state.sql.db import SchemaTooNew, Tx

# A step: SQL statements, or a function for what SQL alone cannot say (it must not commit).
Migration = str | Callable[[sqlite3.Connection], None]

__all__ = ["SchemaTooNew"]  # where the CLI and the tests import it from


class CorruptDatabase(ValueError):
    """The file is not a SQLite database any more (damaged, truncated, overwritten)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(
            f"{path} is damaged ({reason}): restore it from a backup, or move it aside to start without what it held"
        )


class LostDatabase(ValueError):
    """The file is missing or empty where the data dir shows it held something: created afresh,
    it would start the backend without a word and without what it held."""

    def __init__(self, path: Path, evidence: str) -> None:
        super().__init__(
            f"{path} is missing or empty, but {evidence}: restore it from a backup, "
            "or start afresh with another data dir"
        )


def is_empty(path: Path) -> bool:
    """No such file, or zero bytes: what a database created now would start from."""
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return True


class DiskFull(OSError):
    """The disk (or quota) of the data dir is full: nothing there is damaged, but nothing can be
    written until space is freed. Never a reason to move a database aside."""

    def __init__(self, folder: Path, reason: str) -> None:
        super().__init__(errno.ENOSPC, f"the disk of {folder} is full ({reason}): free some space and start again")

    def __str__(self) -> str:
        return str(self.strerror)


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_FULL
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


LOW_SPACE = 16 * 1024 * 1024  # bytes free below which a failed write is taken for a full disk


def disk_full(exc: BaseException, folder: Path | None = None) -> bool:
    """Whether ``exc`` comes of a full disk: said so (ENOSPC, SQLite's "disk is full", "No space
    left"), or any failure while ``folder``'s file system has next to nothing free (tantivy's
    writer threads fail with no word of why)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    if "disk is full" in text or "no space left" in text:
        return True
    if folder is not None:
        try:
            return shutil.disk_usage(folder).free < LOW_SPACE
        except OSError:
            return False
    return False


@contextmanager
def full_disk_said(folder: Path) -> Iterator[None]:
    """A full disk met inside, by SQLite or the system, raised as :class:`DiskFull` naming ``folder``."""
    try:
        yield
    except DiskFull:
        raise
    except (sqlite3.Error, OSError) as exc:
        if is_disk_full(exc):
            raise DiskFull(folder, str(exc)) from None
        raise


def connect(path: Path, *, synchronous: str, migrations: Sequence[Migration] = ()) -> sqlite3.Connection:
    """A connection shared across threads (callers hold a lock), in WAL mode, autocommit
    (transactions are explicit), brought to the last version of ``migrations``."""
    path = Path(path)
    with full_disk_said(path.parent):
        # Created 0600 whatever the process's umask (keys create, the dashboard's launcher): SQLite
        # gives the -wal and -shm files the mode of their database.
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT, 0o600))
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        try:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(f"PRAGMA synchronous={synchronous}")
                db.execute("PRAGMA busy_timeout=10000")
                db.execute("PRAGMA schema_version").fetchone()  # reads the file's header and schema
            except sqlite3.DatabaseError as exc:
                if is_disk_full(exc):
                    raise
                raise CorruptDatabase(path, str(exc)) from None
            if migrations:
                migrate(db, migrations, name=path.name)
        except BaseException:
            db.close()
            raise
    return db


class Database:
    """One of the backend's SQLite files, used the one way they all are: a connection shared by
    threads under one lock (:meth:`connect`'s settings and migrations), reads and transactions
    under that lock, and close. It is the SQL states' :class:`~spyglass.server.state.sql.db.Db`:
    a transaction is ``BEGIN IMMEDIATE``, so writers queue and need no row locks."""

    for_update = ""

    def __init__(
        self,
        path: Path,
        *,
        synchronous: str,
        migrations: Sequence[Migration] = (),
        rows: bool = True,
        queued: bool = False,
    ) -> None:
        self.path = Path(path)
        self.lock = threading.RLock()
        self.conn = connect(self.path, synchronous=synchronous, migrations=migrations)
        self.synchronous = synchronous
        self._queue = _WriterQueue(self.path, self.conn) if queued else None
        if rows:
            self.conn.row_factory = sqlite3.Row

    @contextmanager
    def transaction(self, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` under the lock, rolled back on any error.

        Not ``durable``: committed without waiting for the disk (the write-ahead log is synced by
        the next durable commit or checkpoint). A process crash loses nothing; an OS crash may
        undo the last such commits."""
        with self.lock:
            with self._queue or nullcontext():
                if not durable:
                    self.conn.execute("PRAGMA synchronous=NORMAL")
                try:
                    self.conn.execute("BEGIN IMMEDIATE")
                    try:
                        yield self.conn
                    except BaseException:
                        self.conn.execute("ROLLBACK")
                        raise
                    self.conn.execute("COMMIT")
                finally:
                    if not durable:
                        self.conn.execute(f"PRAGMA synchronous={self.synchronous}")
            if self._queue is not None:
                self._queue.checkpoint_if_due(self.conn)

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection under the lock: several reads with no write of this process between."""
        with self.lock:
            yield self.conn

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        """The rows of one query (under the lock: the connection is shared)."""
        with self.lock:
            return self.conn.execute(sql, args).fetchall()

    all = read

    def one(self, sql: str, args: Sequence[Any] = (), *, durable: bool = True) -> Any:
        """The first row of one statement, or None (not ``durable``: see :meth:`transaction`)."""
        if not durable:
            with self.transaction(durable=False) as db:
                return db.execute(sql, args).fetchone()
        with self.lock:
            return self.conn.execute(sql, args).fetchone()

    def run(self, sql: str, args: Sequence[Any] = ()) -> int:
        """One statement on its own (its own transaction: the connection is in autocommit); how
        many rows it changed."""
        with self.lock:
            return self.conn.execute(sql, args).rowcount

    @staticmethod
    def any_of(column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join('?' * len(values))})", list(values)

    @staticmethod
    def one_at_a_time(tx: Tx, what: str, key: int | str) -> None:
        """Nothing to do: a transaction holds the file's write lock from its start."""

    @staticmethod
    def unstorable(*texts: str | None) -> bool:
        return False  # SQLite's text holds any character

    def close(self) -> None:
        with self.lock:
            self.conn.close()
            if self._queue is not None:
                self._queue.close()


class _WriterQueue:
    """Writers of one file from many processes, in turn: each waits in the kernel for a lock on a
    file beside it (woken as the last lets go) before it asks SQLite for the write lock. Without it
    every waiter polls SQLite's lock, sleeping up to 100 ms between tries, and the file sits unwritten
    while many wait (an import's workers, 16 of them on 16 cores). Writers that do not queue (an
    earlier release) still wait as before: SQLite's lock decides.

    SQLite's own checkpoint of the write-ahead log runs within the commit that fills it, which would
    be within the turn, every writer waiting for it: each writer checkpoints after its turn instead,
    once it has changed CHECKPOINT_ROWS rows since its last (PASSIVE: beside the other writers)."""

    CHECKPOINT_ROWS = 40_000  # about 64 MB of log for banners (two rows each) at a million

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        with full_disk_said(path.parent):
            self.fd = os.open(path.with_name(path.name + "-writers"), os.O_RDWR | os.O_CREAT, 0o600)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        self.changes = conn.total_changes

    def checkpoint_if_due(self, conn: sqlite3.Connection) -> None:
        if conn.total_changes - self.changes >= self.CHECKPOINT_ROWS:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self.changes = conn.total_changes

    def __enter__(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:  # a store may be closed twice: the second must not close a reused descriptor
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def schema_version(db: sqlite3.Connection) -> int:
    return db.execute("PRAGMA user_version").fetchone()[0]


class _Versions:
    """A file's schema version is its ``PRAGMA user_version``."""

    @staticmethod
    def read(db: sqlite3.Connection) -> int:
        return schema_version(db)

    @staticmethod
    def write(db: sqlite3.Connection, version: int) -> None:
        db.execute(f"PRAGMA user_version={version}")

    @staticmethod
    def script(db: sqlite3.Connection, sql: str) -> None:
        for statement in statements(sql):
            db.execute(statement)


def migrate(db: sqlite3.Connection, migrations: Sequence[Migration], *, name: str = "database") -> int:
    """Apply the steps ``db`` lacks, in one transaction; returns the version it is now at."""
    db.execute("BEGIN IMMEDIATE")  # the version is read under the write lock: two openers never both migrate
    try:
        version = seam.migrate(db, migrations, _Versions(), name=name)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return version


def statements(script: str) -> list[str]:
    """The complete statements of ``script``, one by one (``executescript`` would commit the
    migration's transaction before running)."""
    out, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            out.append(pending.strip())
            pending = ""
    if "\n".join(line for line in pending.splitlines() if not line.strip().startswith("--")).strip():
        if not sqlite3.complete_statement(pending + ";"):  # a last statement may omit its ";"
            raise ValueError(f"incomplete SQL statement in a migration: {pending.strip()[:60]!r}")
        out.append(pending.strip())
    return out
