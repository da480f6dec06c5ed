from __future__ import annotations

from datetime import datetime

import pytest

from tests.conftest import start_backend

SNAPSHOT_PORT = 47813  # fixed so that the endpoint and Host header in snapshots never change
FROZEN = datetime(2026, 3, 14, 9, 26, 53)


@pytest.fixture(scope="session")
def snapshot_profile(tmp_path_factory):
    """A profile for a backend whose clock is frozen, on a fixed port, with one member account."""
    server, backend = start_backend(tmp_path_factory.mktemp("snapshot-backend"), port=SNAPSHOT_PORT,
                                    clock=lambda: FROZEN)
    _, key = backend.store.create_account("analyst", "member", display_name="Ada Analyst")
    with server:
        yield backend.profile(key)
    backend.store.close()
