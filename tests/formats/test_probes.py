"""Products and versions of masscan's and zgrab2's grabs read with nmap's service probes
(/usr/share/nmap/nmap-service-probes, installed with nmap): a real masscan run and a real nmap -sV
run against the same services in a network namespace name the same product and version; and
how the file's lines are read (which are used, which skipped, how templates are filled)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from spyglass.server.ingest.formats import probes
from tests.formats import netns
from tests.formats.scans import read

INSTALLED = any(p.is_file() for p in probes.FILES)
# A greeting of a server spyglass's own FTP parser does not know; nmap's probes do (Serv-U ftpd 15.1).
SERVED = r"""
import socket, sys, threading
def serve(s):
    while True:
        c, _ = s.accept()
        try:
            c.sendall(b"220 Serv-U FTP Server v15.1 ready...\r\n")
            c.settimeout(5)
            c.recv(4096)
        except OSError:
            pass
        c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 2121))
s.listen()
threading.Thread(target=serve, args=(s,), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
"""


@pytest.mark.skipif(not INSTALLED, reason="nmap's service probes are not installed (Debian: apt install nmap)")
@pytest.mark.external  # masscan and nmap in a namespace
def test_masscan_grabs_are_named_as_nmap_names_the_service(tmp_path):
    for tool in ("masscan", "nmap"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            pytest.skip(f"{tool} is not installed")
    grabs, nmap = tmp_path / "grabs.json", tmp_path / "nmap.xml"
    with netns.link() as link:
        command = ["ip", "netns", "exec", link.target, sys.executable, "-c", SERVED, netns.TARGET_IP]
        server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None and server.stdout.readline().strip() == "ready"
            link.run(
                "masscan", netns.TARGET_IP, "-p2121", "--banners", "-e", link.iface, "--adapter-ip",
                netns.ADAPTER_IP, "--router-mac", link.target_mac, "--wait", "2", "-oJ", str(grabs),
            )  # fmt: skip
            link.run("nmap", "-sV", "-T4", "-p2121", "-oX", str(nmap), netns.TARGET_IP)
        finally:
            server.kill()
            server.wait(10)
    service = ET.parse(nmap).find(".//port/service")
    assert service is not None and service.get("method") == "probed"
    tool, [banner], _ = read(grabs)
    assert tool == "masscan" and banner["data"].startswith("220 Serv-U FTP Server v15.1")  # as masscan kept it
    assert (banner["product"], banner["version"]) == (service.get("product"), service.get("version"))
    assert (banner["product"], banner["version"]) == ("Serv-U ftpd", "15.1")
    assert banner["cpe"] == [c.text for c in service.findall("cpe")]  # (Serv-U's, and Windows)


FILE = rb"""# a probes file in nmap's syntax
Probe TCP NULL q||
match one m|^ONE ([\d_]+) (\d+)\r\n| p/One server/ v/$SUBST(1,"_",".")/ i/build $P(2)/ cpe:/a:one:one:$1/
softmatch one m|^ONE|
match one m|^ONE| i/no product: not used/
match two m|(?<=a+)b| p/Perl's look-behind: not Python's/
match two m|^TWO [[:digit:]]+| p/a POSIX class: skipped/
match two m|^two: (\w+)|i p/Two/ v/$1/ o/Unix/ d/router/
match three m=^A|^B= p/Three/
Probe TCP GetRequest q|GET / HTTP/1.0\r\n\r\n|
match four m|^\x00\x02(..)| p/Four/ v/$I(1,">")/
"""


@pytest.fixture
def lines(monkeypatch, tmp_path):
    """The file above as the installed one."""
    path = tmp_path / "nmap-service-probes"
    path.write_bytes(FILE)
    monkeypatch.setattr(probes, "FILES", (path,))
    probes._probes.cache_clear()
    probes._candidates.cache_clear()
    yield
    probes._probes.cache_clear()
    probes._candidates.cache_clear()


def test_match_lines_with_a_product_are_used_and_templates_filled(lines):
    by_service, null = probes.parse(FILE)
    assert [m.line for m in null] == [3, 6, 7, 8, 9]  # softmatch and product-less lines are not used
    assert probes.identify("one", "ONE 1_2 7\r\n") == {
        "product": "One server",
        "version": "1.2",
        "info": "build 7",
        "cpe": ["cpe:/a:one:one:1_2"],
        "cpe23": ["cpe:2.3:a:one:one:1_2"],
    }
    assert probes.identify("two", "TWO 5") == probes.identify("two", "aab") == {}  # (the lines were skipped)
    assert probes.identify("two", "Two: Alpha") == {
        "product": "Two",
        "version": "Alpha",
        "os": "Unix",
        "devicetype": "router",
    }
    assert probes.identify("three", "B") == {"product": "Three"}  # (top-level alternatives: either start)
    assert probes.identify("four", b"\x00\x02\x01\x02") == {"product": "Four", "version": "258"}
    assert probes.identify("banner", "two: beta")["product"] == "Two"  # no service named: the NULL probe's lines
    assert probes.identify("one", "") == {} and probes.identify("unknown-service", "ONE 1_2 7\r\n") == {}


def test_without_the_file_nothing_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(probes, "FILES", (tmp_path / "absent",))
    probes._probes.cache_clear()
    probes._candidates.cache_clear()
    try:
        assert probes.identify("ftp", "220 Serv-U FTP Server v15.1 ready...\r\n") == {}
    finally:
        probes._probes.cache_clear()
        probes._candidates.cache_clear()


@pytest.mark.parametrize(
    ("pattern", "needs", "first"),
    [
        (rb"^SSH-([\d.]+)-OpenSSH_([\w._-]+)\r?\n", b"-OpenSSH_", ord("S")),
        (rb"^HTTP/1\.[01] \d\d\d .*\r\nServer: Apache/([\d.]+)", b"\r\nServer: Apache/", ord("H")),
        (rb"^a\012bc", b"bc", ord("a")),  # an octal escape is no literal digits
        (rb"^x(a|b)yyyy\1zzzz", b"yyyy", ord("x")),  # nor a back reference
        (rb"^ab?c", b"a", ord("a")),
        (rb"^[ab]+c", b"c", None),
        (rb"^a|bcd", None, None),  # alternatives at the top: it may begin with either
    ],
)
def test_what_a_pattern_needs_is_never_more_than_it_needs(pattern, needs, first):
    assert probes.required(pattern, 0) == needs
    assert (probes.first_byte(pattern, 0) if needs is not None else None) == first
