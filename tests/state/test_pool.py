"""One backend's connections to the PostgreSQL state: every part of the state (accounts, alerts,
scans, the directory) shares one pool, so a backend under load holds at most its size."""

from __future__ import annotations

import asyncio
import threading

import httpx
import psycopg

from spyglass.server.postgres import PostgresAccounts
from spyglass.server.postgres.connect import POOL_SIZE
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
    """How many connections the test's database has, as often as PostgreSQL answers, until ``done``."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        while not done.wait(0.01):
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)).fetchone()
            counts.append(row[0] if row else 0)


async def _load(url: str, key: str) -> list[int]:
    async def client(offset: int) -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            out = []
            for i in range(EACH):
                path, params = PATHS[(offset + i) % len(PATHS)]
                out.append((await http.get(path, params={"key": key, **params})).status_code)
            return out

    results = await asyncio.gather(*(client(i) for i in range(CLIENTS)))
    return [status for statuses in results for status in statuses]
