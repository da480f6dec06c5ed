"""The ClickHouse store's way to its servers: the address, a native-protocol client per thread
(clickhouse-driver) for queries, and the HTTP interface for RowBinary inserts.

``clickhouse://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?cluster=NAME&http_port=N]``: queries go to
PORT (9000 by default), inserts to ``http_port`` (8123 by default), which parses the rows itself
(the native protocol would have the driver build their columns in Python).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import httpx

from spyglass.server.banners.store import BANNERS, StoreUnavailable

# The driver logs each failed connection with its traceback (15 lines a try, a server's log filled
# during an outage, a CLI's screen before its one line): every failure reaches the caller as
# StoreUnavailable, which says it once, so only the driver's errors are kept.
logging.getLogger("clickhouse_driver").setLevel(logging.ERROR)

LOOKUP_CHUNK = 10_000  # values in one IN (...) of a lookup, at most
# A statement's text is bounded by the server's max_query_size (256 KiB in a stock profile), and the
# driver writes the parameters into it: a lookup's list is cut to fit. Bytes a value takes there, at
# most: a 64-bit number and ", "; an address's 32 hex digits, quoted; the rest of a statement.
NUMBER_TEXT, ADDRESS_TEXT, STATEMENT_TEXT = 22, 36, 8192
STOCK_MAX_QUERY_SIZE = 262_144
# A query reads in as many streams as max_threads allows from this many rows up: the default,
# 163,840, left a search of the 276k current rows at 10M banners, or a page's 100 bodies, to one
# core.
CONCURRENT_READ_ROWS = 2048
SEND_SLICE = 1 << 20  # bytes of an insert's body handed to the HTTP client at a time
INSERT_TIMEOUT = 300.0  # seconds an insert over HTTP may take (a flush of FLUSH_ROWS banners)


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


def _reason(text: str) -> str:
    """A server's error as one line, without its stack trace."""
    return " ".join(text.split("Stack trace:")[0].split())


def _slices(data: bytes) -> Iterator[bytes]:
    """``data`` in SEND_SLICE pieces. Given one bytes body, httpcore copies what is left of it
    after each socket send: over a flush's megabytes, a cost that grows with their square."""
    for start in range(0, len(data), SEND_SLICE):
        yield data[start : start + SEND_SLICE]


class Connection:
    """The servers of one ``clickhouse://`` address. Queries go over a connection of the calling
    thread's (a driver client is for one thread at a time); inserts over one HTTP client, whose
    pool keeps its connections alive between a writer's inserts."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.settings = parse_url(url)
        self.database: str = self.settings["database"]
        self.cluster: str = self.settings["cluster"]
        self.tokens = False  # every server has text indexes: free text reads the one on its words (init)
        self.max_query_size = STOCK_MAX_QUERY_SIZE  # the smallest of the servers' (init)
        self._local = threading.local()
        self._clients: list = []
        self._clients_lock = threading.Lock()
        self._http: httpx.Client | None = None

    def connect(self, host: str | None = None, port: int | None = None, database: str | None = None):
        """A new native-protocol client (the caller disconnects it), to the address's server unless named."""
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
        """This thread's client."""
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self.connect()
            with self._clients_lock:
                self._clients.append(client)
        return client

    @property
    def http(self) -> httpx.Client:
        """The client of the HTTP interface (made at the first insert: most stores only read)."""
        with self._clients_lock:
            if self._http is None:
                host = self.settings["host"]
                self._http = httpx.Client(
                    base_url=f"http://{f'[{host}]' if ':' in host else host}:{self.settings['http_port']}",
                    auth=(self.settings["user"], self.settings["password"]),
                    timeout=INSERT_TIMEOUT,
                    trust_env=False,  # a database's port, as the native protocol's: no HTTP proxy of the environment
                )
            return self._http

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
            raise StoreUnavailable(
                f"the banner store at {shown(self.url)} failed: {_reason(str(exc))}", what=BANNERS
            ) from exc

    def insert(self, table: str, columns: list[str], rows: bytes) -> None:
        """Insert RowBinary ``rows`` over the HTTP interface; StoreUnavailable if it fails."""
        query = {"database": self.database, "query": f"INSERT INTO {table} ({', '.join(columns)}) FORMAT RowBinary"}
        if self.cluster:
            query["insert_distributed_sync"] = "1"
        try:
            response = self.http.post(
                "/", params=query, content=_slices(rows), headers={"Content-Length": str(len(rows))}
            )
        except httpx.TransportError as exc:
            raise StoreUnavailable(
                f"the banner store at {shown(self.url)} cannot be reached over HTTP (http_port "
                f"{self.settings['http_port']}): {exc}",
                what=BANNERS,
            ) from exc
        if response.status_code != 200:
            reason = _reason(response.content.decode(errors="replace"))[:500]
            raise StoreUnavailable(f"the banner store at {shown(self.url)} failed: {reason}", what=BANNERS)

    def lookup_chunk(self, per_value: int) -> int:
        """Values one statement may list, ``per_value`` bytes of text each (NUMBER_TEXT...)."""
        return max(1, min(LOOKUP_CHUNK, (self.max_query_size - STATEMENT_TEXT) // per_value))

    def shards(self) -> list[tuple[str, int]]:
        """(host, port) of each shard of the cluster (from system.clusters)."""
        client = self.connect(database="system")
        try:
            rows = client.execute(
                "SELECT host_address, port FROM system.clusters WHERE cluster = %(c)s ORDER BY shard_num, replica_num",
                {"c": self.cluster},
            )
        finally:
            client.disconnect()
        if not rows:
            raise StoreURLError(f"the server knows no cluster {self.cluster!r} (system.clusters)")
        return [(host, int(port)) for host, port in rows]

    def servers(self) -> list[tuple[str, int]]:
        """(host, port) of every server that holds local tables: the shards, or the one server."""
        return self.shards() if self.cluster else [(self.settings["host"], self.settings["port"])]

    def close(self) -> None:
        with self._clients_lock:
            for client in self._clients:
                client.disconnect()
            self._clients.clear()
            http, self._http = self._http, None
        self._local = threading.local()
        if http is not None:
            http.close()
