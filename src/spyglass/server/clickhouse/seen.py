"""What scans saw besides open services, in the ClickHouse store (banners/seen.py): the ``seen``
table (tables.py), a ReplacingMergeTree by address, scan, port and transport, sharded by address
on a cluster. A row added again is not inserted (the keys of a batch's addresses are read
first); two imports racing may insert one twice until a merge drops it: a search reads with FINAL
(a shard holds all of an address's rows), a host's rows are few and kept once by the caller.
"""

from __future__ import annotations

from collections.abc import Iterator

from spyglass.server.banners.seen import HOST, Row
from spyglass.server.clickhouse.connection import Connection

_COLUMNS = ", ".join(Row._fields)
ADDRESSES = 1000  # addresses looked up at a time


class SeenTable:
    """The ClickHouse store's part that keeps what scans saw (ClickHouseStore has it)."""

    connection: Connection

    def add_seen(self, rows: list[Row]) -> int:
        ips = sorted({r.ip for r in rows})
        known: set[tuple] = set()
        for i in range(0, len(ips), ADDRESSES):
            known.update(
                self.connection.execute(
                    "SELECT ip, scan, port, transport FROM seen WHERE ip IN %(ips)s",
                    {"ips": tuple(ips[i : i + ADDRESSES])},
                )
            )
        new = list({r[:4]: r for r in rows if r[:4] not in known}.values())
        if new:
            self.connection.execute(f"INSERT INTO seen ({_COLUMNS}) VALUES", new)
        return len(new)

    def seen_of(self, ip: str) -> list[Row]:
        return [Row(*r) for r in self.connection.execute(f"SELECT {_COLUMNS} FROM seen WHERE ip = %(ip)s", {"ip": ip})]

    def seen_in(self, kind: str, states: list[str] | None) -> Iterator[Row]:
        if states is not None and not states:
            return
        where = ("port = %(host)s" if kind == "host" else "port != %(host)s") + (
            " AND state IN %(states)s" if states is not None else ""
        )
        sql = f"SELECT {_COLUMNS} FROM seen FINAL WHERE {where}"  # each row once
        for r in self.connection.execute(sql, {"states": tuple(states or ()), "host": HOST}):
            yield Row(*r)
