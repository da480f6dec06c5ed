"""The organization pane pinned, with an admin and a member, at 80x24, 200x50 and in 16 colours
(see tests/tui/test_snapshots.py; update with --snapshot-update and look at the SVGs)."""

from __future__ import annotations

import pytest

from spyglass.tui.app import SpyglassApp
from tests.tui.helpers import no_blink, settle
from tests.tui.test_snapshots import SIZES


@pytest.fixture
def admin_profile(snapshot_backend, request):
    tag = request.node.callspec.id  # one account set per size: the names show in the snapshot
    store = snapshot_backend.store
    admin, key = store.create_account(f"chief-{tag}", "enterprise", email=f"chief-{tag}@acme.test")
    member, _ = store.create_account(f"crew-{tag}", "free", email=f"crew-{tag}@acme.test")
    org = store.own_organization(admin)
    store.invite(org.id, member.id, admin.id)
    store.answer_invitation(org.id, member.id, accept=True)
    return snapshot_backend.profile(key)


async def open_org(pilot) -> None:
    """As a person reaches it: ctrl+g, the pane's name, Enter."""
    await settle(pilot)
    await pilot.press("ctrl+g", *"Organization", "enter")
    await settle(pilot)
    no_blink(pilot.app)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_org_pane(snap_compare, admin_profile, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(admin_profile, theme=theme)
    assert snap_compare(app, terminal_size=terminal, run_before=open_org)
