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


def test_server_does_not_import_textual():
    loaded = modules_loaded_by("spyglass.server.app")
    assert "textual" not in top(loaded)
