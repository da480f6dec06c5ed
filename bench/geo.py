"""A geo form over 5 agents on loopback where one answers slowly: the total time against the
slowest single location. Goal: within the slowest + 50 ms.

Agents listen on 127.0.0.2-6; the slow one pings 8 times instead of 3.

    python bench/geo.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import ExitStack

import httpx

from spyglass.models import GeoLocation
from spyglass.server.geonet import GeonetSettings
from spyglass.server.routers.geonet import create_geonet_app
from spyglass.testing.backend import ThreadedServer

PLACES = [
    ("Berlin", "DE", "52.52,13.405"),
    ("Tokyo", "JP", "35.6895,139.6917"),
    ("Lima", "PE", "-12.0432,-77.0282"),
    ("Nairobi", "KE", "-1.2864,36.8172"),
    ("Sydney", "AU", "-33.8688,151.2093"),
]


def timed_get(url: str) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = httpx.get(url, timeout=30)
    return time.perf_counter() - started, response


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with ExitStack() as stack:
        peers = []
        for index, (city, country, latlon) in enumerate(PLACES[1:], start=3):
            settings = GeonetSettings(
                location=GeoLocation(city=city, country=country, latlon=latlon), ping_count=8 if city == "Sydney" else 3
            )
            peers.append(stack.enter_context(ThreadedServer(create_geonet_app(settings), host=f"127.0.0.{index}")))
        city, country, latlon = PLACES[0]
        front = stack.enter_context(
            ThreadedServer(
                create_geonet_app(
                    GeonetSettings(
                        location=GeoLocation(city=city, country=country, latlon=latlon),
                        peers=[p.url for p in peers],
                        deadline=10.0,
                    )
                ),
                host="127.0.0.2",
            )
        )
        slowest, totals, overheads = [], [], []
        for _ in range(args.runs):
            singles = [timed_get(f"{agent.url}/api/ping/127.0.0.1")[0] for agent in [front, *peers]]
            total, response = timed_get(f"{front.url}/api/geoping/127.0.0.1")
            assert response.status_code == 200 and len(response.json()) == 5, response.text
            slowest.append(max(singles))
            totals.append(total)
            overheads.append(total - max(singles))
    print(f"slowest single location  median {statistics.median(slowest) * 1000:8.1f} ms")
    print(f"geo form over 5 agents   median {statistics.median(totals) * 1000:8.1f} ms")
    print(
        f"overhead over the slowest median {statistics.median(overheads) * 1000:7.1f} ms, "
        f"max {max(overheads) * 1000:.1f} ms  (goal <= 50 ms, {args.runs} runs)"
    )


if __name__ == "__main__":
    main()
