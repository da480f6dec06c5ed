"""The importer's hook for scanners' output: a file is known by its first bytes (plain or gzip),
its format's records go the way JSON banner lines go (batches, dedup, problems with their place),
and the import says per file what it read.

A small format of this test's own stands in for a tool here; the real tools' files are in the
other tests of this folder."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import orjson
import pytest

from spyglass.server.index import BannerIndex
from spyglass.server.ingest import formats, importer
from spyglass.server.ingest.formats import known
from spyglass.server.ingest.importer import FileRead, import_files
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # the importer's worker processes


class Toy:
    """``#toyscan`` then ``ADDRESS PORT`` lines; a line ``!`` makes its reader fail (a format's bug)."""

    name = "toy"

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b"#toyscan\n")

    def records(self, stream: IO[bytes]) -> Iterator[dict | formats.Unreadable]:
        for number, line in enumerate(stream, start=1):
            if number == 1:
                continue
            if line.strip() == b"!":
                raise RuntimeError("the toy reader gave up")
            match = re.fullmatch(rb"(\S+) (\d+)\n?", line)
            if not match:
                yield formats.Unreadable(f"line {number}", "not ADDRESS PORT")
                continue
            yield {
                "ip_str": match[1].decode(),
                "port": int(match[2]),
                "transport": "tcp",
                "timestamp": "2026-01-02T03:04:05.000000",
                "tags": ["toy"],
                "big": 2**70,  # what orjson cannot write: written exactly all the same
            }


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(known, "FORMATS", [Toy(), *known.FORMATS])


def toy_file(path: Path, lines: list[str], gz: bool = False) -> Path:
    body = ("#toyscan\n" + "".join(f"{line}\n" for line in lines)).encode()
    path.write_bytes(gzip.compress(body) if gz else body)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_a_format_is_known_by_content_and_its_records_stored_as_banners(tmp_path, toy, gz):
    # the name says JSON: the content decides
    path = toy_file(tmp_path / "scan.json", ["198.18.0.1 80", "what?", "198.18.0.2 22", "not-an-ip 80"], gz)
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    assert report.files == [FileRead("scan.json", "toy", read=4, loaded=2, bad=2, failed=False, added=2)]
    assert report.problems == [
        "scan.json: line 3: not ADDRESS PORT",  # the format's place
        "scan.json: banner 3: no valid ip_str, ipv6 or ip",  # the third banner it yielded
    ]
    [banner] = idx.host("198.18.0.2")
    assert banner["port"] == 22 and banner["big"] == 2**70 and banner["tags"] == ["toy"]
    again = import_files(idx, [path], workers=1)  # the same file twice adds nothing
    assert (again.added, again.duplicates) == (0, 2)
    idx.close()


def test_a_format_that_fails_part_way_keeps_what_it_read(tmp_path, toy, monkeypatch):
    monkeypatch.setattr(importer, "BLOCK", 1)  # a block per banner: the ones before the failure are sent
    path = toy_file(tmp_path / "scan.txt", ["198.18.0.1 80", "198.18.0.2 80", "!", "198.18.0.3 80"])
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    [error] = report.file_errors
    assert "toy output unreadable from here on (RuntimeError: the toy reader gave up)" in str(error)
    assert report.added == 2 and report.files[0].failed
    assert idx.host("198.18.0.3") == []
    idx.close()


def test_a_truncated_gzip_of_a_format_loads_what_came_before(tmp_path, toy):
    whole = toy_file(tmp_path / "whole", [f"198.18.{n // 256}.{n % 256} 80" for n in range(20_000)], gz=True)
    cut = tmp_path / "cut.gz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [cut], workers=1)
    [error] = report.file_errors
    assert "ends early" in error.message
    assert report.files[0].format == "toy" and 0 < report.added < 20_000
    idx.close()


def test_json_lines_are_not_claimed_by_a_format(tmp_path, toy):
    line = orjson.dumps({"ip_str": "198.18.0.9", "port": 80, "timestamp": "2026-01-01T00:00:00", "data": "x"})
    path = tmp_path / "banners.json"
    path.write_bytes(line + b"\n")
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    assert report.files == [
        FileRead("banners.json", importer.JSON_LINES, read=1, loaded=1, bad=0, failed=False, added=1)
    ]
    idx.close()


def test_the_cli_says_per_file_what_it_read(tmp_path):
    good = orjson.dumps({"ip_str": "198.18.0.1", "port": 80, "timestamp": "2026-01-01T00:00:00", "data": "x"})
    a, b = tmp_path / "a.json", tmp_path / "b.json.gz"
    a.write_bytes(good + b"\n[1\n")
    b.write_bytes(gzip.compress(good + b"\n"))
    done = spyglass("import", "--data", str(tmp_path / "data"), str(a), str(b), ok=False)
    assert done.returncode == 1, done.stderr
    assert "import: a.json: banner JSON lines, 2 read, 1 new, 1 bad\n" in done.stderr
    assert "import: b.json.gz: banner JSON lines, 1 read, 0 new, 1 already there, 0 bad\n" in done.stderr


class ToyPieces(Toy):
    """The toy format cut into its lines, each parsed in the importer's workers."""

    def pieces(self, stream: IO[bytes]) -> Iterator[tuple[int, bytes] | formats.Unreadable]:
        for number, line in enumerate(stream, start=1):
            if number > 1:
                yield number, line

    def parse(self, context: int, data: bytes) -> Iterator[dict | formats.Unreadable]:
        if data.strip() == b"!":
            raise RuntimeError("the toy parser gave up")
        yield from (r for r in self.records(iter([b"#toyscan\n", data])) if not isinstance(r, formats.Unreadable))
        if not re.fullmatch(rb"(\S+) (\d+)\n?", data):
            yield formats.Unreadable(f"line {context}", "not ADDRESS PORT")


def test_a_format_that_cuts_its_file_is_parsed_in_the_workers(tmp_path, monkeypatch):
    monkeypatch.setattr(known, "FORMATS", [ToyPieces()])
    lines = ["198.18.0.1 80", "what?", "!", "198.18.0.2 22"]
    path = toy_file(tmp_path / "scan.txt", lines, gz=True)
    idx = BannerIndex(tmp_path / "data")
    report = import_files(idx, [path], workers=1)
    assert report.files == [FileRead("scan.txt", "toy", read=4, loaded=2, bad=2, failed=False, added=2)]
    assert sorted(report.problems) == [
        "scan.txt: a piece of it: toy failed (RuntimeError: the toy parser gave up)",
        "scan.txt: line 3: not ADDRESS PORT",
    ]
    assert [b["port"] for b in idx.host("198.18.0.2")] == [22]
    idx.close()
