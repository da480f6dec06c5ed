"""The data pane pinned: datasets and files at 80x24, 200x50 and in 16 colours (see
tests/tui/test_snapshots.py; update with --snapshot-update and look at the SVGs)."""

from __future__ import annotations

import pytest

from spyglass.tui.app import SpyglassApp
from tests.contract.test_data_api import settle as files_settled
from tests.tui.test_snapshots import SIZES, steps


@pytest.fixture
def enterprise_profile(snapshot_backend, request):
    files_settled(snapshot_backend)  # every file built, timestamped by the frozen clock
    name = f"data-{request.node.name}"
    _, key = snapshot_backend.store.create_account(name, "enterprise", display_name="Ada Analyst")
    return snapshot_backend.profile(key)


@pytest.mark.parametrize("size", SIZES)
def test_data_pane(snap_compare, enterprise_profile, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(enterprise_profile, theme=theme)
    assert snap_compare(app, terminal_size=terminal, run_before=steps("f12"))


def test_data_pane_monthly(snap_compare, enterprise_profile):
    terminal, theme = SIZES["80x24"]
    app = SpyglassApp(enterprise_profile, theme=theme)
    assert snap_compare(app, terminal_size=terminal, run_before=steps("f12", "down", "enter"))


def test_data_pane_after_a_download(snap_compare, enterprise_profile, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # "." typed as the folder: the file's name alone shows where it went
    terminal, theme = SIZES["80x24"]
    app = SpyglassApp(enterprise_profile, theme=theme)
    assert snap_compare(app, terminal_size=terminal, run_before=steps("f12", "tab", "full_stop", "enter"))
    assert len(list(tmp_path.glob("*.json.gz"))) == 1
