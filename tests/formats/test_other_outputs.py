"""The scanners' other outputs, from real runs: masscan's -oD (NDJSON) and -oG (grepable) and zmap's
-O json are read like their other outputs; masscan's -oB (binary), zmap's default output (addresses
alone), nmap's -oN/-oG and XML of another tool are named, with what to run instead, not reported
line by line as bad banner JSON lines. masscan and zmap run in a network namespace
(tests/formats/netns.py), nmap on loopback."""

from __future__ import annotations

import base64
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.formats.netns import ADAPTER_IP, PORTS, SCANNER_IP, TARGET_IP, link
from tests.formats.nmapfiles import NMAP
from tests.formats.scans import claimed_by_one, import_files, read

pytestmark = pytest.mark.external  # masscan and zmap in a network namespace

HELLO = ["--hello-string[80]", base64.b64encode(b"GET / HTTP/1.0\r\n\r\n").decode()]
MASSCAN = {"ndjson": "-oD", "grepable": "-oG", "binary": "-oB"}


def every_port(path: Path) -> bool:
    _, banners, _ = read(path)
    return {b["port"] for b in banners} == set(PORTS)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> dict[str, Path]:
    if not (shutil.which("masscan") and shutil.which("zmap")):
        pytest.skip("masscan and zmap are not installed (Debian: apt install masscan zmap)")
    out = tmp_path_factory.mktemp("outputs")
    files = {}
    for kind, option in MASSCAN.items():
        files[kind] = out / f"scan.{kind}"
        for _ in range(3):  # masscan's HTTP grab races its own timers, and on a busy machine a port's
            # answer can come too late: a run that missed either runs again
            with link() as net:
                net.run(
                    "masscan", TARGET_IP, f"-p{','.join(map(str, PORTS))}", "--banners", "-e", net.iface,
                    "--adapter-ip", ADAPTER_IP, "--router-mac", net.target_mac, "--wait", "2", *HELLO,
                    option, str(files[kind]),
                )  # fmt: skip
            if kind == "binary" or (b"title" in files[kind].read_bytes() and every_port(files[kind])):
                break
    zmap = ["zmap", "-b", "/dev/null", "-c", "1", "-q", "-p", "22", "-S", SCANNER_IP]
    files["zmap-default"], files["zmap-json"] = out / "zmap.txt", out / "zmap.json"
    fields = "saddr,sport,classification,success,timestamp-str"
    with link() as net:
        zmap += ["-i", net.iface, "-G", net.target_mac]
        for options in (
            ["-o", str(files["zmap-default"])],
            ["-O", "json", "-f", fields, "-o", str(files["zmap-json"])],
        ):
            for tries_left in reversed(range(3)):
                try:  # Debian's zmap 2.1.1 now and then aborts on an assertion of its own (constraint.c:231)
                    net.run(*zmap, *options, f"{TARGET_IP}/32")
                    break
                except AssertionError:
                    if not tries_left:
                        raise
    return files


@pytest.mark.parametrize("kind", ["ndjson", "grepable"])
def test_masscan_ndjson_and_grepable_read_as_its_json(scanned, kind):
    tool, banners, unreadable = read(scanned[kind])
    assert tool == "masscan" and unreadable == []
    by = {b["port"]: b for b in banners}
    assert sorted(by) == sorted(PORTS)  # a banner a port: its open record and its grabs
    assert (by[22]["product"], by[22]["version"]) == ("OpenSSH", "9.2p1")
    assert by[21]["product"] == "vsftpd" and by[80]["http"]["title"] == "[b]hi[/b] & bye"


def test_zmap_json_reads_as_its_csv(scanned):
    tool, banners, unreadable = read(scanned["zmap-json"])
    assert tool == "zmap" and unreadable == []
    [ssh] = banners
    assert (ssh["ip_str"], ssh["port"], ssh["transport"]) == (TARGET_IP, 22, "tcp")
    assert (
        ssh["tool"]["record"]["success"] == 1 and ssh["timestamp"][:19] == ssh["tool"]["record"]["timestamp-str"][:19]
    )


def test_outputs_not_read_are_named_with_what_to_run(scanned, tmp_path):
    other = tmp_path / "report.xml"
    other.write_text(
        '<?xml version="1.0"?>\n<!-- another tool -->\n<NessusClientData_v2><Report/></NessusClientData_v2>\n'
    )
    files = [scanned["binary"], scanned["zmap-default"], other]
    if NMAP:
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        base = tmp_path / "nmap"
        subprocess.run([NMAP, "-sT", "-p", str(port), "-oA", str(base), "127.0.0.1"], check=True, timeout=120)
        files += [base.with_suffix(".nmap"), base.with_suffix(".gnmap")]
    names = [claimed_by_one(f.read_bytes()[:65536]) for f in files]
    assert names[:3] == ["masscan binary (-oB)", "addresses alone", "XML"]
    assert names[3:] == ["nmap text (-oN/-oG)"] * (len(files) - 3)
    said = import_files(tmp_path / "data", *files, ok=False)
    assert "banner JSON lines" not in said and "more characters]" not in said, said  # (said whole)
    assert f"{files[0].name}: the whole file: masscan's binary output is not read here: turn it into JSON" in said
    assert "masscan --readscan FILE -oJ FILE.json" in said and "run zmap with -f saddr,sport" in said
    assert "this import reads nmap's and masscan's -oX XML" in said
    assert not NMAP or "run nmap with -oX FILE.xml" in said
