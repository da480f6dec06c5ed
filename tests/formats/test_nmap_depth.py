"""What nmap says beyond the service, kept on the banners: host scripts, every SSH host key,
ssh2-enum-algos' lists, the vulns library's reports, traceroute, uptime, distance, the MAC address
and its vendor, and nmap's port-number guesses marked as guesses. Real runs of Debian's nmap: on
loopback against the suite's own services, and across a veth pair between two namespaces (a MAC
address, a hop and OS detection need a link)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from spyglass.server.grabs import ssh as ssh_module
from spyglass.server.grabs.base import Target
from tests.formats import netns
from tests.formats.nmapfiles import NMAP
from tests.formats.scans import import_files, read, served
from tests.scanservers import HOST, _Handler, http_service, make_cert, ssh_service

pytestmark = [
    pytest.mark.skipif(NMAP is None, reason="nmap (Debian's package) is not installed"),
    pytest.mark.external,
    pytest.mark.xdist_group("nmap-depth"),  # one worker runs each scan, once
    pytest.mark.timeout(600),  # a test that runs a scan (-sV and scripts: a minute or more when busy)
]  # nmap in network namespaces, and spyglass as a process
SCRIPTS = "ssh-hostkey,ssh2-enum-algos,http-vuln-cve2011-3192,http-date,clock-skew,banner"
QEMU_MAC = "52:54:00:12:34:56"  # an address nmap names the vendor of (QEMU's OUI)


class _Ranges(_Handler):
    """Answers a request for many byte ranges with 206, as Apache before 2.2.20 did (CVE-2011-3192)."""

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(206 if self.headers.get("Range") else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture(scope="module")
def loopback(tmp_path_factory):
    """nmap -sV with the scripts above (``-vv``: clock-skew, a host script, then reports even no
    skew), imported and served; the SSH service's facts and what the crawler's own grab of it read."""
    out = tmp_path_factory.mktemp("nmap") / "deep.xml"
    with ssh_service("ssh-ed25519", ("ecdsa-sha2-nistp256", "ssh-rsa")) as ssh, http_service(handler=_Ranges) as http:
        command = [NMAP, "-sV", "-vv", "--script", SCRIPTS, "-T4", "-p", f"{ssh.port},{http.port}", "-oX", str(out)]
        subprocess.run([*command, HOST], check=True, capture_output=True, timeout=300)
        found = asyncio.run(ssh_module.grab(Target(HOST, ssh.port, 10)))
    assert found is not None
    data = out.parent / "data"
    import_files(data, out)
    with served(data) as api:
        yield api, ssh, http, found.members["ssh"]


def test_every_host_key_and_the_algorithms_as_the_crawler_reads_them(loopback):
    api, ssh, _, crawled = loopback
    [banner] = api.search(f"port:{ssh.port}")["matches"]
    keys = banner["ssh"]["keys"]
    fingerprints = {k.get_fingerprint("md5").removeprefix("MD5:") for k in ssh.facts["keys"]}
    assert {k["fingerprint"] for k in keys} == fingerprints and len(keys) == 3
    assert {k["type"] for k in keys} == {"ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"}
    assert all(k["bits"] in (256, 2048) and k["key"] for k in keys)
    assert banner["ssh"]["fingerprint"] == ssh.facts["fingerprint"]  # the key a client asks for first
    for member in ("kex", "hassh", "cipher", "mac"):  # as spyglass's own scanner read the same server
        assert banner["ssh"][member] == crawled[member], member
    assert api.search(f"ssh.hassh:{crawled['hassh']}")["total"] == 1


def test_host_scripts_are_on_every_banner_of_the_host(loopback):
    api, ssh, http, _ = loopback
    banners = {b["port"]: b for b in api.host(HOST, history=False)["data"]}
    assert set(banners) == {ssh.port, http.port}
    for banner in banners.values():
        skew = banner["host_scripts"]["clock-skew"]  # nmap's reading of the servers' Date headers:
        # "0s" on an idle machine, "-1s" when a loaded one answers across a second's turn (CI)
        assert re.fullmatch(r"-?[01]s", skew["output"]) and skew["elems"]["count"] == "1", skew


def test_vulnerabilities_nmap_found_are_vulns(loopback):
    api, _, http, _ = loopback
    page = api.search("vuln:CVE-2011-3192")
    [banner] = page["matches"]
    assert banner["port"] == http.port
    found = banner["vulns"]["CVE-2011-3192"]
    assert found["verified"] is True and found["cvss"] is None  # tested, and nmap gives no score
    assert found["summary"].startswith("Apache byterange filter DoS: The Apache web server is vulnerable")
    assert "https://cve.mitre.org/cgi-bin/cvename.cgi?name=CVE-2011-3192" in found["references"]
    assert api.facet("has_vuln:true", "vuln") == {"CVE-2011-3192": 1}


# vulners.com's API as vulners.nse reads it (its answer's shape, for whatever it is asked): two CVEs and an exploit.
VULNERS = {
    "result": "OK",
    "data": {
        "search": [
            {"_source": {"id": id_, "type": kind, "bulletinFamily": family, "cvss": {"score": score}}}
            for id_, kind, family, score in (
                ("CVE-2021-23017", "cve", "NVD", 7.7),
                ("PACKETSTORM:167720", "packetstorm", "exploit", 7.7),
                ("CVE-2022-41741", "cve", "NVD", 7.8),
            )
        ]
    },
}
API = r"""
import http.server, ssl, sys
answer = sys.argv[4].encode()
class Api(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer((sys.argv[1], 443), Api)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = tls.wrap_socket(server.socket, server_side=True)
print("ready", flush=True)
server.serve_forever()
"""


@contextlib.contextmanager
def vulners_api(link: netns.Link, folder: Path) -> Iterator[None]:
    """vulners.com, for the scanner's namespace only, at the target's address (``ip netns exec``
    reads /etc/netns/NAME/hosts as /etc/hosts): an HTTPS server there answering :data:`VULNERS`."""
    cert = make_cert("vulners.com")
    (folder / "cert.pem").write_bytes(cert.pem)
    (folder / "key.pem").write_bytes(cert.key_pem)
    etc = Path("/etc/netns") / link.scanner
    etc.mkdir(parents=True)
    api = None
    try:
        (etc / "hosts").write_text(f"{netns.TARGET_IP} vulners.com\n")
        files = [str(folder / "cert.pem"), str(folder / "key.pem"), json.dumps(VULNERS)]
        command = ["ip", "netns", "exec", link.target, sys.executable, "-c", API, netns.TARGET_IP, *files]
        api = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert api.stdout is not None and api.stdout.readline().strip() == "ready"
        yield
    finally:
        if api is not None:
            api.kill()
            api.wait(10)
        shutil.rmtree(etc, ignore_errors=True)


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """From one namespace to the other (a QEMU MAC address): nmap -O --traceroute, no -sV, and nmap
    -sV with vulners of the HTTP service (nginx 1.22.1) against :func:`vulners_api`."""
    folder = tmp_path_factory.mktemp("nmap")
    out, sv = folder / "link.xml", folder / "vulners.xml"
    with netns.link() as link:
        target_iface = "vt" + link.iface.removeprefix("vs")
        subprocess.run(["ip", "-n", link.target, "link", "set", target_iface, "address", QEMU_MAC], check=True)
        closed = "81"  # (no service there: OS detection wants a closed port)
        link.run(
            NMAP or "nmap", "-O", "--traceroute", "-T4", "-p", f"21,22,80,{closed}", "-oX", str(out), netns.TARGET_IP
        )
        with vulners_api(link, folder):
            link.run(NMAP or "nmap", "-sV", "--script", "vulners", "-T4", "-p", "80", "-oX", str(sv), netns.TARGET_IP)
    import_files(folder / "data", out)
    import_files(folder / "vulners", sv)
    with served(folder / "data") as api, served(folder / "vulners") as vulners:
        yield api, vulners, out


def test_link_facts_are_kept(linked):
    api, _, _ = linked
    banners = api.host(netns.TARGET_IP, history=False)["data"]
    assert sorted(b["port"] for b in banners) == [21, 22, 80]
    for banner in banners:
        assert banner["mac"] == {"address": QEMU_MAC, "vendor": "QEMU virtual NIC"}
        assert banner["distance"] == 1
        [hop] = banner["traceroute"]["hops"]
        assert hop["ttl"] == 1 and hop["ip"] == netns.TARGET_IP and hop["rtt"] >= 0
        assert isinstance(banner["uptime"]["seconds"], int) and banner["uptime"]["lastboot"]
        assert banner["os"].startswith("Linux")


def test_os_classes_are_kept_and_are_filters_and_facets(linked):
    """Issue 46: every ``<osclass>`` of -O's matches, most accurate first, each once, on every banner
    of the host; searchable by vendor, family, generation, type and the best class's accuracy."""
    api, _, xml = linked
    root = ET.parse(xml).getroot()
    written = [c for m in root.iter("osmatch") for c in m.findall("osclass")]
    assert written, "nmap -O named no OS class"
    banners = api.host(netns.TARGET_IP, history=False)["data"]
    classes = banners[0]["os_classes"]
    assert all(b["os_classes"] == classes for b in banners)
    members = (("vendor", "vendor"), ("osfamily", "family"), ("osgen", "generation"), ("type", "type"))
    assert {tuple(c.get(a) for a, _ in members) for c in written} == {
        tuple(c.get(m) for _, m in members) for c in classes
    }
    assert len(classes) == len({tuple(c.get(m) for _, m in members) for c in classes})  # each once
    accuracies = [c["accuracy"] for c in classes]
    assert accuracies == sorted(accuracies, reverse=True) and 0 < accuracies[0] <= 100
    assert accuracies[0] == max(int(m.get("accuracy")) for m in root.iter("osmatch"))
    best = classes[0]
    query = f'os.vendor:{best["vendor"]} os.family:{best["family"]} os.type:"{best["type"]}"'
    query += f" os.accuracy:{accuracies[0]}"
    assert api.search(query)["total"] == 3
    assert api.search(f"os.generation:{best['generation']}")["total"] == 3
    assert api.search("os.vendor:microsoft")["total"] == 0
    facets = api.search("port:21,22,80", facets="os.family,os.accuracy,os.generation")["facets"]
    for name in ("family", "generation"):  # every banner of the host counted once for each value
        counted = {(f["value"], f["count"]) for f in facets[f"os.{name}"]}
        assert counted == {(c[name], 3) for c in classes if name in c}, name
    assert facets["os.accuracy"] == [{"count": 3, "value": str(accuracies[0])}]


def test_port_number_guesses_are_not_the_service(linked):
    """Without -sV nmap names a port from its table (``method="table"``): kept as a guess, not as the
    banner's module or product."""
    api, _, _ = linked
    for port, name in ((21, "ftp"), (22, "ssh"), (80, "http")):
        [banner] = api.search(f"port:{port}")["matches"]
        assert banner["guess"] == {"service": name, "method": "table", "conf": 3}
        assert not banner.get("product") and not banner["_intel"].get("module")
    assert api.search("product:ssh")["total"] == 0


def test_vulners_scores_are_kept_by_cve(linked):
    _, api, _ = linked
    [banner] = api.search("vuln:CVE-2021-23017")["matches"]
    assert banner["product"] == "nginx" and banner["version"] == "1.22.1"
    assert set(banner["vulns"]) == {"CVE-2021-23017", "CVE-2022-41741"}  # (the exploit is no CVE: in tool.record)
    found = banner["vulns"]["CVE-2022-41741"]
    assert found == {
        "verified": False,  # inferred from the version, not tested
        "cvss": "7.8",
        "summary": "",
        "references": ["https://vulners.com/cve/CVE-2022-41741"],
    }
    assert banner["vulns"]["CVE-2021-23017"]["cvss"] == "7.7"
    assert api.facet("has_vuln:true", "vuln") == {"CVE-2021-23017": 1, "CVE-2022-41741": 1}


SCRIPTS_DIR = Path("/usr/share/nmap/scripts")


def _documented_output(script: str) -> str:
    """The XML a script writes, as nmap documents it in the script itself (``@xmloutput``)."""
    lines, inside = [], False
    for line in (SCRIPTS_DIR / f"{script}.nse").read_text().splitlines():
        if line.replace(" ", "").startswith("--@xmloutput"):  # (scripts write "-- @" and "--@")
            inside = True
        elif inside and (not line.startswith("--") or line.startswith(("---", "-- @"))):
            break
        elif inside:
            lines.append(line.removeprefix("--").strip())
    return "\n".join(lines)


@pytest.mark.skipif(not (SCRIPTS_DIR / "smb-vuln-ms17-010.nse").is_file(), reason="nmap's scripts are not installed")
def test_smb_host_scripts_give_the_os_and_the_vulnerability(tmp_path):
    """smb-os-discovery and smb-vuln-ms17-010 need an SMB server no test has: their output as nmap's
    own scripts document it, added to a real run's host (tests/formats/data), is read like any."""
    scripts = "".join(
        f'<script id="{name}" output="">{_documented_output(name)}</script>'
        for name in ("smb-os-discovery", "smb-vuln-ms17-010")
    )
    real = (Path(__file__).parent / "data" / "nmap-loopback.xml").read_text()
    edited = tmp_path / "smb.xml"
    edited.write_text(real.replace("</host>", f"<hostscript>{scripts}</hostscript></host>", 1))
    _, banners, unreadable = read(edited)
    assert banners and not unreadable
    for banner in banners:
        assert banner["os"] == "Windows Server (R) 2008 Standard 6001 Service Pack 1"  # nmap matched no OS
        assert banner["host_scripts"]["smb-os-discovery"]["elems"]["domain_dns"] == "lab.test.local"
        found = banner["vulns"]["CVE-2017-0143"]
        assert found["verified"] is True and found["summary"].startswith("Remote Code Execution vulnerability")
        assert "https://technet.microsoft.com/en-us/library/security/ms17-010.aspx" in found["references"]
