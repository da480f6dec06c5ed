"""Hostile text through the alert and notifier API reaches the state only as parameters: the same
answers on SQLite and on PostgreSQL (whose text holds no NUL: an id with one names nothing)."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

from spyglass.safetext import has_control
from spyglass.testing.backend import backend_with
from tests.store.test_clickhouse import HOSTILE


@pytest.fixture(params=["sqlite", "postgresql"])
def api(request, tmp_path):
    state = request.getfixturevalue("postgres_url") if request.param == "postgresql" else None
    with backend_with(tmp_path / "data", [], state=state) as backend:
        with httpx.Client(base_url=backend.url, params={"key": backend.key()}, timeout=30) as http:
            yield http


def test_hostile_ids_names_and_descriptions(api):
    for value in HOSTILE:
        path = quote(value, safe="")
        for method, url in (
            ("GET", f"/intel/alert/{path}/info"),
            ("DELETE", f"/intel/alert/{path}"),
            ("PUT", f"/intel/alert/{path}/trigger/any"),
            ("GET", f"/notifier/{path}"),
            ("DELETE", f"/notifier/{path}"),
        ):
            answer = api.request(method, url)
            assert answer.status_code == 404 and "error" in answer.json(), (method, url, answer.text)
        control = has_control(value)  # refused alike by both: a 400 before any state is asked
        made = api.post("/intel/alert", json={"name": value, "filters": {"ip": ["192.0.2.0/24"]}})
        assert made.status_code == (400 if control else 200), made.text
        notifier = api.post("/notifier", data={"provider": "webhook", "description": value, "url": "http://x.test/"})
        assert notifier.status_code == (400 if control else 200), notifier.text
        if not control:
            assert api.get(f"/intel/alert/{made.json()['id']}/info").json()["name"] == value
            assert api.get(f"/notifier/{notifier.json()['id']}").json()["description"] == value
    assert len(api.get("/intel/alert/info").json()) == sum(not has_control(v) for v in HOSTILE)
