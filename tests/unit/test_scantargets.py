"""Reading what a scan asks for: the ``ips`` field, the form's request, the allowed networks."""

from __future__ import annotations

import ipaddress
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spyglass.netools.scantargets import (
    BadTargets,
    NotAllowed,
    ScanSpec,
    check_allowed,
    parse_ips,
    request_spec,
    scan_request,
)

LOOPBACK = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")]


def test_a_comma_list_collapses_overlaps_and_counts_addresses():
    spec = parse_ips("127.0.0.1, 127.0.0.0/30,127.0.0.1", ["http"])
    assert spec.networks == ["127.0.0.0/30"]
    assert spec.addresses() == 4
    assert spec.probe_count(3) == 12
    assert [(p.ip, p.port, p.protocol) for p in spec.probes([443, 80])][:3] == [
        ("127.0.0.0", 80, None),
        ("127.0.0.0", 443, None),
        ("127.0.0.1", 80, None),
    ]


def test_a_json_mapping_takes_pairs_and_bare_ports():
    spec = parse_ips(json.dumps({"127.0.0.1": [[80, "http"], 22], "::1": [[6379, "redis"]]}), ["http", "redis"])
    assert spec.services == {"127.0.0.1/32": [(80, "http"), (22, None)], "::1/128": [(6379, "redis")]}
    assert spec.addresses() == 2
    assert ScanSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no IPs given"),
        ("127.0.0.1,,127.0.0.2", "empty item"),
        ("127.0.0.300", "not an IP address"),
        ("{not json", "not: "),
        ('{"127.0.0.1": [[80, "gopher"]]}', "unknown protocol"),
        ('{"127.0.0.1": [[0, "http"]]}', "not a port"),
        ('{"127.0.0.1": [["80", "http"]]}', "not a port"),
        ('{"127.0.0.1": []}', "pairs"),
        ('{"127.0.0.1": [[22, ["x"]]]}', "not a protocol's name"),  # was a TypeError (unhashable): a 500
        ('{"127.0.0.1": [[22, {"a": 1}]]}', "not a protocol's name"),
        ('{"127.0.0.1": [[22, 1]]}', "not a protocol's name"),
        ("[1, 2]", "not an IP address"),
        ('{"127.0.0.1": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),  # was a RecursionError
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else None,
)
def test_bad_fields_say_what_is_wrong(text, message):
    with pytest.raises(BadTargets, match=message):
        parse_ips(text, ["http"])


def test_targets_outside_the_allowed_networks_are_refused_naming_the_setting():
    check_allowed(parse_ips("127.1.0.0/16,::1", None), LOOPBACK)
    for outside in ("10.0.0.1", "127.0.0.0/7", "::2"):
        with pytest.raises(NotAllowed, match="--scan-allow"):
            check_allowed(parse_ips(outside, None), LOOPBACK)


def test_the_forms_request_is_what_the_server_reads():
    request = scan_request(["127.0.0.1", "127.0.0.0/30"], "80, 443/https")
    assert request == {"127.0.0.1/32": [80, [443, "https"]], "127.0.0.0/30": [80, [443, "https"]]}
    assert request_spec(request, ["https"]).addresses() == 4
    assert scan_request(["127.0.0.1", " "], "") == "127.0.0.1/32"
    for targets, ports in ((["nope"], ""), ([], ""), (["127.0.0.1"], "99999"), (["127.0.0.1"], "443/")):
        with pytest.raises(ValueError):
            scan_request(targets, ports)


def test_a_range_of_ports_is_every_port_in_it():
    """``scan submit 127.0.0.0/28 --ports 1-200`` was refused ('1-200' is not a port)."""
    request = scan_request(["127.0.0.0/28"], "1-200,8000-8001/http")
    assert isinstance(request, dict)
    assert request["127.0.0.0/28"] == [*range(1, 201), [8000, "http"], [8001, "http"]]
    assert request_spec(request, ["http"]).addresses() == 16
    for ports, why in (("200-1", "from the lower"), ("1-70000", "'70000' is not a port"), ("-5", "'' is not a port")):
        with pytest.raises(ValueError, match=why):
            scan_request(["127.0.0.1"], ports)


@given(st.text(max_size=200))
def test_any_text_is_read_or_refused_in_words(text):
    try:
        spec = parse_ips(text, ["http"])
    except BadTargets as exc:
        assert str(exc)
    else:
        assert spec.addresses() >= 1


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=20), c, max_size=4),
        max_leaves=20,
    )
)
def test_any_json_is_read_or_refused_in_words(value):
    try:
        parse_ips(json.dumps({"127.0.0.1": value}), ["http"])
    except BadTargets as exc:
        assert str(exc)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=20), c, max_size=4),
    max_leaves=10,
)


@given(st.lists(st.lists(st.integers(1, 65535) | JSON, min_size=2, max_size=2) | JSON, max_size=4), st.booleans())
def test_any_pair_is_read_or_refused_in_words(pairs, known):
    """Pairs shaped as the parser expects, with any JSON inside: ``[22, ["x"]]`` was a TypeError."""
    try:
        spec = parse_ips(json.dumps({"127.0.0.1": pairs}), ["http"] if known else None)
    except BadTargets as exc:
        assert str(exc)
    else:
        for port, protocol in spec.services["127.0.0.1/32"]:
            assert isinstance(port, int) and (protocol is None or isinstance(protocol, str))
        assert ScanSpec.from_json(spec.to_json()) == spec
