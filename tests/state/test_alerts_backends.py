"""Two ``spyglass serve`` processes over one ClickHouse and one PostgreSQL are one alert service:
an alert made through one notifies of banners the other collects, each notification is delivered
once, and a backend killed (``kill -9``) in the middle of a delivery leaves it to the other."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from spyglass.client import Clients
from spyglass.config import Profile
from spyglass.server.state.alerts import LEASE
from spyglass.server.state.postgres import PostgresAccounts
from spyglass.testing.alerts import Receiver, banner, watch
from tests.state.conftest import database

TAKEN_OVER = LEASE + 15  # the lease, and room to deliver


@contextmanager
def backend(data_dir: Path, *options: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """``spyglass serve`` on a free loopback port: its URL and its process."""
    process = subprocess.Popen(
        [sys.executable, "-m", "spyglass", "serve", "--data", str(data_dir), "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("main"), first
        yield first.split()[1], process
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(30)


@pytest.fixture
def two(tmp_path, postgres_url, clickhouse_server) -> Iterator[tuple[list[tuple[str, subprocess.Popen]], str, str]]:
    """Backends A and B, each with its own --data, over the same stores; an analyst's key and a
    collector's key (made in the shared state: each works on both)."""
    accounts = PostgresAccounts(postgres_url, tmp_path / "keys")
    analyst, collector = accounts.create_key("enterprise"), accounts.create_key("enterprise", collector=True)
    accounts.close()
    shared = ("--state", postgres_url, "--store", clickhouse_server.address(database(tmp_path)))
    with ExitStack() as stack:
        started = [
            stack.enter_context(backend(tmp_path / name, *shared, "--notifier-allow", "127.0.0.0/8"))
            for name in ("a", "b")
        ]
        yield started, analyst, collector


def collect(url: str, key: str, banners: list[dict]) -> None:
    body = b"\n".join(json.dumps(b).encode() for b in banners)
    httpx.post(f"{url}/spyglass/collect", params={"key": key}, content=body, timeout=30).raise_for_status()


async def alert_on(url: str, key: str, receiver: Receiver, networks: list[str]) -> str:
    async with Clients.from_profile(Profile(name="a", url=url, key=key, rate=None)) as c:
        return await watch(c, receiver.url + "/hook", networks, "any")


def events(receiver: Receiver, service: str) -> list[str]:
    with receiver.lock:
        return [body["event"] for _, body, _ in receiver.posts if body.get("service") == service]


async def test_an_alert_made_on_one_notifies_once_of_what_the_other_collects(two):
    (a, _), (b, _) = two[0]
    analyst, collector = two[1:]
    with Receiver() as receiver:
        await alert_on(a, analyst, receiver, ["127.0.3.0/24"])
        collect(b, collector, [banner("127.0.3.1", 80)])  # on B: an alert B never saw made
        receiver.wait_for("127.0.3.1:80")
        collect(a, collector, [banner("127.0.3.1", 80)])  # the same banner on A: the same event
        collect(b, collector, [banner("127.0.3.2", 80)])  # the control, queued after it
        receiver.wait_for("127.0.3.2:80")
        time.sleep(1)  # room for a second delivery, were there one
        assert len(events(receiver, "127.0.3.1:80")) == 1 and len(events(receiver, "127.0.3.2:80")) == 1


def sender(port: int, processes: list[subprocess.Popen]) -> subprocess.Popen:
    """The process whose TCP socket has local ``port`` (the delivering backend)."""
    for process in processes:
        sockets = set()
        for fd in os.listdir(f"/proc/{process.pid}/fd"):
            try:
                sockets.add(os.readlink(f"/proc/{process.pid}/fd/{fd}"))
            except OSError:
                continue
        for table in ("tcp", "tcp6"):
            with open(f"/proc/{process.pid}/net/{table}") as fh:
                for line in fh.readlines()[1:]:
                    fields = line.split()
                    if int(fields[1].rsplit(":", 1)[1], 16) == port and f"socket:[{fields[9]}]" in sockets:
                        return process
    raise AssertionError(f"no backend sends from port {port}")


def arrivals(receiver: Receiver, count: int, timeout: float) -> list[tuple[int, dict]]:
    """The first ``count`` requests the receiver has seen begin (held open or not)."""
    deadline = time.monotonic() + timeout
    while len(receiver.arrived) < count:
        assert time.monotonic() < deadline, f"{len(receiver.arrived)} deliveries began, not {count}"
        time.sleep(0.02)
    return receiver.arrived[:count]


async def test_a_backend_killed_mid_delivery_leaves_it_to_the_other(two):
    started, analyst, collector = two
    (a, _), (b, _) = started
    with Receiver() as receiver:
        try:
            await alert_on(a, analyst, receiver, ["127.0.4.0/24"])
            receiver.answering.clear()  # the receiver holds each delivery open
            collect(b, collector, [banner("127.0.4.1", 80)])
            ((port, first),) = arrivals(receiver, 1, 30)
            dying = sender(port, [p for _, p in started])
            os.kill(dying.pid, signal.SIGKILL)  # in the middle of the delivery
            dying.wait(30)
            _, (port, again) = arrivals(receiver, 2, TAKEN_OVER)
            survivor = sender(port, [p for _, p in started])
            assert survivor is not dying and again["event"] == first["event"]
        finally:
            receiver.answering.set()
        url = next(url for url, p in started if p is survivor)
        collect(url, collector, [banner("127.0.4.2", 80)])  # the control, queued after it
        receiver.wait_for("127.0.4.2:80")
        time.sleep(1)  # room for a third delivery, were there one
        assert [body.get("service") for _, body in receiver.arrived] == ["127.0.4.1:80"] * 2 + ["127.0.4.2:80"]
