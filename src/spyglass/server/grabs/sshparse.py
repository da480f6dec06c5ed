"""SSH wire parsing for the ssh module: the version line and the server's KEXINIT. Safe on anything."""

from __future__ import annotations

import hashlib
import re
import struct

KEXINIT = 20
MAX_PACKET = 35000  # RFC 4253 6.1: implementations need handle no more
NAME_LISTS = (
    "kex_algorithms",
    "server_host_key_algorithms",
    "encryption_algorithms_client_to_server",
    "encryption_algorithms_server_to_client",
    "mac_algorithms_client_to_server",
    "mac_algorithms_server_to_client",
    "compression_algorithms_client_to_server",
    "compression_algorithms_server_to_client",
    "languages_client_to_server",
    "languages_server_to_client",
)
_SOFTWARE = re.compile(r"^([A-Za-z][\w.+\-]*?)[_\-/ ]v?(\d[\w.+\-]*)")
KNOWN = {"openssh": ("OpenSSH", "openbsd:openssh"), "dropbear": ("Dropbear sshd", "dropbear_ssh_project:dropbear_ssh")}


def version_line(greeting: bytes) -> str | None:
    """The ``SSH-`` identification line (servers may send other lines before it)."""
    for line in greeting.split(b"\n"):
        if line.startswith(b"SSH-"):
            return line.rstrip(b"\r").decode("utf-8", "replace")[:255]
    return None


def product(version: str) -> tuple[str, str | None, str | None] | None:
    """(product, version, cpe vendor:product) from ``SSH-2.0-OpenSSH_8.9p1 Ubuntu-3``."""
    parts = version.split("-", 2)
    if len(parts) < 3 or not parts[2]:
        return None
    software = parts[2].split(" ")[0]
    m = _SOFTWARE.match(software)
    name, ver = (m.group(1), m.group(2)) if m else (software, None)
    known, cpe = KNOWN.get(name.lower(), (name, None))
    return known, ver, cpe


def packet(buf: bytes) -> bytes | None:
    """The payload of the first unencrypted binary packet in ``buf``, or None if incomplete or invalid."""
    if len(buf) < 5:
        return None
    length, padding = struct.unpack(">IB", buf[:5])
    if length < 1 + padding or length > MAX_PACKET or len(buf) < 4 + length:
        return None
    return buf[5 : 4 + length - padding]


def kexinit(payload: bytes) -> dict[str, list[str]] | None:
    """The name lists of a KEXINIT payload, or None if it is not one."""
    if not payload or payload[0] != KEXINIT or len(payload) < 17:
        return None
    pos, out = 17, {}
    for name in NAME_LISTS:
        if pos + 4 > len(payload):
            return None
        (n,) = struct.unpack(">I", payload[pos : pos + 4])
        pos += 4
        if pos + n > len(payload):
            return None
        raw = payload[pos : pos + n].decode("ascii", "replace")
        out[name] = [a for a in raw.split(",") if a]
        pos += n
    return out


def hassh_server(kex: dict[str, list[str]]) -> str:
    """HASSHServer: md5 of the server's kex;ciphers;macs;compression (server to client) lists."""
    fields = ("kex_algorithms", "encryption_algorithms", "mac_algorithms", "compression_algorithms")
    return hashlib.md5(";".join(",".join(kex.get(f, [])) for f in fields).encode()).hexdigest()
