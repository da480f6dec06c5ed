"""The collector: banners the backend newly collects are stored once, batched, and told to
listeners with whether their service is new."""

from __future__ import annotations

import asyncio

from spyglass.datagen import generate
from spyglass.query import parse_facets, parse_strict
from spyglass.server.collect import Collected, Collector
from spyglass.server.index import BannerIndex


def banner(ip: str, port: int, stamp: str, data: str = "x") -> dict:
    return {"ip_str": ip, "port": port, "transport": "tcp", "timestamp": stamp, "data": data}


async def test_collect_stores_publishes_new_ones_and_flags_new_services(tmp_path):
    index = BannerIndex(tmp_path)
    heard: list[list[Collected]] = []
    collector = Collector(index)
    collector.subscribe(heard.append)
    await collector.start()
    try:
        first, second = await asyncio.gather(
            collector.collect([banner("127.0.0.5", 80, "2026-11-01T00:00:00.000000")], "scan"),
            collector.collect(
                [
                    banner("127.0.0.5", 80, "2026-11-01T00:00:00.000000"),  # the same banner: not new
                    banner("127.0.0.5", 22, "2026-11-01T00:00:00.000000"),
                    {"port": 1},  # unreadable: skipped, not fatal
                ],
                "demo",
            ),
        )
        again = await collector.collect([banner("127.0.0.5", 80, "2026-11-02T00:00:00.000000", "y")], "scan")
    finally:
        await collector.stop()
    assert [(c.banner["port"], c.new_service, c.source) for c in first] == [(80, True, "scan")]
    assert [(c.banner["port"], c.new_service) for c in second] == [(22, True)]
    assert [(c.banner["data"], c.new_service) for c in again] == [("y", False)]
    assert len(heard) == 2  # one batch for the two concurrent calls, one for the last
    total, _, _ = index.search(parse_strict("net:127.0.0.5/32"), parse_facets(""))
    assert total == 2  # the current banner of each of the two services
    assert len(index.host("127.0.0.5")) == 3
    index.close()


async def test_a_broken_listener_does_not_stop_the_others(tmp_path):
    index = BannerIndex(tmp_path)
    heard: list[int] = []
    collector = Collector(index)

    def broken(_: list[Collected]) -> None:
        raise RuntimeError("boom")

    collector.subscribe(broken)
    collector.subscribe(lambda batch: heard.append(len(batch)))
    collected = await collector.collect(list(generate(10, seed=3)), "demo")  # not started: stores at once
    assert len(collected) == 10 and heard == [10]
    index.close()


def test_a_running_backend_collects_from_another_thread(tmp_path):
    from tests.conftest import start_backend

    server, backend = start_backend(tmp_path)
    with server:
        first = backend.collect([banner("127.0.0.9", 25, "2026-11-01T00:00:00.000000")])
        assert [(c.banner["port"], c.new_service, c.source) for c in first] == [(25, True, "test")]
        assert backend.collect([banner("127.0.0.9", 25, "2026-11-01T00:00:00.000000")]) == []
    backend.store.close()
