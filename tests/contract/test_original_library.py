"""The original service's own Python library (PyPI ``shodan``, unmodified) against our backend,
served under its namespace: its calls read our answers as they read the original service's.

Its methods block (requests): each stream is read in a thread, and the test collects banners
once the backend has subscribed that reader."""

from __future__ import annotations

import threading
import time

import pytest
import shodan
from shodan.exception import APIError

from tests.conftest import start_backend
from tests.contract.test_stream import banner

READ_TIMEOUT = 30  # seconds the library waits for a byte: a broken stream fails the test, never hangs it


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("library"), namespace="shodan")
    with server:
        yield backend
    backend.store.close()


def library(served, key: str) -> shodan.Shodan:
    api = shodan.Shodan(key)
    api.base_url = served.url
    api.stream.base_url = f"{served.url}/stream"
    api.api_rate_limit = 0  # its client-side pause between calls: our test backend has no limit
    return api


def read_in_thread(served, stream, count: int) -> tuple[threading.Thread, list]:
    """Start reading ``count`` items of a library stream in a thread; return once subscribed."""
    hub = served.app.state.hub
    before = len(hub.subscriptions)
    got: list = []

    def read() -> None:
        for item in stream:
            got.append(item)
            if len(got) == count:
                return

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while len(hub.subscriptions) == before:
        assert time.monotonic() < deadline, "the library's stream never subscribed"
        time.sleep(0.02)
    return thread, got


def at(address: str, port: int = 80) -> dict:
    return {**banner(port=port), "ip_str": address}


def test_stream_alert_reads_the_account_s_alert_networks(served):
    api = library(served, served.key())
    office = api.create_alert("office", "198.51.100.0/29")
    lab = api.create_alert("lab", ["203.0.113.9"])
    every_thread, every = read_in_thread(served, api.stream.alert(timeout=READ_TIMEOUT), 2)
    one_thread, one = read_in_thread(served, api.stream.alert(aid=lab["id"], timeout=READ_TIMEOUT), 1)
    served.collect([at("198.51.100.8"), at("198.51.100.2", 22), at("192.0.2.1"), at("203.0.113.9", 443)])
    every_thread.join(READ_TIMEOUT)
    one_thread.join(READ_TIMEOUT)
    assert [(b["ip_str"], b["port"]) for b in every] == [("198.51.100.2", 22), ("203.0.113.9", 443)]
    assert [(b["ip_str"], b["port"]) for b in one] == [("203.0.113.9", 443)]
    assert every[0]["_id"]
    assert office["id"] != lab["id"]


def test_stream_alert_of_an_unknown_id_raises_the_library_s_error(served):
    api = library(served, served.key())
    with pytest.raises(APIError, match="No alert with id"):
        next(api.stream.alert(aid="NOSUCHALERT00000", timeout=READ_TIMEOUT))
