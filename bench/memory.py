"""The embedded backend's memory over time, as a jump host runs it: ``serve --demo --demo-rate 50``
on a fresh data dir (the demo data, 50 synthetic banners collected a second), under a light
client load (a search with facets or a count every second, and one stream reader).

Prints a line per sample (RSS, of it anonymous memory and mapped files, and the banners stored)
and, at the end, the slope of RSS over the samples after the first minute (MB an hour).

    python bench/memory.py [--minutes 60] [--every 30] [--rate 50]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

import httpx

QUERIES = ("port:22", "product:nginx", "country:DE", "has_ssl:true", "org:Harbor")
FACETS = "port,country,org,product"


def status_kb(pid: int) -> dict[str, int]:
    """VmRSS, RssAnon, RssFile of a process, in kB."""
    found = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile"):
                found[name] = int(value.split()[0])
    return found


def spyglass(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "spyglass", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def load(url: str, key: str, stop: threading.Event) -> None:
    """A search page with facets or a count, one a second."""
    with httpx.Client(timeout=30) as http:
        i = 0
        while not stop.wait(1.0):
            query = QUERIES[i % len(QUERIES)]
            method = "search" if i % 2 == 0 else "count"
            http.get(f"{url}/intel/host/{method}", params={"key": key, "query": query, "facets": FACETS})
            i += 1


def read_stream(url: str, key: str, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            with (
                httpx.Client(timeout=httpx.Timeout(30, read=None)) as http,
                http.stream("GET", f"{url}/stream/intel/banners", params={"key": key}) as response,
            ):
                for _ in response.iter_bytes():
                    if stop.is_set():
                        return
        except httpx.HTTPError:
            stop.wait(1.0)


def slope_mb_per_hour(samples: list[tuple[float, float]]) -> float:
    """The least-squares slope of (seconds, MB) samples, in MB an hour."""
    n = len(samples)
    if n < 2:
        return 0.0
    mean_t = sum(t for t, _ in samples) / n
    mean_m = sum(m for _, m in samples) / n
    spread = sum((t - mean_t) ** 2 for t, _ in samples)
    return sum((t - mean_t) * (m - mean_m) for t, m in samples) / spread * 3600 if spread else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--every", type=float, default=30.0, help="seconds between samples")
    parser.add_argument("--rate", default="50", help="demo banners collected a second")
    parser.add_argument("--no-load", action="store_true", help="no client at all (which part grows)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        key = spyglass("keys", "create", "--data", data, "--plan", "enterprise")
        server = subprocess.Popen(
            [sys.executable, "-m", "spyglass", "serve", "--data", data, "--port", "0", "--demo"]
            + ["--demo-rate", args.rate],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        stop = threading.Event()
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split()[1]
            httpx.get(f"{url}/api-info", params={"key": key}, timeout=120)  # the demo data is in
            workers = [threading.Thread(target=f, args=(url, key, stop), daemon=True) for f in (load, read_stream)]
            for worker in [] if args.no_load else workers:
                worker.start()
            started, samples = time.monotonic(), []
            print("   min   RSS MB  anon MB  files MB  banners")
            while (elapsed := time.monotonic() - started) <= args.minutes * 60:
                kb = status_kb(server.pid)
                held = httpx.get(f"{url}/spyglass/info", params={"key": key}).json()
                mb = kb["VmRSS"] / 1024
                if elapsed >= 60:
                    samples.append((elapsed, mb))
                print(
                    f"{elapsed / 60:6.1f} {mb:8.1f} {kb['RssAnon'] / 1024:8.1f} {kb['RssFile'] / 1024:9.1f}"
                    f"  {held.get('banners', '?')}",
                    flush=True,
                )
                time.sleep(max(0.0, args.every - (time.monotonic() - started - elapsed)))
            slope = slope_mb_per_hour(samples)
            print(f"slope after the first minute: {slope:+.1f} MB an hour ({len(samples)} samples)")
        finally:
            stop.set()
            server.terminate()
            server.wait(30)


if __name__ == "__main__":
    os.environ.pop("SPYGLASS_API_KEY", None)
    main()
