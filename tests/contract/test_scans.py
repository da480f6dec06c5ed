"""On-demand scans against the embedded backend under uvicorn, scanning real services that the
tests start on loopback: the API's rules, results in search and host, and a restart mid-scan."""

from __future__ import annotations

import asyncio
import json
import socket
import socketserver
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from spyglass.client import BadRequest, Clients, Forbidden, NoCredits, NotFound
from tests.conftest import start_backend


class Greeter:
    """A line-speaking service on one port of several loopback addresses: it waits ``delay``
    seconds, says ``greeting`` and hangs up (what the generic module records). ``connections``
    counts those it took, by address."""

    def __init__(self, addresses: list[str], greeting: bytes, delay: float = 0.0) -> None:
        self.port = 0  # the system chooses it for the first address; the others take the same
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with outer.counting:
                    outer.connections[self.server.server_address[0]] += 1
                time.sleep(outer.delay)
                self.request.sendall(outer.greeting)

        self.greeting, self.delay = greeting, delay
        self.connections: Counter[str] = Counter()
        self.counting = threading.Lock()
        self.servers = []
        for address in addresses:
            server = socketserver.ThreadingTCPServer((address, self.port), Handler, bind_and_activate=False)
            server.daemon_threads = True
            server.allow_reuse_address = True
            server.server_bind()
            server.server_activate()
            self.port = server.server_address[1]
            self.servers.append(server)

    def __enter__(self) -> Greeter:
        for server in self.servers:
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        # shutdown() waits for the server's next poll: all of them at once, not one after the other
        stopping = [threading.Thread(target=server.shutdown) for server in self.servers]
        for thread in stopping:
            thread.start()
        for thread, server in zip(stopping, self.servers, strict=True):
            thread.join()
            server.server_close()


@contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on, held bound meanwhile: connects are refused, and no
    other program can start listening there (as one could on a port found free and let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


@contextmanager
def running(data_dir, **settings):
    server, backend = start_backend(data_dir, **settings)
    with server:
        yield backend
    backend.app.state.scans.store.close()
    backend.store.close()


@pytest.fixture(scope="module")
def scanning(tmp_path_factory):
    with running(tmp_path_factory.mktemp("scans"), scan_timeout=2.0) as backend:
        yield backend


async def wait_done(c: Clients, scan_id: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        status = await c.scans.status(scan_id)
        if status.status == "DONE":
            return status
        assert time.monotonic() < deadline, f"scan stuck in {status.status}"
        await asyncio.sleep(0.1)


async def test_a_scan_finds_a_service_and_its_results_are_searchable(scanning):
    key = scanning.key("member")
    with closed_port() as closed, Greeter(["127.0.0.1"], b"220 hello from the test service\r\n") as service:
        async with Clients.from_profile(scanning.profile(key)) as c:
            before = (await c.account.api_info()).scan_credits
            submitted = await c.scans.submit({"127.0.0.1": [service.port, closed]})
            assert submitted.count == 1 and submitted.credits_left == before - 1
            done = await wait_done(c, submitted.id)
            assert (done.count, done.found, done.probed, done.probes) == (1, 1, 2, 2)
            found = await c.search.search(f"scan:{submitted.id}")
            listing = await c.scans.list()
            host = await c.search.host("127.0.0.1")
    assert found.total == 1
    banner = found.matches[0].to_api()
    assert banner["port"] == service.port and "hello from the test service" in banner["data"]
    assert banner["_intel"]["options"]["scan"] == submitted.id
    assert banner["location"]["country_name"] == "Local network"
    assert isinstance(banner["hash"], int)
    assert service.port in host.ports
    item = next(s for s in listing.matches if s.id == submitted.id)
    assert (item.status, item.size, item.api_key, item.credits_left) == ("DONE", 1, key, before - 1)


async def test_a_port_that_accepts_and_says_nothing_is_found_open(scanning):
    """nmap -sT reports such a port open; the scan records it with empty data (it was dropped)."""
    from tests.scanservers import hostile_service

    key = scanning.key("member")
    with hostile_service("silent") as service, closed_port() as closed:
        async with Clients.from_profile(scanning.profile(key)) as c:
            submitted = await c.scans.submit({"127.0.0.1": [service.port, closed]})
            done = await wait_done(c, submitted.id)
            found = await c.search.search(f"scan:{submitted.id}")
    assert (done.found, done.probed) == (1, 2)
    banner = found.matches[0].to_api()
    assert (banner["port"], banner["data"], banner["_intel"]["module"]) == (service.port, "", "generic")


async def test_an_older_scan_still_finds_what_it_collected(scanning):
    """Search sees the newest banner of each service, but a scan's results are what that scan
    collected: a second scan of the same service leaves the first one's results searchable."""
    with Greeter(["127.0.0.1"], b"220 scanned twice\r\n") as service:
        async with Clients.from_profile(scanning.profile(scanning.key("member"))) as c:
            scans = []
            for _ in range(2):
                submitted = await c.scans.submit({"127.0.0.1": [service.port]})
                await wait_done(c, submitted.id)
                scans.append(submitted.id)
            totals = [(await c.search.count(f"scan:{scan_id}")).total for scan_id in scans]
            found = await c.search.search(f"scan:{scans[0]}")
            current = await c.search.count(f"port:{service.port}")
    assert totals == [1, 1]
    assert found.matches[0].to_api()["_intel"]["options"]["scan"] == scans[0]
    assert current.total == 0  # a scan of the server's own networks: found through its scans (issue 44)


async def test_another_accounts_private_results_do_not_move_the_backends_counts(scanning):
    """/spyglass/info counted every stored banner: another account saw it rise when a scan of the
    server's own networks found something (attacker trial, major 3)."""
    with Greeter(["127.0.0.1"], b"220 counted by nobody else\r\n") as service:
        async with (
            Clients.from_profile(scanning.profile(scanning.key("member"))) as mine,
            Clients.from_profile(scanning.profile(scanning.key("member"))) as theirs,
        ):
            before = await theirs.tools.backend_info()
            submitted = await mine.scans.submit({"127.0.0.1": [service.port]})
            done = await wait_done(mine, submitted.id)
            after = await theirs.tools.backend_info()
    assert done.found == 1 and before is not None and after is not None
    assert after["banners"] == before["banners"]


async def test_a_private_scan_of_an_imported_service_leaves_it_in_every_search(scanning):
    """An nmap import's banner of 127.0.0.1:PORT went out of every search (tag:nmap, port:PORT)
    once the account scanned the same port: the scan's result, private, had replaced it as the
    service's current banner, and private results are left out (newcomer trial, major 4)."""
    with Greeter(["127.0.0.1"], b"220 scanned after nmap\r\n") as service:
        imported = {
            "ip_str": "127.0.0.1", "port": service.port, "transport": "tcp", "tags": ["nmap"],
            "timestamp": "2026-01-02T03:04:05.000000", "data": "220 as nmap saw it\r\n",
        }  # fmt: skip
        assert len(scanning.collect([imported])) == 1
        async with Clients.from_profile(scanning.profile(scanning.key("member"))) as c:
            submitted = await c.scans.submit({"127.0.0.1": [service.port]})
            assert (await wait_done(c, submitted.id)).found == 1
            tagged = await c.search.search(f"tag:nmap port:{service.port}")
            by_port = (await c.search.count(f"port:{service.port}")).total
            own = await c.search.search(f"scan:{submitted.id}")
        async with Clients.from_profile(scanning.profile(scanning.key("member"))) as theirs:
            theirs_by_port = (await theirs.search.count(f"port:{service.port}")).total
    assert tagged.total == 1 and tagged.matches[0].to_api()["data"] == "220 as nmap saw it\r\n"
    assert by_port == theirs_by_port == 1
    assert own.total == 1 and own.matches[0].to_api()["data"].startswith("220 scanned after nmap")


async def test_every_service_found_is_counted(scanning):
    """Many results in flight at once: each is stored and counted once (a batch being stored when
    the probes ended was once stored but not counted)."""
    addresses = [f"127.0.7.{i}" for i in range(1, 61)]
    with Greeter(addresses, b"220 one of many\r\n") as service:
        async with Clients.from_profile(scanning.profile(scanning.key("enterprise"))) as c:
            submitted = await c.scans.submit({"127.0.7.0/26": [service.port]})
            done = await wait_done(c, submitted.id)
            found = await c.search.count(f"scan:{submitted.id}")
    assert (done.count, done.probes, done.found, found.total) == (64, 64, 60, 60)


async def test_refusals_charge_nothing(scanning):
    member = scanning.key("member")
    account = scanning.store.account_for_key(member)
    cases = [
        ("10.0.0.1", BadRequest, "SPYGLASS_SCAN_ALLOW=CIDR"),  # a bad target (exit 2), not a plan (3)
        ("127.0.0.0/23", BadRequest, "at most 256"),
        ("127.0.0.1,,", BadRequest, "empty item"),
        ("not-an-ip", BadRequest, "not an IP address"),
        ('{"127.0.0.1": [[80, "gopher"]]}', BadRequest, "unknown protocol"),
        ('{"127.0.0.1": [[22, ["x"]]]}', BadRequest, "not a protocol's name"),  # was a 500 (unhashable)
        ('{"127.0.0.1": [[22, {"a": 1}]]}', BadRequest, "not a protocol's name"),
    ]
    async with Clients.from_profile(scanning.profile(member)) as c:
        for ips, error, message in cases:
            with pytest.raises(error, match=message):
                await c.scans.submit(ips if not ips.startswith("{") else json.loads(ips))
        with pytest.raises(BadRequest, match="nested too deeply"):  # was a RecursionError: a 500
            await c.scans.submit('{"127.0.0.1": ' + "[" * 5000 + "]" * 5000 + "}")
        scanning.store.set_credits(account.id, scan=3)
        with pytest.raises(NoCredits):
            await c.scans.submit("127.0.0.0/30")  # 4 addresses, 3 credits
        assert (await c.account.api_info()).scan_credits == 3
        assert (await c.scans.list()).total == 0
    async with Clients.from_profile(scanning.profile(scanning.key("free"))) as c:
        with pytest.raises(Forbidden, match="paid"):
            await c.scans.submit("127.0.0.1")


async def test_scans_are_private_to_their_account(scanning):
    async with Clients.from_profile(scanning.profile(scanning.key("member"))) as mine:
        with closed_port() as closed:
            submitted = await mine.scans.submit({"127.0.0.1": [closed]})
            await wait_done(mine, submitted.id)
    async with Clients.from_profile(scanning.profile(scanning.key("member"))) as theirs:
        with pytest.raises(NotFound):
            await theirs.scans.status(submitted.id)
        assert all(s.id != submitted.id for s in (await theirs.scans.list()).matches)


async def test_ports_and_protocols_are_what_the_crawler_does(scanning):
    from spyglass.server.scanner.protocols import PORTS, PROTOCOLS

    async with Clients.from_profile(scanning.profile(scanning.key("member"))) as c:
        assert await c.scans.ports() == sorted(PORTS)
        protocols = await c.scans.protocols()
    assert set(protocols) == set(PROTOCOLS) and all(protocols.values())


async def test_internet_scans_are_for_researchers_and_enterprise(tmp_path):
    with Greeter(["127.0.0.1"], b"hi\r\n") as service, running(tmp_path, scan_allow=["127.0.0.1/32"]) as backend:
        async with Clients.from_profile(backend.profile(backend.key("member"))) as c:
            with pytest.raises(Forbidden, match="researchers"):
                await c.scans.internet(service.port, "generic")
        async with Clients.from_profile(backend.profile(backend.key("member", researcher=True))) as c:
            with pytest.raises(BadRequest, match="protocol"):
                await c.scans.internet(service.port, "gopher")
            submitted = await c.scans.internet(service.port, "generic")
            done = await wait_done(c, submitted.id)
            assert (done.count, done.found) == (1, 1)


async def test_a_restart_mid_scan_resumes_and_loses_nothing(tmp_path):
    addresses = [f"127.0.3.{i}" for i in range(1, 13)]
    with Greeter(addresses, b"SLOW-SERVICE 1.0\r\n", delay=0.3) as service:
        with running(tmp_path, scan_concurrency=1) as backend:
            key = backend.key("member")
            async with Clients.from_profile(backend.profile(key)) as c:
                submitted = await c.scans.submit({"127.0.3.0/28": [service.port]})
                assert submitted.count == 16
                while (await c.scans.status(submitted.id)).probed < 3:
                    await asyncio.sleep(0.05)
        # stopped mid-scan: it is not DONE, and it picks up where its stored results end
        with running(tmp_path, scan_concurrency=4) as backend:
            async with Clients.from_profile(backend.profile(key)) as c:
                done = await wait_done(c, submitted.id)
                found = await c.search.count(f"scan:{submitted.id}")
    assert done.probed == done.probes == 16
    assert found.total == done.found == 12  # every listening address once (12 of the 16 answer)


async def test_a_cancelled_scan_stops_keeps_what_it_found_and_is_not_resumed(tmp_path):
    addresses = [f"127.0.4.{i}" for i in range(1, 13)]
    with Greeter(addresses, b"SLOW-SERVICE 1.0\r\n", delay=0.3) as service:
        with running(tmp_path, scan_concurrency=1) as backend:
            key = backend.key("member")
            async with Clients.from_profile(backend.profile(key)) as c:
                submitted = await c.scans.submit({"127.0.4.0/28": [service.port]})
                while (await c.scans.status(submitted.id)).probed < 3:
                    await asyncio.sleep(0.05)
                cancelled = await c.scans.cancel(submitted.id)
                assert cancelled.status == "CANCELLED"
                async with Clients.from_profile(backend.profile(backend.key("member"))) as other:
                    with pytest.raises(NotFound):
                        await other.scans.cancel(submitted.id)
                await asyncio.sleep(1.0)  # the probes it had under way end; it stays cancelled
                after = await c.scans.status(submitted.id)
                assert after.status == "CANCELLED" and after.probed < after.probes
        with running(tmp_path, scan_concurrency=4) as backend:  # a restart does not resume it
            async with Clients.from_profile(backend.profile(key)) as c:
                await asyncio.sleep(1.0)
                again = await c.scans.status(submitted.id)
                found = await c.search.count(f"scan:{submitted.id}")
    assert (again.status, again.probed) == ("CANCELLED", after.probed)
    assert found.total == after.found >= 1  # what it found before stays searchable


async def test_an_internet_scan_works_with_the_defaults(tmp_path):
    """Issue 45, major 4: the default networks (loopback: 16,777,217 addresses) are past
    --scan-max-ips (65,536, a bound on what one /scan asks for), and were refused. Now the scan
    runs, finds the service on 127.0.0.1 on its way, and stops when cancelled."""
    with Greeter(["127.0.0.1"], b"hi from the internet scan\r\n") as service, running(tmp_path) as backend:
        async with Clients.from_profile(backend.profile(backend.key("member", researcher=True))) as c:
            submitted = await c.scans.internet(service.port, "generic")
            while (status := await c.scans.status(submitted.id)).found < 1:
                assert status.status != "DONE"
                await asyncio.sleep(0.1)
            assert status.count == 16_777_217 and status.probes == 16_777_217
            while (await c.search.count(f"scan:{submitted.id} port:{service.port}")).total < 1:
                await asyncio.sleep(0.1)  # searchable once the writer commits (within a second)
            assert (await c.scans.cancel(submitted.id)).status == "CANCELLED"


async def test_an_internet_scan_on_a_backend_allowed_no_network_is_refused(tmp_path):
    with running(tmp_path, scan_allow=[]) as backend:
        async with Clients.from_profile(backend.profile(backend.key("member", researcher=True))) as c:
            with pytest.raises(BadRequest, match="may scan no network"):
                await c.scans.internet(80, "http")
            assert (await c.scans.list()).total == 0


async def test_scan_results_are_published_to_the_stream(scanning):
    hub = scanning.app.state.hub
    with Greeter(["127.0.0.1"], b"220 streamed service\r\n") as service:
        async with Clients.from_profile(scanning.profile(scanning.key("enterprise"))) as c:

            async def first_banner():
                async for item in c.stream.ports([service.port]):
                    return item

            subscribers = len(hub.subscriptions)
            listening = asyncio.create_task(first_banner())
            while len(hub.subscriptions) == subscribers:  # subscribed before anything is scanned
                await asyncio.sleep(0.02)
            submitted = await c.scans.submit({"127.0.0.1": [service.port]})
            banner = await asyncio.wait_for(listening, 30)
    assert banner["port"] == service.port and "streamed service" in banner["data"]
    assert banner["_intel"]["options"]["scan"] == submitted.id


def test_the_scan_commands_as_text_and_json_mask_the_key(scanning, monkeypatch, capsys):
    import json

    from spyglass.cli import main

    key = scanning.key("member")
    monkeypatch.setenv("SPYGLASS_URL", scanning.url)
    monkeypatch.setenv("SPYGLASS_API_KEY", key)
    with Greeter(["127.0.0.1"], b"220 the CLI's test service\r\n") as service:
        assert main(["scan", "submit", "127.0.0.1", "--ports", str(service.port), "--wait"]) == 0
        out, err = capsys.readouterr()
        assert "the CLI's test service" in out and "1 service found" in err
    assert main(["scan", "list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    scan_id = listing["matches"][0]["id"]
    assert main(["scan", "status", scan_id, "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["status"] == "DONE"
    # the account's key, which the listing carries as the seed says, is never printed whole
    assert listing["matches"][0]["api_key"] == "••••••••" + key[-4:]
    assert key not in json.dumps(listing) + json.dumps(status)
    assert main(["scan", "list"]) == 0
    out, err = capsys.readouterr()
    assert scan_id in out and key not in out + err
    assert "      1 IP  " in out  # one address, not "1 IPs" (a newcomer's minor)
    assert main(["scan", "cancel", scan_id]) == 2  # done already: nothing to cancel, said so
    assert "done already" in capsys.readouterr().err
