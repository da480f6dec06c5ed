"""Certificates as scanners hand them over: masscan's copies cut short and its leaf and CA grabs of
one port (masscan's -oJ records as it writes them), and certificates with a serial that is not
positive (RFC 5280 forbids it; servers send it), made by openssl, in zgrab2's and masscan's records."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from tests.formats.scans import import_files, read
from tests.formats.test_zgrab2 import certificate, entry, handshake


def masscan_json(path: Path, ip: str, grabs: list[tuple[int, str, bytes]]) -> Path:
    """masscan's -oJ: a port's open record, then its grabs (name, bytes as base64) seconds later."""
    lines = []
    for port in dict.fromkeys(p for p, _, _ in grabs):
        lines.append({"ip": ip, "timestamp": "1700000000", "ports": [{"port": port, "proto": "tcp", "status": "open"}]})
    for port, name, der in grabs:
        service = {"name": name, "banner": base64.b64encode(der).decode()}
        lines.append(
            {"ip": ip, "timestamp": "1700000003", "ports": [{"port": port, "proto": "tcp", "service": service}]}
        )
    path.write_text("[\n" + "\n,\n".join(json.dumps(line) for line in lines) + "\n]\n")
    return path


def test_a_cut_certificate_gives_no_fingerprint_and_a_chain_is_leaf_first(tmp_path):
    leaf, ca = certificate("www.example.test"), certificate("Example CA")
    grabs = [(443, "X509", leaf[: len(leaf) // 2]), (8443, "X509", leaf), (8443, "X509CA", ca)]
    _, banners, unreadable = read(masscan_json(tmp_path / "scan.json", "198.18.4.4", grabs))
    assert unreadable == []
    by = {b["port"]: b for b in banners}
    assert "ssl" not in by[443]  # a SHA-256 of cut bytes would match no certificate anywhere
    whole = by[8443]["ssl"]
    assert whole["cert"]["subject"]["CN"] == "www.example.test"  # the leaf's, not the CA's
    assert whole["chain_sha256"] == [hashlib.sha256(d).hexdigest() for d in (leaf, ca)]


@pytest.mark.external
@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl is not installed")
def test_a_serial_that_is_not_positive_is_read_without_a_warning(tmp_path):
    ders = {}
    for serial in ("0", "-5"):
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", str(tmp_path / "key.pem"), "-out", str(tmp_path / "cert.pem"), "-subj", f"/CN=s{serial}",
             "-days", "30", "-set_serial", serial],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        ders[int(serial)] = ssl.PEM_cert_to_DER_cert((tmp_path / "cert.pem").read_text())
    zgrab2 = tmp_path / "zgrab2.json"
    tls = {"tls": entry("tls", {"handshake_log": handshake(ders[0])})}
    zgrab2.write_text(json.dumps({"ip": "198.18.4.5", "data": tls}) + "\n")
    masscan = masscan_json(tmp_path / "scan.json", "198.18.4.6", [(443, "X509", ders[-5])])
    said = import_files(tmp_path / "data", zgrab2, masscan)
    assert "Warning" not in said, said  # (cryptography's, with its source paths)
    assert "zgrab2, 1 read, 1 new, 0 bad" in said and "masscan, 1 read, 1 new, 0 bad" in said
    assert [b["ssl"]["cert"]["serial"] for b in read(zgrab2)[1] + read(masscan)[1]] == [0, -5]
