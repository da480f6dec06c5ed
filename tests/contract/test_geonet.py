"""The geonet service: ping and DNS from one agent and from many, against real agents on
127.0.0.x, a real DNS server on loopback, and a peer that hangs."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from spyglass.client import Clients, GeoNetClient, Transport
from spyglass.models import GeoLocation
from spyglass.models.geonet import MISSING_HEADER
from spyglass.server.geonet import UNKNOWN_LOCATION, GeonetSettings, parse_location
from spyglass.server.routers.geonet import create_geonet_app
from tests.servers import ZONE_NETWORKS, DnsServer, ThreadedServer

BERLIN = GeoLocation(city="Berlin", country="DE", latlon="52.52,13.405")
TOKYO = GeoLocation(city="Tokyo", country="JP", latlon="35.6895,139.6917")
LIMA = GeoLocation(city="Lima", country="PE", latlon="-12.0432,-77.0282")


@pytest.fixture(scope="module")
def dns_server():
    with DnsServer() as server:
        yield server


def agent(location: GeoLocation, host: str, dns_server: DnsServer, **kw) -> ThreadedServer:
    kw.setdefault("rate_limit", 1000.0)  # these tests ask quickly; the limit has its own test
    kw.setdefault("allow", ZONE_NETWORKS)  # they ping loopback and resolve the test zone
    settings = GeonetSettings(
        location=location, nameservers=[dns_server.host], dns_port=dns_server.port, ping_count=2, **kw
    )
    return ThreadedServer(create_geonet_app(settings), host=host)


@pytest.fixture(scope="module")
def hanging_peer():
    """Accepts connections (in the kernel's backlog) and never answers."""
    sock = socket.create_server(("127.0.0.9", 0))
    yield f"http://127.0.0.9:{sock.getsockname()[1]}"
    sock.close()


@pytest.fixture(scope="module")
def down_peer():
    with socket.socket() as s:
        s.bind(("127.0.0.8", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.8:{port}"


@pytest.fixture(scope="module")
def agents(dns_server, hanging_peer, down_peer):
    with agent(TOKYO, "127.0.0.3", dns_server) as tokyo, agent(LIMA, "127.0.0.4", dns_server) as lima:
        front = agent(
            BERLIN, "127.0.0.2", dns_server, deadline=1.5, peers=[tokyo.url, lima.url, hanging_peer, down_peer]
        )
        with front:
            yield front


def geonet(server: ThreadedServer) -> GeoNetClient:
    return GeoNetClient(Transport(server.url))


async def test_ping_loopback(agents):
    async with geonet(agents) as client:
        result = await client.ping("127.0.0.1")
    assert result.is_alive and result.packets_sent == 2 and result.packet_loss == 0.0
    assert result.from_loc == BERLIN
    assert 0 < result.min_rtt <= result.avg_rtt <= result.max_rtt < 1000  # milliseconds
    assert len(result.rtts) == 2


async def test_geoping_fans_out_and_names_what_is_missing(agents, hanging_peer, down_peer):
    async with geonet(agents) as client:
        results = await client.geoping("127.0.0.1")
    assert sorted(r.from_loc.city for r in results) == ["Berlin", "Lima", "Tokyo"]
    assert all(r.is_alive for r in results)
    reasons = {m.agent: m.reason for m in results.missing}
    assert reasons[hanging_peer] == "no answer within 1.5 s"
    assert reasons[down_peer] == "connection refused or unreachable"


@pytest.mark.parametrize(
    "rtype, expected",
    [
        ("A", ["192.0.2.10"]),
        ("AAAA", ["2001:db8::10"]),
        ("NS", ["ns1.example.test"]),
        ("MX", ["10 mail.example.test"]),
        ("TXT", ["v=spf1 -all"]),
        ("SOA", ["ns1.example.test. admin.example.test. 2026112201 3600 600 86400 60"]),
        ("CAA", ['0 issue "ca.example.test"']),
    ],
)
async def test_dns_record_types(agents, rtype, expected):
    async with geonet(agents) as client:
        result = await client.dns("example.test", rtype)
    assert [a.value for a in result.answers] == expected
    assert {a.type for a in result.answers} == {rtype}


async def test_dns_cname_srv_and_ptr(agents):
    async with geonet(agents) as client:
        cname = await client.dns("www.example.test", "CNAME")
        srv = await client.dns("_ldap._tcp.example.test", "SRV")
        ptr = await client.dns("192.0.2.10", "PTR")  # an address is turned into its reverse name
    assert [a.value for a in cname.answers] == ["example.test"]
    assert [a.value for a in srv.answers] == ["0 5 389 ldap.example.test"]
    assert [a.value for a in ptr.answers] == ["example.test"]


async def test_nxdomain_and_timeout_are_answers(agents, dns_server):
    async with geonet(agents) as client:
        missing = await client.dns("nope.example.test")
    assert missing.answers == [] and missing.status == "NXDOMAIN"
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # takes queries, never answers
    silent.bind(("127.0.0.1", 0))
    settings = GeonetSettings(
        location=BERLIN, nameservers=["127.0.0.1"], dns_port=silent.getsockname()[1], dns_timeout=0.5
    )
    with ThreadedServer(create_geonet_app(settings)) as server:
        async with geonet(server) as client:
            result = await client.dns("example.test")
    silent.close()
    assert result.answers == [] and result.status == "TIMEOUT"


async def test_geodns(agents):
    async with geonet(agents) as client:
        results = await client.geodns("example.test", "A")
    assert len(results) == 3
    assert all([a.value for a in r.answers] == ["192.0.2.10"] for r in results)


@pytest.mark.parametrize(
    "path",
    [
        "/api/ping/bad..name",
        "/api/geoping/-leading-dash",
        "/api/dns/under score",
        "/api/geodns/a..b",
        "/api/dns/example.test?rtype=BOGUS",
        "/api/geodns/example.test?rtype=ANY",
    ],
)
def test_invalid_input_is_422_with_validation_items(agents, path):
    response = httpx.get(f"{agents.url}{path}")
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail and all({"loc", "msg", "type"} <= set(item) for item in detail)
    error = response.json()["error"]  # and the {error} every other answer of the backend has
    assert error.startswith("Invalid request: ") and "Value error" not in error  # (pydantic's prefix)


def test_unresolvable_hostname_is_422(agents):
    response = httpx.get(f"{agents.url}/api/ping/nope.example.test")  # NXDOMAIN from the test server
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["path", "ip"]


async def test_ping_a_hostname_resolved_by_the_agent(agents):
    async with geonet(agents) as client:
        result = await client.ping("loop.example.test")
    assert result.ip == "127.0.0.1" and result.is_alive


def test_openapi_version_and_units(agents):
    spec = httpx.get(f"{agents.url}/openapi.json").json()
    assert spec["openapi"].startswith("3.1") and spec["info"]["version"] == "1.0.0"
    ping = spec["components"]["schemas"]["PingResult"]["properties"]
    assert "milliseconds" in ping["avg_rtt"]["description"]
    assert "0..1" in ping["packet_loss"]["description"]
    paths = {"/api/ping/{ip}", "/api/geoping/{ip}", "/api/dns/{hostname}", "/api/geodns/{hostname}"}
    assert paths <= set(spec["paths"])


async def test_not_permitted_says_what_to_change(agents, monkeypatch):
    # No system here refuses root its raw socket on demand: this one fault is simulated.
    from icmplib import SocketPermissionError

    def refuse(*args, privileged, **kw):
        raise SocketPermissionError(privileged)

    monkeypatch.setattr("spyglass.netools.ping.icmp_ping", refuse)
    async with geonet(agents) as client:
        result = await client.ping("127.0.0.1")
    assert not result.is_alive and result.packets_sent == 0
    assert "ping_group_range" in result.error and "CAP_NET_RAW" in result.error


async def test_embedded_backend_serves_geonet(backend):
    async with Clients.from_profile(backend.profile(backend.key())) as clients:
        result = await clients.geonet.ping("127.0.0.1")
        both = await clients.geonet.geoping("127.0.0.1")
    assert result.is_alive and len(both) == 1 and both.missing == []


def test_parse_location():
    assert parse_location("Berlin, DE, 52.52, 13.405") == BERLIN
    for bad in ("Berlin", "X,YY,91,0", "X,YY,a,b"):
        with pytest.raises(ValueError):
            parse_location(bad)


def test_missing_header_is_json(agents):
    response = httpx.get(f"{agents.url}/api/geoping/127.0.0.1")
    assert len(json.loads(response.headers[MISSING_HEADER])) == 2


async def test_an_agent_without_a_location_says_it_is_unknown(dns_server):
    settings = GeonetSettings(
        nameservers=[dns_server.host], dns_port=dns_server.port, ping_count=1, allow=ZONE_NETWORKS
    )
    with ThreadedServer(create_geonet_app(settings)) as server:
        async with geonet(server) as client:
            answer = await client.dns("example.test")
            pinged = await client.ping("127.0.0.1")
        described = httpx.get(f"{server.url}/openapi.json").json()["info"]["description"]
    assert answer.from_loc == pinged.from_loc == UNKNOWN_LOCATION
    assert answer.from_loc.to_api() == {"city": "unknown location", "country": "unknown", "latlon": "unknown"}
    assert answer.from_loc.coordinates is None  # nothing is drawn at a made-up place
    assert "without a location" in described


async def test_an_agent_with_the_system_resolver_knows_localhost():
    """/etc/hosts names resolve through the system's resolver (dnspython alone ignores them)."""
    with ThreadedServer(
        create_geonet_app(GeonetSettings(location=BERLIN, ping_count=1, allow=ZONE_NETWORKS))
    ) as server:
        async with geonet(server) as client:
            answer = await client.dns("localhost", "A")
            pinged = await client.ping("localhost")
    assert [(a.type, a.value) for a in answer.answers] == [("A", "127.0.0.1")] and answer.status == "NOERROR"
    assert pinged.ip == "127.0.0.1" and pinged.is_alive


def test_one_address_is_rate_limited_without_a_key(dns_server):
    """Geonet takes no key: without a limit per address a backend bound beyond loopback is an open
    ping and DNS relay."""
    with agent(BERLIN, "127.0.0.5", dns_server, rate_limit=0.5, burst=3) as limited:
        answers = [httpx.get(f"{limited.url}/api/dns/example.test") for _ in range(4)]
    assert [a.status_code for a in answers[:3]] == [200, 200, 200]
    assert answers[3].status_code == 429 and answers[3].headers["retry-after"] == "2"
    assert "address" in answers[3].json()["error"]


INSIDE_TARGETS = [
    "10.9.9.9",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "172.16.0.1",
    "127.0.0.1",
    "2002:a09:909::1",
    "::ffff:10.9.9.9",
    "loop.example.test",
]  # fmt: skip (the last: 127.0.0.1)


@pytest.fixture
def stock_agent(dns_server, monkeypatch):
    """An agent as `spyglass serve` starts it (no --geonet-allow), whose prober only records: a
    target that got past the rule is recorded, never sent a packet."""
    probed: list[str] = []

    def record(address, *args, **kw):
        probed.append(address)
        raise AssertionError(f"{address} was about to be pinged")

    monkeypatch.setattr("spyglass.netools.ping.probe", record)
    with agent(BERLIN, "127.0.0.6", dns_server, allow=[]) as server:
        yield server, probed


@pytest.mark.parametrize("target", INSIDE_TARGETS)
def test_the_server_s_own_networks_are_not_pinged(stock_agent, target):
    server, probed = stock_agent
    for form in ("ping", "geoping"):
        response = httpx.get(f"{server.url}/api/{form}/{target}")
        assert response.status_code == 422, response.text
        said = "cannot resolve" if target.endswith(".test") else "is in a network this agent does not measure"
        assert said in response.json()["error"]
    assert probed == []


def test_an_internal_name_is_told_as_one_that_does_not_exist(stock_agent):
    """Geonet with no key told internal host names from names that do not exist (issue 44, minor 4)."""
    server, _ = stock_agent
    for form, query in (("ping", {}), ("geoping", {}), ("dns", {}), ("dns", {"rtype": "AAAA"})):
        inside = httpx.get(f"{server.url}/api/{form}/loop.example.test", params=query)
        nowhere = httpx.get(f"{server.url}/api/{form}/nowhere.example.test", params=query)
        assert inside.status_code == nowhere.status_code
        assert inside.text.replace("loop.", "X.") == nowhere.text.replace("nowhere.", "X."), form


def test_dns_answers_inside_the_server_s_networks_are_withheld(stock_agent):
    server, _ = stock_agent
    inside = httpx.get(f"{server.url}/api/dns/loop.example.test").json()
    assert (inside["answers"], inside["status"]) == ([], "NXDOMAIN") and "error" not in inside
    reverse = httpx.get(f"{server.url}/api/dns/10.9.9.9", params={"rtype": "PTR"}).json()
    assert (reverse["answers"], reverse["status"]) == ([], "REFUSED")
    named = httpx.get(f"{server.url}/api/dns/www.example.test", params={"rtype": "CNAME"}).json()
    assert [a["value"] for a in named["answers"]] == ["example.test"]  # names are not addresses: shown
