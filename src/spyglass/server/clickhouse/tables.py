"""The ClickHouse store's tables, and a banner as their rows.

- ``banners``: one row per banner, the columns the filters and facets read (a banner's document's
  fields by the same names, banners/fields.py, less the x_ fields that are an f_ field lower-cased:
  compiler.LOWERED; a field a banner has one value of at most is a plain column, not an array:
  compiler.SCALAR); a MergeTree ordered by address, port, transport, time and key, so a host's
  history is one range of the table. Not a ReplacingMergeTree: a banner added twice by two writers
  at once is kept once by their reconciliation (writer.py), which deletes the later copy's row and
  body; a merge that dropped a copy on its own would leave its body behind, found by no row.
- ``bodies``: each banner's bytes exactly as they came, ordered by mark (the order banners were
  added) and partitioned by the month they were added, so that a page of results reads 100 small
  granules rather than the filter columns' big ones. No time: the bulk-data builder reads the marks
  and times of what is new from ``banners`` (a time in each body cost a noticeable share of all
  the store keeps).
- ``current``: the rows of ``banners`` that were the latest of their service when written (a
  CollapsingMergeTree by service, key and mark): what search, count and facets read, so that they read
  the services' current banners and not every banner they ever had (generated banners are
  mostly history). A writer adds a banner's row here too (sign 1) unless it is already replaced, and
  cancels (sign -1) the row of each banner it replaces; merges drop the pairs. Until they do, and
  after writers raced, ``demoted`` stays the authority: a query reads rows of sign 1 not demoted.
- ``demoted``: the keys of banners a newer one of their service has replaced: search, count and
  facets leave them out (the embedded store's current flag). A Set table: held in memory (and on
  disk for restarts), so a query's ``key NOT IN demoted`` looks keys up in a set the server keeps
  rather than one it builds again from a table on every query (about 8 bytes of RAM a replaced
  banner: plan memory for it past a billion).
- ``meta``: the store's notes, the newest value of a name winning.
- ``seen``: what scans saw besides open services (hosts up, ports closed or filtered: banners/seen.py,
  clickhouse/seen.py), a row per host of a run and per port of it not open.

On a cluster each is a local table ``NAME_local`` on every shard, and ``NAME`` a Distributed table
over them, sharded by the banner's key (bodies by mark: a page's bodies are found by their marks
on every shard); the Set is ``demoted`` on every shard (a query names it on each) and written
through the Distributed ``demoted_shards``, sharded by key too, so that a banner's demotion is on
the shard that holds it.

A banner's row is made in the import's worker processes as ClickHouse's RowBinary (every column
but the mark, which the writer appends), so the writer only joins bytes and sends them (writer.py).

Only what ClickHouse 18.16 has (Debian's package): no codecs, no skipping indexes, no DateTime64
(times are microseconds in an Int64: banners carry years 1678 to 2261). On a server with text
indexes (compiler.TEXT_INDEX_SINCE), ``banners`` and ``current`` index the free text's words too.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from spyglass.exactjson import dumps
from spyglass.server.banners.fields import FACET_FIELDS, FILTER_FIELDS, MAX_TERM, document
from spyglass.server.banners.keys import keys
from spyglass.server.banners.shape import normalize
from spyglass.server.banners.store import Prepared
from spyglass.server.clickhouse.compiler import EPOCH, LOWERED, SCALAR, TEXT_INDEX, column

# the product, its version and the org first: a prepared row is sorted by its port and the bytes after it (alike)
_ALIKE_FIELDS = ["f_product", "f_version", "f_org"]
_FIELDS = _ALIKE_FIELDS + sorted(
    (set(FILTER_FIELDS.values()) | set(FACET_FIELDS.values()))
    - {"ip", "timestamp", "i_port", "text", *_ALIKE_FIELDS}
    - set(LOWERED)
)
_TYPES = {"t_": "String", "x_": "Array(String)", "f_": "Array(String)", "i_": "Array(Int64)", "b_": "Array(UInt8)"}
_SCALAR_TYPES = {"x_": "String", "f_": "String", "b_": "UInt8"}  # compiler.SCALAR's columns


def _type(field_name: str) -> str:
    return (_SCALAR_TYPES if field_name in SCALAR else _TYPES)[field_name[:2]]


# (name, type) of every column of ``banners``, in the order of a prepared row (the writer appends the mark)
COLUMNS: list[tuple[str, str]] = [
    ("key", "UInt64"),
    ("service", "UInt64"),
    ("month", "UInt32"),  # YYYYMM
    ("t", "Int64"),  # microseconds since 1970, UTC
    ("ip", "FixedString(16)"),  # IPv4 mapped into IPv6: one order, one range filter
    ("port", "UInt16"),
    *[(column(f), _type(f)) for f in _FIELDS],
    ("transport", "String"),
    ("text", "String"),
    ("mark", "UInt64"),
]
NAMES = [name for name, _ in COLUMNS]
BODY_COLUMNS = ["mark", "body"]  # the order of a bodies row (body_row)
_HEAD = struct.Struct("<QQIq16sH")  # key, service, month, t, ip, port: a row's first columns
_T = struct.Struct("<q")
_MARK = struct.Struct("<Q")

ENGINES = {
    # one partition: a query pays for every part it opens (by month, a small count took far longer)
    "banners": "MergeTree() ORDER BY (ip, port, transport, t, key)",
    # by the month the banners were added (a mark is a time in ns): a page's marks are then each in
    # one granule of one part, not in one of every banner month's parts. A granule of 256 bodies is
    # about 350 KB of JSON, one compressed block: a page reads 100 of them. By hand: fewer bytes than
    # smaller granules (zstd sees more banners alike in a block), for a page's bodies read a little
    # slower
    "bodies": "ReplacingMergeTree() PARTITION BY toYYYYMM(toDateTime(intDiv(mark, 1000000000))) ORDER BY mark "
    "SETTINGS index_granularity = 256",
    # by service: a service's current banner is one range of it (the collector's lookups); a row and
    # the one cancelling it share service, key and mark (two writers' copies of a banner do not)
    "current": "CollapsingMergeTree(sign) ORDER BY (service, key, mark)",
    "demoted": "Set",
    "meta": "ReplacingMergeTree(at) ORDER BY name",
    "seen": "ReplacingMergeTree() ORDER BY (ip, scan, port, transport)",
}
_ROW = ", ".join(f"{name} {type_}" for name, type_ in COLUMNS)
TABLE_COLUMNS = {
    "banners": _ROW,
    "bodies": "mark UInt64, body String",
    "current": _ROW + ", sign Int8",
    "demoted": "key UInt64",
    "meta": "name String, value String, at UInt64",
    "seen": "ip String, scan String, port Int32, transport String, stamp String, state String, reason String, "
    "ttl Int32, opened Int32, body String",
}
SHARDING = {
    "banners": "key",
    "bodies": "mark",
    "current": "key",
    "demoted": "key",
    "meta": "cityHash64(name)",
    "seen": "cityHash64(ip)",
}
CURRENT_COLUMNS = [*NAMES, "sign"]  # the order of a current row (current_row)
CANCEL_COLUMNS = ["key", "service", "mark", "sign"]  # the order of a row cancelling one (cancel_rows)
_CANCEL = struct.Struct("<QQQb")


# What a layout's rows hold, noted in the store's meta as "layout": raise it when that changes while
# the tables' columns and engines do not (how a key is hashed, how a field's column is made), so
# that a store of the earlier one is upgraded (its rows made again from the bodies), not misread.
LAYOUT = "3"
PREVIOUS = "_previous"  # an upgrade's name for a table of an earlier layout while it copies from it (upgrade.py)


def layout(cluster: str) -> dict[str, tuple[str, list[str]]]:
    """(engine, column names) of every table of the current layout on one server, by name."""
    out = {}
    for table, engine in ENGINES.items():
        names = sorted(c.split()[0] for c in TABLE_COLUMNS[table].split(", "))
        out[local_name(table, cluster)] = (engine.split("(")[0], names)
        if cluster:
            out[written_name(table, cluster)] = ("Distributed", names)
    return out


def found(client: Any, database: str) -> dict[str, tuple[str, list[str]]]:
    """(engine, column names) of the tables ``database`` holds on the server ``client`` reaches."""
    params = {"d": database}
    engines = dict(client.execute("SELECT name, engine FROM system.tables WHERE database = %(d)s", params))
    columns: dict[str, list[str]] = {}
    for table, name in client.execute("SELECT table, name FROM system.columns WHERE database = %(d)s", params):
        columns.setdefault(table, []).append(name)
    return {name: (engine, sorted(columns.get(name, []))) for name, engine in engines.items()}


def stale(tables: dict[str, tuple[str, list[str]]], cluster: str) -> list[str]:
    """The tables of ``found`` that the current layout does not have so (another engine or other
    columns: an earlier version's), and those an upgrade cut short left behind."""
    current = layout(cluster)
    return sorted(
        name for name, got in tables.items() if name.endswith(PREVIOUS) or (name in current and got != current[name])
    )


def local_name(table: str, cluster: str) -> str:
    """The table on each server: ``table`` itself on one server, ``table_local`` on a shard."""
    return f"{table}_local" if cluster and table != "demoted" else table


def written_name(table: str, cluster: str) -> str:
    """Where inserts into ``table`` go (on a cluster: the Distributed table over the shards')."""
    return "demoted_shards" if cluster and table == "demoted" else table


INDEXED = ("banners", "current")  # the tables with the free text's index, where the server has them


def create_local(database: str, table: str, cluster: str, text_index: bool = False) -> str:
    """``text_index``: the server has text indexes (:data:`INDEXED` get one on the free text)."""
    name = local_name(table, cluster)
    index = f", {TEXT_INDEX}" if text_index and table in INDEXED else ""
    return f"CREATE TABLE IF NOT EXISTS {database}.{name} ({TABLE_COLUMNS[table]}{index}) ENGINE = {ENGINES[table]}"


def text_indexed(client: Any, database: str) -> set[str]:
    """The tables of ``database`` that have the free text's index, on a server with text indexes."""
    rows = client.execute(
        "SELECT table FROM system.data_skipping_indices WHERE database = %(d)s AND name = 'words'", {"d": database}
    )
    return {table for (table,) in rows}


def add_text_index(database: str, table: str, cluster: str) -> str:
    """The text index added to a table made without it (on a server since upgraded): the parts
    written from then on have it; the server reads the older ones whole, as before."""
    index = TEXT_INDEX.replace("INDEX", "INDEX IF NOT EXISTS", 1)
    return f"ALTER TABLE {database}.{local_name(table, cluster)} ADD {index}"


def create_distributed(database: str, table: str, cluster: str) -> str:
    return (
        f"CREATE TABLE IF NOT EXISTS {database}.{written_name(table, cluster)} ({TABLE_COLUMNS[table]}) "
        f"ENGINE = Distributed({cluster}, {database}, {local_name(table, cluster)}, {SHARDING[table]})"
    )


def time_of(stamp: str) -> tuple[int, int]:
    """(microseconds since 1970, YYYYMM) of a normalized timestamp (``shape.stamp``)."""
    head, _, fraction = stamp.rstrip("Z").partition(".")
    when = datetime.fromisoformat(head).replace(tzinfo=UTC)
    us = (when - EPOCH) // timedelta(microseconds=1) + int((fraction + "000000")[:6])
    return us, when.year * 100 + when.month


def stamp_of(us: int) -> str:
    """The normalized timestamp of a time column (``2026-03-01T10:00:00.000000Z``)."""
    when = EPOCH + timedelta(microseconds=us)
    return f"{when.year:04d}-{when:%m-%dT%H:%M:%S}.{when.microsecond:06d}Z"


def _ip16(address: str) -> bytes:
    """:func:`ip16` of a valid address's text, at the speed of inet_pton (the import's hot path)."""
    if ":" in address:
        return socket.inet_pton(socket.AF_INET6, address)
    return b"\x00" * 10 + b"\xff\xff" + socket.inet_aton(address)


def time_in(row: bytes) -> int:
    """The time column of a prepared row."""
    return _T.unpack_from(row, 20)[0]


def ip_in(row: bytes) -> bytes:
    """The address column of a prepared row (:func:`ip16`)."""
    return row[28:44]


def alike(row: bytes) -> bytes:
    """What banners alike share, to sort a prepared row by: its port, product, version and org
    (the columns after the port): the same software, then from the same network. By hand,
    generated bodies sorted so compressed smaller than sorted by port, org and product, by port
    alone, or not at all."""
    return row[44:108]


def banner_row(row: bytes, mark: int) -> bytes:
    """A prepared row with its mark: a row of ``banners`` (RowBinary, in the order of NAMES)."""
    return row + _MARK.pack(mark)


def current_row(row: bytes, mark: int) -> bytes:
    """A prepared row with its mark, as a row of ``current`` (CURRENT_COLUMNS) of sign 1."""
    return row + _MARK.pack(mark) + b"\x01"


def cancel_rows(replaced: list[tuple[int, int, int]]) -> bytes:
    """Rows of ``current`` (CANCEL_COLUMNS) of sign -1 for these (service, key, mark): a merge
    drops each with the row it cancels (the other columns are left empty: only the sort key is
    compared)."""
    return b"".join([_CANCEL.pack(key, service, mark, -1) for service, key, mark in replaced])


def body_row(mark: int, body: bytes) -> bytes:
    """A row of ``bodies`` (RowBinary, in the order of BODY_COLUMNS)."""
    return _MARK.pack(mark) + _length(len(body)) + body


def key_rows(keys: list[int]) -> bytes:
    """Rows of ``demoted`` (RowBinary)."""
    return struct.pack(f"<{len(keys)}Q", *keys)


def _length(n: int) -> bytes:
    """A RowBinary length (LEB128)."""
    if n < 0x80:
        return _BYTE[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_BYTE = [bytes([i]) for i in range(0x80)]


def _string(value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")  # a lone surrogate (JSON allows it) kept as it came
    n = len(data)
    return _BYTE[n] + data if n < 0x80 else _length(n) + data


def _lowered(value: str) -> bytes:
    """A ``t`` field: its text lower-cased, what its words are matched against (compiler._text)."""
    return _string(value.lower())


def _strings(value: str | list[str]) -> bytes:
    """An ``f``/``x`` field (one value or a list) as an Array(String)."""
    if value.__class__ is str:
        return b"\x01" + _string(value)
    return _length(len(value)) + b"".join([_string(v) for v in value])


def _integers(value: int | list[int]) -> bytes:
    """An ``i`` field as an Array(Int64)."""
    values = value if value.__class__ is list else [value]
    return _length(len(values)) + struct.pack(f"<{len(values)}q", *values)


def _flag(value: bool) -> bytes:
    """A ``b`` field as an Array(UInt8) of one."""
    return b"\x01\x01" if value else b"\x01\x00"


def _one_flag(value: bool) -> bytes:
    """A ``b`` field of SCALAR as a UInt8."""
    return b"\x01" if value else b"\x00"


_ENCODERS: dict[str, Callable[[Any], bytes]] = {"t": _lowered, "x": _strings, "f": _strings, "i": _integers, "b": _flag}
_SCALAR_ENCODERS: dict[str, Callable[[Any], bytes]] = {"x": _string, "f": _string, "b": _one_flag}
_SLOT = {name: (i, (_SCALAR_ENCODERS if name in SCALAR else _ENCODERS)[name[0]]) for i, name in enumerate(_FIELDS)}
_EMPTY = [b"\x00"] * len(_FIELDS)  # an empty String, an empty Array and a UInt8 0 are all one zero byte


def _shown_exact(doc: dict, name: str, values: list[str]) -> None:
    """The values of one of EXACT_NAMES as the facet shows them (``f_``): the filter reads them
    lower-cased from that column (compiler.LOWERED), so no ``x_`` field is made."""
    if values:
        doc["f_" + name] = [v if len(v) <= MAX_TERM else v[:MAX_TERM] for v in values]


def prepare(banner: object, body: bytes | None = None) -> Prepared:
    """What the writer needs of a banner (BadBanner if a required member is missing): its keys,
    its body and its ``banners`` row as RowBinary without the mark (the writer appends it)."""
    shape = normalize(banner)
    assert isinstance(banner, dict)
    doc = document(banner, shape, _shown_exact)
    us, month = time_of(shape.stamp)
    key, service = keys(banner, shape)
    fields = _EMPTY.copy()
    for name, value in doc.items():  # the fields this banner has (a few of them), by their slot
        slot = _SLOT.get(name)
        if slot is not None and value is not None:
            fields[slot[0]] = slot[1](value)
    head = _HEAD.pack(key, service, month, us, _ip16(shape.ip_str), shape.port)
    row = b"".join([head, *fields, _string(shape.transport), _lowered(doc["text"])])
    return Prepared(key, service, shape.stamp, body if body is not None else dumps(banner), row)
