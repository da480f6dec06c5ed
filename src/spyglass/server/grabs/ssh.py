"""SSH: the version string and the server's algorithm lists (read from its KEXINIT on a raw
connection), then the host key from a key exchange that asyncssh does."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import asyncssh
from asyncssh.encryption import get_default_encryption_algs
from asyncssh.mac import get_default_mac_algs

from . import sshparse
from .base import Conn, Found, Target, cpe_members

CLIENT_VERSION = b"SSH-2.0-spyglass_crawler\r\n"
# asyncssh logs every connection at INFO: a crawler makes thousands. Left alone if someone set a level.
if logging.getLogger("asyncssh").level == logging.NOTSET:
    logging.getLogger("asyncssh").setLevel(logging.WARNING)


async def _kexinit(t: Target) -> tuple[str | None, dict[str, list[str]] | None]:
    conn = await Conn.open(t)
    try:
        greeting = await conn.read_until(lambda b: b"SSH-" in b and b"\n" in b[b.find(b"SSH-") :], 8192)
        version = sshparse.version_line(greeting)
        if version is None:
            return None, None
        await conn.send(CLIENT_VERSION)
        rest = greeting[greeting.find(b"\n", greeting.find(b"SSH-")) + 1 :]
        rest += await conn.read_until(lambda b: sshparse.packet(b) is not None or len(b) >= 4 + sshparse.MAX_PACKET)
        payload = sshparse.packet(rest)
        return version, sshparse.kexinit(payload) if payload else None
    finally:
        await conn.close()


async def _host_key(t: Target) -> asyncssh.SSHKey | None:
    with contextlib.suppress(Exception):  # anything the service does wrong: no key, the rest stands
        return await asyncio.wait_for(asyncssh.get_server_host_key(t.ip, t.port), t.timeout)
    return None


def _kex_member(lists: dict[str, list[str]]) -> dict[str, list[str]]:
    """The original service's five lists (server to client where the protocol has two)."""
    return {
        "kex_algorithms": lists["kex_algorithms"],
        "server_host_key_algorithms": lists["server_host_key_algorithms"],
        "encryption_algorithms": lists["encryption_algorithms_server_to_client"],
        "mac_algorithms": lists["mac_algorithms_server_to_client"],
        "compression_algorithms": lists["compression_algorithms_server_to_client"],
    }


def negotiate(client: list[bytes], server: list[str]) -> str | None:
    """RFC 4253 7.1: the first of the client's algorithms that the server also offers; the client
    here is asyncssh's defaults, as the crawler's own connection would negotiate."""
    offered = set(server)
    return next((a.decode() for a in client if a.decode() in offered), None)


LIST_TITLES = {
    "kex_algorithms": "Kex Algorithms",
    "server_host_key_algorithms": "Server Host Key Algorithms",
    "encryption_algorithms": "Encryption Algorithms",
    "mac_algorithms": "MAC Algorithms",
    "compression_algorithms": "Compression Algorithms",
}


async def grab(t: Target) -> Found | None:
    version, lists = await _kexinit(t)
    if version is None:
        return None
    ssh: dict = {}
    lines = [version]
    key = await _host_key(t) if lists is not None else None
    if key is not None:
        blob = key.export_public_key("openssh").split()[1].decode()
        fingerprint = key.get_fingerprint("md5").removeprefix("MD5:")
        ssh.update(type=key.get_algorithm(), key=blob, fingerprint=fingerprint)
        lines += [f"Key type: {ssh['type']}", f"Key: {blob}", f"Fingerprint: {fingerprint}"]
    if lists is not None:
        kex = _kex_member(lists)
        ssh["kex"] = kex
        ssh["hassh"] = sshparse.hassh_server(kex)
        ssh["cipher"] = negotiate(get_default_encryption_algs(), kex["encryption_algorithms"])
        ssh["mac"] = negotiate(get_default_mac_algs(), kex["mac_algorithms"])
        for name, title in LIST_TITLES.items():
            lines += ["", f"{title}:"] + [f"\t{a}" for a in kex[name]]
    members: dict = {"ssh": ssh}
    parsed = sshparse.product(version)
    if parsed:
        members.update(cpe_members(*parsed))
    return Found("ssh", "\n".join(lines) + "\n", members)
