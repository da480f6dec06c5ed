"""A service nmap could not name: its banner is what it answered nmap's probes (the
``fingerprint-strings`` script), what it said unprompted first, and never the probes' names
(newcomer trial 22: `6380/tcp  GetRequest, NULL, RPCCheck:` in search results)."""

from __future__ import annotations

import io

from spyglass.server.ingest.formats.nmap import Nmap

# As nmap -sV -sC writes an unknown service: answers alike under one key, the probes' names joined.
PORT = (
    '<port protocol="tcp" portid="6380"><state state="open" reason="syn-ack" reason_ttl="64"/>'
    '<service name="redis" method="table" conf="3"/>'
    '<script id="fingerprint-strings" output="&#xa;  GetRequest, NULL, RPCCheck: &#xa;    -ERR unknown command&#xa;'
    '  SSLSessionReq: &#xa;    -ERR Protocol error">'
    '<elem key="SSLSessionReq">&#xa;    -ERR Protocol error</elem>'
    '<elem key="GetRequest, NULL, RPCCheck">&#xa;    -ERR unknown command</elem>'
    "</script></port>"
)
SCAN = (
    '<?xml version="1.0" encoding="UTF-8"?><nmaprun scanner="nmap" args="nmap -sV -sC 127.0.0.2" start="1764522000"'
    ' version="7.93" xmloutputversion="1.05"><host starttime="1764522000" endtime="1764522010">'
    '<status state="up" reason="localhost-response"/><address addr="127.0.0.2" addrtype="ipv4"/>'
    f"<ports>{PORT}</ports></host></nmaprun>"
)


def test_an_unnamed_service_says_its_own_words_first_and_no_probe_names():
    [banner] = [b for b in Nmap().records(io.BytesIO(SCAN.encode())) if isinstance(b, dict)]
    assert banner["data"] == "-ERR unknown command\n-ERR Protocol error"


def test_without_answer_elements_the_output_is_kept():
    bare = SCAN.replace('<elem key="SSLSessionReq">&#xa;    -ERR Protocol error</elem>', "").replace(
        '<elem key="GetRequest, NULL, RPCCheck">&#xa;    -ERR unknown command</elem>', ""
    )
    [banner] = [b for b in Nmap().records(io.BytesIO(bare.encode())) if isinstance(b, dict)]
    assert banner["data"].startswith("GetRequest, NULL, RPCCheck: \n  -ERR unknown command")
