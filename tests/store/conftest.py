"""The stores the contract runs against: each is a function that opens a store on a folder
(opening it again on the same folder is a restart). The ClickHouse stores run on real servers on
loopback (spyglass.testing.clickhouse), one per test session (per xdist worker), a database per test."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from spyglass.server.banners.store import BannerStore
from spyglass.server.clickhouse import ClickHouseStore
from spyglass.server.index import BannerIndex
from spyglass.testing.clickhouse import ClickHouseCluster, ClickHouseServer, CurrentEngine, current_engine_store
from tests.servers import installed

OpenStore = Callable[[], BannerStore]


def database(folder: Path) -> str:
    """A database of its own for each test's folder (the same one when the test opens it again)."""
    return "t_" + hashlib.sha1(str(folder).encode()).hexdigest()[:16]


class ShardedIndex(BannerIndex):
    """The embedded store with each writer on the next of three shards, as when imports and a
    collector write at once: every read merges what the shards answer."""

    turn = 0

    def writing(self, *args, **kwargs):
        ShardedIndex.turn += 1
        return super().writing(*args, shard=ShardedIndex.turn % 3, **kwargs)


STORES: dict[str, Callable[[pytest.FixtureRequest, Path], BannerStore]] = {
    "embedded": lambda request, folder: BannerIndex(folder),
    "embedded-shards": lambda request, folder: ShardedIndex(folder),
    "clickhouse": lambda request, folder: ClickHouseStore(
        request.getfixturevalue("clickhouse_server").address(database(folder))
    ),
    "clickhouse-cluster": lambda request, folder: ClickHouseStore(
        request.getfixturevalue("clickhouse_cluster").address(database(folder))
    ),
    # the same statements on today's ClickHouse (26.x, in process): text indexes there
    "clickhouse-current": lambda request, folder: current_engine_store(
        request.getfixturevalue("current_engine"), database(folder)
    ),
}


@pytest.fixture(scope="session")
def clickhouse_server(tmp_path_factory) -> ClickHouseServer:
    with installed():
        server = ClickHouseServer(tmp_path_factory.mktemp("clickhouse")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def current_engine(tmp_path_factory) -> CurrentEngine:
    with installed():
        return CurrentEngine(tmp_path_factory.mktemp("clickhouse-current"))


@pytest.fixture(scope="session")
def clickhouse_cluster(tmp_path_factory) -> ClickHouseCluster:
    with installed():
        cluster = ClickHouseCluster(tmp_path_factory.mktemp("clickhouse-cluster"), shards=2).start()
    yield cluster
    cluster.stop()


@pytest.fixture(params=sorted(STORES))
def open_store(request, tmp_path) -> OpenStore:
    """Opens the store of this test (the same data every time); closes what it opened."""
    opened: list[BannerStore] = []

    def open_() -> BannerStore:
        store = STORES[request.param](request, tmp_path)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store) -> BannerStore:
    return open_store()
