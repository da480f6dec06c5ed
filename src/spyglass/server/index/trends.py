"""Trends: month-by-month counts over the index's whole history (every banner, current or not).

One tantivy aggregation answers a request: a ``range`` bucket per calendar month on the
``timestamp`` fast field (a ``date_histogram`` only takes fixed intervals, and months are not
fixed), each with a ``terms`` sub-aggregation per facet. The months run from the first to the
last month of the whole index, not of the matches, so every query of one index answers the same
months (two queries chart on one axis) and months without matches answer 0.
"""

from __future__ import annotations

from datetime import UTC, datetime

import tantivy

from spyglass.query import FACETS, FILTERS, Facet, Query
from spyglass.server.bannerstore import Trends
from spyglass.server.index.aside import aside, searching
from spyglass.server.index.banners import BannerIndex, facet_terms, facet_value
from spyglass.server.index.compiler import compile_query
from spyglass.server.index.fields import FACET_FIELDS, FILTER_FIELDS

# The seed's trends vocabulary, less any name this index cannot serve (all of them, today).
SEED_FILTERS = (
    "all asn city country cpe has_ipv6 has_screenshot has_ssl has_vuln hash hostname http.component "
    "http.component_category http.favicon.hash http.html_hash http.robots_hash http.securitytxt http.status "
    "http.title http.waf ip isp net org os port product region screenshot.label ssh.fingerprint ssl ssl.alpn "
    "ssl.cert.fingerprint ssl.cert.issuer.cn ssl.cert.serial ssl.cert.subject.cn ssl.ja3s ssl.jarm ssl.version "
    "state tag title version vuln"
).split()
SEED_FACETS = (
    "asn city country domain has_screenshot hash http.component http.component_category http.favicon.hash "
    "http.html_hash http.robots_hash http.status http.title http.waf ip isp mongodb.database.name org os port "
    "product redis.key region rsync.module screenshot.label ssh.fingerprint ssl.alpn ssl.cert.fingerprint "
    "ssl.cert.issuer.cn ssl.cert.serial ssl.cert.subject.cn ssl.ja3s ssl.jarm ssl.version state tag version vuln "
    "vuln.verified"
).split()
TRENDS_FILTERS: tuple[str, ...] = tuple(n for n in SEED_FILTERS if n in FILTERS and n in FILTER_FIELDS)
TRENDS_FACETS: tuple[str, ...] = tuple(n for n in SEED_FACETS if n in FACETS and n in FACET_FIELDS)

NS = 1_000_000_000  # tantivy's date aggregations count nanoseconds


class NotForTrends(ValueError):
    """A filter or facet the trends host does not serve."""


def months(first: datetime, last: datetime) -> list[tuple[str, datetime, datetime]]:
    """Each calendar month from ``first``'s to ``last``'s: (``YYYY-MM``, start, next month's start)."""
    out = []
    year, month = first.year, first.month
    while (year, month) <= (last.year, last.month):
        start = datetime(year, month, 1, tzinfo=UTC)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        out.append((start.strftime("%Y-%m"), start, datetime(year, month, 1, tzinfo=UTC)))
    return out


def check(query: Query, facets: list[Facet]) -> None:
    """NotForTrends names the first filter or facet the trends host does not serve."""
    for f in query.filters:
        if f.name not in TRENDS_FILTERS:
            raise NotForTrends(f"unknown filter '{f.name}' for trends")
    for facet in facets:
        if facet.name not in TRENDS_FACETS:
            raise NotForTrends(f"unknown facet '{facet.name}' for trends")


class TrendsIndex:
    """Trends over a :class:`BannerIndex` (which it only reads)."""

    def __init__(self, index: BannerIndex) -> None:
        self.index = index
        self._span: tuple[int, tuple[datetime, datetime] | None] | None = None

    def span(self, searcher: tantivy.Searcher) -> tuple[datetime, datetime] | None:
        """The first and last banner times of the whole index; None when it is empty. Cached
        while the document count holds (new banners change it; a demotion re-adds the same one)."""
        docs = searcher.num_docs
        if self._span is None or self._span[0] != docs:
            span = None
            if docs:
                spec = {"first": {"min": {"field": "timestamp"}}, "last": {"max": {"field": "timestamp"}}}
                result = searcher.aggregate(tantivy.Query.all_query(), spec)
                first, last = result["first"]["value"], result["last"]["value"]
                if first is not None and last is not None:
                    span = (_time(first), _time(last))
            self._span = (docs, span)
        return self._span[1]

    def search(self, query: Query, facets: list[Facet]) -> Trends:
        """Trends of a query that :func:`check` has passed."""
        searcher = self.index.searcher()
        span = self.span(searcher)
        if span is None:
            return Trends(0, [], {f.name: [] for f in facets})
        calendar = months(*span)
        ranges = [{"key": k, "from": start.timestamp() * NS, "to": end.timestamp() * NS} for k, start, end in calendar]

        def by_month(some: list[tuple[int, Facet]]) -> dict[str, dict]:
            """The month buckets with these facets counted in each."""
            spec: dict = {"months": {"range": {"field": "timestamp", "ranges": ranges}}}
            if some:
                spec["months"]["aggs"] = facet_terms(some)
            return {b["key"]: b for b in searcher.aggregate(tq, spec)["months"]["buckets"]}

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


def _values(buckets: list[dict]) -> list[dict]:
    """Largest first; ties in the order of the values as the facets of a search give them (numbers
    as numbers: 22 before 1000), the same every time."""
    ordered = sorted((-int(b["doc_count"]), b["key"], facet_value(b)) for b in buckets)
    return [{"count": -count, "value": value} for count, _, value in ordered]


def _time(nanoseconds: float) -> datetime:
    return datetime.fromtimestamp(nanoseconds / NS, tz=UTC)
