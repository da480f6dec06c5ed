"""The account states the contract runs against: each opens a state on a test's folder (opening
it again is a restart). PostgreSQL runs as a real server on loopback (spyglass.testing.postgres),
one per test session (per xdist worker), a database per test."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from spyglass.server.state.accounts import AccountState, utcnow
from spyglass.server.state.alerts import AlertState
from spyglass.server.state.sqlite.accounts import Store
from spyglass.server.state.sqlite.alerts import AlertStore
from spyglass.testing.postgres import PostgresServer
from tests.servers import installed
from tests.store.conftest import clickhouse_server  # noqa: F401 (the two-backend tests' banner store)

OpenState = Callable[..., AccountState]


def database(folder: Path) -> str:
    """A database of its own for each test's folder (the same one when the test opens it again)."""
    return "t_" + hashlib.sha1(str(folder).encode()).hexdigest()[:16]


@pytest.fixture(scope="session")
def postgres_server() -> PostgresServer:
    with installed():
        server = PostgresServer().start()
    yield server
    server.remove()


@pytest.fixture
def postgres_url(postgres_server, tmp_path) -> str:
    """A fresh database of this test's own on the session's server."""
    return postgres_server.create_database(database(tmp_path))


def _postgres(request: pytest.FixtureRequest, folder: Path, clock: Callable[[], datetime]) -> AccountState:
    from spyglass.server.state.postgres import PostgresAccounts

    return PostgresAccounts(request.getfixturevalue("postgres_url"), folder / "data", clock=clock)


STATES: dict[str, Callable[[pytest.FixtureRequest, Path, Callable[[], datetime]], AccountState]] = {
    "sqlite": lambda request, folder, clock: Store(folder / "data", clock=clock),
    "postgresql": _postgres,
}


@pytest.fixture(params=sorted(STATES))
def open_state(request, tmp_path) -> OpenState:
    """Opens the state of this test (the same data every time, ``clock`` as given); closes what it opened."""
    opened: list[AccountState] = []

    def open_(clock: Callable[[], datetime] = utcnow) -> AccountState:
        state = STATES[request.param](request, tmp_path, clock)
        opened.append(state)
        return state

    yield open_
    for state in opened:
        state.close()


@pytest.fixture
def state(open_state) -> AccountState:
    return open_state()


def _postgres_alerts(request: pytest.FixtureRequest, folder: Path) -> AlertState:
    from spyglass.server.state.postgres.alerts import PostgresAlerts

    return PostgresAlerts(request.getfixturevalue("postgres_url"))


ALERT_STATES: dict[str, Callable[[pytest.FixtureRequest, Path], AlertState]] = {
    "sqlite": lambda request, folder: AlertStore(folder),
    "postgresql": _postgres_alerts,
}


@pytest.fixture(params=sorted(ALERT_STATES))
def open_alerts(request, tmp_path) -> Callable[[], AlertState]:
    """Opens the alert state of this test (the same data every time: another connection to it,
    as a second backend has); closes what it opened."""
    opened: list[AlertState] = []

    def open_() -> AlertState:
        alerts = ALERT_STATES[request.param](request, tmp_path)
        opened.append(alerts)
        return alerts

    yield open_
    for alerts in opened:
        alerts.close()
