"""Free text on ClickHouse with and without a text index, in one run on the same generated banners:
Debian's clickhouse-server 18.16 (no such index: the text of every row is matched) beside today's
ClickHouse (26.9, in process through chdb, a test dependency), on which the store makes its tables
with a text index of the free text's words.

    python bench/clickhouse_current.py [--count 1000000] [--work DIR] [--repeat 30]

Both are timed in process, through the store's own calls (chdb serves no protocol a backend could
reach): a count, a search page (both of the current banners) and trends (every banner, history
too), for the index bench's free text queries and for words that few banners hold. Both stores'
tables are merged into one part a partition first. chdb answers through Arrow in this process, one
statement at a time (spyglass.testing.clickhouse), which costs a search page more than a count. Import
rates are printed, not compared: 26.9 takes its rows from files, not over HTTP.
"""

from __future__ import annotations

import gzip
import shutil
import sys
import time
from functools import partial
from pathlib import Path

import orjson
from clickhouse import DATABASE, merged, p  # bench/clickhouse.py
from index import FREE_TEXT, arguments, dataset, timed  # bench/index.py

from spyglass.query import parse_strict
from spyglass.server.clickhouse import ClickHouseStore
from spyglass.server.ingest.importer import import_files
from spyglass.testing.clickhouse import ClickHouseServer, CurrentEngine, current_engine_store

# what is timed: the store's method of each (trends: by month over every banner, history too)
MEASURES = {"count": "count", "search page": "search_bodies", "trends": "trends"}


def rare_words(source: Path, count: int, how_many: int = 4) -> list[str]:
    """Words of a few hostnames spread through the file: each held by few banners."""
    found: list[str] = []
    with gzip.open(source) as lines:
        for i, line in enumerate(lines):
            if i % (count // (2 * how_many)) == 1234:
                names = orjson.loads(line).get("hostnames") or []
                if names and isinstance(names[0], str):
                    found.append(names[0].split(".")[0])
            if len(found) == how_many:
                break
    return found


def imported(store: ClickHouseStore, source: Path) -> float:
    started = time.perf_counter()
    report = import_files(store, [source])
    return report.added / (time.perf_counter() - started)


def _ask(call, query: str) -> None:
    call(parse_strict(query), [])


def latencies(store: ClickHouseStore, queries: list[str], repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for name, method in MEASURES.items():
        ask = partial(_ask, getattr(store, method))
        timed(ask, len(queries), queries)  # warm each query once
        out[name] = timed(ask, repeat, queries)
    return out


def main() -> None:
    args = arguments(repeat=30)
    source = dataset(args.work, args.count)
    folder = args.work / "clickhouse-current"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    trends_text = [q for q in FREE_TEXT if "after:" not in q]  # the trends host has no date filters
    sets = {"free text + filters": trends_text, "rare words": rare_words(source, args.count)}
    print(f"rare words: {sets['rare words']}")
    server = ClickHouseServer(folder / "server").start()
    try:
        new = current_engine_store(CurrentEngine(folder), DATABASE)
        stores = {"ClickHouse 18.16": ClickHouseStore(server.address(DATABASE)), "ClickHouse 26.9 (chdb)": new}
        rates = {name: imported(store, source) for name, store in stores.items()}
        merged([server])
        for table in ("banners", "current", "bodies"):
            new.connection.execute(f"OPTIMIZE TABLE {DATABASE}.{table} FINAL")
        for words, queries in sets.items():
            totals = {name: [store.count(parse_strict(q), [])[0] for q in queries] for name, store in stores.items()}
            if len({tuple(t) for t in totals.values()}) != 1:
                sys.exit(f"the stores found different banners for {words}, so their figures compare nothing: {totals}")
            print(f"\n{words}: {queries}, found {next(iter(totals.values()))}")
            timings = {name: latencies(store, queries, args.repeat) for name, store in stores.items()}
            for measure in MEASURES:
                cells = []
                for name, of in timings.items():
                    cells.append(f"{name} p50 {p(of[measure], 0.5):7.1f} ms p95 {p(of[measure], 0.95):7.1f} ms")
                old_p50, new_p50 = (p(of[measure], 0.5) for of in timings.values())
                ratio = new_p50 / old_p50
                print(f"  {measure:12} " + "   ".join(cells) + f"   ({ratio:.2f}x)")
        print("\nimport, banners/s (not like for like): " + ", ".join(f"{n} {r:,.0f}" for n, r in rates.items()))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
