"""What nmap saw besides open ports (issue 46): a ping sweep's host up, ports closed and filtered
with their reasons and TTL, and ``<extraports>`` counts, from real runs against loopback
(tests/formats/seenfiles.py); read defensively; and, imported by ``spyglass import`` as a user
runs it, found by ``spyglass host`` and a ``port.state:`` / ``host.state:`` search, never as banners."""

from __future__ import annotations

import io

import httpx
import pytest

from spyglass.server.ingest.formats import Seen
from spyglass.server.ingest.formats.nmap import PORTS_EACH, Nmap
from tests.conftest import start_backend
from tests.formats.seenfiles import NMAP, runs
from tests.workflows.commands import spyglass

needs_nmap = pytest.mark.skipif(NMAP is None, reason="nmap (Debian's package) is not installed")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return runs(tmp_path_factory.mktemp("seen"))


def parsed(data: bytes) -> tuple[list[dict], list[dict]]:
    """(banners, what the run saw of each host) as the importer's workers read them."""
    fmt = Nmap()
    out = [r for piece in fmt.pieces(io.BytesIO(data)) for r in fmt.parse(*piece)]  # type: ignore[misc]
    return [r for r in out if isinstance(r, dict)], [r.record for r in out if isinstance(r, Seen)]


@needs_nmap
@pytest.mark.external
def test_a_ping_sweep_sees_the_host_up_and_no_banner(files):
    banners, [host] = parsed(files["sweep"].read_bytes())
    assert banners == []
    assert (host["ip_str"], host["state"], host["open"], host["ports"], host["extraports"]) == (
        "127.0.0.1",
        "up",
        0,
        [],
        [],
    )
    assert host["reason"] and host["ttl"] == 0  # localhost-response as root, else conn-refused or syn-ack
    assert host["tool"]["name"] == "nmap" and " -sn " in host["tool"]["args"] and host["scan"].startswith("nmap-")
    assert list(Nmap().records(io.BytesIO(files["sweep"].read_bytes()))) == []  # records: banners only


@needs_nmap
@pytest.mark.external
def test_closed_and_filtered_ports_are_seen_with_their_reason_and_ttl(files):
    banners, [host] = parsed(files["ports"].read_bytes())
    assert len(banners) == 1 and host["open"] == 1 and host["state"] == "up" and host["extraports"] == []
    states = {(p["state"], p["reason"], p["ttl"], p["transport"]) for p in host["ports"]}
    assert states == {("closed", "conn-refused", 0, "tcp"), ("filtered", "no-response", 0, "tcp")}
    assert sorted(p["state"] for p in host["ports"]) == ["closed", "closed", "closed", "filtered"]
    assert banners[0]["port"] not in {p["port"] for p in host["ports"]}  # the open port is a banner only


@needs_nmap
@pytest.mark.external
def test_extraports_are_counted_with_their_reasons_and_ranges(files):
    banners, [host] = parsed(files["many"].read_bytes())
    assert banners == [] and host["ports"] == [] and host["open"] == 0
    extras = {e["state"]: e for e in host["extraports"]}
    assert extras["closed"]["count"] == 40 and extras["filtered"]["count"] == 30
    [closed] = extras["closed"]["reasons"]
    assert (closed["reason"], closed["count"], closed["transport"], closed["ports"]) == (
        "conn-refused",
        40,
        "tcp",
        "100-139",
    )
    [filtered] = extras["filtered"]["reasons"]
    assert (filtered["reason"], filtered["count"]) == ("no-response", 30) and len(filtered["ports"].split(",")) == 30


HOSTILE = b"""<?xml version="1.0"?><nmaprun scanner="nmap" args="nmap x" start="1700000000" version="7.93">
<host><status state="up" reason="%s" reason_ttl="99999999999999999999"/>
<address addr="192.0.2.7" addrtype="ipv4"/><ports>
<extraports state="filtered" count="-3">
<extrareasons reason="no-response" count="x" ports="1-9,z,99999999-3"/></extraports>
<port protocol="tcp" portid="abc"><state state="closed" reason="reset" reason_ttl="64"/></port>
<port protocol="tcp" portid="70000"><state state="closed" reason="reset" reason_ttl="64"/></port>
<port protocol="tcp" portid="22"><state state="filtered" reason="no-response" reason_ttl="1e3"/></port>
<port protocol="udp" portid="53"></port>
</ports></host></nmaprun>"""


def test_what_nmap_saw_is_read_defensively():
    """Out-of-range numbers, words of any length, missing elements: kept within bounds or left out."""
    banners, [host] = parsed(HOSTILE % (b"x" * 5000))
    assert banners == [] and host["ip_str"] == "192.0.2.7"
    assert len(host["reason"]) == 64 and host["ttl"] is None
    assert host["ports"] == [
        {"port": 22, "transport": "tcp", "state": "filtered", "reason": "no-response", "ttl": None}
    ]
    [extra] = host["extraports"]
    assert (
        extra["count"] is None
        and extra["reasons"][0]["count"] is None
        and extra["reasons"][0]["ports"] == "1-9,z,99999999-3"
    )


def test_a_host_cut_into_pieces_says_the_whole_host_s_open_ports_in_each():
    """A host of more than PORTS_EACH ports is parsed in pieces: each says what it lists not open,
    and every piece the open ports of the whole host (the same host row, kept once)."""
    port = '<port protocol="tcp" portid="%d"><state state="%s" reason="r" reason_ttl="0"/></port>'
    ports = "".join(port % (n, "open" if n % 1000 == 0 else "closed") for n in range(1, PORTS_EACH + 600))
    data = (
        b'<nmaprun scanner="nmap" args="nmap y" start="1700000000"><host><status state="up"/>'
        b'<address addr="192.0.2.8" addrtype="ipv4"/><ports>' + ports.encode() + b"</ports></host></nmaprun>"
    )
    banners, hosts = parsed(data)
    assert len(hosts) == 2 and {h["open"] for h in hosts} == {len(banners)} == {2}
    assert sum(len(h["ports"]) for h in hosts) == PORTS_EACH + 599 - 2


@needs_nmap
@pytest.mark.external
def test_imported_by_the_cli_they_are_found_by_host_and_search_never_as_banners(files, tmp_path):
    data = tmp_path / "data"
    done = spyglass("import", "--data", str(data), *(str(files[n]) for n in ("sweep", "ports", "many")))
    assert "sweep.xml: nmap, 0 read, 0 new, 0 bad, 1 host seen" in done.stderr
    again = spyglass("import", "--data", str(data), str(files["many"]))
    assert "many.xml: nmap, 0 read, 0 new, 0 bad, 1 host seen" in again.stderr
    server, backend = start_backend(data)
    with server, httpx.Client(base_url=backend.url, params={"key": backend.key()}, timeout=30) as http:
        env = {"SPYGLASS_URL": backend.url, "SPYGLASS_API_KEY": backend.key()}
        host = http.get("/intel/host/127.0.0.1").json()
        runs_seen = [r for r in host["seen"] if r["seen"]["kind"] == "host"]
        assert sorted(r["seen"]["file"] for r in runs_seen) == ["many.xml", "ports.xml", "sweep.xml"]  # once each
        filtered = [r for r in host["seen"] if r["seen"]["state"] == "filtered"]
        assert [(r["seen"]["reason"], r["seen"]["ttl"], r["seen"]["file"]) for r in filtered] == [
            ("no-response", 0, "ports.xml")
        ]
        port = filtered[0]["port"]
        page = http.get("/intel/host/search", params={"query": f"port.state:filtered port:{port}"}).json()
        assert [(m["ip_str"], m["port"], m["seen"]["reason"]) for m in page["matches"]] == [
            ("127.0.0.1", port, "no-response")
        ]
        assert http.get("/intel/host/count", params={"query": f"port:{port}"}).json()["total"] == 0  # not a banner
        assert http.get("/intel/host/count", params={"query": "tag:nmap"}).json()["total"] == 1  # the open port
        sweep = http.get("/intel/host/search", params={"query": "host.state:up host.open:0"}).json()
        assert sorted(m["seen"]["file"] for m in sweep["matches"]) == ["many.xml", "sweep.xml"]
        refused = http.get("/intel/host/search", params={"query": "port.state:closed nginx"})
        assert refused.status_code == 400 and "free text" in refused.json()["error"]

        shown = spyglass("host", "127.0.0.1", env=env).stdout
        assert "no open port: seen by nmap 7" in shown and "sweep.xml" in shown
        assert f"{port}/tcp" in shown and "filtered  no-response, ttl 0" in shown
        assert "40 closed (conn-refused 40: 100-139)" in shown
        listed = spyglass("search", f"port.state:filtered port:{port}", env=env).stdout
        assert f"{port}/tcp" in listed and "no-response" in listed and "ports.xml" in listed
    backend.store.close()
