"""The banner store contract (server/banners/store.py): every behaviour the API relies on, run
against every store in conftest.STORES. A new store passes this suite unchanged."""

from __future__ import annotations

import json

import orjson
import pytest

from spyglass.datagen import generate
from spyglass.query import parse_facets, parse_strict
from spyglass.query.match import matcher
from spyglass.server.banners.shape import BadBanner
from spyglass.server.banners.store import BannerStore
from tests.store.conftest import ShardedIndex


def banner(ip: str = "198.18.0.1", port: int = 22, stamp: str = "2026-03-01T10:00:00.000000", **members) -> dict:
    return {"ip_str": ip, "port": port, "transport": "tcp", "timestamp": stamp, "data": "hello", **members}


def add(store: BannerStore, *banners: dict | bytes) -> list[int]:
    """Add banners (dicts, or the bytes of one, kept as they are) in one batch; the new keys."""
    prepared = []
    for b in banners:
        if isinstance(b, bytes):
            prepared.append(store.prepare(json.loads(b), b))
        else:
            prepared.append(store.prepare(b))
    with store.writing() as batch:
        return batch.add(prepared)


def search(store: BannerStore, query: str, facets: str = "", page: int = 1):
    return store.search(parse_strict(query), parse_facets(facets), page)


def count(store: BannerStore, query: str, facets: str = ""):
    return store.count(parse_strict(query), parse_facets(facets))


def test_a_banner_comes_back_exactly_to_the_byte(store):
    body = (
        b'{"ip_str":"198.18.0.9","port":443,"transport":"tcp","timestamp":"2026-01-02T03:04:05.123456",'
        b'"data":"x","ssl":{"cert":{"serial":123456789012345678901234567890}},"z":1.0,"a":[]}'
    )
    add(store, body)
    (mark,) = [m for batch in store.added_since(0, 10) for m, _ in batch]
    assert store.raw_bodies([mark]) == {mark: body}
    (back,) = store.host("198.18.0.9")
    assert back == json.loads(body)  # integers past 64 bits exact, member order kept
    assert list(back) == ["ip_str", "port", "transport", "timestamp", "data", "ssl", "z", "a"]


def test_adding_a_banner_twice_adds_nothing(store):
    first = add(store, banner(), banner(port=80))
    assert len(first) == 2
    assert add(store, banner(), banner(port=80)) == []
    assert store.total() == 2


def test_search_sees_the_current_banner_of_each_service_host_sees_the_history(store):
    add(store, banner(stamp="2026-01-01T00:00:00.000000", data="old"))
    add(store, banner(stamp="2026-02-01T00:00:00.000000", data="new"))
    add(store, banner(stamp="2025-12-01T00:00:00.000000", data="older, added last"))
    total, matches, _ = search(store, "port:22")
    assert total == 1 and matches[0]["data"] == "new"
    assert count(store, "port:22")[0] == 1
    assert [b["data"] for b in store.host("198.18.0.1")] == ["new", "old", "older, added last"]
    current = store.current("198.18.0.1", 22, "tcp")
    assert current is not None and current["data"] == "new"
    assert store.current("198.18.0.1", 23, "tcp") is None


def test_a_scan_filter_sees_everything_that_scan_collected(store):
    def scanned(scan: str, stamp: str) -> dict:
        return banner(stamp=stamp, _intel={"options": {"scan": scan}})

    add(store, scanned("AAAAAAAAAAAAAAAA", "2026-01-01T00:00:00.000000"))
    add(store, scanned("BBBBBBBBBBBBBBBB", "2026-02-01T00:00:00.000000"))
    assert search(store, "scan:AAAAAAAAAAAAAAAA")[0] == 1
    assert search(store, "port:22")[0] == 1


def test_members_of_any_type_are_kept_and_searched_without_failing(store):
    odd = [
        banner(ip="198.18.1.1", asn=64512, ssl={"cert": {"serial": 1.5e30}}, vulns=["CVE-2021-41773"]),
        banner(ip="198.18.1.2", asn="AS64512", ssl="not an object", vulns={"CVE-2021-41773": {"cvss": 7.5}}),
        banner(ip="198.18.1.3", hostnames="one.example", location=[1, 2], org=None, tags={"x": 1}),
        banner(ip="198.18.1.4", http={"title": ["a", "list"]}, product=12, version=True),
    ]
    assert len(add(store, *odd)) == 4
    for b in odd:
        assert store.host(b["ip_str"]) == [b]
    total, matches, facets = search(store, "port:22", "org,asn,vuln,product,country")
    assert total == 4 and len(matches) == 4
    for name in ("org", "asn", "vuln", "product", "country"):
        assert all(isinstance(v["value"], str) for v in facets[name])


def test_a_banner_without_its_required_members_is_refused():
    from spyglass.server.index import BannerIndex

    for missing in ("ip_str", "port", "timestamp"):
        b = banner()
        del b[missing]
        try:
            BannerIndex.prepare(b)
        except BadBanner:
            continue
        raise AssertionError(f"a banner without {missing} was prepared")


@pytest.mark.parametrize(
    "wrong",
    [
        {"ip_str": "fe80::1%lo"},
        {"ip_str": None, "ipv6": "fe80::1%eth0"},
        {"port": 70000},
        {"port": 10**30},
        {"timestamp": "0001-01-01T00:00:00"},
        {"timestamp": "9999-12-31T23:59:59.999999"},
        {"timestamp": "99999-01-01T00:00:00"},
    ],
)
def test_every_store_refuses_the_same_banners_it_cannot_hold(wrong):
    """One rule (shape.normalize) for every store: a BadBanner, reported by whoever collects or
    imports it, never a line one store drops and another cannot index."""
    from spyglass.server.clickhouse import ClickHouseStore
    from spyglass.server.index import BannerIndex

    for prepare in (BannerIndex.prepare, ClickHouseStore.prepare):
        with pytest.raises(BadBanner):
            prepare({**banner(), **wrong})


async def test_the_collector_reports_the_lines_a_store_cannot_hold(store):
    """On ClickHouse the zoned line was dropped without a word: every store refuses it, reported."""
    from spyglass.server.collect import Collector

    refused: list[tuple[int, str]] = []
    lines = [banner(ip="fe80::1%lo"), banner(ip="198.18.0.9"), banner(port=70000)]
    new = await Collector(store).collect(lines, "test", refused)
    assert [c.banner["ip_str"] for c in new] == ["198.18.0.9"]
    assert [i for i, _ in refused] == [0, 2] and "zone id" in refused[0][1] and "port" in refused[1][1]
    assert store.host("198.18.0.9") and store.total() == 1


def test_facets_are_strings_largest_first(store):
    add(store, *[banner(ip=f"198.18.2.{i}", port=22 if i < 3 else 443) for i in range(5)])
    _, facets = count(store, "net:198.18.0.0/15", "port")
    assert facets["port"] == [{"count": 3, "value": "22"}, {"count": 2, "value": "443"}]


def test_pages_of_a_hundred_newest_first(store):
    add(
        store,
        *[banner(ip=f"198.18.3.{i}", stamp=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000000") for i in range(250)],
    )
    total, first, _ = search(store, "port:22")
    _, third, _ = search(store, "port:22", page=3)
    _, beyond, _ = search(store, "port:22", page=4)
    assert (total, len(first), len(third), beyond) == (250, 100, 50, [])
    stamps = [b["timestamp"] for b in first]
    assert stamps == sorted(stamps, reverse=True) and first[0]["ip_str"] == "198.18.3.249"


def test_trends_count_services_by_month_and_answer_zero_for_empty_months(store):
    add(
        store,
        banner(stamp="2026-01-15T00:00:00.000000"),
        banner(stamp="2026-01-20T00:00:00.000000"),  # rescanned in the month: one service still
        banner(stamp="2026-04-15T00:00:00.000000"),  # the same service later: history counts too
        banner(ip="198.18.4.1", port=80, stamp="2026-03-01T00:00:00.000000"),
    )
    trends = store.trends(parse_strict("port:22"), parse_facets("port"))
    assert trends.matches == [
        {"month": "2026-01", "count": 1},
        {"month": "2026-02", "count": 0},
        {"month": "2026-03", "count": 0},
        {"month": "2026-04", "count": 1},
    ]
    assert trends.total == 2
    assert trends.facets["port"][0] == {"key": "2026-01", "values": [{"count": 1, "value": "22"}]}
    assert trends.facets["port"][1] == {"key": "2026-02", "values": []}
    add(store, *(banner(stamp=f"2026-04-{day:02d}T00:00:00.000000", data=f"d{day}") for day in range(16, 28)))
    again = store.trends(parse_strict("port:22"), parse_facets("port"))  # in another batch
    if isinstance(store, ShardedIndex):  # each batch in another shard: counted in each (trends.py)
        assert (again.total, again.facets["port"][3]["values"]) == (3, [{"count": 2, "value": "22"}])
    else:
        assert (again.total, again.facets["port"][3]["values"]) == (2, [{"count": 1, "value": "22"}])
    add(store, banner(ip="198.18.4.2", stamp="2026-06-15T00:00:00.000000"))  # the months grow with the store
    assert [m["month"] for m in store.trends(parse_strict("port:22"), []).matches][-3:] == [
        "2026-04",
        "2026-05",
        "2026-06",
    ]


def test_trends_of_an_empty_store(store):
    trends = store.trends(parse_strict("port:22"), parse_facets("port"))
    assert (trends.total, trends.matches, trends.facets) == (0, [], {"port": []})


def test_banners_under_a_domain(store):
    add(
        store,
        banner(ip="198.18.5.1", hostnames=["www.example.com"], stamp="2026-01-01T00:00:00.000000"),
        banner(ip="198.18.5.1", hostnames=["old.example.com"], stamp="2025-01-01T00:00:00.000000"),
        banner(ip="198.18.5.2", hostnames=["example.com", "other.test"]),
        banner(ip="198.18.5.3", hostnames=["notexample.com"]),
    )
    current = sorted(b["hostnames"][0] for b in store.under_domain("example.com", history=False, limit=100))
    assert current == ["example.com", "www.example.com"]
    everything = store.under_domain("example.com", history=True, limit=100)
    assert len(everything) == 3
    assert len(store.under_domain("example.com", history=True, limit=1)) == 1


def test_marks_tell_what_was_added_since(store):
    add(store, banner(stamp="2026-01-01T00:00:00.000000"))
    mark = store.last_mark()
    add(store, banner(port=80, stamp="2026-02-03T04:05:06.000000"), banner(port=443))
    later = [row for batch in store.added_since(mark, 1) for row in batch]
    assert [stamp[:19] for _, stamp in later] == ["2026-02-03T04:05:06", "2026-03-01T10:00:00"]
    assert all(m > mark for m, _ in later) and store.last_mark() == max(m for m, _ in later)
    bodies = store.raw_bodies([m for m, _ in later])
    assert {orjson.loads(b)["port"] for b in bodies.values()} == {80, 443}


def test_marks_since_lists_what_was_added_in_mark_order_page_by_page(store):
    add(store, banner(port=1))
    mark = store.last_mark()
    assert store.marks_since(mark, 10) == []
    add(store, *(banner(port=p) for p in (2, 3, 4)))
    first = store.marks_since(mark, 2)
    rest = store.marks_since(first[-1], 10)
    assert len(first) == 2 and len(rest) == 1 and first + rest == sorted(first + rest)
    assert rest[-1] == store.last_mark() and first[0] > mark
    ports = [orjson.loads(body)["port"] for body in store.raw_bodies(first + rest).values()]
    assert sorted(ports) == [2, 3, 4]


def test_known_services(store):
    from spyglass.server.banners.keys import service_key
    from spyglass.server.banners.shape import normalize

    add(store, banner())
    known, unknown = (service_key(b, normalize(b)) for b in (banner(), banner(port=9)))
    assert store.known_services([known, unknown]) == {known}


def test_everything_is_there_after_a_restart(open_store):
    store = open_store()
    data = list(generate(300, seed=3))
    add(store, *data)
    store.set_meta("demo", "1")
    total = search(store, "net:198.18.0.0/15")[0]
    store.close()
    again = open_store()
    assert again.total() == 300 and search(again, "net:198.18.0.0/15")[0] == total
    assert again.get_meta("demo") == "1" and again.get_meta("nothing", "default") == "default"
    assert add(again, *data) == []


def test_what_a_failed_writer_stored_is_caught_up_after_a_restart(open_store):
    """A writer cut off part way (a crash, a kill) loses nothing it had stored, and adds it once."""
    store = open_store()
    try:
        with store.writing() as batch:
            batch.add([store.prepare(banner())])
            raise RuntimeError("the process dies here")
    except RuntimeError:
        pass
    store.close()
    again = open_store()
    assert search(again, "port:22")[0] == 1
    assert add(again, banner()) == []


def test_many_banners_come_back_to_the_byte(store):
    """Past the first thousand a store may keep banners otherwise (compressed): still exact."""
    sent = [orjson.dumps(b) for b in generate(1500, seed=11)]
    assert len(add(store, *sent)) == len(sent)
    marks = [m for batch in store.added_since(0, 500) for m, _ in batch]
    back = store.raw_bodies(marks)
    assert sorted(back[m] for m in marks) == sorted(sent)


def test_free_text_matches_words_split_at_any_character_not_a_letter_or_digit(store):
    """A dash, a curly quote or a no-break space splits words as a space does (a store that looks
    words up in an index of them must split alike, or it misses these)."""
    add(
        store,
        banner(ip="198.18.4.1", data="Welcome to nginx\u2014gateway"),
        banner(ip="198.18.4.2", data="caf\u00e9\u00a0\u201cnginx\u201d"),
        banner(ip="198.18.4.3", data="nginxy gateway-2"),
        banner(ip="198.18.4.4", data="\u041f\u0420\u0418\u0412\u0415\u0422 world"),
    )

    def found(query: str) -> list[str]:
        return sorted(b["ip_str"] for b in search(store, query)[1])

    assert found("nginx") == ["198.18.4.1", "198.18.4.2"]
    assert found("GATEWAY") == ["198.18.4.1", "198.18.4.3"]
    assert found('"nginx gateway"') == ["198.18.4.1"]
    assert found('"caf\u00e9 nginx"') == ["198.18.4.2"]
    assert found("\u043f\u0440\u0438\u0432\u0435\u0442") == ["198.18.4.4"]
    assert found("nginx -gateway") == ["198.18.4.2"]


def test_a_word_too_long_for_the_index_is_found_nowhere_and_the_matcher_agrees(store):
    """The embedded index keeps no word of 40 UTF-8 bytes or more (query/words.py): a term holding
    one matches nothing in every store, and in the matcher that the stream filter and alert
    triggers use; its neighbours still are not next to each other."""
    k39, k40, k41, e20 = "k" * 39, "k" * 40, "k" * 41, "\u00e9" * 20  # e20: 20 letters, 40 bytes
    banners = [
        banner(ip="198.18.4.11", data=f"key {k39} end"),
        banner(ip="198.18.4.12", data=f"key {k40} end"),
        banner(ip="198.18.4.13", data=f"key {k41} end", product=e20),
        banner(ip="198.18.4.14", data="key end"),
    ]
    add(store, *banners)
    expected = {
        k39: ["198.18.4.11"],
        k39.upper(): ["198.18.4.11"],
        k40: [],
        k41: [],
        e20: [],
        f'"key {k41} end"': [],  # not "key end" alone
        f"key {k40}": [],
        f"product:{e20}": [],
        '"key end"': ["198.18.4.14"],
        f"-{k41} port:22": [b["ip_str"] for b in banners],
    }
    for query, ips in expected.items():
        assert sorted(b["ip_str"] for b in search(store, query)[1]) == ips, query
        assert [b["ip_str"] for b in banners if matcher(parse_strict(query))(b)] == ips, query


def test_facets_and_trends_of_free_text_count_whole_words_of_current_banners(store):
    """What holds a word only inside another (``nginxplus``) and what a newer banner replaced are
    left out of the facets as of the matches (a store may look for the bytes first and ask the
    rest only of what it found)."""
    add(store, banner(ip="198.18.5.1", stamp="2026-01-10T00:00:00.000000", data="nginx 1.18"))
    add(store, banner(ip="198.18.5.1", stamp="2026-02-10T00:00:00.000000", data="nginx 1.25"))
    add(store, banner(ip="198.18.5.2", port=443, data="nginxplus"), banner(ip="198.18.5.3", port=80, data="nginx"))
    assert count(store, "nginx", "port") == (2, {"port": [{"count": 1, "value": "22"}, {"count": 1, "value": "80"}]})
    assert count(store, '"nginx 1.25" port:22', "ip") == (1, {"ip": [{"count": 1, "value": "198.18.5.1"}]})
    assert count(store, "nginx -port:80", "port") == (1, {"port": [{"count": 1, "value": "22"}]})
    assert count(store, "title:nginx", "port") == (0, {"port": []})
    trends = store.trends(parse_strict("nginx port:22"), parse_facets("port"))
    assert [m["count"] for m in trends.matches] == [1, 1, 0]  # January, February, March: history counts
    assert trends.facets["port"][1] == {"key": "2026-02", "values": [{"count": 1, "value": "22"}]}


def test_a_field_a_banner_lacks_is_no_value_of_its_facet_and_matches_no_filter_but_a_negated_one(store):
    add(
        store,
        banner(ip="198.18.6.1", org="Acme", location={"country_code": "de"}, vulns={"CVE-1": {}}, screenshot={}),
        banner(ip="198.18.6.2", org=["Acme", "a list"], location={"country_code": ""}),  # no org, no country
        banner(ip="198.18.6.3", product="nginx", http={"title": "Acme"}),
    )
    assert count(store, "port:22", "org,country,has_screenshot") == (
        3,
        {
            "org": [{"count": 1, "value": "Acme"}],
            "country": [{"count": 1, "value": "DE"}],
            "has_screenshot": [{"count": 2, "value": "false"}, {"count": 1, "value": "true"}],
        },
    )
    assert count(store, "org:acme")[0] == count(store, "country:DE")[0] == count(store, "has_vuln:true")[0] == 1
    assert count(store, "-org:acme")[0] == count(store, "-country:de")[0] == count(store, "has_vuln:false")[0] == 2
    assert count(store, 'org:"a list"')[0] == 0 and count(store, "product:NGINX org:acme,nginx")[0] == 0


def test_more_than_nine_facets_at_once_each_counted_apart_numbers_tied_in_numeric_order(store):
    """Eleven facets of one query (a store may number them in one pass), over all and by month; a
    facet of numbers orders values of one count as numbers (22 before 1000, -3 before 5), not as text."""
    tagged = {"org": "Acme", "asn": "AS64512", "location": {"country_code": "DE", "city": "Bonn"}, "tags": ["ics"]}
    add(
        store,
        banner(ip="198.18.7.1", port=1000, hash=5, http={"status": 200}, version="1.0", product="nginx", **tagged),
        banner(ip="198.18.7.2", port=1000, hash=-3, vulns={"CVE-2": {}}, stamp="2026-04-01T00:00:00.000000"),
        banner(ip="198.18.7.3", port=22, hash=100, http={"status": 404}, **tagged),
        banner(ip="198.18.7.4", port=22, hash=5, http={"status": 200}),
        banner(ip="198.18.7.5", port=443, hash=-3),
    )
    names = "port,org,asn,country,product,vuln,tag,hash,http.status,version,city"
    total, facets = count(store, "net:198.18.7.0/24", names)
    assert total == 5
    assert facets == {
        "port": [{"count": 2, "value": "22"}, {"count": 2, "value": "1000"}, {"count": 1, "value": "443"}],
        "org": [{"count": 2, "value": "Acme"}],
        "asn": [{"count": 2, "value": "AS64512"}],
        "country": [{"count": 2, "value": "DE"}],
        "product": [{"count": 1, "value": "nginx"}],
        "vuln": [{"count": 1, "value": "CVE-2"}],
        "tag": [{"count": 2, "value": "ics"}],
        "hash": [{"count": 2, "value": "-3"}, {"count": 2, "value": "5"}, {"count": 1, "value": "100"}],
        "http.status": [{"count": 2, "value": "200"}, {"count": 1, "value": "404"}],
        "version": [{"count": 1, "value": "1.0"}],
        "city": [{"count": 2, "value": "Bonn"}],
    }
    trends = store.trends(parse_strict("net:198.18.7.0/24"), parse_facets(names))
    assert [m["count"] for m in trends.matches] == [4, 1]  # March, April
    assert trends.facets["port"][0]["values"] == [
        {"count": 2, "value": "22"},
        {"count": 1, "value": "443"},
        {"count": 1, "value": "1000"},
    ]
    assert trends.facets["vuln"][1] == {"key": "2026-04", "values": [{"count": 1, "value": "CVE-2"}]}
    assert trends.facets["city"][0] == {"key": "2026-03", "values": [{"count": 2, "value": "Bonn"}]}


def test_cpe_prefixes_and_lists_of_addresses_and_networks(store):
    """What the embedded index matches without a regular expression or a scan a value (a CPE
    prefix, single addresses among networks), and repeated values, every store alike."""
    add(
        store,
        banner("198.18.0.1", cpe23=["cpe:2.3:a:nginx:nginx:1.18.0"]),
        banner("198.18.0.2", cpe23=["cpe:2.3:a:nginx:nginx_plus:r30"]),
        banner("2001:db8::1", cpe23=["cpe:2.3:a:apache:http_server:2.4"]),
        banner("198.18.1.9"),
    )
    assert count(store, "cpe:cpe:2.3:a:nginx")[0] == 2
    assert count(store, "cpe:cpe:2.3:a:nginx:nginx,CPE:2.3:A:APACHE:HTTP_SERVER:2.4")[0] == 2
    assert count(store, "cpe:cpe:2.3:a:ngin")[0] == 0
    assert count(store, "ip:198.18.0.1,2001:db8::1,198.18.0.77")[0] == 2
    assert count(store, "net:198.18.0.1,198.18.1.0/24,198.18.1.0/24,2001:db8::/32")[0] == 3
    assert count(store, "-net:" + ",".join(["198.18.0.0/24"] * 300))[0] == 2


def _found(store: BannerStore, query: str) -> list[tuple[str, int]]:
    """Every (address, port) a store's search finds, page by page."""
    total, page, found = None, 1, []
    while total is None or len(found) < total:
        total, banners, _ = search(store, query, page=page)
        if not banners:
            break
        found += [(b["ip_str"], b["port"]) for b in banners]
        page += 1
    return sorted(found)


def test_the_matcher_agrees_with_the_store_on_every_filter_example_and_its_negation(store):
    """Alert triggers and the live tail's filter test one banner in memory (query/match.py): on
    each filter's example, and on it negated, they select what the store's search selects."""
    from spyglass.query import FILTER_EXAMPLES

    banners = list(generate(1500, seed=1))
    for i in range(0, len(banners), 500):
        add(store, *banners[i : i + 500])
    newest: dict[tuple, dict] = {}
    for b in banners:
        service = (b["ip_str"], b["port"], b["transport"])
        if service not in newest or b["timestamp"] >= newest[service]["timestamp"]:
            newest[service] = b
    matched = 0
    for name, example in sorted(FILTER_EXAMPLES.items()):
        for query in (example, "-" + example):
            among = banners if name == "scan" and not query.startswith("-") else list(newest.values())
            test = matcher(parse_strict(query))
            expected = sorted((b["ip_str"], b["port"]) for b in among if test(b))
            assert _found(store, query) == expected, query
            matched += bool(expected)
    assert matched > len(FILTER_EXAMPLES)  # most examples select something here: not an agreement on nothing


def test_a_tool_s_tag_finds_every_service_it_found_also_after_another_tool_rescanned_it(store):
    """Issue 46: `search tag:nmap` is "every service your nmap runs found" (README). Its current
    banner may be another tool's since; other tags stay the banner's own."""
    add(store, banner(stamp="2026-01-01T00:00:00.000000", tags=["nmap", "cloud"]))
    add(store, banner(ip="198.18.0.2", stamp="2026-01-01T00:00:00.000000", tags=["nmap"]))
    add(store, banner(stamp="2026-02-01T00:00:00.000000", tags=["masscan"], data="rescan"))
    add(store, banner(ip="198.18.0.3", stamp="2026-02-01T00:00:00.000000", tags=["masscan"]))
    assert sorted(b["ip_str"] for b in search(store, "tag:nmap")[1]) == ["198.18.0.1", "198.18.0.2"]
    assert [b["data"] for b in search(store, "tag:nmap ip:198.18.0.1")[1]] == ["rescan"]  # the current
    assert count(store, "tag:NMAP")[0] == 2 and count(store, "tag:masscan")[0] == 2
    assert [b["ip_str"] for b in search(store, "-tag:nmap")[1]] == ["198.18.0.3"]
    assert count(store, "tag:cloud")[0] == 0  # not a tool: the current banner's own tags
    assert count(store, "tag:nmap,cloud")[0] == 2
