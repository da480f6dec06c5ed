"""``spyglass serve`` and ``spyglass import`` on one data dir, as users run them (processes): the
first import into a fresh served data dir trains the bodies' dictionary; every worker of the
running backend must read what it wrote without a restart, and go on collecting."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from tests.contract.test_guard import serve
from tests.workflows.commands import spyglass


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_import_into_a_served_data_dir_is_searchable_at_once(tmp_path, workers):
    data, dump = tmp_path / "data", tmp_path / "banners.json.gz"
    spyglass("generate", "--count", "3000", "--seed", "5", "-o", str(dump))
    key = spyglass("keys", "create", "--data", str(data), "--plan", "enterprise", "--collector").stdout.strip()
    with serve(data, "--workers", workers) as url:
        spyglass("import", "--data", str(data), str(dump))
        assert (data / "banners.db").exists()
        deadline, found = time.monotonic() + 30, None
        while time.monotonic() < deadline:  # "every worker sees new banners within a second"
            answers = [httpx.get(f"{url}/intel/host/search", params={"key": key, "query": "port:22"}) for _ in range(6)]
            if all(a.status_code == 200 and a.json()["total"] for a in answers):
                found = answers[0].json()
                break
            assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
            time.sleep(0.5)
        assert found is not None and found["matches"], "the import never showed in search"
        host = found["matches"][0]["ip_str"]
        assert httpx.get(f"{url}/intel/host/{host}", params={"key": key}).status_code == 200
        banner = {"ip_str": "198.18.7.7", "port": 2222, "transport": "tcp", "timestamp": "2026-01-02T03:04:05"}
        collected = httpx.post(f"{url}/spyglass/collect", params={"key": key}, content=json.dumps(banner))
        assert collected.status_code == 200, collected.text
        assert collected.json()["collected"] == 1
