from __future__ import annotations

import logging
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

import orjson
import tantivy

from spyglass.exactjson import dumps
from spyglass.query import Facet, Query, parse_strict
from spyglass.server.banners.keys import keys, service_key, service_key_of
from spyglass.server.banners.shape import BadBanner, ip_address, normalize
from spyglass.server.banners.store import Prepared, StoreBusy, Trends
from spyglass.server.index.aside import aside, searching
from spyglass.server.index.codec import shared
from spyglass.server.index.compiler import compile_query
from spyglass.server.index.records import RecordStore
from spyglass.server.index.schema import build_schema, facet_terms, facet_value, index_document, open_index
from spyglass.server.index.trends import TrendsIndex
from spyglass.server.sqlite import LostDatabase, is_empty, make_private

log = logging.getLogger("spyglass.index")

SCHEMA_VERSION = "4"
# Banners stored but not yet committed to the index are invisible to search until the next
# commit (or the catch-up when the index is next opened, after a crash): commit often enough that
# a killed import leaves most of its work searchable, rarely enough that commits cut few segments
# short (each commit writes the one being filled; with 50,000 a commit, when segments were cut by
# commits alone, merging cost a tenth of the import's time).
COMMIT_EVERY = 200_000
# tantivy's indexing memory: a segment is written each time it fills. 256 MB filled only on big
# imports, so an import's memory grew with its file; at 32 MB, 1 GB of nmap XML imports as fast
# (45-47 s), its extra segments merged meanwhile (bench/import_scans.py: memory near a tenth's).
WRITER_HEAP = 32_000_000
FEED_AHEAD = 4  # batches stored but not yet given to the index, at most
PAGE_SIZE = 100
# What a document keeps if tantivy refuses the whole of it (it should never: fields.document types
# every value), so that one banner can never block the index.
CORE_FIELDS = ("i_rowid", "b_current", "timestamp", "ip", "i_port", "f_ip", "e_transport")


def hit_count(result: tantivy.SearchResult) -> int:
    return result.count  # type: ignore[attr-defined]  # set when searched with count=True; the stub omits it


def rowids(searcher: tantivy.Searcher, addresses: list) -> list[int]:
    """The record seqs of hits (every document has an integer ``i_rowid``)."""
    return cast(list[int], searcher.fast_field_values("i_rowid", addresses))


def document_tail(banner: dict, shape) -> bytes:
    """The banner's index document as JSON, less its opening brace (rowid and flag come first)."""
    doc = index_document(banner, shape)
    try:
        return orjson.dumps(doc)[1:]
    except TypeError:  # a lone surrogate (wild banners hold them): U+FFFD in the index, kept in the body
        return orjson.dumps({name: _valid(value) for name, value in doc.items()})[1:]


def _valid(value: Any) -> Any:
    """A document's value (text, a number, a flag or a list of text) as valid Unicode."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, list):
        return [_valid(v) for v in value]
    return value


def _stamp(banner: dict) -> str | None:
    """A stored banner's timestamp; None for one set aside (an older release stored it)."""
    try:
        return normalize(banner).stamp
    except BadBanner:
        return None


def prepare(banner: object, body: bytes | None = None) -> Prepared:
    """What the writer needs of a banner: its keys, its body (``body`` if given: the bytes it
    was read from) and its index document; BadBanner if a required member is missing."""
    return _prepare(banner, body, bytes)


def _prepare(banner: object, body: bytes | None, pack: Callable[[bytes], bytes]) -> Prepared:
    shape = normalize(banner)
    assert isinstance(banner, dict)
    return Prepared(
        *keys(banner, shape),
        shape.stamp,
        pack(body if body is not None else dumps(banner)),
        document_tail(banner, shape),
    )


@dataclass(frozen=True)
class PackingPrepare:
    """:func:`prepare`, and the body compressed with the store's dictionary (codec.py) when it has
    one: what an import's worker processes run, so that the writer does not compress. Picklable:
    it carries the dictionary, not the store."""

    dictionary: bytes | None

    def __call__(self, banner: object, body: bytes | None = None) -> Prepared:
        if self.dictionary is None:
            return prepare(banner, body)
        return _prepare(banner, body, shared(self.dictionary).pack)


def indexed(path: Path) -> int:
    """The documents the tantivy index in ``path`` holds, by its meta.json (0: none, or unreadable)."""
    try:
        return sum(int(segment["max_doc"]) for segment in orjson.loads((path / "meta.json").read_bytes())["segments"])
    except (OSError, ValueError, TypeError, KeyError):
        return 0


class BannerIndex:
    """The embedded banner store (see :mod:`spyglass.server.banners.store`): tantivy beside the record store."""

    prepare = staticmethod(prepare)

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        make_private(self.data_dir)
        self.path = self.data_dir / "index"
        records = self.data_dir / "banners.db"
        if is_empty(records) and (held := indexed(self.path)):  # the index is rebuilt from it, never the reverse
            raise LostDatabase(records, f"the search index beside it holds {held:,} banners")
        self.records = RecordStore(records)
        self.schema = build_schema()
        if self.records.get_meta("schema_version") != SCHEMA_VERSION or not self.path.exists():
            shutil.rmtree(self.path, ignore_errors=True)  # an older layout, or lost: rebuilt from the records
            self.records.set_meta("indexed_seq", "0")
        self.path.mkdir(exist_ok=True)
        try:
            self.index = open_index(self.schema, self.path)
            self.index.searcher()  # opens every segment: a damaged file fails here, not in a search
        except ValueError as exc:
            # The index holds nothing the records do not: rebuild it rather than refuse to start.
            log.warning("the search index in %s is unreadable (%s): rebuilding it from the records", self.path, exc)
            shutil.rmtree(self.path, ignore_errors=True)
            self.path.mkdir()
            self.records.set_meta("indexed_seq", "0")
            self.index = open_index(self.schema, self.path)
        self.records.set_meta("schema_version", SCHEMA_VERSION)
        self._reloaded = 0.0
        self._write_lock = threading.Lock()
        self._trends: TrendsIndex | None = None
        if self.behind():
            try:  # what the records hold is searchable from the start (e.g. after a killed import)
                with self.writing():
                    pass
            except StoreBusy:
                pass  # another process is importing: it catches up itself

    def close(self) -> None:
        self.records.close()

    def bulk_load(self) -> AbstractContextManager[None]:
        """A bulk load's settings while the block runs (the records' page cache: records.py)."""
        return self.records.bulk()

    def preparer(self) -> PackingPrepare:
        """What an import's workers prepare banners with (see :mod:`spyglass.server.banners.importer`)."""
        return PackingPrepare(self.records.dictionary())

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
    def searcher(self) -> tantivy.Searcher:
        now = time.monotonic()
        if now - self._reloaded > 1.0:  # pick up other writers' commits, at most once a second
            self.index.reload()
            self._reloaded = now
        return self.index.searcher()

    def total(self) -> int:
        return self.searcher().num_docs

    def compile(self, query: Query) -> tantivy.Query:
        """The query over the current banner of each service (what search, count and facets see);
        with a ``scan:`` filter, over every banner: a scan's results are what it collected, also
        where a later banner of the same service has replaced them."""
        of_a_scan = any(f.name == "scan" and not f.negated for f in query.filters)
        return compile_query(self.schema, query, current=not of_a_scan)

    def behind(self) -> bool:
        """Whether the records hold banners (or demotions) the index has not committed."""
        return self.records.last_seq() > self.records.indexed_seq() or bool(self.records.demoted())

    def count(self, query: Query, facets: list[Facet]) -> tuple[int, dict[str, list[dict]]]:
        searcher = self.searcher()
        tq = self.compile(query)
        with searching() as alone:
            counting = self._facets_aside(searcher, tq, facets, alone)
            total = hit_count(searcher.search(tq, limit=1, count=True))
            return total, counting.result()

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
        searcher = self.searcher()
        tq = self.compile(query)
        counting = self._facets_aside(searcher, tq, facets, alone)
        result = searcher.search(
            tq, limit=PAGE_SIZE, count=True, order_by_field="timestamp", offset=(page - 1) * PAGE_SIZE
        )
        return hit_count(result), rowids(searcher, [address for _, address in result.hits]), counting

    def host(self, ip: str) -> list[dict]:
        """Every banner of one address, newest first."""
        try:
            address = str(ip_address(ip))
        except ValueError:
            return []
        searcher = self.searcher()
        tq = tantivy.Query.term_query(self.schema, "ip", address)  # history too: current or not
        hits = searcher.search(tq, limit=10_000, order_by_field="timestamp").hits
        return self.records.fetch(rowids(searcher, [a for _, a in hits]))

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
        searcher = self.searcher()
        hits = searcher.search(tq, limit=limit, order_by_field="timestamp").hits
        return self.records.fetch(rowids(searcher, [address for _, address in hits]))

    def _facets_aside(
        self, searcher: tantivy.Searcher, tq: tantivy.Query, facets: list[Facet], alone: bool
    ) -> Future[dict[str, list[dict]]]:
        """The facets, counted while this thread finds the matches when the search is ``alone``
        (aside.py; a search page with facets is so answered sooner, by hand)."""
        return aside(alone, self._facets, searcher, tq, facets) if facets else aside(False, dict)

    def _facets(self, searcher: tantivy.Searcher, tq: tantivy.Query, facets: list[Facet]) -> dict[str, list[dict]]:
        if not facets:
            return {}
        result = searcher.aggregate(tq, facet_terms(enumerate(facets)))
        out: dict[str, list[dict]] = {}
        for i, f in enumerate(facets):
            buckets = result.get(f"f{i}", {}).get("buckets", [])
            out[f.name] = [{"count": b["doc_count"], "value": facet_value(b)} for b in buckets]
        return out

    # -- writing ---------------------------------------------------------------------------
    @contextmanager
    def writing(self, threads: int = 1, heap: int = WRITER_HEAP):
        """The one writer of this index; StoreBusy if another process holds it."""
        with self._write_lock:
            try:
                writer = self.index.writer(heap_size=heap, num_threads=threads)
            except ValueError as exc:
                raise StoreBusy(f"the index in {self.data_dir} is being written by another process") from exc
            try:
                self._catch_up(writer)
                batch = Writer(self, writer)
                try:
                    yield batch
                except BaseException:
                    batch.close(abandon=True)  # what was stored is indexed at the next start
                    raise
                batch.commit()
                self.records.checkpoint()
            finally:
                writer.wait_merging_threads()

    def _catch_up(self, writer) -> None:
        """Index what the record store has that the index lost (a crash between the two)."""
        indexed = self.records.indexed_seq()
        if not self.behind():
            return
        writer.delete_documents_by_query(
            tantivy.Query.range_query(self.schema, "i_rowid", tantivy.FieldType.Integer, indexed + 1, None)
        )
        last = indexed
        for batch in self.records.since(indexed):
            shaped = []
            for seq, banner in batch:
                try:
                    shaped.append((seq, banner, normalize(banner)))
                except BadBanner as exc:  # stored by an older release's rules: nothing to index it by
                    log.warning("stored banner %d set aside, it is no longer readable: %s", seq, exc)
            current = self.records.current_seqs([service_key(shape) for _, _, shape in shaped])
            for seq, banner, shape in shaped:
                add_document(writer, seq, seq in current, document_tail(banner, shape))
            last = batch[-1][0]
        demoted = self.records.demoted()
        self._demote(writer, demoted)
        writer.commit()
        self.records.indexed(last, demoted)
        self._reloaded = 0.0

    def _demote(self, writer, demoted: list[int]) -> None:
        """Re-index banners a newer one replaced as not current."""
        for i in range(0, len(demoted), 1000):
            chunk = demoted[i : i + 1000]
            for seq, banner in self.records.bodies(chunk).items():
                try:
                    tail = document_tail(banner, normalize(banner))
                except BadBanner:
                    continue  # unreachable: a demoted banner was current, so it was readable
                writer.delete_documents_by_term("i_rowid", seq)
                add_document(writer, seq, False, tail)


class Writer:
    """Adds banners to the record store and the index; commits every COMMIT_EVERY and at the end.

    The records are written in the caller's thread and the index fed in another (tantivy parses
    and indexes a document without the GIL, as SQLite steps without it), so the two overlap: the
    caller stores the next batch while the last one is indexed. Only the feeding thread touches
    tantivy's writer until :meth:`close`. The banners a batch demoted are re-indexed with it, not
    all at the commit, which would leave the import's last seconds to one thread.
    """

    def __init__(self, owner: BannerIndex, writer) -> None:
        self.owner = owner
        self.writer = writer
        self.pending = 0
        self.last_seq = owner.records.indexed_seq()
        self._work: queue.Queue = queue.Queue(maxsize=FEED_AHEAD)
        self._failure: BaseException | None = None
        self._abandon = False
        self._feeder = threading.Thread(target=self._feed, name="spyglass-index-feed", daemon=True)
        self._feeder.start()

    def add(self, prepared: list[Prepared]) -> list[int]:
        """Store and index the new ones of prepared banners (see :func:`prepare`); returns the
        keys of those that were new."""
        self._raise_failure()
        added, demoted = self.owner.records.add(prepared)
        if added:
            self._put(_Batch([(seq, current, p.doc) for seq, current, p in added], demoted))
            self.last_seq = added[-1][0]
            self.pending += len(added)
        if self.pending >= COMMIT_EVERY:
            self._request_commit()
        return [p.key for _, _, p in added]

    def commit(self) -> None:
        """Everything added is committed to the index when this returns."""
        self._request_commit()
        self.close()
        self._raise_failure()

    def close(self, abandon: bool = False) -> None:
        """Let the feeding thread finish what it was given (or drop it: ``abandon``), and end it."""
        self._abandon = abandon
        if self._feeder.is_alive():
            self._work.put(None)
            self._feeder.join()

    def _request_commit(self) -> None:
        demoted = self.owner.records.demoted()
        if self.pending or demoted:
            self._put(_Commit(self.last_seq, demoted))
            self.pending = 0

    def _put(self, item) -> None:
        while True:  # never wait forever on a feeder that died
            try:
                self._work.put(item, timeout=0.5)
                return
            except queue.Full:
                self._raise_failure()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise RuntimeError("indexing the stored banners failed: they are indexed at the next start") from (
                self._failure
            )

    def _feed(self) -> None:
        demoted_since_commit: set[int] = set()  # re-indexed with their batch
        while (item := self._work.get()) is not None:
            if self._failure is not None or self._abandon:
                continue  # drain: the caller learns of a failure at its next call
            try:
                if isinstance(item, _Batch):
                    for seq, current, doc in item.docs:
                        add_document(self.writer, seq, current, doc)
                    self.owner._demote(self.writer, item.demoted)
                    demoted_since_commit.update(item.demoted)
                else:  # the store's list: also what another writer demoted (none while this one holds the index)
                    self.owner._demote(self.writer, [s for s in item.demoted if s not in demoted_since_commit])
                    self.writer.commit()
                    self.owner.records.indexed(item.last_seq, item.demoted)
                    self.owner._reloaded = 0.0
                    demoted_since_commit.clear()
            except BaseException as exc:  # kept for the caller's thread
                self._failure = exc


class _Batch(NamedTuple):
    """Stored banners to index (seq, current, document), and the seqs of those they demoted."""

    docs: list[tuple[int, bool, bytes]]
    demoted: list[int]


class _Commit(NamedTuple):
    """Commit everything fed before; ``demoted``: every banner the store lists as demoted since the
    last commit (the feeder re-indexes those it has not), cleared once committed."""

    last_seq: int
    demoted: list[int]


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
