"""``domains`` by the public suffix list (the package's own copy, never fetched): a real nmap 7.93
run (tests/formats/data) with the names a user gave nmap, and a zgrab2 record of a named target."""

from __future__ import annotations

import io
import json

from spyglass.server.ingest.formats.nmap import Nmap
from tests.formats.scans import read
from tests.formats.test_properties import REAL
from tests.formats.test_zgrab2 import entry

NAMES = ["www.bbc.co.uk", "shop.example.com.au", "x.github.io", "printer", "10.0.0.1", "co.uk"]


def test_nmap_hostnames_give_their_registered_domains():
    given = "".join(f'<hostname name="{n}" type="user"/>' for n in NAMES)
    xml = REAL.read_bytes().replace(b"</hostnames>", given.encode() + b"</hostnames>", 1)
    banners = list(Nmap().records(io.BytesIO(xml)))
    assert banners and all(b["domains"] == ["bbc.co.uk", "example.com.au", "github.io"] for b in banners)


def test_a_zgrab2_target_name_gives_its_domain(tmp_path):
    path = tmp_path / "zgrab2.json"
    grab = {"banner": "220 mail ESMTP\r\n"}
    lines = [{"ip": "198.18.7.1", "domain": "mail.example.co.uk", "data": {"smtp": entry("smtp", grab)}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    [banner] = read(path)[1]
    assert banner["hostnames"] == ["mail.example.co.uk"] and banner["domains"] == ["example.co.uk"]
