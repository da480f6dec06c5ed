"""docs/several-machines.md followed as an operator follows it, as processes: one PostgreSQL and
one ClickHouse (started here, on loopback), ``state init``, an embedded backend moved over with
``state copy``, two ``serve`` processes over both, and keys from either side working on each."""

from __future__ import annotations

import httpx
import pytest

from spyglass.testing.backend import serve
from spyglass.testing.clickhouse import ClickHouseServer
from spyglass.testing.postgres import PostgresServer
from tests.servers import installed
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes


def info(url: str, key: str) -> dict:
    answer = httpx.get(f"{url}/api-info", params={"key": key}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_two_backends_over_one_postgresql_and_one_clickhouse(tmp_path):
    with installed():
        postgres = PostgresServer().start()
        clickhouse = ClickHouseServer(tmp_path / "clickhouse").start()
    try:
        state, store = postgres.create_database("spyglass"), clickhouse.address("intel")
        spyglass("state", "init", "--state", state)
        embedded = tmp_path / "embedded"  # a backend that ran embedded until now, with a key given out
        old_key = spyglass("keys", "create", "--data", str(embedded), "--plan", "member").stdout.strip()
        spyglass("state", "copy", "--from", str(embedded), "--state", state)
        new_key = spyglass("keys", "create", "--state", state, "--plan", "member").stdout.strip()
        shared = ("--store", store, "--state", state)
        with serve(tmp_path / "a", *shared) as a, serve(tmp_path / "b", *shared) as b:
            for key in (old_key, new_key):
                assert info(a, key) == info(b, key)  # one account, seen alike by both
            before = info(b, new_key)["query_credits"]
            search = httpx.get(f"{a}/intel/host/search", params={"key": new_key, "query": "port:22"}, timeout=30)
            assert search.status_code == 200, search.text
            assert info(b, new_key)["query_credits"] == before - 1  # spent on A, one balance on B
    finally:
        postgres.remove()
        clickhouse.stop()
