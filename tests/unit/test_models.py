"""Models beyond the recorded fixtures: module-specific members, nulls, namespaces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from spyglass import models as m

BANNER = {
    "ip_str": "198.18.0.7",
    "ip": 3323068423,
    "port": 27017,
    "transport": "tcp",
    "timestamp": "2026-01-02T03:04:05.678901",
    "data": "MongoDB Server Information",
    "org": None,
    "isp": None,
    "os": None,
    "hostnames": [],
    "domains": [],
    "location": {
        "city": None,
        "country_code": "DE",
        "country_name": "Germany",
        "latitude": 52.52,
        "longitude": 13.4,
        "area_code": None,
        "dma_code": None,
    },
    "mongodb": {"authentication": False, "databases": [{"name": "admin", "size": 1}]},
    "vulns": {"CVE-2021-1234": {"verified": True, "cvss": "9.8", "summary": "bad", "references": []}},
    "_intel": {"module": "mongodb", "crawler": "abc", "id": "x", "ptr": False, "options": {}},
    "opts": {"raw": "00ff"},
}


def test_banner_keeps_module_specific_members():
    banner = m.Banner.model_validate(BANNER)
    assert banner.model_extra["mongodb"]["databases"][0]["name"] == "admin"
    assert banner.vulns["CVE-2021-1234"]["verified"]
    assert banner.module == "mongodb"
    assert banner.to_api() == BANNER


def test_other_namespace_round_trip():
    body = dict(BANNER)
    body["_acme"] = body.pop("_intel")
    banner = m.Banner.model_validate(body)
    assert banner.module == "mongodb"
    assert banner.to_api() == body


# Shapes seen in real exports of the original service, which a strictly typed model rejected.
WILD = {
    **BANNER,
    "asn": 13335,
    "vulns": ["CVE-2014-0160"],
    "version": 47,
    "hostnames": "one.example",
    "location": "Buenos Aires",
    "ssl": {"cert": {"serial": 4.99e36, "expired": "no"}, "alpn": "h2", "dhparams": {"bits": "2048"}},
    "http": {"status": None, "components": ["nginx"], "favicon": {"hash": "x", "data": 1}},
    "ssh": {"kex": 7, "type": ["ssh-rsa"]},
    "opts": ["heartbleed"],
    "cloud": "aws",
    "tags": None,
}


def test_banner_takes_any_json_in_any_member_and_gives_it_back():
    banner = m.Banner.model_validate(WILD)
    assert banner.to_api() == WILD
    huge = {**BANNER, "ssl": {"cert": {"serial": 2**70}}}
    assert m.Banner.model_validate(huge).to_api()["ssl"]["cert"]["serial"] == 2**70


def test_ipv6_banner_without_ip():
    body = {"ipv6": "2001:db8::1", "port": 443, "transport": "tcp", "timestamp": "2026-01-02T03:04:05.000000"}
    banner = m.Banner.model_validate(body)
    assert banner.address == "2001:db8::1" and banner.to_api() == body


def test_host_record_and_facets_take_odd_types():
    host = m.HostRecord.model_validate(
        {
            "ip_str": "198.18.0.7",
            "asn": 64512,
            "ports": "22",
            "vulns": {"CVE-1": {}},
            "latitude": "52.5",
            "data": [WILD],
        }
    )
    assert host.data[0].to_api() == WILD and host.asn == 64512
    result = m.SearchResponse.model_validate(
        {"total": 1, "matches": [], "facets": {"port": [{"count": 3, "value": 22}]}}
    )
    assert result.facets is not None and result.facets["port"][0].value == 22


def test_host_record_with_flat_location():
    host = m.HostRecord.model_validate(
        {
            "ip_str": "198.18.0.7",
            "ports": [27017],
            "data": [BANNER],
            "country_code": "DE",
            "latitude": 52.52,
            "longitude": 13.4,
            "org": None,
            "last_update": "2026-01-02T03:04:05.678901",
        }
    )
    assert host.data[0].port == 27017 and host.country_code == "DE"


def test_geo_location_coordinates():
    assert m.GeoLocation(city="London", country="GB", latlon="51.5085,-0.1257").coordinates == (51.5085, -0.1257)
    assert m.GeoLocation(city="?", country="?", latlon="nowhere").coordinates is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
MEMBERS = [
    "asn",
    "org",
    "data",
    "version",
    "hostnames",
    "location",
    "http",
    "ssl",
    "ssh",
    "vulns",
    "opts",
    "cloud",
    "dns",
    "snmp",
    "tags",
    "cpe",
    "hash",
    "product",
    "_shodan",
    "ip",
    "info",
]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(MEMBERS), json_values, max_size=8))
def test_any_json_in_any_member_round_trips(members):
    body = {
        **members,
        "ip_str": "198.18.0.7",
        "port": 80,
        "transport": "tcp",
        "timestamp": "2026-01-02T03:04:05.000000",
    }
    banner = m.Banner.model_validate(body)
    assert banner.to_api() == body
    assert isinstance(banner.address, str)
    assert banner.module is None or isinstance(banner.module, str)
