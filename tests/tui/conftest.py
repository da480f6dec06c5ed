from __future__ import annotations

import itertools
from datetime import datetime

import pytest

from tests.conftest import backend_with

SNAPSHOT_PORT = 47813  # fixed so that the endpoint and Host header in snapshots never change
FROZEN = datetime(2026, 3, 14, 9, 26, 53)
_accounts = itertools.count()


@pytest.fixture(scope="session")
def snapshot_backend(tmp_path_factory):
    """A backend whose clock is frozen, on a fixed port, with deterministic demo banners."""
    from spyglass.datagen import generate

    with backend_with(
        tmp_path_factory.mktemp("snapshot-backend"), generate(600, seed=2), port=SNAPSHOT_PORT, clock=lambda: FROZEN
    ) as backend:
        yield backend


@pytest.fixture
def snapshot_profile(snapshot_backend):
    """A fresh member account for each snapshot, so no test sees credits another one spent."""
    _, key = snapshot_backend.store.create_account(f"analyst-{next(_accounts)}", "member", display_name="Ada Analyst")
    return snapshot_backend.profile(key)
