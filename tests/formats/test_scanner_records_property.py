"""Property: whatever a masscan, zmap or zgrab2 file holds in any of its fields (any JSON, any text),
its reader never raises (an exception would end the file's import): each record is a banner the
store takes, or an Unreadable saying where."""

from __future__ import annotations

import io
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spyglass.server.index.store import prepare
from spyglass.server.ingest.formats import Unreadable, masscan, zgrab2, zmap

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
SCALARS = (
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats(allow_nan=False) | TEXT
)
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=10
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def checked(fmt, body: bytes) -> None:
    """``body`` read by ``fmt``: no exception; every banner prepared as the store prepares it."""
    for record in fmt.records(io.BytesIO(body)):
        if isinstance(record, Unreadable):
            assert record.where and record.why
        else:
            prepare(json.loads(json.dumps(record)))  # as it is stored: JSON, read back


def put(target: dict, path: tuple[str, ...], value: object) -> dict:
    here = target
    for name in path[:-1]:
        here = here.setdefault(name, {}) if isinstance(here.get(name, {}), dict) else {}
    here[path[-1]] = value
    return target


@SETTINGS
@given(
    st.sampled_from(
        [
            ("ip",),
            ("timestamp",),
            ("ports",),
            ("p", "port"),
            ("p", "proto"),
            ("p", "status"),
            ("p", "service"),
            ("p", "service", "name"),
            ("p", "service", "banner"),
        ]
    ),  # fmt: skip
    JSON,
    st.sampled_from(["ssh", "http", "http.server", "title", "X509", "ftp", "smtp", "vnc"]),
)
def test_any_value_in_a_masscan_record(path, value, service):
    port = {"port": 80, "proto": "tcp", "service": {"name": service, "banner": "HTTP/1.1 200 OK\r\n"}}
    record = {"ip": "198.18.1.1", "timestamp": "1700000000", "ports": [port]}
    if path[0] == "p":
        put(port, path[1:], value)
    else:
        record[path[0]] = value
    body = json.dumps(record).encode()
    checked(masscan.FORMAT, b"[\n" + body + b"\n,\n" + body + b"\n]\n")
    listing = f"#masscan\nbanner tcp 80 198.18.1.1 1700000000 {service} {value}\nopen tcp {value} 198.18.1.1 1\n"
    checked(masscan.FORMAT, listing.encode("utf-8", "surrogatepass"))


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=8))
def test_any_text_in_a_zmap_line(fields):
    line = ",".join(json.dumps(f) if "," in f or "\n" in f else f for f in fields)
    body = f"saddr,sport,classification,success,timestamp-str\n198.18.1.2,80,synack,1,\n{line}\n"
    checked(zmap.FORMAT, body.encode("utf-8", "surrogatepass"))


MODULES = ["http", "tls", "ssh", "ftp", "smtp", "banner"]
RESULT = [
    ("response",), ("response", "headers"), ("response", "headers", "server"), ("response", "headers", "unknown"),
    ("response", "body"), ("response", "status_line"), ("response", "protocol"), ("response", "request", "url"),
    ("response", "request", "url", "host"), ("response", "request", "tls_log", "handshake_log"),
    ("handshake_log",), ("handshake_log", "server_certificates"),
    ("handshake_log", "server_certificates", "certificate"), ("handshake_log", "server_certificates", "chain"),
    ("handshake_log", "server_certificates", "certificate", "raw"), ("handshake_log", "server_hello"),
    ("handshake_log", "server_hello", "version"), ("server_id",), ("server_id", "raw"),
    ("key_exchange", "server_host_key"), ("key_exchange", "server_host_key", "raw"), ("server_key_exchange",),
    ("server_key_exchange", "kex_algorithms"), ("banner",), ("ehlo",), ("tls", "handshake_log"),
]  # fmt: skip
OUTSIDE = [("entry", "port"), ("entry", "timestamp"), ("entry", "protocol"), ("entry", "result"), ("ip",),
           ("domain",), ("port",), ("data",)]  # fmt: skip


@SETTINGS
@given(st.sampled_from(MODULES), st.sampled_from([("result", *p) for p in RESULT] + OUTSIDE), JSON)
def test_any_value_in_a_zgrab2_record(module, path, value):
    entry = {"status": "success", "protocol": module, "result": {"banner": "220 x\r\n"}}
    entry["timestamp"] = "2026-01-01T00:00:00Z"
    record = {"ip": "198.18.1.3", "domain": "a.example", "data": {module: entry}}
    if path[0] == "result":
        put(entry, path, value)
    elif path[0] == "entry":
        entry[path[1]] = value
    else:
        record[path[0]] = value
    checked(zgrab2.FORMAT, json.dumps(record).encode() + b"\n")
