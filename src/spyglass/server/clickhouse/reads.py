"""What the ClickHouse store answers: search, count and facets, a host's history, trends and the
bulk-data builder's reads.

A search reads the current rows (tables.py) in two queries run side by side: the total with every
facet in one pass, and the page's marks, whose bodies a third query then reads by the bodies'
index; each query costs the server several ms however small, so they are few.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import Any, NamedTuple

from spyglass.exactjson import loads
from spyglass.query import Facet, Filter, Query
from spyglass.server.banners.fields import FACET_FIELDS
from spyglass.server.banners.keys import service_key_of
from spyglass.server.banners.store import FacetCounts, Trends
from spyglass.server.banners.trends import months
from spyglass.server.clickhouse import tables
from spyglass.server.clickhouse.compiler import Sql, column, current, ip16, scalar, where
from spyglass.server.clickhouse.connection import NUMBER_TEXT, Connection

PAGE_SIZE = 100
ADDED_WINDOW = 200_000  # marks the bulk-data builder is handed from one query (added_since)
QUERIES_AT_ONCE = 8  # queries run side by side (a search's two, of several requests), each on its own connection


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


class Reads:
    """The store's reads over ``connection``, with a pool that runs a request's queries side by side."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.demoted = f"{connection.database}.demoted"  # the Set of replaced banners' keys (tables.py)
        self._span: tuple[int, tuple[int, int] | None] | None = None
        self._pool = ThreadPoolExecutor(QUERIES_AT_ONCE, thread_name_prefix="clickhouse")

    def close(self) -> None:
        self._pool.shutdown()

    # -- conditions ----------------------------------------------------------------------------
    def where(self, query: Query, history: bool = False) -> Where:
        sql = Sql()
        history = history or any(f.name == "scan" and not f.negated for f in query.filters)
        condition = where(sql, query, self.connection.tokens, current=not history)
        if history:
            return Where(condition.cheap, "", sql.params, costly=condition.costly)
        return self.current_where(condition.cheap, sql.params, condition.costly)

    def current_where(self, condition: str, params: dict, costly: str = "1") -> Where:
        """The current banners matching ``condition`` and ``costly``: rows of ``current``
        (tables.py) of sign 1 that no banner replaced since."""
        return Where(condition, f"sign = 1 AND {current(self.demoted)}", params, "current", costly)

    # -- pages and counts ----------------------------------------------------------------------
    def total(self) -> int:
        return self.connection.execute("SELECT count() FROM banners")[0][0]

    def answer(self, query: Query, facets: list[Facet], page: int | None) -> tuple[int, list[bytes], FacetCounts]:
        """The total, a page of bodies (none without ``page``) and the facets: one query for the
        total and the facets, one for the page's bodies, side by side (each on a connection of its
        own: the server runs them at once)."""
        matching = self.where(query)
        jobs: list[Callable[[], Any]] = [partial(self._counted, matching, facets)]
        if page is not None:
            jobs.append(partial(self.newest, matching, PAGE_SIZE, (max(page, 1) - 1) * PAGE_SIZE))
        done = list(self._pool.map(lambda job: job(), jobs)) if len(jobs) > 1 else [jobs[0]()]
        (total, counts), bodies = done[0], done[1] if page is not None else []
        return total, bodies, counts

    def newest(self, matching: Where, limit: int, offset: int = 0) -> list[bytes]:
        """The bodies of the newest matches, newest first: their marks, then the bodies of those
        marks, named in the query so that the server finds them by the table's index (18.16 reads
        none for a subquery's set: it read the whole mark column)."""
        marks = self.connection.execute(
            f"SELECT mark FROM {matching.table} {matching.clauses} "
            f"ORDER BY t DESC, mark DESC LIMIT {int(offset)}, {int(limit)}",
            matching.params,
        )
        bodies = self.raw_bodies([mark for (mark,) in marks])
        return [bodies[mark] for (mark,) in marks if mark in bodies]

    def _counted(self, matching: Where, facets: list[Facet]) -> tuple[int, FacetCounts]:
        """How many rows match, and the facets over them."""
        if not facets:
            sql = f"SELECT count() FROM {matching.table} {matching.clauses}"
            return self.connection.execute(sql, matching.params)[0][0], {}
        total = 0
        counted: list[list[dict]] = [[] for _ in facets]
        for _, facet, value, n in self.facet_rows(matching, facets, by_month=False):
            if facet == 0:
                total = n
            else:
                counted[facet - 1].append({"count": n, "value": value})
        return total, {f.name: counts[: f.size] for f, counts in zip(facets, counted, strict=True)}

    def facet_rows(self, matching: Where, facets: list[Facet], by_month: bool) -> list:
        """``(month, facet, value, count)`` of every facet's largest values (``facet``: its place
        in ``facets`` from 1; 0 is the number of matching rows, value ''), per month (counting
        services: a service seen twice in a month counts once) or over all (month 0), in one
        pass: each row's facet values are made keys, the facet's place in digits of one width
        before the value, that one GROUP BY counts. 18.16 groups a month and a string by a faster
        method than (facet, value, number) tuples. The condition is PREWHERE, and the checks
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
        counted = "uniqExact(service)" if by_month else "count()"  # trends count a month's services
        return self.connection.execute(
            f"SELECT m, toUInt16(substring(k, 1, {width})) AS f, substring(k, {width + 1}) AS v, n "
            f"FROM (SELECT {month} AS m, k, {counted} AS n FROM {matching.table} "
            f"ARRAY JOIN {every} AS k{prewhere} GROUP BY m, k) "
            f"ORDER BY m, f, n DESC, {number}, v LIMIT {size} BY m, f",
            matching.params,
        )

    # -- hosts, services, domains --------------------------------------------------------------
    def host(self, ip: str) -> list[dict]:
        try:
            address = ip16(ipaddress.ip_address(ip))
        except ValueError:
            return []
        return [loads(b) for b in self.newest(Where("ip = unhex(%(ip)s)", "", {"ip": address.hex()}), 10_000)]

    def current_of(self, ip: str, port: int, transport: str) -> dict | None:
        service = {"s": service_key_of(ip, port, transport)}
        found = self.newest(self.current_where("service = %(s)s", service), 1)
        return loads(found[0]) if found else None

    def under_domain(self, domain: str, history: bool, limit: int) -> list[dict]:
        query = Query(f"hostname:{domain}", [Filter("hostname", (domain,))])
        return [loads(b) for b in self.newest(self.where(query, history), limit)]

    # -- trends --------------------------------------------------------------------------------
    def span(self) -> tuple[int, int] | None:
        """The first and last months (YYYYMM) of the whole store; None when it is empty. Cached
        while the count of banners holds: banners are only added, and a copy is deleted only of a
        banner kept, so the months change only when the count does (a count reads the narrowest
        column; the months read every banner's)."""
        n = self.connection.execute("SELECT count() FROM banners")[0][0]
        if self._span is None or self._span[0] != n:
            first, last = self.connection.execute("SELECT min(month), max(month) FROM banners")[0] if n else (0, 0)
            self._span = (n, (first, last) if n else None)
        return self._span[1]

    def trends(self, query: Query, facets: list[Facet]) -> Trends:
        span, rows = self._pool.map(
            lambda job: job(), [self.span, partial(self.facet_rows, self.where(query, history=True), facets, True)]
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
        return self.connection.execute("SELECT max(mark) FROM bodies")[0][0] or 0

    def added_since(self, mark: int, batch: int) -> Iterator[list[tuple[int, str]]]:
        """From ``banners``, whose rows are inserted after their bodies (each banner's body is
        there), ADDED_WINDOW at a time: the table is in address order, so each query reads its
        whole mark column; reading ``bodies`` a few thousand at a time was several times slower."""
        last = mark
        while True:
            rows = self.connection.execute(
                f"SELECT mark, t FROM banners WHERE mark > %(m)s ORDER BY mark LIMIT {ADDED_WINDOW}", {"m": last}
            )
            if not rows:
                return
            for i in range(0, len(rows), batch):
                yield [(m, tables.stamp_of(t)) for m, t in rows[i : i + batch]]
            last = rows[-1][0]

    def marks_since(self, mark: int, limit: int) -> list[int]:
        """From ``bodies``, in mark order: a range of its primary key, however large the store."""
        sql = f"SELECT mark FROM bodies WHERE mark > %(m)s ORDER BY mark LIMIT {int(limit)}"
        return [m for (m,) in self.connection.execute(sql, {"m": mark})]

    def raw_bodies(self, marks: list[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        step = self.connection.lookup_chunk(NUMBER_TEXT)
        for i in range(0, len(marks), step):
            chunk = marks[i : i + step]
            if chunk:
                sql = "SELECT mark, body FROM bodies WHERE mark IN %(m)s"
                out.update(self.connection.execute(sql, {"m": tuple(chunk)}, raw=True))
        return out
