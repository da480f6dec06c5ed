"""Export's checks and CSV cells: formulas neutralised, controls visible, any JSON shape survives."""

from __future__ import annotations

import json

import pytest

from spyglass.export import BadExport, banner_line, cell, check_fields, check_request

HOSTILE = {
    "ip_str": "198.18.0.1",
    "port": 80,
    "org": '=HYPERLINK("http://x","y")',
    "isp": "+1+1",
    "os": "-2",
    "product": "@SUM(A1)",
    "info": "\tindented",
    "version": "\rreturn",
    "data": "line\x1b[2J\r\nnext\x07",
    "title": "ok \u202e reversed",
    "tags": ["=cmd", 1],
    "location": {"country_code": None, "city": 7},
    "vulns": ["CVE-1"],
    "ssl": "not an object",
    "http": {"status": None, "title": 123},
    "asn": 13335,
    "serial": 2**80,
    "flag": True,
}


@pytest.mark.parametrize(
    "field, expected",
    [
        ("org", '\'=HYPERLINK("http://x","y")'),
        ("isp", "'+1+1"),
        ("os", "'-2"),
        ("product", "'@SUM(A1)"),
        ("info", "' indented"),
        ("version", "'\u240dreturn"),
        ("data", "line\u241b[2J\u240anext\u2407"),
        ("title", "ok \ufffd reversed"),
        ("tags", '["=cmd", 1]'),
        ("location.city", "7"),
        ("location.country_code", ""),
        ("vulns", '["CVE-1"]'),
        ("ssl.cert.serial", ""),
        ("http.status", ""),
        ("http.title", "123"),
        ("asn", "13335"),
        ("serial", str(2**80)),
        ("flag", "true"),
        ("tags.0", "'=cmd"),
        ("tags.5", ""),
        ("missing.deeply.nested", ""),
    ],
)
def test_csv_cells_are_inert_and_never_fail_on_a_type(field, expected):
    assert cell(HOSTILE, field) == expected


def test_cell_of_a_banner_that_is_not_an_object():
    assert cell(["a"], "ip_str") == "" and cell(None, "port") == "" and cell("text", "x.y") == ""


def test_json_lines_keep_values_exact_even_past_64_bits():
    line = banner_line(HOSTILE)
    assert json.loads(line) == HOSTILE and line.endswith(b"\n") and b"\n" not in line[:-1]


@pytest.mark.parametrize(
    "fields, expected",
    [
        ("ip_str,port,location.country_code", ["ip_str", "port", "location.country_code"]),
        ("ssl.cert.serial, http.favicon.hash", ["ssl.cert.serial", "http.favicon.hash"]),
        ("rdp.os,_shodan.module,vulns.CVE-2014-0160.cvss,ssl.chain.0", None),
        ("_intel", ["_intel"]),
        ("vulns,snmp,ipv6", ["vulns", "snmp", "ipv6"]),
    ],
)
def test_fields_that_are_accepted(fields, expected):
    assert check_fields(fields) == (expected or fields.split(","))


@pytest.mark.parametrize(
    "fields, message",
    [
        ("ipstr", "a banner has no member 'ipstr'"),
        ("ip_str,", "'' is not a member name"),
        ("location..city", "'location..city' is not"),
        ("1abc", "'1abc' is not"),
        ("ip str", "'ip str' is not"),
        ("org,org", "named twice"),
        ("http.title;drop", "is not"),
    ],
)
def test_fields_that_are_refused(fields, message):
    with pytest.raises(BadExport, match=message.replace("(", r"\(").replace(".", r"\.")):
        check_fields(fields)


@pytest.mark.parametrize(
    "name, limit, fields, message",
    [
        ("out.txt", None, None, "out.txt must end in .json.gz, .json or .csv"),
        ("out.csv.bak", None, None, "must end in"),
        ("no/such/dir/out.csv", None, None, "no such folder"),
        ("out.csv", 0, None, "--limit must be at least 1, not 0"),
        ("out.csv", -5, None, "--limit must be at least 1, not -5"),
        ("out.json.gz", None, "ip_str", "--fields is for .csv"),
    ],
)
def test_requests_refused_before_any_file_is_touched(tmp_path, name, limit, fields, message):
    with pytest.raises(BadExport, match=message.replace(".", r"\.")):
        check_request(tmp_path / name, fields, limit)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_is_not_an_output(tmp_path):
    (tmp_path / "x.csv").mkdir()
    with pytest.raises(BadExport, match="is a folder"):
        check_request(tmp_path / "x.csv", None, None)


def odd_value(rng, depth: int = 0):
    """Any JSON value, with the text a hostile banner might hold."""
    kinds = ["none", "bool", "int", "big", "float", "text"] + (["list", "dict"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "list":
        return [odd_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == "dict":
        return {rng.choice(["a", "b", "cert", "=x"]): odd_value(rng, depth + 1) for _ in range(rng.randrange(4))}
    return {
        "none": None,
        "bool": rng.random() < 0.5,
        "int": rng.randrange(-(2**63), 2**63),
        "big": rng.choice([2**64 + 1, -(2**70)]),
        "float": rng.choice([4.99e36, -0.0, 1e-300]),
        "text": "".join(
            rng.choice(["=", "+", "-", "@", "\t", "\r", "\n", "\x1b", "\x9b", "\u202e", "a", "é", " "])
            for _ in range(rng.randrange(6))
        ),
    }[kind]


def test_any_json_in_any_member_makes_inert_cells_and_exact_lines():
    import random

    rng = random.Random(0)
    paths = ["org", "ssl", "ssl.cert.serial", "ssl.cert", "location.city", "tags.0", "a.b.cert", "http.title"]
    for _ in range(500):
        banner = {"ip_str": "198.18.0.1", "port": 80, "timestamp": "2026-01-01T00:00:00"}
        for name in ("org", "ssl", "location", "tags", "a", "http"):
            banner[name] = odd_value(rng)
        for path in paths:
            text = cell(banner, path)
            assert not any(ch in text for ch in "\x1b\x9b\u202e\t\r\n"), (path, text)
            assert not text.startswith(("=", "+", "-", "@")), (path, text)
        assert json.loads(banner_line(banner)) == banner
