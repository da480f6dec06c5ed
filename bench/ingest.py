"""The write path: where a banner's time goes, and `spyglass import` by cores beside DuckDB.

    python bench/ingest.py [--count 200000] [--work DIR] [--cores 1,2] [--collect | --collect-only]

On one generated file (kept in WORK), in one run:
- the time split: each step of a banner's way in, one thread, per banner (inflate, JSON, shape,
  keys, index document, compression, the record store, the index shard);
- ``spyglass import`` as a user runs it (a process, a fresh data dir) pinned to the first N cores
  (taskset) for each N of --cores, and DuckDB's ``read_json_auto`` of the same file into a table
  with N threads on the same cores (installed from PyPI when missing; as an analyst types it, its
  types guessed from a sample: twice bench/index.py's rate, which reads the whole file to type
  it): banners a second, the ratio to DuckDB, and each N's speed-up over the first;
- with --collect, banners collected through the API of ``spyglass serve`` (2 alerts, 10 stream
  readers attached) sustained for 20 s: a second rate to set beside the one-core import's, and a
  search page with 5 facets over HTTP meanwhile and after (p50, p95).
Goals (issue 43): 2 cores >= 0.5x DuckDB at 200k and 1M; 2 cores >= 1.8x one; 16 cores >= 5x 2.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import orjson
from index import dataset, duckdb_import, serve  # bench/index.py, beside this script

from spyglass.exactjson import loads
from spyglass.server.banners.keys import keys
from spyglass.server.banners.shape import normalize
from spyglass.server.index.codec import Codec
from spyglass.server.index.schema import document_tail
from spyglass.server.index.store import BannerIndex, add_document, prepare

SPLIT = 40_000  # banners the time split is measured on
TRAIN = 20_000  # banners before them, stored first (the dictionary is trained on them)
POSTERS = 8  # clients posting collected banners at once
READERS = 10  # stream readers attached meanwhile


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def time_split(source: Path, work: Path) -> None:
    """CPU per banner of each step, one thread, the cycle collector off as an import runs it; on
    a store whose bodies' dictionary was trained on the file's first TRAIN banners."""
    gc.disable()
    with gzip.open(source, "rb") as fh:
        first = [line for _, line in zip(range(TRAIN), fh, strict=False)]
        started = cpu()
        lines = [line for _, line in zip(range(SPLIT), fh, strict=False)]
    steps: list[tuple[str, float]] = [("inflate (gzip, zlib)", cpu() - started)]
    count = len(lines)

    def step(name: str, fn):
        began = cpu()
        out = fn()
        steps.append((name, cpu() - began))
        return out

    data = work / "split"
    shutil.rmtree(data, ignore_errors=True)
    store = BannerIndex(data)
    with store.writing() as trainer:
        trainer.add([prepare(loads(line), line) for line in first])
    banners = step("JSON decode", lambda: [loads(line) for line in lines])
    shapes = step("shape (address, port, time)", lambda: [normalize(b) for b in banners])
    step("keys", lambda: [keys(b, s) for b, s in zip(banners, shapes, strict=True)])
    step("index document", lambda: [document_tail(b, s, 0) for b, s in zip(banners, shapes, strict=True)])
    dictionary = store.records.dictionary()
    assert dictionary is not None
    codec = Codec(dictionary)
    packed = step("compression (zstd, dictionary)", lambda: [codec.pack(line) for line in lines])
    prepared = [prepare(b, body) for b, body in zip(banners, packed, strict=True)]
    step(
        "record store (SQLite)",
        lambda: [store.records.add(prepared[i : i + 20_000], 1) for i in range(0, count, 20_000)],
    )
    _, writer = store.shards.take(1, 32_000_000, 1)

    def index() -> None:
        for seq, p in enumerate(prepared, start=TRAIN + 1):
            add_document(writer, seq, True, p.doc)
        writer.commit()
        writer.wait_merging_threads()

    step("index shard (tantivy, its threads too)", index)
    store.close()
    total = sum(t for _, t in steps)
    print(f"time split, one thread, {count:,} banners ({total / count * 1e6:.0f} us a banner in all):")
    for name, took in steps:
        print(f"  {name:40} {took / count * 1e6:6.1f} us  {took / total:5.1%}")
    gc.enable()


def pinned(cores: int) -> list[str]:
    return ["taskset", "-c", f"0-{cores - 1}"] if cores < (os.cpu_count() or 1) else []


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (by each one's parent in /proc), itself first."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        try:
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (ValueError, OSError):
            continue
    found = [pid]
    for each in found:
        found += [child for child, parent in parents.items() if parent == each]
    return found


def spyglass_import(source: Path, work: Path, cores: int) -> float:
    """``spyglass import`` of ``source`` into a fresh data dir on ``cores`` cores: banners a second.
    Prints the CPU it used a banner and how it was spread: the importing process's own, and its
    busiest worker's, as parts of the wall time (a part near 100% is the ceiling)."""
    data = work / f"import-{cores}"
    shutil.rmtree(data, ignore_errors=True)
    command = [*pinned(cores), sys.executable, "-m", "spyglass", "import", "--data", str(data), str(source)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    used: dict[int, float] = {}
    while process.poll() is None:  # each process's CPU, last seen (a worker's last moments are lost)
        for pid in descendants(process.pid):
            try:
                used[pid] = cpu_of(pid)
            except (OSError, IndexError):
                continue
        time.sleep(0.2)
    _, stderr = process.communicate()
    elapsed = time.perf_counter() - started
    if process.returncode:
        raise RuntimeError(f"spyglass import failed ({process.returncode}): {stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    added = int(stderr.rsplit(" new,", 1)[0].rsplit(", ", 1)[1].replace(",", ""))
    own = used.pop(process.pid, 0.0)
    busiest = max(used.values(), default=0.0)
    print(
        f"  {cores} core(s): CPU {spent * 1e6 / added:.0f} us a banner, {spent / elapsed:.1f} cores busy; "
        f"the importing process {own / elapsed:.0%} of a core, its busiest other process {busiest / elapsed:.0%} "
        f"({len(used)} others)"
    )
    return added / elapsed


DUCKDB_PINNED = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
con.execute(f"SET threads={sys.argv[3]}")
con.execute("SET enable_progress_bar=false")
t = time.perf_counter()
con.execute("CREATE TABLE banners AS SELECT * FROM read_json_auto(?, format='newline_delimited')", [sys.argv[2]])
con.execute("CHECKPOINT")
print(con.execute("SELECT count(*) FROM banners").fetchone()[0] / (time.perf_counter() - t))
"""


def duckdb_rate(source: Path, work: Path, cores: int) -> float:
    path = work / "duckdb-pinned.db"
    path.unlink(missing_ok=True)
    command = [*pinned(cores), sys.executable, "-c", DUCKDB_PINNED, str(path), str(source), str(cores)]
    rate = float(subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()[-1])
    path.unlink(missing_ok=True)
    return rate


# A search page with 5 facets over HTTP every 0.3 s, in a process of its own (in this one, the
# posters' and readers' threads would time their own GIL): p50 and p95 in ms.
SEARCH_PROBE = """
import statistics, sys, time, httpx
url, key, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
took = []
with httpx.Client(base_url=url, timeout=60) as http:
    while time.monotonic() < until or len(took) < 10:
        started = time.perf_counter()
        query = f"port:{(22, 80, 443, 8080)[len(took) % 4]}"
        asked = {"key": key, "query": query, "facets": "country,org,port,product,asn"}
        answer = http.get("/intel/host/search", params=asked)
        answer.raise_for_status()
        took.append((time.perf_counter() - started) * 1000)
        time.sleep(0.3)
took.sort()
print(statistics.median(took), took[int(len(took) * 0.95) - 1])
"""


def search_probe(url: str, key: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SEARCH_PROBE, url, key, str(seconds)], stdout=subprocess.PIPE, text=True
    )


def probed(probe: subprocess.Popen) -> str:
    p50, p95 = map(float, probe.communicate()[0].split())
    return f"p50 {p50:.0f} ms, p95 {p95:.0f} ms"


def cpu_of(pid: int) -> float:
    """CPU seconds a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_of(pid: int) -> list[int]:
    """Its child processes, less multiprocessing's resource tracker."""
    found = [int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()]
    return [c for c in found if b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]


def collected_rate(work: Path, seconds: float = 20.0, workers: int = 1) -> None:
    """Banners a second collected through the API with 2 alerts and 10 stream readers attached,
    and whether each reader saw every one."""
    from spyglass.datagen import generate

    data = work / "collect"
    shutil.rmtree(data, ignore_errors=True)
    create = [sys.executable, "-m", "spyglass", "keys", "create", "--data", str(data), "--plan", "enterprise"]
    key = subprocess.run([*create, "--collector"], check=True, capture_output=True, text=True).stdout.strip()
    second = subprocess.run(create, check=True, capture_output=True, text=True).stdout.strip()
    process, url = serve(data, workers)
    banners = [orjson.dumps(b) for b in generate(200_000, seed=9)]
    seen = [0] * READERS
    stop = threading.Event()

    def read(i: int) -> None:  # counts the banners' line ends: splitting lines in Python fell behind
        own = key if i < READERS // 2 else second  # (a key follows at most 8 streams)
        with httpx.stream("GET", f"{url}/stream/intel/banners", params={"key": own}, timeout=None) as stream:
            stream.raise_for_status()
            last = b""
            for chunk in stream.iter_bytes():
                seen[i] += chunk.count(b"}\n") + (last == b"}" and chunk[:1] == b"\n")
                last = chunk[-1:]
                if stop.is_set():
                    return

    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            for name, net in (("a", "198.18.0.0/24"), ("b", "198.18.1.0/24")):
                body = {"name": name, "filters": {"ip": [net]}}
                http.post("/intel/alert", params={"key": key}, json=body).raise_for_status()
            readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(READERS)]
            for reader in readers:
                reader.start()
            time.sleep(1)
            batches = [b"\n".join(banners[i : i + 1000]) for i in range(0, len(banners), 1000)]
            started, posted = time.perf_counter(), [0]

            def post() -> None:  # as a few collectors at once would (each waits for its flush)
                with httpx.Client(base_url=url, timeout=60) as own:
                    while time.perf_counter() - started < seconds:
                        try:
                            body = batches.pop()
                        except IndexError:  # all sent (another poster took the last)
                            return
                        own.post("/spyglass/collect", params={"key": key}, content=body).raise_for_status()
                        posted[0] += body.count(b"\n") + 1

            posters = [threading.Thread(target=post) for _ in range(POSTERS)]
            before = {pid: cpu_of(pid) for pid in [process.pid, *children_of(process.pid)]}
            clients = cpu()
            for poster in posters:
                poster.start()
            busy = search_probe(url, second, seconds - 2)
            for poster in posters:
                poster.join()
            sent, elapsed = posted[0], time.perf_counter() - started
            used = {pid: cpu_of(pid) - before.get(pid, 0.0) for pid in [process.pid, *children_of(process.pid)]}
            clients = cpu() - clients
            while_collecting = probed(busy)
            quiet = probed(search_probe(url, second, 3))
            time.sleep(3)
            stop.set()
        print(
            f"collected through the API: {sent / elapsed:,.0f} banners/s ({sent:,} in {elapsed:.1f} s); "
            f"stream readers saw {min(seen):,}-{max(seen):,} of them"
        )
        split = ", ".join(f"{seconds * 1e6 / max(sent, 1):.0f} us" for seconds in used.values())
        print(f"  CPU a banner collected: the backend's process, then its writer's if any: {split}")
        print(f"  and this bench's own posters and readers, on the same cores: {clients * 1e6 / max(sent, 1):.0f} us")
        print(f"  a search page with 5 facets over HTTP while collecting: {while_collecting}; after: {quiet}")
    finally:
        process.terminate()
        process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "spyglass-bench")
    parser.add_argument("--cores", default="1,2")
    parser.add_argument("--collect", action="store_true")
    parser.add_argument("--collect-only", action="store_true", help="only the collected rate")
    parser.add_argument("--serve-workers", type=int, default=1, help="serve --workers for the collected rate")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.collect_only:
        collected_rate(args.work, workers=args.serve_workers)
        return
    source = dataset(args.work, args.count)
    time_split(source, args.work)
    duckdb_import(source, args.work)  # installs DuckDB if need be; its rate is measured pinned below
    first: float | None = None
    for cores in [int(c) for c in args.cores.split(",")]:
        ours, duck = spyglass_import(source, args.work, cores), duckdb_rate(source, args.work, cores)
        first = first or ours
        print(
            f"{args.count:,} banners on {cores} core(s): spyglass import {ours:,.0f}/s, DuckDB {duck:,.0f}/s "
            f"({ours / duck:.2f}x DuckDB); {ours / first:.2f}x the first"
        )
    if args.collect:
        collected_rate(args.work, workers=args.serve_workers)


if __name__ == "__main__":
    main()
