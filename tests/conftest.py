from __future__ import annotations

import _posixsubprocess
import os
import subprocess
from pathlib import Path

import pytest

from spyglass.testing.backend import backend_with as backend_with
from spyglass.testing.backend import start_backend

# Response bodies recorded from the original service (MIT, with their LICENSE and README there)
ORIGINAL = Path(__file__).resolve().parent / "fixtures" / "original-service"


# Two tiers: `pytest -m "not external"` runs what runs in pytest's own processes (a few minutes);
# the external tests start servers, tools or processes (or load ClickHouse's engine, chdb). A test
# is external when marked so by hand (a module or a test that starts a process itself), when it
# uses one of these fixtures (directly or through another), or when it runs on a store or state
# that is a server: a fixture's param of these names, or one naming such a fixture
# (tests/store/conftest.py's STORES, the STATES of tests/state/).
EXTERNAL_FIXTURES = frozenset({"clickhouse_server", "clickhouse_cluster", "current_engine", "postgres_server"})
EXTERNAL_PARAMS = frozenset({"postgresql", "clickhouse", "clickhouse-cluster", "clickhouse-current"})
FAST_TIER = "not external"


def external(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    params = [value for value in callspec.params.values() if isinstance(value, str)] if callspec else []
    fixtures = getattr(item, "fixturenames", ())
    return bool(EXTERNAL_FIXTURES.intersection(fixtures) or (EXTERNAL_PARAMS | EXTERNAL_FIXTURES).intersection(params))


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if external(item):
            item.add_marker(pytest.mark.external)


# In the fast tier a process started fails the test that started it: what it starts is external.
_SPAWNERS = (
    (subprocess, "_fork_exec"),  # subprocess, asyncio's subprocesses, os.popen
    (_posixsubprocess, "fork_exec"),  # multiprocessing's spawn and forkserver
    (os, "posix_spawn"),
    (os, "posix_spawnp"),
    (os, "fork"),  # multiprocessing's fork, os.spawn*
    (os, "forkpty"),  # pty
    (os, "system"),
)
_started: list[str] = []


class StartedInFastTier(RuntimeError):
    pass


def _refusing(name: str):
    def refuse(*args, **kwargs):
        what = f"{name}({str(args[0] if args else '')[:120]})"
        _started.append(what)
        raise StartedInFastTier(f'{what} in the fast tier (-m "{FAST_TIER}"): mark the test external')

    return refuse


@pytest.fixture(scope="session", autouse=True)
def _no_process_in_the_fast_tier(request):
    if FAST_TIER not in (request.config.option.markexpr or ""):
        yield False
        return
    import asyncssh  # noqa: F401 (its import runs ldconfig and gcc: ctypes' find_library, for liboqs)

    with pytest.MonkeyPatch.context() as patch:
        for owner, name in _SPAWNERS:
            patch.setattr(owner, name, _refusing(name))
        yield True


@pytest.fixture(autouse=True)
def _started_nothing(_no_process_in_the_fast_tier):
    """Also what a thread of the test's started, where the refusal was caught or went unseen."""
    yield
    if _no_process_in_the_fast_tier and _started:
        started = ", ".join(_started)
        _started.clear()
        pytest.fail(f'started {started} in the fast tier (-m "{FAST_TIER}"): mark the test external')


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
