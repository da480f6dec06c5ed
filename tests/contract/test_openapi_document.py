"""What the API documents say each argument takes, held to what the server takes (issue 44): values
made from the documents' own patterns and enums are taken, and values the server refuses are
outside them. The schemathesis suites try every operation; these try what they rarely reach
(an existing alert's triggers, a notifier of each provider, arguments past a plan's numbers)."""

from __future__ import annotations

import re

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spyglass.server.alerts.providers import PROVIDERS
from spyglass.server.alerts.triggers import TRIGGERS


@pytest.fixture(scope="module")
def document(backend) -> dict:
    return httpx.get(f"{backend.url}/openapi.json").json()


@pytest.fixture(scope="module")
def trends_document(backend) -> dict:
    return httpx.get(f"{backend.url}/trends/openapi.json").json()


def parameter(document: dict, path: str, method: str, name: str) -> dict:
    found = [p for p in document["paths"][path][method].get("parameters", []) if p["name"] == name]
    assert found, (path, method, name)
    return found[0]["schema"]


def form(document: dict, path: str, method: str, name: str) -> dict:
    schema = next(iter(document["paths"][path][method]["requestBody"]["content"].values()))["schema"]
    if "$ref" in schema:  # FastAPI's Form(...) arguments: a schema of components
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema["properties"][name]


def notifier_variants(document: dict) -> list[dict]:
    body = document["paths"]["/notifier"]["post"]["requestBody"]["content"]
    return body["application/x-www-form-urlencoded"]["schema"]["oneOf"]


def matches(schema: dict, value: str) -> bool:
    pattern = schema.get("pattern") or next(s["pattern"] for s in schema.get("anyOf", []) if "pattern" in s)
    return re.search(pattern, value) is not None


@pytest.fixture(scope="module")
def alert(backend):
    key = backend.key()
    made = httpx.post(
        f"{backend.url}/intel/alert", params={"key": key}, json={"name": "doc", "filters": {"ip": ["127.0.0.1"]}}
    )
    yield key, made.json()["id"]
    httpx.delete(f"{backend.url}/intel/alert/{made.json()['id']}", params={"key": key})


def test_the_trigger_routes_name_the_triggers(document, backend, alert):
    key, alert_id = alert
    one = parameter(document, "/intel/alert/{alert_id}/trigger/{trigger}/ignore/{service}", "put", "trigger")
    assert one["enum"] == list(TRIGGERS)
    listed = parameter(document, "/intel/alert/{alert_id}/trigger/{trigger}", "put", "trigger")
    assert matches(listed, "any,new_service") and not matches(listed, "0") and not matches(listed, "any,0")
    for name in TRIGGERS:
        url = f"{backend.url}/intel/alert/{alert_id}/trigger/{name}"
        assert httpx.put(url, params={"key": key}).status_code == 200, name
        ignored = httpx.put(f"{url}/ignore/127.0.0.1:80", params={"key": key})
        assert ignored.status_code == 200, (name, ignored.text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_trigger_lists_the_document_allows_are_taken(document, backend, alert, data):
    key, alert_id = alert
    pattern = parameter(document, "/intel/alert/{alert_id}/trigger/{trigger}", "put", "trigger")["pattern"]
    names = data.draw(st.from_regex(re.compile(pattern.replace(r"\s", " ")), fullmatch=True))
    for method in ("put", "delete"):
        answer = httpx.request(method, f"{backend.url}/intel/alert/{alert_id}/trigger/{names}", params={"key": key})
        assert answer.status_code == 200, (names, answer.text)


def test_a_notifier_s_form_is_its_provider_s_arguments(document, backend):
    key = backend.key()
    variants = notifier_variants(document)
    assert {v["properties"]["provider"]["enum"][0]: v for v in variants}.keys() == PROVIDERS.keys()
    for variant in variants:
        provider = variant["properties"]["provider"]["enum"][0]
        assert variant["additionalProperties"] is False
        assert set(variant["required"]) == {"provider", *PROVIDERS[provider]}
        assert set(variant["properties"]) - {"provider", "description", "key"} == set(PROVIDERS[provider])
        stranger = next(a for p, names in PROVIDERS.items() for a in names if a not in PROVIDERS[provider])
        refused = httpx.post(
            f"{backend.url}/notifier", params={"key": key}, data={"provider": provider, stranger: "x"}
        )  # what the document's additionalProperties refuses, the server does too
        assert refused.status_code == 400 and f"Unknown argument {stranger!r}" in refused.json()["error"]
    edit = document["paths"]["/notifier/{notifier_id}"]["put"]["requestBody"]["content"]
    assert len(edit["application/x-www-form-urlencoded"]["schema"]["anyOf"]) == len(PROVIDERS)


@pytest.mark.parametrize(
    ("provider", "args"),
    [
        ("email", {"to": "ops@example.test"}),
        ("phone", {"to": "+1 555 0100"}),
        ("telegram", {"chat_id": "@spyglass", "token": "123:abc"}),
        ("gitter", {"room_id": "room1", "token": "t0ken"}),
        ("pagerduty", {"routing_key": "R0UTING"}),
        ("webhook", {"url": "http://127.0.0.1:9/hook"}),
        ("slack", {"webhook_url": "https://hooks.example.test/services/x"}),
    ],
)
def test_each_provider_s_documented_arguments_describe_a_taken_notifier(document, backend, provider, args):
    (variant,) = [v for v in notifier_variants(document) if v["properties"]["provider"]["enum"] == [provider]]
    assert all(matches(variant["properties"][name], value) for name, value in args.items())
    made = httpx.post(f"{backend.url}/notifier", params={"key": backend.key()}, data={"provider": provider, **args})
    assert made.status_code == 200, made.text


def test_facets_name_the_facets(document, trends_document, backend):
    key = backend.key()
    for doc, path, listed in (
        (document, "/intel/host/count", "/intel/host/search/facets"),
        (trends_document, "/api/v1/search", "/trends/api/v1/search/facets"),
    ):
        facets = parameter(doc, path, "get", "facets")
        names = httpx.get(f"{backend.url}{listed}", params={"key": key}).json()
        assert names and "search/facets" in facets["description"]
        for name in names:
            for taken in (name, f" {name}:1000 ", f"{name},port:3", f"{name.upper()}:", f",{name},,"):
                assert matches(facets, taken), (path, taken)
        for refused in ("nosuch", "port:0", "port:1001", "port org", "port;org", "port:x"):
            assert not matches(facets, refused), (path, refused)
    for name in httpx.get(f"{backend.url}/intel/host/search/facets", params={"key": key}).json():
        answer = httpx.get(
            f"{backend.url}/intel/host/count", params={"key": key, "query": "port:80", "facets": f"{name}:7"}
        )
        assert answer.status_code == 200, (name, answer.text)


def test_a_saved_query_s_words_are_bounded_in_the_document(document, backend):
    query = parameter(document, "/intel/query", "post", "query")
    assert "256" in query["description"]
    assert not matches(query, "a" * 999) and not matches(query, "port:22 " + "b" * 257) and not matches(query, "a\tb")
    for taken in ("a" * 256, " port:22  " + "b" * 256):
        assert matches(query, taken)
        saved = httpx.post(f"{backend.url}/intel/query", params={"key": backend.key(), "title": "t", "query": taken})
        assert saved.status_code == 200, saved.text


def test_scan_targets_are_a_list_of_networks_or_json(document):
    ips = form(document, "/intel/scan", "post", "ips")
    for taken in ("127.0.0.1", " 127.0.0.0/30, ::1 ,10.0.0.1/32", '{"127.0.0.1": [[80, "http"]]}'):
        assert matches(ips, taken), taken
    for refused in ("0", "127.0.0.1,", "example.test", "300.1.1.1", " ", "127.0.0.1/33"):
        assert not matches(ips, refused), refused


def test_the_trends_query_may_not_be_blank(trends_document):
    query = parameter(trends_document, "/api/v1/search", "get", "query")
    assert not matches(query, "") and not matches(query, "  ") and matches(query, "port:80")
