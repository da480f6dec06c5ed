"""Search and host lookup: the client against the backend under uvicorn, with a real index."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from spyglass.client import BadRequest, Clients, NoCredits, NotFound
from spyglass.datagen import generate
from tests.conftest import ORIGINAL, backend_with
from tests.unit.test_index import latest_of_each_service

BANNERS = list(generate(3000, seed=3))
CURRENT = latest_of_each_service(BANNERS)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    with backend_with(tmp_path_factory.mktemp("search-backend"), BANNERS) as backend:
        yield backend


@pytest.fixture
async def member(loaded):
    key = loaded.key("member")
    async with Clients.from_profile(loaded.profile(key)) as clients:
        yield clients


async def test_count_is_free_and_has_facets(member):
    result = await member.search.count("port:22", "country:3,org")
    assert result.total == sum(b["port"] == 22 for b in CURRENT)
    assert result.matches == []
    assert len(result.facets["country"]) == 3 and len(result.facets["org"]) == 10
    assert (await member.account.api_info()).query_credits == 100


async def test_search_credits_follow_the_rules(member):
    await member.search.search("nginx")  # free text, first page: free
    assert member.credits.query == 100
    page = await member.search.search("nginx port:80")  # a filter: one credit
    assert member.credits.query == 99 and len(page.matches) == 100
    await member.search.search("nginx", page=2)  # past the first page: one credit
    assert member.credits.query == 98


async def test_free_plan_can_search_text_but_not_filters(loaded):
    async with Clients.from_profile(loaded.profile(loaded.key("free"))) as c:
        assert (await c.search.search("nginx")).total > 0
        with pytest.raises(NoCredits):
            await c.search.search("port:80")
        assert (await c.search.count("port:80")).total > 0


async def test_identifying_facets_cost_what_a_search_costs(loaded, member):
    """A free count listed 1,000 addresses or fingerprints of a filtered query, which search
    refuses the free plan (402): such facets cost a query credit, count or search alike."""
    async with Clients.from_profile(loaded.profile(loaded.key("free"))) as free:
        with pytest.raises(NoCredits, match=r"identifying fields \(ip, ssh.fingerprint\)"):
            await free.search.count("port:22", "ip:100,ssh.fingerprint:100")
        with pytest.raises(NoCredits, match=r"identifying fields \(ssl.jarm\)"):
            await free.search.count("nginx", "ssl.jarm")
        with pytest.raises(NoCredits):
            await free.search.search("nginx", "ip")  # free text, first page: free, but not with ip
        assert (await free.search.count("port:22", "port,country:100")).facets["port"][0].value == "22"
    counted = await member.search.count("port:22", "ip:1000")
    assert len(counted.facets["ip"]) == len({b["ip_str"] for b in CURRENT if b["port"] == 22})
    assert member.credits.query == 99
    await member.search.search("nginx", "hash")
    assert member.credits.query == 98
    await member.search.search("port:22", "ip")  # a search with a filter costs one credit, not two
    assert member.credits.query == 97


async def test_matches_parse_as_banners_newest_first(member):
    result = await member.search.search("ssh", "port")
    stamps = [b.timestamp for b in result.matches]
    assert stamps == sorted(stamps, reverse=True)
    assert all(b.module for b in result.matches)
    assert result.facets["port"][0].value == "22"  # facet values are strings, as the seed says


async def test_minify_and_fields(member):
    full = await member.search.search("has_ssl:true", minify=False)
    small = await member.search.search("has_ssl:true")
    assert full.matches[0].ssl["chain"] and "chain" not in small.matches[0].ssl
    raw = await member.transport.request(
        "GET", "/intel/host/search", params={"query": "ssh", "fields": "ip_str,port,location.city"}
    )
    assert set(raw["matches"][0]) == {"ip_str", "port", "location.city"}


@pytest.mark.parametrize(
    "query, facets, message",
    [
        ("bogus:1", None, "unknown filter 'bogus'"),
        ('title:"open', None, "unbalanced quote"),
        ("", None, "empty query"),
        ("nginx", "nope", "unknown facet 'nope'"),
        ("net:1.2.3.4/99", None, "not an IP address or CIDR network"),
        ("after:9999-12-31", None, "after: '9999-12-31' is out of range"),
        ("before:0000-00-00", None, "before: '0000-00-00' is not a date"),
        ("port:99999999999999999999", None, "port: '99999999999999999999' is out of range"),
        ("port:65536", None, "port: '65536' is out of range"),
        ("hash:-9223372036854775809", None, "hash: '-9223372036854775809' is out of range"),
        ("http.status:18446744073709551616", None, "http.status: '18446744073709551616' is out of range"),
        ("port:²", None, "port: '²' is not a whole number"),
        ('port:"8"0', None, "port: unexpected '0' after a quoted value"),
        ("nginx", "port:²", "facet port: after the colon comes how many values, 1 to 1000, not '²'"),
        ("nginx", "port,org,PORT:5", "Invalid facets: facet 'port' is named twice"),
    ],
)
async def test_bad_queries_are_400_with_the_reason(member, query, facets, message):
    with pytest.raises(BadRequest) as caught:
        await member.search.search(query, facets)
    assert message in str(caught.value) and caught.value.status == 400
    assert member.credits.query in (None, 100)  # nothing spent on a query that never ran


async def test_a_facet_named_twice_is_400_in_a_count_too(member):
    with pytest.raises(BadRequest, match="Invalid facets: facet 'ip' is named twice"):
        await member.search.count("port:22", "ip:100,port,ip:100")


@pytest.mark.parametrize(
    "query, message",
    [
        ("cpe:" + ",".join(f"v{i}" for i in range(2000)), "over 1,000 words and filter values: the rest is not read"),
        ("cpe:" + "a" * 1200, "cpe: a value of 1,200 characters; at most 256"),  # was tantivy's regex limit: 500
    ],
    ids=["2000 values", "1200 letters"],
)
async def test_a_free_count_too_big_is_400_naming_the_cap(member, query, message):
    with pytest.raises(BadRequest) as caught:
        await member.search.count(query)
    assert message in str(caught.value) and caught.value.status == 400


@pytest.mark.parametrize(
    "plan, facets, message",
    [
        ("free", ",".join(["port"] * 8000), "8,000 facets; the free plan allows 5 a request"),
        ("member", ",".join(["org"] * 11), "11 facets; the member plan allows 10 a request"),
        ("free", "org:101", "facet org: 101 values; the free plan allows 100 a facet"),
    ],
    ids=["8000 facets", "11 facets", "101 values"],
)
@pytest.mark.parametrize("path", ["count", "search"])
def test_facets_past_the_plan_are_400_naming_the_cap(loaded, plan, facets, message, path):
    """Each facet is a pass over every match: 5,000 of them were 9 s of a free count, 8,000 a 500."""
    key = loaded.key(plan)
    answer = httpx.get(f"{loaded.url}/intel/host/{path}", params={"key": key, "query": "nginx", "facets": facets})
    assert answer.status_code == 400 and message in answer.json()["error"]
    within = httpx.get(f"{loaded.url}/intel/host/count", params={"key": key, "query": "nginx", "facets": "org:100"})
    assert within.status_code == 200


async def test_repeated_networks_count_as_one(member):
    assert (await member.search.count("net:" + ",".join(["0.0.0.0/0"] * 1000))).total == len(CURRENT)


async def test_a_missing_query_names_the_field(loaded):
    async with httpx.AsyncClient(base_url=loaded.url) as http:
        for path in ("/intel/host/search", "/intel/host/count", "/intel/host/search/tokens"):
            response = await http.get(path, params={"key": loaded.key()})
            assert 400 <= response.status_code < 500 and "query" in response.text


async def test_ipv6_networks_do_not_match_ipv4(member):
    assert (await member.search.count("net:::/0")).total == sum(":" in b["ip_str"] for b in CURRENT)
    assert (await member.search.count("net:0.0.0.0/0")).total == len(CURRENT)


async def test_tokens_filters_and_facets_lists(member):
    tokens = await member.search.tokens("apache port:80,443 bogus:1")
    assert tokens.attributes == {"ports": [80, 443]} and tokens.filters == ["port"]
    assert tokens.errors == ["unknown filter 'bogus' (at 20)"]
    assert "net" in await member.search.filters()
    assert "vuln.verified" in await member.search.facets()


async def test_host(member):
    ip = BANNERS[0]["ip_str"]
    mine = [b for b in BANNERS if b["ip_str"] == ip]
    host = await member.search.host(ip)
    assert host.ip_str == ip and host.ports == sorted({b["port"] for b in mine})
    assert len(host.data) == len({b["port"] for b in mine})  # the latest banner per service
    assert host.country_code == mine[0]["location"]["country_code"]
    history = await member.search.host(ip, history=True)
    assert len(history.data) == len(mine)
    minified = await member.search.host(ip, minify=True)
    assert minified.data == [] and minified.ports == host.ports


async def test_host_errors(member):
    with pytest.raises(NotFound, match="No information available for that IP"):
        await member.search.host("192.0.2.1")
    with pytest.raises(BadRequest, match="Invalid IP address"):
        await member.search.host("not-an-ip")


async def test_shapes_match_the_original_service(member):
    original = json.loads((ORIGINAL / "host" / "version.json").read_text())
    raw = await member.transport.request("GET", "/intel/host/search", params={"query": "ssh"})
    assert set(original) <= set(raw)
    theirs = original["matches"][0]
    ours = raw["matches"][0]
    member_name = next(k for k in theirs if k.startswith("_"))
    common = set(theirs) - {member_name, "product", "version"}
    assert common <= set(ours) and "_intel" in ours
    assert set(theirs["location"]) == set(ours["location"])
    assert set(theirs[member_name]) <= set(ours["_intel"])


async def test_other_namespace(tmp_path):
    with backend_with(tmp_path, BANNERS[:50], namespace="acme") as backend:
        async with Clients.from_profile(backend.profile(backend.key(), namespace="acme")) as c:
            result = await c.search.search("ssh")
            raw = await c.transport.request("GET", "/acme/host/search", params={"query": "ssh"})
    assert result.matches[0].module == "ssh"
    assert "_acme" in raw["matches"][0] and "_intel" not in raw["matches"][0]


async def test_memory_a_count_freed_is_given_back(member, monkeypatch):
    """glibc keeps what threads free: after a burst of costly counts the server stayed 100 MB
    larger (bench/query_flood.py) until something trims the heap."""
    from spyglass.server import memory

    trimmed = threading.Event()
    monkeypatch.setattr(memory, "TRIM_AFTER", 0.0)
    monkeypatch.setattr(memory, "give_back_memory", trimmed.set)
    await member.search.count("cpe:cpe:2.3:a:nginx,cpe:2.3:a:apache")
    assert await asyncio.to_thread(trimmed.wait, 60)
