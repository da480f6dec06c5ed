"""The directory pane, pinned (see test_snapshots.py): the listing at every size, and a tag filter,
from a backend on a fixed port of its own (its votes are this file's alone).

Update after a deliberate change with ``pytest tests/tui/test_snapshots_directory.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

import itertools

import pytest

from spyglass.datagen import generate
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.directory import DirectoryPane
from tests.conftest import backend_with
from tests.tui.conftest import FROZEN, shown_on
from tests.tui.test_snapshots import SIZES, SMALL, steps

DIRECTORY_SNAPSHOT_PORT = 28453  # what the status bar shows (tests/tui/conftest.py: shown_on)
_accounts = itertools.count()


@pytest.fixture(scope="module")
def directory_backend(tmp_path_factory):
    with backend_with(
        tmp_path_factory.mktemp("directory-snapshots"),
        generate(600, seed=2),
        clock=lambda: FROZEN,
    ) as backend:
        yield shown_on(backend, DIRECTORY_SNAPSHOT_PORT)


@pytest.fixture
def snapshot_profile(directory_backend):
    _, key = directory_backend.store.create_account(f"analyst-{next(_accounts)}", "member", display_name="Ada Analyst")
    return directory_backend.profile(key)


@pytest.mark.parametrize("size", SIZES)
def test_directory(snap_compare, snapshot_profile, size):
    terminal, theme = SIZES[size]
    app = SpyglassApp(snapshot_profile, theme=theme)
    assert snap_compare(app, terminal_size=terminal, run_before=steps("escape", "f10", "escape", "j"))


def test_directory_filtered_by_tag(snap_compare, snapshot_profile):
    app = SpyglassApp(snapshot_profile, theme="spyglass")
    run = steps("escape", "f10", lambda app: app.query_one(DirectoryPane).run_arg("tag:ics"), "escape")
    assert snap_compare(app, terminal_size=SMALL, run_before=run)
