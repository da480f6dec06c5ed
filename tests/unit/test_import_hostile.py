"""Banners in the shapes real exports hold, and hostile ones: each line stands alone, nothing an
odd member holds fails a banner or changes what later banners may be, and the store keeps every
banner exactly as it came."""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import pytest

from spyglass.query import FACETS, parse_facets, parse_strict
from spyglass.server.index import BannerIndex
from spyglass.server.ingest import importer
from spyglass.server.ingest.importer import ImportFileError, import_banners, import_files
from spyglass.server.ingest.parsing import prepare_block


def real_banner(n: int, **members) -> dict:
    """A banner in the original service's export shape, with ``members`` on top."""
    b = {
        "ip_str": f"198.19.{n // 256}.{n % 256}",
        "port": 443,
        "transport": "tcp",
        "timestamp": f"2025-03-{1 + n % 28:02d}T10:00:00.{n:06d}",
        "hash": -1234567 - n,
        "data": "HTTP/1.1 200 OK\r\nServer: nginx\r\n\r\n",
        "org": "Example Org",
        "isp": "Example ISP",
        "asn": "AS64500",
        "hostnames": [f"h{n}.example.net"],
        "domains": ["example.net"],
        "location": {"country_code": "DE", "city": "Berlin", "latitude": 52.5, "longitude": 13.4},
        "_shodan": {"crawler": "0" * 40, "id": f"id-{n}", "module": "https", "ptr": True},
    }
    b.update(members)
    return b


ODD_MEMBERS: list[dict] = [
    {"asn": 13335},
    {"asn": "AS13335"},
    {"vulns": ["CVE-2021-44228", "CVE-2014-0160"]},
    {"vulns": {"CVE-2021-44228": {"verified": True, "cvss": "high", "references": None}}},
    {"ssl": "TLSv1.2"},
    {"location": "Berlin"},
    {
        "http": {
            "title": 123,
            "status": None,
            "html": "<b>x</b>",
            "redirects": [{"host": "a", "data": "b"}],
            "favicon": {"hash": -382492124, "data": "AAAA", "location": "/favicon.ico"},
            "components": {"jQuery": {"categories": ["JavaScript libraries"]}},
            "waf": "Cloudflare",
        }
    },
    {"http": {"title": ["a", "b"], "status": "200", "favicon": {"hash": 2**70}, "components": ["nginx"]}},
    {"http": {"status": 18446744073709551616, "html_hash": 1.5, "robots_hash": True}},
    {
        "ssl": {
            "cert": {
                "serial": 4.99e36,
                "expired": True,
                "subject": {"CN": 7},
                "issuer": {"CN": None},
                "fingerprint": {"sha256": "ab" * 32},
                "extensions": [{"name": "basicConstraints"}],
            },
            "alpn": ["h2", "http/1.1"],
            "versions": ["TLSv1.2", "-SSLv3"],
            "dhparams": {"bits": 2048},
            "ja3s": "e35df3e00ca4ef31d42b34bebaa2f86e",
            "jarm": "2ad2ad0002ad2ad00042d42d00000000f7",
        }
    },
    {"ssl": {"cert": {"serial": 123456789012345678901234567890123456789, "expired": "no"}}},
    {"ssh": {"type": "ssh-rsa", "fingerprint": "aa:bb", "hassh": "c1d2", "kex": {"kex_algorithms": ["[/]"]}}},
    {"ssh": ["not", "an", "object"]},
    {"dns": {"recursive": True, "resolver_hostname": None, "software": 5}},
    {"snmp": {"versions": [1, 2], "name": {"x": 1}}},
    {"opts": {"vulns": ["CVE-1"], "heartbleed": "2025/03 - VULNERABLE"}, "cloud": {"provider": 1}},
    {"hostnames": "single.example.net", "domains": [None, 3], "tags": {"a": 1}, "cpe23": 5},
    {"os": 12, "product": None, "version": 1.2, "org": {"name": "x"}, "isp": []},
    {"hash": 2**64, "data": None},
    {
        "screenshot": None,
        "mongodb": {"databases": [{"name": 3}, "x"]},
        "redis": {"keys": {"data": [1, None]}},
        "rsync": {"modules": ["a"]},
    },
    {"http": {"title": "x" * 100_000, "waf": "w" * 70_000}, "data": "y " * 200_000, "product": "\u202e\x1b[2J"},
    {"ip_str": None, "ipv6": "2001:db8::1"},
    {"ip": 3323068417, "ip_str": "198.18.10.1"},
]


def lines_of(banners: list[dict]) -> list[bytes]:
    return [json.dumps(b).encode() for b in banners]


@pytest.fixture
def odd(tmp_path):
    banners = [real_banner(i, **m) for i, m in enumerate(ODD_MEMBERS)]
    path = tmp_path / "real.json"
    path.write_bytes(b"\n".join(lines_of(banners)) + b"\n")
    return banners, path


@pytest.mark.external
def test_every_real_shape_imports_and_round_trips(tmp_path, odd):
    banners, path = odd
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    assert (report.read, report.added, report.bad, report.exit_status) == (len(banners), len(banners), 0, 0)
    for b, line in zip(banners, lines_of(banners), strict=True):
        address = b.get("ip_str") or b["ipv6"]
        stored = [s for s in idx.host(address) if s["timestamp"] == b["timestamp"]]
        assert stored == [json.loads(line)]  # every member, the same value (integers past 64 bits too)
    idx.close()


@pytest.mark.external
def test_search_and_every_facet_work_over_odd_banners(tmp_path, odd):
    banners, path = odd
    idx = BannerIndex(tmp_path / "data")
    import_files(idx, [path], workers=1)
    total, page, facets = idx.search(parse_strict("org:example"), parse_facets(",".join(FACETS)))
    assert total >= len(banners) - 3 and set(facets) == set(FACETS)
    assert all(isinstance(v["value"], str) for f in facets.values() for v in f)
    assert idx.count(parse_strict("asn:AS13335"), [])[0] == 2  # an int asn is indexed as text
    assert idx.count(parse_strict("ssh.type:ssh-rsa"), [])[0] == 1
    assert idx.count(parse_strict("ssl.cert.expired:true"), [])[0] == 1
    assert idx.count(parse_strict("http.title:123"), [])[0] == 1
    assert idx.count(parse_strict("http.status:200"), [])[0] == 1  # a numeric string is a status
    assert idx.count(parse_strict("has_ipv6:true"), [])[0] == 1
    assert idx.count(parse_strict("ssl.cert.serial:4.99e+36"), [])[0] == 1
    idx.close()


def test_an_odd_banner_never_changes_what_later_banners_may_be(tmp_path):
    idx = BannerIndex(tmp_path)
    import_banners(idx, [real_banner(1, http={"title": 123})])
    report = import_banners(idx, [real_banner(2, http={"title": "Welcome"}), real_banner(3, http={"title": 4.5})])
    assert (report.added, report.bad) == (2, 0)
    idx.close()
    again = BannerIndex(tmp_path)
    assert again.count(parse_strict("http.title:welcome"), [])[0] == 1
    assert again.count(parse_strict("http.title:123"), [])[0] == 1
    again.close()


@pytest.mark.external
@pytest.mark.parametrize(
    "line, reason",
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b"null", "not a JSON object"),
        (b'{"ip_str": "198.18.0.1", "port": 80}', "no ISO 8601 timestamp"),
        (b'{"ip_str": "198.18.0.1", "port": 80, "timestamp": "2600-01-01T00:00:00"}', "timestamp out of range"),
        (b'{"ip_str": "198.18.0.1", "port": 80, "timestamp": "2025-02-30T00:00:00"}', "timestamp out of range"),
        (b'{"ip_str": "nope", "port": 80, "timestamp": "2025-01-01T00:00:00"}', "no valid ip_str, ipv6 or ip"),
        (b'{"ip_str": "198.18.0.1", "port": 70000, "timestamp": "2025-01-01T00:00:00"}', "no valid port"),
        (b'{"ip_str": "198.18.0.1", "port": true, "timestamp": "2025-01-01T00:00:00"}', "no valid port"),
        (b'{"ip_str": "198.18.0.1", "port": 1, "timestamp": "2025-01-01T00:00:00", "transport": 5}', "transport"),
        (b"\xff\xfe garbage", "not JSON"),
        (b'{"ip_str": "198.18.0.1", "port": 1, "timestamp": "2025-01-01T00:00:00", "x": NaN}', "not JSON"),
    ],
)
def test_a_bad_line_is_reported_and_skipped(tmp_path, line, reason):
    good = json.dumps(real_banner(1)).encode()
    path = tmp_path / "mixed.json"
    path.write_bytes(good + b"\n" + line + b"\n" + json.dumps(real_banner(2)).encode() + b"\n")
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    assert (report.read, report.added, report.bad, report.exit_status) == (3, 2, 1, 1)
    assert report.problems[0].startswith("mixed.json:2: ") and reason in report.problems[0]
    idx.close()


@pytest.mark.external
def test_a_truncated_gzip_keeps_what_was_read_and_says_so(tmp_path):
    path = tmp_path / "cut.json.gz"
    body = gzip.compress(b"\n".join(lines_of([real_banner(i) for i in range(2000)])) + b"\n")
    path.write_bytes(body[: len(body) // 2])
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    assert report.exit_status == 2 and len(report.file_errors) == 1
    error = report.file_errors[0]
    assert isinstance(error, ImportFileError) and error.path == path and "truncated" in error.message
    assert 0 < report.added == idx.total() and error.loaded >= report.added
    idx.close()


@pytest.mark.external
def test_a_gz_that_is_not_gzip_is_a_clean_error(tmp_path):
    path = tmp_path / "plain.json.gz"
    path.write_bytes(json.dumps(real_banner(1)).encode() + b"\n")
    missing = tmp_path / "missing.json"
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path, missing], workers=1)
    assert report.exit_status == 2 and report.added == 0
    assert [type(e) for e in report.file_errors] == [ImportFileError, ImportFileError]
    assert "not a gzip file" in report.file_errors[0].message
    assert "No such file" in report.file_errors[1].message
    idx.close()


@pytest.mark.external
def test_exit_status_says_whether_everything_loaded(tmp_path):
    idx = BannerIndex(tmp_path / "data")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_bytes(json.dumps(real_banner(1)).encode() + b"\n")
    bad.write_bytes(b"{nope\n[]\n")
    assert import_files(idx, [good], workers=1).exit_status == 0
    assert import_files(idx, [good], workers=1).exit_status == 0  # already there counts as loaded
    assert import_files(idx, [bad], workers=1).exit_status == 2
    idx.close()


@pytest.mark.external
def test_lines_cut_across_read_blocks_load_whole_with_their_numbers(tmp_path, monkeypatch):
    """A file is parsed in blocks of whole lines: a line split by a block's end, a line longer than
    a block, blank lines and a last line without its newline all load, and problems keep their
    line numbers."""
    monkeypatch.setattr(importer, "BLOCK", 700)
    long = real_banner(0, data="x" * 5000)
    lines = [json.dumps(long).encode(), b""] + [json.dumps(real_banner(n)).encode() for n in range(1, 20)]
    lines[9] = b"{broken"
    for name, write in (("cut.json", Path.write_bytes), ("cut.json.gz", lambda p, b: p.write_bytes(gzip.compress(b)))):
        path = tmp_path / name
        write(path, b"\n".join(lines))  # no newline after the last line
        idx = BannerIndex(tmp_path / name.replace(".", "-"))
        report = import_files(idx, [path], workers=1)
        assert (report.read, report.added, report.bad) == (20, 19, 1)
        assert len(report.problems) == 1 and report.problems[0].startswith(f"{name}:10: not JSON")
        assert idx.host(long["ip_str"])[0]["data"] == long["data"]
        assert idx.host("198.19.0.19")  # the last line, without its newline
        idx.close()


@pytest.mark.external
def test_a_truncated_gzip_never_loads_the_line_it_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(importer, "BLOCK", 50_000)
    body = b"\n".join(json.dumps(real_banner(i)).encode() for i in range(400)) + b"\n"
    packed = gzip.compress(body)
    path = tmp_path / "cut.json.gz"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    assert report.bad == 0 and report.added > 0 and len(report.file_errors) == 1
    assert report.file_errors[0].loaded == report.read == report.added
    idx.close()


@pytest.mark.external
def test_a_file_is_read_exactly_an_integer_past_64_bits_too(tmp_path):
    """An imported file's banners are indexed as they came: a serial past 64 bits by its digits (a
    float's reading of it is not what an analyst searches for)."""
    serial = 123456789012345678901234567890123456789
    big = real_banner(1, ssl={"cert": {"serial": serial}})
    path = tmp_path / "exact.json"
    path.write_bytes(json.dumps(big).encode() + b"\n")
    idx = BannerIndex(tmp_path / "data")
    assert import_files(idx, [path], workers=1).added == 1
    assert idx.count(parse_strict(f"ssl.cert.serial:{serial}"), [])[0] == 1
    assert idx.host(big["ip_str"]) == [big]
    idx.close()


@pytest.mark.external
def test_a_lone_surrogate_is_kept_in_the_banner_and_its_other_words_are_searchable(tmp_path):
    """Wild banners hold the escape of a lone surrogate: the banner is stored as it came and
    indexed with U+FFFD in its place."""
    banner = real_banner(3, org="Lone \ud800 Org", http={"title": "t\udc00itle"})
    path = tmp_path / "lone.json"
    path.write_bytes(json.dumps(banner).encode() + b"\n")
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    assert (report.added, report.bad) == (1, 0)
    assert idx.host(banner["ip_str"]) == [banner]
    assert idx.count(parse_strict("org:lone port:443"), [])[0] == 1
    idx.close()


@pytest.mark.external
def test_a_gzip_bomb_of_one_long_line_is_reported_and_never_held(tmp_path):
    """1 MB of gzip can inflate to one line of 1 GiB (it took an import to 7 GB, then a traceback):
    a line over the cap is dropped as it is read and reported by its number; the lines around it
    load. Here 64 MiB against a cap of 1 MiB: what this process allocates stays near the cap."""
    import tracemalloc

    path = tmp_path / "bomb.json.gz"
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(json.dumps(real_banner(1)).encode() + b"\n")
        fh.write(b'{"data": "')
        for _ in range(64):
            fh.write(b"A" * (1 << 20))
        fh.write(b'"}\n' + json.dumps(real_banner(2)).encode() + b"\n")
    idx = BannerIndex(tmp_path / "data")
    tracemalloc.start()
    try:
        report = import_files(idx, [path], workers=1, max_line=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (report.read, report.added, report.bad) == (3, 2, 1)
    assert report.problems == ["bomb.json.gz:2: a line over 1,048,576 bytes"]
    assert peak < 16 << 20, f"{peak:,} bytes allocated at the peak"
    idx.close()


def test_a_chunk_crosses_to_the_writing_process_as_it_was_prepared():
    """A worker's chunk keeps its prepared banners whole; pickled (to a process that writes them)
    it goes as their fields, a list each, and comes back the same, its problems with it."""
    lines = [json.dumps(real_banner(n)).encode() for n in range(3)]
    chunk = prepare_block(BannerIndex.prepare, b"\n".join([lines[0], b"{not json", *lines[1:]]) + b"\n")
    assert len(chunk.prepared) == 3 and [n for n, _ in chunk.problems] == [1]
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    empty = prepare_block(BannerIndex.prepare, b"\n\n")
    assert pickle.loads(pickle.dumps(empty)) == empty and empty.prepared == []
