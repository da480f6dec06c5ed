"""What a scan saw of a host besides its open services: the host up (an ``nmap -sn`` sweep's hosts,
or any scanned host with no open port) and its ports closed or filtered, with nmap's reasons.

None of it is a banner: a banner is an open service, and search, count, facets and trends of
banners are unchanged by it. Every store keeps it beside its banners, as rows of its own (the
embedded store in ``seen.sqlite`` of its data dir, ClickHouse in a ``seen`` table), and answers
three things (:class:`SeenStore`): keep rows, the rows of an address, and the rows of given states.
What is shared is here: a run's record as rows, a row as the API shows it, and the search.

A row is one host of one run (``port`` -1: its status, reason, TTL, how many ports were open and
nmap's ``extraports`` counts), one port of it that was not open (state, reason, TTL), or one of its
``extraports`` (``port`` -2, -3...: the state, how many ports, and the reasons with the ranges of
ports nmap 7.9x writes). A row is identified by address, scan, port and transport: importing a
file again adds nothing.

The search: ``host.state:up`` finds the hosts runs saw up (``host.open:0``, alone or beside it,
those with no open port), ``port.state:filtered`` the ports runs saw filtered; ``port``, ``transport``, ``ip``,
``net``, ``scan``, ``after`` and ``before`` narrow them (each may be negated). A port nmap counted
in ``extraports`` rather than listed is found by ``port:`` where nmap wrote its range; without
``port:`` such a group is one result (port 0, ``seen.kind`` "extraports"). A query with either
state filter is answered here, by every store alike, never by the banners.
"""

from __future__ import annotations

import heapq
import ipaddress
from collections.abc import Iterable, Iterator
from datetime import date, timedelta
from typing import NamedTuple, Protocol, cast

from spyglass.exactjson import dumps, loads
from spyglass.query import Filter, Query

HOST = -1  # the port of a host's own row
EXTRA = -2  # the port of a host's first extraports row (the next -3, ...)
RANGES = 1000  # ranges of ports of one extraports reason read
PAGE = 100
STATES = {"host.state": "host", "port.state": "port"}  # the filters, and the rows each finds
NARROWING = {"port", "transport", "ip", "net", "scan", "after", "before"}  # what else such a query may say
ON_HOSTS = {"host.open"}  # what only the hosts' rows have
KINDS = {**STATES, "host.open": "host"}  # the filters that ask for these rows, not banners


class Row(NamedTuple):
    ip: str
    scan: str
    port: int  # HOST for the host's own row, EXTRA and below for its extraports
    transport: str  # "" for the host's own row
    stamp: str
    state: str
    reason: str
    ttl: int  # -1: nmap wrote none
    opened: int  # the host's open ports (its own row), the ports counted (an extraports row), 0 (a port's)
    body: str  # JSON: the run (tool, version, args, file) and, of a host, its extraports


class SeenStore(Protocol):  # (BannerStore has these too)
    def add_seen(self, rows: list[Row]) -> int:
        """Keep the rows not kept yet; how many were new."""
        ...

    def seen_of(self, ip: str) -> list[Row]:
        """Every row of an address."""
        ...

    def seen_in(self, kind: str, states: list[str] | None) -> Iterator[Row]:
        """Every row of ``kind`` ("host" or "port") in one of ``states`` (lower case; None: in any),
        each once (a search streams them: it holds only its page's)."""
        ...


def rows_of(record: dict, file: str) -> list[Row]:
    """A run's record of one host (formats/nmap_seen.py) as rows; ``file``: the file it came from."""
    tool = record.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    run = {"tool": tool.get("name") or "", "version": tool.get("version") or "", "file": file}
    ip, scan, stamp = str(record["ip_str"]), str(record["scan"]), str(record["timestamp"])
    host = {**run, "args": tool.get("args") or "", "extraports": record.get("extraports") or []}
    rows = [Row(ip, scan, HOST, "", stamp, *_state(record), _number(record.get("open")) or 0, dumps(host).decode())]
    body = dumps(run).decode()
    for i, extra in enumerate(e for e in record.get("extraports") or [] if isinstance(e, dict)):
        reasons = [r for r in extra.get("reasons") or [] if isinstance(r, dict)]
        state = str(extra.get("state") or "").lower()
        first = reasons[0] if reasons else {}
        held = {**run, "reasons": reasons}
        count = _number(extra.get("count")) or 0
        rows.append(
            Row(
                ip,
                scan,
                EXTRA - i,
                str(first.get("transport") or ""),
                stamp,
                state,
                str(first.get("reason") or ""),
                -1,
                count,
                dumps(held).decode(),
            )
        )
    for port in record.get("ports") or []:
        if isinstance(port, dict) and isinstance(port.get("port"), int):
            rows.append(Row(ip, scan, port["port"], str(port.get("transport") or ""), stamp, *_state(port), 0, body))
    return rows


def _state(record: dict) -> tuple[str, str, int]:
    ttl = _number(record.get("ttl"))
    return str(record.get("state") or "").lower(), str(record.get("reason") or ""), -1 if ttl is None else ttl


def _number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def shown(row: Row) -> dict:
    """A row as the API shows it: the address, port, transport and time a banner has (a host's
    row has port 0 and no transport: ``seen.kind`` is "host"), and what was seen under ``seen``:
    ``kind``, ``state``, ``reason``, ``ttl``, ``scan``, ``tool``, ``version``, ``file``, and of a
    host ``open`` (its open ports), ``args`` and ``extraports``."""
    body = loads(row.body.encode())
    kind = "host" if row.port == HOST else "extraports" if row.port <= EXTRA else "port"
    seen: dict = {"kind": kind, "state": row.state, "reason": row.reason}
    seen |= {"ttl": None if row.ttl < 0 else row.ttl, "scan": row.scan}
    if kind == "host":
        seen["open"] = row.opened
    elif kind == "extraports":
        seen["count"] = row.opened
    out = {"ip_str": row.ip, "port": max(row.port, 0), "transport": row.transport, "timestamp": row.stamp}
    out["seen"] = {**seen, **(body if isinstance(body, dict) else {})}
    return out


def of_host(store: SeenStore, ip: str) -> list[dict]:
    """What runs saw of an address besides its banners: each run's host row, then its ports, the
    newest run first (each row once, also where a store holds it twice for a while)."""
    rows = [r for r in set(store.seen_of(ip)) if r.port >= HOST]  # (the host's row holds its extraports)
    rows.sort(key=lambda r: (r.stamp, r.scan, r.port == HOST, -r.port), reverse=True)
    return [shown(r) for r in _once(rows)]


def _once(rows: Iterable[Row]) -> Iterator[Row]:
    kept: set[tuple] = set()
    for row in rows:
        key = row[:4]
        if key not in kept:
            kept.add(key)
            yield row


def asks(query: Query) -> bool:
    """Whether ``query`` asks for what runs saw (a state filter, or host.open, not negated) rather
    than banners."""
    return any(f.name in KINDS and not f.negated for f in query.filters)


def problem(query: Query) -> str | None:
    """What such a query says that these rows cannot answer, in words; None if nothing."""
    if query.texts:
        return "free text searches banners: a search of host.state or port.state takes filters only"
    kinds = {KINDS[f.name] for f in query.filters if f.name in KINDS and not f.negated}
    if len(kinds) > 1:
        return "host.state or host.open and port.state find different rows (hosts, ports): ask one of them"
    (kind,) = kinds
    for f in query.filters:
        if f.name in STATES and STATES[f.name] != kind:
            return f"{f.name} does not apply to a search of {'host.state' if kind == 'host' else 'port.state'}"
        if f.name in ON_HOSTS and kind != "host" or f.name in {"port", "transport"} and kind != "port":
            return f"{f.name}: a search of {'host.state' if kind == 'host' else 'port.state'} has no {f.name}"
        if f.name not in STATES and f.name not in NARROWING | ON_HOSTS:
            names = ", ".join(sorted(NARROWING | ON_HOSTS))
            return f"{f.name}: a search of host.state or port.state is narrowed by {names} only"
    return None


def search(store: SeenStore, query: Query, page: int = 1) -> tuple[int, list[dict]]:
    """One page (100) of the rows ``query`` finds (see :func:`problem` first), newest first, and
    how many it finds."""
    kind = next(KINDS[f.name] for f in query.filters if f.name in KINDS and not f.negated)
    wanted = [{str(v).lower() for v in f.values} for f in query.filters if f.name in STATES and not f.negated]
    states = sorted(set.intersection(*wanted)) if wanted else None  # None: any
    ports = [set(f.values) for f in query.filters if f.name == "port" and not f.negated]
    asked = set.intersection(*ports) if ports else None  # the ports every port: filter asks for
    total, newest = 0, cast(list[tuple[tuple, Row]], [])  # the page's rows and those before: a heap, oldest on top
    for row in _expanded(store.seen_in(kind, states), asked):
        if all(_holds(f, row) for f in query.filters):
            total += 1
            ranked = ((row.stamp, row.ip, row.scan, row.port, row.transport), row)
            if len(newest) < page * PAGE:
                heapq.heappush(newest, ranked)
            else:
                heapq.heappushpop(newest, ranked)
    found = [row for _, row in sorted(newest, reverse=True)]
    return total, [shown(r) for r in found[(page - 1) * PAGE : page * PAGE]]


def _expanded(rows: Iterable[Row], ports: set | None) -> Iterator[Row]:
    """The rows, each of extraports as the ``ports`` asked for in its ranges (each as a port's
    row, with the reason that counted it), or as it is where no port is asked for."""
    for row in rows:
        if row.port > EXTRA:
            yield row
        elif ports is None:
            yield row
        else:
            body = loads(row.body.encode())
            reasons = body.pop("reasons", []) if isinstance(body, dict) else []
            for reason in reasons if isinstance(reasons, list) else []:
                for port in sorted(p for p in ports if isinstance(p, int) and _within(p, reason.get("ports"))):
                    transport = str(reason.get("transport") or row.transport)
                    yield row._replace(
                        port=port,
                        transport=transport,
                        reason=str(reason.get("reason") or ""),
                        opened=0,
                        body=dumps(body).decode(),
                    )


def _within(port: int, ranges: object) -> bool:
    """Whether ``port`` is in nmap's list of ranges (``1-21,23,25-79``); read defensively."""
    if not isinstance(ranges, str):
        return False
    for part in ranges.split(",")[:RANGES]:
        low, _, high = part.strip().partition("-")
        if low.isascii() and low.isdigit() and (not high or high.isascii() and high.isdigit()):
            if int(low) <= port <= int(high or low):
                return True
    return False


def _holds(f: Filter, row: Row) -> bool:
    return _matches(f, row) != f.negated


def _matches(f: Filter, row: Row) -> bool:
    values = f.values
    if f.name in STATES:
        return row.state in {str(v).lower() for v in values}
    if f.name == "port":
        return row.port in values
    if f.name == "host.open":
        return row.opened in values
    if f.name == "transport":
        return row.transport.lower() in {str(v).lower() for v in values}
    if f.name == "scan":
        return row.scan.lower() in {str(v).lower() for v in values}
    if f.name in ("ip", "net"):
        address = ipaddress.ip_address(row.ip)
        return any(address in net for net in values)  # type: ignore[operator]
    day = date.fromisoformat(row.stamp[:10])
    dates = [v for v in values if isinstance(v, date)]
    if f.name == "before":
        return bool(dates) and day < min(dates)
    return bool(dates) and day >= max(dates) + timedelta(days=1)  # after: as the banners' filter reads it
