"""``POST /spyglass/collect`` as an attacker would use it: lines no store can hold are refused and
reported by line, never stored to fail the index, the next collects or the next start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from spyglass.server.ingest.importer import import_files
from tests.conftest import start_backend

ZONED = {"ip_str": "fe80::1%lo", "port": 53, "transport": "udp", "timestamp": "2026-01-01T00:00:00"}


@pytest.fixture(scope="module")
def served_collect(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("collect"))
    with server:
        yield backend.url, backend.key(collector=True)
    backend.store.close()


def good(n: int) -> dict:
    return {"ip_str": f"198.18.7.{n}", "port": 80, "transport": "tcp", "timestamp": "2026-01-01T00:00:00", "data": "x"}


def post(url: str, key: str, banners: list[dict]) -> httpx.Response:
    body = b"\n".join(json.dumps(b).encode() for b in banners)
    return httpx.post(f"{url}/spyglass/collect", params={"key": key}, content=body, timeout=30)


def test_a_zoned_address_is_refused_and_bricks_nothing(tmp_path):
    server, backend = start_backend(tmp_path)
    with server:
        answer = post(backend.url, backend.key(collector=True), [ZONED, good(1)])
        assert answer.status_code == 200, answer.text
        result = answer.json()
        assert (result["received"], result["collected"], result["bad"]) == (2, 1, 1)
        assert result["problems"][0].startswith("line 1: ") and "zone id" in result["problems"][0]
        other = post(backend.url, backend.key(collector=True), [good(2)])  # another account, the next batch
        assert other.status_code == 200 and other.json()["collected"] == 1
        host = httpx.get(f"{backend.url}/intel/host/fe80::1%25eth0", params={"key": backend.key()})
        assert host.status_code == 400 and "Invalid IP address" in host.json()["error"]
    backend.store.close()
    backend.app.state.banners.close()
    server, backend = start_backend(tmp_path)  # a restart serves what was collected
    with server:
        host = httpx.get(f"{backend.url}/intel/host/198.18.7.2", params={"key": backend.key()})
        assert host.status_code == 200 and host.json()["ports"] == [80]
    backend.store.close()
    backend.app.state.banners.close()


@pytest.mark.external
def test_import_reports_the_zoned_line(tmp_path):
    from spyglass.server.index import BannerIndex

    path = tmp_path / "zoned.json"
    path.write_text(json.dumps(good(3)) + "\n" + json.dumps(ZONED) + "\n")
    index = BannerIndex(tmp_path / "data")
    report = import_files(index, [path], workers=1)
    assert (report.added, report.bad) == (1, 1)
    assert report.problems[0].startswith("zoned.json:2: ") and "zone id" in report.problems[0]
    index.close()


def test_every_line_a_store_cannot_hold_is_reported_by_number(served_collect):
    url, key = served_collect
    soon = (datetime.now(UTC) + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S")
    later = (datetime.now(UTC) + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%S")
    lines = [
        {**good(10), "port": 70000},
        {**good(11), "port": 10**30},
        {**good(12), "timestamp": "0001-01-01T00:00:00"},
        {**good(13), "timestamp": "9999-12-31T23:59:59.999999"},
        {**good(14), "timestamp": "99999-01-01T00:00:00"},
        {**good(15), "timestamp": later},  # a forger's "current" banner for the future
        {**good(16), "timestamp": soon},  # a clock a little ahead: taken
        good(17),
    ]
    answer = post(url, key, lines)
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert (result["received"], result["collected"], result["bad"]) == (8, 2, 6)
    assert [p.split(":")[0] for p in result["problems"]] == [f"line {n}" for n in range(1, 7)]
    assert "port" in result["problems"][0] and "port" in result["problems"][1]
    assert all("timestamp" in p for p in result["problems"][2:6])
    assert "future" in result["problems"][5]


def test_a_banner_the_index_cannot_hold_is_set_aside_at_start(tmp_path, caplog):
    """A data dir an older release bricked (its records hold the zoned banner, ahead of the index):
    the backend starts, says so, and collects again."""
    from spyglass.server.banners.keys import keys
    from spyglass.server.banners.shape import Shape
    from spyglass.server.banners.store import Prepared
    from spyglass.server.index import BannerIndex
    from spyglass.server.index.records import RecordStore
    from spyglass.server.index.schema import document_tail

    BannerIndex(tmp_path).close()  # a data dir with its index
    shape = Shape("fe80::1%lo", 53, "udp", "2026-01-01T00:00:00Z", None)
    records = RecordStore(tmp_path / "banners.db")
    key, service = keys(ZONED, shape)
    records.add([Prepared(key, service, shape.stamp, json.dumps(ZONED).encode(), document_tail(ZONED, shape, service))])
    records.close()
    server, backend = start_backend(tmp_path)
    with server:
        assert "set aside" in caplog.text
        answer = post(backend.url, backend.key(collector=True), [good(20)])
        assert answer.status_code == 200 and answer.json()["collected"] == 1
    backend.store.close()
    backend.app.state.banners.close()


def test_only_a_key_given_the_collector_role_collects_and_its_banners_say_whose(tmp_path, capsys):
    from spyglass.cli import main

    assert main(["keys", "create", "--data", str(tmp_path), "--plan", "member", "--collector"]) == 0
    key = capsys.readouterr().out.strip()
    server, backend = start_backend(tmp_path)
    with server:
        refused = post(backend.url, backend.key("enterprise"), [good(30)])
        assert refused.status_code == 403 and "collector role" in refused.json()["error"]
        forged = {**good(31), "_intel": {"crawler": "c1", "collected_by": 999}}
        answer = post(backend.url, key, [forged, {**good(32), "_shodan": {"module": "http"}}])
        assert answer.status_code == 200 and answer.json()["collected"] == 2, answer.text
        who = backend.store.account_for_key(key).id
        stored = backend.app.state.banners.host("198.18.7.31")[0]
        assert stored["_intel"] == {"crawler": "c1", "collected_by": who}
        assert backend.app.state.banners.host("198.18.7.32")[0]["_shodan"] == {"module": "http", "collected_by": who}
        assert key not in json.dumps(stored)
        served = httpx.get(f"{backend.url}/intel/host/198.18.7.32", params={"key": key}).json()
        assert served["data"][0]["_intel"]["collected_by"] == who  # the operator (any caller) reads it
    backend.store.close()
    backend.app.state.banners.close()


@pytest.mark.external
def test_replay_names_the_lines_of_the_file_the_backend_refused(served_collect, tmp_path):
    url, key = served_collect
    path = tmp_path / "zoned.json"
    path.write_text(json.dumps(good(40)) + "\n\n" + json.dumps(ZONED) + "\n")
    env = {**os.environ, "SPYGLASS_URL": url, "SPYGLASS_API_KEY": key}
    done = subprocess.run(
        [sys.executable, "-m", "spyglass", "replay", str(path), "--json"], capture_output=True, text=True, env=env
    )
    out = json.loads(done.stdout)
    assert (out["received"], out["collected"], out["bad"]) == (2, 1, 1), done.stderr
    assert out["problems"][0].startswith("zoned.json:3: ") and "zone id" in out["problems"][0]
