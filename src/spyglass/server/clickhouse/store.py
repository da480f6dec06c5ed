"""The banner store on ClickHouse (see :mod:`spyglass.server.banners.store`), on one server or a
sharded cluster: ``clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?cluster=NAME&http_port=N]``.

Queries go over the native protocol (PORT, 9000 by default; clickhouse-driver); banners are
inserted over the HTTP interface (``http_port``, 8123 by default) as RowBinary rows made in the
import's worker processes (tables.py), which the server parses: the writer only joins bytes.

Writers: any number at once, on any machines (``spyglass import`` on several, the backends'
collectors). Each adds a batch after looking up what the store holds of the batch's services: the
banners it already has (skipped) and each service's current banner (which a newer one demotes);
a writer that found the store empty looks nothing up. What it cannot see is another writer adding
banners of the same services at the same moment (two importers started together on an empty
store: for their whole length), so when it ends it *reconciles* the services it touched, with two
queries that find only what a race left behind: services with more than one banner not demoted
(all but the newest are demoted) and banners stored twice (the later copies deleted, by mark).
Alone, a writer's queries find nothing; the current banner is the newest by (time, key), an order
of the banners themselves (not of who added them when), so every writer's view agrees with it and
two reconciliations never undo each other. A writer inserts its demotions after its rows, so a
service never has no current banner.

A search reads the current rows (tables.py) in two queries run side by side: the total with every
facet in one pass, and the page's marks, whose bodies a third query then reads by the bodies'
index; each query costs the server several ms however small, so they are few.

Marks are the writer's clock in nanoseconds, rising within a writer, each writer's ending in a tag
of its own (the low MARK_TAGS bits) so that two writers never give one mark: the bulk-data
builder's "added since" is exact with one writer and may miss a banner that another writer
inserted slower than a later one (its mark is then older than what the builder has seen).
"""

from __future__ import annotations

import base64
import gc
import http.client
import itertools
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from spyglass.exactjson import loads
from spyglass.query import Facet, Filter, Query
from spyglass.server.banners.fields import FACET_FIELDS
from spyglass.server.banners.keys import service_key_of
from spyglass.server.banners.store import FacetCounts, Prepared, StoreUnavailable, Trends
from spyglass.server.banners.trends import months
from spyglass.server.clickhouse import tables
from spyglass.server.clickhouse.compiler import TEXT_INDEX_SINCE, Sql, column, current, ip16, scalar, where

PAGE_SIZE = 100
FLUSH_ROWS = 50_000  # banners a writer holds before inserting them (big blocks: few parts to merge)
LOOKUP_CHUNK = 10_000  # values in one IN (...) of a lookup, at most
# A statement's text is bounded by the server's max_query_size (256 KiB in a stock profile), and the
# driver writes the parameters into it: a lookup's list is cut to fit. Bytes a value takes there, at
# most: a 64-bit number and ", "; an address's 32 hex digits, quoted; the rest of a statement.
NUMBER_TEXT, ADDRESS_TEXT, STATEMENT_TEXT = 22, 36, 8192
STOCK_MAX_QUERY_SIZE = 262_144
ADDED_WINDOW = 200_000  # marks the bulk-data builder is handed from one query (added_since)
# Rows at these addresses (a parameter ``ips``: their 16 bytes in hex): in a subquery, which 18.16
# turns into a set that its primary key index is searched with.
AT_ADDRESSES = "ip IN (SELECT toFixedString(unhex(arrayJoin(%(ips)s)), 16))"
# A query reads in as many streams as max_threads allows from this many rows up: the default,
# 163,840, left a search of the current rows of a large store, or a page's 100 bodies, to one
# core.
CONCURRENT_READ_ROWS = 2048
QUERIES_AT_ONCE = 8  # queries run side by side (a search's two, of several requests), each on its own connection
IN_COLLECTED_ORDER = 2000  # banners a flush keeps in the order they were added (a collector's batch)
MARK_TAGS = 1 << 12  # a mark's low 12 bits are its writer's tag: a writer's marks step by this
_TAGS = itertools.count(random.randrange(MARK_TAGS))  # stores of one process: tags one after another
REPAIR_ROWS = 5_000_000  # current rows a repair checks banners against at once (a set of 16 B each in the server)
MUTATION_WAIT = 600.0  # seconds a reconciliation waits for the server to delete copies


class StoreURLError(ValueError):
    """A ``clickhouse://`` address that cannot be used."""


def parse_url(url: str) -> dict[str, Any]:
    """Connection settings of a ``clickhouse://`` address; StoreURLError says what is wrong."""
    parts = urlsplit(url)
    if parts.scheme != "clickhouse":
        raise StoreURLError(f"not a clickhouse:// address: {shown(url)!r}")
    database = parts.path.strip("/")
    if not database or not database.replace("_", "").isalnum() or database[0].isdigit():
        raise StoreURLError("the address names no database (clickhouse://HOST:PORT/DATABASE; letters, digits, _)")
    query = parse_qs(parts.query)
    cluster = query.get("cluster", [""])[0]
    if cluster and not cluster.replace("_", "").replace("-", "").isalnum():
        raise StoreURLError(f"not a cluster name: {cluster!r}")
    try:
        port = parts.port or 9000
    except ValueError as exc:
        raise StoreURLError(f"bad port in {shown(url)!r}") from exc
    http_port = query.get("http_port", ["8123"])[0]
    if not http_port.isdigit() or not 0 < int(http_port) < 65536:
        raise StoreURLError(f"not a port: http_port={http_port!r}")
    return {
        "host": parts.hostname or "127.0.0.1",
        "port": port,
        "http_port": int(http_port),
        "user": unquote(parts.username or "default"),
        "password": unquote(parts.password or ""),
        "database": database,
        "cluster": cluster,
    }


def shown(url: str) -> str:
    """An address as it may be shown: without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)).geturl()


def server_version(client) -> tuple[int, ...]:
    """The version of the server ``client`` reaches, as numbers (``26.9.2.1``: (26, 9, 2, 1))."""
    text = client.execute("SELECT version()")[0][0]
    return tuple(int(part) for part in text.split(".") if part.isdigit())


class Where(NamedTuple):
    """Which rows a query reads: those of ``table`` matching ``condition``, then ``costly`` (the
    regular expressions: compiler.Condition) and, unless it is empty, ``current`` (the latest of
    their service), with the conditions' parameters."""

    condition: str
    current: str
    params: dict
    table: str = "banners"
    costly: str = "1"

    @property
    def checks(self) -> str:
        """What is asked of the rows ``condition`` let through ('' if nothing)."""
        return " AND ".join(part for part in (self.costly, self.current) if part and part != "1")

    @property
    def clauses(self) -> str:
        """PREWHERE the condition, WHERE the checks: 18.16 evaluates every part of a condition
        for every row it reads, so the regular expressions and the Set are asked only of the rows
        that the rest let through."""
        if not self.checks:
            return f"WHERE {self.condition}"
        if self.condition == "1":
            return f"WHERE {self.checks}"
        return f"PREWHERE {self.condition} WHERE {self.checks}"


class ClickHouseStore:
    """The banner store on ClickHouse; creates its database and tables when they are missing."""

    prepare = staticmethod(tables.prepare)

    def __init__(self, url: str, init: bool = True) -> None:
        self.url = url
        self.settings = parse_url(url)
        self.database = self.settings["database"]
        self.cluster = self.settings["cluster"]
        self.demoted = f"{self.database}.demoted"  # the Set of replaced banners' keys (tables.py)
        self._local = threading.local()
        self._clients: list = []
        self._clients_lock = threading.Lock()
        self._last_mark = 0
        self._tag = next(_TAGS) % MARK_TAGS
        self._mark_lock = threading.Lock()
        self._span: tuple[int, tuple[int, int] | None] | None = None
        self._pool = ThreadPoolExecutor(QUERIES_AT_ONCE, thread_name_prefix="clickhouse")
        self.tokens = False  # every server has text indexes: free text reads the one on its words (init)
        self.max_query_size = STOCK_MAX_QUERY_SIZE  # the smallest of the servers' (init)
        if init:
            self.init()

    # -- connections ---------------------------------------------------------------------------
    def connect(self, host: str | None = None, port: int | None = None, database: str | None = None):
        from clickhouse_driver import Client

        settings: dict[str, Any] = {"merge_tree_min_rows_for_concurrent_read": CONCURRENT_READ_ROWS}
        if self.cluster:
            settings["insert_distributed_sync"] = 1
        return Client(
            host or self.settings["host"],
            port=port or self.settings["port"],
            user=self.settings["user"],
            password=self.settings["password"],
            database=database or self.database,
            settings=settings,
            connect_timeout=5,
            send_receive_timeout=300,
        )

    @property
    def client(self):
        """This thread's connection (a driver client is for one thread at a time)."""
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self.connect()
            with self._clients_lock:
                self._clients.append(client)
        return client

    def execute(self, sql: str, params: dict | list | None = None, raw: bool = False, columnar: bool = False) -> list:
        """Rows of ``sql`` with its parameters (or an INSERT's rows); ``raw``: strings as the bytes
        they are. StoreUnavailable when the server fails it (its reason, without the stack trace)."""
        from clickhouse_driver.errors import Error

        try:
            return self.client.execute(
                sql, params, settings={"strings_as_bytes": True} if raw else None, columnar=columnar
            )
        except Error as exc:
            self._local.client.disconnect()  # a connection that failed part way starts afresh
            reason = " ".join(str(exc).split("Stack trace:")[0].split())
            raise StoreUnavailable(f"the banner store at {shown(self.url)} failed: {reason}") from exc

    def close(self) -> None:
        self._pool.shutdown()
        with self._clients_lock:
            for client in self._clients:
                client.disconnect()
            self._clients.clear()
        self._local = threading.local()

    # -- tables --------------------------------------------------------------------------------
    def shards(self) -> list[tuple[str, int]]:
        """(host, port) of each shard of the cluster (from system.clusters)."""
        rows = self.connect(database="system").execute(
            "SELECT host_address, port FROM system.clusters WHERE cluster = %(c)s ORDER BY shard_num, replica_num",
            {"c": self.cluster},
        )
        if not rows:
            raise StoreURLError(f"the server knows no cluster {self.cluster!r} (system.clusters)")
        return [(host, int(port)) for host, port in rows]

    def servers(self) -> list[tuple[str, int]]:
        """(host, port) of every server that holds local tables: the shards, or the one server."""
        return self.shards() if self.cluster else [(self.settings["host"], self.settings["port"])]

    def init(self, upgrading: bool = False) -> None:
        """Create the database and tables where missing: on one server, or the local tables on
        every shard and the Distributed tables on each (any shard can then take queries).
        StoreUnavailable if tables there are an earlier version's, or those an upgrade is copying
        from, unless ``upgrading`` (``spyglass store init`` upgrades them: upgrade.py). Where
        every server has text indexes, the free text gets one (tables.INDEXED)."""
        clients = [self.connect(host, port, database="system") for host, port in self.servers()]
        try:
            self.tokens = all(server_version(client) >= TEXT_INDEX_SINCE for client in clients)
            self.max_query_size = min(
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
        indexed = tables.text_indexed(client, self.database) if self.tokens else set()
        for table in tables.ENGINES:
            name = tables.local_name(table, self.cluster)
            client.execute(tables.create_local(self.database, table, self.cluster, self.tokens))
            if self.tokens and table in tables.INDEXED and name in found and name not in indexed:
                client.execute(tables.add_text_index(self.database, table, self.cluster))  # made on an older server
            if self.cluster:
                client.execute(tables.create_distributed(self.database, table, self.cluster))
        current_rows, banners = (tables.local_name(t, self.cluster) for t in ("current", "banners"))
        if not upgrading and current_rows not in found and banners in found:
            self._fill_current(client)  # a store made before the table was

    def _fill_current(self, client, condition: str = "1", params: dict | None = None) -> None:
        """On the server of ``client``: a row in ``current`` for each banner matching ``condition``
        (of the columns both tables have) that is not demoted and has none (a store made before
        the table; a writer stopped between its inserts: repair). A shard holds a banner's row."""
        rows, banners = (tables.local_name(t, self.cluster) for t in ("current", "banners"))
        names = ", ".join(tables.NAMES)
        client.execute(
            f"INSERT INTO {self.database}.{rows} ({names}, sign) SELECT {names}, toInt8(1) "
            f"FROM {self.database}.{banners} WHERE {condition} AND {current(self.demoted)} "
            f"AND (key, mark) NOT IN (SELECT key, mark FROM {self.database}.{rows} WHERE sign = 1 AND {condition})",
            params,
        )

    # -- notes ---------------------------------------------------------------------------------
    def get_meta(self, name: str, default: str | None = None) -> str | None:
        rows = self.execute("SELECT argMax(value, at), count() FROM meta WHERE name = %(n)s", {"n": name})
        return rows[0][0] if rows and rows[0][1] else default

    def set_meta(self, name: str, value: str) -> None:
        self.execute("INSERT INTO meta (name, value, at) VALUES", [(name, value, time.time_ns())])

    # -- writing -------------------------------------------------------------------------------
    def next_marks(self, n: int) -> range:
        """``n`` new marks: this writer's clock, always past its last mark, ending in its tag."""
        with self._mark_lock:
            now = time.time_ns() // MARK_TAGS * MARK_TAGS + self._tag
            first = max(now, self._last_mark + MARK_TAGS)
            self._last_mark = first + (n - 1) * MARK_TAGS
        return range(first, first + n * MARK_TAGS, MARK_TAGS)

    @contextmanager
    def writing(self):
        """A writer; what it added is inserted when the block ends, also when it ends by an error
        (and every FLUSH_ROWS banners as it goes)."""
        writer = Writer(self)
        try:
            yield writer
        finally:
            writer.close()

    def insert(self, table: str, columns: list[str], rows: bytes) -> None:
        """Insert RowBinary ``rows`` over the HTTP interface (the server parses them: the native
        protocol would have the driver build its columns in Python); StoreUnavailable if it fails."""
        settings = self.settings
        query = {"database": self.database, "query": f"INSERT INTO {table} ({', '.join(columns)}) FORMAT RowBinary"}
        if self.cluster:
            query["insert_distributed_sync"] = "1"
        login = base64.b64encode(f"{settings['user']}:{settings['password']}".encode()).decode()
        connection = http.client.HTTPConnection(settings["host"], settings["http_port"], timeout=300)
        try:
            connection.request("POST", "/?" + urlencode(query), rows, {"Authorization": f"Basic {login}"})
            response = connection.getresponse()
            answer = response.read()
        except OSError as exc:
            raise StoreUnavailable(
                f"the banner store at {shown(self.url)} cannot be reached over HTTP (http_port "
                f"{settings['http_port']}): {exc}"
            ) from exc
        finally:
            connection.close()
        if response.status != 200:
            reason = " ".join(answer.decode(errors="replace").split("Stack trace:")[0].split())[:500]
            raise StoreUnavailable(f"the banner store at {shown(self.url)} failed: {reason}")

    def lookup_chunk(self, per_value: int) -> int:
        """Values one statement may list, ``per_value`` bytes of text each (NUMBER_TEXT...)."""
        return max(1, min(LOOKUP_CHUNK, (self.max_query_size - STATEMENT_TEXT) // per_value))

    def known_services(self, services: list[int]) -> set[int]:
        found: set[int] = set()
        step = self.lookup_chunk(NUMBER_TEXT)
        for i in range(0, len(services), step):
            chunk = services[i : i + step]
            found.update(
                r[0]
                for r in self.execute(
                    "SELECT DISTINCT service FROM banners WHERE service IN %(s)s", {"s": tuple(chunk)}
                )
            )
        return found

    def history_of(self, services: dict[int, bytes], live: bool = False) -> list[tuple[int, int, int, int]]:
        """(service, key, t, mark) of every banner of these services, given with their addresses
        (``live``: those not demoted). The addresses are the table's order: ClickHouse reads the
        granules that hold them, not the whole service column (a collector's batch of a few
        services in a store of billions)."""
        rows: list = []
        alive = f" AND {current(self.demoted)}" if live else ""
        named = list(services.items())
        step = self.lookup_chunk(NUMBER_TEXT + ADDRESS_TEXT)
        for i in range(0, len(named), step):
            chunk = named[i : i + step]
            rows += self.execute(
                f"SELECT service, key, t, mark FROM banners WHERE {AT_ADDRESSES} AND service IN %(s)s{alive}",
                {"s": tuple(s for s, _ in chunk), "ips": sorted({ip.hex() for _, ip in chunk})},
            )
        return rows

    # -- reconciling ---------------------------------------------------------------------------
    def reconcile(self, touched: Where) -> tuple[int, int]:
        """Put right what racing writers left in the services ``touched`` selects: of each, every
        banner but the newest by (t, key) demoted, and of a banner stored more than once every
        copy but the first (by mark) deleted. Two GROUP BYs with a counter a group (no arrays:
        one writer's whole import may be millions of services), which alone find nothing.
        (demoted, deleted)."""
        raced = dict(
            self.execute(
                f"SELECT service, any(ip) FROM banners {touched.clauses} GROUP BY service "
                f"HAVING countIf({current(self.demoted)}) > 1",
                touched.params,
                raw=True,
            )
        )
        newest: dict[int, tuple[int, int]] = {}
        live = self.history_of(raced, live=True)
        for service, key, t, _ in live:
            newest[service] = max(newest.get(service, (t, key)), (t, key))
        demote = sorted({(service, key, mark) for service, key, t, mark in live if newest[service] != (t, key)})
        keys = sorted({key for _, key, _ in demote})
        if demote:
            self.insert(tables.written_name("demoted", self.cluster), ["key"], tables.key_rows(keys))
            self.insert("current", tables.CANCEL_COLUMNS, tables.cancel_rows(demote))
        copies = [
            mark
            for (marks,) in self.execute(
                f"SELECT groupArray(mark) FROM banners {touched.clauses} GROUP BY key HAVING count() > 1",
                touched.params,
            )
            for mark in sorted(set(marks))[1:]  # one row twice under one mark is never ours: left alone
        ]
        if copies:
            self.delete_marks(copies)
        return len(keys), len(copies)

    def repair(self) -> tuple[int, int]:
        """After writers stopped part way (killed, or the server gone between their inserts): what
        a writer's end does for the services it touched, for every service, and the current rows
        that current banners lack. The rows are looked for a slice of keys at a time, so that the
        set of current rows each slice is checked against stays within REPAIR_ROWS.
        (demoted, deleted)."""
        said = self.reconcile(Where("1", "", {}))
        rows = self.execute("SELECT count() FROM current WHERE sign = 1")[0][0]
        slices = 1 + rows // REPAIR_ROWS
        for host, port in self.servers():
            client = self.connect(host, port)
            try:
                for i in range(slices):
                    self._fill_current(client, "modulo(key, %(n)s) = %(i)s", {"n": slices, "i": i})
            finally:
                client.disconnect()
        return said

    def delete_marks(self, marks: list[int]) -> None:
        """Delete the rows and bodies of these marks on every server, and wait until they are gone:
        one mutation a table however many they are (two importers of one file: every banner), its
        marks in a table of their own made for it (18.16 reads no Set in a mutation; a list in the
        SQL is bounded by max_query_size). 18.16 runs a mutation in the background and has no
        setting to wait for it: the mutations made since are watched."""
        helper = f"{self.database}.deleting_{self._tag}_{time.time_ns()}"
        for host, port in self.servers():
            client = self.connect(host, port)
            try:
                since = client.execute("SELECT now()")[0][0]  # the server's clock: which mutations are ours, or later
                client.execute(f"CREATE TABLE {helper} (mark UInt64) ENGINE = MergeTree() ORDER BY mark")
                client.execute(f"INSERT INTO {helper} (mark) VALUES", [(mark,) for mark in marks])
                for table in ("banners", "current", "bodies"):
                    client.execute(
                        f"ALTER TABLE {tables.local_name(table, self.cluster)} DELETE WHERE mark IN "
                        f"(SELECT mark FROM {helper})"
                    )
                deadline = time.monotonic() + MUTATION_WAIT
                while client.execute(
                    "SELECT count() FROM system.mutations "
                    "WHERE database = %(d)s AND create_time >= %(t)s AND NOT is_done",
                    {"d": self.database, "t": since},
                )[0][0]:
                    if time.monotonic() > deadline:  # the helper stays: the mutation still reads it
                        raise StoreUnavailable(
                            f"the banner store at {shown(self.url)} did not delete {len(marks):,} banners stored "
                            f"twice within {MUTATION_WAIT:.0f} s (system.mutations on {host}:{port})"
                        )
                    time.sleep(0.05)
                client.execute(f"DROP TABLE {helper}")
            finally:
                client.disconnect()

    # -- reading -------------------------------------------------------------------------------
    def _where(self, query: Query, history: bool = False) -> Where:
        sql = Sql()
        condition = where(sql, query, self.tokens)
        if history or any(f.name == "scan" and not f.negated for f in query.filters):
            return Where(condition.cheap, "", sql.params, costly=condition.costly)
        return self._current(condition.cheap, sql.params, condition.costly)

    def _current(self, condition: str, params: dict, costly: str = "1") -> Where:
        """The current banners matching ``condition`` and ``costly``: rows of ``current``
        (tables.py) of sign 1 that no banner replaced since."""
        return Where(condition, f"sign = 1 AND {current(self.demoted)}", params, "current", costly)

    def total(self) -> int:
        return self.execute("SELECT count() FROM banners")[0][0]

    def count(self, query: Query, facets: list[Facet]) -> tuple[int, FacetCounts]:
        total, _, counts = self._answer(query, facets, None)
        return total, counts

    def search(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[dict], FacetCounts]:
        total, bodies, counts = self.search_bodies(query, facets, page)
        return total, [loads(b) for b in bodies], counts

    def search_bodies(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[bytes], FacetCounts]:
        return self._answer(query, facets, page)

    def _answer(self, query: Query, facets: list[Facet], page: int | None) -> tuple[int, list[bytes], FacetCounts]:
        """The total, a page of bodies (none without ``page``) and the facets: one query for the
        total and the facets, one for the page's bodies, side by side (each on a connection of its
        own: the server runs them at once)."""
        matching = self._where(query)
        jobs: list[Callable[[], Any]] = [partial(self._counted, matching, facets)]
        if page is not None:
            jobs.append(partial(self._newest, matching, PAGE_SIZE, (max(page, 1) - 1) * PAGE_SIZE))
        done = list(self._pool.map(lambda job: job(), jobs)) if len(jobs) > 1 else [jobs[0]()]
        (total, counts), bodies = done[0], done[1] if page is not None else []
        return total, bodies, counts

    def _newest(self, matching: Where, limit: int, offset: int = 0) -> list[bytes]:
        """The bodies of the newest matches, newest first: their marks, then the bodies of those
        marks, named in the query so that the server finds them by the table's index (18.16 reads
        none for a subquery's set: it read the whole mark column)."""
        marks = self.execute(
            f"SELECT mark FROM {matching.table} {matching.clauses} "
            f"ORDER BY t DESC, mark DESC LIMIT {int(offset)}, {int(limit)}",
            matching.params,
        )
        bodies = self.raw_bodies([mark for (mark,) in marks])
        return [bodies[mark] for (mark,) in marks if mark in bodies]

    def _counted(self, matching: Where, facets: list[Facet]) -> tuple[int, FacetCounts]:
        """How many rows match, and the facets over them."""
        if not facets:
            return self.execute(f"SELECT count() FROM {matching.table} {matching.clauses}", matching.params)[0][0], {}
        total = 0
        counted: list[list[dict]] = [[] for _ in facets]
        for _, facet, value, n in self._facet_rows(matching, facets, by_month=False):
            if facet == 0:
                total = n
            else:
                counted[facet - 1].append({"count": n, "value": value})
        return total, {f.name: counts[: f.size] for f, counts in zip(facets, counted, strict=True)}

    def _facet_rows(self, matching: Where, facets: list[Facet], by_month: bool) -> list:
        """``(month, facet, value, count)`` of every facet's largest values (``facet``: its place
        in ``facets`` from 1; 0 is the number of matching rows, value ''), per month or over all
        (month 0), in one pass: each row's facet values are made keys, the facet's place in
        digits of one width before the value, that one GROUP BY counts. 18.16 groups a month and
        a string by a faster method than (facet, value, number) tuples (the bench's trends, by
        hand). The condition is PREWHERE, and the checks
        (Where.checks) choose between a row's keys and none, so that each is asked once a row (a
        WHERE would ask it of every key) and each shard still counts its own rows."""
        width = len(str(len(facets)))
        keys = [f"['{0:0{width}d}']"]
        month = "month" if by_month else "toUInt32(0)"
        numbers = []  # facet i's values as numbers: ties in that order, as the embedded store's
        for i, facet in enumerate(facets, start=1):
            field_name = FACET_FIELDS[facet.name]
            col = column(field_name)
            key = f"concat('{i:0{width}d}', "
            if col == "port":
                keys.append(f"[{key}toString(port))]")
                numbers.append(f"f = {i}, toInt64OrZero(v)")
            elif field_name.startswith("b_"):
                if scalar(field_name):
                    keys.append(f"[{key}if({col}, 'true', 'false'))]")
                else:
                    keys.append(f"arrayMap(x -> {key}if(x, 'true', 'false')), {col})")
                numbers.append(f"f = {i}, toInt64(v = 'true')")
            elif field_name.startswith("i_"):
                keys.append(f"arrayMap(x -> {key}toString(x)), {col})")
                numbers.append(f"f = {i}, toInt64OrZero(v)")
            elif scalar(field_name):  # the empty string: none
                keys.append(f"if({col} = '', emptyArrayString(), [{key}{col})])")
            else:
                keys.append(f"arrayMap(x -> {key}x), {col})")
        every = f"arrayConcat({', '.join(keys)})"
        if matching.checks:
            every = f"if({matching.checks}, {every}, emptyArrayString())"
        number = f"multiIf({', '.join(numbers)}, toInt64(0))" if numbers else "toInt64(0)"
        size = max((int(f.size) for f in facets), default=1)
        prewhere = f" PREWHERE {matching.condition}" if matching.condition != "1" else ""
        return self.execute(
            f"SELECT m, toUInt16(substring(k, 1, {width})) AS f, substring(k, {width + 1}) AS v, n "
            f"FROM (SELECT {month} AS m, k, count() AS n FROM {matching.table} "
            f"ARRAY JOIN {every} AS k{prewhere} GROUP BY m, k) "
            f"ORDER BY m, f, n DESC, {number}, v LIMIT {size} BY m, f",
            matching.params,
        )

    def host(self, ip: str) -> list[dict]:
        import ipaddress

        try:
            address = ip16(ipaddress.ip_address(ip))
        except ValueError:
            return []
        return [loads(b) for b in self._newest(Where("ip = unhex(%(ip)s)", "", {"ip": address.hex()}), 10_000)]

    def current(self, ip: str, port: int, transport: str) -> dict | None:
        service = {"s": service_key_of(ip, port, transport)}
        found = self._newest(self._current("service = %(s)s", service), 1)
        return loads(found[0]) if found else None

    def under_domain(self, domain: str, history: bool, limit: int) -> list[dict]:
        query = Query(f"hostname:{domain}", [Filter("hostname", (domain,))])
        return [loads(b) for b in self._newest(self._where(query, history), limit)]

    def span(self) -> tuple[int, int] | None:
        """The first and last months (YYYYMM) of the whole store; None when it is empty. Cached
        while the count of banners holds: banners are only added, and a copy is deleted only of a
        banner kept, so the months change only when the count does (a count reads the narrowest
        column; the months read every banner's, a good part of a trends request)."""
        n = self.execute("SELECT count() FROM banners")[0][0]
        if self._span is None or self._span[0] != n:
            first, last = self.execute("SELECT min(month), max(month) FROM banners")[0] if n else (0, 0)
            self._span = (n, (first, last) if n else None)
        return self._span[1]

    def trends(self, query: Query, facets: list[Facet]) -> Trends:
        span, rows = self._pool.map(
            lambda job: job(), [self.span, partial(self._facet_rows, self._where(query, history=True), facets, True)]
        )
        if span is None:
            return Trends(0, [], {f.name: [] for f in facets})
        calendar = [
            (key, int(key.replace("-", ""))) for key, _, _ in months(*(datetime(m // 100, m % 100, 1) for m in span))
        ]
        counts: dict[int, int] = {}
        values: list[dict[int, list[dict]]] = [{} for _ in facets]
        for month, facet, value, n in rows:
            if facet == 0:
                counts[month] = n
            elif len(got := values[facet - 1].setdefault(month, [])) < facets[facet - 1].size:
                got.append({"count": n, "value": value})
        matches = [{"month": key, "count": counts.get(month, 0)} for key, month in calendar]
        out = {
            facet.name: [{"key": key, "values": by_month.get(month, [])} for key, month in calendar]
            for facet, by_month in zip(facets, values, strict=True)
        }
        return Trends(sum(counts.get(month, 0) for _, month in calendar), matches, out)

    # -- the bulk-data builder -----------------------------------------------------------------
    def last_mark(self) -> int:
        return self.execute("SELECT max(mark) FROM bodies")[0][0] or 0

    def added_since(self, mark: int, batch: int) -> Iterator[list[tuple[int, str]]]:
        """From ``banners``, whose rows are inserted after their bodies (each banner's body is
        there), ADDED_WINDOW at a time: the table is in address order, so each query reads its
        whole mark column; still far faster, by hand, than 2,000 at a time from ``bodies``."""
        last = mark
        while True:
            rows = self.execute(
                f"SELECT mark, t FROM banners WHERE mark > %(m)s ORDER BY mark LIMIT {ADDED_WINDOW}", {"m": last}
            )
            if not rows:
                return
            for i in range(0, len(rows), batch):
                yield [(m, tables.stamp_of(t)) for m, t in rows[i : i + batch]]
            last = rows[-1][0]

    def marks_since(self, mark: int, limit: int) -> list[int]:
        """From ``bodies``, in mark order: a range of its primary key, however large the store."""
        rows = self.execute(f"SELECT mark FROM bodies WHERE mark > %(m)s ORDER BY mark LIMIT {int(limit)}", {"m": mark})
        return [m for (m,) in rows]

    def raw_bodies(self, marks: list[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        step = self.lookup_chunk(NUMBER_TEXT)
        for i in range(0, len(marks), step):
            chunk = marks[i : i + step]
            if chunk:
                out.update(
                    self.execute("SELECT mark, body FROM bodies WHERE mark IN %(m)s", {"m": tuple(chunk)}, raw=True)
                )
        return out


@contextmanager
def paused_gc():
    """The cyclic garbage collector off for a moment: held banners are many small tuples (no
    cycles), which it would otherwise walk over and over as they pile up."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Writer:
    """Adds banners: looks up what the store holds of their services, keeps the new ones, and
    inserts them (bodies, the rows: a banner is findable once its body is there; then demotions).
    Inserts run in a thread of their own while the next banners are held, one at a time, in order.
    At its end it reconciles the services it touched (the module's docstring says why)."""

    def __init__(self, store: ClickHouseStore) -> None:
        self.store = store
        self.held: list[tuple[Prepared, int]] = []  # with its mark
        self.demoted: list[tuple[int, int, int]] = []  # (service, key, mark) of the banners it replaced
        self.keys: set[int] = set()  # of the banners this writer holds or added
        self.latest: dict[int, tuple[int, int, int]] = {}  # service -> (t, key, mark) of its current banner
        self.addresses: set[bytes] | None = set()  # of the banners it added, while they are few
        self.marks: tuple[int, int] | None = None  # the first and last marks of what it added
        self.kept = False  # whether it keeps the marks it was given, and their order
        self.fresh = store.total() == 0  # nothing stored before: no service to look up
        self._sender = ThreadPoolExecutor(1, thread_name_prefix="clickhouse-insert")
        self._sending: Future | None = None

    def add(self, prepared: list[Prepared], marks: Sequence[int] | None = None) -> list[int]:
        """Hold the banners not stored yet (inserted at the end of the block); their keys.
        ``marks``: theirs, to keep (an upgrade's copy, upgrade.py): then stored in that order."""
        if not self.fresh:
            latest = self.latest
            wanted = {p.service: tables.ip_in(p.doc) for p in prepared if p.service not in latest}
            for service, key, t, mark in self.store.history_of(wanted):
                self.keys.add(key)
                best = latest.get(service)
                if best is None or (t, key) > best[:2]:
                    latest[service] = (t, key, mark)
        if marks is None:
            marks = self.store.next_marks(len(prepared))
        else:
            self.kept = True
        if self.addresses is not None:
            self.addresses.update(tables.ip_in(p.doc) for p in prepared)
            if len(self.addresses) > LOOKUP_CHUNK:
                self.addresses = None  # the services are more: they are reconciled by their marks
        added: list[int] = []
        with paused_gc():
            self._hold(prepared, marks, added)
        if added:
            lo, hi = (marks[0], marks[-1]) if isinstance(marks, range) else (min(marks), max(marks))
            self.marks = (min(lo, self.marks[0]), max(hi, self.marks[1])) if self.marks else (lo, hi)
        if len(self.held) >= FLUSH_ROWS:
            self.flush()
        return added

    def _hold(self, prepared: list[Prepared], marks: Sequence[int], added: list[int]) -> None:
        keys, latest, demoted, held = self.keys, self.latest, self.demoted, self.held
        for mark, p in zip(marks, prepared, strict=True):
            if p.key in keys:
                continue
            keys.add(p.key)
            new = (tables.time_in(p.doc), p.key, mark)  # its mark for now: flush gives the one it is stored under
            old = latest.get(p.service)
            if old is None or new > old:
                if old is not None:
                    demoted.append((p.service, old[1], old[2]))
                latest[p.service] = new
            else:
                demoted.append((p.service, p.key, mark))
            held.append((p, mark))
            added.append(p.key)

    def flush(self) -> None:
        """Send what is held (after what was sent before), its marks given anew in the order of
        tables.alike: bodies are stored in mark order, and alike banners side by side compress
        better (unless it keeps the marks it was given, or holds a few: a collector's batch keeps
        the order it was collected in, which backends following the store stream in mark order)."""
        marks = [mark for _, mark in self.held]
        alike = [p for p, _ in self.held]
        if not self.kept and len(alike) > IN_COLLECTED_ORDER:
            alike.sort(key=lambda p: tables.alike(p.doc))
        replaced = {key for _, key, _ in self.demoted}
        with paused_gc():
            bodies = b"".join([tables.body_row(mark, p.body) for p, mark in zip(alike, marks, strict=True)])
            rows = b"".join([tables.banner_row(p.doc, mark) for p, mark in zip(alike, marks, strict=True)])
            current = b"".join(
                [tables.current_row(p.doc, mark) for p, mark in zip(alike, marks, strict=True) if p.key not in replaced]
            )
            latest = self.latest
            for p, mark in zip(alike, marks, strict=True):  # the marks the current rows are stored under
                best = latest.get(p.service)
                if best is not None and best[1] == p.key:
                    latest[p.service] = (best[0], p.key, mark)
        # a banner held and replaced at once has no row in current to cancel
        held = {p.key for p in alike}
        cancels = tables.cancel_rows([row for row in self.demoted if row[1] not in held])
        demoted = tables.key_rows([key for _, key, _ in self.demoted])
        self.held, self.demoted = [], []
        self.wait()
        self._sending = self._sender.submit(self._insert, Batch(bodies, rows, current, demoted, cancels))

    def wait(self) -> None:
        """Until what was sent is stored; the store's error if it was not."""
        sending, self._sending = self._sending, None
        if sending is not None:
            sending.result()

    def close(self) -> None:
        try:
            self.flush()
            self.wait()
            if self.marks:
                self.reconcile()
        finally:
            self._sender.shutdown()

    def reconcile(self) -> None:
        """Reconcile the services it added banners of: all there are, when it found the store
        empty (each came while it wrote: no set of them to build); named, when they are few; else
        those of the banners marked while it wrote (its own among them)."""
        if self.fresh:
            self.store.reconcile(Where("1", "", {}))
        elif self.addresses is not None and max(len(self.latest), len(self.addresses)) <= self.store.lookup_chunk(
            NUMBER_TEXT + ADDRESS_TEXT
        ):
            named = {"s": tuple(self.latest), "ips": sorted(ip.hex() for ip in self.addresses)}
            self.store.reconcile(Where(f"{AT_ADDRESSES} AND service IN %(s)s", "", named))
        else:
            assert self.marks is not None
            self.store.reconcile(
                Where(
                    "service GLOBAL IN (SELECT service FROM banners WHERE mark >= %(lo)s AND mark <= %(hi)s)",
                    "",
                    {"lo": self.marks[0], "hi": self.marks[1]},
                )
            )

    def _insert(self, batch: Batch) -> None:
        insert = self.store.insert
        if batch.bodies:
            insert("bodies", tables.BODY_COLUMNS, batch.bodies)
        if batch.rows:
            insert("banners", tables.NAMES, batch.rows)
        if batch.current:
            insert("current", tables.CURRENT_COLUMNS, batch.current)
        if batch.demoted:  # after the rows that demote them: a service is never without a current banner
            insert(tables.written_name("demoted", self.store.cluster), ["key"], batch.demoted)
        if batch.cancels:  # after the rows they cancel: a merge drops a pair whose -1 comes last
            insert("current", tables.CANCEL_COLUMNS, batch.cancels)


class Batch(NamedTuple):
    """What a writer's flush inserts, as RowBinary rows of each table, in the order inserted."""

    bodies: bytes
    rows: bytes  # of banners
    current: bytes
    demoted: bytes
    cancels: bytes  # of current
