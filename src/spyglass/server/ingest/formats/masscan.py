"""masscan's output: ``-oJ`` (JSON), ``-oD`` (NDJSON), ``-oL`` (list), ``-oG`` (grepable) and ``-oX``
(XML), with or without ``--banners``.

masscan writes one record when it sees a port open and one per banner it grabs there (an SSH
version; an HTTP head, server and page title; a certificate...), each with its time, the grabs
seconds after the open record. One run's records of one port are one banner, as the crawler's
banner of that service has them all, at the time the port was first seen open: a port's records
are held until WINDOW seconds of the file's time have passed after its first (masscan gives up a
connection well before), so memory holds the ports of a minute of scanning, not the file. Its
``-oJ`` is a JSON list written one object a line with the commas on lines of their own (older
versions end each object's line with one): each line is read alone, so a file of any size streams
and a broken line costs that line only.

Every format is read as masscan's JSON records (``{"ip", "timestamp", "ports": [...]}``), which the
banner keeps under ``tool.record`` (the XML's attributes as they were, the list's columns named).
"""

from __future__ import annotations

import base64
import binascii
import re
import xml.etree.ElementTree as ET
from collections import OrderedDict
from collections.abc import Iterator
from typing import IO, NamedTuple

from spyglass.exactjson import dumps, loads
from spyglass.server.ingest.formats import Unreadable
from spyglass.server.ingest.formats.common import banner, lines, peek, scan_id, stamp, text
from spyglass.server.ingest.formats.probes import identify
from spyglass.server.ingest.formats.services import (
    crawler,
    greeting_members,
    http_members,
    server_members,
    ssh_members,
    ssl_member,
)

_JSON = re.compile(rb'\A\s*\[?\s*\{\s*"ip"\s*:\s*"[^"]*"\s*,\s*"timestamp"\s*:\s*"\d+"\s*,\s*"ports"\s*:')
_ESCAPED = re.compile(r"\\x([0-9a-fA-F]{2})")  # how -oL and -oX write a banner's bytes outside printable ASCII
_XML = re.compile(rb'<nmaprun\s+scanner="masscan"')
_NDJSON = re.compile(rb'\A\s*\{"ip":"[^"]*","timestamp":"\d+","port":\d+,"proto":"\w+","rec_type":"')
_GREPABLE = b"# Masscan "  # -oG's first line: "# Masscan 1.3.2 scan initiated ..." (-oL's is "#masscan")
# masscan's service names and the crawler module of the same service.
MODULES = {"title": "http", "http.server": "http", "X509": "https", "X509CA": "https", "ssl": "https"}
NOT_SAID = frozenset({"title", "http.server", "X509", "X509CA", "ssl"})  # grabs that are not what the service said
PIECE_PORTS = 5000  # ports' records made banners at a time (a worker's job holds a few pieces)
WINDOW = 120  # seconds of the file's time a port's records are held for the grabs that follow its open record
MAX_HELD = 1 << 17  # ports held at most (a fast scan, a file out of time order): the oldest is let go first
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
        return {"http": {"title": crawler().httpparse.title_text(grabbed)}}  # as nmap's import and the crawler
    if name in ("X509", "X509CA"):  # the leaf, then each certificate above it
        try:
            member = ssl_member([base64.b64decode(grabbed, validate=True)])
        except (binascii.Error, ValueError):
            return {"data": grabbed}
        if name == "X509CA":
            member.pop("cert", None)  # ``cert`` is the leaf's
        return {"ssl": member} if member["chain"] else {}  # cut short (masscan keeps a banner's start): none
    return greeting_members(name, grabbed)


def crlf(grabbed: str) -> str:
    """A grab's text with the line ends the service sent: masscan keeps no CR and drops a last line
    end (nmap's patterns of a greeting end in ``\r\n``)."""
    return grabbed.replace("\r\n", "\n").replace("\n", "\r\n") + ("" if grabbed.endswith("\n") else "\r\n")


def merged(into: dict, more: dict) -> dict:
    """Members of two grabs of one service: objects (``http``, ``ssl``) joined (their lists, as
    ``ssl.chain``, one after the other), ``data`` texts joined, anything else kept from the first
    that said it."""
    out = dict(into)
    for name, value in more.items():
        if isinstance(value, dict) and isinstance(out.get(name), dict):
            joined = dict(out[name])
            for key, one in value.items():
                if isinstance(one, list) and isinstance(joined.get(key), list):
                    joined[key] = joined[key] + one
                elif one is not None:
                    joined[key] = one
            out[name] = joined
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


class Masscan:
    name = "masscan"

    def sniff(self, head: bytes) -> bool:
        kinds = (_JSON.match(head), _NDJSON.match(head), _XML.search(head[:4096]), head.startswith(_GREPABLE))
        return head.startswith(b"#masscan") or any(kinds)

    def records(self, stream: IO[bytes]) -> Iterator[dict | Unreadable]:
        for piece in self.pieces(stream):
            yield from (piece,) if isinstance(piece, Unreadable) else self.parse(*piece)

    def pieces(self, stream: IO[bytes]) -> Iterator[tuple[tuple, bytes] | Unreadable]:
        """The file's records read here (cheap), gathered by port (:func:`by_port`) and handed to
        the importer's workers to be made banners, PIECE_PORTS ports at a time."""
        head, stream = peek(stream)
        scan, tool = scan_id(head), {"name": self.name}
        if _XML.search(head[:4096]):
            seen = self._xml(stream, tool)
        elif head.startswith(_GREPABLE):
            seen = self._grepable(stream)
        elif _NDJSON.match(head):
            seen = self._ndjson(stream)
        else:
            seen = self._list(stream) if head.startswith(b"#masscan") else self._json(stream)
        held: list[bytes] = []
        for group in by_port(seen):
            if isinstance(group, Unreadable):
                yield group
                continue
            held.append(group)
            if len(held) >= PIECE_PORTS:
                yield (scan, tool), b"\n".join(held)
                held = []
        if held:
            yield (scan, tool), b"\n".join(held)

    def parse(self, context: tuple, data: bytes) -> Iterator[dict | Unreadable]:
        scan, tool = context
        for line in data.split(b"\n"):
            group = [Seen(*one) for one in loads(line)]
            try:
                yield self._banner(group, tool, scan)
            except ERRORS as exc:
                yield Unreadable(group[0].where, str(exc) or type(exc).__name__)

    def _banner(self, group: list[Seen], tool: dict, scan: str) -> dict:
        """The banner of one port's records in one run (its open records and its grabs)."""
        first = group[0]
        number, transport = first.port["port"], str(first.port.get("proto") or "tcp")
        if isinstance(number, bool) or not isinstance(number, int):
            raise ValueError(f"port {number!r} is not a number")
        module, members, said = None, dict[str, object](), []
        for one in group:
            service = one.port.get("service")
            if isinstance(service, dict):
                name = str(service.get("name") or "")
                module = module or MODULES.get(name, name or None)
                grabbed = text(str(service.get("banner") or ""))
                members = merged(members, service_members(name, grabbed))
                if name not in NOT_SAID:
                    said.append((name, grabbed))
        for name, grabbed in said if "product" not in members else ():  # as nmap's probes read it
            if found := identify(name, grabbed) or identify(name, crlf(grabbed)):
                members = merged(members, found)
                break
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

    def _ndjson(self, stream: IO[bytes]) -> Iterator[Seen | Unreadable]:
        """``-oD``: an object a line, ``rec_type`` "status" (``data``: status, reason, ttl) or
        "banner" (``data``: service_name, banner), read as -oJ's port entries."""
        for number, line in lines(stream):
            if line is None or not line.strip():
                if line is None:
                    yield Unreadable(f"line {number:,}", "longer than any record")
                continue
            try:
                record = loads(line)
                data = record["data"] if isinstance(record.get("data"), dict) else {}
                entry: dict = {"port": record["port"], "proto": record.get("proto")}
                if record.get("rec_type") == "banner":
                    entry["service"] = {"name": data.get("service_name"), "banner": data.get("banner")}
                else:
                    entry.update(data)
                yield Seen(f"line {number:,}", str(record["ip"]), int(record["timestamp"]), entry)
            except ERRORS as exc:
                yield Unreadable(f"line {number:,}", str(exc) or type(exc).__name__)

    def _grepable(self, stream: IO[bytes]) -> Iterator[Seen | Unreadable]:
        """``-oG``: ``Timestamp: T<tab>Host: IP ()<tab>Ports: 80/open/tcp//http//`` per open port, and
        ``Host: IP ()<tab>Port: 22<tab>Service: ssh<tab>Banner: ...`` per grab, which has no time of its
        own: it takes the last one written before it (masscan writes a grab after the port's line)."""
        seconds: int | None = None
        for number, line in lines(stream):
            if line is None:
                yield Unreadable(f"line {number:,}", "longer than any record")
                continue
            if not line.strip() or line.startswith(b"#"):
                continue
            fields = dict(f.split(": ", 1) for f in text(line).split("\t") if ": " in f)
            try:
                ip = fields["Host"].split(" ", 1)[0]
                if "Ports" in fields:
                    seconds = int(fields["Timestamp"])
                    port, state, proto = fields["Ports"].split("/")[:3]
                    entry: dict = {"port": int(port), "proto": proto, "status": state}
                else:
                    grabbed = _ESCAPED.sub(_byte, fields.get("Banner", ""))
                    entry = {"port": int(fields["Port"]), "proto": "tcp"}  # (masscan grabs over TCP only)
                    entry["service"] = {"name": fields["Service"], "banner": grabbed}
                if seconds is None:
                    raise ValueError("a grab before any time in the file")
                yield Seen(f"line {number:,}", ip, seconds, entry)
            except (ValueError, KeyError) as exc:
                yield Unreadable(f"line {number:,}", str(exc) or "not a masscan grepable line")

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


def by_port(seen: Iterator[Seen | Unreadable]) -> Iterator[bytes | Unreadable]:
    """The records of each port seen open (or grabbed), gathered while they come within WINDOW
    seconds of its first, as one JSON list of ``[where, ip, seconds, port]`` (held as JSON: a
    fraction of the memory of the objects); a port's group is let go once the file's time is
    WINDOW past it."""
    # by (ip, port, proto), in the order first seen; an OrderedDict, as a dict's first key is found
    # by stepping over the slots of those popped before it: every record paid for the window's length
    held: OrderedDict[tuple, tuple[int, list[bytes]]] = OrderedDict()
    for one in seen:
        if isinstance(one, Unreadable):
            yield one
            continue
        key = (one.ip, str(one.port.get("port")), str(one.port.get("proto")))  # (any JSON: hashable)
        if key in held or _is_open(one.port):
            # (copied: the bytes orjson returns keep its 4 KB buffer, 40 times a record's size)
            record = b"%b" % dumps([one.where, one.ip, one.seconds, one.port])
            held.setdefault(key, (one.seconds, []))[1].append(record)
        while held:
            oldest = next(iter(held))
            if held[oldest][0] >= one.seconds - WINDOW and len(held) <= MAX_HELD:
                break
            yield b"[" + b",".join(held.popitem(last=False)[1][1]) + b"]"
    yield from (b"[" + b",".join(group) + b"]" for _, group in held.values())


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
