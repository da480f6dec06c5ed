"""The scanner's protocol modules against real services on loopback (tests/scanservers.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl

import mmh3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spyglass.server.scanner.probe import Found, probe
from spyglass.server.scanner.protocols import PORTS, PROTOCOLS
from tests import scanservers as ss

TIMEOUT = 3.0


def _json_safe(found: Found) -> None:
    """A banner is JSON: what a module returns must serialise as it is."""
    json.dumps({"data": found.data, **found.members})


def test_protocols_and_ports_name_real_modules():
    from spyglass.server.grabs import GRABBERS

    assert set(PROTOCOLS) == set(GRABBERS) | {"generic"}
    assert set(PORTS.values()) <= set(GRABBERS)
    assert all(isinstance(p, int) and 0 < p < 65536 for p in PORTS)


async def test_unknown_protocol_is_a_value_error():
    with pytest.raises(ValueError, match="unknown protocol"):
        await probe("127.0.0.1", 1, "gopher")


async def test_closed_port_is_none():
    svc = ss.closed_port()
    assert await probe(svc.host, svc.port, timeout=TIMEOUT) is None
    assert await probe(svc.host, svc.port, "http", timeout=TIMEOUT) is None


async def test_http_fields():
    with ss.http_service() as svc:
        found = await probe(svc.host, svc.port, "http", timeout=TIMEOUT)
    assert found is not None and found.module == "http"
    _json_safe(found)
    http = found.members["http"]
    assert http["status"] == 200
    assert http["title"] == "Spyglass test & page"  # entities decoded
    assert http["server"] == "Apache/2.4.62 (Unix)"
    assert http["location"] == "/home"
    assert [r["location"] for r in http["redirects"]] == ["/"]
    assert http["redirects"][0]["data"].startswith("HTTP/1.1 302")
    assert http["html"] == ss.PAGE.decode()
    assert http["html_hash"] == mmh3.hash(ss.PAGE.decode())
    assert http["robots"] == ss.ROBOTS.decode()
    assert http["robots_hash"] == mmh3.hash(ss.ROBOTS.decode())
    assert http["securitytxt"] is None and http["sitemap"] is None  # 404 pages are not documents
    icon = http["favicon"]
    assert icon["location"] == "/static/icon.png"  # from the page's <link rel="shortcut icon">
    assert icon["hash"] == mmh3.hash(base64.encodebytes(ss.ICON))
    assert base64.b64decode(icon["data"]) == ss.ICON
    assert found.data.startswith("HTTP/1.1 200 OK\r\n") and found.data.endswith("\r\n\r\n")
    assert "Server: Apache/2.4.62 (Unix)" in found.data
    assert found.members["product"] == "Apache httpd"
    assert found.members["version"] == "2.4.62"
    assert found.members["cpe23"] == ["cpe:2.3:a:apache:http_server:2.4.62"]


async def test_http_redirect_off_the_service_is_not_followed():
    from spyglass.server.grabs import http as http_module
    from spyglass.server.grabs.base import Target

    with ss.http_service() as svc:
        t = Target(svc.host, svc.port, TIMEOUT)
        assert http_module.same_service(t, "http://198.51.100.7/", False) is None
        assert http_module.same_service(t, f"http://{svc.host}:{svc.port}/x?y=1", False) == "/x?y=1"
        assert http_module.same_service(t, "/a/../b", False) == "/b"
        assert http_module.same_service(t, "/a b\u00e9", False) == "/a%20b%C3%A9"
        assert http_module.same_service(t, "http://[bad", False) is None
        assert http_module.same_service(t, "i.png", False, "/a/b?c") == "/a/i.png"
        assert http_module.same_service(t, f"http://{svc.host}:99999/", False) is None
        assert http_module.same_service(t, f"https://{svc.host}:{svc.port}/", False) is None
        resp = await http_module.fetch(t, "/away", None)
    assert resp is not None and resp.status == 302


async def test_http_found_by_what_the_service_says():
    with ss.http_service() as svc:
        found = await probe(svc.host, svc.port, timeout=TIMEOUT)  # an unlisted port: sniffed
    assert found is not None and found.module == "http"
    assert found.members["http"]["title"] == "Spyglass test & page"


async def test_https_certificate_and_versions():
    cert = ss.make_cert("tls.scan.test")
    with ss.https_service(cert, minimum=ssl.TLSVersion.TLSv1_2, maximum=ssl.TLSVersion.TLSv1_2) as svc:
        found = await probe(svc.host, svc.port, "https", timeout=TIMEOUT)
    assert found is not None and found.module == "https"
    _json_safe(found)
    tls = found.members["ssl"]
    c = tls["cert"]
    assert c["subject"] == {"CN": "tls.scan.test"}
    assert c["issuer"] == {"CN": "Spyglass Test CA", "O": "Spyglass"}
    assert c["serial"] == cert.serial
    assert c["fingerprint"] == {"sha1": cert.sha1, "sha256": cert.sha256}
    assert c["expired"] is False
    assert c["sig_alg"] == "ecdsa-with-SHA256"
    assert c["pubkey"] == {"type": "ec", "bits": 256}
    assert c["version"] == 2
    assert c["issued"].endswith("Z") and len(c["issued"]) == 15
    assert tls["chain_sha256"][0] == cert.sha256
    assert tls["chain"][0].startswith("-----BEGIN CERTIFICATE-----")
    assert tls["cipher"]["version"] == "TLSv1.2"
    assert tls["alpn"] == []  # http.server negotiates none
    assert "TLSv1.2" in tls["versions"]
    assert "-TLSv1.3" in tls["versions"]
    assert all(v.lstrip("-") in ("TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3") for v in tls["versions"])
    # and the HTTP inside
    assert found.members["http"]["title"] == "Spyglass test & page"
    assert found.members["http"]["robots"] == ss.ROBOTS.decode()


async def test_https_chain_and_expired():
    cert = ss.make_cert("old.scan.test", expired=True)
    with ss.https_service(cert, alpn=["http/1.1", "h2"]) as svc:
        found = await probe(svc.host, svc.port, timeout=TIMEOUT)  # sniffed: a GET gets no HTTP answer
    assert found is not None and found.module == "https"
    tls = found.members["ssl"]
    assert tls["cert"]["expired"] is True
    assert tls["alpn"] == ["h2", "http/1.1"]  # both, though a handshake offering both learns one
    assert "TLSv1.3" in tls["versions"] and "TLSv1.2" in tls["versions"]
    assert tls["cipher"]["version"] == "TLSv1.3"
    if len(tls["chain"]) > 1:  # the whole chain where this Python exposes it
        assert tls["chain"][1] != tls["chain"][0] and len(tls["chain_sha256"]) == 2


async def test_ssh_fields():
    with ss.ssh_service() as svc:
        found = await probe(svc.host, svc.port, "ssh", timeout=TIMEOUT)
        # slow (the timeout): the sniff waits for a greeting, then for the end of the answer to its GET,
        # and a Redis server answers an error and keeps the connection open
        sniffed = await probe(svc.host, svc.port, timeout=TIMEOUT)
    assert found is not None and found.module == "ssh"
    assert sniffed is not None and sniffed.module == "ssh"
    _json_safe(found)
    ssh = found.members["ssh"]
    key = svc.facts["key"]
    assert ssh["type"] == "ssh-ed25519"
    assert ssh["fingerprint"] == svc.facts["fingerprint"]
    assert ssh["key"] == key.export_public_key().split()[1].decode()
    kex = ssh["kex"]
    assert "ssh-ed25519" in kex["server_host_key_algorithms"]
    assert kex["kex_algorithms"] and kex["encryption_algorithms"] and kex["mac_algorithms"]
    assert "none" in kex["compression_algorithms"]
    assert ssh["cipher"] in kex["encryption_algorithms"] and ssh["mac"] in kex["mac_algorithms"]
    assert len(ssh["hassh"]) == 32
    assert found.data.startswith(svc.facts["version"] + "\n")
    assert f"Fingerprint: {svc.facts['fingerprint']}" in found.data
    assert "\nKex Algorithms:\n\t" in found.data
    assert found.members["product"] == "AsyncSSH"
    import asyncssh

    assert found.members["version"] == asyncssh.__version__


async def test_ssh_rsa_host_key():
    with ss.ssh_service("ssh-rsa") as svc:
        found = await probe(svc.host, svc.port, "ssh", timeout=TIMEOUT)
    assert found is not None
    assert found.members["ssh"]["type"] in ("ssh-rsa", "rsa-sha2-256", "rsa-sha2-512")
    assert found.members["ssh"]["fingerprint"] == svc.facts["fingerprint"]


async def test_ftp_fields():
    with ss.ftp_service() as svc:
        found = await probe(svc.host, svc.port, "ftp", timeout=TIMEOUT)
        # slow (the timeout): the sniff waits for a greeting, then for the end of the answer to its GET,
        # and a Redis server answers an error and keeps the connection open
        sniffed = await probe(svc.host, svc.port, timeout=TIMEOUT)
    assert found is not None and found.module == "ftp"
    assert sniffed is not None and sniffed.module == "ftp"
    _json_safe(found)
    ftp = found.members["ftp"]
    assert ftp["anonymous"] is True
    assert "UTF8" in ftp["features"] and "MDTM" in ftp["features"]
    assert "MLST" in ftp["features"] and ftp["features"]["MLST"]["parameters"]
    assert found.data.startswith("220 ")
    assert "230 " in found.data
    import pyftpdlib

    assert found.members["product"] == "pyftpdlib"
    assert found.members["version"] == pyftpdlib.__ver__


async def test_ftp_without_anonymous():
    with ss.ftp_service(anonymous=False) as svc:
        found = await probe(svc.host, svc.port, "ftp", timeout=TIMEOUT)
    assert found is not None and found.members["ftp"]["anonymous"] is False
    assert "530 " in found.data


async def test_smtp_fields_and_starttls():
    cert = ss.make_cert("mail.scan.test")
    with ss.smtp_service(cert) as svc:
        found = await probe(svc.host, svc.port, "smtp", timeout=TIMEOUT)
        # slow (the timeout): the sniff waits for a greeting, then for the end of the answer to its GET,
        # and a Redis server answers an error and keeps the connection open
        sniffed = await probe(svc.host, svc.port, timeout=TIMEOUT)
    assert found is not None and found.module == "smtp"
    assert sniffed is not None and sniffed.module == "smtp"
    _json_safe(found)
    smtp = found.members["smtp"]
    assert smtp["starttls"] is True
    assert "STARTTLS" in smtp["extensions"] and any(e.startswith("SIZE") for e in smtp["extensions"])
    assert found.data.startswith("220 mail.scan.test ")
    assert "250-mail.scan.test" in found.data
    assert found.members["ssl"]["cert"]["subject"] == {"CN": "mail.scan.test"}
    assert found.members["ssl"]["cert"]["fingerprint"]["sha256"] == cert.sha256
    assert found.members["product"] == "aiosmtpd"


async def test_smtp_without_tls():
    with ss.smtp_service() as svc:
        found = await probe(svc.host, svc.port, "smtp", timeout=TIMEOUT)
    assert found is not None and found.members["smtp"]["starttls"] is False
    assert "ssl" not in found.members


async def test_redis_fields():
    with ss.redis_service() as svc:
        found = await probe(svc.host, svc.port, "redis", timeout=TIMEOUT)
        # slow (the timeout): the sniff waits for a greeting, then for the end of the answer to its GET,
        # and a Redis server answers an error and keeps the connection open
        sniffed = await probe(svc.host, svc.port, timeout=TIMEOUT)
    assert found is not None and found.module == "redis"
    assert sniffed is not None and sniffed.module == "redis"
    _json_safe(found)
    assert found.data == ss.REDIS_INFO
    redis = found.members["redis"]
    assert redis["server"]["redis_version"] == "7.2.4"
    assert redis["server"]["os"] == "Linux 6.1.0 x86_64"
    assert redis["clients"] == {"connected_clients": "1"}
    assert redis["keyspace"]["db0"] == "keys=3,expires=0,avg_ttl=0"
    assert found.members["product"] == "Redis key-value store"
    assert found.members["version"] == "7.2.4"
    assert found.members["cpe23"] == ["cpe:2.3:a:redis:redis:7.2.4"]


async def test_redis_with_password():
    with ss.redis_service(password="s3cret") as svc:
        found = await probe(svc.host, svc.port, "redis", timeout=TIMEOUT)
    assert found is not None and found.module == "redis"
    assert found.data == "-NOAUTH Authentication required.\r\n"
    assert "redis" not in found.members


async def test_wrong_protocol_falls_back_to_what_the_service_is():
    with ss.ssh_service() as svc:
        found = await probe(svc.host, svc.port, "http", timeout=TIMEOUT)
    assert found is not None and found.module == "ssh"


@pytest.mark.parametrize("protocol", [None, "http", "https", "ssh", "ftp", "smtp", "redis"])
async def test_garbage_is_recorded_by_generic(protocol):
    with ss.hostile_service("garbage") as svc:
        found = await probe(svc.host, svc.port, protocol, timeout=1.0)
    assert found is not None and found.module == "generic"
    assert 0 < len(found.data.encode()) <= 4 * 3000  # escaped bytes, bounded by what was sent
    _json_safe(found)


@pytest.mark.parametrize("protocol", [None, "http", "https", "ssh", "ftp", "smtp", "redis"])
async def test_flood_is_bounded(protocol):
    from spyglass.server.grabs.base import MAX_READ

    with ss.hostile_service("flood") as svc:
        found = await probe(svc.host, svc.port, protocol, timeout=1.0)
    assert found is not None and found.module == "generic"
    assert len(found.data) <= MAX_READ


@pytest.mark.parametrize("protocol", [None, "http", "https", "ssh", "ftp", "smtp", "redis"])
async def test_a_port_that_accepts_and_says_nothing_is_open(protocol):
    """As ``nmap -sT`` reports it: the connection was accepted, so the port is open, with empty data.
    Slow (1-1.5 s): the timeout applies to each connection of the probe (the module's, the sniff's,
    the TLS attempt's), and a silent service makes every one of them wait it out."""
    with ss.hostile_service("silent") as svc:
        found = await probe(svc.host, svc.port, protocol, timeout=0.5)
    assert found is not None and (found.module, found.data) == ("generic", "")


@pytest.mark.parametrize("protocol", [None, "http", "https", "ssh", "ftp", "smtp", "redis"])
async def test_a_reset_on_accept_says_nothing(protocol):
    """Closed, or open with nothing said, depending on whether the reset beats the connect's check."""
    with ss.hostile_service("reset") as svc:
        found = await probe(svc.host, svc.port, protocol, timeout=0.5)
    assert found is None or (found.module, found.data) == ("generic", "")


async def test_drip_ends_at_the_deadline():
    with ss.hostile_service("drip") as svc:
        found = await probe(svc.host, svc.port, "http", timeout=0.5)
    assert found is not None and found.module == "generic" and set(found.data) == {"x"}


async def test_fake_ssh_keeps_the_version():
    with ss.hostile_service("fake-ssh") as svc:
        found = await probe(svc.host, svc.port, timeout=1.0)
    assert found is not None and found.module == "ssh"
    assert found.data.startswith("SSH-2.0-Fake_1.0\n")
    assert found.members["product"] == "Fake" and found.members["version"] == "1.0"
    assert "kex" not in found.members["ssh"]


async def test_a_greeting_no_module_knows_is_generic():
    async def pop3(reader, writer):
        try:
            writer.write(b"+OK POP3 server ready <1896.697170952@dbc.test>\r\n")
            await writer.drain()
            await reader.read(1024)
            writer.write(b"-ERR unknown command\r\n")
            await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    with ss.asyncio_service(pop3) as svc:
        asked_redis = await probe(svc.host, svc.port, "redis", timeout=TIMEOUT)
        found = await probe(svc.host, svc.port, timeout=TIMEOUT)
    for f in (asked_redis, found):
        assert f is not None and f.module == "generic"
        assert f.data == "+OK POP3 server ready <1896.697170952@dbc.test>\r\n"


async def test_ipv6_loopback():
    import socket

    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
            port = s.getsockname()[1]
    except OSError:
        pytest.skip("no IPv6 loopback here")
    assert await probe("::1", port, timeout=TIMEOUT) is None


async def test_generic_when_asked_records_the_greeting_only():
    with ss.ssh_service() as svc:
        found = await probe(svc.host, svc.port, "generic", timeout=TIMEOUT)
    assert found is not None and found.module == "generic"
    assert found.data == svc.facts["version"] + "\r\n" and found.members == {}


class _Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


# What a hostile service might send: junk, or a protocol's opening followed by junk.
_openings = st.sampled_from(
    [
        b"",
        b"SSH-2.0-X\r\n",
        b"SSH-2.0-X\r\n\x00\x00\x01\x00\x04\x14",  # a KEXINIT packet's start
        b"220 ",
        b"220-x\r\n220 ok\r\n211-",
        b"HTTP/1.1 200 OK\r\n",
        b"HTTP/1.1 301 Moved\r\nLocation: /x\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.1 302 Found\r\nLocation: http://[bad\r\nContent-Length: 0\r\n\r\n",
        b'HTTP/1.0 200 OK\r\n\r\n<link rel=icon href="http://127.0.0.1:99999/">',
        b"$100\r\n",
        b"-ERR",
        b"\x15\x03",
    ]
)
_replies = st.tuples(_openings, st.binary(max_size=600)).map(lambda t: t[0] + t[1])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(greeting=_replies, answer=_replies, protocol=st.sampled_from([None, *sorted(PROTOCOLS)]))
def test_any_reply_is_a_result_never_an_error(greeting, answer, protocol):
    """A service that sends ``greeting`` on connect and ``answer`` to anything, then closes: the
    probe returns a Found (JSON-safe) or None, and no module fails with an error it logs. Slow (about
    10 s): 40 services, and a probe of one that stays quiet waits out its 0.3 s timeout per step."""

    async def handle(reader, writer):
        try:
            if greeting:
                writer.write(greeting)
                await writer.drain()
            if await reader.read(4096):
                writer.write(answer)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    recorder = _Recorder()
    logging.getLogger("spyglass.server.scanner").addHandler(recorder)
    try:
        with ss.asyncio_service(handle) as svc:
            found = asyncio.run(probe(svc.host, svc.port, protocol, timeout=0.3))
    finally:
        logging.getLogger("spyglass.server.scanner").removeHandler(recorder)
    assert not recorder.records, [r.getMessage() for r in recorder.records]
    if found is not None:
        assert found.module in PROTOCOLS
        _json_safe(found)
