"""The stream pane's "my alerts" choice against the real backend: every alert of the account,
then one alert by its name, and an unknown name said in words."""

from __future__ import annotations

import json

import httpx
import pytest
from textual.widgets import Input, Select

from spyglass.server.stream.alerts import AlertNetworks
from spyglass.tui.app import SpyglassApp
from spyglass.tui.widgets.tail import Tail
from tests.conftest import start_backend
from tests.contract.test_stream import banner
from tests.tui.helpers import screen_text
from tests.tui.test_stream import SIZE, open_stream, publish, until


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("stream-alerts-pane"))
    with server:
        yield backend
    backend.store.close()


def at(address: str, port: int) -> dict:
    return {**banner(port=port), "ip_str": address}


def following(live, alert_id: str | None) -> bool:
    """The backend has subscribed a reader of ``/alert`` (None) or ``/alert/{alert_id}``."""
    subs = list(live.app.state.hub.subscriptions)
    return any(isinstance(s.match, AlertNetworks) and s.match.alert_id == alert_id for s in subs)


def addresses(tail: Tail) -> list[str]:
    return [json.loads(entry.raw)["ip_str"] for entry in tail.ring]


async def test_the_pane_follows_my_alerts_then_one_alert_by_name(live):
    key = live.key()
    office, _ = (
        httpx.post(
            f"{live.url}/intel/alert", params={"key": key}, json={"name": name, "filters": {"ip": [net]}}
        ).json()["id"]
        for name, net in (("Office", "198.51.100.128/28"), ("lab", "203.0.113.200"))
    )
    app = SpyglassApp(live.profile(key))
    async with app.run_test(size=SIZE) as pilot:
        await open_stream(pilot)
        tail = app.query_one(Tail)
        app.query_one("#stream-kind", Select).value = "alert"
        await until(pilot, lambda: following(live, None), "my alerts followed")
        await publish(live, [at("198.51.100.130", 81), at("192.0.2.1", 82), at("203.0.113.200", 83)])
        await until(pilot, lambda: len(tail.ring) == 2, "the two banners in my alerts")
        assert addresses(tail) == ["198.51.100.130", "203.0.113.200"]

        values = app.query_one("#stream-values", Input)
        values.value = "office"  # a name, in any case
        values.focus()
        await pilot.press("enter")
        await until(pilot, lambda: following(live, office) and not tail.ring, "the office alert followed afresh")
        await publish(live, [at("203.0.113.200", 84), at("198.51.100.131", 85)])
        await until(pilot, lambda: len(tail.ring) == 1, "the office banner")
        assert addresses(tail) == ["198.51.100.131"]

        values.value = "nowhere"
        values.focus()
        await pilot.press("enter")
        await until(pilot, lambda: "No alert named 'nowhere'" in screen_text(app), "the unknown name said")


async def test_a_name_two_alerts_share_is_refused_with_their_ids(live):
    """Newcomer trial 18, major: `alert dup` followed one of two alerts named dup, saying nothing;
    the CLI refuses such a name. Both read it with one rule now."""
    key = live.key()
    twins = [
        httpx.post(
            f"{live.url}/intel/alert", params={"key": key}, json={"name": "dup", "filters": {"ip": [net]}}
        ).json()["id"]
        for net in ("192.0.2.96/28", "192.0.2.112/28")
    ]
    app = SpyglassApp(live.profile(key))
    async with app.run_test(size=SIZE) as pilot:
        await open_stream(pilot)
        app.query_one("#stream-kind", Select).value = "alert"
        values = app.query_one("#stream-values", Input)
        values.value = "dup"
        values.focus()
        await pilot.press("enter")
        said = f"2 alerts are named 'dup': give the id of one ({', '.join(twins)})"
        await until(pilot, lambda: said in screen_text(app), "the two ids said")
        assert not any(following(live, twin) for twin in twins)
        values.value = twins[1]
        await pilot.press("enter")
        await until(pilot, lambda: following(live, twins[1]), "the one chosen by its id")
