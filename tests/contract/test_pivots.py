"""Every pivot of a banner, run as a search by the backend's own index, finds the banner it came
from: on demo data (each kind of service), and on banners whose members hold odd JSON types."""

from __future__ import annotations

import pytest

from spyglass.client import Clients
from spyglass.datagen import generate
from spyglass.query import parse
from spyglass.query.pivot import pivots, term
from tests.conftest import backend_with
from tests.unit.test_index import latest_of_each_service

BANNERS = list(generate(600, seed=1))
CURRENT = latest_of_each_service(BANNERS)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("pivots"), BANNERS) as backend:
        yield backend


def sample() -> list[dict]:
    """A banner of each product and module (the demo data's kinds of service), up to 40."""
    seen: dict[tuple, dict] = {}
    for b in CURRENT:
        seen.setdefault((b.get("product"), (b.get("_shodan") or {}).get("module")), b)
    return list(seen.values())[:40]


def test_no_pivot_on_the_hash_of_no_data():
    """Newcomer trial 8: an nmap port with no banner offered `hash 0`, which finds every such port."""
    empty = {"ip_str": "192.0.2.1", "port": 8088, "transport": "tcp", "data": "", "hash": 0, "product": "x"}
    found = {(p.filter, p.value) for p in pivots(empty)}
    assert ("hash", "0") not in found and ("product", "x") in found
    assert ("hash", "-1") in {(p.filter, p.value) for p in pivots({**empty, "hash": -1})}


def test_pivot_terms_parse_back_to_their_value():
    for value in ["nginx", "Orchid Retail Group", 'say "hi"', "a,b", "-x", "ab:cd"]:
        query = parse(term("org", value))
        assert not query.errors and str(query.filters[0].values[0]).lower() == value.replace('"', "").lower()


async def test_every_pivot_finds_the_banner_it_came_from(demo):
    checked = 0
    async with Clients.from_profile(demo.profile(demo.key("member"))) as clients:
        for banner in sample():
            address = banner["ip_str"]
            for pivot in pivots(banner):
                query = f"{pivot.term} ip:{address} port:{banner['port']}"
                found = await clients.search.count(query)
                assert found.total >= 1, f"{query!r} did not find the banner it came from"
                checked += 1
    assert checked > 200  # the demo data's fingerprints, orgs, products and names all took part


def test_odd_member_types_give_pivots_without_a_crash():
    odd = {
        "ip_str": "198.18.0.1",
        "port": 443,
        "transport": "tcp",
        "timestamp": "2026-01-01T00:00:00",
        "org": ["a list", "where a string is usual"],
        "asn": 64512,
        "ssl": {"cert": {"serial": 1.5e30, "fingerprint": "not an object"}},
        "http": [],
        "hostnames": "one.example",
        "product": {"name": "an object"},
        "os": "Linux\x1b[2J\u202e",  # controls and bidi: a value nobody could type back
    }
    found = {p.filter for p in pivots(odd)}
    assert {"asn", "port", "ip"} <= found and "os" not in found
    assert pivots("not a banner") == []


def test_a_private_scan_result_s_pivots_search_within_its_scan():
    """Newcomer trial 5: a pivot from one's own scan of loopback found nothing, not even its banner:
    the account's searches leave private results out unless they name the scan."""
    from spyglass.query.match import matcher

    crawler = {**CURRENT[0]["_intel"], "options": {"scan": "KD46EP9CZZ22FAAP"}}
    private = {**CURRENT[0], "tags": ["private-scan"], "_intel": crawler}
    found = pivots(private)
    assert found and all(p.query.endswith(" scan:KD46EP9CZZ22FAAP") for p in found)
    assert all("scan:" not in p.term for p in found)  # (what an exclusion adds to a query)
    assert all(matcher(parse(p.query))(private) for p in found)
    assert all(p.query == p.term for p in pivots(CURRENT[0]))  # a shared banner: the value alone
