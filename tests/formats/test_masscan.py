"""masscan's -oJ, -oL and -oX, with --banners, from Debian's masscan run by the test against services
in a network namespace of its own (masscan refuses loopback); then the same through ``spyglass
import`` and the backend's search, facets and host. Where no namespace can be made, the real runs
are skipped (with the reason) and the hand-written records of masscan's documented formats below
still run."""

from __future__ import annotations

import base64
import gzip
import json
import shutil
from pathlib import Path

import pytest

from spyglass.cli import main
from tests.formats.netns import ADAPTER_IP, PORTS, TARGET_IP, link
from tests.formats.scans import claimed_by_one, import_files, read, served

pytestmark = pytest.mark.external  # masscan in a network namespace, spyglass import as a process

# Debian's masscan 1.3.2 sends no HTTP request of its own on port 80: the test gives it one.
HELLO = ["--hello-string[80]", base64.b64encode(b"GET / HTTP/1.0\r\n\r\n").decode()]
SAMPLES = Path(__file__).parent / "samples"  # masscan's documented formats, written by hand
OUTPUTS = {"json": "-oJ", "list": "-oL", "xml": "-oX"}


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> dict[str, Path]:
    """A real masscan run per output format against the namespace's FTP, SSH and HTTP services."""
    if not shutil.which("masscan"):
        pytest.skip("masscan is not installed (Debian: apt install masscan)")
    out = tmp_path_factory.mktemp("masscan")
    files = {}
    for kind, option in OUTPUTS.items():
        files[kind] = out / f"scan.{kind}"
        ports = ",".join(map(str, (*PORTS, 9)))  # 9: nothing listens there
        for _ in range(3):  # masscan's HTTP grab races its own timers: a run that missed it runs again
            # A fresh pair of namespaces a run: masscan's later runs in one pair took ever longer here
            # (5 s, 8, 15, 32, 63), whatever --adapter-port or --connection-timeout it was given.
            with link() as net:
                net.run(
                    "masscan", TARGET_IP, f"-p{ports}", "--banners", "-e", net.iface, "--adapter-ip", ADAPTER_IP,
                    "--router-mac", net.target_mac, "--wait", "2", *HELLO, option, str(files[kind]),
                )  # fmt: skip
            if b"title" in files[kind].read_bytes():
                break
    return files


@pytest.mark.parametrize("kind", OUTPUTS)
def test_a_real_masscan_file_reads_as_banners_of_the_services_it_saw(scanned, kind):
    tool, banners, unreadable = read(scanned[kind])
    assert tool == "masscan" and unreadable == []
    assert {b["port"] for b in banners} == set(PORTS)  # port 9 was closed
    assert {b["ip_str"] for b in banners} == {TARGET_IP} and all(b["transport"] == "tcp" for b in banners)
    assert {b["tags"][0] for b in banners} == {"masscan"}
    assert len({b["_shodan"]["options"]["scan"] for b in banners}) == 1  # one run, one scan id
    by_module = {b["_shodan"]["module"]: b for b in banners if b["_shodan"]["module"]}
    ssh = by_module["ssh"]
    assert (ssh["product"], ssh["version"]) == ("OpenSSH", "9.2p1")
    assert ssh["data"].startswith("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3")
    assert by_module["ftp"]["product"] == "vsftpd" and "[bold red]owned[/]" in by_module["ftp"]["data"]
    http = [b for b in banners if b["_shodan"]["module"] == "http"]
    assert {b["http"].get("title") for b in http} >= {"[b]hi[/b] & bye"}  # entities read, as nmap's import reads them
    assert {b.get("product") for b in http} >= {"nginx"}
    for b in banners:  # masscan's own record of the port is kept
        assert b["tool"]["name"] == "masscan" and str(b["port"]) in json.dumps(b["tool"]["record"])


def test_one_runs_records_of_a_port_are_one_banner(scanned, tmp_path):
    """masscan writes a port's open record, then its grabs seconds later: one banner of the port,
    at the time it was seen open, so that search, host and history agree within a run."""
    for kind, path in scanned.items():
        _, banners, _ = read(path)
        assert sorted(b["port"] for b in banners) == sorted(PORTS), kind
        [ftp] = [b for b in banners if b["port"] == 21]
        records = ftp["tool"]["record"]["ports"]
        assert ftp["product"] == "vsftpd" and records[0].get("status") == "open" and "service" in records[-1]
    import_files(tmp_path / "data", scanned["json"])
    with served(tmp_path / "data") as api:
        history = api.host(TARGET_IP)["data"]
        assert sorted(b["port"] for b in history) == sorted(PORTS)
        assert {b["port"]: b.get("product") for b in history}[21] == "vsftpd"


def test_real_masscan_files_import_and_are_found_by_tag_port_and_product(scanned, tmp_path):
    gz = tmp_path / "scan.list.gz"
    gz.write_bytes(gzip.compress(scanned["list"].read_bytes()))
    said = import_files(tmp_path / "data", scanned["json"], gz, scanned["xml"])
    for name in ("scan.json", "scan.list.gz", "scan.xml"):
        assert f"import: {name}: masscan, " in said, said
    with served(tmp_path / "data") as api:
        assert api.search("tag:masscan")["total"] == len(PORTS)  # a search finds each service's latest banner
        assert api.facet("tag:masscan", "product") == {"OpenSSH": 1, "vsftpd": 1, "nginx": 1}
        assert set(api.facet("tag:masscan", "port")) == set(map(str, PORTS))
        assert api.search("tag:masscan port:22 product:OpenSSH")["total"] == 1
        for path in scanned.values():  # each run is a scan of its own, found by its id
            banners = read(path)[1]
            assert api.search(f"scan:{banners[0]['_shodan']['options']['scan']}")["total"] == len(banners)
        history = api.host(TARGET_IP)["data"]  # the three runs are the host's history
        assert len(history) == sum(len(read(f)[1]) for f in scanned.values())
        assert {b["port"] for b in history} == set(PORTS)
    again = import_files(tmp_path / "data", scanned["json"])  # the same file twice adds nothing
    assert f" 0 new, {len(read(scanned['json'])[1])} already there, 0 bad" in again, again


def test_hostile_masscan_text_is_stored_as_is_and_shown_inert(tmp_path, capsys, monkeypatch):
    # -oJ as older versions write it (each object's line ends in a comma), one line cut short
    path = tmp_path / "hostile.json"
    path.write_bytes((SAMPLES / "masscan-hostile.json").read_bytes())
    assert claimed_by_one(path.read_bytes()) == "masscan"
    said = import_files(tmp_path / "data", path, ok=False)
    assert "hostile.json: line 5: " in said  # the cut line, by its place; the rest loaded
    assert "import: hostile.json: masscan, 4 read, 3 new, 1 bad" in said, said  # 21: open + grab
    with served(tmp_path / "data") as api:
        history = api.host("198.18.3.4")["data"]
        banners = {b["port"]: b for b in history}
        assert len(history) == len(banners) == 3
        assert banners[21]["data"] == "220 [link=file:///etc]x[/link]\x1b]52;c;cHduZWQ=\x07 \x9b31m"
        assert banners[80]["http"]["title"] == "\x1b[2J[bold]t[/bold]"
        assert banners[443]["data"] == "not base64!"  # a certificate that is none is kept as text
        monkeypatch.setenv("SPYGLASS_URL", api.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", api.key)
        assert main(["host", "198.18.3.4", "--history"]) == 0
        out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "[link=file:///etc]x[/link]" in out and "␛" in out  # markup shown as text; escapes as placeholders


def test_masscan_list_and_xml_as_documented():
    for name in ("masscan-list.txt", "masscan-cut.xml"):
        assert claimed_by_one((SAMPLES / name).read_bytes()) == "masscan"
    _, banners, unreadable = read(SAMPLES / "masscan-list.txt")
    assert [(b["port"], b.get("product")) for b in banners] == [(80, None), (22, "Dropbear sshd")]
    assert [u.where for u in unreadable] == ["line 4"]
    _, banners, unreadable = read(SAMPLES / "masscan-cut.xml")
    assert [(b["port"], b.get("version"), b["timestamp"]) for b in banners] == [
        (443, None, "2023-11-14T22:13:20.000000"),
        (22, "8.4p1", "2023-11-14T22:13:21.000000"),
    ]
    assert banners[0]["tool"]["version"] == "1.0-BETA"
    [cut] = unreadable  # the file ends inside a host: said by its place, what came before stands
    assert cut.where == "line 7, column 27" and cut.why.startswith("XML: unclosed token")
