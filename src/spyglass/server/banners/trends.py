"""The trends host's vocabulary, the same for every store: the filters and facets it serves and
the calendar months it answers (from the store's first month to its last, so that every query of
one store answers the same months and two queries chart on one axis).
"""

from __future__ import annotations

from datetime import UTC, datetime

from spyglass.query import FACETS, FILTERS, Facet, Query
from spyglass.server.banners.fields import FACET_FIELDS, FILTER_FIELDS

# The seed's trends vocabulary, less any name the stores cannot serve (all of them, today).
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
