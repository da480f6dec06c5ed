"""A real nmap run imported into every store (conftest.STORES): its services are found, faceted
and filtered by scan like collected banners, and two runs are a host's history."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spyglass.query import parse_facets, parse_strict
from spyglass.server.ingest.importer import import_files

pytestmark = pytest.mark.external  # the importer's worker processes

REAL = Path(__file__).parents[1] / "formats" / "data" / "nmap-loopback.xml"  # tests/formats/nmapfiles.py wrote it
FACETS = "product,ssl.cert.subject.cn,http.title,ssh.fingerprint,tag"


def test_an_nmap_run_is_searched_faceted_and_a_host_history(store, tmp_path):
    later = tmp_path / "later.xml"  # the same command an hour later
    hour_on = lambda m: b'%s="%d"' % (m[1], int(m[2]) + 3600)  # noqa: E731
    later.write_bytes(re.sub(rb'(start|starttime|endtime|time)="(\d+)"', hour_on, REAL.read_bytes()))
    report = import_files(store, [REAL, later], workers=1)
    assert (report.added, report.bad, [f.format for f in report.files]) == (12, 0, ["nmap", "nmap"])

    total, banners, facets = store.search(parse_strict("tag:nmap"), parse_facets(FACETS))
    assert total == 6
    counts = {name: {f["value"]: f["count"] for f in values} for name, values in facets.items()}
    assert counts["tag"] == {"nmap": 6}
    assert counts["product"]["Apache httpd"] == 3
    assert set(counts["ssl.cert.subject.cn"]) == {"nmap.scan.test", "mail.scan.test"}
    assert "Spyglass test & page" in counts["http.title"]
    assert len(counts["ssh.fingerprint"]) == 1
    scans = {b["_shodan"]["options"]["scan"] for b in store.host("127.0.0.1")}
    assert len(scans) == 2 and len(store.host("127.0.0.1")) == 12
    for scan in scans:  # a scan filter sees everything that run found, current or not
        assert store.count(parse_strict(f"scan:{scan}"), [])[0] == 6
