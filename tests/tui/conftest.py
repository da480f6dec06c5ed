from __future__ import annotations

import asyncio
import dataclasses
import itertools
from datetime import datetime

import httpx
import pytest

from spyglass.client import Clients
from spyglass.datagen import generate
from tests.conftest import backend_with

# What the snapshots show as the backend's port (the status bar's endpoint, the Host header the
# account pane echoes). The backends listen where the system lets them (a fixed port may be taken);
# requests to the shown port are sent to the real one, their Host header as shown.
SNAPSHOT_PORT = 47813
_real_ports: dict[int, int] = {}
_send = httpx.AsyncHTTPTransport.handle_async_request


async def _to_the_real_port(self, request: httpx.Request) -> httpx.Response:
    real = _real_ports.get(request.url.port or 0) if request.url.host == "127.0.0.1" else None
    if real is not None:
        request.url = request.url.copy_with(port=real)  # the Host header keeps the shown port
    return await _send(self, request)


httpx.AsyncHTTPTransport.handle_async_request = _to_the_real_port  # type: ignore[method-assign]


def shown_on(backend, port: int):
    """``backend`` as the snapshots show it: on ``port``, whatever port it really listens on."""
    _real_ports[port] = int(backend.url.rsplit(":", 1)[1])
    return dataclasses.replace(backend, url=f"http://127.0.0.1:{port}")


FROZEN = datetime(2026, 3, 14, 9, 26, 53)
_accounts = itertools.count()


@pytest.fixture(scope="session")
def snapshot_backend(tmp_path_factory):
    """A backend whose clock is frozen, on a fixed port, with deterministic demo banners."""
    from spyglass.datagen import generate

    with backend_with(
        tmp_path_factory.mktemp("snapshot-backend"), generate(600, seed=2), clock=lambda: FROZEN
    ) as backend:
        yield shown_on(backend, SNAPSHOT_PORT)


@pytest.fixture
def snapshot_profile(snapshot_backend):
    """A fresh member account for each snapshot, so no test sees credits another one spent."""
    _, key = snapshot_backend.store.create_account(f"analyst-{next(_accounts)}", "member", display_name="Ada Analyst")
    return snapshot_backend.profile(key)


@pytest.fixture(scope="module")
def forms_backend(tmp_path_factory):
    """A backend for the panes' forms (tests/tui/test_forms.py, test_form_keys.py)."""
    with backend_with(tmp_path_factory.mktemp("tui-forms"), generate(50, seed=5)) as backend:
        yield backend


@pytest.fixture(scope="module")
def forms_key(forms_backend):
    """An enterprise account (the org pane) with an alert and a notifier, so every list has rows."""
    _, key = forms_backend.store.create_account("forms-boss", "enterprise", email="boss@forms.test")

    async def setup() -> None:
        async with Clients.from_profile(forms_backend.profile(key)) as c:
            await c.notifiers.create("webhook", {"url": "http://127.0.0.1:9/hook"})
            await c.alerts.create("lab", ["127.0.0.0/30"])

    asyncio.run(setup())
    return key
