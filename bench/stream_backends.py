"""Stream latency across backends: from a banner's collection on backend A to its arrival at a
stream reader on backend B, two ``spyglass serve`` processes over one ClickHouse banner store and
one PostgreSQL state (both started here, on loopback). The goal is at most 2 s at p95.

Banners are collected one request at a time through ``POST /spyglass/collect`` on A, a fraction of
a second apart (as a scanner's results come); each one's latency is from just before its request
to its line read on B's ``/stream/{ns}/banners``. A reader on A is timed beside it (the same path:
a backend that shares its store streams what the store gained, its own banners included).

    python bench/stream_backends.py [--banners 100] [--gap 0.1]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import orjson

from spyglass.server.state.postgres import PostgresAccounts
from spyglass.server.state.sqlite.accounts import Store
from spyglass.testing.backend import serve
from spyglass.testing.clickhouse import ClickHouseServer
from spyglass.testing.postgres import PostgresServer

NS = "intel"


def follow(url: str, key: str, arrived: dict[str, float], ready: threading.Event) -> None:
    """Each banner's arrival time (monotonic), by address, until the process ends."""
    with httpx.stream("GET", url, params={"key": key}, timeout=httpx.Timeout(10, read=None)) as r:
        ready.set()
        for line in r.iter_lines():
            if line.strip():
                arrived.setdefault(orjson.loads(line)["ip_str"], time.monotonic())


def banner(n: int) -> dict:
    return {
        "ip_str": f"198.18.{n // 250}.{n % 250 + 1}",
        "port": 443,
        "transport": "tcp",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000000", time.gmtime()),
        "data": f"banner {n}\n",
    }


def percentiles(seconds: list[float]) -> str:
    cuts = statistics.quantiles(seconds, n=20)
    p50, p95, most = (round(s * 1000) for s in (statistics.median(seconds), cuts[18], max(seconds)))
    return f"p50 {p50:6} ms   p95 {p95:6} ms   max {most:6} ms"


def measure(on: str, readers: dict[str, str], key: str, count: int, gap: float, first: int) -> None:
    """Collect ``count`` banners on ``on``, timing their arrival at each of ``readers`` (name: URL)."""
    arrivals: dict[str, dict[str, float]] = {name: {} for name in readers}
    for name, url in readers.items():
        ready = threading.Event()
        reader = (f"{url}/stream/{NS}/banners", key, arrivals[name], ready)
        threading.Thread(target=follow, args=reader, daemon=True).start()
        ready.wait(15)
    sent: dict[str, float] = {}
    with httpx.Client(base_url=on, params={"key": key}, timeout=30) as http:
        for n in range(first, first + count):
            one = banner(n)
            sent[one["ip_str"]] = time.monotonic()
            http.post("/spyglass/collect", content=orjson.dumps(one) + b"\n").raise_for_status()
            time.sleep(gap)
    deadline = time.monotonic() + 10
    while any(len(arrived) < count for arrived in arrivals.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    for name, arrived in arrivals.items():
        latencies = [arrived[ip] - t for ip, t in sent.items() if ip in arrived]
        missing = count - len(latencies)
        print(f"  reader on {name:30} {percentiles(latencies)}" + (f"   MISSING {missing}" if missing else ""))


def run(folder: Path, count: int, gap: float) -> None:
    with ExitStack() as stack:
        clickhouse = ClickHouseServer(folder / "clickhouse").start()
        stack.callback(clickhouse.stop)
        postgres = PostgresServer().start()
        stack.callback(postgres.remove)
        store, state = clickhouse.address("bench_stream"), postgres.create_database("bench_stream")
        accounts = PostgresAccounts(state, folder / "keys")
        key = accounts.create_key("enterprise", collector=True)
        accounts.close()
        print(f"{count} banners collected one request at a time, {gap:.2f} s apart")
        shared = ("--store", store, "--state", state)
        with serve(folder / "a", *shared) as a, serve(folder / "b", *shared) as b:
            measure(a, {"B (the other backend)": b, "A (the collecting one)": a}, key, count, gap, 0)
        # the baseline: one backend that does not follow the store (its hub hears its collector)
        alone = Store(folder / "alone")
        key = alone.create_key("enterprise", collector=True)
        alone.close()
        with serve(folder / "alone", "--store", store) as c:
            measure(c, {"one backend, not following": c}, key, count, gap, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--banners", type=int, default=100)
    parser.add_argument("--gap", type=float, default=0.1, help="seconds between collections")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="spyglass-bench-") as folder:
        run(Path(folder), args.banners, args.gap)


if __name__ == "__main__":
    main()
