"""What the scanner's modules extract is searchable with the seed's filters once it is a banner.

The crawler (not this test) builds whole banners; here the members of real loopback services go
into minimal banners so that the index and the client read them as they read the original's.
"""

from __future__ import annotations

import pytest

from spyglass.client import Clients
from spyglass.server.scanner.probe import probe
from tests import scanservers as ss
from tests.conftest import backend_with


def _banner(found, port: int, n: int) -> dict:
    return {
        "ip_str": f"127.0.0.{n}",
        "ip": 0x7F000000 + n,
        "port": port,
        "transport": "tcp",
        "timestamp": f"2026-11-23T10:00:0{n}.000000",
        "data": found.data,
        "_intel": {"id": f"test-{n}", "module": found.module, "crawler": "test", "ptr": False, "options": {}},
        **found.members,
    }


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    import asyncio

    cert = ss.make_cert("tls.scan.test")

    async def scan():
        with ss.https_service(cert) as tls, ss.ssh_service() as ssh, ss.redis_service() as redis:
            found = [
                await probe(tls.host, tls.port, "https", timeout=3),
                await probe(ssh.host, ssh.port, "ssh", timeout=3),
                await probe(redis.host, redis.port, "redis", timeout=3),
            ]
            return found, ssh.facts["fingerprint"]

    found, fingerprint = asyncio.run(scan())
    assert all(found)
    banners = [_banner(f, port, n) for n, (f, port) in enumerate(zip(found, (443, 22, 6379), strict=True), 1)]
    with backend_with(tmp_path_factory.mktemp("scan-index"), banners) as backend:
        yield backend, cert, fingerprint, found


@pytest.fixture
async def client(scanned):
    backend = scanned[0]
    async with Clients.from_profile(backend.profile(backend.key("member"))) as c:
        yield c


async def test_tls_and_http_members_are_searchable(scanned, client):
    _, cert, _, found = scanned
    favicon = found[0].members["http"]["favicon"]["hash"]
    for query in (
        f"ssl.cert.serial:{cert.serial}",
        f"ssl.cert.fingerprint:{cert.sha256}",
        "ssl.cert.subject.cn:tls.scan.test",
        "ssl.version:TLSv1.3",
        "ssl.cert.expired:false",
        "has_ssl:true",
        'http.title:"Spyglass test"',
        f"http.favicon.hash:{favicon}",
        'product:"Apache httpd"',
    ):
        result = await client.search.search(query)
        assert [m.port for m in result.matches] == [443], query


async def test_ssh_and_redis_members_are_searchable(scanned, client):
    _, _, fingerprint, _ = scanned
    result = await client.search.search(f"ssh.fingerprint:{fingerprint} ssh.type:ssh-ed25519")
    assert [m.port for m in result.matches] == [22]
    result = await client.search.search('product:"Redis key-value store" version:7.2.4')
    assert [m.port for m in result.matches] == [6379]
