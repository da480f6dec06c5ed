"""Upgrading a ClickHouse store that an earlier version of spyglass made (``spyglass store init``).

Not in place: ClickHouse 18.16 cannot change a table's engine or partitioning (``banners`` was a
ReplacingMergeTree partitioned by month, ``bodies`` partitioned by the banner's month), and the
rows of ``banners`` changed what they hold (the x_ columns went, text is stored lower-cased). But
every banner's exact bytes are in ``bodies``, and every other table is made from them. So on each
server the earlier ``banners`` and ``bodies`` become ``*_previous`` (the Set of demoted keys, the
current rows and the Distributed tables are dropped: made again), the current tables are
created, and every body is read back and added again as the import adds it, under its mark (the
bulk-data builder's "added since" stays right), with the current banner of each service worked
out anew. Once the copy holds every banner the ``*_previous`` tables are dropped (a body that is
no banner by today's rules kept aside in ``bodies_unread``, and said). Cut short, it starts again
from the ``*_previous`` tables (the store refuses to serve until then). ``meta`` stays as it is.
"""

from __future__ import annotations

from collections.abc import Callable

from spyglass.exactjson import loads
from spyglass.server.banners.shape import BadBanner
from spyglass.server.banners.store import StoreUnavailable
from spyglass.server.clickhouse import tables
from spyglass.server.clickhouse.connection import NUMBER_TEXT, shown
from spyglass.server.clickhouse.store import ClickHouseStore

BATCH = 20_000  # bodies read, and inserted, at a time
MOVED = ("banners", "bodies")  # the tables whose rows are copied; the others are kept or made again
# bodies that cannot be read as banners any more are kept aside in bodies_unread, to look at
UNREAD, UNREAD_COLUMNS, UNREAD_ENGINE = "_unread", "mark UInt64, body String", "MergeTree() ORDER BY mark"


def upgrade(url: str, progress: Callable[[int], None] = lambda copied: None) -> str | None:
    """Bring the store at ``url`` from an earlier layout to the current one, copying its banners;
    what it did in a sentence, or None when there was nothing to upgrade. ``progress`` hears how
    many banners are copied so far. StoreUnavailable if the store is of no layout it knows."""
    store = ClickHouseStore(url, init=False)
    try:
        servers = store.connection.servers()
        if not any([_set_aside(store, host, port) for host, port in servers]):
            if not _rows_outdated(store):
                return None
            for host, port in servers:
                _set_aside(store, host, port, rows_outdated=True)
        store.init(upgrading=True)
        copied, doubles, unreadable = _copy(store, servers, progress)
        if store.total() != copied:
            raise StoreUnavailable(f"the upgrade copied {copied:,} banners but the store holds {store.total():,}")
        store.set_meta("layout", tables.LAYOUT)
        banners, bodies = _previous(store.cluster)
        aside = bodies.removesuffix(tables.PREVIOUS) + UNREAD
        for host, port in servers:
            if unreadable:  # their bytes kept, in a table the store does not read
                _run(
                    store,
                    host,
                    port,
                    [f"CREATE TABLE IF NOT EXISTS {aside} ({UNREAD_COLUMNS}) ENGINE = {UNREAD_ENGINE}"],
                )
                step = store.connection.lookup_chunk(NUMBER_TEXT)
                for i in range(0, len(unreadable), step):
                    _run(
                        store,
                        host,
                        port,
                        [f"INSERT INTO {aside} SELECT mark, body FROM {bodies} WHERE mark IN %(m)s"],
                        {"m": tuple(unreadable[i : i + step])},
                    )
            _run(store, host, port, [f"DROP TABLE {banners}", f"DROP TABLE {bodies}"])
        kept = f"; {doubles:,} stored twice kept once" if doubles else ""
        unread = (
            f"; {len(unreadable):,} could not be read (not JSON, or no address, port or time): they stay in "
            f"{store.database}.{aside} on each server, to look at and drop"
            if unreadable
            else ""
        )
        return (
            f"{shown(url)}: upgraded from an earlier layout: {copied:,} banners copied into the current tables, "
            f"byte for byte and under their marks{kept} (a copy: ClickHouse cannot change a table's engine or "
            f"partitioning in place); the earlier tables dropped{unread}"
        )
    finally:
        store.close()


def _previous(cluster: str) -> list[str]:
    return [tables.local_name(table, cluster) + tables.PREVIOUS for table in MOVED]


def _run(store: ClickHouseStore, host: str, port: int, statements: list[str], params: dict | None = None) -> None:
    client = store.connection.connect(host, port)
    try:
        for sql in statements:
            client.execute(sql, params)
    finally:
        client.disconnect()


def _rows_outdated(store: ClickHouseStore) -> bool:
    """Whether the store holds banners whose rows are of an earlier layout than tables.LAYOUT (its
    tables the current ones: what the rows hold changed, not their columns)."""
    try:
        return store.get_meta("layout") != tables.LAYOUT and store.total() > 0
    except StoreUnavailable:  # no tables yet
        return False


def _set_aside(store: ClickHouseStore, host: str, port: int, rows_outdated: bool = False) -> bool:
    """Move one server's tables of an earlier layout (or, ``rows_outdated``, its current tables of
    outdated rows) out of the way (after an upgrade cut short: drop what it had made, to copy
    again); whether there is anything to copy."""
    client = store.connection.connect(host, port, database="system")
    try:
        client.execute(f"CREATE DATABASE IF NOT EXISTS {store.database}")
        found = tables.found(client, store.database)
    finally:
        client.disconnect()
    cluster = store.cluster
    moved = [tables.local_name(table, cluster) for table in MOVED]
    stale = tables.stale(found, cluster) + ([name for name in moved if name in found] if rows_outdated else [])
    if not stale:
        return False
    # made again: the Set of demoted keys and the current rows (from the copied banners), the
    # Distributed tables
    remade = [
        "demoted",
        tables.local_name("current", cluster),
        *([tables.written_name(t, cluster) for t in (*MOVED, "current", "demoted")] if cluster else []),
    ]
    # (the tables made again may be of another layout too: current's columns are banners')
    unknown = [n for n in stale if n not in {*moved, *_previous(cluster), *remade}]
    source = found.get(moved[1] + tables.PREVIOUS, found.get(moved[1], ("", [])))
    if not {"mark", "body"} <= set(source[1]):  # every earlier layout kept each body with its mark
        unknown.append(moved[1])
    if unknown:
        raise StoreUnavailable(
            f"the table {store.database}.{unknown[0]} on {host}:{port} is of no layout this version of spyglass "
            "can upgrade: give the store a new database and import the banners into it again"
        )
    if any(name in found for name in _previous(cluster)):  # cut short: what it made goes, the copy starts again
        statements = [f"DROP TABLE IF EXISTS {name}" for name in [*remade, *moved]]
    else:
        statements = [f"DROP TABLE IF EXISTS {name}" for name in remade]
        statements.append("RENAME TABLE " + ", ".join(f"{n} TO {n}{tables.PREVIOUS}" for n in moved if n in found))
    _run(store, host, port, statements)
    return True


def _copy(
    store: ClickHouseStore, servers: list[tuple[str, int]], progress: Callable[[int], None]
) -> tuple[int, int, list[int]]:
    """Every body of the ``bodies_previous`` tables added again under its mark, as an import adds
    it (the current banner of each service worked out anew); (copied, stored twice, the marks of
    those that cannot be read: kept aside in ``bodies_unread``)."""
    marks: set[int] = set()
    unreadable: list[int] = []
    copied = doubles = 0
    source = tables.local_name("bodies", store.cluster) + tables.PREVIOUS
    with store.writing() as writer:
        for host, port in servers:
            client = store.connection.connect(host, port)
            try:
                last = None
                while True:
                    after = "" if last is None else "WHERE mark > %(m)s"
                    rows = client.execute(
                        f"SELECT mark, body FROM {source} {after} ORDER BY mark LIMIT {BATCH}",
                        {"m": last},
                        settings={"strings_as_bytes": True},
                    )
                    if not rows:
                        break
                    if len(rows) == BATCH and rows[0][0] != rows[-1][0]:  # a mark's rows all in one batch
                        rows = [row for row in rows if row[0] != rows[-1][0]]
                    last = rows[-1][0]
                    prepared, kept = [], []
                    for mark, body in rows:
                        try:
                            prepared.append(tables.prepare(loads(body), body))
                        except (BadBanner, ValueError):
                            unreadable.append(mark)
                            continue
                        if mark in marks:  # two banners under one mark (writers whose clocks met): one anew
                            mark = store.writes.next_marks(1)[0]
                        marks.add(mark)
                        kept.append(mark)
                    added = len(writer.add(prepared, kept))
                    copied, doubles = copied + added, doubles + len(prepared) - added
                    progress(copied)
            finally:
                client.disconnect()
    return copied, doubles, unreadable
