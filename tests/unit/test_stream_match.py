"""The live-tail pane's client-side filter agrees with the index: for every filter's example
query (and free text, negations, combinations), matching banners in memory selects exactly the
banners the index counts."""

from __future__ import annotations

import pytest

from spyglass.datagen import generate
from spyglass.query import FILTER_EXAMPLES, parse
from spyglass.query.match import matcher

EXTRA = [
    "nginx",
    '"welcome to nginx"',
    "product:nginx -port:80",
    "-country:DE port:22,443",
    "ssh -product:openssh",
    "has_vuln:true vuln:cve-2021-41773",
    "hostname:example -has_ssl:true",
]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    from spyglass.server.index import BannerIndex
    from spyglass.server.ingest.importer import import_banners

    latest: dict[tuple, dict] = {}  # one banner per service: all of them are current in the index
    for b in generate(3000, seed=1):
        latest[(b["ip_str"], b["port"], b["transport"])] = b
    index = BannerIndex(tmp_path_factory.mktemp("match"))
    import_banners(index, (dict(b) for b in latest.values()))
    yield index, list(latest.values())
    index.close()


@pytest.mark.parametrize("source", sorted(FILTER_EXAMPLES.values()) + EXTRA)
def test_matcher_selects_what_the_index_counts(indexed, source):
    index, banners = indexed
    query = parse(source)
    assert query.ok
    total, _ = index.count(query, [])
    assert sum(map(matcher(query), banners)) == total


def test_odd_types_never_match_or_fail():
    odd = {"ip_str": "198.18.0.1", "port": "80", "asn": 15169, "location": [], "vulns": "x", "http": "y", "ssl": 3}
    for source in ("port:80", "asn:AS15169", "country:DE", "vuln:x", "http.title:y", "has_ssl:true", "nginx"):
        assert isinstance(matcher(parse(source))(odd), bool)
    assert not matcher(parse("port:80"))(odd)  # "80" is text, not a port
    assert matcher(parse("-port:80"))(odd)
    assert not matcher(parse("nginx"))(["not", "a", "banner"])
