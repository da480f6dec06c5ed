"""Opening the backend's SQLite files the one way they are all opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def connect(path: Path, *, synchronous: str, schema: str) -> sqlite3.Connection:
    """A connection shared across threads (callers hold a lock), in WAL mode, autocommit
    (transactions are explicit), with ``schema`` applied."""
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={synchronous}")
    db.execute("PRAGMA busy_timeout=10000")
    db.executescript(schema)
    return db
