"""What a process actually loads. Which module may import which, wherever the import is written, is
held by the import contracts in pyproject.toml ([tool.importlinter], run by `lint-imports`); these
tests see what those cannot: the modules loaded when a module is imported or a command runs, third
parties' own imports included (a function-local import that runs, a library that loads another)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

WEB_STACK = ("fastapi", "uvicorn", "starlette")


def modules_loaded_by(*imports: str) -> set[str]:
    code = (
        "import sys\n"
        + "".join(f"import {name}\n" for name in imports)
        + "import json; print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def top(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


@pytest.mark.external
@pytest.mark.parametrize("module", ["spyglass.tui.app", "spyglass.cli"])
def test_front_ends_do_not_load_the_web_stack(module):
    loaded = modules_loaded_by(module)
    assert not top(loaded) & set(WEB_STACK)
    server_modules = {n for n in loaded if n.startswith("spyglass.server.")}
    assert server_modules <= {
        "spyglass.server.state.sqlite.accounts",
        "spyglass.server.runner",
        "spyglass.server.plans",
    }


@pytest.mark.external
def test_the_client_and_models_load_neither_textual_nor_the_web_stack():
    loaded = top(modules_loaded_by("spyglass.client", "spyglass.models", "spyglass.config"))
    assert not loaded & {"textual", *WEB_STACK}
    assert "httpx" in loaded  # the import did happen: the check above saw a real client


# `spyglass --help` as the console script runs it; the modules it loaded are listed when it exits.
HELP_RUN = """
import atexit, json, runpy, sys
atexit.register(lambda: print("MODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["spyglass", *sys.argv[1:]]
runpy.run_module("spyglass", run_name="__main__")
"""


@pytest.mark.external
@pytest.mark.parametrize("args", [["--help"], ["search", "--help"]])
def test_cli_help_loads_no_ui_web_or_http_stack(args):
    run = subprocess.run([sys.executable, "-c", HELP_RUN, *args], capture_output=True, text=True)
    assert run.returncode == 0 and "usage" in run.stdout.lower(), run.stderr[-2000:]
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("MODULES ")]
    loaded = top(set(json.loads(line.removeprefix("MODULES "))))
    assert "spyglass" in loaded
    assert not loaded & {"textual", "fastapi", "uvicorn", "starlette", "httpx"}


@pytest.mark.external
def test_an_import_loads_no_web_stack(tmp_path):
    """`spyglass import` is a file's way into the store: fastapi alone took 0.3-1 s of its start."""
    banners = tmp_path / "one.json"
    banners.write_text(
        '{"ip_str": "198.51.100.1", "port": 22, "transport": "tcp", "timestamp": "2026-01-01T00:00:00"}\n'
    )
    args = ["import", "--data", str(tmp_path / "data"), str(banners)]
    run = subprocess.run([sys.executable, "-c", HELP_RUN, *args], capture_output=True, text=True)
    assert run.returncode == 0 and "1 new" in run.stderr, run.stderr[-2000:]
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("MODULES ")]
    assert not top(set(json.loads(line.removeprefix("MODULES ")))) & set(WEB_STACK)


@pytest.mark.external
def test_server_does_not_import_textual():
    loaded = modules_loaded_by("spyglass.server.app")
    assert "textual" not in top(loaded)


def reaches(names: set[str], package: str) -> set[str]:
    return {n for n in names if n == package or n.startswith(package + ".")}


@pytest.mark.external
def test_loading_the_clickhouse_store_loads_neither_tantivy_nor_the_embedded_store():
    loaded = modules_loaded_by("spyglass.server.clickhouse", "spyglass.server.clickhouse.upgrade")
    assert "spyglass.server.clickhouse.store" in loaded  # the import did happen
    assert "tantivy" not in top(loaded)
    assert not reaches(loaded, "spyglass.server.index")


@pytest.mark.external
def test_a_backend_on_clickhouse_with_its_alerts_loads_no_tantivy():
    """Alert triggers match with query/match.py: they built an in-memory tantivy index per batch."""
    loaded = modules_loaded_by(
        "spyglass.server.app", "spyglass.server.alerts.engine", "spyglass.server.clickhouse", "spyglass.server.collect"
    )
    assert "spyglass.server.alerts.triggers" in loaded
    assert "tantivy" not in top(loaded) and not reaches(loaded, "spyglass.server.index")
