from __future__ import annotations

import os
from pathlib import Path

import pytest

from spyglass.testing.backend import backend_with as backend_with
from spyglass.testing.backend import start_backend

# Response bodies recorded from the original service (MIT, with their LICENSE and README there)
ORIGINAL = Path(__file__).resolve().parent / "fixtures" / "original-service"


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory, monkeypatch):
    """No test reads or writes the user's real config or data, or sees their environment."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("SPYGLASS_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("SPYGLASS_DATA_DIR", str(home / "data"))
    for name in list(os.environ):
        if name.startswith("SPYGLASS_") and name not in ("SPYGLASS_CONFIG_DIR", "SPYGLASS_DATA_DIR"):
            monkeypatch.delenv(name)


@pytest.fixture(scope="session")
def backend(tmp_path_factory):
    server, info = start_backend(tmp_path_factory.mktemp("backend"))
    with server:
        yield info
    info.store.close()


@pytest.fixture
async def clients(backend):
    from spyglass.client import Clients

    async with Clients.from_profile(backend.profile(backend.key())) as c:
        yield c
