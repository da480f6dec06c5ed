"""zgrab2's JSON lines. zgrab2 is not packaged in Debian, so these records are built here from its
documented output schema (the ``{"ip", "domain", "data": {module: {"status", "protocol", "result",
"timestamp"}}}`` envelope and the http, tls, ssh, ftp, smtp and banner modules' results), with a
real certificate and a real SSH host key made by the test; then they go through ``spyglass
import`` and the backend's search, facets and host, as a tool's file does."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncssh
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from spyglass.cli import main
from tests.formats.scans import claimed_by_one, import_files, read, served

HOSTILE = "[link=file:///etc]x[/link]\x1b]52;c;cHduZWQ=\x07\x9b31m"


def certificate(cn: str) -> bytes:
    """A self-signed certificate (DER) for ``cn``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Ex")])
    now = datetime(2026, 1, 1, tzinfo=UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(2**70 + 5)
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=90))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.DER)


def handshake(*ders: bytes) -> dict:
    """zgrab2's TLS handshake log: the server's hello and its certificates, base64 DER, leaf first."""
    raw = [{"raw": base64.b64encode(d).decode(), "parsed": {"serial_number": "x"}} for d in ders]
    return {
        "server_hello": {
            "version": {"name": "TLSv1.2", "value": 771},
            "cipher_suite": {"hex": "0xC02F", "name": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "value": 49199},
        },
        "server_certificates": {"certificate": raw[0], "chain": raw[1:]},
    }


def entry(protocol: str, result: dict | None, when: str = "2026-02-03T04:05:06Z", **more) -> dict:
    status = "success" if result is not None else "connection-timeout"
    return {"status": status, "protocol": protocol, "result": result, "timestamp": when, **more}


def records(leaf: bytes, ca: bytes, host_key: asyncssh.SSHKey) -> list[dict]:
    kex = {
        "kex_algorithms": ["curve25519-sha256"],
        "host_key_algorithms": ["ssh-ed25519"],
        "client_to_server_ciphers": ["aes128-ctr"],
        "server_to_client_ciphers": ["chacha20-poly1305@openssh.com", "aes128-ctr"],
        "client_to_server_macs": ["hmac-sha2-256"],
        "server_to_client_macs": ["hmac-sha2-256"],
        "client_to_server_compression": ["none"],
        "server_to_client_compression": ["none", "zlib@openssh.com"],
        "first_kex_follows": False,
    }
    blob = host_key.export_public_key("openssh").split()[1].decode()
    response = {
        "status_line": "200 OK",
        "status_code": 200,
        "protocol": {"name": "HTTP/1.1", "major": 1, "minor": 1},
        "headers": {
            "server": ["nginx/1.24.0"],
            "content_type": ["text/html"],
            "unknown": [{"key": "X-A", "value": ["b"]}],
        },
        "body": f"<html><title>{HOSTILE}</title></html>",
        "request": {
            "url": {"scheme": "https", "host": "198.18.8.1:8443", "path": "/"},
            "tls_log": {"handshake_log": handshake(leaf, ca)},
        },
    }
    return [
        {
            "ip": "198.18.8.1",
            "domain": "www.example.test",
            "data": {
                "http": entry("http", {"response": response}),
                "tls": entry("tls", {"handshake_log": handshake(leaf)}, "2026-02-03T04:05:07+01:00"),
                "ssh": entry(
                    "ssh",
                    {
                        "server_id": {
                            "raw": "SSH-2.0-OpenSSH_9.6p1 Ubuntu-3",
                            "version": "2.0",
                            "software": "OpenSSH_9.6p1",
                        },
                        "server_key_exchange": kex,
                        "key_exchange": {
                            "server_host_key": {"raw": blob, "algorithm": "ssh-ed25519", "fingerprint_sha256": "x"}
                        },
                    },
                ),
                "ftp": entry("ftp", {"banner": f"220 ProFTPD 1.3.8 Server {HOSTILE}\r\n"}),
                "smtp": entry("smtp", {"banner": "220 mail ESMTP Postfix\r\n", "ehlo": "250-mail\r\n250 STARTTLS\r\n"}),
                "redis": entry("redis", None),  # nothing answered: no service
                "banner": entry("banner", {"banner": "+OK pop3\r\n"}),  # no port said, none by default
            },
        },
        {"ip": "198.18.8.2", "data": {"pop3": entry("banner", {"banner": "+OK pop3\r\n"}, port=110)}},
    ]


def write(path: Path, lines: list[dict], cut: bool = False) -> Path:
    body = "".join(json.dumps(r) + "\n" for r in lines)
    path.write_text(body + ('{"ip": "198.18.8.3", "data": {"http": {"sta\n' if cut else ""))
    return path


def test_zgrab2_records_become_the_banners_the_crawler_makes_of_those_services(tmp_path):
    leaf, ca = certificate(f"www.example.test{HOSTILE}"), certificate("Example CA")
    key = asyncssh.generate_private_key("ssh-ed25519")
    path = write(tmp_path / "zgrab2.json", records(leaf, ca, key), cut=True)
    assert claimed_by_one(path.read_bytes()) == "zgrab2"
    ported = {"ip": "198.18.8.4", "port": 8080, "data": {"http": entry("http", {})}}  # as newer zgrab2 writes
    assert claimed_by_one(json.dumps(ported).encode()) == "zgrab2"
    tool, banners, unreadable = read(path)
    assert tool == "zgrab2"
    assert [u.where for u in unreadable] == ["line 1 (banner)", "line 3"]
    by = {(b["ip_str"], b["port"]): b for b in banners}
    assert set(by) == {("198.18.8.1", p) for p in (8443, 443, 22, 21, 25)} | {("198.18.8.2", 110)}
    web = by["198.18.8.1", 8443]
    assert web["_shodan"]["module"] == "https" and web["http"]["status"] == 200
    assert web["hostnames"] == ["www.example.test"] and "hostnames" not in by["198.18.8.2", 110]
    assert web["http"]["title"] == HOSTILE  # as the page said it
    assert (web["product"], web["version"], web["http"]["server"]) == ("nginx", "1.24.0", "nginx/1.24.0")
    assert "X-A: b" in web["data"] and web["data"].startswith("HTTP/1.1 200 OK\r\n")
    cert = web["ssl"]["cert"]
    assert cert["subject"]["CN"] == f"www.example.test{HOSTILE}" and cert["serial"] == 2**70 + 5
    assert cert["fingerprint"]["sha256"] == hashlib.sha256(leaf).hexdigest()
    assert web["ssl"]["chain_sha256"] == [hashlib.sha256(d).hexdigest() for d in (leaf, ca)]
    assert web["ssl"]["cipher"]["version"] == "TLSv1.2"
    tls = by["198.18.8.1", 443]
    assert tls["timestamp"] == "2026-02-03T03:05:07.000000"  # UTC
    assert tls["ssl"]["cert"]["issuer"]["CN"] == f"www.example.test{HOSTILE}"
    ssh = by["198.18.8.1", 22]
    assert ssh["ssh"]["fingerprint"] == key.get_fingerprint("md5").removeprefix("MD5:")  # as the crawler's
    assert ssh["ssh"]["type"] == "ssh-ed25519" and ssh["ssh"]["kex"]["encryption_algorithms"][0].startswith("chacha20")
    assert (ssh["product"], ssh["version"]) == ("OpenSSH", "9.6p1") and len(ssh["ssh"]["hassh"]) == 32
    assert by["198.18.8.1", 21]["product"] == "ProFTPD" and HOSTILE in by["198.18.8.1", 21]["data"]
    assert by["198.18.8.1", 25]["product"] == "Postfix smtpd" and "STARTTLS" in by["198.18.8.1", 25]["data"]
    assert by["198.18.8.2", 110]["data"] == "+OK pop3\r\n"
    for b in banners:  # zgrab2's own record of the module, kept
        assert b["tags"] == ["zgrab2"] and len(b["tool"]["record"]["data"]) == 1


@pytest.mark.external
def test_zgrab2_file_imports_is_found_by_its_facets_and_shows_inert(tmp_path, capsys, monkeypatch):
    leaf = certificate(f"www.example.test{HOSTILE}")
    key = asyncssh.generate_private_key("ssh-ed25519")
    path = write(tmp_path / "zgrab2.json", records(leaf, certificate("Example CA"), key))
    said = import_files(tmp_path / "data", path, ok=False)
    assert "import: zgrab2.json: zgrab2, 7 read, 6 new, 1 bad" in said, said
    with served(tmp_path / "data") as api:
        assert api.facet("tag:zgrab2", "product") == {"nginx": 1, "OpenSSH": 1, "ProFTPD": 1, "Postfix smtpd": 1}
        assert api.facet("tag:zgrab2", "ssl.cert.subject.cn") == {f"www.example.test{HOSTILE}": 2}
        assert api.facet("tag:zgrab2", "http.title") == {HOSTILE: 1}
        fingerprint = key.get_fingerprint("md5").removeprefix("MD5:")
        assert api.search(f"ssh.fingerprint:{fingerprint}")["total"] == 1
        monkeypatch.setenv("SPYGLASS_URL", api.url)
        monkeypatch.setenv("SPYGLASS_API_KEY", api.key)
        assert main(["host", "198.18.8.1"]) == 0
        out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "[link=file:///etc]x[/link]" in out and "8443/tcp" in out
