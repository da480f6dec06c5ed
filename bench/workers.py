"""HTTP throughput of ``spyglass serve --workers N``: requests a second at 32 clients with one worker
and with two, in one run, on this machine's cores.

    python bench/workers.py [--count 300000] [--work DIR] [--seconds 10] [--clients 32]

Imports COUNT generated banners (the same file as bench/index.py) into a data dir, then for 1 and
2 workers starts ``spyglass serve --workers N`` and drives it with wrk (a load generator in C, so
that the client takes little of the cores the server needs; Debian's package, installed here when
missing), each request one of the index bench's queries in turn: a count, and a search page with
5 facets. Goal: 2 workers at least 1.7x one worker at 32 clients.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from index import FACETS5, SEARCHES, cpu_seconds, dataset, funded_key, serve  # bench/index.py

from spyglass.server.index import BannerIndex
from spyglass.server.ingest.importer import import_files

# wrk's script: each request the next query of the list, URL-encoded by the caller
ROTATE = """
paths = {%s}
i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
"""


def wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    print("installing wrk from Debian's packages for the load ...", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True, env=env, stdout=subprocess.DEVNULL)
    return shutil.which("wrk") or "wrk"


def data_dir(work: Path, count: int) -> Path:
    data = work / f"workers-data-{count}"
    if not (data / "index").exists():
        shutil.rmtree(data, ignore_errors=True)
        index = BannerIndex(data)
        import_files(index, [dataset(work, count)])
        index.close()
    return data


def load(
    url: str, paths: list[str], clients: int, seconds: float, script_dir: Path, errors: bool = False
) -> tuple[float, str]:
    """(requests a second, p50 latency as wrk prints it); fails on any non-2xx answer, unless
    ``errors``: then the rate is of the 2xx answers alone."""
    script = script_dir / "rotate.lua"
    script.write_text(ROTATE % ", ".join(f'"{p}"' for p in paths))
    out = subprocess.run(
        [wrk(), "-t1", f"-c{clients}", f"-d{seconds:g}s", "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    failed = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if failed and not errors:
        raise SystemExit(f"wrk saw errors:\n{out}")
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    took = float(re.search(r"requests in ([\d.]+)s", out).group(1))  # type: ignore[union-attr]
    p50 = re.search(r"^\s*50%\s+(\S+)", out, re.MULTILINE).group(1)  # type: ignore[union-attr]
    return (total - (int(failed.group(1)) if failed else 0)) / took, p50


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=300_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "spyglass-bench")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    data = data_dir(args.work, args.count)
    key = funded_key(data)
    quoted = [httpx.QueryParams({"key": key, "query": q}) for q in SEARCHES]
    loads = {
        "count": [f"/intel/host/count?{q}" for q in quoted],
        "search page + 5 facets": [f"/intel/host/search?{q.set('facets', FACETS5)}" for q in quoted],
    }
    print(f"{args.count:,} banners, {args.clients} clients, {args.seconds:g} s each, {os.cpu_count()} cores")
    rates: dict[tuple[str, int], float] = {}
    used: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            process, url = serve(data, workers)
            try:
                for name, paths in loads.items():
                    load(url, paths, args.clients, 2, Path(tmp))  # warm: segments opened, pages cached
                    cpu, started = cpu_seconds(process.pid), time.monotonic()
                    rate, p50 = load(url, paths, args.clients, args.seconds, Path(tmp))
                    cores = (cpu_seconds(process.pid) - cpu) / (time.monotonic() - started)
                    rates[name, workers], used[name, workers] = rate, cores
                    print(
                        f"{workers} worker{'s' if workers > 1 else ' '}  {name:24} {rate:8,.0f} req/s   p50 {p50:>8}"
                        f"   server on {cores:.2f} cores"
                    )
            finally:
                process.terminate()
                process.wait(30)
    for name in loads:
        # one worker already runs past one core (tantivy and SQLite work outside the GIL in its
        # thread pool): two workers can give at most the cores there are over the cores it used
        bound = (os.cpu_count() or 1) / used[name, 1]
        print(
            f"{name:24} 2 workers / 1 worker: {rates[name, 2] / rates[name, 1]:.2f}x (goal >= 1.7x; "
            f"at most {bound:.2f}x on {os.cpu_count()} cores, one worker using {used[name, 1]:.2f})"
        )


if __name__ == "__main__":
    main()
