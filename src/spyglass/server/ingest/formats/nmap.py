"""nmap's XML (``-oX``), with service detection (``-sV``) and scripts (``-sC``): a banner per open port.

The file is cut into its ``<host>`` elements as it is read (``</host>`` cannot occur inside an XML
text or attribute), and each is parsed on its own (in the importer's workers: these are the
format's pieces): memory holds a few hosts, and a host that is not well-formed (or cut off at the
end of a truncated file) is reported by its number and line while the hosts after it still load;
an incremental parser would stop at the first error. A host cannot declare entities (only the
prolog can, and it is read alone, by expat, which limits their expansion).

What nmap says maps as the service's crawler would write it (see ``server/scanner``): ``<service>``
into ``product``, ``version``, ``info``, ``cpe``/``cpe23`` (CPE 2.2 URIs as nmap writes them, and their
2.3 form) and the module (``https`` for HTTP in TLS); ``http-title``, ``http-server-header``,
``http-headers`` into ``http`` (``data`` holds the headers, as the service's head does); ``ssl-cert``
into ``ssl.cert`` (read from the PEM nmap includes, as the crawler reads a certificate);
``ssh-hostkey`` into ``ssh`` (the key the crawler would negotiate first, MD5 fingerprint with colons;
every key under ``ssh.keys``), ``ssh2-enum-algos`` into ``ssh.kex``, vulnerabilities into ``vulns``,
host scripts, traceroute, uptime, distance and MAC address into members of their own
(:mod:`.nmap_scripts`); a port named from nmap's table alone (``method="table"``) has no module or
product: the name is under ``guess``;
``banner`` and ``fingerprint-strings`` into ``data``; hostnames (user-given and PTR) into
``hostnames``/``domains``; the most accurate ``osmatch`` (else ``osclass``) into ``os``, every
``osclass`` into ``os_classes`` (the ``os.vendor``/``family``/``generation``/``type``/``accuracy`` filters). The port's
time is the host's ``endtime`` (else ``starttime``, else the run's start). Everything else stays in
``tool``: the port's element as JSON under ``record``, the host's other elements under ``host``.
Every host nmap reported (up or down, with open ports or none) also gives a
:class:`~spyglass.server.ingest.formats.Seen` (:mod:`.nmap_seen`): its status and the ports that were not
open, which the stores keep apart from banners (``host.state:``, ``port.state:``).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import ssl
import textwrap
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO

from spyglass.server.banners.shape import normalize
from spyglass.server.geoip import locate
from spyglass.server.ingest.formats import Seen, Unreadable
from spyglass.server.ingest.formats.common import domain_of
from spyglass.server.ingest.formats.nmap_scripts import elems as _elems
from spyglass.server.ingest.formats.nmap_scripts import host_members, kex, smb_os, ssh_keys, vulns
from spyglass.server.ingest.formats.nmap_seen import seen
from spyglass.server.ingest.formats.services import crawler, kex_members

READ = 1 << 20  # bytes read at a time
MAX_HOST = 64 << 20  # a longer <host> element is reported, not parsed (nmap writes a few KiB a host)
_NMAPRUN = re.compile(rb"<nmaprun\b[^>]*\bscanner=[\"']nmap[\"']")
_HOST = re.compile(rb"<host[\s>]")
_END = b"</host>"
_CLOSED = b"</nmaprun>"  # the run's end: nmap writes it last, so a file without it was cut short
_ENCODING = re.compile(rb"""\A(?:\xef\xbb\xbf)?<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][\w.:-]*)["']""")
_PORT = re.compile(rb"<port[\s>]")  # (not <ports>; "<" is escaped in every text and attribute)
_OPEN = re.compile(rb"<state\s+state\s*=\s*[\"']open[\"']")  # a port's state as nmap writes it
PORTS_EACH = 2000  # ports of one host parsed at a time
# The order in which an SSH client (the crawler's asyncssh, OpenSSH) asks for host key types.
_KEY_ORDER = ("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa", "ssh-dss")
_NAMES = {  # nmap's names of certificate name attributes, as RFC 4514 (and the crawler) write them
    "commonName": "CN",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "countryName": "C",
    "stateOrProvinceName": "ST",
    "localityName": "L",
    "streetAddress": "STREET",
    "domainComponent": "DC",
}


class Nmap:
    name = "nmap"

    def sniff(self, head: bytes) -> bool:
        return _NMAPRUN.search(head) is not None  # masscan's -oX says <nmaprun scanner="masscan">

    def records(self, stream: IO[bytes]) -> Iterator[dict | Unreadable]:
        for piece in self.pieces(stream):
            records = (piece,) if isinstance(piece, Unreadable) else self.parse(*piece)
            yield from (r for r in records if not isinstance(r, Seen))

    def parse(self, context: tuple[dict, str, int | None], data: bytes) -> Iterator[dict | Unreadable | Seen]:
        run, where, opened = context
        yield from _host_banners(data, run, where, opened)

    def pieces(self, stream: IO[bytes]) -> Iterator[tuple[tuple[dict, str, int | None], bytes] | Unreadable]:
        """The file's ``<host>`` elements, cut apart (a regular expression and a find: the parsing
        is :meth:`parse`'s, in the importer's workers)."""
        run: dict | None = None
        buffer, pos, line, number = b"", 0, 1, 0  # buffer[pos] is at ``line``; hosts seen
        eof = told = False
        while not eof:
            part = stream.read(READ)
            eof = not part
            buffer, pos = buffer[pos:] + part, 0
            if run is None:  # the run's start tag lies before the first host (or the file's end)
                start = _HOST.search(buffer)
                if start is None and not eof and len(buffer) < MAX_HOST:
                    continue
                run = _run(buffer[: start.start() if start else len(buffer)])
            while True:
                start = _HOST.search(buffer, pos)
                if start is None:  # keep only a tail that may begin a host, or hold the run's end
                    if eof and not told and _CLOSED not in buffer[pos:]:
                        last = line + buffer.count(b"\n", pos)
                        yield Unreadable(
                            f"the file's end (line {last:,})",
                            "it ends before nmap's </nmaprun>: the scan was cut short or the file copied"
                            " in part (the hosts before it are read)",
                        )
                    keep = max(pos, len(buffer) - 16)
                    line, pos = line + buffer.count(b"\n", pos, keep), keep
                    break
                line, pos = line + buffer.count(b"\n", pos, start.start()), start.start()
                end = buffer.find(_END, pos)
                if end < 0 and not eof and len(buffer) - pos <= MAX_HOST:
                    break  # read on
                number += 1
                where = f"host {number} (line {line:,})"
                cut = _HOST.search(buffer, pos + 1, end if end >= 0 else len(buffer))
                if end < 0 or cut:
                    why = "the file ends inside it" if eof else f"a host over {MAX_HOST:,} bytes"
                    told = eof and not cut  # (the file's end, cut short: said once)
                    yield Unreadable(where, "another host starts before it ends" if cut else why)
                    stop = cut.start() if cut else pos + 1  # on at the next host
                    line, pos = line + buffer.count(b"\n", pos, stop), stop
                    continue
                stop = end + len(_END)
                hosts = _split(buffer[pos:stop])
                opened = sum(len(_OPEN.findall(h)) for h in hosts) if len(hosts) > 1 else None  # (the whole host's)
                for host in hosts:
                    yield (run, where, opened), host
                line, pos = line + buffer.count(b"\n", pos, stop), stop


def _split(host: bytes) -> list[bytes]:
    """A host's element, or for one of more than PORTS_EACH ports (a host of 300,000 open ports
    parsed whole took 2.3 GB), several: each with PORTS_EACH of its ports and everything else it
    holds, so that each is parsed alone and gives its ports' banners as the whole host would."""
    if len(host) < PORTS_EACH * 64:  # too short to hold that many ports
        return [host]
    start, end = host.find(b"<ports>"), host.rfind(b"</ports>")
    if start < 0 or end < start:
        return [host]
    head, body, tail = host[: start + len(b"<ports>")], host[start + len(b"<ports>") : end], host[end:]
    cuts = [m.start() for m in _PORT.finditer(body)]
    if len(cuts) <= PORTS_EACH:
        return [host]
    head += body[: cuts[0]]  # <extraports>: every piece's host holds it, as the whole host did
    cuts.append(len(body))
    return [
        head + body[cuts[i] : cuts[min(i + PORTS_EACH, len(cuts) - 1)]] + tail
        for i in range(0, len(cuts) - 1, PORTS_EACH)
    ]


def _run(header: bytes) -> dict:
    """The run's attributes (``<nmaprun>``), its scan id (its start time and command line, or the
    header's bytes where it has neither) and the encoding its prolog declares (each host is parsed
    alone, without the prolog: Zenmap saved files as ``iso-8859-1``)."""
    attrib: dict = {}
    parser: ET.XMLPullParser = ET.XMLPullParser(events=("start",))
    try:
        parser.feed(header)
        for event in parser.read_events():
            element = event[-1]
            if isinstance(element, ET.Element) and element.tag == "nmaprun":
                attrib = dict(element.attrib)
                break
    except (ET.ParseError, LookupError):  # LookupError: an encoding declaration Python does not know
        pass
    basis = f"{attrib['start']}|{attrib['args']}".encode() if "start" in attrib and "args" in attrib else header
    declared = _ENCODING.match(header)
    encoding = declared[1].decode() if declared else "utf-8"
    return {**attrib, "scan": "nmap-" + hashlib.sha256(basis).hexdigest()[:16], "xml_encoding": encoding}


def _host_banners(
    element: bytes, run: dict, where: str, opened: int | None = None
) -> Iterator[dict | Unreadable | Seen]:
    """The banners of a host's element, then what the run saw of the host (a Seen); what cannot be
    read of it, as Unreadables: the host (not XML, no address or time) or one port (what no store
    could hold: the stores' own check). ``opened``: the open ports of the whole host, where this
    element is a piece of it (_split)."""
    try:
        host = Host(ET.fromstring(_decoded(element, run.get("xml_encoding", "utf-8"))), run, opened)
    except ET.ParseError as exc:
        yield Unreadable(where, f"not well-formed XML ({exc})")
        return
    except (ValueError, OverflowError, OSError) as exc:  # (a time out of the platform's range)
        yield Unreadable(where, f"not an nmap host ({exc})")
        return
    for port in host.ports:
        try:
            banner = host.banner(port)
            normalize(banner)
        except (ValueError, OverflowError, OSError) as exc:  # BadBanner is a ValueError
            yield Unreadable(f"{where}, port {port.get('portid')!r}", str(exc) or type(exc).__name__)
            continue
        yield banner
    yield Seen(host.seen)


def _decoded(element: bytes, encoding: str) -> bytes | str:
    """A host's bytes as the prolog's encoding reads them (expat reads a piece without one as UTF-8)."""
    if encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        return element
    try:
        return element.decode(encoding)
    except (LookupError, UnicodeDecodeError):  # an encoding Python does not know, or not this one
        return element


class Host:
    """One ``<host>``: what every banner of it shares, and a banner per open port."""

    def __init__(self, host: ET.Element, run: dict, opened: int | None = None) -> None:
        self.run = run
        address = next((a.get("addr", "") for a in host.iter("address") if a.get("addrtype") in ("ipv4", "ipv6")), None)
        if address is None:
            raise ValueError("no IPv4 or IPv6 address")
        ip = ipaddress.ip_address(address)
        self.address: dict = (
            {"ip_str": str(ip), "ip": int(ip)} if ip.version == 4 else {"ip_str": str(ip), "ipv6": str(ip)}
        )
        times = (host.get("endtime"), host.get("starttime"), run.get("start"))
        seconds = next((int(t) for t in times if t and t.isascii() and t.isdigit()), None)
        if seconds is None:
            raise ValueError("no time: neither the host nor the run has one")
        self.stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")
        names = list(dict.fromkeys(n.get("name", "") for n in host.iter("hostname") if n.get("name")))
        self.names = {"hostnames": names, "domains": list(dict.fromkeys(filter(None, map(domain_of, names))))}
        self.more = host_members(host)  # host scripts, traceroute, uptime, distance, MAC address
        self.os = _best_os(host) or smb_os(self.more)
        self.host_tables = [(k, s["elems"]) for k, s in self.more.get("host_scripts", {}).items()]
        self.ports = [p for p in host.iter("port") if _state(p) == "open"]
        self.rest = _json(host, skip="port")  # less its ports (each banner has its own record)
        self.seen = seen(host, run, self.address["ip_str"], self.stamp, len(self.ports) if opened is None else opened)

    def banner(self, port: ET.Element) -> dict:
        transport, number = port.get("protocol", "tcp"), int(port.get("portid", ""))
        service = port.find("service")
        scripts = {s.get("id", ""): s for s in port.iter("script")}
        tables = {s: _elems(s) for s in port.iter("script")}  # each script's output, read once
        module: str | None = service.get("name", "") if service is not None else ""
        if service is not None and service.get("tunnel") == "ssl" and module == "http":
            module = "https"
        guess = _guess(service)
        if guess:  # the port's name in nmap's table, no probe: not the service's
            module, service = None, None
        banner: dict = {
            **self.address,
            "port": number,
            "transport": transport,
            "timestamp": self.stamp,
            **self.names,
            **_service(service),
            **self.more,
            "tags": ["nmap"],
        }
        if guess:
            banner["guess"] = guess
        found = vulns(self.host_tables + [(s.get("id", ""), t) for s, t in tables.items()])
        if found:
            banner["vulns"] = found
        if self.os or (service is not None and service.get("ostype")):
            banner["os"] = self.os or service.get("ostype")  # type: ignore[union-attr]
        data = _data(scripts)
        banner.update(_http(scripts, tables) | _ssl(scripts, tables) | _ssh(scripts, tables))
        banner["data"] = data
        banner["hash"] = crawler().base.signed_hash(data)  # the crawler's
        scan = self.run["scan"]
        banner["_shodan"] = {
            "module": module,
            "crawler": "nmap",
            "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{scan}/{banner['ip_str']}/{number}/{transport}")),
            "options": {"scan": scan},
        }
        banner["tool"] = {
            "name": "nmap",
            "version": self.run.get("version"),
            "args": self.run.get("args"),
            "record": _json(port, tables),
            "host": self.rest,
        }
        return locate(banner)  # location and network owner, where the user named databases (geoip.py)


def _state(port: ET.Element) -> str | None:
    state = port.find("state")
    return state.get("state") if state is not None else None


def _guess(service: ET.Element | None) -> dict | None:
    """nmap's guess from the port's number (``method="table"``: its services table, no probe sent
    or none answered): the name it guessed and its confidence, kept apart from the service's."""
    if service is None or service.get("method") != "table":
        return None
    return {"service": service.get("name"), "method": "table", "conf": _number(service.get("conf"))}


def _best_os(host: ET.Element) -> str | None:
    """The most accurate ``osmatch``'s name; where there is none (nmap 5 and older wrote classes
    alone when no fingerprint matched exactly), the most accurate ``osclass``: "Microsoft Windows XP"."""
    matches = [(_number(m.get("accuracy")), -i, m.get("name")) for i, m in enumerate(host.iter("osmatch"))]
    if not any(name for *_, name in matches):
        matches = [(_number(c.get("accuracy")), -i, _class_name(c)) for i, c in enumerate(host.iter("osclass"))]
    matches = [m for m in matches if m[2]]
    return max(matches)[2] if matches else None


def _class_name(osclass: ET.Element) -> str:
    """An OS class as words: vendor, family (unless the vendor's name), generation."""
    vendor, family, generation = (osclass.get(a, "").strip() for a in ("vendor", "osfamily", "osgen"))
    return " ".join(dict.fromkeys(filter(None, (vendor, family, generation))))


def _number(text: str | None) -> int:
    return int(text) if text and text.isascii() and text.isdigit() else 0


def _service(service: ET.Element | None) -> dict:
    if service is None:
        return {}
    out: dict = {}
    for attr, member in (("product", "product"), ("version", "version"), ("extrainfo", "info")):
        if service.get(attr):
            out[member] = service.get(attr)
    cpes = [c.text.strip() for c in service.iter("cpe") if c.text and c.text.strip()]
    if cpes:
        out["cpe"] = cpes
        out["cpe23"] = [re.sub(r"^cpe:/", "cpe:2.3:", c) for c in cpes]
    return out


def _data(scripts: dict[str, ET.Element]) -> str:
    """What the service said itself: the ``banner`` script's text and ``fingerprint-strings``' answers
    to nmap's probes; else the HTTP headers (the service's ``data`` of an HTTP service is its head)."""
    parts = [_output(scripts["banner"])] if "banner" in scripts else []
    if "fingerprint-strings" in scripts:
        parts += _answers(scripts["fingerprint-strings"])
    if not parts and "http-headers" in scripts:
        parts = ["\r\n".join(_header_lines(scripts["http-headers"])) + "\r\n"]
    return "\n".join(dict.fromkeys(part for part in parts if part))  # an answer the banner was, once


def _output(script: ET.Element) -> str:
    return _output_text(script.get("output", ""))


def _answers(script: ET.Element) -> list[str]:
    """``fingerprint-strings``: the service's answers to nmap's probes, what it said unprompted (to
    the NULL probe) first. The probes' names are nmap's, not the service's: a banner that began
    "GetRequest, NULL, RPCCheck:" hid its own words (newcomer trial 22). Its output where it
    holds no answer element."""
    answers = [(e.get("key") or "", _output_text(e.text or "")) for e in script.findall("elem")]
    if not answers:
        return [_output(script)]
    answers.sort(key=lambda answer: "NULL" not in answer[0].split(", "))  # (stable: nmap's order else)
    return [text for _, text in answers]


def _output_text(text: str) -> str:
    return textwrap.dedent(text.strip("\n")).strip("\n")


def _header_lines(script: ET.Element) -> list[str]:
    """The header lines ``http-headers`` shows (less its closing "(Request type: GET)")."""
    lines = [line.strip() for line in script.get("output", "").splitlines()]
    return [line for line in lines if line and not line.startswith("(Request type")]


Tables = dict[ET.Element, dict]  # each script's output as a table (_elems)


def _http(scripts: dict[str, ET.Element], tables: Tables) -> dict:
    http: dict = {}
    title = scripts.get("http-title")
    if title is not None:
        fields = tables[title]
        text = fields.get("title")
        if isinstance(text, str):  # as the crawler reads a page's title: entities read, spaces collapsed
            http["title"] = crawler().httpparse.title_text(text)
        if isinstance(fields.get("redirect_url"), str):
            http["location"] = fields["redirect_url"]
    server = scripts.get("http-server-header")
    if server is not None:
        values = [e.text for e in server.findall("elem") if e.text]
        http["server"] = values[0] if values else server.get("output", "")
    headers = scripts.get("http-headers")
    if headers is not None:
        lines = _header_lines(headers)
        status = re.match(r"HTTP/\S+ (\d{3})", lines[0]) if lines else None
        if status:
            http["status"] = int(status[1])
        if "server" not in http:
            server_line = next((x for x in lines if x.lower().startswith("server:")), None)
            if server_line:
                http["server"] = server_line.split(":", 1)[1].strip()
    return {"http": http} if http else {}


def _ssl(scripts: dict[str, ET.Element], tables: Tables) -> dict:
    script = scripts.get("ssl-cert")
    if script is None:
        return {}
    fields = tables[script]
    pem = fields.get("pem")
    if isinstance(pem, str) and "BEGIN CERTIFICATE" in pem:
        c = crawler()  # the crawler's reading of a certificate
        try:
            parsed = c.tls.load_certificate(ssl.PEM_cert_to_DER_cert(pem))
            return {"ssl": {"cert": c.tls.cert_member(parsed), "chain": [pem]}}
        except ValueError:
            pass  # not a certificate cryptography reads: what nmap read of it, below
    cert: dict = {}
    for table in ("subject", "issuer"):
        if isinstance(fields.get(table), dict):
            cert[table] = {_NAMES.get(k, k): v for k, v in fields[table].items()}
    validity = fields.get("validity")
    if isinstance(validity, dict):
        for key, member in (("notBefore", "issued"), ("notAfter", "expires")):
            if isinstance(validity.get(key), str):
                cert[member] = re.sub(r"[-:T]", "", validity[key])[:14] + "Z"
    if isinstance(fields.get("sig_algo"), str):
        cert["sig_alg"] = fields["sig_algo"]
    if isinstance(fields.get("sha1"), str):
        cert["fingerprint"] = {"sha1": fields["sha1"]}
    return {"ssl": {"cert": cert}} if cert else {}


def _ssh(scripts: dict[str, ET.Element], tables: Tables) -> dict:
    """``ssh``: the key an SSH client would negotiate first (type, key, MD5 fingerprint), every key
    nmap read under ``keys``, and ssh2-enum-algos' lists under ``kex`` (with the HASSH and the
    cipher and MAC the crawler's client would pick, as it writes them)."""
    script, algos = scripts.get("ssh-hostkey"), scripts.get("ssh2-enum-algos")
    keys = ssh_keys(tables[script]) if script is not None else []
    lists = kex(tables[algos]) if algos is not None else None
    ssh: dict = {}
    if keys:
        first = min(keys, key=lambda k: _KEY_ORDER.index(k["type"]) if k.get("type") in _KEY_ORDER else len(_KEY_ORDER))
        ssh = {m: first[m] for m in ("fingerprint", "type", "key") if isinstance(first.get(m), str)}
        ssh["keys"] = keys
    if lists:
        ssh.update(kex_members(lists))
    return {"ssh": ssh} if ssh else {}


def _json(element: ET.Element, tables: Tables | None = None, skip: str = "") -> dict:
    """An element as JSON, losing nothing nmap wrote: its attributes, a script's output as a table
    (from ``tables`` where it was read already), other children by tag (a list each, less those
    tagged ``skip``), text where there is some."""
    out: dict = dict(element.attrib)
    if element.tag == "script":
        out["elems"] = tables[element] if tables and element in tables else _elems(element)
        return out
    for child in element:
        if child.tag != skip:
            out.setdefault(child.tag, []).append(_json(child, tables, skip))
    if element.text and element.text.strip():
        out["text"] = element.text.strip()
    return out


FORMAT = Nmap()
