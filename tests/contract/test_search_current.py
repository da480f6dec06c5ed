"""Search sees the current banner of each service, history keeps the rest, and banners come back
exactly as imported: the backend under uvicorn, banners loaded from a real file."""

from __future__ import annotations

import json
import sqlite3

import httpx
import pytest

from spyglass.query import parse_strict
from spyglass.server.index import BannerIndex
from spyglass.server.ingest.importer import import_files
from tests.conftest import start_backend
from tests.unit.test_import_hostile import ODD_MEMBERS, real_banner

IP = "198.19.7.7"


def scans() -> list[dict]:
    """Four services of one host, each scanned several times, one old scan arriving last."""
    out = []
    for day in (3, 1, 2):
        for port in (22, 80, 443):
            out.append(
                real_banner(
                    0, ip_str=IP, port=port, timestamp=f"2025-05-0{day}T00:00:00.000000", product=f"p{port}-{day}"
                )
            )
    out.append(real_banner(0, ip_str=IP, port=53, transport="udp", timestamp="2025-05-01T00:00:00.000000"))
    out.append(real_banner(0, ip_str=IP, port=53, transport="tcp", timestamp="2025-05-01T00:00:00.000000"))
    out.append(real_banner(0, ip_str=IP, port=80, timestamp="2024-01-01T00:00:00.000000", product="ancient"))
    return out


@pytest.fixture(scope="module", params=["shodan", "intel"])
def served(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"current-{request.param}")
    banners = scans() + [real_banner(i + 1, **m) for i, m in enumerate(ODD_MEMBERS)]
    lines = [json.dumps(b) for b in banners]
    path = tmp / "export.json"
    path.write_text("\n".join(lines) + "\n")
    server, backend = start_backend(tmp / "data", namespace=request.param)
    report = import_files(backend.app.state.banners, [path], workers=1)
    assert report.bad == 0
    with server:
        with httpx.Client(base_url=backend.url, params={"key": backend.key()}) as http:
            yield request.param, http, lines
    backend.store.close()


@pytest.mark.external
def test_search_count_and_facets_cover_the_latest_banner_of_each_service(served):
    namespace, http, _ = served
    count = http.get(f"/{namespace}/host/count", params={"query": f"net:{IP}/32", "facets": "port"}).json()
    assert count["total"] == 5  # 22, 80, 443 and 53 over udp and tcp
    ports = sorted((f["value"], f["count"]) for f in count["facets"]["port"])
    assert ports == [("22", 1), ("443", 1), ("53", 2), ("80", 1)]
    page = http.get(f"/{namespace}/host/search", params={"query": f"net:{IP}/32"}).json()
    assert sorted(b["product"] for b in page["matches"] if b["port"] != 53) == ["p22-3", "p443-3", "p80-3"]
    assert http.get(f"/{namespace}/host/count", params={"query": "product:ancient"}).json()["total"] == 0


@pytest.mark.external
def test_host_history_keeps_every_banner(served):
    namespace, http, _ = served
    host = http.get(f"/{namespace}/host/{IP}").json()
    assert len(host["data"]) == 5 and host["ports"] == [22, 53, 80, 443]
    history = http.get(f"/{namespace}/host/{IP}", params={"history": "true"}).json()
    assert len(history["data"]) == len(scans())


@pytest.mark.external
def test_host_returns_every_member_as_imported(served):
    namespace, http, lines = served
    for line in lines[len(scans()) :]:
        original = json.loads(line)
        address = original.get("ip_str") or original["ipv6"]
        host = http.get(f"/{namespace}/host/{address}", params={"history": "true"})
        assert host.status_code == 200
        (got,) = [b for b in json.loads(host.text)["data"] if b["timestamp"] == original["timestamp"]]
        expected = dict(original)
        if namespace != "shodan":  # only the crawler member's name changes
            expected[f"_{namespace}"] = expected.pop("_shodan")
        expected.setdefault("ip_str", address)  # added only where the banner had no such member
        assert got == expected


@pytest.mark.external
def test_search_pages_return_banners_as_imported(served):
    namespace, http, lines = served
    page = http.get(f"/{namespace}/host/search", params={"query": "org:example", "minify": "false"})
    assert page.status_code == 200
    originals = {json.loads(line)["timestamp"]: json.loads(line) for line in lines[len(scans()) :]}
    for got in json.loads(page.text)["matches"]:
        if got["timestamp"] in originals and got.get("ip_str") == originals[got["timestamp"]].get("ip_str"):
            assert set(got) - {f"_{namespace}"} == set(originals[got["timestamp"]]) - {"_shodan"}


OLD_LAYOUT = """
CREATE TABLE banners (seq INTEGER PRIMARY KEY, key INTEGER NOT NULL UNIQUE, body BLOB NOT NULL);
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def test_a_data_dir_of_the_first_layout_is_migrated(tmp_path):
    """banners.db as the first release wrote it (user_version 0, no services table, normalized
    bodies, index schema 1): opened, every service's latest banner is searchable, history kept."""
    db = sqlite3.connect(tmp_path / "banners.db")
    db.executescript(OLD_LAYOUT)
    for seq, b in enumerate(scans(), start=1):
        b = dict(b, _intel=b.pop("_shodan"), ip=3323201287)
        db.execute("INSERT INTO banners VALUES (?, ?, ?)", (seq, seq * 7919, json.dumps(b).encode()))
    db.executemany("INSERT INTO meta VALUES (?, ?)", [("schema_version", "1"), ("indexed_seq", str(len(scans())))])
    db.commit()
    db.close()
    (tmp_path / "index").mkdir()
    idx = BannerIndex(tmp_path)
    from spyglass.server.index.records import MIGRATIONS

    assert idx.records._db.one("PRAGMA user_version")[0] == len(MIGRATIONS)
    assert idx.count(parse_strict(f"net:{IP}/32"), [])[0] == 5
    assert idx.count(parse_strict("product:ancient"), [])[0] == 0
    assert len(idx.host(IP)) == len(scans())
    idx.close()
