"""A scan that found no open port is a result: nmap 7.93 run against a port nothing listens on."""

from __future__ import annotations

import socket
import subprocess

import pytest

from tests.formats.nmapfiles import NMAP
from tests.workflows.commands import spyglass

pytestmark = pytest.mark.external  # nmap, and spyglass import as a process


@pytest.mark.skipif(NMAP is None, reason="nmap (Debian's package) is not installed")
def test_a_scan_with_no_open_port_imports_with_exit_0_and_says_so(tmp_path):
    with socket.socket() as free:  # a port the system just gave and took back: closed
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    xml = tmp_path / "closed.xml"
    subprocess.run([str(NMAP), "-sT", "-p", str(port), "-oX", str(xml), "127.0.0.1"], check=True, timeout=120)
    assert 'state="closed"' in xml.read_text()
    done = spyglass("import", "--data", str(tmp_path / "data"), str(xml), ok=False)
    assert done.returncode == 0, done.stderr
    assert "closed.xml: nmap, 0 read, 0 new, 0 bad, 1 host seen" in done.stderr
    assert "import: the scan found no open port: no banner to load; the hosts it saw are kept" in done.stderr
    assert "nothing loaded" not in done.stderr
    empty = tmp_path / "empty.json"
    empty.write_text("")  # an empty file of banners is still nothing loaded
    assert spyglass("import", "--data", str(tmp_path / "data"), str(empty), ok=False).returncode == 2
