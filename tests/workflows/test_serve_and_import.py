"""``spyglass serve`` and ``spyglass import`` on one data dir, as users run them (processes): the
first import into a fresh served data dir trains the bodies' dictionary; every worker of the
running backend must read what it wrote without a restart, and go on collecting."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
import time

import httpx
import pytest

from tests.contract.test_guard import serve
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes


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


@pytest.mark.timeout(900)  # 8 imports and a backend on a busy 2-core machine
def test_eight_imports_beside_a_collecting_backend_all_load_and_are_searchable_through_it(tmp_path):
    """The README's flow, as processes: a backend that collects 50 banners a second, and 8 ``spyglass
    import`` at once into its data dir (more writers than shards on a small machine: some wait their
    turn). Every import exits 0 having loaded its whole file, and search through the backend sees
    exactly one current banner per service of every file and of what was collected."""
    data = tmp_path / "data"
    key = spyglass("keys", "create", "--data", str(data), "--plan", "enterprise", "--collector").stdout.strip()
    dumps = [tmp_path / f"part-{n}.json.gz" for n in range(8)]
    for n, dump in enumerate(dumps):
        spyglass("generate", "--count", "1500", "--seed", str(100 + n), "-o", str(dump))
    services: set[tuple] = set()
    for dump in dumps:
        with gzip.open(dump) as fh:
            services |= {(b["ip_str"], b["port"], b["transport"]) for b in map(json.loads, fh)}
    collected: list[dict] = []
    stop = threading.Event()
    with serve(data) as url:

        def collect() -> None:  # 50 a second, in batches of 5, until the imports are done
            n = 0
            while not stop.is_set():
                batch = [
                    {
                        "ip_str": f"198.19.{n // 250}.{n % 250}",
                        "port": 7000 + i,
                        "transport": "tcp",
                        "timestamp": "2026-01-02T03:04:05",
                        "data": "collected",
                    }
                    for i in range(5)
                ]
                answer = httpx.post(
                    f"{url}/spyglass/collect",
                    params={"key": key},
                    content="\n".join(map(json.dumps, batch)),
                    timeout=60,
                )
                assert answer.status_code == 200 and answer.json()["collected"] == 5, answer.text
                collected.extend(batch)
                n += 1
                time.sleep(0.1)

        collector = threading.Thread(target=collect, daemon=True)
        collector.start()
        deadline = time.monotonic() + 60
        while len(collected) < 25 and time.monotonic() < deadline:  # collecting before the imports start
            time.sleep(0.05)
        imports = [
            subprocess.Popen(
                [sys.executable, "-m", "spyglass", "import", "--data", str(data), str(dump)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for dump in dumps
        ]
        outcomes = [(p.wait(timeout=600), p.communicate()[1]) for p in imports]
        stop.set()
        collector.join(60)
        for status, said in outcomes:
            assert status == 0, said
            assert "1,500 read" in said and " 0 bad" in said, said
        assert collected and collector.is_alive() is False
        wanted = len(services) + len({(b["ip_str"], b["port"]) for b in collected})
        deadline, total = time.monotonic() + 60, None
        while time.monotonic() < deadline:  # the last demotions applied by the collector's writer
            answer = httpx.get(f"{url}/intel/host/count", params={"key": key, "query": "net:198.18.0.0/15"}, timeout=60)
            assert answer.status_code == 200, answer.text
            if (total := answer.json()["total"]) == wanted:
                break
            time.sleep(0.5)
        assert total == wanted
        for dump in dumps:  # and each file's banners by address
            with gzip.open(dump) as fh:
                banner = json.loads(fh.readline())
            host = httpx.get(f"{url}/intel/host/{banner['ip_str']}", params={"key": key, "history": "true"}, timeout=60)
            assert host.status_code == 200 and banner["port"] in host.json()["ports"], host.text
