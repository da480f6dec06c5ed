"""A charged search over HTTP with the accounts in SQLite (the embedded default) and in PostgreSQL
(--state), in one run: p50 and p95 of each, and what PostgreSQL adds as a share of the search.

    python bench/state.py [--count 20000] [--work DIR] [--repeat 400]

Imports COUNT generated banners (the same file as bench/index.py) into a data dir and a copy of it,
then starts ``spyglass serve`` on each: one with its SQLite accounts, one with ``--state`` naming a
PostgreSQL server this bench starts (spyglass.testing.postgres). One client sends REPEAT searches
to each, in alternating rounds of 20 (so a busy moment of the machine falls on both alike): each
with a filter (charged a query credit, spent while the search runs), and as the base as many
free-text searches (nothing charged); a backend looks a key up once in 5 s (auth.KeyCheck). Then,
in this process, what a key's lookup and a charge take of each state, called directly.
Goal: charging a credit on PostgreSQL at most 10% of a search.

Then throughput: the same banners imported into a ClickHouse server this bench starts, two
backends over it and the PostgreSQL state, and CLIENTS concurrent clients (32) sending charged
searches to one backend, then spread over both: requests/s, p50 and p95. And over the same two
backends, notification delivery latency (bench/state_alerts.py's rounds: an alert made on A,
banners collected on B or A, until the receiver has each).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from index import SEARCHES, dataset, funded_key, percentiles, serve  # bench/index.py
from state_alerts import rounds  # bench/state_alerts.py

from spyglass.server.index import BannerIndex
from spyglass.server.ingest.importer import import_files
from spyglass.server.state.accounts import AccountState
from spyglass.server.state.postgres import PostgresAccounts
from spyglass.server.state.sqlite.accounts import Store
from spyglass.server.stores import open_banner_store
from spyglass.testing.clickhouse import ClickHouseServer
from spyglass.testing.postgres import PostgresServer

CHARGED = [q for q in SEARCHES if ":" in q]  # a filter: charged
FREE = ["nginx", "openssh", "login", "apache"]  # free text alone: not charged


def data_dir(work: Path, count: int) -> Path:
    data = work / f"state-data-{count}"
    if not (data / "index").exists():
        index = BannerIndex(data)
        import_files(index, [dataset(work, count)])
        index.close()
    return data


def postgres_key(url: str, data: Path) -> str:
    state = PostgresAccounts(url, data)
    try:
        key = state.create_key("enterprise", True)
        account = state.account_for_key(key)
        assert account is not None
        state.set_credits(account.id, query=1_000_000_000)
        return key
    finally:
        state.close()


ROUND = 20


def latencies(urls: dict[str, str], keys: dict[str, str], queries: list[str], repeat: int) -> dict[str, list]:
    """Per backend, the seconds of each of ``repeat`` searches, sent in alternating rounds."""
    samples: dict[str, list[float]] = {name: [] for name in urls}
    clients = {name: httpx.Client(base_url=url, timeout=60) for name, url in urls.items()}
    try:
        for i in range(0, repeat + ROUND, ROUND):  # the first round warms the caches and the pool
            for name, http in clients.items():
                for j in range(i, i + ROUND):
                    started = time.perf_counter()
                    params = {"key": keys[name], "query": queries[j % len(queries)]}
                    http.get("/intel/host/search", params=params).raise_for_status()
                    if i:
                        samples[name].append(time.perf_counter() - started)
    finally:
        for http in clients.values():
            http.close()
    return samples


def in_process(state: AccountState, repeat: int) -> str:
    """p50/p95 of a key's lookup and a charge, called directly (no HTTP)."""
    account, key = state.create_account(f"bench-{time.monotonic_ns()}", "member")
    state.set_credits(account.id, query=1_000_000_000)
    samples = []
    for i in range(repeat + 100):  # the first 100 warm up (psycopg prepares a statement on its 5th use)
        started = time.perf_counter()
        state.account_for_key(key)
        state.charge(account.id, query=1)
        if i >= 100:
            samples.append(time.perf_counter() - started)
    state.close()
    return percentiles(samples)


def throughput(urls: list[str], key: str, total: int, clients: int) -> str:
    """``total`` charged searches from ``clients`` concurrent clients, spread over ``urls``."""
    samples: list[float] = []

    async def client(first: int) -> None:
        async with httpx.AsyncClient(timeout=60) as http:
            for n in range(first, total, clients):
                params = {"key": key, "query": CHARGED[n % len(CHARGED)]}
                started = time.perf_counter()
                (await http.get(urls[n % len(urls)] + "/intel/host/search", params=params)).raise_for_status()
                samples.append(time.perf_counter() - started)

    async def run() -> None:
        await asyncio.gather(*(client(i) for i in range(clients)))

    asyncio.run(run())  # the first round warms the backends' caches and pools
    samples.clear()
    started = time.perf_counter()
    asyncio.run(run())
    return f"{total / (time.perf_counter() - started):7.1f} requests/s   {percentiles(samples)}"


def shared_stores(work: Path, source: Path, url: str, total: int, clients: int, alerts: int) -> dict[str, str]:
    """Throughput of one backend, then of two, over one ClickHouse (``source`` imported) and ``url``;
    then the latency of ``alerts`` notifications through the two."""
    clickhouse = ClickHouseServer(work / "state-clickhouse").start()
    processes = []
    try:
        address = clickhouse.address("bench_state")
        store = open_banner_store(address, work / "state-import")
        import_files(store, [source])
        store.close()
        key = postgres_key(url, work / "state-keys")
        accounts = PostgresAccounts(url, work / "state-keys")
        collector = accounts.create_key("enterprise", collector=True)
        accounts.close()
        options = ("--state", url, "--notifier-allow", "127.0.0.0/8")
        processes = [serve(work / f"state-backend-{name}", 1, address, *options) for name in "ab"]
        urls = [u for _, u in processes]
        figures = {
            "one backend ": throughput(urls[:1], key, total, clients),
            "two backends": throughput(urls, key, total, clients),
        }
        for where, samples in rounds(urls, key, collector, alerts).items():
            figures[f"notification, alert made on A, {where}, collected to received:"] = percentiles(samples)
        return figures
    finally:
        for process, _ in processes:
            process.terminate()
            process.wait(30)
        clickhouse.stop()
        for name in ("state-clickhouse", "state-import", "state-keys", "state-backend-a", "state-backend-b"):
            shutil.rmtree(work / name, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "spyglass-bench")
    parser.add_argument("--repeat", type=int, default=400)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--total", type=int, default=2000, help="searches in each throughput run")
    parser.add_argument("--alerts", type=int, default=100, help="notifications timed")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    data = data_dir(args.work, args.count)
    copy = args.work / f"state-data-{args.count}-postgresql"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(data, copy)
    server = PostgresServer().start()
    processes = []
    try:
        url = server.create_database("bench_state")
        keys = {"sqlite": funded_key(data), "postgresql": postgres_key(url, copy)}
        processes = [serve(data), serve(copy, 1, "", "--state", url)]
        urls = dict(zip(keys, (u for _, u in processes), strict=True))
        runs = {
            kind: latencies(urls, keys, queries, args.repeat)
            for kind, queries in (("charged", CHARGED), ("free", FREE))
        }
        for process, _ in processes:  # the data dirs free again for the states in this process
            process.terminate()
            process.wait(30)
        processes = []
        direct = {
            "sqlite": in_process(Store(data), args.repeat * 5),
            "postgresql": in_process(PostgresAccounts(url, copy), args.repeat * 5),
        }
        flows = shared_stores(args.work, dataset(args.work, args.count), url, args.total, args.clients, args.alerts)
    finally:
        for process, _ in processes:
            process.terminate()
            process.wait(30)
        server.remove()
        shutil.rmtree(copy, ignore_errors=True)
    print(f"search over HTTP, {args.count:,} banners, {args.repeat} requests each, one client")
    for kind, run in runs.items():
        for name, samples in run.items():
            print(f"  {name:<10} {kind:<8} {percentiles(samples)}")
    medians = {name: statistics.median(samples) for name, samples in runs["charged"].items()}
    added = medians["postgresql"] - medians["sqlite"]
    share = added / medians["sqlite"]
    print(f"  PostgreSQL state adds {added * 1000:+.2f} ms to a charged search's p50 ({share:+.1%})")
    for name, figures in direct.items():
        print(f"  in process, a key's lookup and a charge, {name:<10} {figures}")
    print(f"two backends over one ClickHouse and one PostgreSQL: {args.clients} clients, {args.total} charged searches")
    for name, figures in flows.items():
        print(f"  {name} {figures}")


if __name__ == "__main__":
    main()
