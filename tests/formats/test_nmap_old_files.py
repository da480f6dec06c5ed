"""nmap files as older nmap and Zenmap wrote them: a real nmap 7.93 run (tests/formats/data, made by
tests/formats/nmapfiles.py) saved as Zenmap saved it (declared ``iso-8859-1``, one byte per
character), and with its OS as nmap 5 wrote it (``<osclass>`` elements and no ``<osmatch>``)."""

from __future__ import annotations

import io

from spyglass.server.ingest.formats.nmap import Nmap
from tests.formats.test_properties import REAL

HOSTNAMES = '<hostname name="localhost" type="PTR"/>'
# nmap 5's <os> where no fingerprint matched exactly: the classes it guessed, most accurate first.
NMAP5_OS = (
    '<os><portused state="open" proto="tcp" portid="22"/>'
    '<osclass type="general purpose" vendor="Linux" osfamily="Linux" osgen="2.4.X" accuracy="90"/>'
    '<osclass type="general purpose" vendor="Linux" osfamily="Linux" osgen="2.6.X" accuracy="95"/>'
    '<osclass type="WAP" vendor="Netgear" osfamily="embedded" accuracy="88"/></os>'
)


def banners(data: bytes) -> list[dict]:
    out = list(Nmap().records(io.BytesIO(data)))
    assert all(isinstance(b, dict) for b in out), [b for b in out if not isinstance(b, dict)]
    return out  # type: ignore[return-value]


def test_a_file_declared_iso_8859_1_with_a_byte_past_ascii_loads_whole():
    text = REAL.read_text(encoding="utf-8").replace('encoding="UTF-8"', 'encoding="iso-8859-1"', 1)
    text = text.replace(HOSTNAMES, HOSTNAMES + '<hostname name="caf\u00e9.example.org" type="user"/>', 1)
    zenmap = text.encode("latin-1", "xmlcharrefreplace")  # as Zenmap wrote it: é is the byte E9
    assert b"caf\xe9" in zenmap
    read = banners(zenmap)
    assert len(read) == len(banners(REAL.read_bytes())) == 6
    assert all(b["hostnames"] == ["localhost", "caf\u00e9.example.org"] for b in read)
    titles = {b["http"].get("title") for b in read if "http" in b} - {None}
    assert titles == {b["http"].get("title") for b in banners(REAL.read_bytes()) if "http" in b} - {None}


def test_nmap5_os_classes_without_a_match_reach_os():
    with_os = REAL.read_bytes().replace(b"</ports>", b"</ports>" + NMAP5_OS.encode(), 1)
    read = banners(with_os)
    assert len(read) == 6 and {b["os"] for b in read} == {"Linux 2.6.X"}
    windows = NMAP5_OS.replace(
        'vendor="Linux" osfamily="Linux" osgen="2.6.X"', 'vendor="Microsoft" osfamily="Windows" osgen="XP"'
    )
    read = banners(REAL.read_bytes().replace(b"</ports>", b"</ports>" + windows.encode(), 1))
    assert {b["os"] for b in read} == {"Microsoft Windows XP"}


def test_os_classes_are_kept_most_accurate_first_each_once_whatever_nmap_wrote():
    """nmap 5's bare classes, and nmap 7's in matches (a class without an accuracy takes its
    match's; one repeated by a later match is kept once, at its best), odd attributes skipped."""
    read = banners(REAL.read_bytes().replace(b"</ports>", b"</ports>" + NMAP5_OS.encode(), 1))
    linux = {"vendor": "Linux", "family": "Linux", "type": "general purpose"}
    assert all(b["os_classes"] == read[0]["os_classes"] for b in read)
    assert read[0]["os_classes"] == [
        {**linux, "generation": "2.6.X", "accuracy": 95},
        {**linux, "generation": "2.4.X", "accuracy": 90},
        {"vendor": "Netgear", "family": "embedded", "type": "WAP", "accuracy": 88},
    ]
    nmap7 = (
        '<os><osmatch name="Linux 4.15 - 5.8" accuracy="96" line="1">'
        '<osclass type="general purpose" vendor="Linux" osfamily="Linux" osgen="4.X"/>'
        '<osclass type="general purpose" vendor="Linux" osfamily="Linux" osgen="5.X" accuracy="high"/></osmatch>'
        '<osmatch name="Linux 5.0" accuracy="98" line="2">'
        '<osclass type="general purpose" vendor="Linux" osfamily="Linux" osgen="5.X" accuracy="98"/>'
        '<osclass type=" " vendor="" accuracy="100"/><osclass vendor="Acme" accuracy="250"/></osmatch></os>'
    )
    [first, *_] = banners(REAL.read_bytes().replace(b"</ports>", b"</ports>" + nmap7.encode(), 1))
    assert first["os"] == "Linux 5.0"
    assert first["os_classes"] == [
        {**linux, "generation": "5.X", "accuracy": 98},
        {**linux, "generation": "4.X", "accuracy": 96},
        {"vendor": "Acme"},
    ]
