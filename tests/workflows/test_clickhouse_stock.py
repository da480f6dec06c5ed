"""``spyglass import --store`` and ``spyglass serve --store`` on a ClickHouse server with its stock
profile, as processes, at the size the issue was seen (200,000 banners into a store that holds
some already): no statement may depend on a server setting being raised (max_query_size is
256 KiB there, and the lookups' lists of 20-digit values outgrew it)."""

from __future__ import annotations

import json

import httpx
import pytest

from spyglass.testing.backend import serve
from spyglass.testing.clickhouse import ClickHouseServer
from tests.servers import installed
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes


@pytest.mark.timeout(1200)  # 200,000 banners into ClickHouse on a busy 2-core machine
def test_import_and_serve_on_a_stock_clickhouse_server(tmp_path):
    with installed():
        server = ClickHouseServer(tmp_path / "clickhouse").start()
    try:
        assert server.query("SELECT value FROM system.settings WHERE name = 'max_query_size'") == [("262144",)]
        store = server.address("stock")
        small, big = tmp_path / "small.json.gz", tmp_path / "big.json.gz"
        spyglass("generate", "--count", "1000", "--seed", "3", "-o", str(small))
        spyglass("generate", "--count", "200000", "--seed", "11", "-o", str(big))
        embedded, data = tmp_path / "embedded", tmp_path / "data"
        spyglass("import", "--data", str(embedded), str(small))  # an embedded data dir moved to ClickHouse
        assert "1,000" in spyglass("store", "copy", "--data", str(embedded), "--store", store).stderr
        imported = spyglass("import", "--store", store, "--data", str(data), str(big), timeout=None)
        assert "200,000 new" in imported.stderr  # (minutes at load 15 on 2 cores: no limit of its own)
        spyglass("store", "init", "--store", store)  # reconciles what is there: nothing to put right
        key = spyglass("keys", "create", "--data", str(data), "--plan", "enterprise", "--collector").stdout.strip()
        with serve(data, "--store", store) as url:
            count = httpx.get(f"{url}/intel/host/count", params={"key": key, "query": "port:22"}, timeout=30)
            assert count.status_code == 200 and count.json()["total"] > 0, count.text
            banner = {"ip_str": "198.18.9.9", "port": 2222, "transport": "tcp", "timestamp": "2026-01-02T03:04:05"}
            collected = httpx.post(
                f"{url}/spyglass/collect", params={"key": key}, content=json.dumps(banner), timeout=30
            )
            assert collected.status_code == 200 and collected.json()["collected"] == 1, collected.text
    finally:
        server.stop()
