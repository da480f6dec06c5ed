"""The README's "Your own scans", run as a user runs it: a real nmap run's XML and a real masscan run's
JSON (tests/formats/data) given to ``spyglass import``, then searched, counted and looked up by the
commands the README shows, beside the ``spyglass serve`` that holds the data dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from spyglass.testing.backend import serve
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # spyglass commands as processes

SCANS = Path(__file__).resolve().parents[1] / "formats" / "data"


def test_an_nmap_and_a_masscan_file_are_searched_like_any_banner(tmp_path):
    data = tmp_path / "data"
    files = (str(SCANS / "nmap-loopback.xml"), str(SCANS / "masscan-banners.json"))
    done = spyglass("import", "--data", str(data), *files)
    assert "nmap-loopback.xml: nmap, 6 read, 6 new, 0 bad" in done.stderr
    assert "masscan-banners.json: masscan, 3 read, 3 new, 0 bad" in done.stderr  # a port each

    def cli(*args: str) -> str:
        return spyglass("--data", str(data), *args).stdout

    with serve(data):
        found = cli("search", "tag:nmap").splitlines()
        assert sum(row.startswith("127.0.0.1 ") for row in found) == 6  # the run's six open ports
        counted = cli("count", "tag:nmap", "--facets", "product,ssl.cert.subject.cn,http.title")
        assert "Apache httpd" in counted and "nmap.scan.test" in counted and "Spyglass test & page" in counted
        assert "tags         nmap" in cli("host", "127.0.0.1", "--history")
        masscan = cli("search", "tag:masscan port:22", "--facets", "product,version")
        assert "10.77.0.2" in masscan and "9.2p1" in masscan
