"""DNS: domain information from the index (with its credit), and resolve/reverse against a real
DNS server on loopback, through the client and the CLI against the backend under uvicorn."""

from __future__ import annotations

import json
import re
import socket

import httpx
import pytest

from spyglass.cli import main
from spyglass.client import BadRequest, Clients, NoCredits, NotFound, RetryPolicy, ServerError
from spyglass.models import DomainInfo
from spyglass.server.geonet import GeonetSettings
from tests.conftest import ORIGINAL, backend_with
from tests.servers import DnsServer


def banner(ip: str, port: int, when: str, hostnames: list[str], domains: list[str] | None = None) -> dict:
    return {
        "ip_str": ip,
        "port": port,
        "transport": "tcp",
        "timestamp": when,
        "hostnames": hostnames,
        "domains": domains or ["corp.test"],
        "data": "x",
    }


BANNERS = [
    banner("192.0.2.1", 80, "2026-01-01T10:00:00.000000", ["www.corp.test", "corp.test"]),
    banner("192.0.2.1", 80, "2026-03-01T10:00:00.000000", ["www.corp.test"]),  # the current one of :80
    banner("192.0.2.2", 25, "2026-02-01T09:30:00.000000", ["mail.corp.test"]),
    banner("2001:db8::7", 443, "2026-02-02T08:00:00.000000", ["v6.corp.test"]),
    banner("192.0.2.3", 22, "2026-02-03T08:00:00.000000", ["other.test"], ["other.test"]),
    banner("192.0.2.4", 22, "2026-02-04T08:00:00.000000", [7, {"x": 1}, "ODD.corp.test."]),  # untyped members
    *(banner(f"198.51.100.{i}", 80, "2026-02-05T08:00:00.000000", [f"h{i:03}.big.test"]) for i in range(150)),
]


@pytest.fixture(scope="module")
def dns_server():
    with DnsServer() as server:
        yield server


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, dns_server):
    geonet = GeonetSettings(nameservers=[dns_server.host], dns_port=dns_server.port, dns_timeout=2.0)
    with backend_with(tmp_path_factory.mktemp("dns-backend"), BANNERS, geonet=geonet) as backend:
        yield backend


@pytest.fixture
async def member(loaded):
    async with Clients.from_profile(loaded.profile(loaded.key("member"))) as clients:
        yield clients


async def test_domain_from_the_current_banners_costs_one_credit(member):
    info = await member.dns.domain("corp.test")
    assert member.credits.query == 99
    rows = [(r.subdomain, r.type, r.value, r.last_seen) for r in info.data]
    assert rows == [
        ("mail", "A", "192.0.2.2", "2026-02-01T09:30:00+00:00"),
        ("odd", "A", "192.0.2.4", "2026-02-04T08:00:00+00:00"),
        ("v6", "AAAA", "2001:db8::7", "2026-02-02T08:00:00+00:00"),
        ("www", "A", "192.0.2.1", "2026-03-01T10:00:00+00:00"),
    ]
    assert info.subdomains == ["mail", "odd", "v6", "www"] and info.tags == ["ipv6"] and info.more is False


async def test_history_includes_what_is_no_longer_current(member):
    info = await member.dns.domain("CORP.test.", history=True)
    assert ("", "A", "192.0.2.1") in [(r.subdomain, r.type, r.value) for r in info.data]
    assert info.domain == "corp.test"


async def test_type_filter_and_pages_of_100(member):
    only_v6 = await member.dns.domain("corp.test", type="AAAA")
    assert [r.value for r in only_v6.data] == ["2001:db8::7"]
    first = await member.dns.domain("big.test")
    second = await member.dns.domain("big.test", page=2)
    assert (len(first.data), first.more) == (100, True)
    assert (len(second.data), second.more) == (50, False)
    assert len({r.subdomain for r in first.data + second.data}) == 150 and len(first.subdomains) == 150
    assert member.credits.query == 97  # one per lookup, whatever the page


async def test_unknown_domains_and_bad_input_cost_nothing(member):
    with pytest.raises(NotFound, match="No information available for nowhere.test"):
        await member.dns.domain("nowhere.test")
    with pytest.raises(BadRequest):
        await member.dns.domain("not a domain")
    with pytest.raises(BadRequest, match="type"):
        await member.dns.domain("corp.test", type="PTR")
    assert (await member.account.api_info()).query_credits == 100


async def test_domain_needs_a_query_credit(loaded):
    async with Clients.from_profile(loaded.profile(loaded.key("free"))) as free:
        with pytest.raises(NoCredits):
            await free.dns.domain("corp.test")


async def test_resolve_asks_the_configured_name_server(member):
    found = await member.dns.resolve(["example.test", "loop.example.test", "missing.example.test"])
    assert found == {"example.test": "192.0.2.10", "loop.example.test": "127.0.0.1", "missing.example.test": None}
    assert member.credits.query == 100  # resolve and reverse are free


async def test_reverse(member):
    assert await member.dns.reverse("192.0.2.10,192.0.2.99") == {"192.0.2.10": ["example.test"], "192.0.2.99": None}


async def test_resolve_and_reverse_check_their_input(member):
    with pytest.raises(BadRequest, match="'not an ip' is not valid"):
        await member.dns.reverse("192.0.2.10,not an ip")
    with pytest.raises(BadRequest, match="'fe80::1%lo' is not valid"):  # a scope: it was a 500
        await member.dns.reverse("fe80::1%lo")
    with pytest.raises(BadRequest, match="at most 100"):
        await member.dns.resolve([f"h{i}.example.test" for i in range(101)])
    with pytest.raises(BadRequest, match="at least one"):
        await member.dns.resolve(" , ")


async def test_a_name_server_that_never_answers_is_a_502(tmp_path):
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # bound, never read: no answer comes
    silent.bind(("127.0.0.1", 0))
    geonet = GeonetSettings(nameservers=["127.0.0.1"], dns_port=silent.getsockname()[1], dns_timeout=0.3)
    try:
        with backend_with(tmp_path, [], geonet=geonet) as backend:
            # one attempt: a client's retries of a 502 (with backoff) are not what is tested here
            async with Clients.from_profile(backend.profile(backend.key("member")), RetryPolicy(attempts=1)) as c:
                with pytest.raises(ServerError, match="The DNS server did not answer"):
                    await c.dns.resolve("example.test")
    finally:
        silent.close()


async def test_the_openapi_document_declares_the_errors(loaded):
    async with httpx.AsyncClient() as http:
        paths = (await http.get(f"{loaded.url}/openapi.json")).json()["paths"]
    assert {"400", "401", "402", "404", "429"} <= set(paths["/dns/domain/{domain}"]["get"]["responses"])
    assert {"400", "401", "502"} <= set(paths["/dns/resolve"]["get"]["responses"])
    assert {"400", "401", "502"} <= set(paths["/dns/reverse"]["get"]["responses"])


def test_the_fixture_parses_as_domain_info():
    info = DomainInfo.model_validate_json((ORIGINAL / "dns_domain.json").read_text())
    assert info.subdomains == ["www"] and info.data[2].type == "AAAA"


def test_cli_domain_resolve_reverse(loaded, capsys, monkeypatch):
    monkeypatch.setenv("SPYGLASS_URL", loaded.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", loaded.key("member"))
    assert main(["domain", "corp.test"]) == 0
    out = capsys.readouterr().out
    assert "www.corp.test" in out and "192.0.2.1" in out and "AAAA" in out
    # the value (an address, a TXT record: any width) comes last, after the date seen, which lines up
    dates = [re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  ", line) for line in out.splitlines()]
    assert all(dates) and len({d.start() for d in dates if d}) == 1
    assert main(["resolve", "example.test", "missing.example.test"]) == 0
    out = [line for line in capsys.readouterr().out.splitlines() if "DNSHandler" not in line]  # dnslib's log
    assert out[0].split() == ["example.test", "192.0.2.10"] and out[1].split()[0] == "missing.example.test"
    assert main(["reverse", "--json", "192.0.2.10"]) == 0
    out = "\n".join(line for line in capsys.readouterr().out.splitlines() if "DNSHandler" not in line)
    assert json.loads(out) == {"192.0.2.10": ["example.test"]}
    assert main(["domain", "nowhere.test"]) == 4
    assert "No information available" in capsys.readouterr().err
