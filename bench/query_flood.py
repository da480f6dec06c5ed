"""Free queries as a flood (issue 34, major 7), against ``spyglass serve`` on loopback:

for each attack, CLIENTS clients with a free key send the same costly ``count`` over and over for
SECONDS while another client counts ``port:22`` twice a second; printed: that client's p50/p95,
the attackers' answers by status, and the server's RSS before, at its peak during, and some
seconds after. Goal: the other client answered within 2 s, RSS at most 500 MB and given back.

    python bench/query_flood.py [--banners 50000] [--clients 24] [--seconds 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from abuse import rss_mb, server_pid  # bench/abuse.py

from spyglass.testing.backend import serve

ATTACKS = {
    "cpe: with 2,000 values": "cpe:" + ",".join(f"v{i}" for i in range(2000)),
    "cpe: at the caps (58 values, 4,060 characters)": "cpe:" + ",".join(f"cpe:2.3:a:{i:0>60}" for i in range(58)),
    "cpe: plus 1,200 letters": "cpe:" + "a" * 1200,
    "net: 1,000 copies of 0.0.0.0/0": "net:" + ",".join(["0.0.0.0/0"] * 1000),
    "net: 100 networks apart": "net:" + ",".join(f"198.18.{2 * i}.0/24" for i in range(100)),
    "ip facet of 1,000": "port:22",  # with facets below
}
FACETS = {"ip facet of 1,000": "ip:1000,ssh.fingerprint:1000"}


def spyglass(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "spyglass", *args], check=True, capture_output=True, text=True).stdout


def attack(url: str, key: str, query: str, facets: str | None, seconds: float, clients: int) -> None:
    statuses: Counter = Counter()
    victim: list[float] = []
    stop = time.monotonic() + seconds
    params = {"key": key, "query": query, **({"facets": facets} if facets else {})}

    def flood() -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            while time.monotonic() < stop:
                try:
                    statuses[http.get("/intel/host/count", params=params).status_code] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1

    def other() -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            while time.monotonic() < stop:
                started = time.monotonic()
                http.get("/intel/host/count", params={"key": key, "query": "port:22"})
                victim.append(time.monotonic() - started)
                time.sleep(0.5)

    pid = server_pid(url)
    before, peak = rss_mb(pid), 0.0
    threads = [threading.Thread(target=flood) for _ in range(clients)] + [threading.Thread(target=other)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, rss_mb(pid))
        time.sleep(0.2)
    time.sleep(5)
    after = rss_mb(pid)
    p50 = statistics.median(victim)
    p95 = statistics.quantiles(victim, n=20)[-1] if len(victim) > 1 else victim[0]
    print(
        f"  other client p50 {p50:.2f} s p95 {p95:.2f} s ({len(victim)} counts); attackers {dict(statuses)}; "
        f"RSS {before:.0f} MB before, {peak:.0f} MB peak, {after:.0f} MB 5 s after"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--banners", type=int, default=50_000)
    parser.add_argument("--clients", type=int, default=24)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--only", help="run only the attacks whose name holds this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        dataset = Path(tmp) / "banners.json.gz"
        spyglass("generate", "--count", str(args.banners), "--seed", "1", "-o", str(dataset))
        spyglass("import", "--data", str(data), str(dataset))
        key = spyglass("keys", "create", "--data", str(data), "--plan", "free").strip()
        with serve(data) as url:
            for name, query in ATTACKS.items():
                if args.only and args.only not in name:
                    continue
                print(f"{name} ({args.clients} clients, {args.seconds:g} s, {len(query):,} characters):")
                attack(url, key, query, FACETS.get(name), args.seconds, args.clients)


if __name__ == "__main__":
    main()
