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


BAD_PORT_AND_A_HOST_UP = """<?xml version="1.0"?>
<nmaprun scanner="nmap" args="nmap -sV 127.0.0.1" start="1764460800" version="7.93">
<host starttime="1764460800" endtime="1764460801"><status state="up" reason="syn-ack"/>
<address addr="127.0.0.1" addrtype="ipv4"/>
<ports><port protocol="tcp" portid="99999"><state state="open" reason="syn-ack"/>
<service name="http" method="probed" conf="10"/></port></ports></host>
</nmaprun>
"""


def test_a_scan_whose_every_port_is_bad_says_the_hosts_it_saw_are_kept(tmp_path):
    """Newcomer trials 12 and 13: an nmap file whose one open port was bad said "nothing loaded:
    every record was bad", though the host it saw was kept (and is shown by `spyglass host`)."""
    xml = tmp_path / "bad.xml"
    xml.write_text(BAD_PORT_AND_A_HOST_UP)
    done = spyglass("import", "--data", str(tmp_path / "data"), str(xml), ok=False)
    assert "bad.xml: nmap, 1 read, 0 new, 1 bad, 1 host seen" in done.stderr, done.stderr
    assert "nothing loaded" not in done.stderr
    assert "import: no banner loaded: every record was bad; the host it saw is kept" in done.stderr
    assert done.returncode == 1  # some records bad, something kept
