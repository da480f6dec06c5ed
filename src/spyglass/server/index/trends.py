"""Trends: month-by-month counts of services over the index's whole history (every banner,
current or not; a service seen in a month counts once in it).

One tantivy aggregation answers a request: a ``range`` bucket per calendar month on the
``timestamp`` fast field (a ``date_histogram`` only takes fixed intervals, and months are not
fixed), each with a ``terms`` sub-aggregation per facet. The months run from the first to the
last month of the whole index, not of the matches, so every query of one index answers the same
months (two queries chart on one axis) and months without matches answer 0.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

import tantivy

from spyglass.query import Facet, Query
from spyglass.server.banners.store import Trends
from spyglass.server.banners.trends import months
from spyglass.server.index.aside import aside, each, searching
from spyglass.server.index.compiler import compile_query
from spyglass.server.index.merge import merged_buckets
from spyglass.server.index.schema import SERVICES, aggregate, facet_terms, facet_value

NS = 1_000_000_000  # tantivy's date aggregations count nanoseconds


class Searchable(Protocol):
    """What trends read of the index (a :class:`~spyglass.server.index.store.BannerIndex`)."""

    schema: tantivy.Schema

    def searchers(self) -> list[tantivy.Searcher]: ...


class TrendsIndex:
    """Trends over a :class:`~spyglass.server.index.store.BannerIndex` (which it only reads)."""

    def __init__(self, index: Searchable) -> None:
        self.index = index
        self._span: tuple[int, tuple[datetime, datetime] | None] | None = None

    def span(self, searchers: list[tantivy.Searcher]) -> tuple[datetime, datetime] | None:
        """The first and last banner times of the whole index; None when it is empty. Cached
        while the document count holds (new banners change it; a demotion re-adds the same one)."""
        docs = sum(s.num_docs for s in searchers)
        if self._span is None or self._span[0] != docs:
            firsts, lasts = [], []
            spec = {"first": {"min": {"field": "timestamp"}}, "last": {"max": {"field": "timestamp"}}}
            for searcher in searchers:
                if searcher.num_docs:
                    result = searcher.aggregate(tantivy.Query.all_query(), spec)
                    first, last = result["first"]["value"], result["last"]["value"]
                    if first is not None and last is not None:
                        firsts.append(first)
                        lasts.append(last)
            span = (_time(min(firsts)), _time(max(lasts))) if firsts else None
            self._span = (docs, span)
        return self._span[1]

    def search(self, query: Query, facets: list[Facet]) -> Trends:
        """Trends of a query that :func:`~spyglass.server.banners.trends.check` has passed."""
        searchers = [s for s in self.index.searchers() if s.num_docs]  # an empty shard answers no bucket
        span = self.span(searchers)
        if span is None:
            return Trends(0, [], {f.name: [] for f in facets})
        calendar = months(*span)
        ranges = [{"key": k, "from": start.timestamp() * NS, "to": end.timestamp() * NS} for k, start, end in calendar]

        def by_month(some: list[tuple[int, Facet]]) -> dict[str, dict]:
            """The month buckets with these facets counted in each, over every shard: services,
            not banners (a service seen twice in a month counts once, as in a monthly crawl's
            results; a service whose banners of one month two shards hold counts in each)."""
            aggs = SERVICES | facet_terms(some, shards=len(searchers), services=True)
            spec: dict = {"months": {"range": {"field": "timestamp", "ranges": ranges}, "aggs": aggs}}
            results = each(alone, lambda s: aggregate(s, tq, spec), searchers)
            parts = [{b["key"]: _services(b) for b in result["months"]["buckets"]} for result in results]
            if len(parts) == 1:
                return parts[0]
            return {
                key: {
                    "doc_count": sum(p[key]["doc_count"] for p in parts),
                    **{
                        f"f{i}": {"buckets": merged_buckets([p[key].get(f"f{i}", {}) for p in parts], f.size)}
                        for i, f in some
                    },
                }
                for key in parts[0]
            }

        tq = compile_query(self.index.schema, query, current=False)
        numbered = list(enumerate(facets))
        with searching() as alone:  # alone: half the facets counted in another thread (aside.py)
            half = (len(numbered) + 1) // 2 if alone else len(numbered)
            rest = numbered[half:]
            other = aside(True, by_month, rest) if rest else None
            buckets = by_month(numbered[:half])
            for key, bucket in other.result().items() if other else ():
                buckets[key].update((f"f{i}", bucket[f"f{i}"]) for i, _ in rest if f"f{i}" in bucket)
        counts = [int(buckets[key]["doc_count"]) for key, _, _ in calendar]
        matches = [{"month": key, "count": n} for (key, _, _), n in zip(calendar, counts, strict=True)]
        out: dict[str, list[dict]] = {}
        for i, f in enumerate(facets):
            out[f.name] = [
                {"key": key, "values": _values(buckets[key].get(f"f{i}", {}).get("buckets", []))}
                for key, _, _ in calendar
            ]
        return Trends(sum(counts), matches, out)


def _services(bucket: dict) -> dict:
    """A month's bucket with its services as the count of it and of each facet value."""
    bucket["doc_count"] = _count(bucket)
    for name, facet in bucket.items():
        if name.startswith("f") and isinstance(facet, dict):
            for value in facet.get("buckets", []):
                value["doc_count"] = _count(value)
    return bucket


def _count(bucket: dict) -> int:
    return round(bucket["services"]["value"]) if bucket["doc_count"] else 0


def _values(buckets: list[dict]) -> list[dict]:
    """Largest first; ties in the order of the values as the facets of a search give them (numbers
    as numbers: 22 before 1000), the same every time."""
    ordered = sorted((-int(b["doc_count"]), b["key"], facet_value(b)) for b in buckets)
    return [{"count": -count, "value": value} for count, _, value in ordered]


def _time(nanoseconds: float) -> datetime:
    return datetime.fromtimestamp(nanoseconds / NS, tz=UTC)
