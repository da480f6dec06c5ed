"""Local ping and DNS: names resolve as the system resolves them, and only the probe is timed.
Only loopback is pinged or resolved here (localhost is in /etc/hosts; the test DNS server is on
127.0.0.1)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from spyglass.models import GeoLocation
from spyglass.netools import ping as ping_module
from spyglass.netools.dns import LookupTimedOut, Resolver, hosts_addresses
from spyglass.netools.networks import Reach
from spyglass.netools.ping import ping
from spyglass.server.alerts.destinations import Destinations
from tests.servers import DnsServer

HERE = GeoLocation(city="Here", country="XX", latlon="0,0")


@pytest.fixture(scope="module")
def dns_server():
    with DnsServer() as server:
        yield server


def no_dnspython(resolver: Resolver, monkeypatch) -> None:
    async def refuse(*args, **kw):
        raise AssertionError("dnspython was asked")

    monkeypatch.setattr(resolver._resolver, "resolve", refuse)


async def test_localhost_resolves_through_the_hosts_file(monkeypatch):
    resolver = Resolver()
    no_dnspython(resolver, monkeypatch)
    assert hosts_addresses("localhost")[0] == "127.0.0.1"
    assert await resolver.address_of("localhost") == "127.0.0.1"
    answer = await resolver.query("localhost", "A", HERE)
    assert [(r.type, r.value) for r in answer.answers] == [("A", "127.0.0.1")] and answer.status == "NOERROR"
    for rtype in ("MX", "TXT"):  # the name exists here, with no such record: not NXDOMAIN
        answer = await resolver.query("localhost", rtype, HERE)
        assert answer.answers == [] and answer.status == "NOERROR"


async def test_lookups_wait_for_no_thread_of_the_default_executor(dns_server):
    """Every thread of the loop's default executor (the one ``asyncio.to_thread`` and ``getaddrinfo``
    share) is held: names still resolve, from the hosts file and from the name server."""
    loop = asyncio.get_running_loop()
    release = threading.Event()
    held = [loop.run_in_executor(None, release.wait) for _ in range(64)]
    try:
        resolver = Resolver([dns_server.host], dns_server.port, timeout=5)
        assert await asyncio.wait_for(resolver.addresses("loop.example.test"), 30) == ["127.0.0.1"]
        assert await asyncio.wait_for(Resolver().addresses("localhost"), 30) == ["127.0.0.1"]
        pinned = await asyncio.wait_for(Destinations(Reach(["127.0.0.0/8"])).pin("http://localhost:9/x"), 30)
        assert pinned.url == "http://127.0.0.1:9/x"
    finally:
        release.set()
        await asyncio.gather(*held)


async def test_a_silent_name_server_times_out_within_the_resolver_s_timeout():
    with DnsServer(silent=("slow.test",)) as silent:
        resolver = Resolver([silent.host], silent.port, timeout=0.5)
        with pytest.raises(LookupTimedOut):
            await resolver.addresses("a.slow.test")
        assert await resolver.address_of("a.slow.test") is None
        assert await resolver.addresses("loop.example.test") == ["127.0.0.1"]
    assert silent.unanswered >= 2  # A and AAAA were asked


async def test_given_name_servers_are_the_only_ones_asked(dns_server):
    resolver = Resolver([dns_server.host], dns_server.port, timeout=2)
    assert await resolver.address_of("loop.example.test") == "127.0.0.1"  # the system does not know it
    assert await resolver.address_of("localhost") is None  # /etc/hosts is not asked: the server says NXDOMAIN
    assert (await resolver.query("localhost", "A", HERE)).status == "NXDOMAIN"


async def test_resolution_happens_before_the_timed_probe_and_off_the_event_loop(monkeypatch):
    events = []
    loop_thread = threading.current_thread()
    real_probe = ping_module.icmp_ping

    class Recording(Resolver):
        async def address_of(self, hostname: str) -> str | None:
            events.append(("resolve", hostname))
            return await super().address_of(hostname)

    def probe(address, **kw):
        events.append(("probe", address, threading.current_thread() is loop_thread))
        return real_probe(address, **kw)

    monkeypatch.setattr(ping_module, "icmp_ping", probe)
    result = await ping("localhost", HERE, resolver=Recording(), count=1, interval=0)
    assert events[0] == ("resolve", "localhost")
    # icmplib is handed an address (it never resolves inside its timed loop), on a thread of its own
    assert events[1:] and all(e == ("probe", "127.0.0.1", False) for e in events[1:])
    assert result.ip == "127.0.0.1" and result.is_alive and result.packets_sent == 1


async def test_an_address_is_not_resolved(monkeypatch):
    class Refusing(Resolver):
        async def address_of(self, hostname: str) -> str | None:
            raise AssertionError("an IP address needs no resolution")

    result = await ping("127.0.0.1", HERE, resolver=Refusing(), count=2, interval=0)
    assert result.is_alive and result.packets_received == 2 and len(result.rtts) == 2


@pytest.mark.parametrize("value", ["999.999.1.1", "10.0.0", "1234", "256.1.1.1"])
def test_numbers_and_dots_that_are_no_address_are_no_name_either(value):
    from spyglass.netools.targets import bad_address, check_target

    assert bad_address(value)
    with pytest.raises(ValueError, match="not a valid IP address"):
        check_target(value)


@pytest.mark.parametrize("value", ["192.0.2.1", "::1", "123.example", "example.test", "localhost"])
def test_addresses_and_names_with_a_word_pass(value):
    from spyglass.netools.targets import bad_address, check_target

    assert not bad_address(value) and check_target(value) == value
