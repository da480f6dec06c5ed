"""The trends host against the embedded backend under uvicorn: months over the index's whole
history (every scan of a service, not only the latest), zero months, facets per month, the
enterprise rule and errors; the client's methods against the same server."""

from __future__ import annotations

import httpx
import pytest

from spyglass.client import Clients
from spyglass.client.errors import APIError
from spyglass.server.banners.trends import SEED_FACETS, SEED_FILTERS, TRENDS_FACETS, TRENDS_FILTERS, months
from tests.conftest import backend_with
from tests.unit.test_import_hostile import real_banner

A, B, C, D = "198.19.1.1", "198.19.1.2", "198.19.1.3", "198.19.1.4"


def scan(ip: str, port: int, month: str, country: str, day: int = 10) -> dict:
    return real_banner(
        0,
        ip_str=ip,
        port=port,
        timestamp=f"{month}-{day:02d}T12:00:00.000000",
        location={"country_code": country, "city": "X"},
        product=f"p{port}",
    )


# 2025-01 to 2025-06; nothing in March or May. A and B are scanned in two months: both months
# count them; A is scanned twice in January: it counts once there (trends count services).
BANNERS = [
    scan(A, 22, "2025-01", "DE"),
    scan(A, 22, "2025-01", "DE", day=20),
    scan(B, 80, "2025-01", "US"),
    scan(C, 80, "2025-01", "US", day=31),
    scan(A, 22, "2025-02", "DE", day=1),
    scan(B, 80, "2025-02", "US"),
    scan(D, 443, "2025-04", "FR"),
    scan(D, 22, "2025-06", "FR", day=30),
]
MONTHS = ["2025-01", "2025-02", "2025-03", "2025-04", "2025-05", "2025-06"]


@pytest.fixture(scope="module")
def trends(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("trends"), BANNERS) as backend:
        yield backend


def get(backend, path: str, key: str | None = None, **params) -> httpx.Response:
    params["key"] = key or backend.key()
    return httpx.get(f"{backend.url}/trends/api/v1{path}", params=params)


def series(body: dict) -> list[tuple[str, int]]:
    return [(m["month"], m["count"]) for m in body["matches"]]


def test_months_count_each_service_once_with_the_empty_months_as_zero(trends):
    body = get(trends, "/search", query="net:198.19.1.0/24").json()
    assert body["total"] == 7
    assert series(body) == list(zip(MONTHS, [3, 2, 0, 1, 0, 1], strict=True))
    assert "facets" not in body


def test_every_query_answers_the_months_of_the_whole_index(trends):
    body = get(trends, "/search", query="port:443").json()
    assert body["total"] == 1
    assert series(body) == list(zip(MONTHS, [0, 0, 0, 1, 0, 0], strict=True))
    nothing = get(trends, "/search", query="port:9999", facets="country").json()
    assert nothing["total"] == 0 and [m["count"] for m in nothing["matches"]] == [0] * 6
    assert [m["key"] for m in nothing["facets"]["country"]] == MONTHS
    assert all(m["values"] == [] for m in nothing["facets"]["country"])


def test_facets_give_the_top_values_of_each_month(trends):
    body = get(trends, "/search", query="-country:CN", facets="country:1,port").json()
    country = {m["key"]: m["values"] for m in body["facets"]["country"]}
    assert country["2025-01"] == [{"count": 2, "value": "US"}]  # size 1: the top value only
    assert country["2025-03"] == []
    assert country["2025-06"] == [{"count": 1, "value": "FR"}]
    port = {m["key"]: m["values"] for m in body["facets"]["port"]}
    assert port["2025-01"] == [{"count": 2, "value": "80"}, {"count": 1, "value": "22"}]
    assert port["2025-02"] == [{"count": 1, "value": "22"}, {"count": 1, "value": "80"}]  # ties by value
    assert list(body["facets"]) == ["country", "port"]


def test_identifying_facets_cost_a_query_credit_as_a_search_does(trends):
    key = trends.key()
    account = trends.store.account_for_key(key)
    credits = account.query_credits
    assert get(trends, "/search", key, query="port:22", facets="country,port").status_code == 200
    assert trends.store.account_for_key(key).query_credits == credits
    body = get(trends, "/search", key, query="port:22", facets="ip").json()
    assert {v["value"] for m in body["facets"]["ip"] for v in m["values"]} == {A, D}
    assert trends.store.account_for_key(key).query_credits == credits - 1
    trends.store.set_credits(account.id, query=0)
    refused = get(trends, "/search", key, query="port:22", facets="ip,ssl.jarm")
    assert refused.status_code == 402 and "identifying fields (ip, ssl.jarm)" in refused.json()["error"]


def test_filters_and_facets_lists_are_the_seeds_names_that_work(trends):
    filters = get(trends, "/search/filters").json()
    facets = get(trends, "/search/facets").json()
    assert filters == list(TRENDS_FILTERS) and set(filters) <= set(SEED_FILTERS)
    assert facets == list(TRENDS_FACETS) and set(facets) <= set(SEED_FACETS)
    values = {"asn": "AS64500", "country": "DE", "net": "198.19.0.0/16", "ip": A, "has_ssl": "true"}
    for name in filters:  # every listed filter answers (a value of its kind where it matters)
        value = values.get(name, "1" if name.endswith(("hash", "status", "port")) or name == "port" else "x")
        if name.startswith("has_"):
            value = "true"
        response = get(trends, "/search", query=f"{name}:{value}")
        assert response.status_code == 200, (name, response.text)
    for some in (facets[:20], facets[20:]):  # the enterprise plan's facets a request
        response = get(trends, "/search", query="port:22", facets=",".join(some))
        assert response.status_code == 200, response.text
        assert list(response.json()["facets"]) == some


@pytest.mark.parametrize(
    ("params", "word"),
    [
        ({"query": "nope:1"}, "nope"),
        ({"query": "after:2025-01-01"}, "after"),  # a main-API filter the trends seed does not list
        ({"query": "port:22", "facets": "nope"}, "nope"),
        ({"query": "port:22", "facets": "transport"}, "transport"),
        ({"query": 'port:22 "unclosed'}, "Invalid"),
        ({}, "query"),
    ],
)
def test_unknown_filters_facets_and_bad_queries_are_400_with_an_error(trends, params, word):
    response = get(trends, "/search", **params)
    assert response.status_code == 400
    assert word in response.json()["error"]


@pytest.mark.parametrize("path", ["/search", "/search/filters", "/search/facets"])
@pytest.mark.parametrize("plan", ["free", "member"])
def test_only_enterprise_keys_may_call_trends(trends, path, plan):
    response = get(trends, path, key=trends.key(plan), query="port:22")
    assert response.status_code == 403
    assert "enterprise" in response.json()["error"]


def test_no_key_is_401(trends):
    response = httpx.get(f"{trends.url}/trends/api/v1/search", params={"query": "port:22"})
    assert response.status_code == 401 and response.json()["error"]


async def test_client_methods(trends):
    async with Clients.from_profile(trends.profile(trends.key())) as c:
        found = await c.trends.search("port:22,80", ["port:2"])
        assert found.total == 6
        assert [m.month for m in found.matches] == MONTHS
        assert found.facets["port"][0].key == "2025-01"
        assert [(v.value, v.count) for v in found.facets["port"][0].values] == [("80", 2), ("22", 1)]
        assert await c.trends.filters() == list(TRENDS_FILTERS)
        assert await c.trends.facets() == list(TRENDS_FACETS)
    async with Clients.from_profile(trends.profile(trends.key("free"))) as c:
        with pytest.raises(APIError) as caught:
            await c.trends.search("port:22")
        assert caught.value.status == 403


async def test_an_empty_index_has_no_months(tmp_path):
    with backend_with(tmp_path, []) as backend:
        body = get(backend, "/search", query="port:22", facets="country").json()
    assert body == {"total": 0, "matches": [], "facets": {"country": []}}


def test_months_run_across_the_new_year():
    from datetime import UTC, datetime

    keys = [k for k, _, _ in months(datetime(2024, 11, 30, tzinfo=UTC), datetime(2025, 2, 1, tzinfo=UTC))]
    assert keys == ["2024-11", "2024-12", "2025-01", "2025-02"]


def test_facets_past_the_plan_are_400_naming_the_cap(trends):
    """8,000 facets were a 500 after seconds of work: the plan's cap refuses them first."""
    answer = get(trends, "/search", query="port:22", facets=",".join(["port"] * 8000))
    assert answer.status_code == 400
    assert "8,000 facets; the enterprise plan allows 20 a request" in answer.json()["error"]
    assert get(trends, "/search", query="port:22", facets=",".join(TRENDS_FACETS[:20])).status_code == 200


def test_a_facet_named_twice_is_400_naming_it(trends):
    """``ip:1000`` twenty times was twenty passes over every match for one list in the answer."""
    answer = get(trends, "/search", query="port:22", facets=",".join(["ip:1000"] * 20))
    assert answer.status_code == 400
    assert answer.json()["error"] == "Invalid facets: facet 'ip' is named twice"
    assert get(trends, "/search", query="port:22", facets="port,country,PORT:3").status_code == 400


LOUD = "ip asn city hash isp org port product version http.title os domain region http.html_hash".split()


def loud(n: int, months: int) -> dict:
    """A banner whose every LOUD facet has a value of its own, in one of ``months`` months."""
    return real_banner(
        n,
        ip_str=f"10.{n // 65536}.{n // 256 % 256}.{n % 256}",
        port=1 + n,
        timestamp=f"2025-{1 + n % months:02d}-10T12:00:00.000000",
        hash=n,
        org=f"o{n}",
        isp=f"i{n}",
        asn=f"AS{n}",
        product=f"p{n}",
        version=f"v{n}",
        os=f"os{n}",
        domains=[f"d{n}.net"],
        location={"country_code": "DE", "city": f"c{n}", "region_code": f"r{n}"},
        http={"title": f"t{n}", "html_hash": n},
    )


def test_more_values_than_the_index_counts_at_once_is_400_naming_the_cap(tmp_path):
    """14 facets of 1,000 values over 10 months of 1,000 services each (at least 7 facets in one
    aggregation: trends count half the facets aside) were tantivy's bucket limit as a 500, after
    seconds of work, and a reset connection."""
    banners = (loud(n, 10) for n in range(10_300))
    with backend_with(tmp_path, banners) as backend, httpx.Client(timeout=60) as client:
        key = backend.key()
        credits = backend.store.account_for_key(key).query_credits
        params = {"key": key, "query": "net:0.0.0.0/0", "facets": ",".join(f"{f}:1000" for f in LOUD)}
        answer = client.get(f"{backend.url}/trends/api/v1/search", params=params)
        assert answer.status_code == 400
        assert answer.json()["error"].startswith("Invalid facets: the facets asked for count more than 65,000 values")
        assert backend.store.account_for_key(key).query_credits == credits  # ip's credit: not for a refusal
        params["facets"] = ",".join(f"{f}:10" for f in LOUD)  # the same connection, and fewer values: answered
        assert client.get(f"{backend.url}/trends/api/v1/search", params=params).status_code == 200
