"""zgrab2's output: JSON lines, one per target, ``{"ip", "domain", "data": {name: {"status",
"protocol", "result", "timestamp", "error"}}}`` with one entry per module it ran (``http``, ``tls``,
``ssh``, ``ftp``, ``smtp``, ``banner``; ``name`` is the module's, or its section's in a multiple-
module scan). Each entry with a result is one banner, shaped as the crawler shapes that service.

The port is the entry's (or the target's) where zgrab2 wrote it, else the one in the HTTP request's
URL (443 for an https URL without one), else the module's default port, as zgrab2 itself takes it
when none is given; the banner says which under ``tool.port_from``. UDP modules (ntp, ...) are
stored as udp. Other modules' results are read by :mod:`.zgrab2_modules`.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from collections.abc import Iterator
from datetime import datetime
from typing import IO
from urllib.parse import urlsplit

from spyglass.exactjson import loads
from spyglass.server.ingest.formats import Unreadable
from spyglass.server.ingest.formats.common import banner, domain_of, lines, peek, scan_id, stamp
from spyglass.server.ingest.formats.probes import identify
from spyglass.server.ingest.formats.services import http_members, ssh_members, ssl_member
from spyglass.server.ingest.formats.zgrab2_modules import PORTS, SAID, UDP
from spyglass.server.ingest.formats.zgrab2_modules import members as module_members

# A line of the target's members (ip, domain, port, tag: whichever zgrab2 wrote) then "data" with a
# module's entry: {"status": ..., "protocol": ...}.
_LINE = re.compile(
    rb'\A\s*\{(?:\s*"(?:ip|domain|port|tag)"\s*:\s*(?:"[^"\n]*"|\d+)\s*,)+\s*"data"\s*:\s*\{\s*"[^"\n]*"\s*:\s*\{'
    rb'\s*"status"\s*:\s*"[^"\n]*"\s*,\s*"protocol"\s*:'
)
# zgrab2's server-side KEXINIT lists, as the crawler's ssh.kex names them.
KEX_LISTS = {
    "kex_algorithms": "kex_algorithms",
    "host_key_algorithms": "server_host_key_algorithms",
    "server_to_client_ciphers": "encryption_algorithms",
    "server_to_client_macs": "mac_algorithms",
    "server_to_client_compression": "compression_algorithms",
}


def _obj(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def tls_members(log: dict) -> dict:
    """``ssl`` from a zgrab2 TLS handshake log (certificates as base64 DER, leaf first)."""
    certificates = _obj(log.get("server_certificates"))
    ders = [
        base64.b64decode(c["raw"])
        for c in [certificates.get("certificate"), *(certificates.get("chain") or [])]
        if isinstance(c, dict) and isinstance(c.get("raw"), str)
    ]
    member = ssl_member(ders)
    hello = _obj(log.get("server_hello"))
    suite, version = _obj(hello.get("cipher_suite")), _obj(hello.get("version"))
    if suite or version:
        member["cipher"] = {"name": suite.get("name"), "version": version.get("name"), "bits": None}
    return {"ssl": member}


def http_result(result: dict, ip: str) -> tuple[dict, str | None]:
    """The members of an http result and the URL it asked for."""
    response = _obj(result.get("response"))
    protocol = _obj(response.get("protocol")).get("name") or "HTTP/1.1"
    head = [f"{protocol} {response.get('status_line') or response.get('status_code') or ''}"]
    for name, values in _obj(response.get("headers")).items():
        pairs = [(v.get("key"), v.get("value")) for v in values] if name == "unknown" else [(name, values)]
        for key, value in pairs:
            for one in value if isinstance(value, list) else [value]:
                head.append(f"{str(key).replace('_', '-').title()}: {one}")
    body = response.get("body")
    members = http_members("\r\n".join(head) + "\r\n\r\n", body if isinstance(body, str) else None, ip)
    request = _obj(response.get("request"))
    tls_log = _obj(_obj(request.get("tls_log")).get("handshake_log"))
    if tls_log:
        members.update(tls_members(tls_log))
    url = _obj(request.get("url"))
    host = url.get("host") if isinstance(url.get("host"), str) else ""
    return members, f"{url.get('scheme', 'http')}://{host}" if host else None


def url_port(url: str) -> int | None:
    """The port of the URL zgrab2 asked, or its scheme's (zgrab2 leaves a default port out of it)."""
    parts = urlsplit(url)
    return parts.port or {"https": 443, "http": 80}.get(parts.scheme)


def ssh_result(result: dict) -> dict:
    key = _obj(_obj(result.get("key_exchange")).get("server_host_key"))
    lists = _obj(result.get("server_key_exchange"))
    kex = {ours: lists.get(theirs) or [] for theirs, ours in KEX_LISTS.items()} if lists else None
    raw_key = {"type": key.get("algorithm"), "key": key["raw"]} if isinstance(key.get("raw"), str) else None
    return ssh_members(str(_obj(result.get("server_id")).get("raw") or ""), raw_key, kex)


def members_of(protocol: str, result: dict, ip: str) -> tuple[str, dict, int | None]:
    """(crawler module, banner members, port the result names) of one module's result."""
    if protocol == "http":
        members, url = http_result(result, ip)
        if "product" not in members:
            members.update(identify("http", members.get("data") or ""))  # the head, as nmap reads it
        secure = "ssl" in members or (url or "").startswith("https:")
        return ("https" if secure else "http"), members, url_port(url) if url else None
    if protocol == "tls":
        return "https", tls_members(_obj(result.get("handshake_log"))), None
    if protocol == "ssh":
        members = ssh_result(result)
        return "ssh", members if "product" in members else {**members, **identify("ssh", members["data"])}, None
    members = module_members(protocol, result)
    if "product" not in members and any(isinstance(result.get(k), str) for k in SAID):
        members.update(identify(protocol, members.get("data") or ""))  # what it said, as nmap reads it
    tls_log = _obj(_obj(result.get("tls")).get("handshake_log"))
    if tls_log:
        members.update(tls_members(tls_log))
    return protocol, members, None


class Zgrab2:
    name = "zgrab2"

    def sniff(self, head: bytes) -> bool:
        return bool(_LINE.match(head))

    def records(self, stream: IO[bytes]) -> Iterator[dict | Unreadable]:
        head, stream = peek(stream)
        return self._lines(stream, scan_id(head))

    def _lines(self, stream: IO[bytes], scan: str) -> Iterator[dict | Unreadable]:
        for number, line in lines(stream):
            if line is None:
                yield Unreadable(f"line {number:,}", "longer than any record")
            elif line.strip():
                try:
                    record = loads(line)
                    if not isinstance(record, dict) or not isinstance(record.get("data"), dict):
                        raise ValueError("not a zgrab2 record (an object with ip and data)")
                    yield from self._target(record, scan, number)
                except ValueError as exc:
                    yield Unreadable(f"line {number:,}", str(exc))

    def _target(self, record: dict, scan: str, number: int) -> Iterator[dict | Unreadable]:
        ip, domain = record.get("ip"), record.get("domain")
        if not isinstance(ip, str) or not ip:
            if not (isinstance(domain, str) and _is_address(domain)):
                name = f" only the name {domain!r}" if isinstance(domain, str) and domain else " none"
                yield Unreadable(f"line {number:,}", f"no IP address: zgrab2 wrote{name} (a banner is of an address)")
                return
            ip, domain = domain, None  # an address given as the target's name
        for name, entry in record["data"].items():
            result = _obj(_obj(entry).get("result"))
            if not result:
                continue  # nothing answered (a timeout, a refused connection): no service
            try:
                protocol = str(entry.get("protocol") or name)
                module, members, said_port = members_of(protocol, result, ip)
                if isinstance(domain, str) and domain:
                    members["hostnames"] = [domain]  # the name zgrab2 was given for the address
                    members["domains"] = [d for d in [domain_of(domain)] if d]
                port, port_from = _port(entry.get("port") or record.get("port"), said_port, protocol)
                when = stamp(datetime.fromisoformat(str(entry["timestamp"])))
                one = {**record, "data": {name: entry}}
                tool = {"name": self.name, "port_from": port_from}
                transport = "udp" if protocol in UDP else "tcp"
                yield banner(tool, scan, ip, port, transport, when, module, one, members)
            except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:  # whatever shape it had
                yield Unreadable(f"line {number:,} ({name})", str(exc) or type(exc).__name__)


def _port(written: object, said: int | None, protocol: str) -> tuple[int, str]:
    """The port of a module's result and where it comes from: zgrab2's record, the URL it asked, or
    the module's standard port (zgrab2 wrote none: it scanned that one unless told otherwise)."""
    if isinstance(written, int) and not isinstance(written, bool):
        return written, "record"
    if said is not None:
        return said, "url"
    if protocol in PORTS:
        return PORTS[protocol], "module default"
    raise ValueError(f"no port: zgrab2 wrote none, and its {protocol!r} module has no standard port")


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


FORMAT = Zgrab2()
