"""generate, import and export as a script uses them."""

from __future__ import annotations

import csv
import gzip
import os
import subprocess
import sys

import orjson
import pytest

from spyglass.cli import main
from spyglass.server.index import BannerIndex
from tests.conftest import backend_with


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spyglass", *args], capture_output=True, text=True, timeout=120, env=os.environ
    )


@pytest.mark.external
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


@pytest.mark.external
def test_import_reports_bad_lines_and_adds_no_duplicates(tmp_path):
    data = tmp_path / "data"
    source = tmp_path / "in.json"
    good = [
        orjson.dumps(b)
        for b in [
            {
                "ip_str": "198.18.0.1",
                "port": 80,
                "timestamp": "2026-01-01T00:00:00.000000",
                "data": "HTTP/1.1 200 OK",
                "hash": 1,
            }
        ]
    ]
    source.write_bytes(good[0] + b"\n[1, 2\n" + good[0] + b"\n")
    first = run("import", "--data", str(data), str(source))
    assert first.returncode == 1, first.stderr  # some lines bad
    assert "3 read, 1 new, 1 already there, 1 bad" in first.stderr
    assert "in.json:2: not JSON" in first.stderr
    again = run("import", "--data", str(data), str(source))
    assert "0 new, 2 already there" in again.stderr and again.returncode == 1
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


def test_an_export_of_nothing_leaves_the_file_it_names(tmp_path, capsys, monkeypatch):
    """Newcomer trial 12, minor: 'export p.csv: 0 banners to .../p.csv', exit 0, and no file."""
    from spyglass.datagen import generate

    with backend_with(tmp_path / "backend", generate(50, seed=5)) as backend:
        monkeypatch.setenv("SPYGLASS_URL", backend.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", backend.key("member"))
        assert main(["export", "port:18080", "-o", str(tmp_path / "none.csv"), "--fields", "ip_str,port"]) == 0
        assert main(["export", "port:18080", "-o", str(tmp_path / "none.json.gz")]) == 0
    assert (tmp_path / "none.csv").read_text().splitlines() == ["ip_str,port"]
    assert gzip.decompress((tmp_path / "none.json.gz").read_bytes()) == b""
    assert not list(tmp_path.glob("*.resume"))


@pytest.mark.external
def test_export_json_gz_round_trips_through_import(tmp_path, monkeypatch):
    from spyglass.datagen import generate

    out = tmp_path / "all.json.gz"
    with backend_with(tmp_path / "backend", generate(300, seed=6)) as backend:
        monkeypatch.setenv("SPYGLASS_URL", backend.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", backend.key())
        assert main(["export", "ssh", "-o", str(out)]) == 0
    again = BannerIndex(tmp_path / "again")
    from spyglass.server.ingest.importer import import_files

    report = import_files(again, [out])
    assert report.bad == 0 and report.added == again.total() > 0
    again.close()


def test_search_and_host_print_hostile_text_inert(tmp_path, capsys, monkeypatch):
    hostile = {
        "ip_str": "198.18.9.9",
        "port": 80,
        "transport": "tcp",
        "timestamp": "2026-01-01T00:00:00.000000",
        "hash": 7,
        "org": "Evil\x1b]52;c;cHduZWQ=\x07 Org",
        "product": "[bold]x[/]",
        "data": "HTTP/1.1 200 OK\r\nServer: \x1b[2Jevil\r\n",
        "http": {"title": "\x9b31mtitle\u202e"},
        "location": {"country_code": "ZZ"},
        "_intel": {"module": "http"},
    }
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


def test_an_unknown_facet_is_left_out_and_said_the_search_still_runs(tmp_path, capsys, monkeypatch):
    banners = [
        {"ip_str": f"198.18.7.{n}", "port": port, "transport": "tcp", "timestamp": "2026-01-01T00:00:00.000000"}
        for n, port in ((1, 22), (2, 22), (3, 80))
    ]
    with backend_with(tmp_path, banners) as backend:
        monkeypatch.setenv("SPYGLASS_URL", backend.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", backend.key())
        assert main(["search", "--facets", "port,nosuchfacet,Other:3", "port:22", "--json"]) == 0
        captured = capsys.readouterr()
        assert captured.err.splitlines() == ["spyglass: facets left out (unknown): nosuchfacet, Other"]
        body = orjson.loads(captured.out)
        assert body["total"] == 2 and body["facets"]["port"] == [{"count": 2, "value": "22"}]
        assert main(["count", "--facets", "nosuchfacet", "port:80"]) == 0  # none left: a plain count
        captured = capsys.readouterr()
        assert captured.out.splitlines()[0] == "1" and "nosuchfacet" in captured.err
        # A known facet with a malformed count is still refused, as the query module says.
        assert main(["count", "--facets", "port:many,nosuchfacet", "port:22"]) == 2
        assert errors_of(capsys) == [
            "spyglass: facets left out (unknown): nosuchfacet",
            "spyglass: Invalid facets: facet port: after the colon comes how many values, 1 to 1000, "
            "not 'many' (HTTP 400)",
        ]


def errors_of(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("spyglass: ")]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["export", "ssh", "-o", "{tmp}/no/such/out.csv"], "export: no such folder: {tmp}/no/such"),
        (["export", "ssh", "-o", "{tmp}/out.txt"], "export: out.txt must end in .json.gz, .json or .csv"),
        (
            ["export", "ssh", "-o", "{tmp}/out.csv", "--fields", "ip_str,ipstr"],
            "export: --fields: a banner has no member 'ipstr'",
        ),
        (
            ["export", "ssh", "-o", "{tmp}/out.csv", "--fields", "ip_str,,port"],
            "export: --fields: '' is not a member name or a dotted path of names",
        ),
        (["generate", "--count", "5", "-o", "{tmp}/no/such/g.json.gz"], "generate: no such folder: {tmp}/no/such"),
        (["generate", "--count", "5", "-o", "{tmp}/g.csv"], "generate: g.csv must end in .json.gz or .json"),
    ],
)
def test_bad_outputs_and_fields_are_one_line_and_exit_2(tmp_path, capsys, argv, message):
    argv = [a.format(tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    assert errors_of(capsys) == [f"spyglass: {message.format(tmp=tmp_path)}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_a_limit_below_1_is_refused_and_never_truncates_a_file(tmp_path, capsys, limit):
    out = tmp_path / "kept.csv"
    out.write_text("precious\n")
    assert main(["export", "ssh", "-o", str(out), f"--limit={limit}"]) == 2
    assert f"--limit: must be at least 1, not {limit}" in errors_of(capsys)[0]
    assert out.read_text() == "precious\n"


def test_csv_export_is_inert_in_a_spreadsheet_and_json_stays_exact(tmp_path, monkeypatch):
    hostile = {
        "ip_str": "198.18.7.7",
        "port": 80,
        "transport": "tcp",
        "timestamp": "2026-01-01T00:00:00.000000",
        "hash": 9,
        "org": '=HYPERLINK("http://evil")',
        "product": "@SUM(1)",
        "version": "-1+1",
        "data": "HTTP/1.1 200 OK\r\nX: \x1b]52;c;AAAA\x07\r\n",
        "tags": ["=cmd"],
        "location": {"country_code": "ZZ", "city": "+City"},
        "_intel": {"module": "http"},
    }
    with backend_with(tmp_path / "b", [hostile]) as backend:
        monkeypatch.setenv("SPYGLASS_URL", backend.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", backend.key("member"))
        assert (
            main(
                [
                    "export",
                    "port:80",
                    "-o",
                    str(tmp_path / "out.csv"),
                    "--fields",
                    "ip_str,org,product,version,data,tags,location,location.city",
                ]
            )
            == 0
        )
        assert main(["export", "port:80", "-o", str(tmp_path / "out.json"), "--limit", "1"]) == 0
    [row] = list(csv.DictReader((tmp_path / "out.csv").open(newline="", encoding="utf-8")))
    assert row["org"] == '\'=HYPERLINK("http://evil")' and row["product"] == "'@SUM(1)"
    assert row["version"] == "'-1+1" and row["location.city"] == "'+City"
    assert row["data"] == "HTTP/1.1 200 OK\u240aX: \u241b]52;c;AAAA\u2407\u240a"
    assert row["tags"] == '["=cmd"]' and orjson.loads(row["location"])["city"] == "+City"
    [line] = (tmp_path / "out.json").read_bytes().splitlines()  # plain JSON lines, as import reads
    exported = orjson.loads(line)
    assert {k: exported[k] for k in hostile} == hostile


@pytest.mark.parametrize("address", ["", "999.1.1.1", "host.example"])
def test_host_takes_one_address_and_says_so(capsys, address):
    """A newcomer's `spyglass host ''` asked the server for /host/ and was told it had no such
    method (exit 4): bad input is exit 2, named as such."""
    assert main(["host", address]) == 2
    assert f"{address!r} is not an IP address" in errors_of(capsys)[0]
