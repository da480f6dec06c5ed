"""The banner index at scale: import rate, size on disk, and query latencies.

    python bench/index.py [--count 1000000] [--work DIR] [--repeat 30]

Generates COUNT synthetic banners (kept in WORK for later runs), imports them into a fresh
data dir, and DuckDB (the peer an analyst with a dump would reach for; installed from PyPI here
when missing) reads the same ``.json.gz`` into a table, in the same run. Then times, in process
and over HTTP from ``spyglass serve`` on that data dir (a process of its own, as a user runs it: a
server in a thread of the bench would share the client's GIL): a search page with 5 facets, a
count, a facet with 1,000+ distinct values, free text with filters, and a trends monthly series
with 2 facets per month over every banner (history too); and a credit's charge.
Goals: import >= 0.5x DuckDB's rate; disk <= 3x the gzip input; search page + 5 facets over HTTP
<= 1.5x in process and <= 10 ms p50 at 1M; a charge <= 10% of a search.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from spyglass.datagen import generate
from spyglass.query import parse_facets, parse_strict
from spyglass.server.index import BannerIndex
from spyglass.server.index.trends import TrendsIndex
from spyglass.server.ingest.importer import import_files

ROOT = Path(__file__).resolve().parents[1]

SEARCHES = [
    "port:22",
    "nginx country:US",
    "has_vuln:true",
    "product:openssh -country:CN",
    "tag:ics",
    "http.title:login",
    "ssl.cert.issuer.cn:ets after:2026-01-01",
    "org:bluefin port:443",
]
FACETS5 = "port,org,country,product,vuln"
TRENDS = [q for q in SEARCHES if "after:" not in q]  # the trends host has no date filters
FACETS2 = "country,port"
FREE_TEXT = [
    "nginx port:443 country:DE",
    '"welcome to nginx" has_ssl:true',
    "openssh after:2026-06-01",
    "redis -country:US",
    "apache has_vuln:true",
]


def percentiles(samples: list[float]) -> str:
    s = sorted(samples)
    p50 = statistics.median(s)
    p95 = s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]
    return f"p50 {p50 * 1000:7.2f} ms   p95 {p95 * 1000:7.2f} ms"


def timed(fn, repeat: int, queries: list[str]) -> list[float]:
    samples = []
    for i in range(repeat):
        q = queries[i % len(queries)]
        started = time.perf_counter()
        fn(q)
        samples.append(time.perf_counter() - started)
    return samples


def cpu_seconds(pid: int) -> float:
    """CPU time of a process and every process under it, so far."""
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    children = [int(c) for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]
    return own + sum(cpu_seconds(c) for c in children)


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def dataset(work: Path, count: int) -> Path:
    path = work / f"banners-{count}.json.gz"
    if not path.exists():
        started = time.perf_counter()
        with gzip.open(path, "wb", compresslevel=3) as fh:
            for b in generate(count, seed=1):
                fh.write(orjson.dumps(b) + b"\n")
        took = time.perf_counter() - started
        print(f"generated {count:,} banners in {took:.1f} s ({path.stat().st_size / 1e6:.0f} MB gz)")
    return path


def duckdb_import(source: Path, work: Path) -> tuple[float, int]:
    """DuckDB reading the same file into a table of typed columns: (banners/s, bytes per banner)."""
    try:
        import duckdb
    except ImportError:
        print("installing duckdb from PyPI for the comparison ...", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "duckdb"], check=True)
        import duckdb
    path = work / "duckdb.db"
    for old in (path, path.with_suffix(".db.wal")):
        old.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    started = time.perf_counter()
    con.execute(
        "CREATE TABLE banners AS SELECT * FROM read_json_auto(?, format='newline_delimited', union_by_name=true,"
        " sample_size=-1, maximum_object_size=16777216)",
        [str(source)],
    )
    con.execute("CHECKPOINT")
    elapsed = time.perf_counter() - started
    count = con.execute("SELECT count(*) FROM banners").fetchone()[0]
    con.close()
    size = path.stat().st_size
    path.unlink()
    return count / elapsed, size // count


def real_banners_compressed(data: Path) -> None:
    """What the data dir's dictionary (trained on generated banners) does to the real banners of the
    original service's fixtures, beside zstd at the same level without a dictionary."""
    fixture = ROOT / "tests" / "fixtures" / "original-service" / "host" / "version.json"
    import zstandard

    from spyglass.server.index.codec import LEVEL, Codec
    from spyglass.server.index.records import RecordStore

    real = [orjson.dumps(b) for b in orjson.loads(fixture.read_bytes())["matches"]]
    records = RecordStore(data / "banners.db")
    codec = records._codec
    records.close()
    assert codec is not None
    alone = zstandard.ZstdCompressor(level=LEVEL)
    print(
        f"real banners ({len(real)}, fixtures): {sum(map(len, real)) / len(real):,.0f} B of JSON, "
        f"{sum(len(codec.pack(b)) for b in real) / len(real):,.0f} B with the generated data's dictionary, "
        f"{sum(len(alone.compress(b)) for b in real) / len(real):,.0f} B with zstd alone"
    )
    assert all(Codec(codec.dictionary.as_bytes()).unpack(codec.pack(b)) == b for b in real)


def funded_key(data: Path) -> str:
    """The data dir's local key, with credits enough that no charged search of a bench runs short."""
    from spyglass.server.state.sqlite.accounts import Store

    store = Store(data)
    try:
        key = store.local_key()
        account = store.account_for_key(key)
        assert account is not None
        store.set_credits(account.id, query=1_000_000_000)
        return key
    finally:
        store.close()


def serve(data: Path, workers: int = 1, store: str = "", *options: str) -> tuple[subprocess.Popen, str]:
    """``spyglass serve`` on ``data`` (and the banner store at ``store``, with ``options``) as a user
    runs it: a process of its own, on a port the OS picks. Once every worker answers: the process
    and its URL.
    It builds no bulk data files: on a data dir just imported that takes its first minutes (hours
    for 10M banners on ClickHouse), sharing the interpreter with the requests a bench times."""
    command = [sys.executable, "-m", "spyglass", "serve", "--data", str(data), "--port", "0"]
    command += ["--workers", str(workers), "--no-bulk-data", *(["--store", store] if store else []), *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().split()[1]
    seen: set[str] = set()
    deadline = time.monotonic() + 60
    while len(seen) < workers and time.monotonic() < deadline:  # every worker up before the load
        try:
            with httpx.Client() as http:
                seen.add(http.get(f"{url}/api-info").headers.get("x-spyglass-worker", "0"))
        except httpx.TransportError:
            time.sleep(0.1)
    return process, url


def http_latencies(data: Path, repeat: int, in_process: dict[str, float]) -> None:
    """Over HTTP from ``spyglass serve`` in its own process: raw (the bytes a plain client reads:
    what the server costs) and through spyglass's client (parsed into its models), each against
    the same query in process."""
    from spyglass.client import Clients
    from spyglass.config import Profile
    from spyglass.server.state.sqlite.accounts import Store

    key = funded_key(data)
    process, url = serve(data)
    try:
        with httpx.Client(base_url=url) as raw:
            for name, path, facets in (("search page + 5 facets", "search", FACETS5), ("count", "count", "")):
                samples = []
                for i in range(len(SEARCHES) + repeat):
                    params = {"key": key, "query": SEARCHES[i % len(SEARCHES)], "facets": facets}
                    started = time.perf_counter()
                    raw.get(f"/intel/host/{path}", params=params).raise_for_status()
                    if i >= len(SEARCHES):  # the first of each query warms it
                        samples.append(time.perf_counter() - started)
                ratio = statistics.median(samples) / in_process[name]
                print(f"{'HTTP ' + name:34} {percentiles(samples)}   {ratio:.2f}x in process")

        async def run() -> None:
            async with Clients.from_profile(Profile(name="bench", url=url, key=key, rate=None)) as c:
                for name, call, queries in (
                    ("client search page + 5 facets", lambda q: c.search.search(q, FACETS5), SEARCHES),
                    ("client count", lambda q: c.search.count(q), SEARCHES),
                    ("client trends months + 2 facets", lambda q: c.trends.search(q, FACETS2), TRENDS),
                ):
                    samples = []
                    for i in range(repeat):
                        started = time.perf_counter()
                        await call(queries[i % len(queries)])
                        samples.append(time.perf_counter() - started)
                    print(f"{name:34} {percentiles(samples)}")

        asyncio.run(run())
    finally:
        process.terminate()
        process.wait(30)
    store = Store(data)
    account = store.account_for_key(key)
    assert account is not None
    samples = []
    for _ in range(200):
        started = time.perf_counter()
        store.charge(account.id, query=1)
        samples.append(time.perf_counter() - started)
    share = statistics.median(samples) / in_process["search page + 5 facets"]
    print(f"{'charging a credit':34} {percentiles(samples)}   {share:.1%} of a search in process")
    store.close()


def arguments(repeat: int) -> argparse.Namespace:
    """--count, --work (made if missing) and --repeat, as the store benches take them."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "spyglass-bench")
    parser.add_argument("--repeat", type=int, default=repeat)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    return args


def main() -> None:
    args = arguments(repeat=40)
    source = dataset(args.work, args.count)
    data = args.work / f"data-{args.count}"
    shutil.rmtree(data, ignore_errors=True)
    index = BannerIndex(data)
    started = time.perf_counter()
    report = import_files(index, [source])
    elapsed = time.perf_counter() - started
    rate = report.added / elapsed
    duck_rate, duck_bytes = duckdb_import(source, args.work)
    print(f"import: {report.added:,} banners in {elapsed:.1f} s = {rate:,.0f} banners/s")
    print(f"DuckDB reads the same file at {duck_rate:,.0f} banners/s: ratio {rate / duck_rate:.2f}x")
    index.close()
    index = BannerIndex(data)  # what a restart finds: the write-ahead log folded in
    gz = source.stat().st_size / report.added
    records, tantivy_bytes = dir_size(data) - dir_size(data / "index"), dir_size(data / "index")
    print(
        f"on disk: records {records / report.added:,.0f} B + index {tantivy_bytes / report.added:,.0f} B"
        f" = {dir_size(data) / report.added:,.0f} B per banner; gzip input {gz:,.0f} B ("
        f"{dir_size(data) / report.added / gz:.1f}x), DuckDB {duck_bytes:,} B"
    )
    real_banners_compressed(data)
    print(f"shards: {len(index.searchers())}")  # (and warm: open the segments once)
    facets5 = parse_facets(FACETS5)
    wide = parse_facets("ip:1000")
    trends, facets2 = TrendsIndex(index), parse_facets(FACETS2)
    rows = [
        ("search page + 5 facets", lambda q: index.search(parse_strict(q), facets5), SEARCHES),
        ("count", lambda q: index.count(parse_strict(q), []), SEARCHES),
        ("facet ip:1000 (1,000+ values)", lambda q: index.count(parse_strict(q), wide), SEARCHES),
        ("free text + filters, page", lambda q: index.search(parse_strict(q), []), FREE_TEXT),
        ("trends months + 2 facets", lambda q: trends.search(parse_strict(q), facets2), TRENDS),
    ]
    months = trends.search(parse_strict(TRENDS[0]), facets2).matches
    print(f"(trends: {len(months)} months, {months[0]['month']} to {months[-1]['month']}, for {TRENDS[0]})")
    distinct = len(index.count(parse_strict("port:80,443,22"), wide)[1]["ip"])
    print(f"(ip:1000 returns {distinct:,} distinct values for port:80,443,22)")
    in_process = {}
    for name, fn, queries in rows:
        timed(fn, len(queries), queries)  # warm each query once
        samples = timed(fn, args.repeat, queries)
        in_process[name] = statistics.median(samples)
        print(f"{name:34} {percentiles(samples)}")
    index.close()
    http_latencies(data, args.repeat, in_process)


if __name__ == "__main__":
    main()
