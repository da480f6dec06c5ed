"""The collector: banners the backend newly collects are stored once, batched, and told to
listeners with whether their service is new."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import pytest

from spyglass.datagen import generate
from spyglass.query import parse_facets, parse_strict
from spyglass.server.banners.shape import normalize
from spyglass.server.collect import Collected, Collector
from spyglass.server.index import BannerIndex


def banner(ip: str, port: int, stamp: str, data: str = "x") -> dict:
    return {"ip_str": ip, "port": port, "transport": "tcp", "timestamp": stamp, "data": data}


@asynccontextmanager
async def running(index: BannerIndex, apart: bool = False) -> AsyncIterator[Collector]:
    """A collector of ``index`` started for the block (apart: with its writer process), stopped after."""
    collector = Collector(index, apart=apart)
    await collector.start()
    try:
        yield collector
    finally:
        await collector.stop()


# apart: prepared and written by the collector's writer process (ingest/collecting.py), as serve does
HERE_OR_APART = pytest.mark.parametrize("apart", [False, pytest.param(True, marks=pytest.mark.external)])


@HERE_OR_APART
async def test_collect_stores_publishes_new_ones_and_flags_new_services(tmp_path, apart):
    index = BannerIndex(tmp_path)
    heard: list[list[Collected]] = []
    collector = Collector(index, apart=apart)
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


async def test_a_flush_that_outlasts_the_pause_is_followed_at_once(tmp_path, monkeypatch):
    """Flushes start FLUSH_EVERY apart, not FLUSH_EVERY after the last ended: under load (8
    collectors, a flush of a second) the pause after each left the writer idle a fifth of the time."""
    from spyglass.server import collect as module

    index = BannerIndex(tmp_path)
    collector = Collector(index)
    store = collector._store_pending
    release = asyncio.Event()
    flushes: list[int] = []
    pauses: list[float] = []

    def slow_store(batch):  # the first flush lasts past the pause, until the test lets it end
        flushes.append(sum(len(item.banners) for item in batch))
        if len(flushes) == 1:
            asyncio.run_coroutine_threadsafe(release.wait(), loop).result(30)
        return store(batch)

    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        if sys._getframe(1).f_code is Collector._run.__code__:  # the collector's pauses alone (the
            pauses.append(seconds)  # patch is asyncio's: other tasks of the process sleep too)
        await real_sleep(seconds)

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(collector, "_store_pending", slow_store)
    monkeypatch.setattr(module.asyncio, "sleep", sleep)
    await collector.start()
    try:
        first = asyncio.create_task(collector.collect(list(generate(3, seed=1)), "demo"))
        while not flushes:
            await real_sleep(0.01)
        started = loop.time()
        second = asyncio.create_task(collector.collect(list(generate(2, seed=2)), "demo"))
        while loop.time() < started + module.FLUSH_EVERY:  # the first flush outlasts the pause
            await real_sleep(0.01)
        release.set()
        assert [len(c) for c in await asyncio.gather(first, second)] == [3, 2]
    finally:
        await collector.stop()
    assert flushes == [3, 2] and pauses == []
    index.close()


@HERE_OR_APART
async def test_a_private_scan_result_of_a_known_address_and_port_is_no_new_service(tmp_path, apart):
    """An account's scan of a port already in the index (an import's banner) is of a service of
    its own (keys.py), but not a new one: its alerts' new_service said so (newcomer trial 22)."""
    from spyglass.server.scanner.private import mark

    def scanned(ip: str, port: int, stamp: str = "2026-11-30T17:30:00.000000") -> dict:
        return mark({**banner(ip, port, stamp), "_intel": {"options": {}}}, 7)

    index = BannerIndex(tmp_path)
    with index.writing() as writer:  # as an import stores it
        writer.add([index.prepare(banner("127.0.0.4", 18095, "2026-11-30T17:00:00.000000"))])
    async with running(index, apart) as collector:
        known = await collector.collect([scanned("127.0.0.4", 18095)], "scan")
        unknown = await collector.collect([scanned("127.0.0.4", 18096)], "scan")
        again = await collector.collect([scanned("127.0.0.4", 18096, "2026-11-30T17:45:00.000000")], "scan")
    assert [c.new_service for c in known] == [False]  # (was: True)
    assert [c.new_service for c in unknown] == [True]
    assert [c.new_service for c in again] == [False]
    index.close()


def test_a_running_backend_collects_from_another_thread(tmp_path):
    from tests.conftest import start_backend

    server, backend = start_backend(tmp_path)
    with server:
        first = backend.collect([banner("127.0.0.9", 25, "2026-11-01T00:00:00.000000")])
        assert [(c.banner["port"], c.new_service, c.source) for c in first] == [(25, True, "test")]
        assert backend.collect([banner("127.0.0.9", 25, "2026-11-01T00:00:00.000000")]) == []
    backend.store.close()


@pytest.mark.external
async def test_a_killed_writer_process_is_started_again_and_loses_nothing(tmp_path):
    index = BannerIndex(tmp_path)
    async with running(index, apart=True) as collector:
        banners = list(generate(60, seed=4))
        first = await collector.collect(banners[:50], "demo")
        assert collector._writer is not None and collector._writer._process is not None
        os.kill(collector._writer._process.pid, signal.SIGKILL)
        collector._writer._process.join()
        second = await collector.collect(banners[50:], "demo")
        future = banner("127.0.0.7", 80, f"{datetime.now(UTC).year + 1}-01-01T00:00:00.000000")
        refused: list[tuple[int, str]] = []
        assert await collector.collect([future], "replay", refused) == []
    assert (len(first), len(second)) == (50, 10)
    assert refused and "in the future" in refused[0][1]
    total, _, _ = index.search(parse_strict("-port:0"), parse_facets(""))
    services = {normalize(b)[:3] for b in banners}
    assert total == len(services)  # searchable in this process as soon as collect returned
    index.close()


@pytest.mark.external
async def test_the_writer_process_keeps_its_shard_while_batches_come_and_lets_it_go_after(tmp_path):
    from spyglass.server.index.shards import ShardsBusy
    from spyglass.server.index.store import WRITER_HEAP
    from spyglass.server.ingest.collecting import LET_GO_AFTER

    index = BannerIndex(tmp_path)
    async with running(index, apart=True) as collector:
        banners = list(generate(30, seed=5))
        for i in range(0, 30, 10):  # each batch searchable in this process as soon as collect returned
            await collector.collect(banners[i : i + 10], "demo")
            total, _, _ = index.search(parse_strict("-port:0"), parse_facets(""))
            assert total == len({normalize(b)[:3] for b in banners[: i + 10]})
        with pytest.raises(ShardsBusy):  # held between batches
            index.shards.take(0, WRITER_HEAP, 1, 0)
        deadline = time.monotonic() + 60 + LET_GO_AFTER  # a guard against a hang, not a measure
        while True:  # let go once no batch came for LET_GO_AFTER
            try:
                _, writer = index.shards.take(0, WRITER_HEAP, 1, 0)
                break
            except ShardsBusy:
                assert time.monotonic() < deadline, "the writer process never let its shard go"
                await asyncio.sleep(0.1)
        writer.wait_merging_threads()
        again = await collector.collect(list(generate(40, seed=6))[30:], "demo")  # it takes one again
        assert len(again) == 10
    index.close()
