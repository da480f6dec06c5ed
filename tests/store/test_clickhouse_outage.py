"""A ClickHouse server that goes away under a running backend: the API says so (503, Retry-After,
the store named, not its address) rather than a bare 500, costs nothing, logs a line per kind of
failure rather than per request, and answers again once the server is back."""

from __future__ import annotations

import logging

import httpx
import pytest

from spyglass.testing.backend import start_backend
from spyglass.testing.clickhouse import ClickHouseServer
from tests.servers import installed
from tests.store.conftest import database

pytestmark = pytest.mark.external  # a ClickHouse server stopped and started

BANNER = {"ip_str": "198.18.9.1", "port": 443, "transport": "tcp", "timestamp": "2026-01-05T00:00:00"}


def test_a_store_outage_answers_503_with_retry_after_and_the_backend_recovers(tmp_path, caplog):
    with installed():
        clickhouse = ClickHouseServer(tmp_path / "clickhouse").start()  # its own: this test stops it
    try:
        server, backend = start_backend(tmp_path / "data", store=clickhouse.address(database(tmp_path)))
        with server:
            backend.collect([BANNER])
            key = backend.key()

            def search() -> httpx.Response:
                return httpx.get(f"{backend.url}/intel/host/search", params={"key": key, "query": "port:443"})

            assert search().json()["total"] == 1

            def credits() -> int:
                return backend.store.account_for_key(key).query_credits

            before = credits()
            clickhouse.stop()
            down = search()
            assert down.status_code == 503, down.text
            assert int(down.headers["retry-after"]) >= 1
            message = down.json()["error"]  # the store named, nothing of its address or the driver's words
            assert message == "Service unavailable: the banner store cannot be used now. Try again shortly"
            with caplog.at_level(logging.WARNING, logger="spyglass.server"):
                assert [search().status_code for _ in range(20)] == [503] * 20
            said = [r.getMessage() for r in caplog.records if "banner store" in r.getMessage()]
            assert 1 <= len(said) <= 2, said  # a line per kind of failure, not one per request
            assert f"clickhouse://127.0.0.1:{clickhouse.port}/" in said[0]  # the operator is told where
            assert credits() == before  # charged while the search ran, given back when it failed
            trends = httpx.get(f"{backend.url}/trends/api/v1/search", params={"key": key, "query": "port:443"})
            assert trends.status_code == 503 and "retry-after" in trends.headers  # the mounted hosts too
            clickhouse.start()  # on the same ports, its data kept
            back = search()
            assert back.status_code == 200 and back.json()["total"] == 1
            assert credits() == before - 1
        backend.store.close()
    finally:
        clickhouse.stop()
