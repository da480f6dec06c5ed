"""The DNS pane, pinned (see test_snapshots.py): a domain's records at every size, and resolve and
reverse answered by a real DNS server on loopback, from a backend on a fixed port of its own.

Update after a deliberate change with ``pytest tests/tui/test_snapshots_dns.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

import itertools

import pytest

from spyglass.datagen import generate
from spyglass.server.geonet import GeonetSettings
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.dns import DnsPane
from tests.conftest import backend_with
from tests.servers import DnsServer
from tests.tui.conftest import FROZEN, shown_on
from tests.tui.test_snapshots import SIZES, SMALL, steps

DNS_SNAPSHOT_PORT = 28452  # what the status bar shows (tests/tui/conftest.py: shown_on)
_accounts = itertools.count()


@pytest.fixture(scope="module")
def dns_backend(tmp_path_factory):
    with DnsServer() as dns:
        geonet = GeonetSettings(nameservers=[dns.host], dns_port=dns.port, dns_timeout=2.0)
        with backend_with(
            tmp_path_factory.mktemp("dns-snapshots"),
            generate(600, seed=2),
            clock=lambda: FROZEN,
            geonet=geonet,
        ) as backend:
            yield shown_on(backend, DNS_SNAPSHOT_PORT)


@pytest.fixture
def dns_profile(dns_backend):
    _, key = dns_backend.store.create_account(f"analyst-{next(_accounts)}", "member", display_name="Ada Analyst")
    return dns_backend.profile(key)


def lookup(arg: str):
    return lambda app: app.query_one(DnsPane).run_arg(arg)


@pytest.mark.parametrize("size", SIZES)
def test_domain(snap_compare, dns_profile, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(dns_profile, theme=theme)
    run = steps("escape", "f11", lookup("polaris-energy.example"), "escape")
    assert snap_compare(app, terminal_size=terminal, run_before=run)


@pytest.mark.parametrize("arg", ["example.test,loop.example.test,missing.example.test", "192.0.2.10 192.0.2.99"])
def test_resolve_and_reverse(snap_compare, dns_profile, arg):
    app = SpyglassApp(dns_profile, theme="spyglass")
    run = steps("escape", "f11", lookup(arg), "escape")
    assert snap_compare(app, terminal_size=SMALL, run_before=run)
