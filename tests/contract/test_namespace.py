"""A server of another namespace (the original service's is ``shodan``): the CLI says which to
set, SPYGLASS_NAMESPACE sets it, a preset gives the original service's hosts, and the dashboard
uses the namespace the server answers under, saying so."""

from __future__ import annotations

import json

import pytest

from spyglass.config import PRESETS, Config, active_profile
from spyglass.tui.connection import Connection
from tests.conftest import start_backend
from tests.contract.test_cli import run

pytestmark = pytest.mark.external  # spyglass as a process (most tests)


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    server, backend = start_backend(tmp_path_factory.mktemp("other-ns"), namespace="shodan")
    with server:
        yield backend
    backend.store.close()


def env_for(backend, tmp_path, **more) -> dict:
    return {
        "SPYGLASS_URL": backend.url,
        "SPYGLASS_API_KEY": backend.key(),
        "SPYGLASS_CONFIG_DIR": str(tmp_path),
        **more,
    }


def test_the_cli_says_which_namespace_to_set_and_the_variable_sets_it(other, tmp_path):
    out = run("count", "port:22", env=env_for(other, tmp_path))
    assert out.returncode != 0
    assert "under /shodan/, not /intel/" in out.stderr and "SPYGLASS_NAMESPACE=shodan" in out.stderr
    out = run("count", "port:22", "--json", env=env_for(other, tmp_path, SPYGLASS_NAMESPACE="shodan"))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["total"] == 0


def test_a_missing_address_is_still_a_plain_404(other, tmp_path):
    out = run("host", "198.18.0.1", env=env_for(other, tmp_path, SPYGLASS_NAMESPACE="shodan"))
    assert out.returncode != 0 and "SPYGLASS_NAMESPACE" not in out.stderr


def test_the_preset_gives_the_original_services_hosts_and_namespace(tmp_path, monkeypatch):
    monkeypatch.setenv("SPYGLASS_CONFIG_DIR", str(tmp_path))
    config = {"SPYGLASS_CONFIG_DIR": str(tmp_path)}
    out = run("profile", "add", "orig", "--preset", "shodan", "--key", "K" * 32, env=config)
    assert out.returncode == 0, out.stderr
    profile = Config.load().profile("orig")
    assert profile.url == PRESETS["shodan"]["url"] and profile.namespace == "shodan"
    assert profile.stream_url and profile.trends_url and profile.geonet_url
    out = run("profile", "add", "bare", env=config)
    assert out.returncode == 2 and "--preset" in out.stderr
    monkeypatch.setenv("SPYGLASS_NAMESPACE", "other")
    assert active_profile("orig").namespace == "other"


async def test_the_dashboard_uses_the_namespace_the_server_answers_under(other):
    connection = Connection(other.profile(other.key()))
    try:
        await connection.open()
        assert connection.profile.namespace == "shodan" and "under /shodan/" in connection.note
        assert connection.clients is not None
        assert (await connection.clients.search.count("port:22")).total == 0
    finally:
        await connection.close()
