from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.servers import Backend, ThreadedServer

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory, monkeypatch):
    """No test reads or writes the user's real config or data, or sees their environment."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("SPYGLASS_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("SPYGLASS_DATA_DIR", str(home / "data"))
    for name in list(os.environ):
        if name.startswith("SPYGLASS_") and name not in ("SPYGLASS_CONFIG_DIR", "SPYGLASS_DATA_DIR"):
            monkeypatch.delenv(name)


def start_backend(data_dir: Path, port: int = 0, clock=None, **settings):
    from spyglass.server.app import create_app
    from spyglass.server.geonet import GeonetSettings
    from spyglass.server.settings import Settings
    from spyglass.server.store import Store

    store = Store(data_dir, clock=clock) if clock else Store(data_dir)
    settings.setdefault("notifier_allow", ["127.0.0.0/8"])  # the tests' receivers are on loopback
    settings.setdefault("geonet", GeonetSettings(allow=["127.0.0.0/8"]))  # and geonet pings loopback
    app = create_app(Settings(data_dir=data_dir, **settings), store)
    server = ThreadedServer(app, port=port)
    return server, Backend(server.url, app, store, data_dir)


@contextmanager
def backend_with(data_dir: Path, banners: Iterable[dict], **settings) -> Iterator[Backend]:
    """The backend under uvicorn, its index loaded with ``banners``."""
    from spyglass.server.banners.importer import import_banners

    server, backend = start_backend(data_dir, **settings)
    import_banners(backend.app.state.banners, (dict(b) for b in banners))
    with server:
        yield backend
    backend.store.close()


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
