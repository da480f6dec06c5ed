"""Models beyond the recorded fixtures: module-specific members, nulls, namespaces."""

from __future__ import annotations

from spyglass import models as m

BANNER = {
    "ip_str": "198.18.0.7", "ip": 3323068423, "port": 27017, "transport": "tcp",
    "timestamp": "2026-01-02T03:04:05.678901", "data": "MongoDB Server Information",
    "org": None, "isp": None, "os": None, "hostnames": [], "domains": [],
    "location": {"city": None, "country_code": "DE", "country_name": "Germany",
                 "latitude": 52.52, "longitude": 13.4, "area_code": None, "dma_code": None},
    "mongodb": {"authentication": False, "databases": [{"name": "admin", "size": 1}]},
    "vulns": {"CVE-2021-1234": {"verified": True, "cvss": "9.8", "summary": "bad", "references": []}},
    "_intel": {"module": "mongodb", "crawler": "abc", "id": "x", "ptr": False, "options": {}},
    "opts": {"raw": "00ff"},
}


def test_banner_keeps_module_specific_members():
    banner = m.Banner.model_validate(BANNER)
    assert banner.model_extra["mongodb"]["databases"][0]["name"] == "admin"
    assert banner.vulns["CVE-2021-1234"].verified
    assert banner.module == "mongodb"
    assert banner.to_api()["mongodb"] == BANNER["mongodb"]
    assert banner.to_api()["_intel"]["module"] == "mongodb"


def test_other_namespace_round_trip():
    body = dict(BANNER)
    body["_acme"] = body.pop("_intel")
    banner = m.Banner.model_validate(body, context={"namespace": "acme"})
    assert banner.module == "mongodb"
    assert "_acme" in banner.to_api("acme")


def test_host_record_with_flat_location():
    host = m.HostRecord.model_validate({
        "ip_str": "198.18.0.7", "ports": [27017], "data": [BANNER], "country_code": "DE",
        "latitude": 52.52, "longitude": 13.4, "org": None, "last_update": "2026-01-02T03:04:05.678901"})
    assert host.data[0].port == 27017 and host.country_code == "DE"


def test_geo_location_coordinates():
    assert m.GeoLocation(city="London", country="GB", latlon="51.5085,-0.1257").coordinates == (51.5085, -0.1257)
    assert m.GeoLocation(city="?", country="?", latlon="nowhere").coordinates is None
