"""Producing the bulk data files: the first pass over an index (catalogue every banner, write every
daily and monthly file), a pass after one new banner (its day and month rebuilt), and a listing.

    python bench/datasets.py [--count 20000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from spyglass.datagen import generate
from spyglass.server.datasets import DatasetService
from spyglass.server.index import BannerIndex
from spyglass.server.ingest.importer import import_banners


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder)
        index = BannerIndex(data)
        banners = list(generate(args.count, seed=1))
        import_banners(index, (dict(b) for b in banners))
        service = DatasetService(data, index)

        start = time.perf_counter()
        service.catch_up()
        first = time.perf_counter() - start
        files = {name: service.files(name) for name in ("daily", "monthly")}
        size = sum(f.size for fs in files.values() for f in fs)

        new = {**banners[0], "timestamp": "2026-06-15T12:00:00.000000", "hash": 1}
        import_banners(index, [new])
        start = time.perf_counter()
        service.catch_up()
        again = time.perf_counter() - start

        start = time.perf_counter()
        for _ in range(100):
            service.files("daily")
        listing = (time.perf_counter() - start) / 100
        print(f"banners: {args.count:,}")
        print(f"first pass: {first:.2f} s for {len(files['daily'])} daily + {len(files['monthly'])} monthly files")
        print(f"  ({size / 1e6:.1f} MB gzip, {args.count / first:,.0f} banners/s, each banner written twice)")
        print(f"one new banner: {again * 1000:.0f} ms (its day and its month rebuilt)")
        print(f"listing the daily files: {listing * 1000:.2f} ms")
        service.close()
        index.close()


if __name__ == "__main__":
    main()
