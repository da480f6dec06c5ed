"""The alerts and notifiers panes, pinned at 80x24 and 200x50 and in 16 colours (see
tests/tui/test_snapshots.py for the fixed port, frozen clock and how to update)."""

from __future__ import annotations

import asyncio
import itertools
import zlib

import pytest

from spyglass.client import Clients
from spyglass.server.state.sql import alerts as alert_store  # where the store takes new_id from
from spyglass.tui.app import SpyglassApp
from tests.tui.test_snapshots import SIZES, steps


@pytest.fixture
def watched_profile(snapshot_profile, monkeypatch, request):
    """The snapshot account with two alerts and two notifiers, their ids fixed (alert ids are
    unique across the session's backend: each test's start from its own name)."""
    numbers = itertools.count(1)
    prefix = f"{zlib.crc32(request.node.name.encode()) % 10**6:06d}"
    monkeypatch.setattr(alert_store, "new_id", lambda length: prefix + f"{next(numbers):0{length - 6}d}")

    async def setup() -> None:
        async with Clients.from_profile(snapshot_profile) as c:
            hook = await c.notifiers.create("webhook", {"url": "http://127.0.0.1:9/hook"}, description="ops hook")
            await c.notifiers.create("slack", {"webhook_url": "https://hooks.slack.com/services/T0/B0/abcdefgh"})
            office = await c.alerts.create("office", ["127.0.0.0/29", "::1"], expires=3600)
            await c.alerts.create("lab", ["127.0.1.0/30"])
            await c.alerts.enable_triggers(office.id, "new_service,vulnerable")
            await c.alerts.ignore_service(office.id, "vulnerable", "127.0.0.2:443")
            await c.alerts.add_notifier(office.id, hook.id)

    asyncio.run(setup())
    return snapshot_profile


@pytest.mark.parametrize("size", SIZES)
def test_alerts_pane(snap_compare, watched_profile, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(watched_profile, theme=theme, pane="alerts")
    assert snap_compare(app, terminal_size=terminal, run_before=steps("escape"))


@pytest.mark.parametrize("size", ["80x24", "200x50"])
def test_notifiers_pane(snap_compare, watched_profile, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(watched_profile, theme=theme, pane="notifiers")
    assert snap_compare(app, terminal_size=terminal, run_before=steps("escape"))
