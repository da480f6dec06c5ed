"""The saved-query directory on PostgreSQL: the
:class:`~spyglass.server.state.directory.DirectoryState` that several backends share (written
once, in state/sql/directory.py)."""

from __future__ import annotations

from spyglass.server.state.postgres.connect import Pool
from spyglass.server.state.postgres.schema import init_schema
from spyglass.server.state.sql.directory import SqlDirectory


class PostgresDirectory(SqlDirectory):
    _db: Pool
    TAG_ORDER = "seq"  # a column of its own: PostgreSQL has no rowid
    HOLDS = "strpos(words, ?) > 0"

    def __init__(self, url: str) -> None:
        init_schema(url)
        self._db = Pool(url)
