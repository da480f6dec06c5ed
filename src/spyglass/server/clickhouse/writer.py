"""How banners get into the ClickHouse store: writers, their marks, and putting right what racing
or stopped writers left.

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

Banners are inserted as RowBinary rows made in the import's worker processes (tables.py), which
the server parses: the writer only joins bytes.

Marks are the writer's clock in nanoseconds, rising within a writer, each writer's ending in a tag
of its own (the low MARK_TAGS bits) so that two writers never give one mark: the bulk-data
builder's "added since" is exact with one writer and may miss a banner that another writer
inserted slower than a later one (its mark is then older than what the builder has seen).
"""

from __future__ import annotations

import gc
import itertools
import random
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import NamedTuple

from spyglass.server.banners.store import Prepared, StoreUnavailable
from spyglass.server.clickhouse import tables
from spyglass.server.clickhouse.compiler import current
from spyglass.server.clickhouse.connection import ADDRESS_TEXT, NUMBER_TEXT, Connection, shown
from spyglass.server.clickhouse.reads import Where

FLUSH_ROWS = 50_000  # banners a writer holds before inserting them (big blocks: few parts to merge)
IN_COLLECTED_ORDER = 2000  # banners a flush keeps in the order they were added (a collector's batch)
# Rows at these addresses (a parameter ``ips``: their 16 bytes in hex): in a subquery, which 18.16
# turns into a set that its primary key index is searched with.
AT_ADDRESSES = "ip IN (SELECT toFixedString(unhex(arrayJoin(%(ips)s)), 16))"
MARK_TAGS = 1 << 12  # a mark's low 12 bits are its writer's tag: a writer's marks step by this
_TAGS = itertools.count(random.randrange(MARK_TAGS))  # stores of one process: tags one after another
REPAIR_ROWS = 5_000_000  # current rows a repair checks banners against at once (a set of 16 B each in the server)
MUTATION_WAIT = 600.0  # seconds a reconciliation waits for the server to delete copies


class Writes:
    """The store's side of writing, shared by its writers: marks, the lookups a writer makes,
    reconciliation and repair."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.demoted = f"{connection.database}.demoted"  # the Set of replaced banners' keys (tables.py)
        self._last_mark = 0
        self._tag = next(_TAGS) % MARK_TAGS
        self._mark_lock = threading.Lock()

    def next_marks(self, n: int) -> range:
        """``n`` new marks: this writer's clock, always past its last mark, ending in its tag."""
        with self._mark_lock:
            now = time.time_ns() // MARK_TAGS * MARK_TAGS + self._tag
            first = max(now, self._last_mark + MARK_TAGS)
            self._last_mark = first + (n - 1) * MARK_TAGS
        return range(first, first + n * MARK_TAGS, MARK_TAGS)

    def known_services(self, services: list[int]) -> set[int]:
        found: set[int] = set()
        step = self.connection.lookup_chunk(NUMBER_TEXT)
        for i in range(0, len(services), step):
            chunk = services[i : i + step]
            found.update(
                r[0]
                for r in self.connection.execute(
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
        step = self.connection.lookup_chunk(NUMBER_TEXT + ADDRESS_TEXT)
        for i in range(0, len(named), step):
            chunk = named[i : i + step]
            rows += self.connection.execute(
                f"SELECT service, key, t, mark FROM banners WHERE {AT_ADDRESSES} AND service IN %(s)s{alive}",
                {"s": tuple(s for s, _ in chunk), "ips": sorted({ip.hex() for _, ip in chunk})},
            )
        return rows

    def fill_current(self, client, condition: str = "1", params: dict | None = None) -> None:
        """On the server of ``client``: a row in ``current`` for each banner matching ``condition``
        (of the columns both tables have) that is not demoted and has none (a store made before
        the table; a writer stopped between its inserts: repair). A shard holds a banner's row."""
        database, cluster = self.connection.database, self.connection.cluster
        rows, banners = (tables.local_name(t, cluster) for t in ("current", "banners"))
        names = ", ".join(tables.NAMES)
        client.execute(
            f"INSERT INTO {database}.{rows} ({names}, sign) SELECT {names}, toInt8(1) "
            f"FROM {database}.{banners} WHERE {condition} AND {current(self.demoted)} "
            f"AND (key, mark) NOT IN (SELECT key, mark FROM {database}.{rows} WHERE sign = 1 AND {condition})",
            params,
        )

    # -- putting right -------------------------------------------------------------------------
    def reconcile(self, touched: Where) -> tuple[int, int]:
        """Put right what racing writers left in the services ``touched`` selects: of each, every
        banner but the newest by (t, key) demoted, and of a banner stored more than once every
        copy but the first (by mark) deleted. Two GROUP BYs with a counter a group (no arrays:
        one writer's whole import may be millions of services), which alone find nothing.
        (demoted, deleted)."""
        execute = self.connection.execute
        raced = dict(
            execute(
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
            self.connection.insert(
                tables.written_name("demoted", self.connection.cluster), ["key"], tables.key_rows(keys)
            )
            self.connection.insert("current", tables.CANCEL_COLUMNS, tables.cancel_rows(demote))
        copies = [
            mark
            for (marks,) in execute(
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
        rows = self.connection.execute("SELECT count() FROM current WHERE sign = 1")[0][0]
        slices = 1 + rows // REPAIR_ROWS
        for host, port in self.connection.servers():
            client = self.connection.connect(host, port)
            try:
                for i in range(slices):
                    self.fill_current(client, "modulo(key, %(n)s) = %(i)s", {"n": slices, "i": i})
            finally:
                client.disconnect()
        return said

    def delete_marks(self, marks: list[int]) -> None:
        """Delete the rows and bodies of these marks on every server, and wait until they are gone:
        one mutation a table however many they are (two importers of one file: every banner), its
        marks in a table of their own made for it (18.16 reads no Set in a mutation; a list in the
        SQL is bounded by max_query_size). 18.16 runs a mutation in the background and has no
        setting to wait for it: the mutations made since are watched."""
        connection = self.connection
        helper = f"{connection.database}.deleting_{self._tag}_{time.time_ns()}"
        for host, port in connection.servers():
            client = connection.connect(host, port)
            try:
                since = client.execute("SELECT now()")[0][0]  # the server's clock: which mutations are ours, or later
                client.execute(f"CREATE TABLE {helper} (mark UInt64) ENGINE = MergeTree() ORDER BY mark")
                client.execute(f"INSERT INTO {helper} (mark) VALUES", [(mark,) for mark in marks])
                for table in ("banners", "current", "bodies"):
                    client.execute(
                        f"ALTER TABLE {tables.local_name(table, connection.cluster)} DELETE WHERE mark IN "
                        f"(SELECT mark FROM {helper})"
                    )
                deadline = time.monotonic() + MUTATION_WAIT
                while client.execute(
                    "SELECT count() FROM system.mutations "
                    "WHERE database = %(d)s AND create_time >= %(t)s AND NOT is_done",
                    {"d": connection.database, "t": since},
                )[0][0]:
                    if time.monotonic() > deadline:  # the helper stays: the mutation still reads it
                        raise StoreUnavailable(
                            f"the banner store at {shown(connection.url)} did not delete {len(marks):,} banners "
                            f"stored twice within {MUTATION_WAIT:.0f} s (system.mutations on {host}:{port})"
                        )
                    time.sleep(0.05)
                client.execute(f"DROP TABLE {helper}")
            finally:
                client.disconnect()


@contextmanager
def paused_gc() -> Iterator[None]:
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
    At its end it reconciles the services it touched (the module's docstring says why). ``fresh``:
    the store held nothing when it started (no service to look up)."""

    def __init__(self, writes: Writes, fresh: bool) -> None:
        self.writes = writes
        self.held: list[tuple[Prepared, int]] = []  # with its mark
        self.demoted: list[tuple[int, int, int]] = []  # (service, key, mark) of the banners it replaced
        self.keys: set[int] = set()  # of the banners this writer holds or added
        self.latest: dict[int, tuple[int, int, int]] = {}  # service -> (t, key, mark) of its current banner
        self.addresses: set[bytes] | None = set()  # of the banners it added, while they are few
        self.marks: tuple[int, int] | None = None  # the first and last marks of what it added
        self.kept = False  # whether it keeps the marks it was given, and their order
        self.fresh = fresh
        self._sender = ThreadPoolExecutor(1, thread_name_prefix="clickhouse-insert")
        self._sending: Future | None = None

    def add(self, prepared: list[Prepared], marks: Sequence[int] | None = None) -> list[int]:
        """Hold the banners not stored yet (inserted at the end of the block); their keys.
        ``marks``: theirs, to keep (an upgrade's copy, upgrade.py): then stored in that order."""
        if not self.fresh:
            latest = self.latest
            wanted = {p.service: tables.ip_in(p.doc) for p in prepared if p.service not in latest}
            for service, key, t, mark in self.writes.history_of(wanted):
                self.keys.add(key)
                best = latest.get(service)
                if best is None or (t, key) > best[:2]:
                    latest[service] = (t, key, mark)
        if marks is None:
            marks = self.writes.next_marks(len(prepared))
        else:
            self.kept = True
        if self.addresses is not None:
            self.addresses.update(tables.ip_in(p.doc) for p in prepared)
            if len(self.addresses) > self.writes.connection.lookup_chunk(NUMBER_TEXT + ADDRESS_TEXT):
                self.addresses = None  # more than one look-up names: they are reconciled by their marks
        added: list[int] = []
        with paused_gc():
            self._hold(prepared, marks, added)
        if added:
            lo, hi = (marks[0], marks[-1]) if isinstance(marks, range) else (min(marks), max(marks))
            self.marks = (min(lo, self.marks[0]), max(hi, self.marks[1])) if self.marks else (lo, hi)
        if len(self.held) >= FLUSH_ROWS:
            self.flush()
        return added

    def commit_due(self) -> None:
        """Nothing: what it holds is sent every FLUSH_ROWS and at the block's end."""

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
        writes = self.writes
        if self.fresh:
            writes.reconcile(Where("1", "", {}))
        elif self.addresses is not None and max(
            len(self.latest), len(self.addresses)
        ) <= writes.connection.lookup_chunk(NUMBER_TEXT + ADDRESS_TEXT):
            named = {"s": tuple(self.latest), "ips": sorted(ip.hex() for ip in self.addresses)}
            writes.reconcile(Where(f"{AT_ADDRESSES} AND service IN %(s)s", "", named))
        else:
            assert self.marks is not None
            writes.reconcile(
                Where(
                    "service GLOBAL IN (SELECT service FROM banners WHERE mark >= %(lo)s AND mark <= %(hi)s)",
                    "",
                    {"lo": self.marks[0], "hi": self.marks[1]},
                )
            )

    def _insert(self, batch: Batch) -> None:
        insert = self.writes.connection.insert
        if batch.bodies:
            insert("bodies", tables.BODY_COLUMNS, batch.bodies)
        if batch.rows:
            insert("banners", tables.NAMES, batch.rows)
        if batch.current:
            insert("current", tables.CURRENT_COLUMNS, batch.current)
        if batch.demoted:  # after the rows that demote them: a service is never without a current banner
            insert(tables.written_name("demoted", self.writes.connection.cluster), ["key"], batch.demoted)
        if batch.cancels:  # after the rows they cancel: a merge drops a pair whose -1 comes last
            insert("current", tables.CANCEL_COLUMNS, batch.cancels)


class Batch(NamedTuple):
    """What a writer's flush inserts, as RowBinary rows of each table, in the order inserted."""

    bodies: bytes
    rows: bytes  # of banners
    current: bytes
    demoted: bytes
    cancels: bytes  # of current
