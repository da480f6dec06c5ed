"""Notification delivery latency with two backends sharing one PostgreSQL state and one
ClickHouse store: from a banner collected on backend B, for an alert made on backend A, to the
webhook receiver; p50 and p95.

    python bench/state_alerts.py [--repeat 100] [--work DIR]

Starts a PostgreSQL server and a ClickHouse server of its own (spyglass.testing), two ``spyglass
serve`` processes over them, each with its own data dir, and a receiver on loopback. Each round
collects one banner (a new service inside the alert's network) through B, or through A every
other round, and times until the receiver has its notification.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from pathlib import Path

import httpx
from index import percentiles, serve  # bench/index.py

from spyglass.client import Clients
from spyglass.config import Profile
from spyglass.server.state.postgres import PostgresAccounts
from spyglass.testing.alerts import Receiver, banner, watch
from spyglass.testing.clickhouse import ClickHouseServer
from spyglass.testing.postgres import PostgresServer


def collect(http: httpx.Client, url: str, key: str, found: dict) -> None:
    http.post(f"{url}/spyglass/collect", params={"key": key}, content=json.dumps(found)).raise_for_status()


def rounds(urls: list[str], analyst: str, collector: str, repeat: int) -> dict[str, list[float]]:
    """Seconds from each collection to its notification, by where the banner was collected."""
    samples: dict[str, list[float]] = {"collected on B": [], "collected on A": []}
    with Receiver() as receiver, httpx.Client(timeout=30) as http:

        async def alert() -> None:
            async with Clients.from_profile(Profile(name="a", url=urls[0], key=analyst, rate=None)) as c:
                await watch(c, receiver.url + "/hook", ["127.0.8.0/24"], "any")

        asyncio.run(alert())
        for i in range(repeat + 2):  # the first two warm both backends up
            on = 1 - i % 2  # B, then A
            ip, port = f"127.0.8.{1 + i % 250}", 1000 + i
            started = time.perf_counter()
            collect(http, urls[on], collector, banner(ip, port))
            receiver.wait_for(f"{ip}:{port}", timeout=120)
            if i >= 2:
                samples["collected on B" if on else "collected on A"].append(time.perf_counter() - started)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "spyglass-bench")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="state-alerts-", dir=args.work))
    postgres, clickhouse = PostgresServer().start(), ClickHouseServer(work / "clickhouse").start()
    processes = []
    try:
        url = postgres.create_database("bench_alerts")
        accounts = PostgresAccounts(url, work / "keys")
        analyst, collector = accounts.create_key("enterprise"), accounts.create_key("enterprise", collector=True)
        accounts.close()
        shared = ("--state", url, "--notifier-allow", "127.0.0.0/8")
        store = clickhouse.address("bench_alerts")
        processes = [serve(work / name, 1, store, *shared) for name in ("a", "b")]
        samples = rounds([u for _, u in processes], analyst, collector, args.repeat)
    finally:
        for process, _ in processes:
            process.terminate()
            process.wait(30)
        clickhouse.stop()
        postgres.remove()
        shutil.rmtree(work, ignore_errors=True)
    print("notification delivery, alert made on A, two backends over one PostgreSQL and one ClickHouse")
    for where, run in samples.items():
        print(f"  {where}: {len(run)} notifications   collected to received {percentiles(run)}")


if __name__ == "__main__":
    main()
