"""The banner store: the one interface through which the backend keeps and reads banners.

The routers, the collector (scans, replays, the demo collector), the importer, the trends host,
the DNS domain lookup, the scanner and the bulk-data builder use these methods and reach nothing
past them, so that another store can stand in for the embedded one (tantivy beside a SQLite record
store, :mod:`spyglass.server.index`, or ClickHouse, :mod:`spyglass.server.clickhouse`; the
factory in :mod:`spyglass.server.stores` picks one). ``tests/store/`` is the contract: every
behaviour the API relies on, run against each store.

What every store keeps:
- banners exactly as they came (their bytes back to the byte), identified by address, port,
  transport, time and hash, so adding one twice adds nothing;
- the *current* banner of each service (address, port, transport): the newest one. Search,
  count and facets see only those (a ``scan:`` filter sees everything a scan collected); the host
  history and trends see every banner;
- what scans saw besides open services (hosts up, ports closed or filtered), apart from the banners
  (:mod:`spyglass.server.banners.seen`): no search, count, facet or trend of banners sees it;
- a *mark* per banner, rising in the order banners were added, from which the bulk-data builder
  learns what is new since it last looked, and a backend that shares the store with others
  follows what any of them collected (the real-time stream, server/stream/follow.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

from spyglass.query import Facet, Query
from spyglass.server.banners.seen import Row

FacetCounts = dict[str, list[dict]]  # name -> [{"count": n, "value": "as a string"}], largest first


class Prepared(NamedTuple):
    """A banner ready to store (made by the store's ``prepare``, in an import's worker processes
    too): its keys, time, body (the bytes as they came) and the store's own form of it."""

    key: int  # address, port, transport, time, hash
    service: int  # address, port, transport
    stamp: str
    body: bytes  # as they came
    doc: bytes  # the store's own form: the embedded index document (JSON less its "{"), a ClickHouse row


@dataclass
class Trends:
    total: int
    matches: list[dict]  # [{month: "YYYY-MM", count}]
    facets: dict[str, list[dict]]  # name -> [{key: month, values: [{count, value}]}]


class StoreBusy(RuntimeError):
    """Another process is writing to the store (an import): try again shortly."""


BANNERS, STATE = "the banner store", "the shared state"  # what a 503 names, and nothing more


class StoreUnavailable(RuntimeError):
    """The store at an address cannot be reached or used. The message says why, for the operator's
    log; ``what`` names the store for a client, who learns nothing of its address (user, host,
    port, database) from a 503."""

    def __init__(self, message: str, what: str = "a store of the backend") -> None:
        super().__init__(message)
        self.what = what


class StoreFull(RuntimeError):
    """The disk that holds the store is full: what was stored is kept, nothing more can be added
    until space is freed. The message says where, and how many banners are stored."""


class TooManyValues(ValueError):
    """The facets asked for would count more values at once than the store allows in one answer
    (tantivy's bucket limit): the client asks fewer facets, fewer values or fewer months. The
    message names the cap; the answer is a 400, not the store's own error as a 500."""


class BannerBatch(Protocol):
    """Banners added within one :meth:`BannerStore.writing` (a bulk load or a collected batch)."""

    def add(self, prepared: list[Prepared]) -> list[int]:
        """Store the banners not stored yet; the keys of those that were new."""
        ...

    def commit_due(self) -> None:
        """Make what was added searchable now if the store is due to: a writer waiting for more
        (an import's worker waiting for its file) calls it, so that what it added waits no longer."""
        ...


class Preparer(Protocol):
    def __call__(self, banner: object, body: bytes | None = None) -> Prepared: ...


class BannerStore(Protocol):
    # -- writing -------------------------------------------------------------------------------
    # What the writer needs of a banner (BadBanner if it lacks a required member); ``body``: the
    # bytes it was read from. A function of the store's class, not of one store: an import runs
    # it in worker processes.
    prepare: Preparer

    def writing(self) -> AbstractContextManager[BannerBatch]:
        """The store's writer for a while; :class:`StoreBusy` if another process holds it. What
        was added is searchable when the block ends (and as it goes, in a long bulk load)."""
        ...

    def known_services(self, services: list[int]) -> set[int]:
        """Of these service keys (:func:`~spyglass.server.banners.keys.service_key`), those the
        store holds a banner of."""
        ...

    # -- reading -------------------------------------------------------------------------------
    def count(self, query: Query, facets: list[Facet]) -> tuple[int, FacetCounts]:
        """How many current banners match, with the facet counts over them."""
        ...

    def search(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[dict], FacetCounts]:
        """One page (100) of the matching current banners, newest first, the total and the facets."""
        ...

    def search_bodies(self, query: Query, facets: list[Facet], page: int = 1) -> tuple[int, list[bytes], FacetCounts]:
        """As :meth:`search`, with each banner's stored bytes (what a response sends as they are)."""
        ...

    def host(self, ip: str) -> list[dict]:
        """Every banner of an address, newest first (its history)."""
        ...

    def current(self, ip: str, port: int, transport: str) -> dict | None:
        """The current banner of a service."""
        ...

    def trends(self, query: Query, facets: list[Facet]) -> Trends:
        """Month by month counts over every banner, from the store's first month to its last."""
        ...

    def under_domain(self, domain: str, history: bool, limit: int) -> list[dict]:
        """The newest banners with a hostname at or under ``domain`` (current ones unless history)."""
        ...

    def total(self) -> int:
        """How many banners the store holds, history included."""
        ...

    # -- the bulk-data builder -----------------------------------------------------------------
    def last_mark(self) -> int: ...

    def added_since(self, mark: int, batch: int) -> Iterator[list[tuple[int, str]]]:
        """``(mark, timestamp)`` of every banner added after ``mark``, in batches, in mark order."""
        ...

    def raw_bodies(self, marks: list[int]) -> dict[int, bytes]:
        """The stored bytes of these banners, exactly as they came."""
        ...

    def marks_since(self, mark: int, limit: int) -> list[int]:
        """The marks of the banners added after ``mark``, the first ``limit`` in mark order: read
        often (the stream's follower), so it reads marks alone, by the store's order of them."""
        ...

    # -- what scans saw besides open services (banners/seen.py) --------------------------------
    def add_seen(self, rows: list[Row]) -> int:
        """Keep the rows not kept yet; how many were new."""
        ...

    def seen_of(self, ip: str) -> list[Row]:
        """Every row of an address."""
        ...

    def seen_in(self, kind: str, states: list[str] | None) -> Iterator[Row]:
        """Every row of ``kind`` ("host" or "port") in one of ``states`` (None: in any)."""
        ...

    # -- the store's own notes (e.g. that it holds the demo data) ------------------------------
    def get_meta(self, name: str, default: str | None = None) -> str | None: ...

    def set_meta(self, name: str, value: str) -> None: ...

    def close(self) -> None: ...


# -- what some stores can do besides: asked with isinstance(store, Capability) ----------------------


@runtime_checkable
class OpensElsewhere(Protocol):
    def opener(self) -> Callable[[], BannerStore] | None:
        """How another process (an import's worker) opens this store to write to it; None when
        this one cannot be opened by another process."""
        ...


@runtime_checkable
class Commits(Protocol):
    def commit(self) -> None:
        """What was added is searchable when this returns (a writer held for more batches)."""
        ...


@runtime_checkable
class LoadsInBulk(Protocol):
    def bulk_load(self) -> AbstractContextManager[None]:
        """A bulk load's settings while the block runs (an import's writer)."""
        ...


@runtime_checkable
class Settles(Protocol):
    def settle(self, wait: float | None = 0.0) -> None:
        """Index what another process's writers left undone; ``wait``: how long for a part held."""
        ...


@runtime_checkable
class ReadsAfresh(Protocol):
    def read_afresh(self) -> None:
        """Another process wrote for this one (its collector's writer): the next search sees it."""
        ...


@runtime_checkable
class KnowsItsDisk(Protocol):
    def full_disk(self, exc: BaseException) -> StoreFull | None:
        """``exc`` as :class:`StoreFull` when it came of a full disk under the store's files."""
        ...
