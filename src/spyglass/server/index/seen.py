"""What scans saw besides open services, in the embedded store (banners/seen.py): ``seen.sqlite``
in its data dir, beside the banners' records and index and apart from them (an import writes it
from its own process while its workers write banners; no banner's index document changes).

A row per host of a run and per port of it that was not open, keyed by address, scan, port and
transport (a row added again adds nothing); looked up by address, or by kind and state.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from spyglass.server.banners.seen import HOST, Row
from spyglass.server.state.sqlite.database import Database

FILE = "seen.sqlite"
STREAM = 5000  # rows of a search read at a time
MIGRATIONS = [
    """
    CREATE TABLE seen (
        ip TEXT NOT NULL, scan TEXT NOT NULL, port INTEGER NOT NULL, transport TEXT NOT NULL,
        stamp TEXT NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL, ttl INTEGER NOT NULL,
        opened INTEGER NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (ip, scan, port, transport)
    ) WITHOUT ROWID;
    CREATE INDEX seen_by_state ON seen (state, port);
    """
]
_COLUMNS = ", ".join(Row._fields)


class SeenRows:
    """The embedded store's part that keeps what scans saw (BannerIndex has it): each call opens
    the file (an import and a backend use it from their own processes) and closes it."""

    data_dir: Path

    def _seen_db(self) -> closing[Database]:
        return closing(Database(self.data_dir / FILE, synchronous="NORMAL", migrations=MIGRATIONS, rows=False))

    def add_seen(self, rows: list[Row]) -> int:
        if not rows:
            return 0
        with self._seen_db() as db, db.transaction() as conn:
            before = conn.total_changes
            conn.executemany(
                f"INSERT OR IGNORE INTO seen ({_COLUMNS}) VALUES ({', '.join('?' * len(Row._fields))})", rows
            )
            return conn.total_changes - before

    def seen_of(self, ip: str) -> list[Row]:
        with self._seen_db() as db:
            return [Row(*r) for r in db.read(f"SELECT {_COLUMNS} FROM seen WHERE ip = ?", (ip,))]

    def all_seen(self, batch: int) -> Iterator[list[Row]]:
        """Every row, ``batch`` at a time, in key order (``spyglass store copy``)."""
        after: tuple = ("", "", -(2**31), "")
        keys = "ip, scan, port, transport"
        while True:
            with self._seen_db() as db:
                sql = f"SELECT {_COLUMNS} FROM seen WHERE ({keys}) > (?, ?, ?, ?) ORDER BY {keys} LIMIT ?"
                rows = [Row(*r) for r in db.read(sql, (*after, batch))]
            if not rows:
                return
            yield rows
            after = tuple(rows[-1][:4])

    def seen_in(self, kind: str, states: list[str] | None) -> Iterator[Row]:
        where = "port = ?" if kind == "host" else "port != ?"
        if states is not None:
            where += f" AND state IN ({', '.join('?' * len(states))})"
        with self._seen_db() as db:  # (a connection of this call's own: read as the caller goes)
            cursor = db.conn.execute(f"SELECT {_COLUMNS} FROM seen WHERE {where}", (HOST, *(states or ())))
            while rows := cursor.fetchmany(STREAM):
                yield from (Row(*r) for r in rows)
