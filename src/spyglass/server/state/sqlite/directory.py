"""The saved queries of the directory on SQLite, in ``<data_dir>/directory.db``: the embedded
:class:`~spyglass.server.state.directory.DirectoryState` (written once, in state/sql/directory.py);
the starting set is seeded by a migration step."""

from __future__ import annotations

from pathlib import Path

from spyglass.server.state.directory import MAX_TAGS, TAG, check_tags  # noqa: F401 (tests name them here)
from spyglass.server.state.sql.directory import SqlDirectory, add_words, seed
from spyglass.server.state.sqlite.database import Database

V1_QUERIES = """
CREATE TABLE queries (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    query TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    votes INTEGER NOT NULL DEFAULT 0,
    owner INTEGER  -- the account that saved it; NULL for the starting set
);
CREATE TABLE query_tags (
    query_id INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (query_id, tag)
);
CREATE INDEX query_tags_by_tag ON query_tags(tag);
CREATE TABLE query_votes (
    query_id INTEGER NOT NULL REFERENCES queries(id) ON DELETE CASCADE,
    account INTEGER NOT NULL,
    value INTEGER NOT NULL CHECK (value IN (-1, 1)),
    PRIMARY KEY (query_id, account)
);
"""


MIGRATIONS = (V1_QUERIES, seed, add_words("rowid"))


class Directory(SqlDirectory):
    """Thread-safe; every write is one transaction."""

    _db: Database

    def __init__(self, data_dir: Path) -> None:
        self._db = Database(Path(data_dir) / "directory.db", synchronous="NORMAL", migrations=MIGRATIONS)
        self._db.run("PRAGMA foreign_keys=ON")
