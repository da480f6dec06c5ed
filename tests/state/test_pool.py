"""One backend's connections to the PostgreSQL state: every part of the state (accounts, alerts,
scans, the directory) shares one pool, so a backend under load holds at most its size."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import psycopg
import pytest

from spyglass.server.banners.store import StoreUnavailable
from spyglass.server.state.postgres import PostgresAccounts, connect
from spyglass.server.state.postgres.connect import POOL_SIZE, Pool
from spyglass.testing.postgres import PostgresServer
from tests.servers import installed
from tests.state.shared import ServeProcess

CLIENTS, EACH = 48, 6
# each part of the state, through the API: a charged search (accounts), alerts, the directory, scans
PATHS = [
    ("/intel/host/search", {"query": "port:22"}),
    ("/intel/alert/info", {}),
    ("/intel/query", {}),
    ("/intel/scans", {}),
]


def test_a_backend_under_load_holds_at_most_one_pool_of_connections(postgres_server, postgres_url, tmp_path):
    state = PostgresAccounts(postgres_url, tmp_path / "check")
    key = state.create_key("enterprise")
    state.close()
    database = postgres_url.rsplit("/", 1)[1]
    with ServeProcess(tmp_path / "a", None, postgres_url) as backend:
        counts: list[int] = []
        done = threading.Event()
        counter = threading.Thread(target=_count, args=(postgres_server.url(), database, counts, done))
        counter.start()
        try:
            statuses = asyncio.run(_load(backend.url, key))
        finally:
            done.set()
            counter.join()
    assert set(statuses) == {200}, statuses
    assert counts and 0 < max(counts) <= POOL_SIZE, max(counts)


def _count(admin_url: str, database: str, counts: list[int], done: threading.Event) -> None:
    """How many clients' connections the test's database has, as often as PostgreSQL answers, until
    ``done`` (not its autovacuum and parallel workers, which PostgreSQL lists beside them)."""
    sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND backend_type = 'client backend'"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        while not done.wait(0.01):
            row = conn.execute(sql, (database,)).fetchone()
            counts.append(row[0] if row else 0)


async def _load(url: str, key: str) -> list[int]:
    async def client(offset: int) -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            out = []
            for i in range(EACH):
                path, params = PATHS[(offset + i) % len(PATHS)]
                # past the plan's requests at once (429): sent again, as a client does after Retry-After
                while (answer := await http.get(path, params={"key": key, **params})).status_code == 429:
                    await asyncio.sleep(0.05)
                out.append(answer.status_code)
            return out

    results = await asyncio.gather(*(client(i) for i in range(CLIENTS)))
    return [status for statuses in results for status in statuses]


@pytest.mark.external
def test_connections_of_a_restarted_server_fail_one_request_not_one_each(tmp_path):
    with installed():
        server = PostgresServer().start()
    pool = Pool(server.url())
    try:
        together = threading.Barrier(4)

        def hold() -> None:
            with pool.connection() as conn:
                conn.execute("SELECT 1")
                together.wait(10)

        threads = [threading.Thread(target=hold) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        server.stop()
        server.start()  # on the same port: the pool's 4 idle connections are to the old server
        with pytest.raises(StoreUnavailable, match="the state at"):
            pool.one("SELECT 1")  # the first one meets a dropped connection: the idle ones are tested
        deadline = time.monotonic() + 10
        while connect._checking:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert [pool.one("SELECT 1 AS one")["one"] for _ in range(4)] == [1] * 4
    finally:
        pool.close()
        server.remove()
