"""generate, import and export as a script uses them."""

from __future__ import annotations

import csv
import gzip
import os
import subprocess
import sys

import orjson

from spyglass.cli import main
from spyglass.server.index import BannerIndex
from tests.conftest import backend_with


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spyglass", *args], capture_output=True, text=True, timeout=120,
                          env=os.environ)


def test_generate_is_deterministic_and_in_the_benchmark_range(tmp_path):
    a, b = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    assert run("generate", "--count", "500", "--seed", "9", "-o", str(a)).returncode == 0
    assert run("generate", "--count", "500", "--seed", "9", "-o", str(b)).returncode == 0
    assert gzip.decompress(a.read_bytes()) == gzip.decompress(b.read_bytes())
    banners = [orjson.loads(line) for line in gzip.decompress(a.read_bytes()).splitlines()]
    assert len(banners) == 500
    assert all(b["ip_str"].startswith(("198.18.", "198.19.")) for b in banners)
    stamps = sorted(b["timestamp"] for b in banners)
    assert stamps[0][:4] != stamps[-1][:4]  # spread over years
    assert {b["_intel"]["module"] for b in banners} >= {"http", "ssh"}


def test_import_reports_bad_lines_and_adds_no_duplicates(tmp_path):
    data = tmp_path / "data"
    source = tmp_path / "in.json"
    good = [orjson.dumps(b) for b in [{"ip_str": "198.18.0.1", "port": 80, "timestamp": "2026-01-01T00:00:00.000000",
                                       "data": "HTTP/1.1 200 OK", "hash": 1}]]
    source.write_bytes(good[0] + b"\n[1, 2\n" + good[0] + b"\n")
    first = run("import", "--data", str(data), str(source))
    assert first.returncode == 0, first.stderr
    assert "3 read, 1 new, 1 already there, 1 bad" in first.stderr
    assert "in.json:2: not JSON" in first.stderr
    again = run("import", "--data", str(data), str(source))
    assert "0 new, 2 already there" in again.stderr
    assert run("import", "--data", str(data), str(tmp_path / "missing.json")).returncode == 2


def test_export_resumes_after_a_failed_page(tmp_path, capsys, monkeypatch):
    from spyglass.datagen import generate

    out = tmp_path / "ssh.csv"
    with backend_with(tmp_path / "backend", generate(1500, seed=5)) as backend:  # ~340 current services
        key = backend.key("member")
        account = backend.store.account_for_key(key)
        backend.store.set_credits(account.id, query=2)  # enough for two pages, not all five
        monkeypatch.setenv("SPYGLASS_URL", backend.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", key)
        assert main(["export", "port:80,443,22,3389,25,3306,21,8080", "-o", str(out)]) == 3
        assert "Insufficient query credits" in capsys.readouterr().err
        assert (tmp_path / "ssh.csv.resume").exists()
        backend.store.set_credits(account.id, query=100)
        assert main(["export", "port:80,443,22,3389,25,3306,21,8080", "-o", str(out)]) == 0
        code = main(["count", "port:80,443,22,3389,25,3306,21,8080", "--json"])
    count = orjson.loads(capsys.readouterr().out)["total"]
    rows = list(csv.DictReader(out.open()))
    assert code == 0 and len(rows) == count > 200
    assert len({(r["ip_str"], r["port"], r["timestamp"]) for r in rows}) == len(rows)  # no page twice
    assert not (tmp_path / "ssh.csv.resume").exists()


def test_export_json_gz_round_trips_through_import(tmp_path, monkeypatch):
    from spyglass.datagen import generate

    out = tmp_path / "all.json.gz"
    with backend_with(tmp_path / "backend", generate(300, seed=6)) as backend:
        monkeypatch.setenv("SPYGLASS_URL", backend.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", backend.key())
        assert main(["export", "ssh", "-o", str(out)]) == 0
    again = BannerIndex(tmp_path / "again")
    from spyglass.server.index.importer import import_files

    report = import_files(again, [out])
    assert report.bad == 0 and report.added == again.total() > 0
    again.close()


def test_search_and_host_print_hostile_text_inert(tmp_path, capsys, monkeypatch):
    hostile = {"ip_str": "198.18.9.9", "port": 80, "transport": "tcp", "timestamp": "2026-01-01T00:00:00.000000",
               "hash": 7, "org": "Evil\x1b]52;c;cHduZWQ=\x07 Org", "product": "[bold]x[/]",
               "data": "HTTP/1.1 200 OK\r\nServer: \x1b[2Jevil\r\n", "http": {"title": "\x9b31mtitle\u202e"},
               "location": {"country_code": "ZZ"}, "_intel": {"module": "http"}}
    with backend_with(tmp_path, [hostile]) as backend:
        monkeypatch.setenv("SPYGLASS_URL", backend.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", backend.key())
        assert main(["search", "evil", "--facets", "org"]) == 0
        assert main(["host", "198.18.9.9"]) == 0
        out = capsys.readouterr().out
        assert main(["host", "198.18.9.9", "--json"]) == 0
        as_json = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\u202e" not in out
    assert "␛]52;c;cHduZWQ=␇" in out and "[bold]x[/]" in out
    assert "\x1b" not in as_json and "\x9b" not in as_json and "\u202e" not in as_json
    assert orjson.loads(as_json)["data"][0]["http"]["title"] == "\x9b31mtitle\u202e"  # still exact JSON
