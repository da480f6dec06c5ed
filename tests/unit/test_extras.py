"""The [clickhouse] and [postgres] extras: a dashboard or CLI user against a remote server needs
neither, so the CLI, the dashboard and the embedded backend work without clickhouse-driver, psycopg
and psycopg-pool; a backend asked for ClickHouse or PostgreSQL without them says, in one line,
which extra to install."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from spyglass.cli import EXIT_UNAVAILABLE, main
from spyglass.server.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = tuple(module for _, modules, _ in EXTRAS.values() for module in modules)
POSTGRES = "postgresql://nobody@127.0.0.1:9/none"
CLICKHOUSE = "clickhouse://127.0.0.1:9/none"

# Run in a fresh interpreter where the extras' modules cannot be imported: the CLI, the embedded
# backend (in a thread) and the dashboard connected to it, showing the account's plan.
WITHOUT_EXTRAS = """
import asyncio, os, sys, tempfile
from pathlib import Path

for name in sys.argv[1:]:
    sys.modules[name] = None  # as if not installed: importing it fails

from spyglass.cli import main
from spyglass.testing.backend import start_backend
from spyglass.tui.app import SpyglassApp
from spyglass.tui.panes.account import AccountPane

async def settle(app, pilot):
    for _ in range(20):
        try:
            await app.workers.wait_for_complete()
        except Exception:
            pass
        await pilot.pause(0.05)

async def dashboard(profile):
    app = SpyglassApp(profile)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        await pilot.press("f5")  # the account pane
        await settle(app, pilot)
        return app.clients is not None and app.query_one(AccountPane).display

server, backend = start_backend(Path(tempfile.mkdtemp()))
with server:
    assert asyncio.run(dashboard(backend.profile(backend.key("member"))))
    os.environ.update(SPYGLASS_URL=backend.url, SPYGLASS_API_KEY=backend.key("member"))
    assert main(["info"]) == 0
backend.store.close()
print("loaded:", sorted(n for n in sys.argv[1:] if sys.modules.get(n) is not None))
"""


@pytest.fixture
def without_extras(monkeypatch):
    """As where neither extra is installed: importing their modules fails."""
    for name in BLOCKED:
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize(
    "argv, extra",
    [
        (["serve", "--port", "0", "--state", POSTGRES], "postgres"),
        (["serve", "--port", "0", "--store", CLICKHOUSE], "clickhouse"),
        (["keys", "create", "--state", POSTGRES], "postgres"),
        (["state", "init", "--state", POSTGRES], "postgres"),
        (["store", "init", "--store", CLICKHOUSE], "clickhouse"),
        (["store", "copy", "--store", CLICKHOUSE], "clickhouse"),
    ],
)
def test_a_backend_asked_for_a_shared_store_names_the_extra(without_extras, capsys, tmp_path, argv, extra):
    if argv[:2] == ["store", "copy"]:
        from spyglass.server.index import BannerIndex

        BannerIndex(tmp_path).close()  # an embedded store to copy from
        argv = [*argv, "--data", str(tmp_path)]
    assert main(argv) == EXIT_UNAVAILABLE
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and f"pip install 'spyglass[{extra}]'" in said, said


def test_the_dashboard_started_on_a_postgresql_state_names_the_extra(without_extras, monkeypatch, capsys):
    monkeypatch.setenv("SPYGLASS_STATE", POSTGRES)
    assert main(["myip"]) != 0  # no profile: the embedded backend, on that state
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "pip install 'spyglass[postgres]'" in said, said


def test_the_extras_are_what_the_code_asks_for():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {extra: project["optional-dependencies"][extra] for extra in EXTRAS}
    assert {extra: [r.split(">")[0].split("[")[0] for r in rs] for extra, rs in declared.items()} == {
        "clickhouse": ["clickhouse-driver"],
        "postgres": ["psycopg", "psycopg-pool"],
    }
    assert not {r.split(">")[0].split("[")[0] for rs in declared.values() for r in rs} & {
        r.split(">")[0].split("[")[0] for r in project["dependencies"]
    }
    assert "spyglass[clickhouse,postgres]" in project["optional-dependencies"]["test"]


@pytest.mark.external
def test_the_cli_dashboard_and_embedded_backend_need_neither_extra(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRAS, *BLOCKED], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == "loaded: []"
