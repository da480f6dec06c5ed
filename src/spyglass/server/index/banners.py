from __future__ import annotations

import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import tantivy

from spyglass.query import Facet, Query
from spyglass.server.index.compiler import compile_query
from spyglass.server.index.fields import FACET_FIELDS, build_schema, document
from spyglass.server.index.records import RecordStore, banner_key

SCHEMA_VERSION = "1"
COMMIT_EVERY = 200_000
PAGE_SIZE = 100


class IndexBusy(RuntimeError):
    """Another process is writing to this index."""


class BannerIndex:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.records = RecordStore(self.data_dir / "banners.db")
        self.schema = build_schema()
        self.path = self.data_dir / "index"
        if self.records.get_meta("schema_version") != SCHEMA_VERSION and self.path.exists():
            shutil.rmtree(self.path)  # an older layout: rebuilt from the records below
            self.records.set_meta("indexed_seq", "0")
        self.path.mkdir(exist_ok=True)
        self.index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
        self.records.set_meta("schema_version", SCHEMA_VERSION)
        self._reloaded = 0.0
        self._write_lock = threading.Lock()

    def close(self) -> None:
        self.records.close()

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
        return compile_query(self.schema, query)

    def count(self, query: Query, facets: list[Facet]) -> tuple[int, dict[str, list[dict]]]:
        searcher = self.searcher()
        tq = self.compile(query)
        total = searcher.search(tq, limit=1, count=True).count
        return total, self._facets(searcher, tq, facets)

    def search(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[dict], dict]:
        """One page of matches, newest first, with the total and the facet counts."""
        searcher = self.searcher()
        tq = self.compile(query)
        result = searcher.search(tq, limit=PAGE_SIZE, count=True, order_by_field="timestamp",
                                 offset=(page - 1) * PAGE_SIZE)
        seqs = searcher.fast_field_values("i_rowid", [address for _, address in result.hits])
        return result.count, self.records.fetch(seqs), self._facets(searcher, tq, facets)

    def host(self, ip: str) -> list[dict]:
        """Every banner of one address, newest first."""
        searcher = self.searcher()
        tq = tantivy.Query.term_query(self.schema, "f_ip", ip)
        hits = searcher.search(tq, limit=10_000, order_by_field="timestamp").hits
        return self.records.fetch(searcher.fast_field_values("i_rowid", [a for _, a in hits]))

    def _facets(self, searcher: tantivy.Searcher, tq: tantivy.Query, facets: list[Facet]) -> dict[str, list[dict]]:
        if not facets:
            return {}
        spec = {f"f{i}": {"terms": {"field": FACET_FIELDS[f.name], "size": f.size,
                                     "segment_size": max(10 * f.size, 1000)}}
                for i, f in enumerate(facets)}
        result = searcher.aggregate(tq, spec)
        out: dict[str, list[dict]] = {}
        for i, f in enumerate(facets):
            buckets = result.get(f"f{i}", {}).get("buckets", [])
            out[f.name] = [{"count": b["doc_count"], "value": _facet_value(b)} for b in buckets]
        return out

    # -- writing ---------------------------------------------------------------------------
    @contextmanager
    def writing(self, threads: int = 1, heap: int = 256_000_000):
        """The one writer of this index; IndexBusy if another process holds it."""
        with self._write_lock:
            try:
                writer = self.index.writer(heap_size=heap, num_threads=threads)
            except ValueError as exc:
                raise IndexBusy(f"the index in {self.data_dir} is being written by another process") from exc
            try:
                self._catch_up(writer)
                batch = Writer(self, writer)
                yield batch
                batch.commit()
                self.records.checkpoint()
            finally:
                writer.wait_merging_threads()

    def _catch_up(self, writer) -> None:
        """Index what the record store has that the index lost (a crash between the two)."""
        indexed = int(self.records.get_meta("indexed_seq", "0"))
        if self.records.last_seq() <= indexed:
            return
        writer.delete_documents_by_query(tantivy.Query.range_query(
            self.schema, "i_rowid", tantivy.FieldType.Integer, indexed + 1, None))
        last = indexed
        for batch in self.records.since(indexed):
            for seq, banner in batch:
                writer.add_json(index_json(seq, document_tail(banner)))
            last = batch[-1][0]
        writer.commit()
        self.records.set_meta("indexed_seq", str(last))
        self._reloaded = 0.0


class Writer:
    """Adds banners to the record store and the index; commits every COMMIT_EVERY and at the end."""

    def __init__(self, owner: BannerIndex, writer) -> None:
        self.owner = owner
        self.writer = writer
        self.pending = 0
        self.last_seq = int(owner.records.get_meta("indexed_seq", "0"))

    def add(self, prepared: list[tuple[int, bytes, bytes]]) -> int:
        """Store and index the new ones of prepared banners (see :func:`prepare`); returns how
        many were new."""
        added = self.owner.records.add(prepared)
        for seq, tail in added:
            self.writer.add_json(index_json(seq, tail))
        if added:
            self.last_seq = added[-1][0]
            self.pending += len(added)
        if self.pending >= COMMIT_EVERY:
            self.commit()
        return len(added)

    def commit(self) -> None:
        if self.pending:
            self.writer.commit()
            self.owner.records.set_meta("indexed_seq", str(self.last_seq))
            self.owner._reloaded = 0.0
            self.pending = 0


def document_tail(banner: dict) -> bytes:
    """The banner's index document as JSON, less its opening brace and rowid (added on store)."""
    return orjson.dumps(document(banner, 0))[len(b'{"i_rowid":0'):]


def index_json(seq: int, tail: bytes) -> str:
    return f'{{"i_rowid":{seq}{tail.decode()}'


def prepare(banner: dict, body: bytes | None = None) -> tuple[int, bytes, bytes]:
    """What the writer needs of a normalized banner: its key, its body (``body`` if the banner
    is exactly those bytes already) and its index document."""
    return banner_key(banner), body if body is not None else orjson.dumps(banner), document_tail(banner)


def _facet_value(bucket: dict[str, Any]) -> Any:
    if "key_as_string" in bucket and isinstance(bucket["key"], int) and bucket["key_as_string"] in ("true", "false"):
        return bucket["key_as_string"]
    return bucket["key"]
