"""Every recorded body of the original service parses into its model."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter

from spyglass import models as m
from tests.conftest import ORIGINAL as FIXTURES

CASES = {
    "alert/alert.json": m.Alert,
    "alert/alerts.json": list[m.Alert],
    "alert/create_alert.json": m.Alert,
    "alert/triggers.json": list[m.Trigger],
    "dataset_files.json": list[m.DatasetFile],
    "datasets.json": list[m.Dataset],
    "dns_domain.json": m.DomainInfo,
    "dns_resolve.json": dict[str, str | None],
    "dns_reverse.json": dict[str, list[str]],
    "geonet/dns.json": m.DnsResult,
    "geonet/dns_multiple.json": list[m.DnsResult],
    "geonet/ping.json": m.PingResult,
    "geonet/ping_multiple.json": list[m.PingResult],
    "headers.json": dict[str, str],
    "host/version.json": m.SearchResponse,
    "info.json": m.ApiInfo,
    "notifiers/notifier.json": m.Notifier,
    "notifiers/notifiers.json": m.NotifierList,
    "notifiers/providers.json": dict[str, m.ProviderSpec],
    "org.json": m.Organization,
    "ports.json": list[int],
    "profile.json": m.AccountProfile,
    "protocols.json": dict[str, str],
    "query_search_results.json": m.SavedQueryList,
    "query_tags.json": m.QueryTags,
    "scan.json": m.ScanSubmission,
    "scan_status.json": m.ScanStatus,
}


def test_every_fixture_has_a_case():
    found = {p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.json")}
    assert found == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_parses(name):
    body = json.loads((FIXTURES / name).read_text())
    adapter = TypeAdapter(CASES[name])
    parsed = adapter.validate_python(body)
    # Nothing the service sent is lost or altered on the way through the model.
    assert adapter.dump_python(parsed, mode="json", by_alias=True, exclude_unset=True) == body


def test_banner_keeps_unknown_members_and_namespaced_meta():
    body = json.loads((FIXTURES / "host/version.json").read_text())
    res = m.SearchResponse.model_validate(body)
    first = res.matches[0]
    assert first.module == "steam-a2s"  # read from the original's own crawler member
    assert first.version == 47  # as sent: a number here
    assert first.location["country_code"] == "AR"
    assert first.to_api() == body["matches"][0]


def test_geonet_units_are_documented():
    schema = m.PingResult.model_json_schema()
    assert "milliseconds" in schema["properties"]["avg_rtt"]["description"]
    assert "0..1" in schema["properties"]["packet_loss"]["description"]
