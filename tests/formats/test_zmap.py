"""zmap's CSV, from Debian's zmap run by the test against services in a network namespace of its
own (raw packets never leave the veth pair it creates), then through ``spyglass import`` and the
backend's search. Where no namespace can be made the real runs are skipped, with the reason, and
the hand-written files of zmap's documented CSV below still run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from spyglass.cli import main
from spyglass.server.ingest.formats.known import format_of
from tests.formats.netns import SCANNER_IP, TARGET_IP, link
from tests.formats.scans import claimed_by_one, import_files, read, served

pytestmark = pytest.mark.external  # zmap in a network namespace, spyglass import as a process

FIELDS = "saddr,daddr,sport,dport,seqnum,acknum,window,classification,success,repeat,cooldown,timestamp-str"


@pytest.fixture(scope="module")
def scanned(tmp_path_factory) -> dict[str, Path]:
    """zmap's SYN scan of port 22 with many fields (its failures kept too), and of port 80 with
    ``saddr,sport`` and zmap's own filter."""
    if not shutil.which("zmap"):
        pytest.skip("zmap is not installed (Debian: apt install zmap)")
    out = tmp_path_factory.mktemp("zmap")
    runs = {
        "ssh.csv": ["-p", "22", "-f", FIELDS, "--output-filter=success = 1 || success = 0"],
        "web.csv": ["-p", "80", "-f", "saddr,sport"],
    }
    with link() as net:
        for name, options in runs.items():
            net.run(
                "zmap", "-i", net.iface, "-G", net.target_mac, "-S", SCANNER_IP, "-b", "/dev/null", "-c", "1",
                "-q", *options, "-o", str(out / name), f"{TARGET_IP}/32",
            )  # fmt: skip
    return {name: out / name for name in runs}


def test_real_zmap_csv_reads_as_the_open_ports(scanned):
    tool, banners, unreadable = read(scanned["ssh.csv"])
    assert tool == "zmap" and unreadable == []
    [ssh] = banners
    assert (ssh["ip_str"], ssh["port"], ssh["transport"]) == (TARGET_IP, 22, "tcp")
    assert ssh["tags"] == ["zmap"] and ssh["_shodan"]["crawler"] == "zmap"
    record = ssh["tool"]["record"]  # every field zmap wrote, as it wrote it
    assert record["classification"] == "synack" and record["daddr"] == SCANNER_IP
    assert ssh["timestamp"][:19] == record["timestamp-str"][:19]  # the response's own time
    [web] = read(scanned["web.csv"])[1]
    assert web["port"] == 80 and web["tool"]["record"] == {"saddr": TARGET_IP, "sport": "80"}


def test_real_zmap_files_import_and_are_found(scanned, tmp_path):
    said = import_files(tmp_path / "data", *scanned.values())
    assert "import: ssh.csv: zmap, 1 read, 1 new, 0 bad" in said, said
    with served(tmp_path / "data") as api:
        assert api.facet("tag:zmap", "port") == {"22": 1, "80": 1}
        scan = read(scanned["ssh.csv"])[1][0]["_shodan"]["options"]["scan"]
        assert [m["port"] for m in api.search(f"scan:{scan}")["matches"]] == [22]


def test_zmap_csv_as_documented_with_and_without_a_header(tmp_path):
    headed = tmp_path / "headed.csv"
    headed.write_bytes(
        b"saddr,sport,classification,success,repeat,timestamp-ts,timestamp-us\n"
        b"198.18.6.1,443,synack,1,0,1700000000,250000\n"
        b"198.18.6.1,443,synack,1,1,1700000001,0\n"  # a repeat: the same service again
        b"198.18.6.2,443,rst,0,0,1700000000,0\n"
        b"198.18.6.3,http,synack,1,0,1700000000,0\n"
        b"198.18.6.4,443\n"
    )
    headerless = tmp_path / "headerless.csv"
    headerless.write_bytes(b"198.18.6.5,8080\n198.18.6.6,8443\n")
    for path in (headed, headerless):
        assert claimed_by_one(path.read_bytes()) == "zmap"
    _, banners, unreadable = read(headed)
    assert [(b["ip_str"], b["port"], b["timestamp"]) for b in banners] == [
        ("198.18.6.1", 443, "2023-11-14T22:13:20.250000")
    ]
    assert [u.where for u in unreadable] == ["line 5", "line 6"]
    _, banners, _ = read(headerless)  # no time in the file: the time it was read, one for the file
    assert [(b["ip_str"], b["port"]) for b in banners] == [("198.18.6.5", 8080), ("198.18.6.6", 8443)]
    assert len({b["timestamp"] for b in banners}) == 1
    default = format_of(b"198.18.6.7\n198.18.6.8\n")  # zmap's default output: addresses, no port
    assert default is not None and default.name == "addresses alone"  # named, not read (test_other_outputs.py)


def test_hostile_zmap_fields_are_stored_as_is_and_shown_inert(tmp_path, capsys, monkeypatch):
    path = tmp_path / "hostile.csv"
    path.write_bytes(
        b'saddr,sport,classification,success,data\n198.18.6.9,53,udp,1,"\x1b]52;c;cHduZWQ=\x07[bold]x[/bold]"\n'
    )
    import_files(tmp_path / "data", path)
    with served(tmp_path / "data") as api:
        [banner] = api.host("198.18.6.9")["data"]
        assert banner["transport"] == "udp"
        assert banner["tool"]["record"]["data"] == "\x1b]52;c;cHduZWQ=\x07[bold]x[/bold]"
        monkeypatch.setenv("SPYGLASS_URL", api.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", api.key)
        assert main(["host", "198.18.6.9"]) == 0
        out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "53/udp" in out
