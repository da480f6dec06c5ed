"""The ClickHouse store's tables, and a banner as their rows.

- ``banners``: one row per banner, the columns the filters and facets read (the embedded index's
  fields by the same names, fields.py); a ReplacingMergeTree partitioned by month and ordered by
  address, port, transport, time (and key: two banners of one service and second stay two), so a
  host's history is one range of the table and a banner added twice by two importers at once is
  kept once after merges.
- ``bodies``: each banner's bytes exactly as they came, ordered by mark (the order banners were
  added), so the bulk-data builder reads what is new as one range and a page of results reads 100
  small granules rather than the filter columns' big ones.
- ``demoted``: the keys of banners a newer one of their service has replaced: search, count and
  facets leave them out (the embedded store's current flag). A Set table: held in memory (and on
  disk for restarts), so a query's ``key NOT IN demoted`` looks keys up in a set the server keeps
  rather than one it builds again from a table on every query (about 8 bytes of RAM a replaced
  banner: plan memory for it past a billion).
- ``meta``: the store's notes, the newest value of a name winning.

On a cluster each is a local table ``NAME_local`` on every shard, and ``NAME`` a Distributed table
over them, sharded by the banner's key; the Set is ``demoted`` on every shard (a query names it on
each) and written through the Distributed ``demoted_shards``, sharded by key too, so that a
banner's demotion is on the shard that holds it.

Only what ClickHouse 18.16 has (Debian's package): no codecs, no skipping indexes, no DateTime64
(times are microseconds in an Int64: banners carry years 1678 to 2261).
"""

from __future__ import annotations

import marshal
import socket
from datetime import UTC, datetime, timedelta
from typing import Any

from spyglass.exactjson import dumps
from spyglass.server.bannerstore import Prepared
from spyglass.server.clickhouse.compiler import EPOCH, column
from spyglass.server.index.fields import FACET_FIELDS, FILTER_FIELDS, document
from spyglass.server.index.records import banner_key, service_key
from spyglass.server.index.shape import normalize

_FIELDS = sorted((set(FILTER_FIELDS.values()) | set(FACET_FIELDS.values())) - {"ip", "timestamp", "i_port", "text"})
_TYPES = {"t_": "String", "x_": "Array(String)", "f_": "Array(String)", "i_": "Array(Int64)", "b_": "Array(UInt8)"}

# (name, type) of every column of ``banners``, in the order a prepared row holds them
COLUMNS: list[tuple[str, str]] = [
    ("key", "UInt64"),
    ("service", "UInt64"),
    ("mark", "UInt64"),
    ("month", "UInt32"),  # YYYYMM
    ("t", "Int64"),  # microseconds since 1970, UTC
    ("ip", "FixedString(16)"),  # IPv4 mapped into IPv6: one order, one range filter
    ("port", "UInt16"),
    ("transport", "String"),
    ("text", "String"),
    *[(column(f), _TYPES[f[:2]]) for f in _FIELDS],
]
NAMES = [name for name, _ in COLUMNS]
BODY_COLUMNS = ["mark", "key", "month", "t", "body"]

ENGINES = {
    "banners": "ReplacingMergeTree() PARTITION BY month ORDER BY (ip, port, transport, t, key)",
    "bodies": "ReplacingMergeTree() PARTITION BY month ORDER BY mark SETTINGS index_granularity = 64",
    "demoted": "Set",
    "meta": "ReplacingMergeTree(at) ORDER BY name",
}
TABLE_COLUMNS = {
    "banners": ", ".join(f"{name} {type_}" for name, type_ in COLUMNS),
    "bodies": "mark UInt64, key UInt64, month UInt32, t Int64, body String",
    "demoted": "key UInt64",
    "meta": "name String, value String, at UInt64",
}
SHARDING = {"banners": "key", "bodies": "key", "demoted": "key", "meta": "cityHash64(name)"}


def local_name(table: str, cluster: str) -> str:
    """The table on each server: ``table`` itself on one server, ``table_local`` on a shard."""
    return f"{table}_local" if cluster and table != "demoted" else table


def written_name(table: str, cluster: str) -> str:
    """Where inserts into ``table`` go (on a cluster: the Distributed table over the shards')."""
    return "demoted_shards" if cluster and table == "demoted" else table


def create_local(database: str, table: str, cluster: str) -> str:
    name = local_name(table, cluster)
    return f"CREATE TABLE IF NOT EXISTS {database}.{name} ({TABLE_COLUMNS[table]}) ENGINE = {ENGINES[table]}"


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


_SLOT = {name: i for i, name in enumerate(_FIELDS)}
_EMPTY: tuple[Any, ...] = tuple("" if name.startswith("t_") else [] for name in _FIELDS)  # shared: marshalled at once


def prepare(banner: object, body: bytes | None = None) -> Prepared:
    """What the writer needs of a banner (BadBanner if a required member is missing): its keys,
    its body and its ``banners`` row (``mark`` left 0: the writer gives it), marshalled."""
    shape = normalize(banner)
    assert isinstance(banner, dict)
    doc = document(banner, shape)
    us, month = time_of(shape.stamp)
    key, service = banner_key(banner, shape), service_key(shape)
    fields = list(_EMPTY)
    for name, value in doc.items():  # the fields this banner has (a few of them), by their slot
        slot = _SLOT.get(name)
        if slot is None or value is None:
            continue
        if name[0] == "b":
            fields[slot] = [int(value)]
        elif name[0] == "t":
            fields[slot] = value
        else:
            fields[slot] = value if isinstance(value, list) else [value]
    row = [key, service, 0, month, us, _ip16(shape.ip_str), shape.port, shape.transport]
    row += [doc.get("text", ""), *fields]
    return Prepared(key, service, shape.stamp, body if body is not None else dumps(banner), marshal.dumps(row))
