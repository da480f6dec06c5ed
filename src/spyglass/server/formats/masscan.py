"""masscan's output: ``-oJ`` (JSON), ``-oL`` (list) and ``-oX`` (XML), with or without ``--banners``.

masscan writes one record when it sees a port open and one per banner it grabs there (an SSH
version; an HTTP head, server and page title; a certificate...), each with its time. A port's
open record is a banner of its own (no data); the banners grabbed from one port in one session
come one after the other with the same time, and make one banner, as the crawler's banner of that
service has them all. Its ``-oJ`` is a JSON list written one object a line with the commas on
lines of their own (older versions end each object's line with one): each line is read alone, so a
file of any size streams and a broken line costs that line only.

Every format is read as masscan's JSON records (``{"ip", "timestamp", "ports": [...]}``), which the
banner keeps under ``tool.record`` (the XML's attributes as they were, the list's columns named).
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from itertools import islice
from typing import IO, NamedTuple

from spyglass.exactjson import dumps, loads
from spyglass.server.formats import FORMATS, Unreadable
from spyglass.server.formats.common import banner, lines, peek, scan_id, stamp, text
from spyglass.server.formats.services import greeting_members, http_members, server_members, ssh_members, ssl_member

_JSON = re.compile(rb'\A\s*\[?\s*\{\s*"ip"\s*:\s*"[^"]*"\s*,\s*"timestamp"\s*:\s*"\d+"\s*,\s*"ports"\s*:')
_ESCAPED = re.compile(r"\\x([0-9a-fA-F]{2})")  # how -oL and -oX write a banner's bytes outside printable ASCII
_XML = re.compile(rb'<nmaprun\s+scanner="masscan"')
# masscan's service names and the crawler module of the same service.
MODULES = {"title": "http", "http.server": "http", "X509": "https", "X509CA": "https", "ssl": "https"}
PIECE_LINES = 5000  # lines of output parsed at a time (a worker's job holds a few pieces)
ERRORS = (ValueError, KeyError, TypeError, AttributeError, OverflowError, OSError)


def service_members(name: str, grabbed: str) -> dict:
    """The banner members of what masscan grabbed from a service it calls ``name``."""
    if name == "ssh":
        return ssh_members(grabbed)
    if name == "http":
        return http_members(grabbed)
    if name == "http.server":
        return server_members(grabbed)
    if name == "title":
        return {"http": {"title": grabbed}}
    if name in ("X509", "X509CA"):
        try:
            return {"ssl": ssl_member([base64.b64decode(grabbed, validate=True)])}
        except (binascii.Error, ValueError):
            return {"data": grabbed}
    return greeting_members(name, grabbed)


def merged(into: dict, more: dict) -> dict:
    """Members of two grabs of one service: objects (``http``, ``ssl``) joined, ``data`` texts
    joined, anything else kept from the first that said it."""
    out = dict(into)
    for name, value in more.items():
        if isinstance(value, dict) and isinstance(out.get(name), dict):
            out[name] = {**out[name], **{k: v for k, v in value.items() if v is not None}}
        elif name == "data" and out.get("data"):
            out["data"] = f"{out['data'].rstrip()}\n{value}"
        else:
            out.setdefault(name, value)
    return out


class Seen(NamedTuple):
    """One port of one masscan record: where in the file, the address, the time and the port's entry."""

    where: str
    ip: str
    seconds: int
    port: dict  # masscan's JSON shape: port, proto, status/reason/ttl, or service {name, banner}

    @property
    def session(self) -> tuple:
        return self.ip, self.port.get("port"), self.port.get("proto"), self.seconds


class Masscan:
    name = "masscan"

    def sniff(self, head: bytes) -> bool:
        return head.startswith(b"#masscan") or bool(_JSON.match(head)) or bool(_XML.search(head[:4096]))

    def records(self, stream: IO[bytes]) -> Iterator[dict | Unreadable]:
        for piece in self.pieces(stream):
            yield from (piece,) if isinstance(piece, Unreadable) else self.parse(*piece)

    def pieces(self, stream: IO[bytes]) -> Iterator[tuple[tuple, bytes] | Unreadable]:
        """The JSON and list output cut into runs of lines, each cut before a line that is no grab
        (the grabs of one session follow its port's line: a session never spans two pieces), parsed
        in the importer's workers; the XML read here, its banners handed over as JSON lines."""
        head, stream = peek(stream)
        scan = scan_id(head)
        if _XML.search(head[:4096]):
            tool = {"name": self.name}
            banners = self._banners(self._xml(stream, tool), tool, scan)
            while batch := list(islice(banners, PIECE_LINES)):
                for one in batch:
                    if isinstance(one, Unreadable):
                        yield one
                kept = [dumps(one) for one in batch if not isinstance(one, Unreadable)]
                yield ("banners", scan, 0), b"\n".join(kept)
            return
        kind = "list" if head.startswith(b"#masscan") else "json"
        grab = b"banner " if kind == "list" else b'"service"'
        held: list[bytes] = []
        first = 1
        for number, line in lines(stream):
            if line is None:
                yield Unreadable(f"line {number:,}", "longer than any record")
                line = b""  # (keeps the numbering of the lines after it)
            if len(held) >= PIECE_LINES and (grab not in line or len(held) >= 10 * PIECE_LINES):
                yield (kind, scan, first), b"\n".join(held)
                held, first = [], number
            held.append(line)
        if held:
            yield (kind, scan, first), b"\n".join(held)

    def parse(self, context: tuple, data: bytes) -> Iterator[dict | Unreadable]:
        kind, scan, first = context
        if kind == "banners":
            yield from map(loads, data.split(b"\n")) if data else ()
            return
        stream = io.BytesIO(data)
        seen = self._list(stream, first) if kind == "list" else self._json(stream, first)
        yield from self._banners(seen, {"name": self.name}, scan)

    def _banners(self, seen: Iterator[Seen | Unreadable], tool: dict, scan: str) -> Iterator[dict | Unreadable]:
        """One banner per port seen open, and one per session of grabs (consecutive, same port and time)."""
        group: list[Seen] = []
        for one in _with_end(seen):
            if isinstance(one, Seen) and group and "service" in one.port and one.session == group[0].session:
                group.append(one)
                continue
            if group:
                try:
                    yield self._banner(group, tool, scan)
                except ERRORS as exc:
                    yield Unreadable(group[0].where, str(exc) or type(exc).__name__)
            group = [one] if isinstance(one, Seen) and _is_open(one.port) else []
            if isinstance(one, Unreadable):
                yield one

    def _banner(self, group: list[Seen], tool: dict, scan: str) -> dict:
        first = group[0]
        number, transport = first.port["port"], str(first.port.get("proto") or "tcp")
        if isinstance(number, bool) or not isinstance(number, int):
            raise ValueError(f"port {number!r} is not a number")
        module, members = None, dict[str, object]()
        for one in group:
            service = one.port.get("service")
            if isinstance(service, dict):
                name = str(service.get("name") or "")
                module = module or MODULES.get(name, name or None)
                members = merged(members, service_members(name, text(str(service.get("banner") or ""))))
        record = {"ip": first.ip, "timestamp": str(first.seconds), "ports": [one.port for one in group]}
        return banner(tool, scan, first.ip, number, transport, stamp(first.seconds), module, record, members)

    def _json(self, stream: IO[bytes], first: int = 1) -> Iterator[Seen | Unreadable]:
        for number, line in lines(stream, first):
            if line is None:
                yield Unreadable(f"line {number:,}", "longer than any record")
                continue
            body = line.strip().rstrip(b",").strip()
            if body in (b"", b"[", b"]"):
                continue
            try:
                record = loads(body)
                if not isinstance(record, dict) or not isinstance(record.get("ports"), list):
                    raise ValueError("not a masscan record (an object with ip, timestamp and ports)")
                if not all(isinstance(p, dict) for p in record["ports"]):
                    raise ValueError("a port that is not an object")
                seen = [
                    Seen(f"line {number:,}", str(record["ip"]), int(record["timestamp"]), p) for p in record["ports"]
                ]
            except ERRORS as exc:
                yield Unreadable(f"line {number:,}", str(exc) or type(exc).__name__)
                continue
            yield from seen

    def _list(self, stream: IO[bytes], first: int = 1) -> Iterator[Seen | Unreadable]:
        """``open tcp 80 192.0.2.1 1700000000`` and ``banner tcp 22 192.0.2.1 1700000000 ssh SSH-2.0-...``."""
        for number, line in lines(stream, first):
            if line is None:
                yield Unreadable(f"line {number:,}", "longer than any record")
                continue
            if not line.strip() or line.startswith(b"#"):
                continue
            fields = text(line).split(" ", 6)
            try:
                kind, proto, port, ip, seconds = fields[:5]
                entry: dict = {"port": int(port), "proto": proto, "status": kind}
                if kind == "banner":
                    grabbed = _ESCAPED.sub(_byte, fields[6] if len(fields) > 6 else "")
                    entry = {"port": int(port), "proto": proto, "service": {"name": fields[5], "banner": grabbed}}
                yield Seen(f"line {number:,}", ip, int(seconds), entry)
            except (ValueError, IndexError) as exc:
                yield Unreadable(f"line {number:,}", str(exc) or "not a masscan list line")

    def _xml(self, stream: IO[bytes], tool: dict) -> Iterator[Seen | Unreadable]:
        hosts, root = 0, None
        try:
            for event, element in ET.iterparse(stream, events=("start", "end")):
                if event == "start":
                    if root is None:  # <nmaprun scanner="masscan" start=... version=...>
                        root = element
                        tool.update({k: v for k, v in element.attrib.items() if k in ("version", "start")})
                    continue
                if element.tag == "host":
                    hosts += 1
                    yield from _xml_host(element, f"host {hosts:,}")
                    assert root is not None
                    root.clear()  # a host read is let go: the file streams
        except ET.ParseError as exc:
            line, column = exc.position
            yield Unreadable(f"line {line:,}, column {column:,}", f"XML: {exc}")  # (as expat counts them)


def _byte(escaped: re.Match) -> str:
    return chr(int(escaped[1], 16))


def _with_end(seen: Iterator[Seen | Unreadable]) -> Iterator[Seen | Unreadable | None]:
    yield from seen
    yield None


def _is_open(port: dict) -> bool:
    return "service" in port or port.get("status", "open") == "open"


def _xml_host(host: ET.Element, where: str) -> Iterator[Seen | Unreadable]:
    try:
        address = host.find("address")
        ip, seconds = (address.attrib["addr"] if address is not None else ""), int(host.attrib["endtime"])
        for port in host.iter("port"):
            state, service = port.find("state"), port.find("service")
            entry: dict = {"port": int(port.attrib["portid"]), "proto": port.attrib.get("protocol", "tcp")}
            if state is not None:  # masscan's JSON calls the state "status"
                entry.update({("status" if k == "state" else k): v for k, v in state.attrib.items()})
            if service is not None:  # its banner escaped as -oL's is
                entry["service"] = {k: _ESCAPED.sub(_byte, v) for k, v in service.attrib.items()}
            yield Seen(where, ip, seconds, entry)
    except ERRORS as exc:
        yield Unreadable(where, str(exc) or type(exc).__name__)


FORMAT = Masscan()
FORMATS.append(FORMAT)
