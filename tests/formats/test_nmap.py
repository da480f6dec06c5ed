"""nmap's XML, from a real run: Debian's nmap with ``-sV -sC`` (and the http-headers and banner
scripts) against the suite's own loopback HTTP, HTTPS, SSH, SMTP (STARTTLS) and FTP services and a
page with a hostile title; imported with ``spyglass import`` as a user runs it, then found through
the API and the CLI like any banner."""

from __future__ import annotations

import gzip
import html
import re
import xml.etree.ElementTree as ET

import httpx
import pytest

from tests.conftest import start_backend
from tests.formats.nmapfiles import HOSTILE_TITLE, NMAP, Scan, parts, replicate, run_nmap
from tests.workflows.commands import spyglass

pytestmark = [
    pytest.mark.skipif(NMAP is None, reason="nmap (Debian's package) is not installed"),
    pytest.mark.external,
    pytest.mark.xdist_group("nmap"),  # one worker runs the scan, once
    pytest.mark.timeout(600),  # the test that runs the scan: up to three of 190 s (nmapfiles.run_nmap)
]  # nmap, and spyglass import as a process
FACETS = "product,ssl.cert.subject.cn,http.title,ssh.fingerprint,tag"  # (scan is a filter, not a facet)


@pytest.fixture(scope="module")
def scan(tmp_path_factory) -> Scan:
    return run_nmap(tmp_path_factory.mktemp("nmap") / "scan.xml")


@pytest.fixture(scope="module")
def imported(scan, tmp_path_factory):
    """The run imported into a data dir by ``spyglass import``, and the backend serving it."""
    data = tmp_path_factory.mktemp("data")
    done = spyglass("import", "--data", str(data), str(scan.xml))
    server, backend = start_backend(data)
    with server, httpx.Client(base_url=backend.url, params={"key": backend.key()}, timeout=30) as http:
        yield done, backend, http
    backend.store.close()


def search(http: httpx.Client, query: str, facets: str = FACETS) -> dict:
    response = http.get("/intel/host/search", params={"query": query, "facets": facets})
    assert response.status_code == 200, response.text
    return response.json()


def values(page: dict, facet: str) -> dict[str, int]:
    return {f["value"]: f["count"] for f in page["facets"][facet]}


def test_the_import_says_what_it_read(imported):
    done, _, _ = imported
    assert "import: scan.xml: nmap, 6 read, 6 new, 0 bad, 1 host seen\n" in done.stderr


def test_imported_services_are_found_and_faceted_like_collected_ones(imported, scan):
    _, _, http = imported
    page = search(http, "tag:nmap")
    assert page["total"] == 6
    assert values(page, "tag") == {"nmap": 6}
    assert values(page, "product")["Apache httpd"] == 3  # HTTP, HTTPS and the hostile page
    assert {"nmap.scan.test", "mail.scan.test"} <= set(values(page, "ssl.cert.subject.cn"))
    assert "Spyglass test & page" in values(page, "http.title")  # entities read, as the crawler reads them
    assert values(page, "ssh.fingerprint") == {scan.services["ssh"].facts["fingerprint"]: 1}
    [scan_id] = {b["_intel"]["options"]["scan"] for b in page["matches"]}
    assert search(http, f"scan:{scan_id}")["total"] == 6 and search(http, "scan:nmap-0")["total"] == 0

    https = scan.services["https"]
    [banner] = search(http, "ssl.cert.subject.cn:nmap.scan.test")["matches"]
    cert = https.facts["cert"]
    assert banner["port"] == https.port and banner["_intel"]["module"] == "https"
    assert banner["ssl"]["cert"]["fingerprint"]["sha256"] == cert.sha256
    assert banner["ssl"]["cert"]["serial"] == cert.serial
    assert banner["ssl"]["cert"]["issuer"]["CN"] == "Spyglass Test CA"
    assert banner["cpe23"] == ["cpe:2.3:a:apache:http_server:2.4.62"] and banner["version"] == "2.4.62"
    assert banner["tool"]["name"] == "nmap" and banner["tool"]["record"]["portid"] == str(https.port)
    assert "localhost" in banner["hostnames"]

    [ftp] = search(http, f"port:{scan.services['ftp'].port}")["matches"]
    assert ftp["data"] == "220 " + scan.services["ftp"].facts["banner"].strip()  # the banner script's text
    [ssh] = search(http, f"ssh.fingerprint:{scan.services['ssh'].facts['fingerprint']}")["matches"]
    assert ssh["ssh"]["type"] == "ssh-ed25519" and ssh["product"] == "AsyncSSH sshd"
    [plain] = search(http, f"port:{scan.services['http'].port}")["matches"]
    assert "Server: Apache/2.4.62 (Unix)" in plain["data"]  # the http-headers script's lines


def test_two_runs_are_a_host_history_and_the_same_file_adds_nothing(scan, tmp_path):
    """A second run of the same command (the real file, its times an hour on, as nmap would write
    them) adds a banner per port to the host's history; the first file again, gzipped, adds nothing."""
    hour_on = lambda m: b'%s="%d"' % (m[1], int(m[2]) + 3600)  # noqa: E731
    later = re.sub(rb'(start|starttime|endtime|time)="(\d+)"', hour_on, scan.xml.read_bytes())
    second, again = tmp_path / "second.xml", tmp_path / "again.xml.gz"
    second.write_bytes(later)
    again.write_bytes(gzip.compress(scan.xml.read_bytes()))
    data = tmp_path / "data"
    spyglass("import", "--data", str(data), str(scan.xml), str(second))
    done = spyglass("import", "--data", str(data), str(again))
    assert "import: again.xml.gz: nmap, 6 read, 0 new, 6 already there, 0 bad" in done.stderr
    assert "0 new, 6 already there" in done.stderr
    server, backend = start_backend(data)
    with server, httpx.Client(base_url=backend.url, params={"key": backend.key()}, timeout=30) as http:
        history = http.get("/intel/host/127.0.0.1", params={"history": "true"}).json()
        assert len(history["data"]) == 12
        assert len({b["_intel"]["options"]["scan"] for b in history["data"]}) == 2
        current = http.get("/intel/host/127.0.0.1").json()
        assert sorted(current["ports"]) == sorted(s.port for s in scan.services.values())
        latest = {b["_intel"]["options"]["scan"] for b in search(http, "tag:nmap")["matches"]}
        assert len(latest) == 1  # the current banners: the later run's
    backend.store.close()


def test_hostile_text_reaches_the_terminal_inert(scan, tmp_path):
    """What nmap wrote of the hostile page's title, and the same file with the title's controls
    raw (as a file from elsewhere may hold them: nmap escapes them itself), are stored as they came
    and shown inert by the CLI."""
    tree = ET.parse(scan.xml)
    port = str(scan.services["hostile"].port)
    [page] = [p for p in tree.iter("port") if p.get("portid") == port]
    [title] = [e for e in page.iter("elem") if e.get("key") == "title"]
    written = title.text or ""
    assert "[bold red]evil[/]" in written and "\\xC2\\x9B" in written  # nmap's own escape of CSI
    title.text = html.unescape(HOSTILE_TITLE) + "\x85"  # raw C1 controls (valid XML 1.0 characters)
    edited = tmp_path / "edited.xml"
    tree.write(edited, encoding="utf-8", xml_declaration=True)
    data = tmp_path / "data"
    spyglass("import", "--data", str(data), str(scan.xml))
    spyglass("import", "--data", str(data / "edited"), str(edited))
    for folder, expected in ((data, html.unescape(written)), (data / "edited", title.text)):
        server, backend = start_backend(folder)
        with server:
            env = {"SPYGLASS_URL": backend.url, "SPYGLASS_API_KEY": backend.key()}
            with httpx.Client(base_url=backend.url, params={"key": env["SPYGLASS_API_KEY"]}, timeout=30) as http:
                [banner] = search(http, f"port:{port}")["matches"]
            assert banner["http"]["title"] == " ".join(expected.split())  # stored as it came
            shown = spyglass("search", f"port:{port}", "--facets", "http.title", env=env).stdout
            shown += spyglass("host", "127.0.0.1", env=env).stdout
        backend.store.close()
        assert "[bold red]evil[/]" in shown  # markup shown as text, not interpreted
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", shown), repr(shown)


@pytest.mark.parametrize("cut", ["before the first element", "before the first host", "after the last host"])
def test_a_file_cut_short_between_hosts_says_so(scan, tmp_path, cut):
    """Newcomer trial 3: nmap -oX cut within its first lines was read as JSON lines (every line
    "not JSON"), and cut before a host as a scan that found no open port."""
    xml = scan.xml.read_bytes()
    at = {
        "before the first element": xml.index(b"<nmaprun"),
        "before the first host": xml.index(b"<host "),
        "after the last host": xml.rindex(b"</host>") + len(b"</host>"),
    }[cut]
    path = tmp_path / "scan.xml"
    path.write_bytes(xml[:at])
    done = spyglass("import", "--data", str(tmp_path / "data"), str(path), ok=False)
    if cut == "before the first element":
        assert "scan.xml: the whole file: the file ends before its first element" in done.stderr
    else:
        assert "it ends before nmap's </nmaprun>: the scan was cut short" in done.stderr
    assert "not JSON" not in done.stderr and "found no open port" not in done.stderr
    assert done.returncode == (1 if cut == "after the last host" else 2), done.stderr


def test_a_corrupt_host_and_a_truncated_end_are_reported_and_the_rest_loads(scan, tmp_path):
    xml = b"".join(replicate(scan.xml.read_bytes(), 5))
    head, hosts, _ = parts(xml)
    starts = [m.start() for m in re.finditer(rb"<host ", xml)]
    second = xml.index(b"</port>", starts[1])
    broken = xml[:second] + b"</prot>" + xml[second + len(b"</port>") :]  # host 2 is not well-formed
    cut = broken[: starts[4] + (len(broken) - starts[4]) // 2]  # the file ends inside host 5
    path = tmp_path / "scan.xml"
    path.write_bytes(cut)
    done = spyglass("import", "--data", str(tmp_path / "data"), str(path), ok=False)
    assert done.returncode == 1, done.stderr
    line_of = [xml.count(b"\n", 0, s) + 1 for s in starts]
    assert f"scan.xml: host 2 (line {line_of[1]:,}): not well-formed XML (mismatched tag:" in done.stderr
    assert f"scan.xml: host 5 (line {line_of[4]:,}): the file ends inside it" in done.stderr
    assert "import: scan.xml: nmap, 20 read, 18 new, 2 bad" in done.stderr  # 3 hosts of 6 ports
