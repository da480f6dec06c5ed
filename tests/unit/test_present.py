"""The text shared by the CLI and the dashboard: real banner shapes shown in full, hostile text
inert, any JSON type in any member read without a crash."""

from __future__ import annotations

import copy
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spyglass.present.geonet import dns_lines, dns_row, missing_lines, ping_lines, ping_row
from spyglass.present.host import host_facts, render_host_text
from spyglass.present.service import changes, describe_service, headline, service_line, vulns_of
from spyglass.present.values import get_path, number, text_of
from tests.conftest import ORIGINAL as FIXTURES

# One banner in the shapes real exports of the original service have (field names as they come).
REAL = {
    "ip_str": "192.0.2.10",
    "port": 443,
    "transport": "tcp",
    "timestamp": "2026-02-03T04:05:06.789000",
    "product": "nginx",
    "version": 1.24,
    "asn": 13335,
    "os": None,
    "data": "HTTP/1.1 200 OK\r\nServer: nginx\r\n\r\n",
    "_shodan": {"module": "https", "crawler": "abc", "id": None, "options": {}},
    "cloud": {"provider": "Amazon", "service": "EC2", "region": "us-east-1"},
    "ssl": {
        "versions": ["TLSv1.2", "TLSv1.3", "-TLSv1", "-SSLv3"],
        "alpn": ["h2", "http/1.1"],
        "cipher": {"name": "TLS_AES_128_GCM_SHA256", "bits": 128, "version": "TLSv1.3"},
        "ja3s": "15af977ce25de452b96affa2addb1036",
        "jarm": "27d40d40d29d40d1dc42d43d00041d4689ee210389f4f6b4b5b1b93f92252d",
        "dhparams": {"bits": 2048, "generator": 2, "prime": "ff" * 8},
        "chain": ["-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n"] * 2,
        "cert": {
            "serial": 4.99e36,
            "expired": True,
            "issued": "20240101000000Z",
            "expires": "20240401000000Z",
            "subject": {"CN": "example.org"},
            "issuer": {"C": "US", "O": "Let's Encrypt", "CN": "R3"},
            "extensions": [{"name": "basicConstraints", "data": "\\x30\\x00"}],
            "fingerprint": {"sha256": "ab" * 32, "sha1": "cd" * 20},
            "sig_alg": "sha256WithRSAEncryption",
            "pubkey": {"type": "rsa", "bits": 2048},
        },
    },
    "http": {
        "status": None,
        "title": "Welcome",
        "server": "nginx",
        "html": "<html>\n  <body>Hello   there</body></html>",
        "redirects": [{"host": "example.org", "location": "/login", "data": "HTTP/1.1 302"}],
        "favicon": {"hash": -1234567, "data": "AAAA", "location": "/favicon.ico"},
        "components": {"jQuery": {"categories": ["JavaScript libraries"]}, "Bootstrap": {}},
        "waf": "Cloudflare",
    },
    "vulns": {
        "CVE-2021-0001": {"cvss": "high", "verified": False, "summary": "string CVSS"},
        "CVE-2021-0002": {"cvss": 9.8, "verified": True, "summary": "critical"},
        "CVE-2021-0003": {"cvss": "7.5"},
        "CVE-2021-0004": {},
    },
    "opts": {"heartbleed": "2017/01/01 192.0.2.10:443 - VULNERABLE", "vulns": ["CVE-2014-0160"]},
}
SSH = {
    "ip_str": "192.0.2.10",
    "port": 22,
    "transport": "tcp",
    "timestamp": "2026-02-03T04:05:06",
    "data": "SSH-2.0-OpenSSH_9.6\r\n",
    "ssh": {
        "type": "ssh-ed25519",
        "fingerprint": "aa:bb",
        "hassh": "0123abcd",
        "kex": {
            "kex_algorithms": ["curve25519-sha256", "sntrup761x25519-sha512@openssh.com"],
            "encryption_algorithms": ["aes256-gcm@openssh.com"],
            "kex_follows": False,
            "unused": 0,
        },
    },
}
DNS = {
    "ipv6": "2001:db8::1",
    "port": 53,
    "transport": "udp",
    "timestamp": "2026-02-03T04:05:06",
    "dns": {"recursive": True, "resolver_hostname": "ns1.example.org", "resolver_id": None, "software": None},
    "snmp": {"name": "core-sw", "contact": "noc", "uptime": 123456, "versions": ["1", "2c"]},
}


def facts_of(banner) -> dict[str, dict[str, str]]:
    return {s.title: {f.label: f.value for f in s.facts} for s in describe_service(banner).sections}


def test_real_tls_and_http_members_are_shown():
    sections = facts_of(REAL)
    assert sections[""]["service"] == "443/tcp https" and sections[""]["product"] == "nginx 1.24"
    assert sections[""]["cloud"] == "Amazon, EC2, us-east-1"
    tls = sections["TLS"]
    assert tls["versions"] == "TLSv1.2, TLSv1.3 (refused: TLSv1, SSLv3)"
    assert tls["cipher"] == "TLS_AES_128_GCM_SHA256 (128 bits, TLSv1.3)"
    assert tls["alpn"] == "h2, http/1.1" and tls["ja3s"] == REAL["ssl"]["ja3s"] and tls["jarm"] == REAL["ssl"]["jarm"]
    assert tls["DH params"] == "2048 bits" and tls["chain"] == "2 certificate(s)"
    assert tls["serial"] == "4.99e+36" and tls["subject"] == "CN=example.org"
    assert tls["issuer"] == "C=US, O=Let's Encrypt, CN=R3"
    assert tls["valid"] == "2024-01-01 to 2024-04-01, EXPIRED"
    tls_facts = next(s.facts for s in describe_service(REAL).sections if s.title == "TLS")
    assert next(f for f in tls_facts if f.label == "valid").tone == "bad"
    assert [f.label for f in tls_facts][:3] == ["subject", "issuer", "valid"]  # the certificate first
    http = sections["HTTP"]
    assert "status" not in http  # null: no row
    assert http["redirects"] == "1: /login" and http["favicon hash"] == "-1234567" and http["waf"] == "Cloudflare"
    assert http["components"] == "jQuery (JavaScript libraries), Bootstrap"
    assert http["html"] == "<html> <body>Hello there</body></html>"
    assert sections["Findings"] == {"heartbleed": REAL["opts"]["heartbleed"], "vulns": "CVE-2014-0160"}


def test_ssh_dns_snmp_and_big_serials():
    ssh = facts_of(SSH)["SSH"]
    assert ssh["key type"] == "ssh-ed25519" and ssh["hassh"] == "0123abcd"
    assert ssh["kex algorithms"] == "curve25519-sha256, sntrup761x25519-sha512@openssh.com"
    assert ssh["kex follows"] == "no" and ssh["unused"] == "0"
    sections = facts_of(DNS)
    assert sections["DNS"] == {"recursive": "yes", "resolver hostname": "ns1.example.org"}
    assert sections["SNMP"]["uptime"] == "123456" and sections["SNMP"]["versions"] == "1, 2c"
    big = dict(REAL, ssl={"cert": {"serial": 2**64 + 1}})
    assert facts_of(big)["TLS"] == {"serial": str(2**64 + 1)}


def test_vulnerabilities_sorted_by_cvss_whatever_its_type():
    vulns = vulns_of(REAL["vulns"])
    assert [v.cve for v in vulns] == ["CVE-2021-0002", "CVE-2021-0003", "CVE-2021-0001", "CVE-2021-0004"]
    assert [v.cvss for v in vulns] == ["9.8", "7.5", "high", ""] and vulns[0].verified == "yes"
    assert [v.cve for v in vulns_of(["CVE-1", "CVE-2"])] == ["CVE-1", "CVE-2"]  # a list of ids
    assert [v.cve for v in vulns_of({"CVE-9": "x", "CVE-8": {"cvss": float("nan")}, "CVE-7": {"cvss": True}})] == [
        "CVE-7",
        "CVE-8",
        "CVE-9",
    ]
    assert vulns_of("CVE-3")[0].cve == "CVE-3" and vulns_of(7)[0].cve == "7" and vulns_of(None) == []


def test_no_empty_section_headings():
    bare = {
        "ip_str": "192.0.2.1",
        "port": 80,
        "transport": "tcp",
        "timestamp": "2026-01-01T00:00:00",
        "ssl": {"cert": {"subject": {}, "serial": None}, "versions": []},
        "http": {"status": None, "components": {}},
        "ssh": {"kex": {}},
        "dns": {"resolver_hostname": None},
        "snmp": {},
        "opts": {"raw": ""},
        "cloud": {},
    }
    service = describe_service(bare)
    assert [s.title for s in service.sections] == [""]
    assert all(f.value for s in service.sections for f in s.facts)
    assert service.vulns == [] and service.raw == ""
    text = render_host_text({"ip_str": "192.0.2.1", "data": [bare]})
    for heading in ("TLS", "HTTP", "SSH", "DNS", "SNMP", "Findings", "Vulnerabilities", "Raw banner"):
        assert f"  {heading}\n" not in text + "\n"


def test_headlines_and_raw_banners_have_no_carriage_return_symbol():
    assert headline(SSH) == "SSH-2.0-OpenSSH_9.6"
    assert service_line(SSH).endswith("SSH-2.0-OpenSSH_9.6") and "␍" not in service_line(SSH)
    assert describe_service(SSH).raw == "SSH-2.0-OpenSSH_9.6"
    assert describe_service(dict(SSH, data="a\r\nb \r\n\r\n")).raw == "a\nb"
    assert headline(REAL) == "Welcome"  # the HTTP title first
    assert headline(dict(SSH, data="\r\n\r\n  220 mail ready\r\n")) == "220 mail ready"


def test_a_model_reads_like_its_json():
    from spyglass.models import Banner, HostRecord

    assert describe_service(Banner.model_validate(SSH)) == describe_service(SSH)
    record = HostRecord.model_validate(
        {
            "ip_str": "192.0.2.10",
            "org": "Example",
            "ports": [22, 443],
            "vulns": ["CVE-2021-0002"],
            "data": [SSH],
            "city": "Oslo",
            "country_name": "Norway",
            "latitude": 59.91,
            "longitude": 10.75,
        }
    )
    facts = {f.label: f for f in host_facts(record)}
    assert facts["ip"].value == "192.0.2.10" and facts["ip"].tone == "strong"
    assert facts["location"].value == "Oslo, Norway (59.91, 10.75)"
    assert facts["vulns"].tone == "bad" and facts["isp"].value == "-"
    text = render_host_text(record, history=True)
    assert text.startswith("ip           192.0.2.10\norg          Example\n")
    assert "(every scan, newest first)" in text and "  SSH\n    key type" in text
    assert "\n22/tcp   " in text and re.search(r"\n    kex algorithms +curve25519-sha256, ", text)


def test_render_host_text_shows_every_section():
    text = render_host_text({"ip_str": "192.0.2.10", "data": [REAL, SSH, DNS]})
    for needle in (
        "  TLS",
        "  HTTP",
        "  SSH",
        "  DNS",
        "  SNMP",
        "  Findings",
        "  Vulnerabilities",
        "  Raw banner",
        "CVE-2021-0002  9.8    verified  critical",
        "    HTTP/1.1 200 OK\n    Server: nginx",
    ):
        assert needle in text
    assert "␍" not in text


def test_changes_between_scans():
    newer = copy.deepcopy(REAL)
    newer["version"] = "1.26"
    newer["http"]["title"] = "[b]new[/b]\x1b[2J"
    newer["ssl"]["cert"]["fingerprint"] = "not an object"
    newer["vulns"] = ["CVE-2021-0002", "CVE-2099-0001"]
    assert changes(REAL, newer) == [
        "version: 1.24 → 1.26",
        "HTTP title: Welcome → [b]new[/b]␛[2J",
        "TLS certificate changed",
        "new vulnerabilities: CVE-2099-0001",
        "no longer vulnerable to: CVE-2021-0001, CVE-2021-0003, CVE-2021-0004",
    ]
    assert changes(SSH, dict(SSH, data="other")) == ["banner text changed"]
    assert changes(REAL, dict(REAL, tool={"name": "nmap"}, http={"title": "Welcome"}, vulns=None)) == []
    ok = dict(REAL, http={**REAL["http"], "status": 200})
    assert changes(ok, REAL) == ["HTTP status: 200 → -"]  # the same tool, and it no longer says


def test_a_rescan_of_an_unchanged_service_is_no_change():
    """Issue 45, minor 6: every rescan of http.server read "banner text changed" (its Date)."""
    first = {
        "port": 8000,
        "data": "HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6\r\nDate: Sun, 29 Nov 2026 07:01:02 GMT\r\n",
    }
    again = dict(first, data=first["data"].replace("07:01:02", "07:41:15"))
    assert changes(first, again) == []
    smtp = {"port": 25, "data": "220 mx.example ESMTP Postfix; Sun, 29 Nov 2026 07:01:02 +0000"}
    assert changes(smtp, dict(smtp, data=smtp["data"].replace("29 Nov", "30 Nov"))) == []
    assert changes(first, dict(first, data=first["data"].replace("SimpleHTTP/0.6", "SimpleHTTP/0.7"))) == [
        "banner text changed"
    ]
    assert changes(SSH, SSH) == []
    rekeyed = dict(SSH, ssh={"type": "ssh-rsa", "fingerprint": "09:0f", "hassh": "ffff"})
    assert changes(SSH, rekeyed) == ["HASSH: 0123abcd → ffff", "SSH host key: ssh-ed25519 aa:bb → ssh-rsa 09:0f"]
    assert changes(SSH, dict(SSH, ssh=["a list", "where an object is usual"])) == [
        "HASSH: 0123abcd → -",
        "SSH host key: ssh-ed25519 aa:bb → -",
    ]


# -- hostile text ------------------------------------------------------------------------------------
HOSTILE_TEXT = [
    "[@click=app.quit]",
    "[/]",
    "\x1b[201~rm -rf ~\x1b[200~",
    "\x9b31m",
    "a\u202eb",
    "z\u200bw\u200dj",
    "\ufeffbom",
    "x" * 1_000_000,
]
CONTROL = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)) if chr(c) not in "\n"]
INVISIBLE = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\u2060\ufeff"


def inert(text: str, lines: bool = True) -> bool:
    return not any(c in text for c in CONTROL + list(INVISIBLE)) and (lines or "\n" not in text)


@pytest.mark.parametrize("hostile", HOSTILE_TEXT, ids=range(len(HOSTILE_TEXT)))
def test_hostile_text_in_every_member_stays_inert(hostile):
    banner = copy.deepcopy(REAL)
    banner.update(product=hostile, data=hostile, info=hostile, tags=[hostile])
    banner["http"].update(title=hostile, server=hostile, html=hostile, components={hostile: {"categories": [hostile]}})
    banner["ssl"]["cert"].update(subject={hostile: hostile}, serial=hostile)
    banner["ssh"] = {"kex": {hostile: [hostile]}, "type": hostile}
    banner["vulns"] = {hostile: {"cvss": hostile, "summary": hostile}}
    service = describe_service(banner)
    for section in service.sections:
        for fact in section.facts:
            assert inert(fact.label, lines=False) and inert(fact.value, lines=False)
            assert len(fact.value) < 1000 and len(fact.label) < 100
    assert all(inert(v.cve + v.cvss + v.summary, lines=False) for v in service.vulns)
    assert inert(service.raw) and len(service.raw) < 9000
    assert inert(service_line(banner), lines=False)
    text = render_host_text({"ip_str": hostile, "org": hostile, "hostnames": [hostile], "data": [banner]})
    assert inert(text) and len(text) < 40_000
    if hostile.startswith("["):
        assert hostile in text  # markup is shown as it is
    assert all(inert(line, lines=False) for line in changes(REAL, banner))


# -- any JSON value in any member ----------------------------------------------------------------------
MEMBERS = [
    "product",
    "version",
    "info",
    "os",
    "os_classes",
    "cpe",
    "cpe23",
    "tags",
    "data",
    "timestamp",
    "port",
    "transport",
    "_shodan",
    "_intel",
    "_shodan.module",
    "cloud",
    "cloud.provider",
    "ssl",
    "ssl.versions",
    "ssl.cipher",
    "ssl.cipher.bits",
    "ssl.alpn",
    "ssl.dhparams",
    "ssl.dhparams.bits",
    "ssl.chain",
    "ssl.cert",
    "ssl.cert.serial",
    "ssl.cert.expired",
    "ssl.cert.issued",
    "ssl.cert.subject",
    "ssl.cert.issuer",
    "ssl.cert.fingerprint",
    "ssl.cert.pubkey",
    "http",
    "http.status",
    "http.title",
    "http.components",
    "http.redirects",
    "http.favicon",
    "http.favicon.hash",
    "http.html",
    "http.waf",
    "ssh",
    "ssh.kex",
    "ssh.kex.kex_algorithms",
    "ssh.type",
    "dns",
    "dns.recursive",
    "snmp",
    "ntp",
    "opts",
    "opts.vulns",
    "vulns",
    "vulns.CVE-1",
    "vulns.CVE-1.cvss",
    "vulns.CVE-1.verified",
    "vulns.CVE-1.summary",
]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**64, max_value=2**200)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
    | st.sampled_from(["high", "[/]", "[@click=app.quit]", "\x1b[201~", "-TLSv1", "20240101000000Z"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def put(banner: dict, path: str, value) -> None:
    parts = path.split(".")
    node = banner
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[parts[-1]] = value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(MEMBERS), JSON), min_size=1, max_size=6))
def test_any_json_in_any_member_never_raises(assignments):
    banner = copy.deepcopy(REAL)
    for path, value in assignments:
        put(banner, path, value)
    service = describe_service(banner)
    assert all(f.value and inert(f.value, lines=False) for s in service.sections for f in s.facts)
    assert all(s.facts for s in service.sections)
    record = {"ip_str": "192.0.2.10", "data": [banner, REAL], "vulns": banner.get("vulns"), "ports": banner.get("port")}
    assert inert(render_host_text(record))
    assert inert(service_line(banner), lines=False)
    changes(REAL, banner), changes(banner, REAL)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_any_json_as_a_whole_record_or_result_never_raises(value):
    assert inert(render_host_text(value))
    assert inert(render_host_text({"ip_str": "192.0.2.1", "data": [value, {"port": value}]}))
    ping_lines([value, {"from_loc": value, "is_alive": True, "avg_rtt": value, "error": None}])
    dns_lines([value, {"answers": value, "from_loc": {"city": value}}])


# -- small readers -------------------------------------------------------------------------------------
def test_readers():
    assert get_path(REAL, "ssl.cert.subject.CN") == "example.org"
    assert get_path(REAL, "ssl.cert.subject.CN.x") is None and get_path({"a": "s"}, "a.b", 1) == 1
    assert get_path({"a": None}, "a", "d") == "d"
    assert [number(v) for v in (1, 2.5, "7.5", " 3 ", "high", True, None, float("nan"), 10**400, [1])] == [
        1.0,
        2.5,
        7.5,
        3.0,
        None,
        None,
        None,
        None,
        None,
        None,
    ]
    assert text_of({"CN": "x", "O": None}) == "CN=x" and text_of([1, [2, 3], {"a": 1}]) == "1, [2 items], {…}"
    assert text_of(list(range(60))).endswith("49, … 10 more") and text_of(None) == "" and text_of(False) == "no"


# -- ping and DNS --------------------------------------------------------------------------------------
PING = {
    "ip": "192.0.2.1",
    "is_alive": True,
    "min_rtt": 0.271,
    "avg_rtt": 0.289,
    "max_rtt": 0.307,
    "rtts": [],
    "packets_sent": 3,
    "packets_received": 3,
    "packet_loss": 0.0,
    "from_loc": {"city": "Santa Clara", "country": "US", "latlon": "37.39,-121.96"},
}


def test_ping_rows_and_lines():
    row = ping_row(PING)
    assert row.cells == ["0.27", "0.29", "0.31", "0%", "192.0.2.1"] and row.avg_ms == 0.289 and not row.failed
    assert ping_lines([PING]) == [f"{'Santa Clara, US':<28} 192.0.2.1  min 0.27  avg 0.29  max 0.31 ms  loss 0%"]
    down = dict(PING, is_alive=False, packet_loss=1.0)
    assert ping_row(down).cells == ["-", "-", "-", "100%", "no reply from 192.0.2.1 (3 sent)"]
    failed = dict(PING, error="\x1b[31mno route[/]")
    assert ping_row(failed).failed and ping_row(failed).answer == "␛[31mno route[/]"
    odd = dict(PING, avg_rtt="fast", packet_loss=None, from_loc={"city": "東京", "country": 7})
    assert ping_row(odd).avg == "-" and ping_row(odd).loss == "-" and ping_row(odd).location == "東京"
    # 東京 takes 4 cells: the column is padded to 28 cells, not 28 characters
    assert ping_lines([odd]) == ["東京, 7" + " " * 21 + " 192.0.2.1  min 0.27  avg -  max 0.31 ms  loss -"]


def test_dns_rows_and_missing_locations():
    from spyglass.models import MissingAgent

    answer = {
        "answers": [{"type": "A", "value": "192.0.2.5"}, {"type": "TXT", "value": "v=spf1\x07"}],
        "from_loc": PING["from_loc"],
    }
    row = dns_row(answer)
    assert row.answer == "A 192.0.2.5; TXT v=spf1␇" and row.answered and row.cells[-1] == row.answer
    assert dns_row(dict(answer, answers=[], status="NXDOMAIN")).answer == "NXDOMAIN"
    assert dns_row({"answers": "x"}).answer == "no answer"
    assert dns_lines([answer]) == [f"{'Santa Clara, US':<28} A 192.0.2.5; TXT v=spf1␇"]

    class Results(list):
        missing = [MissingAgent(agent="http://127.0.0.1:9/geonet", reason="timed out\x1b[2J")]

    assert missing_lines(Results()) == ["http://127.0.0.1:9/geonet: no result (timed out␛[2J)"]
    assert missing_lines([]) == []


def test_real_geonet_bodies():
    from spyglass.models import DnsResult, PingResult

    ping = PingResult.model_validate(json.loads((FIXTURES / "geonet" / "ping.json").read_text()))
    assert ping_lines([ping])[0].startswith("Santa Clara, US")
    assert "min 0.27  avg 0.29  max 0.31 ms  loss 0%" in ping_lines([ping])[0]
    bodies = json.loads((FIXTURES / "geonet" / "ping_multiple.json").read_text())
    several = [PingResult.model_validate(p) for p in bodies]
    assert len(ping_lines(several)) == len(several) > 1
    dns = DnsResult.model_validate(json.loads((FIXTURES / "geonet" / "dns.json").read_text()))
    assert dns_row(dns).answer.startswith("A ")


def test_real_host_body():
    body = json.loads((FIXTURES / "host" / "version.json").read_text())
    for banner in body["matches"]:
        service = describe_service(banner)
        assert service.sections[0].facts[0].value.endswith(banner["_shodan"]["module"])
        assert inert(service.raw)  # the pptp banner is full of NUL bytes
    assert "␀" in describe_service(body["matches"][1]).raw
    assert service_line(body["matches"][0]) == f"27015/udp {'www.solugames.com 47':<32} www.solugames.com Server"
    assert service_line(body["matches"][1]).startswith(f"1723/tcp  {'pptp':<32} Firmware: 1")


@pytest.mark.external
def test_present_loads_neither_textual_nor_the_client():
    from tests.unit.test_layers import modules_loaded_by, top

    loaded = modules_loaded_by("spyglass.present.host", "spyglass.present.geonet", "spyglass.present.search")
    assert not top(loaded) & {"textual", "httpx", "fastapi", "uvicorn"}
    assert not {n for n in loaded if n.startswith(("spyglass.client", "spyglass.server", "spyglass.tui"))}


# -- search results and facets ---------------------------------------------------------------------------
def test_result_cells_and_lines():
    from rich.cells import cell_len

    from spyglass.present.search import RESULT_COLUMNS, result_cells, result_line

    cells = result_cells(dict(SSH, org="漢字" * 40, location={"country_code": "NO"}))
    assert len(cells) == len(RESULT_COLUMNS)
    assert cells[:2] == ["192.0.2.10", "22/tcp"] and cells[3:] == ["NO", "", "SSH-2.0-OpenSSH_9.6", "2026-02-03"]
    assert cell_len(cells[2]) == 60 and cells[2].endswith("…")
    assert result_cells(DNS)[0] == "2001:db8::1"  # IPv6 banners have no ip_str
    assert result_line(SSH) == f"{'192.0.2.10':<16} {service_line(SSH)}"


def test_facet_groups_and_lines():
    from spyglass.models import SearchResponse
    from spyglass.present.search import facet_groups, facet_lines

    facets = SearchResponse.model_validate(
        {
            "matches": [],
            "total": 7,
            "facets": {"port": [{"count": 5, "value": 22}, {"count": 2, "value": "漢字\x1b[/]"}]},
        }
    ).facets
    [(name, rows)] = facet_groups(facets)
    assert name == "port" and [(r.value, r.label, r.count, r.share) for r in rows] == [
        ("22", "22", 5, 1.0),
        ("漢字\x1b[/]", "漢字␛[/]", 2, 0.4),
    ]
    assert facet_lines(facets) == [
        "",
        "port",
        f"  {'22':<40} {5:>10,}  {'#' * 24}",
        f"  漢字␛[/]{' ' * 32} {2:>10,}  {'#' * 10}",
    ]  # 8 cells: 漢字 takes 4
    assert facet_groups({"x": "not a list", "y": [7, {"count": "many"}]}) == [
        ("x", []),
        ("y", [facet_groups({"y": [{}]})[0][1][0]] * 2),
    ]
    assert facet_groups(None) == []


def test_the_raw_banner_for_the_clipboard():
    from spyglass.present.service import banner_for_clipboard

    copied = banner_for_clipboard(dict(SSH, data="SSH-2.0\r\n\x1b[201~echo owned\r\n" + "A" * 100_000))
    assert copied.text.startswith("SSH-2.0\necho owned\nAAA") and "\x1b" not in copied.text
    assert len(copied.text.encode()) == 64 * 1024 and copied.cut_bytes == 100_000 + 19 - 64 * 1024
    assert copied.note("the raw banner").startswith("Copied the raw banner (cut at 64 KiB")
    assert banner_for_clipboard({"data": ["odd", 1]}) == ("odd, 1", 0)
    assert banner_for_clipboard({}) == ("", 0)


def test_huge_members_are_cut_not_walked():
    banner = copy.deepcopy(REAL)
    banner["ssh"] = {"kex": {f"k{i}": [i] * 3 for i in range(200_000)}}
    banner["vulns"] = [f"CVE-2000-{i:06d}" for i in range(200_000)]
    banner["ssl"]["versions"] = ["TLSv1.2"] * 200_000
    banner["http"].update(html="<p>" * 300_000, components=dict.fromkeys(map(str, range(100_000)), {}))
    banner["ssl"]["cert"]["serial"] = 10**5000  # past Python's int-to-text digit limit
    service = describe_service(banner)
    ssh = next(s.facts for s in service.sections if s.title == "SSH")
    assert len(ssh) == 40 and len(service.vulns) == 200
    tls = {f.label: f.value for f in next(s.facts for s in service.sections if s.title == "TLS")}
    assert tls["serial"] == f"a {(10**5000).bit_length():,}-bit number"
    assert len(render_host_text({"ip_str": "192.0.2.1", "data": [banner]})) < 60_000


def test_service_rows_say_what_changed_since_the_scan_before():
    from spyglass.present.host import SERVICE_COLUMNS, service_rows

    older = dict(SSH, timestamp="2025-01-01T00:00:00", product="OpenSSH", version="8.9")
    newer = dict(SSH, timestamp="2026-02-03T04:05:06.000", product="OpenSSH", version="9.6")
    record = {"ip_str": "192.0.2.10", "data": [newer, REAL, older]}  # newest first, as the service sends them
    rows = service_rows(record)
    assert all(len(row) == len(SERVICE_COLUMNS) for row in rows)
    assert rows == [
        ["22/tcp", "OpenSSH 9.6", "2026-02-03 04:05", "version: 8.9 → 9.6"],
        ["443/tcp", "nginx 1.24", "2026-02-03 04:05", ""],
        ["22/tcp", "OpenSSH 8.9", "2025-01-01 00:00", ""],
    ]
    text = render_host_text(record, history=True)
    assert "\n22/tcp    OpenSSH 9.6" in text and "\n  changed since the scan before: version: 8.9 → 9.6\n" in text
    assert text.count("changed since") == 1
    assert service_rows({"data": "not a list"}) == [] and service_rows(None) == []


def test_a_narrow_list_line_cuts_the_product_so_the_headline_shows():
    from spyglass.present.stream import stream_line

    b = {"ip_str": "127.0.0.1", "port": 80, "timestamp": "2026-01-01T10:00:00", "data": "HTTP/1.1 200 OK"}
    b["product"], b["http"] = "Microsoft IIS httpd with a long name", {"title": "Welcome"}
    wide, narrow = stream_line(b), stream_line(b, product_width=16)
    assert "Microsoft IIS httpd with a long name Welcome" in wide  # the usual: never cut
    assert "Microsoft IIS h… Welcome" in narrow and len(narrow) < len(wide)


def test_os_classes_read_most_accurate_first_odd_ones_skipped():
    from spyglass.present.service import describe_service

    classes = [
        {"vendor": "Linux", "family": "Linux", "generation": "5.X", "type": "general purpose", "accuracy": 100},
        {"vendor": "Netgear", "family": "embedded", "type": "WAP", "accuracy": "high"},
        "Linux",
        {"vendor": None, "accuracy": 90},
    ]
    facts = {f.label: f.value for f in describe_service({"port": 22, "os_classes": classes}).sections[0].facts}
    assert facts["os classes"] == "Linux 5.X (general purpose) 100%, Netgear embedded (WAP)"


def test_a_host_known_only_by_its_country_code_says_where_it_is():
    facts = {f.label: f.value for f in host_facts({"ip_str": "192.0.2.7", "location": {"country_code": "NZ"}})}
    assert facts["location"] == "NZ"
    named = {"ip_str": "192.0.2.7", "city": "Auckland", "country_code": "NZ", "country_name": "New Zealand"}
    assert {f.label: f.value for f in host_facts(named)}["location"] == "Auckland, New Zealand"


@pytest.mark.parametrize(
    "args, line",
    [
        ((1, 1, False, None, False, 0), "1 result, all shown"),
        ((1538, 100, True, None, False, 0), "1,538 results (count only)"),
        (
            (1538, 100, False, None, True, 0),
            "1,538 results, 100 shown — past the last row loads 100 more (1 query credit)",
        ),
        (
            (1538, 197, False, None, True, 2),
            "1,538 results, 197 shown — past the last row loads more (1 query credit a page); "
            "2 more since the first page (r shows them)",
        ),
        ((1538, 1535, False, None, False, 0), "1,538 results, 1,535 shown; 3 more since the first page (r shows them)"),
        (
            (90000, 10000, False, 10000, False, 0),
            "90,000 results; the first 10,000 are shown — refine, or export (e) for all",
        ),
    ],
)
def test_the_search_status_after_a_page(args, line):
    from spyglass.present.search import paging_line

    assert paging_line(*args) == line
