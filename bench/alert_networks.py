"""Matching collected banners against an alert of 100,000 networks (issue 34, minor 10).

    python bench/alert_networks.py [--networks 100000] [--batch 100] [--repeat 5]

One account's alert watches NETWORKS single addresses (the enterprise plan allows 131,072);
another's watches one /24. For a batch of BATCH banners (half in the /24, half elsewhere) it
prints, in process, the median over REPEAT runs of:
- before: what each batch did until the engine kept a structure (read every alert, parse its
  networks, test each banner against each network);
- after: the batch's lookup now; building the structure at start, and again after a change of
  another alert (the big alert's networks are not parsed again); and the engine's whole pass over
  the batch (lookup, trigger matching, queueing).
"""

from __future__ import annotations

import argparse
import ipaddress
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from spyglass.coverage import Coverage
from spyglass.server.alerts.delivery import DeliveryWorker
from spyglass.server.alerts.engine import AlertEngine
from spyglass.server.collect import Collected
from spyglass.server.state.sqlite.alerts import AlertStore


def median_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--networks", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(34)
    with tempfile.TemporaryDirectory() as work:
        store = AlertStore(Path(work))
        big_space = ipaddress.ip_network("10.0.0.0/8")
        picked = rng.sample(range(big_space.num_addresses), args.networks)
        big = store.create_alert(1, "big", [ipaddress.ip_network(big_space[i]) for i in picked], 0)
        small = store.create_alert(2, "small", [ipaddress.ip_network("192.0.2.0/24")], 0)
        for account, alert in ((1, big), (2, small)):
            store.set_triggers(alert.id, ["any"], True)
            notifier = store.create_notifier(account, "webhook", None, {"url": "http://127.0.0.1:9/"})
            store.set_attached(alert.id, notifier, True)
        addresses = [ipaddress.ip_address(f"192.0.2.{i % 256}") for i in range(args.batch // 2)]
        addresses += [ipaddress.ip_address(f"198.18.{rng.randrange(256)}.{rng.randrange(256)}") for _ in addresses]
        stamp = iter(range(10**9))

        def before() -> None:
            live = [(a, list(a.parsed_networks().values())) for a in store.alerts()]
            for address in addresses:
                [a for a, networks in live if any(address in n for n in networks)]

        live = [(a, list(a.parsed_networks().values())) for a in store.alerts()]
        coverage = Coverage(((a, a.expiration()), networks) for a, networks in live)

        def after() -> None:
            store.version()
            for address in addresses:
                coverage.covering(address)

        def first_build() -> None:  # a new engine: every alert's networks parsed
            AlertEngine(store, DeliveryWorker(store)).process([])

        engine = AlertEngine(store, DeliveryWorker(store))
        engine.process([])
        enabled = iter(range(10**9))

        def rebuild() -> None:  # another account's change: the big alert is not parsed again
            store.set_triggers(small.id, ["malware"], next(enabled) % 2 == 0)
            engine.process([])

        def whole_pass() -> None:  # new timestamps: new events, queued as a real batch's would be
            t = f"2026-11-20T10:00:00.{next(stamp):06d}"
            engine.process([Collected({"ip_str": str(a), "port": 80, "transport": "tcp", "timestamp": t}, False, "x")
                            for a in addresses])  # fmt: skip

        print(f"alert of {args.networks:,} networks, batch of {len(addresses)} banners, median of {args.repeat} (ms)")
        rows = [
            ("before: each batch reads, parses and tests every network", before),
            ("after: the batch's lookup (the alerts' version, one bisection a banner)", after),
            ("after: structure built at start (every network parsed)", first_build),
            ("after: structure built again after another alert's change", rebuild),
            ("after: the engine's whole pass over the batch, queueing included", whole_pass),
        ]
        for label, run in rows:
            print(f"  {label:<75} {median_ms(run, args.repeat):10.3f}")
        store.close()


if __name__ == "__main__":
    main()
