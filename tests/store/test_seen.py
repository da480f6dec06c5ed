"""What scans saw besides open services (issue 46: hosts up, ports closed or filtered), from real
nmap runs against loopback imported into every store (conftest.STORES): kept apart from banners,
looked up by host, found by ``host.state:`` and ``port.state:``, and added once however often a
file is imported."""

from __future__ import annotations

import pytest

from spyglass.query import parse_facets, parse_strict
from spyglass.server.banners import seen
from spyglass.server.ingest.importer import import_files
from tests.formats.seenfiles import NMAP, runs

pytestmark = [
    pytest.mark.skipif(NMAP is None, reason="nmap (Debian's package) is not installed"),
    pytest.mark.external,  # nmap, and the importer's worker processes
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    found = runs(tmp_path_factory.mktemp("seen"))
    return [found[n] for n in ("sweep", "ports", "many")]


def found(store, query: str) -> list[tuple]:
    total, rows = seen.search(store, parse_strict(query))
    assert total == len(rows)
    return sorted((r["port"], r["transport"], r["seen"]["state"], r["seen"]["reason"], r["seen"]["file"]) for r in rows)


def test_hosts_up_and_ports_not_open_are_kept_apart_from_banners_and_found(store, files):
    report = import_files(store, files, workers=1)
    assert (report.added, report.bad, report.hosts, report.exit_status) == (1, 0, 3, 0)
    assert [f.hosts for f in report.files] == [1, 1, 1]
    [banner] = store.host("127.0.0.1")  # the one open port is the one banner
    filtered = found(store, "port.state:filtered")
    [listed] = [f for f in filtered if f[4] == "ports.xml"]
    assert listed[1:4] == ("tcp", "filtered", "no-response")
    assert listed[0] != banner["port"]

    # banners' search, count, facets and trends see none of it
    for query in ("port.state:filtered", f"port:{listed[0]}", "port.state:closed port:1", "host.state:up"):
        assert store.count(parse_strict(query), [])[0] == 0, query
    assert store.count(parse_strict("-port.state:filtered"), [])[0] == 1
    total, _, facets = store.search(parse_strict("tag:nmap"), parse_facets("port"))
    assert total == 1 and facets["port"] == [{"count": 1, "value": str(banner["port"])}]
    assert store.trends(parse_strict("tag:nmap"), []).total == 1

    # which hosts had this port filtered, listed by nmap or counted in extraports with its range
    assert found(store, f"port.state:filtered port:{listed[0]}") == [listed]
    many = files[2].read_text()
    counted = int(many.split('reason="no-response" count="30" proto="tcp" ports="')[1].split(",")[0])
    assert found(store, f"port.state:filtered port:{counted}") == [
        (counted, "tcp", "filtered", "no-response", "many.xml")
    ]
    assert found(store, "port.state:closed port:120,2") == [
        (2, "tcp", "closed", "conn-refused", "ports.xml"),
        (120, "tcp", "closed", "conn-refused", "many.xml"),
    ]
    assert found(store, "port.state:closed port:120 -scan:" + _scan(store, "many.xml")) == []
    groups = [
        r for r in seen.search(store, parse_strict("port.state:filtered"))[1] if r["seen"]["kind"] == "extraports"
    ]
    assert [(g["seen"]["count"], g["seen"]["file"]) for g in groups] == [(30, "many.xml")]

    # hosts up, with the run that saw them; those with no open port
    assert sorted(f[4] for f in found(store, "host.state:up")) == ["many.xml", "ports.xml", "sweep.xml"]
    assert sorted(f[4] for f in found(store, "host.state:up host.open:0")) == ["many.xml", "sweep.xml"]
    assert found(store, "host.open:0") == found(store, "host.state:up host.open:0")  # any state
    assert [f[4] for f in found(store, "host.open:1")] == ["ports.xml"]
    assert found(store, "host.state:up net:192.0.2.0/24") == found(store, "host.state:down") == []
    assert len(found(store, "host.state:up ip:127.0.0.1 after:2000-01-01 -before:2000-01-01")) == 3

    # the host lookup: each run's host row first, then its ports, newest run first
    saw = seen.of_host(store, "127.0.0.1")
    hosts = [r for r in saw if r["seen"]["kind"] == "host"]
    assert sorted(h["seen"]["file"] for h in hosts) == ["many.xml", "ports.xml", "sweep.xml"]
    assert all(h["seen"]["tool"] == "nmap" and h["seen"]["version"] and h["seen"]["args"] for h in hosts)
    [counts] = [h["seen"]["extraports"] for h in hosts if h["seen"]["file"] == "many.xml"]
    assert [(e["state"], e["count"]) for e in counts] == [("closed", 40), ("filtered", 30)]
    assert sum(r["seen"]["kind"] == "port" for r in saw) == 4  # 3 closed and 1 filtered listed
    assert seen.of_host(store, "127.0.0.2") == []

    # imported again: nothing added twice
    again = import_files(store, files, workers=1)
    assert (again.added, again.seen, again.hosts) == (0, 0, 3)
    assert seen.of_host(store, "127.0.0.1") == saw


def _scan(store, file: str) -> str:
    return next(r["seen"]["scan"] for r in seen.of_host(store, "127.0.0.1") if r["seen"]["file"] == file)


def test_what_scans_saw_is_there_after_a_restart(open_store, files):
    first = open_store()
    import_files(first, files[:1], workers=1)
    before = seen.of_host(first, "127.0.0.1")
    first.close()
    assert len(before) == 1 and seen.of_host(open_store(), "127.0.0.1") == before


@pytest.mark.parametrize(
    "query, problem",
    [
        ("port.state:closed ssh", "free text"),
        ("port.state:closed host.state:up", "ask one of them"),
        ("host.state:up port:22", "has no port"),
        ("port.state:closed host.open:0", "ask one of them"),
        ("port.state:closed -host.open:0", "has no host.open"),
        ("port.state:closed product:nginx", "narrowed by"),
    ],
)
def test_what_such_a_search_cannot_answer_is_said(query, problem):
    assert seen.asks(parse_strict(query)) and problem in (seen.problem(parse_strict(query)) or "")


def test_a_negated_state_filter_alone_is_a_search_of_banners():
    assert not seen.asks(parse_strict("-port.state:closed port:22"))
    assert not seen.asks(parse_strict("-host.open:0")) and seen.asks(parse_strict("host.open:0"))
    assert seen.problem(parse_strict("port.state:closed -port:22 -transport:udp scan:x")) is None
