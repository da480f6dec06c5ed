"""The layers stay apart: the client is a library a script can use without the TUI or the server,
and the TUI reaches the server only through the launcher, without loading the web stack."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import spyglass.server

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
def test_client_and_models_load_neither_textual_nor_server():
    loaded = modules_loaded_by("spyglass.client", "spyglass.models", "spyglass.config")
    assert not top(loaded) & {"textual", *WEB_STACK}
    assert not {n for n in loaded if n.startswith("spyglass.server") or n.startswith("spyglass.tui")}


@pytest.mark.external
@pytest.mark.parametrize("module", ["spyglass.tui.app", "spyglass.cli"])
def test_front_ends_do_not_load_the_web_stack(module):
    loaded = modules_loaded_by(module)
    assert not top(loaded) & set(WEB_STACK)
    server_modules = {n for n in loaded if n.startswith("spyglass.server.")}
    assert server_modules <= {
        "spyglass.local.launcher",
        "spyglass.server.store",
        "spyglass.server.runner",
        "spyglass.server.plans",
    }


@pytest.mark.external
def test_the_client_alone_loads_neither_textual_nor_the_web_stack():
    loaded = top(modules_loaded_by("spyglass.client"))
    assert not loaded & {"textual", "fastapi", "uvicorn", "starlette"}
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


@pytest.mark.external
def test_the_server_does_not_import_the_presentation_layer():
    """spyglass.present is text for people (the CLI and the dashboard); the backend keeps its own rules."""
    loaded = modules_loaded_by("spyglass.server.app", "spyglass.server.runner")
    assert not {n for n in loaded if n.startswith("spyglass.present")}


SERVER = Path(spyglass.server.__file__).parent
# The banner stores: each a package implementing banners/store.py's BannerStore, none importing
# another; server/stores.py alone knows them all.
STORES = ("spyglass.server.index", "spyglass.server.clickhouse")


def imported_by(path: Path) -> set[str]:
    """Every module a file imports, wherever the import is (in a function, under TYPE_CHECKING)."""
    package = "spyglass." + ".".join(path.relative_to(SERVER.parent).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(filter(None, (base, node.module)))
            names.update(f"{module}.{a.name}" for a in node.names)  # ``from pkg import module`` too
    return names


def reaches(names: set[str], package: str) -> set[str]:
    return {n for n in names if n == package or n.startswith(package + ".")}


def package_imports(package: str) -> dict[str, set[str]]:
    folder = SERVER.parent.parent / package.replace(".", "/")
    files = {path.name: imported_by(path) for path in folder.rglob("*.py")}
    assert files, f"no package {package}"
    return files


@pytest.mark.parametrize("store", STORES)
def test_no_banner_store_imports_another(store):
    for name, imports in package_imports(store).items():
        for other in STORES:
            if other != store:
                assert not reaches(imports, other), f"{store}/{name} imports {reaches(imports, other)}"


def test_the_banner_vocabulary_imports_no_store():
    """banners/ is what every store shares: shape, keys, fields, words, trends, the protocol, the importer."""
    for name, imports in package_imports("spyglass.server.banners").items():
        for store in STORES:
            assert not reaches(imports, store), f"banners/{name} imports {reaches(imports, store)}"
        assert "tantivy" not in imports, name


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


def test_routes_reach_banners_only_through_the_banner_store():
    """The routers are HTTP only: no route imports a store's insides (tantivy, its index, ClickHouse)."""
    for path in (SERVER / "routers").glob("*.py"):
        imports = imported_by(path)
        for store in STORES:
            assert not reaches(imports, store), path.name
        assert "tantivy" not in imports, path.name
