"""Two backends over one ClickHouse and one PostgreSQL, through the HTTP API: a scan submitted on
one runs once, on whichever claims it; its status, listing and cancel work on both; a backend
killed mid-scan leaves it to the other once its lease lapses; the directory is the same on both."""

from __future__ import annotations

import asyncio
import contextlib
import time
from contextlib import asynccontextmanager
from typing import NamedTuple

import pytest

from spyglass.client import Clients, ServerError
from spyglass.testing.postgres import PostgresServer
from tests.contract.test_scans import Greeter, wait_done
from tests.servers import installed
from tests.state.shared import ServeProcess, state_key
from tests.store.conftest import database

LEASE = "2"  # seconds: a killed backend's scan waits this long for another


class Shared(NamedTuple):
    store: str  # ClickHouse
    state: str  # PostgreSQL
    key: str  # a member's, made in the shared state


@pytest.fixture
def stores(clickhouse_server, postgres_url, tmp_path) -> Shared:
    key = state_key(postgres_url, tmp_path / "keys", "member")
    return Shared(clickhouse_server.address(database(tmp_path)), postgres_url, key)


def backend(tmp_path, name: str, stores: Shared, *options: str) -> ServeProcess:
    return ServeProcess(
        tmp_path / name, stores.store, stores.state, "--scan-lease", LEASE, "--scan-timeout", "2", *options
    )


@asynccontextmanager
async def clients(stores: Shared, *backends: ServeProcess):
    """A client of each backend, with the same key."""
    opened = [Clients.from_profile(b.profile(stores.key)) for b in backends]
    for c in opened:
        await c.__aenter__()
    try:
        yield opened
    finally:
        for c in opened:
            await c.__aexit__(None, None, None)


async def test_a_scan_submitted_on_one_backend_runs_once_and_is_seen_on_both(tmp_path, stores):
    addresses = [f"127.0.6.{i}" for i in range(1, 9)]
    with (
        Greeter(addresses, b"SHARED-SERVICE 1.0\r\n") as service,
        backend(tmp_path, "a", stores) as a,
        backend(tmp_path, "b", stores) as b,
    ):
        async with (
            Clients.from_profile(a.profile(stores[2])) as on_a,
            Clients.from_profile(b.profile(stores[2])) as on_b,
        ):
            submitted = await on_a.scans.submit({"127.0.6.0/28": [service.port]})
            done = await wait_done(on_b, submitted.id)
            assert (await on_a.scans.status(submitted.id)).status == "DONE"
            assert [s.id for s in (await on_b.scans.list()).matches] == [submitted.id]
            found = await on_b.search.count(f"scan:{submitted.id}")
            await asyncio.sleep(1.5)  # a second run, were there one, would have begun
    assert (done.probed, done.probes, done.found, found.total) == (16, 16, 8, 8)
    # one backend's run: a connect pass and one probe at each address that answers, no more
    assert service.connections == {address: 2 for address in addresses}


async def test_a_scan_cancelled_on_the_other_backend_stops(tmp_path, stores):
    addresses = [f"127.0.7.{i}" for i in range(1, 31)]
    with (
        Greeter(addresses, b"SLOW-SERVICE 1.0\r\n", delay=0.3) as service,
        backend(tmp_path, "a", stores, "--scan-concurrency", "1") as a,
        backend(tmp_path, "b", stores, "--scan-concurrency", "1") as b,
    ):
        async with (
            Clients.from_profile(a.profile(stores[2])) as on_a,
            Clients.from_profile(b.profile(stores[2])) as on_b,
        ):
            submitted = await on_a.scans.submit({"127.0.7.0/27": [service.port]})
            while (await on_b.scans.status(submitted.id)).probed < 2:
                await asyncio.sleep(0.05)
            assert (await on_b.scans.cancel(submitted.id)).status == "CANCELLED"
            await asyncio.sleep(3)  # the backend running it learns at its next renewal (a third of the lease)
            stopped = await on_a.scans.status(submitted.id)
            taken = sum(service.connections.values())
            await asyncio.sleep(2)
            later = await on_a.scans.status(submitted.id)
    assert stopped.status == later.status == "CANCELLED"
    assert later.probed == stopped.probed < later.probes and sum(service.connections.values()) == taken


async def test_a_backend_killed_mid_scan_leaves_it_to_the_other(tmp_path, stores):
    addresses = [f"127.0.8.{i}" for i in range(1, 31)]
    with Greeter(addresses, b"SLOW-SERVICE 1.0\r\n", delay=0.3) as service:
        with backend(tmp_path, "a", stores, "--scan-concurrency", "1") as a:  # alone: a claims it
            async with clients(stores, a) as (on_a,):
                submitted = await on_a.scans.submit({"127.0.8.0/27": [service.port]})
                while (await on_a.scans.status(submitted.id)).probed < 2:
                    await asyncio.sleep(0.05)
                before = await on_a.scans.status(submitted.id)
                a.kill()  # mid-scan, whatever the machine's speed: B starts after (a busy machine took
                killed = time.monotonic()  # longer to start B than A took to finish the scan)
            assert before.status == "PROCESSING" and before.probed < before.probes
            with backend(tmp_path, "b", stores, "--scan-concurrency", "4") as b:
                async with clients(stores, b) as (on_b,):
                    done = await wait_done(on_b, submitted.id)
                    resumed_in = time.monotonic() - killed
                    result = await on_b.search.search(f"scan:{submitted.id}")
    assert (done.probed, done.probes) == (32, 32) and done.found >= 30
    assert {m.ip_str for m in result.matches} == set(addresses)  # each answering address, none lost
    print(f"resumed and finished {resumed_in:.1f} s after the kill")  # for the record, not asserted


async def test_a_backend_stopped_mid_scan_hands_it_over_at_once(tmp_path, stores):
    """A clean stop lets the scan go: the other backend resumes it without waiting out the lease
    (ten minutes here, past the wait for the scan to be done)."""
    addresses = [f"127.0.10.{i}" for i in range(1, 31)]
    long_lease = ("--scan-lease", "600", "--scan-concurrency", "1")
    with Greeter(addresses, b"SLOW-SERVICE 1.0\r\n", delay=0.3) as service:
        with backend(tmp_path, "a", stores, *long_lease) as a:
            async with clients(stores, a) as (on_a,):
                submitted = await on_a.scans.submit({"127.0.10.0/27": [service.port]})
                while (await on_a.scans.status(submitted.id)).probed < 2:
                    await asyncio.sleep(0.05)
            with backend(tmp_path, "b", stores, *long_lease) as b:
                async with clients(stores, b) as (on_b,):
                    a.stop()
                    done = await wait_done(on_b, submitted.id)
                    result = await on_b.search.search(f"scan:{submitted.id}")
    assert (done.probed, done.probes) == (32, 32)
    assert {m.ip_str for m in result.matches} == set(addresses)


async def test_a_query_saved_on_one_backend_is_listed_voted_and_deleted_on_the_other(tmp_path, stores):
    with backend(tmp_path, "a", stores) as a, backend(tmp_path, "b", stores) as b:
        async with clients(stores, a, b) as (on_a, on_b):
            saved = await on_a.directory.save("Shared nginx", "nginx country:DE", "saved on A", "web,shared")
            assert [q.id for q in (await on_b.directory.search("tag:shared")).matches] == [saved.id]
            assert (await on_b.directory.vote(saved.id)).votes == 1
            newest = await on_b.directory.queries(sort="timestamp")
            assert newest.matches[0].id == saved.id and newest.matches[0].votes == 1
            assert (await on_b.directory.delete(saved.id)).success
            assert (await on_a.directory.search("tag:shared")).total == 0


@pytest.mark.external
async def test_a_scan_outlives_postgresql_restarted_under_it(tmp_path):
    """The state away mid-scan: the run stops at its next save; once the state is back the backend
    claims the scan again (its own lease lapsed) and finishes it from its watermark."""
    with installed():
        server = PostgresServer().start()
    addresses = [f"127.0.9.{i}" for i in range(1, 31)]
    try:
        key = state_key(server.url(), tmp_path / "keys", "member")
        with (
            Greeter(addresses, b"SLOW-SERVICE 1.0\r\n", delay=0.3) as service,
            ServeProcess(tmp_path / "a", None, server.url(), "--scan-lease", LEASE, "--scan-concurrency", "1") as a,
        ):
            async with Clients.from_profile(a.profile(key)) as c:
                submitted = await c.scans.submit({"127.0.9.0/27": [service.port]})
                while (await c.scans.status(submitted.id)).probed < 2:
                    await asyncio.sleep(0.05)
                server.stop()
                await asyncio.sleep(3)  # saves fail meanwhile
                server.start()  # on the same port
                done = await wait_done_through_outage(c, submitted.id)
                result = await c.search.search(f"scan:{submitted.id}")
    finally:
        server.remove()
    assert (done.probed, done.probes) == (32, 32)
    assert {m.ip_str for m in result.matches} == set(addresses)


async def wait_done_through_outage(c: Clients, scan_id: str):
    """As wait_done, through the 503s of a state that is coming back."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(ServerError):
            if (status := await c.scans.status(scan_id)).status == "DONE":
                return status
        await asyncio.sleep(0.2)
    raise AssertionError("the scan did not finish after the state came back")
