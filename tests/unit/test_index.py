"""The banner index on real files: import, dedup, bad lines, recovery, and what queries find."""

from __future__ import annotations

import gzip
import json
import re
import threading

import orjson
import pytest

from spyglass.datagen import generate
from spyglass.query import parse_facets, parse_strict
from spyglass.server.index import BannerIndex
from spyglass.server.index.aside import searching
from spyglass.server.ingest.importer import import_banners, import_files

COUNT = 3000


@pytest.fixture(scope="module")
def banners():
    return list(generate(COUNT, seed=7))


def elsewhere(banners: list[dict], b: dict, n: int) -> list[dict]:
    """The first ``n`` banners of services other than ``b``'s (none of them can replace it)."""
    mine = (b["ip_str"], b["port"], b["transport"])
    return [o for o in banners if (o["ip_str"], o["port"], o["transport"]) != mine][:n]


def latest_of_each_service(banners: list[dict]) -> list[dict]:
    """What search sees: the newest banner of each (address, port, transport), a later one on a tie."""
    latest: dict[tuple, dict] = {}
    for b in banners:
        key = (b["ip_str"], b["port"], b.get("transport", "tcp"))
        if key not in latest or b["timestamp"] >= latest[key]["timestamp"]:
            latest[key] = b
    return list(latest.values())


@pytest.fixture(scope="module")
def current(banners):
    return latest_of_each_service(banners)


@pytest.fixture(scope="module")
def index(tmp_path_factory, banners):
    idx = BannerIndex(tmp_path_factory.mktemp("index"))
    import_banners(idx, (dict(b) for b in banners))
    yield idx
    idx.close()


def expected(banners, predicate) -> int:
    return sum(1 for b in banners if predicate(b))


def search(index, q, facets=""):
    return index.search(parse_strict(q), parse_facets(facets))


@pytest.mark.parametrize(
    "query, predicate",
    [
        ("port:22", lambda b: b["port"] == 22),
        ("port:80,443", lambda b: b["port"] in (80, 443)),
        ("-port:22", lambda b: b["port"] != 22),
        ("country:de", lambda b: b["location"]["country_code"] == "DE"),
        ("tag:ics", lambda b: "ics" in b.get("tags", [])),
        ("has_vuln:true", lambda b: bool(b.get("vulns"))),
        ("has_ssl:false", lambda b: "ssl" not in b),
        ("-has_ssl:false", lambda b: "ssl" in b),  # false is a flag's absence in the index
        ("has_vuln:false port:22", lambda b: not b.get("vulns") and b["port"] == 22),
        ("has_ipv6:false", lambda b: ":" not in b["ip_str"]),
        ("has_ssl:true,false", lambda b: True),
        ("vuln:CVE-2021-41773", lambda b: "CVE-2021-41773" in b.get("vulns", {})),
        ("product:openssh", lambda b: b.get("product") == "OpenSSH"),
        ("http.status:404", lambda b: (b.get("http") or {}).get("status") == 404),
        ("net:198.18.0.0/24", lambda b: b["ip_str"].startswith("198.18.0.")),
        ("after:2026-06-30", lambda b: b["timestamp"] >= "2026-07-01"),
        ("before:2025-01-01", lambda b: b["timestamp"] < "2025-01-01"),
        ('http.title:"welcome to nginx"', lambda b: (b.get("http") or {}).get("title") == "Welcome to nginx!"),
        ("asn:AS64512", lambda b: b["asn"] == "AS64512"),
        ("ssh", lambda b: "ssh" in b["data"].lower().replace("-", " ").split()),
    ],
)
def test_queries_find_exactly_what_they_mean(index, current, query, predicate):
    total, page, _ = search(index, query)
    assert total == expected(current, predicate) > 0
    assert len(page) == min(100, total)


def test_hostname_matches_the_domain_and_its_subdomains(index, current):
    domain = next(b["domains"][0] for b in current if b["hostnames"])
    total, _, _ = search(index, f"hostname:{domain}")
    assert total == expected(current, lambda b: any(h.endswith("." + domain) for h in b["hostnames"]))


def test_pages_are_newest_first_and_do_not_overlap(index):
    _, first, _ = search(index, "port:80")
    total, second, _ = index.search(parse_strict("port:80"), [], page=2)
    stamps = [b["timestamp"] for b in first + second]
    assert stamps == sorted(stamps, reverse=True)
    assert {(b["ip_str"], b["timestamp"]) for b in first}.isdisjoint({(b["ip_str"], b["timestamp"]) for b in second})


def test_facets_count_exactly(index, current):
    total, facets = index.count(parse_strict("has_ssl:true"), parse_facets("port:3,country:100"))
    ssl = [b for b in current if "ssl" in b]
    by_port: dict[str, int] = {}
    for b in ssl:
        by_port[str(b["port"])] = by_port.get(str(b["port"]), 0) + 1
    assert total == len(ssl)
    assert [(f["value"], f["count"]) for f in facets["port"]] == sorted(by_port.items(), key=lambda kv: -kv[1])[:3]
    assert sum(f["count"] for f in facets["country"]) == len(ssl)


def test_facets_are_counted_beside_the_search_not_after_it(index, monkeypatch):
    """In another thread, while the page and the total are found (tantivy lets go of the GIL),
    unless other searches are running (the cores are busy then): what a search, or a count,
    answers is the same."""

    threads: list[str] = []
    counted = index._facets

    def facets(*args):
        threads.append(threading.current_thread().name)
        return counted(*args)

    before = [index.search(parse_strict("port:22"), parse_facets("org,port")), index.count(parse_strict("port:22"), [])]
    monkeypatch.setattr(index, "_facets", facets)
    after = [index.search(parse_strict("port:22"), parse_facets("org,port")), index.count(parse_strict("port:22"), [])]
    assert after == before and before[0][2]["org"]
    assert len(threads) == 1 and threads[0].startswith("aside") and threads[0] != threading.current_thread().name
    with searching():  # another search, running
        assert index.search(parse_strict("port:22"), parse_facets("org,port")) == before[0]
    assert threads[1:] == [threading.current_thread().name]


@pytest.mark.parametrize("facets", ["country", "country,port", "country:3,port,org"])
def test_trends_alone_count_half_their_facets_aside_and_answer_the_same(index, facets):
    query, wanted = parse_strict("port:22,80,443"), parse_facets(facets)
    with searching():  # another search, running: every facet counted in one pass, here
        together = index.trends(query, wanted)
    alone = index.trends(query, wanted)
    assert alone == together and together.total and all(any(m["values"] for m in v) for v in together.facets.values())


def test_host_has_every_banner_of_the_address(index, banners):
    ip = banners[0]["ip_str"]
    found = index.host(ip)
    assert len(found) == expected(banners, lambda b: b["ip_str"] == ip)
    assert all(b["ip_str"] == ip for b in found)


@pytest.mark.external
def test_an_import_s_workers_without_a_job_take_no_shard(tmp_path, banners):
    """Two workers, one block of lines: the second took a shard and left it empty (a searcher more,
    and trends answered 500 over it)."""
    lines = tmp_path / "few.json"
    lines.write_bytes(b"\n".join(orjson.dumps(b) for b in banners[:20]) + b"\n")
    idx = BannerIndex(tmp_path / "data")
    assert import_files(idx, [lines], workers=2).added == 20
    assert [s.num_docs for s in idx.searchers()] == [20]
    idx.close()


@pytest.mark.external
def test_import_files_plain_and_gzip_with_bad_lines(tmp_path, banners):
    plain, packed = tmp_path / "a.json", tmp_path / "b.json.gz"
    lines = [orjson.dumps(b) for b in banners[:100]]
    lines[10] = b"{not json"
    lines[20] = json.dumps({"ip_str": "198.18.0.1", "port": 80}).encode()  # no timestamp
    plain.write_bytes(b"\n".join(lines[:50]) + b"\n")
    with gzip.open(packed, "wb") as fh:
        fh.write(b"\n".join(lines[50:]) + b"\n")
    idx = BannerIndex(tmp_path / "data")
    seen = []
    report = import_files(idx, [plain, packed], progress=lambda done, total, r: seen.append((done, total)))
    assert (report.read, report.added, report.bad) == (100, 98, 2)
    assert report.problems[0].startswith("a.json:11: not JSON (")
    assert report.problems[1] == "a.json:21: no ISO 8601 timestamp"
    assert seen[-1][0] == seen[-1][1]
    again = import_files(idx, [plain, packed])
    assert (again.added, again.duplicates) == (0, 98)
    assert idx.total() == 98
    idx.close()


def test_banners_are_stored_exactly_as_given(tmp_path, banners):
    b = dict(banners[0])
    b["_shodan"] = b.pop("_intel")
    idx = BannerIndex(tmp_path)
    import_banners(idx, [b])
    assert idx.host(b["ip_str"]) == [b]
    idx.close()


def test_index_catches_up_after_a_crash_between_store_and_index(tmp_path, banners):
    idx = BannerIndex(tmp_path)
    import_banners(idx, banners[:50])
    idx.records.set_meta("indexed_seq:0", "20")  # as if the shard lost its mark's update after its commit
    assert idx.behind()
    idx.close()
    again = BannerIndex(tmp_path)  # catches the shard up: the 30 it holds past its mark deleted, indexed again
    assert again.total() == 50 and again.records.count() == 50 and not again.behind()
    assert again.records.indexed_seq(0) == 50
    again.close()


@pytest.mark.parametrize(
    "word, member",
    [
        ("jenkins", lambda b: (b.get("http") or {}).get("title")),
        ("orchid", lambda b: b.get("org")),
        ("aurora", lambda b: " ".join(b.get("hostnames") or [])),
    ],
)
def test_free_text_matches_data_product_title_org_and_hostnames(index, current, word, member):
    def words(b):
        title = (b.get("http") or {}).get("title") or ""
        text = " ".join([b["data"], b.get("product") or "", title, b.get("org") or "", *b.get("hostnames", [])])
        return set(re.findall(r"[^\W_]+", text.lower()))

    total, _, _ = search(index, word)
    assert total == sum(word in words(b) for b in current) > 0
    assert any(word in str(member(b)).lower() and word not in b["data"].lower() for b in current)


def test_free_text_matches_a_product_missing_from_data(tmp_path, banners):
    b = dict(banners[0], product="Zyxelgate", data="hello\n")
    idx = BannerIndex(tmp_path)
    import_banners(idx, [b])
    assert search(idx, "zyxelgate")[0] == 1 and search(idx, "hello")[0] == 1
    idx.close()


def test_a_newer_banner_replaces_the_current_one_across_imports_and_crashes(tmp_path, banners):
    from spyglass.server.index.store import prepare

    old = dict(banners[0], timestamp="2025-01-01T00:00:00.000000", product="Old")
    new = dict(old, timestamp="2025-06-01T00:00:00.000000", product="New")
    newest = dict(old, timestamp="2025-09-01T00:00:00.000000", product="Newest")
    idx = BannerIndex(tmp_path)
    import_banners(idx, [old])
    import_banners(idx, [new])  # a later import: the old one is re-indexed as not current
    assert search(idx, "product:old")[0] == 0 and search(idx, "product:new")[0] == 1
    idx.records.add([prepare(newest)])  # stored, then the process dies before the index commits
    idx.close()
    again = BannerIndex(tmp_path)  # opening catches up: the demotion too
    assert search(again, "product:new")[0] == 0 and search(again, "product:newest")[0] == 1
    assert [b["product"] for b in again.host(old["ip_str"])] == ["Newest", "New", "Old"]  # history keeps all
    assert not again.behind()
    again.close()


def test_a_failure_while_indexing_reaches_the_caller_and_loses_nothing_stored(tmp_path, banners, monkeypatch):
    """What fails while a document is indexed fails the writer's caller, and the banners stored
    with it are indexed at the next start."""
    from spyglass.server.index import store as module

    real = module.add_document

    def failing(writer, seq, current, tail):
        if seq > 30:
            raise OSError("disk full")
        real(writer, seq, current, tail)

    monkeypatch.setattr(module, "add_document", failing)
    idx = BannerIndex(tmp_path)
    with pytest.raises(OSError, match="disk full"):
        import_banners(idx, banners[:60])
    assert idx.records.count() == 60
    idx.close()
    monkeypatch.setattr(module, "add_document", real)
    again = BannerIndex(tmp_path)
    assert again.total() == 60 and not again.behind()
    again.close()


def test_a_newer_banner_in_a_later_batch_of_one_import_replaces_the_current_one(tmp_path, banners, monkeypatch):
    """Batches stored ahead of the index: a demotion the index has not seen the first banner of yet
    still leaves one current banner per service."""
    from spyglass.server.ingest import importer

    monkeypatch.setattr(importer, "BATCH", 1)
    old = dict(banners[0], timestamp="2025-01-01T00:00:00.000000", product="Old")
    new = dict(old, timestamp="2025-06-01T00:00:00.000000", product="New")
    idx = BannerIndex(tmp_path)
    others = elsewhere(banners, old, 4)
    import_banners(idx, [old, *others, new])
    assert search(idx, "product:old")[0] == 0 and search(idx, "product:new")[0] == 1
    assert len(idx.host(old["ip_str"])) == sum(b["ip_str"] == old["ip_str"] for b in [old, *others, new])
    idx.close()


def test_a_demoted_banner_holding_an_integer_past_64_bits_is_reindexed_exactly(tmp_path, banners, monkeypatch):
    """A demoted banner is read again to be re-indexed: one orjson refuses is read exactly."""
    from spyglass.server.ingest import importer

    monkeypatch.setattr(importer, "BATCH", 1)
    old = dict(banners[0], timestamp="2025-01-01T00:00:00.000000", hash=2**70, product="Old")
    new = dict(old, timestamp="2025-06-01T00:00:00.000000", hash=1, product="New")
    idx = BannerIndex(tmp_path)
    import_banners(idx, [old, new])
    assert search(idx, "product:old")[0] == 0 and search(idx, "product:new")[0] == 1
    assert old in idx.host(old["ip_str"]) and not idx.behind()
    idx.close()


@pytest.mark.parametrize(
    "query",
    ["tag:ΟΔΟΣ", "tag:οδοσ", "tag:Οδοσ", "version:1.0-rc1", "version:1.0-RC1", "vuln:cve-2024-0001", "transport:UDP"],
)
def test_an_exact_filter_matches_whatever_the_case_and_its_facet_shows_the_value_as_sent(tmp_path, banners, query):
    """tag, version, vuln... are one field in the index (lower-cased terms, values as sent for the
    facet): Σ included, which tantivy lower-cases letter by letter."""
    b = dict(banners[0], tags=["ΟΔΟΣ"], version="1.0-RC1", vulns={"CVE-2024-0001": {}}, transport="UDP")
    idx = BannerIndex(tmp_path)
    tcp = [o for o in banners if o["transport"] == "tcp"]  # only b is UDP
    import_banners(idx, [b, *elsewhere(tcp, b, 18)])
    total, found, facets = search(idx, query, "tag,version,vuln,transport")
    assert total == 1 and found == [b]
    assert [(f["value"], f["count"]) for f in facets["tag"]] == [("ΟΔΟΣ", 1)]
    assert [f["value"] for f in facets["version"]] == ["1.0-RC1"]
    assert [f["value"] for f in facets["vuln"]] == ["CVE-2024-0001"]
    assert [f["value"] for f in facets["transport"]] == ["udp"]  # a transport is a lower-case name
    idx.close()


def test_the_address_facet_and_a_host_lookup_in_any_spelling(tmp_path, banners):
    """The ip facet counts addresses as written (IPv4 and IPv6), and a host lookup takes an address in
    any spelling; anything else finds nothing rather than failing."""
    v6 = dict(banners[1], ip_str="2001:db8::1", ipv6="2001:db8::1")
    idx = BannerIndex(tmp_path)
    import_banners(idx, [banners[0], v6])
    _, facets = idx.count(parse_strict(f"port:{banners[0]['port']},{v6['port']}"), parse_facets("ip"))
    assert sorted(f["value"] for f in facets["ip"]) == sorted([banners[0]["ip_str"], "2001:db8::1"])
    assert idx.host("2001:0db8:0:0::1") == [v6]
    assert idx.host(banners[0]["ip_str"]) == [banners[0]]
    assert idx.host("not an address") == [] and idx.host("") == []
    idx.close()


def test_a_named_value_is_searched_by_its_words_and_faceted_as_sent(tmp_path, banners):
    """org, product, http.title... are one field in the index: the words for the filter (a phrase
    too), the value as sent for the facet."""
    b = dict(banners[0], org="Orchid Retail Group GmbH", http={"title": "Welcome to NGINX!"})
    idx = BannerIndex(tmp_path)
    others = [o for o in banners if "http" not in o and "Orchid" not in o["org"]]  # neither b's org nor title
    import_banners(idx, [b, *elsewhere(others, b, 8)])
    for query in ("org:orchid", 'org:"retail group"', "org:GMBH", 'http.title:"welcome to nginx"', "all:gmbh"):
        assert search(idx, query)[0] == 1, query
    assert search(idx, 'org:"group retail"')[0] == 0
    _, facets = idx.count(parse_strict("org:gmbh"), parse_facets("org,http.title"))
    assert facets == {
        "org": [{"count": 1, "value": "Orchid Retail Group GmbH"}],
        "http.title": [{"count": 1, "value": "Welcome to NGINX!"}],
    }
    idx.close()


@pytest.mark.parametrize(
    "query, found",
    [
        ("cpe:cpe:2.3:a:nginx", True),
        ("cpe:CPE:2.3:A:NGINX:NGINX:1.18.0", True),
        ("cpe:cpe:/a:nginx:nginx", True),
        ("cpe:cpe:2.3:a:ngin", False),  # a leading part ends at a colon
        ("cpe:cpe:2.3:a:nginx:nginx:1.18.0:x", False),
        ('cpe:"cpe:2.3:a:odd(+)*.[name]:x"', True),  # what a regular expression reads specially
        ('cpe:"cpe:2.3:a:odd(+)*.[name"', False),
        ("cpe:cpe:2.3:a:odd", False),
    ],
)
def test_a_cpe_filter_matches_a_cpe_or_a_leading_part_of_it(tmp_path, banners, query, found):
    b = dict(
        banners[0], cpe23=["cpe:2.3:a:nginx:nginx:1.18.0", "cpe:2.3:a:odd(+)*.[name]:x"], cpe=["cpe:/a:nginx:nginx"]
    )
    idx = BannerIndex(tmp_path)
    import_banners(idx, [b])
    assert search(idx, query)[0] == int(found)
    idx.close()


def test_a_prefix_finds_every_cpe_under_it_and_addresses_are_found_in_lists(tmp_path, banners):
    """More CPEs under one prefix than tantivy's phrase prefix expands (50), and single addresses
    (looked up as terms) beside networks (ranges), IPv4 and IPv6."""
    many = []
    for i in range(60):
        b = {k: v for k, v in banners[i].items() if k != "ip"}
        many.append(dict(b, ip_str=f"192.0.2.{i}", port=1000 + i, cpe23=[f"cpe:2.3:a:vendor{i}:x:1"], cpe=[]))
    many.append(dict(many[0], ip_str="2001:db8::1", port=999, cpe23=["cpe:2.3:o:other"]))
    idx = BannerIndex(tmp_path)
    import_banners(idx, many)
    assert search(idx, "cpe:cpe:2.3:a")[0] == 60
    assert search(idx, "cpe:cpe:2.3:a:vendor1,cpe:2.3:a:vendor12:x,cpe:2.3:o:other:x")[0] == 2
    assert search(idx, "ip:192.0.2.1,192.0.2.7,2001:db8::1,192.0.2.99")[0] == 3
    assert search(idx, "net:192.0.2.1,192.0.2.8/29,2001:db8::/32")[0] == 1 + 8 + 1
    assert search(idx, "-net:192.0.2.1,::ffff:192.0.2.2")[0] == 61 - 2
    idx.close()


def test_a_prefix_filter_builds_no_regular_expression():
    """A regular expression a value cost hundreds of MB at 2,000 values, and one of 1,200 letters
    passed tantivy's state limit (a 500)."""
    from spyglass.server.index.compiler import compile_query
    from spyglass.server.index.schema import build_schema

    values = ",".join(f"cpe:2.3:a:vendor{i}" for i in range(100))
    assert "Regex" not in repr(compile_query(build_schema(), parse_strict(f"cpe:{values}")))


def test_trends_and_facets_over_a_shard_left_empty(tmp_path, banners):
    """An import's worker that got no job leaves an empty shard, which answers an aggregation with
    no bucket at all: trends failed with a KeyError (HTTP 500) on such a data dir until restarted."""
    index = BannerIndex(tmp_path)
    with index.writing(shard=1):
        pass
    import_banners(index, banners[:300])
    assert len(index.searchers()) == 2 and min(s.num_docs for s in index.searchers()) == 0
    trends = index.trends(parse_strict("port:22,80,443"), parse_facets("port:3"))
    assert trends.total == sum(m["count"] for m in trends.matches) > 0
    assert sum(v["count"] for m in trends.facets["port"] for v in m["values"]) == trends.total
    assert index.count(parse_strict("port:22,80,443"), parse_facets("port:3"))[1]["port"]
    index.close()


def test_while_a_backend_serves_a_batch_is_searchable_before_the_next_comes(tmp_path, banners, monkeypatch):
    """Beside a backend a writer commits what it adds at once when its last commit is COMMIT_AFTER
    old: a batch waited for the writer's next one (seconds during an import: newcomer trial 29 saw
    banners arrive in steps of 60,000)."""
    from spyglass.server.index import store as module

    monkeypatch.setattr(module, "served_by", lambda data_dir: 1)  # (as a running backend's lock says)
    idx, reader = BannerIndex(tmp_path), BannerIndex(tmp_path)
    try:
        with idx.writing() as writer:
            writer.add([idx.prepare(b) for b in banners[:20]])
            reader.shards.stale()
            assert reader.total() == 20  # was 0: committed only at a later add, or at the end
    finally:
        idx.close()
        reader.close()
