from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from pathlib import Path

import orjson
import tantivy

from spyglass.exactjson import dumps
from spyglass.local.datalock import served_by
from spyglass.query import Facet, Query, parse_strict
from spyglass.server.banners.keys import keys, service_key, service_key_of
from spyglass.server.banners.shape import BadBanner, ip_address, normalize
from spyglass.server.banners.store import Prepared, StoreBusy, StoreFull, Trends
from spyglass.server.index import merge
from spyglass.server.index.aside import aside, searching
from spyglass.server.index.compiler import compile_query
from spyglass.server.index.records import RecordStore
from spyglass.server.index.schema import build_schema, document_tail, facet_value
from spyglass.server.index.seen import SeenRows
from spyglass.server.index.shards import WAIT_STEP, Shards, ShardsBusy, documents
from spyglass.server.index.trends import TrendsIndex
from spyglass.server.state.datadir import make_private
from spyglass.server.state.sqlite.database import LostDatabase, disk_full, is_empty

log = logging.getLogger("spyglass.index")

SCHEMA_VERSION = "6"  # 5: the index in shards (shards.py); 6: i_service (trends, tool tags)
# Banners not yet committed to the index are invisible to search. Each commit leaves a segment,
# which costs every search: a writer commits every COMMIT_EVERY, and, while a backend serves the
# data dir (its searches see an import within a second), what it adds at once when its last commit
# is COMMIT_AFTER old, else at its next add past that (or commit_due).
COMMIT_EVERY = 200_000
COMMIT_AFTER = 1.0  # seconds
# tantivy's indexing memory: a segment is written each time it fills. A larger heap filled only on big
# imports, so an import's memory grew with its file; this one imports as fast (bench/import_scans.py).
WRITER_HEAP = 32_000_000
PAGE_SIZE = 100
# What a document keeps if tantivy refuses the whole of it (it should never: fields.document types
# every value), so that one banner can never block the index.
CORE_FIELDS = ("i_rowid", "b_current", "timestamp", "ip", "i_port", "f_ip", "e_transport", "i_service")


def _stamp(banner: dict) -> str | None:
    """A stored banner's timestamp; None for one set aside (an older release stored it)."""
    try:
        return normalize(banner).stamp
    except BadBanner:
        return None


def prepare(banner: object, body: bytes | None = None) -> Prepared:
    """What the writer needs of a banner: its keys, its body (``body`` if given: the bytes it
    was read from) and its index document; BadBanner if a required member is missing. The body is
    compressed by the record store, a batch at a time (records.py), not here: zstd's tables stay
    in the cache for a batch, where between banners the rest of this work evicted them."""
    shape = normalize(banner)
    assert isinstance(banner, dict)
    key, service = keys(banner, shape)
    return Prepared(
        key, service, shape.stamp, body if body is not None else dumps(banner), document_tail(banner, shape, service)
    )


class BannerIndex(SeenRows):
    """The embedded store (banners/store.py): tantivy in shards (shards.py), records, what scans saw (seen.py)."""

    prepare = staticmethod(prepare)

    def __init__(self, data_dir: Path, catch_up: bool = True) -> None:
        """``catch_up``: index what the records hold that the shards no process writes lack (after
        a crash, or an older layout); an import's worker, which only writes, leaves that to others."""
        self.data_dir = Path(data_dir)
        make_private(self.data_dir)
        self.path = self.data_dir / "index"
        records = self.data_dir / "banners.db"
        if is_empty(records) and (held := documents(self.path)):
            # the index is rebuilt from the records, never the reverse
            raise LostDatabase(records, f"the search index beside it holds {held:,} banners")
        self.records = RecordStore(records)
        self.schema = build_schema()
        if self.records.get_meta("schema_version") != SCHEMA_VERSION or not self.path.exists():
            self._rebuild()  # an older layout, or lost: rebuilt from the records
        try:
            self.shards = Shards(self.path, self.schema)
            self.shards.check()
        except ValueError as exc:
            # The index holds nothing the records do not: rebuild it rather than refuse to start.
            log.warning("the search index in %s is unreadable (%s): rebuilding it from the records", self.path, exc)
            self._rebuild()
            self.shards = Shards(self.path, self.schema)
        self.records.set_meta("schema_version", SCHEMA_VERSION)
        self._write_lock = threading.Lock()
        self._trends: TrendsIndex | None = None
        if catch_up:  # what the records hold is searchable from the start (e.g. after a killed import)
            self.settle()

    def _rebuild(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir()
        self.records.forget_shards()

    def close(self) -> None:
        self.records.close()

    def read_afresh(self) -> None:
        self.shards.stale()

    def bulk_load(self) -> AbstractContextManager[None]:
        """A bulk load's settings while the block runs (the records' page cache: records.py)."""
        return self.records.bulk()

    def opener(self) -> Callable[[], BannerIndex]:
        """How another process (an import's worker) opens this store to write to it."""
        return partial(BannerIndex, self.data_dir, catch_up=False)

    def full_disk(self, exc: BaseException) -> StoreFull | None:
        """``exc`` as :class:`StoreFull` when it came of a full disk under the data dir."""
        if not disk_full(exc, self.data_dir):
            return None
        return StoreFull(f"no space left on {self.data_dir}: {self.records.count():,} banners are stored")

    def get_meta(self, name: str, default: str | None = None) -> str | None:
        return self.records.get_meta(name, default)

    def set_meta(self, name: str, value: str) -> None:
        self.records.set_meta(name, value)

    def known_services(self, services: list[int]) -> set[int]:
        return self.records.known_services(services)

    def last_mark(self) -> int:
        return self.records.last_seq()

    def added_since(self, mark: int, batch: int) -> Iterator[list[tuple[int, str]]]:
        for banners in self.records.since(mark, batch):
            yield [(seq, stamp) for seq, banner in banners if (stamp := _stamp(banner))]

    def raw_bodies(self, marks: list[int]) -> dict[int, bytes]:
        return self.records.raw_bodies(marks)

    def marks_since(self, mark: int, limit: int) -> list[int]:
        return self.records.seqs_since(mark, limit)

    # -- reading ---------------------------------------------------------------------------
    def searchers(self) -> list[tantivy.Searcher]:
        return self.shards.searchers()

    def total(self) -> int:
        return sum(s.num_docs for s in self.searchers())

    def compile(self, query: Query) -> tantivy.Query:
        """The query over the current banner of each service (what search, count and facets see);
        with a ``scan:`` filter, over every banner: a scan's results are what it collected, also
        where a later banner of the same service has replaced them."""
        of_a_scan = any(f.name == "scan" and not f.negated for f in query.filters)
        if of_a_scan:
            return compile_query(self.schema, query)
        compiled = compile_query(self.schema, query, current=True, tool_services=self.tool_services)
        replaced = self.records.replaced()  # (none but while two writers' commits are apart)
        if not replaced:
            return compiled
        tq = tantivy.Query
        return tq.boolean_query(
            [
                (tantivy.Occur.Must, compiled),
                (tantivy.Occur.MustNot, tq.term_set_query(self.schema, "i_rowid", replaced)),
            ]
        )

    def tool_services(self, tags: list[str]) -> list[int]:
        """The services of which a banner no longer current holds one of these tool tags (a
        current one holding it matches by its own tag: those need no look-up)."""
        tq = tantivy.Query
        earlier = tq.boolean_query(
            [
                (tantivy.Occur.Must, tq.term_set_query(self.schema, "e_tag", tags)),
                (tantivy.Occur.Must, tq.term_query(self.schema, "b_current", False)),
            ]
        )
        return merge.services(self.searchers(), earlier)

    def behind(self) -> bool:
        """Whether the records hold banners (or demotions) a shard has not committed."""
        upto = self.records.last_seq()
        return any(self.records.behind(n, upto) for n in self.records.shards()) or bool(self.records.demoted())

    def count(self, query: Query, facets: list[Facet]) -> tuple[int, dict[str, list[dict]]]:
        searchers = self.searchers()
        tq = self.compile(query)
        with searching() as alone:
            counting = self._facets_aside(searchers, tq, facets, alone)
            return merge.counted(searchers, tq), counting.result()

    def search(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[dict], dict]:
        """One page of matches, newest first, with the total and the facet counts."""
        with searching() as alone:
            total, seqs, counting = self._page(query, facets, page, alone)
            return total, self.records.fetch(seqs), counting.result()

    def search_bodies(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[bytes], dict]:
        with searching() as alone:
            total, seqs, counting = self._page(query, facets, page, alone)
            bodies = self.records.raw_bodies(seqs)
            return total, [bodies[s] for s in seqs if s in bodies], counting.result()

    def _page(
        self, query: Query, facets: list[Facet], page: int, alone: bool
    ) -> tuple[int, list[int], Future[dict[str, list[dict]]]]:
        """The total and the page's records; the facets as they are counted (the caller reads the
        records meanwhile: SQLite and zstd let go of the GIL too)."""
        searchers = self.searchers()
        tq = self.compile(query)
        counting = self._facets_aside(searchers, tq, facets, alone)
        total, seqs = merge.newest(searchers, tq, PAGE_SIZE, (page - 1) * PAGE_SIZE, count=True, alone=alone)
        return total, seqs, counting

    def host(self, ip: str) -> list[dict]:
        """Every banner of one address, newest first."""
        try:
            address = str(ip_address(ip))
        except ValueError:
            return []
        tq = tantivy.Query.term_query(self.schema, "ip", address)  # history too: current or not
        return self.records.fetch(merge.newest(self.searchers(), tq, 10_000)[1])

    def current(self, ip: str, port: int, transport: str) -> dict | None:
        seqs = self.records.current_seqs([service_key_of(ip, port, transport)])
        found = self.records.fetch(sorted(seqs))
        return found[0] if found else None

    def trends(self, query: Query, facets: list[Facet]) -> Trends:
        if self._trends is None:
            self._trends = TrendsIndex(self)
        return self._trends.search(query, facets)

    def under_domain(self, domain: str, history: bool, limit: int) -> list[dict]:
        tq = compile_query(self.schema, parse_strict(f"hostname:{domain}"), current=not history)
        return self.records.fetch(merge.newest(self.searchers(), tq, limit)[1])

    def _facets_aside(
        self, searchers: list[tantivy.Searcher], tq: tantivy.Query, facets: list[Facet], alone: bool
    ) -> Future[dict[str, list[dict]]]:
        """The facets, counted while this thread finds the matches when the search is ``alone``
        (aside.py; a search page with facets is so answered sooner, by hand)."""
        return aside(alone, self._facets, searchers, tq, facets, alone) if facets else aside(False, dict)

    def _facets(
        self, searchers: list[tantivy.Searcher], tq: tantivy.Query, facets: list[Facet], alone: bool
    ) -> dict[str, list[dict]]:
        if not facets:
            return {}
        result = merge.facets(searchers, tq, facets, alone)
        out: dict[str, list[dict]] = {}
        for i, f in enumerate(facets):
            buckets = result.get(f"f{i}", {}).get("buckets", [])
            out[f.name] = [{"count": b["doc_count"], "value": facet_value(b)} for b in buckets]
        return out

    # -- writing ---------------------------------------------------------------------------
    @contextmanager
    def writing(self, threads: int = 1, heap: int = WRITER_HEAP, wait: float | None = None, shard: int | None = None):
        """A writer of one shard no other process holds (of ``shard``, if given), for the block (a
        second writer in this process waits for the first). Waits while every shard is held;
        StoreBusy after ``wait`` seconds (None: never)."""
        with self._write_lock:
            try:
                number, writer = self.shards.take(shard, heap, threads, wait)
            except ShardsBusy as exc:
                raise StoreBusy(str(exc)) from exc
            try:
                self._catch_up(number, writer)
                batch = Writer(self, number, writer)
                yield batch  # (on an error, what was stored is indexed when its shard is next taken)
                batch.commit()
            finally:
                writer.wait_merging_threads()
            self._settle(skip=number)

    def settle(self, wait: float | None = 0.0) -> None:
        """Index what the records hold that shards no process writes have not (a crash), and apply
        their demotions (another shard's writer demoted their banners); a shard held by another
        writer is left to it. ``wait``: how long to wait for each shard held (None: as long as it takes)."""
        with self._write_lock:
            self._settle(wait=wait)
        self.shards.stale()
        self.records.checkpoint()

    def _settle(self, skip: int | None = None, wait: float | None = 0.0) -> None:
        upto = self.records.last_seq()
        for number in sorted(set(self.records.shards()) | set(self.records.demoted_shards())):
            if number == skip or not self.records.behind(number, upto):
                continue
            if (writer := self._writer_while_behind(number, upto, wait)) is None:
                continue  # its writer caught it up, or catches it up
            try:
                self._catch_up(number, writer)
            finally:
                writer.wait_merging_threads()

    def _writer_while_behind(self, number: int, upto: int, wait: float | None):
        """Shard ``number``'s writer, to catch it up; None once the process holding it did (its
        commits apply what it lacks), or after ``wait`` seconds (None: as long as it takes). A
        backend's collector holds its shard while it collects: an import beside it waited for it
        to let go, 5 s (trial 30), where its next commit, within a second, did what was waited for."""
        deadline = None if wait is None else time.monotonic() + wait
        while True:
            try:
                return self.shards.take(number, WRITER_HEAP, 1, 0)[1]
            except ShardsBusy:
                pass
            if not self.records.behind(number, upto) or (deadline is not None and time.monotonic() >= deadline):
                return None
            time.sleep(WAIT_STEP)

    def _catch_up(self, shard: int, writer) -> None:
        """Index what the record store has for ``shard`` that it lost (a crash between the two),
        and its demotions; or, when it lacks nothing, move its mark up to the records' last seq
        (so that the next look reads only what came after)."""
        upto = self.records.last_seq()
        indexed = self.records.indexed_seq(shard)
        if not self.records.behind(shard, upto):
            if indexed < upto or shard not in self.records.shards():  # listed: caught up after a crash
                self.records.indexed(shard, upto, [])
            return
        writer.delete_documents_by_query(
            tantivy.Query.range_query(self.schema, "i_rowid", tantivy.FieldType.Integer, indexed + 1, None)
        )
        for batch in self.records.since(indexed, shard=shard):
            shaped = []
            for seq, banner in batch:
                try:
                    shaped.append((seq, banner, normalize(banner)))
                except BadBanner as exc:  # stored by an older release's rules: nothing to index it by
                    log.warning("stored banner %d set aside, it is no longer readable: %s", seq, exc)
            services = [service_key(banner, shape) for _, banner, shape in shaped]
            current = self.records.current_seqs(services)
            for (seq, banner, shape), service in zip(shaped, services, strict=True):
                add_document(writer, seq, seq in current, document_tail(banner, shape, service))
        demoted = self.records.demoted(shard)
        self._demote(writer, demoted)
        writer.commit()
        self.records.indexed(shard, upto, demoted)
        self.shards.stale()

    def _demote(self, writer, demoted: list[int]) -> None:
        """Re-index banners a newer one replaced as not current."""
        for i in range(0, len(demoted), 1000):
            chunk = demoted[i : i + 1000]
            for seq, banner in self.records.bodies(chunk).items():
                try:
                    shape = normalize(banner)
                    tail = document_tail(banner, shape, service_key(banner, shape))
                except BadBanner:
                    continue  # unreachable: a demoted banner was current, so it was readable
                writer.delete_documents_by_term("i_rowid", seq)
                add_document(writer, seq, False, tail)


class Writer:
    """Adds banners to the record store and to one shard of the index; commits every COMMIT_EVERY,
    at the end, and, while a backend serves the data dir, at most every COMMIT_AFTER (what is added
    past that at once: a batch waited for the next one, seconds during an import, trial 29).

    Documents are given to tantivy in the caller's thread: tantivy indexes them in threads of its
    own, without the GIL. A Python thread that fed it instead waited for the GIL after every
    document while the caller's thread ran Python (tantivy-py lets the GIL go within each add, and
    a thread that wants it back waits for the interpreter's switch interval, 5 ms, while another
    runs Python): it fed only while the caller waited for it, one after the other
    (docs/benchmarks.md). The banners a batch demoted are re-indexed with it.
    """

    def __init__(self, owner: BannerIndex, shard: int, writer) -> None:
        self.owner, self.shard, self.writer = owner, shard, writer
        self.pending = 0
        self._committed = float("-inf")  # when it last committed (time.monotonic)
        self.served = served_by(owner.data_dir) is not None  # a backend's searches wait for what it adds
        self._demoted_since_commit: set[int] = set()  # re-indexed with their batch

    def add(self, prepared: list[Prepared]) -> list[int]:
        """Store and index the new ones of prepared banners (see :func:`prepare`); returns the
        keys of those that were new."""
        added, demoted = self.owner.records.add(prepared, self.shard)
        if added:
            for seq, current, p in added:
                add_document(self.writer, seq, current, p.doc)
            self.owner._demote(self.writer, demoted)
            self._demoted_since_commit.update(demoted)
            self.pending += len(added)
        if self.pending >= COMMIT_EVERY:
            self._commit()
        else:
            self.commit_due()
        return [p.key for _, _, p in added]

    def commit_due(self) -> None:
        """Commit what was added while a backend serves the data dir, if the last commit is
        COMMIT_AFTER old (a writer waiting for more calls it, so that none waits with it)."""
        if self.served and self.pending and time.monotonic() - self._committed >= COMMIT_AFTER:
            self._commit()

    def commit(self) -> None:
        """Everything added is committed to the index when this returns."""
        self._commit(always=True)

    def _commit(self, always: bool = False) -> None:
        # Read after this writer's last add: every banner of its shard up to it is in what it added;
        # the store's list for this shard also holds what other writers demoted in it
        demoted = self.owner.records.demoted(self.shard)
        if not (self.pending or demoted or always):
            return
        last_seq = self.owner.records.last_seq()
        self.owner._demote(self.writer, [s for s in demoted if s not in self._demoted_since_commit])
        self.writer.commit()
        self.owner.records.indexed(self.shard, last_seq, demoted)
        self.owner.shards.stale()
        self._demoted_since_commit.clear()
        self.pending, self._committed = 0, time.monotonic()


def index_json(seq: int, current: bool, tail: bytes) -> str:
    return f'{{"i_rowid":{seq},"b_current":{"true" if current else "false"},{tail.decode()}'


def add_document(writer, seq: int, current: bool, tail: bytes) -> None:
    """Index one stored banner. One the index cannot hold even in its core fields (an address
    shape.py now refuses, stored by an older release) is set aside, logged: it stays in the
    records, out of search, and never fails the batch, the writer or the next start."""
    text = index_json(seq, current, tail)
    try:
        writer.add_json(text)
    except ValueError:  # never expected (fields.document types every value); keep what is sure
        core = {k: v for k, v in orjson.loads(text).items() if k in CORE_FIELDS}
        try:
            writer.add_json(orjson.dumps(core).decode())
        except ValueError as exc:
            log.warning("stored banner %d set aside, the index cannot hold it: %s", seq, exc)
