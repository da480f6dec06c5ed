"""Load shedding that sheds only what it must (issue 35, item 5): successful search pages a second
with 5 facets from one worker at its in-flight limit in connections, and at twice the limit, in
one run, with wrk (which cuts its connections at the end of each run: requests abandoned in
flight). Goal: at twice the limit, successful throughput at least 85% of that at the limit.

    python bench/shedding.py [--count 300000] [--work DIR] [--seconds 10] [--limit 64]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import httpx
from index import FACETS5, SEARCHES, funded_key, serve  # bench/index.py
from workers import data_dir, load  # bench/workers.py


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=300_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "spyglass-bench")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--limit", type=int, default=64, help="the server's --max-in-flight")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    data = data_dir(args.work, args.count)
    key = funded_key(data)
    paths = [f"/intel/host/search?{httpx.QueryParams({'key': key, 'query': q, 'facets': FACETS5})}" for q in SEARCHES]
    print(f"{args.count:,} banners, one worker, --max-in-flight {args.limit}, {args.seconds:g} s a load")
    rates = {}
    process, url = serve(data, 1, "", "--max-in-flight", str(args.limit))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            load(url, paths, args.limit, 2, Path(tmp), errors=True)  # warm; its end abandons requests
            for clients in (args.limit, 2 * args.limit, args.limit):
                rates[clients], p50 = load(url, paths, clients, args.seconds, Path(tmp), errors=True)
                print(f"{clients:4} connections: {rates[clients]:7,.0f} successful pages a second, p50 {p50}")
    finally:
        process.terminate()
        process.wait(30)
    ratio = rates[2 * args.limit] / rates[args.limit]
    print(f"at twice the limit: {ratio:.2f}x the successful throughput at the limit (goal >= 0.85)")


if __name__ == "__main__":
    main()
