"""The banner store on ClickHouse (see :mod:`spyglass.server.banners.store`), on one server or a
sharded cluster: ``clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?cluster=NAME&http_port=N]``.

The store puts three parts together: its :class:`~spyglass.server.clickhouse.connection.Connection`
(the address, a client per thread, the HTTP inserts), its writing side (writer.py: writers, marks,
reconciliation, repair) and its reads (reads.py: conditions, pages, facets, trends, the bulk-data
builder's reads). It makes its tables where they are missing (tables.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

from spyglass.exactjson import loads
from spyglass.query import Facet, Query
from spyglass.server.banners.store import FacetCounts, StoreUnavailable, Trends
from spyglass.server.clickhouse import tables
from spyglass.server.clickhouse.compiler import TEXT_INDEX_SINCE
from spyglass.server.clickhouse.connection import Connection, server_version, shown
from spyglass.server.clickhouse.reads import Reads
from spyglass.server.clickhouse.seen import SeenTable
from spyglass.server.clickhouse.writer import Writer, Writes


class ClickHouseStore(SeenTable):
    """The banner store on ClickHouse; creates its database and tables when they are missing, and
    keeps what scans saw besides banners (seen.py)."""

    prepare = staticmethod(tables.prepare)

    def __init__(self, url: str, init: bool = True, connection: Connection | None = None) -> None:
        """The store at ``url``, over ``connection`` if given (one of its own: the tests run the
        store on an engine in process); ``init``: make its tables where missing."""
        self.url = url
        self.own_connection = connection is not None
        self.connection = connection or Connection(url)
        self.database, self.cluster = self.connection.database, self.connection.cluster
        self.writes = Writes(self.connection)
        self.reads = Reads(self.connection)
        if init:
            self.init()

    @property
    def tokens(self) -> bool:
        """Whether every server has text indexes: free text reads the one on its words."""
        return self.connection.tokens

    def close(self) -> None:
        self.reads.close()
        self.connection.close()

    # -- tables --------------------------------------------------------------------------------
    def init(self, upgrading: bool = False) -> None:
        """Create the database and tables where missing: on one server, or the local tables on
        every shard and the Distributed tables on each (any shard can then take queries).
        StoreUnavailable if tables there are an earlier version's, or those an upgrade is copying
        from, unless ``upgrading`` (``spyglass store init`` upgrades them: upgrade.py). Where
        every server has text indexes, the free text gets one (tables.INDEXED)."""
        connection = self.connection
        clients = [connection.connect(host, port, database="system") for host, port in connection.servers()]
        try:
            connection.tokens = all(server_version(client) >= TEXT_INDEX_SINCE for client in clients)
            connection.max_query_size = min(
                int(client.execute("SELECT value FROM system.settings WHERE name = 'max_query_size'")[0][0])
                for client in clients
            )
            for client in clients:
                self._init_server(client, upgrading)
        finally:
            for client in clients:
                client.disconnect()
        note = self.get_meta("layout")
        if note is None and self.total() == 0:
            self.set_meta("layout", tables.LAYOUT)
        elif note != tables.LAYOUT and not upgrading:
            raise StoreUnavailable(
                f"the banners were stored by an earlier version of spyglass (rows of layout {note or 1}, this "
                f"version's are {tables.LAYOUT}): run `spyglass store init --store {shown(self.url)}` to upgrade "
                "the store (it copies the banners into the current tables)"
            )

    def _init_server(self, client, upgrading: bool) -> None:
        """:meth:`init` on the server of ``client``."""
        client.execute(f"CREATE DATABASE IF NOT EXISTS {self.database}")
        found = tables.found(client, self.database)
        stale = tables.stale(found, self.cluster)
        if upgrading:
            stale = [name for name in stale if not name.endswith(tables.PREVIOUS)]
        if stale:
            cut_short = [name for name in stale if name.endswith(tables.PREVIOUS)]
            raise StoreUnavailable(
                f"an upgrade of the store was cut short ({self.database}.{cut_short[0]} is still there): "
                f"run `spyglass store init --store {shown(self.url)}` again to finish it"
                if cut_short
                else f"the table {self.database}.{stale[0]} was made by an earlier version of spyglass: "
                f"run `spyglass store init --store {shown(self.url)}` to upgrade the store (it copies "
                "the banners into the current tables)"
            )
        tokens = self.connection.tokens
        indexed = tables.text_indexed(client, self.database) if tokens else set()
        for table in tables.ENGINES:
            name = tables.local_name(table, self.cluster)
            client.execute(tables.create_local(self.database, table, self.cluster, tokens))
            if tokens and table in tables.INDEXED and name in found and name not in indexed:
                client.execute(tables.add_text_index(self.database, table, self.cluster))  # made on an older server
            if self.cluster:
                client.execute(tables.create_distributed(self.database, table, self.cluster))
        current_rows, banners = (tables.local_name(t, self.cluster) for t in ("current", "banners"))
        if not upgrading and current_rows not in found and banners in found:
            self.writes.fill_current(client)  # a store made before the table was

    # -- notes ---------------------------------------------------------------------------------
    def get_meta(self, name: str, default: str | None = None) -> str | None:
        rows = self.connection.execute("SELECT argMax(value, at), count() FROM meta WHERE name = %(n)s", {"n": name})
        return rows[0][0] if rows and rows[0][1] else default

    def set_meta(self, name: str, value: str) -> None:
        self.connection.execute("INSERT INTO meta (name, value, at) VALUES", [(name, value, time.time_ns())])

    # -- writing -------------------------------------------------------------------------------
    def opener(self) -> Callable[[], ClickHouseStore] | None:
        """How another process (an import's worker) opens this store to write to it; None when
        this one runs over a connection of its own (an engine in this process)."""
        return None if self.own_connection else partial(ClickHouseStore, self.url, init=False)

    @contextmanager
    def writing(self) -> Iterator[Writer]:
        """A writer; what it added is inserted when the block ends, also when it ends by an error
        (and every FLUSH_ROWS banners as it goes)."""
        writer = Writer(self.writes, fresh=self.total() == 0)
        try:
            yield writer
        finally:
            writer.close()

    def known_services(self, services: list[int]) -> set[int]:
        return self.writes.known_services(services)

    def repair(self) -> tuple[int, int]:
        """What writers stopped part way left, put right (writer.Writes.repair): (demoted, deleted)."""
        return self.writes.repair()

    # -- reading -------------------------------------------------------------------------------
    def total(self) -> int:
        return self.reads.total()

    def count(self, query: Query, facets: list[Facet]) -> tuple[int, FacetCounts]:
        total, _, counts = self.reads.answer(query, facets, None)
        return total, counts

    def search(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[dict], FacetCounts]:
        total, bodies, counts = self.search_bodies(query, facets, page)
        return total, [loads(b) for b in bodies], counts

    def search_bodies(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[bytes], FacetCounts]:
        return self.reads.answer(query, facets, page)

    def host(self, ip: str) -> list[dict]:
        return self.reads.host(ip)

    def current(self, ip: str, port: int, transport: str) -> dict | None:
        return self.reads.current_of(ip, port, transport)

    def under_domain(self, domain: str, history: bool, limit: int) -> list[dict]:
        return self.reads.under_domain(domain, history, limit)

    def trends(self, query: Query, facets: list[Facet]) -> Trends:
        return self.reads.trends(query, facets)

    # -- the bulk-data builder -----------------------------------------------------------------
    def last_mark(self) -> int:
        return self.reads.last_mark()

    def added_since(self, mark: int, batch: int) -> Iterator[list[tuple[int, str]]]:
        return self.reads.added_since(mark, batch)

    def marks_since(self, mark: int, limit: int) -> list[int]:
        return self.reads.marks_since(mark, limit)

    def raw_bodies(self, marks: list[int]) -> dict[int, bytes]:
        return self.reads.raw_bodies(marks)
