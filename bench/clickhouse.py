"""The banner store on ClickHouse beside the embedded one: import rate, bytes per banner on disk,
and query latencies over HTTP, for the embedded store, one ClickHouse server and a two-shard
cluster (two servers on this machine), in one run on the same generated banners.

    python bench/clickhouse.py [--count 1000000] [--work DIR] [--repeat 30]

The servers are Debian's clickhouse-server (apt-get install -y clickhouse-server), started on
loopback from configs written under WORK (spyglass.testing.clickhouse). Each store is measured alone:
the servers of the others are stopped. Queries go through ``spyglass serve --store`` over HTTP (raw
httpx, the bytes a plain client reads); each query warmed once, p50/p95 over REPEAT requests.
Each import's CPU time a banner is printed too, split between this process, the import's worker
processes and the servers: an import is bound by the machine's cores, and this says whose work
fills them.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from index import (  # bench/index.py, beside this script
    FACETS2,
    FACETS5,
    FREE_TEXT,
    SEARCHES,
    TRENDS,
    arguments,
    cpu_seconds,
    dataset,
    dir_size,
    funded_key,
    serve,
)

from spyglass.server.ingest.importer import import_files
from spyglass.server.stores import open_banner_store
from spyglass.testing.clickhouse import ClickHouseCluster, ClickHouseServer

DATABASE = "bench"
# (name, path under the backend, query list, facets)
MEASURES = [
    ("count", "/intel/host/count", SEARCHES, ""),
    ("search page + 5 facets", "/intel/host/search", SEARCHES, FACETS5),
    ("free text + filters, page", "/intel/host/search", FREE_TEXT, ""),
    ("trends months + 2 facets", "/trends/api/v1/search", TRENDS, FACETS2),
]


def http_latencies(data: Path, address: str, repeat: int) -> dict[str, list[float]]:
    """The samples of each of MEASURES, and under "totals" what each count query found: every
    store must find the same (a bench that reads an empty store would otherwise look fast)."""
    import httpx

    key = funded_key(data)
    out: dict[str, list[float]] = {}
    process, url = serve(data, store=address)
    try:
        with httpx.Client(base_url=url, timeout=120) as http:
            out["totals"] = [
                http.get("/intel/host/count", params={"key": key, "query": q}).json()["total"] for q in SEARCHES
            ]
            for name, path, queries, facets in MEASURES:
                samples = []
                for i in range(len(queries) + repeat):
                    params = {"key": key, "query": queries[i % len(queries)], "facets": facets}
                    started = time.perf_counter()
                    http.get(path, params=params).raise_for_status()
                    if i >= len(queries):  # the first of each query warms it
                        samples.append(time.perf_counter() - started)
                out[name] = samples
    finally:
        process.terminate()
        process.wait(30)
    return out


def measure(
    name: str,
    source: Path,
    work: Path,
    address: str,
    size: Callable[[], int],
    servers: list[ClickHouseServer],
    repeat: int,
) -> dict[str, float | list[float]]:
    data = work / f"backend-{name.replace(' ', '-')}"
    shutil.rmtree(data, ignore_errors=True)
    store = open_banner_store(address, data)  # where the backend below opens it
    reconciling = timed(getattr(store, "writes", store), "reconcile")  # a ClickHouse writer's, at its end
    cpu_before = cpu_split(servers)
    started = time.perf_counter()
    report = import_files(store, [source])
    elapsed = time.perf_counter() - started
    cpu = [after - before for before, after in zip(cpu_before, cpu_split(servers), strict=True)]
    store.close()
    of_which = f" (of which the writer's reconciliation at its end {sum(reconciling):.2f} s)" if reconciling else ""
    print(f"{name}: imported {report.added:,} banners in {elapsed:.1f} s{of_which}", flush=True)
    per_banner = [seconds / report.added * 1e6 for seconds in cpu]
    cores = os.cpu_count() or 1
    print(
        f"  CPU a banner: {per_banner[0]:.1f} us this process (the writer), {per_banner[1]:.1f} us its workers "
        f"(parsing, preparing), {per_banner[2]:.1f} us the ClickHouse servers; {sum(per_banner):.1f} us in all, "
        f"of {cores * elapsed / report.added * 1e6:.1f} us of {cores} cores' time",
        flush=True,
    )
    merged(servers)  # merge each month's parts, as the server does in time, before the disk is measured
    result: dict[str, float | list[float]] = {
        "import": report.added / elapsed,
        "cpu": sum(per_banner),
        "bytes": size() / report.added,
    }
    result.update(http_latencies(data, address, repeat))
    return result


def cpu_split(servers: list[ClickHouseServer]) -> tuple[float, float, float]:
    """CPU seconds used so far by this process, its ended children (an import's workers, once it
    ends) and these servers (alive, so not yet among the children)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    served = sum(cpu_seconds(server.process.pid) for server in servers if server.process is not None)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime, served


def timed(obj: object, method: str) -> list[float]:
    """The seconds each call of ``obj.method`` takes from now on (none if it has no such method)."""
    seconds: list[float] = []
    inner = getattr(obj, method, None)
    if inner is not None:

        def timing(*args, **kwargs):
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                seconds.append(time.perf_counter() - started)

        setattr(obj, method, timing)
    return seconds


def p(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return (statistics.median(s) if q == 0.5 else s[min(len(s) - 1, int(round(q * (len(s) - 1))))]) * 1000


def table(results: dict[str, dict], count: int, gz: float) -> None:
    names = list(results)
    head = f"{'at ' + format(count, ',') + ' banners':32}" + "".join(f"{n:>22}" for n in names)
    print("\n" + head + "\n" + "-" * len(head))

    def row(label: str, values: list[float], unit: str) -> None:
        cells = []
        for i, v in enumerate(values):
            ratio = "" if i == 0 else f" ({v / values[0]:.2f}x)"
            cells.append(f"{v:,.1f}{unit}{ratio}" if v < 100 else f"{v:,.0f}{unit}{ratio}")
        print(f"{label:32}" + "".join(f"{c:>22}" for c in cells))

    row("import, banners/s", [r["import"] for r in results.values()], "")
    row("import, CPU us a banner", [r["cpu"] for r in results.values()], " us")
    row("disk, bytes per banner", [r["bytes"] for r in results.values()], " B")
    for name, *_ in MEASURES:
        for q, label in ((0.5, "p50"), (0.95, "p95")):
            row(f"{name} {label}", [p(r[name], q) for r in results.values()], " ms")
    print(f"(the gzip input: {gz:,.0f} B per banner; ratios are to {names[0]}: above 1 is more)")


def main() -> None:
    args = arguments(repeat=30)
    source = dataset(args.work, args.count)
    servers = args.work / "clickhouse"
    shutil.rmtree(servers, ignore_errors=True)
    results: dict[str, dict] = {}

    runs: list[tuple[str, Callable[[], AbstractContextManager], Callable[..., tuple[str, Callable[[], int]]]]] = [
        ("embedded", nullcontext, lambda _: ("", lambda: dir_size(args.work / "backend-embedded"))),
        ("ClickHouse 1 server", lambda: running(ClickHouseServer(servers / "one")), one_server),
        ("ClickHouse 2 shards", lambda: running(ClickHouseCluster(servers / "two", shards=2)), cluster),
    ]
    for name, start, address_of in runs:
        with start() as started:
            address, size = address_of(started)
            servers_of = [] if started is None else getattr(started, "servers", [started])
            results[name] = measure(name, source, args.work, address, size, servers_of, args.repeat)
    totals = {name: r.pop("totals") for name, r in results.items()}
    print(f"count of each query, all stores: {next(iter(totals.values()))}")
    if len({tuple(t) for t in totals.values()}) != 1:
        sys.exit(f"the stores found different banners, so their figures compare nothing: {totals}")
    table(results, args.count, source.stat().st_size / args.count)


def merged(servers: list[ClickHouseServer], timeout: float = 3600.0) -> None:
    """Every partition of the bench's tables merged (OPTIMIZE ... FINAL), and no merge still
    running: queries timed beside a merge share the cores with it. An OPTIMIZE that finds its
    parts already merging does nothing, so it is asked again once the merges have ended."""
    deadline = time.monotonic() + timeout
    running = f"SELECT count() FROM system.merges WHERE database = '{DATABASE}'"
    for _ in range(2):
        for server in servers:
            parts = server.query(
                f"SELECT DISTINCT table, partition FROM system.parts WHERE database = '{DATABASE}' AND active"
            )
            for table, partition in parts:
                server.query(f"OPTIMIZE TABLE {DATABASE}.{table} PARTITION {partition} FINAL")
        while any(server.query(running)[0][0] for server in servers):
            if time.monotonic() > deadline:
                sys.exit(f"merges still running after {timeout:.0f} s: the figures would be taken beside them")
            time.sleep(1)


class running:
    """A server or cluster for the length of a ``with``."""

    def __init__(self, servers) -> None:
        self.servers = servers

    def __enter__(self):
        return self.servers.start()

    def __exit__(self, *exc) -> None:
        self.servers.stop()


def on_disk(servers: list[ClickHouseServer]) -> int:
    """Bytes of the bench's active parts (the parts a merge replaced linger a few minutes: not counted)."""
    return sum(
        server.query(f"SELECT sum(bytes_on_disk) FROM system.parts WHERE database = '{DATABASE}' AND active")[0][0]
        for server in servers
    )


def one_server(server: ClickHouseServer) -> tuple[str, Callable[[], int]]:
    return server.address(DATABASE), lambda: on_disk([server])


def cluster(c: ClickHouseCluster) -> tuple[str, Callable[[], int]]:
    return c.address(DATABASE), lambda: on_disk(c.servers)


if __name__ == "__main__":
    main()
