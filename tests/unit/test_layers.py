"""The layers stay apart: the client is a library a script can use without the TUI or the server,
and the TUI reaches the server only through the launcher, without loading the web stack."""

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


def test_client_and_models_load_neither_textual_nor_server():
    loaded = modules_loaded_by("spyglass.client", "spyglass.models", "spyglass.config")
    assert not top(loaded) & {"textual", *WEB_STACK}
    assert not {n for n in loaded if n.startswith("spyglass.server") or n.startswith("spyglass.tui")}


@pytest.mark.parametrize("module", ["spyglass.tui.app", "spyglass.cli"])
def test_front_ends_do_not_load_the_web_stack(module):
    loaded = modules_loaded_by(module)
    assert not top(loaded) & set(WEB_STACK)
    server_modules = {n for n in loaded if n.startswith("spyglass.server.")}
    assert server_modules <= {
        "spyglass.server.launcher",
        "spyglass.server.store",
        "spyglass.server.runner",
        "spyglass.server.plans",
    }


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


@pytest.mark.parametrize("args", [["--help"], ["search", "--help"]])
def test_cli_help_loads_no_ui_web_or_http_stack(args):
    run = subprocess.run([sys.executable, "-c", HELP_RUN, *args], capture_output=True, text=True)
    assert run.returncode == 0 and "usage" in run.stdout.lower(), run.stderr[-2000:]
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("MODULES ")]
    loaded = top(set(json.loads(line.removeprefix("MODULES "))))
    assert "spyglass" in loaded
    assert not loaded & {"textual", "fastapi", "uvicorn", "starlette", "httpx"}


def test_server_does_not_import_textual():
    loaded = modules_loaded_by("spyglass.server.app")
    assert "textual" not in top(loaded)


def test_the_server_does_not_import_the_presentation_layer():
    """spyglass.present is text for people (the CLI and the dashboard); the backend keeps its own rules."""
    loaded = modules_loaded_by("spyglass.server.app", "spyglass.server.runner")
    assert not {n for n in loaded if n.startswith("spyglass.present")}


def test_routes_reach_banners_only_through_the_banner_store():
    """The routers are HTTP only: no route imports the embedded store's insides (tantivy, its index)."""
    import pathlib

    import spyglass.server.routers as routers

    for path in pathlib.Path(routers.__file__).parent.glob("*.py"):
        text = path.read_text()
        assert "spyglass.server.index." not in text.replace("spyglass.server.index.trends", ""), path.name
        assert "import tantivy" not in text, path.name
