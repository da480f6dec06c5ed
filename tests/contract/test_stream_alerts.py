"""The stream host's ``/alert`` and ``/alert/{id}`` against the real backend: banners in the
networks of the caller's alerts and nothing else, in both formats; another account's alert and an
unknown id are the same 404; an alert made while the stream is followed is followed too."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import httpx
import pytest

from spyglass.client import Clients
from spyglass.client.errors import Forbidden, NotFound
from tests.conftest import start_backend
from tests.contract.test_stream import banner, connected, wait_for
from tests.workflows.commands import spyglass


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("alertstream"))
    with server:
        yield backend
    backend.store.close()


@pytest.fixture
async def mine(served):
    async with Clients.from_profile(served.profile(served.key())) as c:
        yield c


@pytest.fixture
async def theirs(served):
    async with Clients.from_profile(served.profile(served.key())) as c:
        yield c


def at(address: str, port: int = 80) -> dict:
    return {**banner(port=port), "ip_str": address}


@pytest.mark.parametrize("fmt", ["json", "sse"])
async def test_alert_streams_carry_only_the_banners_in_the_account_s_alerts(served, mine, theirs, fmt):
    office = await mine.alerts.create("office", ["198.51.100.0/28"])
    lab = await mine.alerts.create("lab", ["203.0.113.7"])
    await theirs.alerts.create("elsewhere", ["192.0.2.0/24"])
    every = await connected(mine.stream.alert(fmt=fmt, reconnect=False))
    one = await connected(mine.stream.alert(lab.id, fmt=fmt, reconnect=False))
    mixed = [
        at("198.51.100.3"),
        at("198.51.100.16"),  # just past the /28
        at("192.0.2.5"),  # the other account's network
        at("203.0.113.7", 443),
        at("203.0.113.8"),
        at("198.51.100.15", 22),  # in office: last
    ]
    await asyncio.to_thread(served.collect, mixed)
    all_got = await wait_for(every, 3)
    # a last banner in lab: once it is read, whatever else the one alert's stream sent is read too
    await asyncio.to_thread(served.collect, [at("203.0.113.7", 8443)])
    lab_got = await wait_for(one, 2)
    every.cancel()
    one.cancel()
    assert [(b.address, b.port) for b in all_got[:3]] == [
        ("198.51.100.3", 80),
        ("203.0.113.7", 443),
        ("198.51.100.15", 22),
    ]
    assert [(b.address, b.port) for b in lab_got] == [("203.0.113.7", 443), ("203.0.113.7", 8443)]
    assert all(b["_id"] for b in all_got)
    assert office.id != lab.id


async def test_another_account_s_alert_is_the_same_404_as_an_unknown_one(served, theirs):
    hidden = await theirs.alerts.create("not yours", ["192.0.2.128/25"])
    key = served.key()
    answers = []
    async with httpx.AsyncClient(base_url=f"{served.url}/stream") as http:
        for alert_id in (hidden.id, "NOSUCHALERT00000"):
            r = await http.get(f"/intel/alert/{alert_id}", params={"key": key})
            answers.append((r.status_code, r.json()["error"].replace(alert_id, "ID")))
    assert answers[0] == answers[1] == (404, "No alert with id 'ID'")
    async with Clients.from_profile(served.profile(key)) as mine:
        with pytest.raises(NotFound):
            async for _ in mine.stream.alert(hidden.id, reconnect=False):
                pass


async def test_the_alert_stream_is_an_enterprise_method(served):
    async with Clients.from_profile(served.profile(served.key(plan="free"))) as free:
        with pytest.raises(Forbidden):
            async for _ in free.stream.alert(reconnect=False):
                pass


async def test_an_alert_made_while_following_is_followed_too(served, mine):
    task = await connected(mine.stream.alert(reconnect=False))
    await mine.alerts.create("new", ["100.64.9.0/24"])
    deadline = time.monotonic() + 20
    n = 0
    while not task.items:  # the stream looks at the alerts again within a second: keep collecting
        assert time.monotonic() < deadline, "the new alert's banners never came"
        n += 1
        await asyncio.to_thread(served.collect, [at(f"100.64.9.{n}")])
        await asyncio.sleep(0.2)
    task.cancel()
    assert task.items[0].address.startswith("100.64.9.")


def cli_following(served, key: str, *args: str) -> list[dict]:
    """``spyglass stream ARGS --json`` as a process, fed fresh banners (in 198.51.100.64/28,
    in 203.0.113.64 and outside both) until it ends; the banners it printed."""
    env = {"SPYGLASS_URL": served.url, "SPYGLASS_API_KEY": key}
    done: list = []
    thread = threading.Thread(target=lambda: done.append(spyglass("stream", *args, "--json", env=env)))
    thread.start()
    deadline = time.monotonic() + 60
    n = 0
    while thread.is_alive():  # until it has subscribed a banner reaches nobody: keep collecting
        assert time.monotonic() < deadline, "the CLI never printed its banners"
        n += 1
        served.collect([at(f"198.51.100.{64 + n % 16}"), at("192.0.2.77", 1000 + n), at("203.0.113.64", 2000 + n)])
        time.sleep(0.2)
    thread.join()
    return [json.loads(line) for line in done[0].stdout.splitlines()]


@pytest.mark.external
def test_the_cli_follows_the_account_s_alerts_and_one_alert(served):
    key = served.key()
    made = [
        httpx.post(f"{served.url}/intel/alert", params={"key": key}, json={"name": n, "filters": {"ip": [net]}}).json()
        for n, net in (("office", "198.51.100.64/28"), ("lab", "203.0.113.64"))
    ]
    every = cli_following(served, key, "--alert", "--count", "6")
    # banners come two to a round (one in each alert, none outside): both alerts are followed
    assert {"office" if b["ip_str"].startswith("198.51.100.") else b["ip_str"] for b in every} == {
        "office",
        "203.0.113.64",
    }
    only = cli_following(served, key, "--alert", "lab", "--count", "3")  # by name, as alert commands take it
    assert [b["ip_str"] for b in only] == ["203.0.113.64"] * 3 and made[1]["name"] == "lab"


@pytest.mark.external
def test_the_cli_says_an_unknown_alert_in_one_line(served):
    env = {"SPYGLASS_URL": served.url, "SPYGLASS_API_KEY": served.key()}
    done = spyglass("stream", "--alert", "NOSUCHALERT00000", env=env, ok=False)
    assert done.returncode != 0
    assert "no alert has the id or the name 'NOSUCHALERT00000' (spyglass alert list)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
