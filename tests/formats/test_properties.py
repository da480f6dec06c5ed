"""Whatever a scanner's file holds, every record a format accepts is a banner every store takes
(the shape check an import makes), and a format's reader never raises: it yields banners and
Unreadables. Run over every format in FORMATS, on arbitrary bytes and on a real nmap file cut and
damaged anywhere; and over nmap hosts whose every text and number is arbitrary."""

from __future__ import annotations

import io
import uuid
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spyglass.exactjson import dumps, loads
from spyglass.server.clickhouse.store import ClickHouseStore
from spyglass.server.index import BannerIndex
from spyglass.server.ingest.formats import Unreadable, common, known, masscan, zgrab2, zgrab2_modules
from spyglass.server.ingest.formats.nmap import Nmap

REAL = Path(__file__).parent / "data" / "nmap-loopback.xml"  # a real run of tests/formats/nmapfiles.py
PREPARES = (BannerIndex.prepare, ClickHouseStore.prepare)


def stored(records) -> int:
    """How many banners ``records`` holds, each checked as an import checks it, in every store."""
    banners = 0
    for record in records:
        if isinstance(record, Unreadable):
            assert record.where and record.why
            continue
        assert isinstance(record, dict)
        body = dumps(record)  # as the importer writes it for its workers
        for prepare in PREPARES:
            prepare(loads(body), body)
        assert "tool" in record and record["tags"][-1:] == [record["tool"]["name"]]
        banners += 1
    return banners


@pytest.mark.parametrize("fmt", known.FORMATS, ids=lambda f: f.name)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4000))
def test_any_bytes(fmt, data):
    stored(fmt.records(io.BytesIO(data)))


@settings(max_examples=150, deadline=None)
@given(cut=st.integers(0, 1 << 20), at=st.integers(0, 1 << 20), junk=st.binary(max_size=40))
def test_a_real_file_cut_and_damaged_anywhere(cut, at, junk):
    real = REAL.read_bytes()
    damaged = real[: at % len(real)] + junk + real[at % len(real) :]
    damaged = damaged[: len(damaged) - cut % len(damaged)]
    whole = stored(Nmap().records(io.BytesIO(real)))
    assert whole == 6
    assert stored(Nmap().records(io.BytesIO(damaged))) <= whole + 1  # junk may split one host in two


text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=30).filter(
    lambda s: all(c in "\t\n\r" or c >= " " for c in s) and "\ufffe" not in s and "\uffff" not in s
)  # what XML 1.0 can carry
number = st.one_of(st.integers(-(2**40), 2**40).map(str), text)
port_number = st.one_of(st.integers(0, 65535).map(str), st.integers(0, 65535).map(str), number)  # mostly valid
seconds = st.one_of(st.integers(0, 2**33).map(str), st.integers(0, 2**33).map(str), number)
address = st.one_of(st.ip_addresses().map(str), st.ip_addresses().map(str), text)


@st.composite
def hosts(draw) -> bytes:
    run = ET.Element("nmaprun", scanner="nmap", args=draw(text), start=draw(number), version=draw(text))
    host = ET.SubElement(run, "host", starttime=draw(seconds), endtime=draw(seconds))
    kind = draw(st.sampled_from(["ipv4", "ipv6", "ipv4", "mac"]))
    ET.SubElement(host, "address", addr=draw(address), addrtype=kind)
    names = ET.SubElement(host, "hostnames")
    for name in draw(st.lists(text, max_size=3)):
        ET.SubElement(names, "hostname", name=name, type="PTR")
    ports = ET.SubElement(host, "ports")
    for _ in range(draw(st.integers(0, 3))):
        port = ET.SubElement(
            ports, "port", protocol=draw(st.sampled_from(["tcp", "udp", "sctp"])), portid=draw(port_number)
        )
        ET.SubElement(port, "state", state=draw(st.sampled_from(["open", "open", "closed", "filtered"])))
        service = ET.SubElement(port, "service", name=draw(text), product=draw(text), version=draw(text))
        ET.SubElement(service, "cpe").text = draw(text)
        for script_id, keys in (
            ("http-title", ["title", "redirect_url"]),
            ("http-headers", []),
            ("banner", []),
            ("ssl-cert", ["pem", "sha1", "sig_algo"]),
        ):
            if draw(st.booleans()):
                script = ET.SubElement(port, "script", id=script_id, output=draw(text))
                for key in keys:
                    ET.SubElement(script, "elem", key=key).text = draw(text)
                if script_id == "ssl-cert":
                    subject = ET.SubElement(script, "table", key="subject")
                    ET.SubElement(subject, "elem", key=draw(text)).text = draw(text)
        if draw(st.booleans()):
            table = ET.SubElement(ET.SubElement(port, "script", id="ssh-hostkey", output=""), "table")
            for key in ("type", "fingerprint", "key", "bits"):
                ET.SubElement(table, "elem", key=key).text = draw(text)
        if draw(st.booleans()):
            _scripts_beyond_the_service(draw, port)
    os_ = ET.SubElement(host, "os")
    for _ in range(draw(st.integers(0, 2))):
        ET.SubElement(os_, "osmatch", name=draw(text), accuracy=draw(number))
    if draw(st.booleans()):  # a host script, traceroute, uptime, distance, a MAC address: any values
        script = ET.SubElement(ET.SubElement(host, "hostscript"), "script", id=draw(st.sampled_from(SCRIPT_IDS)))
        ET.SubElement(script, "elem", key=draw(st.sampled_from(["os", "state", "1"]))).text = draw(text)
        ET.SubElement(script, "table", key=draw(cve))
        trace = ET.SubElement(host, "trace", port=draw(number), proto=draw(text))
        ET.SubElement(trace, "hop", ttl=draw(number), ipaddr=draw(text), rtt=draw(number), host=draw(text))
        ET.SubElement(host, "uptime", seconds=draw(number), lastboot=draw(text))
        ET.SubElement(host, "distance", value=draw(number))
        ET.SubElement(host, "address", addr=draw(text), addrtype="mac", vendor=draw(text))
    return ET.tostring(run)


SCRIPT_IDS = ["smb-os-discovery", "vulners", "ssh2-enum-algos", "http-vuln-cve2011-3192", "clock-skew"]
cve = st.one_of(st.just("CVE-2011-3192"), st.just("CVE:CVE-2021-23017"), text)
state = st.one_of(st.sampled_from(["VULNERABLE", "LIKELY VULNERABLE", "NOT VULNERABLE"]), text)


def _scripts_beyond_the_service(draw, port: ET.Element) -> None:
    """ssh2-enum-algos, vulners and a vulns library report, in nmap's shapes with any values."""
    algos = ET.SubElement(port, "script", id="ssh2-enum-algos", output="")
    for key in draw(st.lists(st.sampled_from(["kex_algorithms", "mac_algorithms", "encryption_algorithms"]))):
        listed = ET.SubElement(algos, "table", key=key)
        for value in draw(st.lists(text, max_size=3)):
            ET.SubElement(listed, "elem").text = value
    vulners = ET.SubElement(ET.SubElement(port, "script", id="vulners", output=""), "table", key=draw(text))
    for _ in range(draw(st.integers(0, 2))):
        one = ET.SubElement(vulners, draw(st.sampled_from(["table", "elem"])))
        for key, value in (("id", cve), ("cvss", number), ("type", text), ("is_exploit", text)):
            ET.SubElement(one, "elem", key=key).text = draw(value)
    report = ET.SubElement(ET.SubElement(port, "script", id=draw(text), output=""), "table", key=draw(cve))
    ET.SubElement(report, "elem", key="state").text = draw(state)
    for key, value in (("ids", cve), ("scores", number), ("refs", text), ("description", text)):
        ET.SubElement(ET.SubElement(report, "table", key=key), "elem", key=draw(text)).text = draw(value)


@settings(max_examples=300, deadline=None)
@given(xml=hosts())
def test_any_nmap_host(xml):
    assert Nmap().sniff(xml)
    stored(Nmap().records(io.BytesIO(xml)))


def test_an_encoding_declaration_python_does_not_know_loses_no_host():
    """hypothesis found it: ``encoding="aUTF-8"`` made the run's header raise LookupError."""
    damaged = REAL.read_bytes().replace(b'encoding="UTF-8"', b'encoding="aUTF-8"', 1)
    assert damaged != REAL.read_bytes()
    assert stored(Nmap().records(io.BytesIO(damaged))) == stored(Nmap().records(io.BytesIO(REAL.read_bytes())))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=12,
)
module_fields = st.sampled_from(
    ["server_version", "server_parameters", "info_response", "version", "build_info", "server_properties",
     "banner", "ping_response", "tls", "response", "handshake_log", "server_id", "product"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    protocol=st.sampled_from([*zgrab2_modules.PORTS, "banner", "other"]),
    result=st.dictionaries(module_fields, json_values, max_size=4),
    envelope=st.dictionaries(st.sampled_from(["ip", "domain", "port"]), json_values, max_size=3),
)
def test_any_zgrab2_module_result(protocol, result, envelope):
    """zgrab2's envelope as it writes it around any result of any module: never an exception."""
    record = {"ip": "198.18.0.1", **envelope, "data": {protocol: {"status": "success", "protocol": protocol,
              "result": result, "timestamp": "2026-01-02T03:04:05Z"}}}  # fmt: skip
    stored(zgrab2.FORMAT.records(io.BytesIO(dumps(record) + b"\n")))


@settings(max_examples=200, deadline=None)
@given(records=st.lists(st.dictionaries(st.sampled_from(["ip", "timestamp", "port", "proto", "rec_type", "data"]),
                                         json_values, max_size=6), max_size=5))  # fmt: skip
def test_any_masscan_ndjson(records):
    head = b'{"ip":"198.18.0.1","timestamp":"1700000000","port":80,"proto":"tcp","rec_type":"status","data":{}}\n'
    stored(masscan.FORMAT.records(io.BytesIO(head + b"".join(dumps(r) + b"\n" for r in records))))


@given(st.binary(min_size=16, max_size=16))
def test_a_banners_id_is_the_uuid_of_its_digest(digest):
    assert common._uuid_text(digest.hex()) == str(uuid.UUID(bytes=digest))


@given(st.integers(min_value=0, max_value=2**33) | st.floats(min_value=0, max_value=2**33))
def test_a_stamp_of_seconds_is_the_datetimes(seconds):
    made_once = common.stamp(seconds)
    assert made_once == common.stamp(seconds) == common.stamp(datetime.fromtimestamp(float(seconds), UTC))
