"""The wheel ships every non-Python file, and an installed wheel (not the source tree) draws the world
map, loads its themes and runs the command. The slow test of the suite (a build and a venv, offline)."""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Where each package directory of the source tree lands in the wheel (see setup.py).
PACKAGE_DIRS = {ROOT / "src" / "spyglass": "spyglass", ROOT / "themes": "spyglass/themes"}
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "src", "themes")

INSTALLED_CHECK = """
import json, subprocess, sys
from importlib.resources import files
import spyglass
from spyglass.tui.themes import load_themes
from spyglass.tui.widgets.worldmap import land_rows

rows = land_rows(60, 15)
print(json.dumps({
    "spyglass": spyglass.__file__,
    "themes": sorted(t.name for t in load_themes(sys.argv[1])),
    "land_cells": sum(ch not in " \\u2800" for row in rows for ch in row),
    "tcss": files("spyglass.tui").joinpath("app.tcss").is_file(),
}))
"""

pytestmark = [pytest.mark.slow, pytest.mark.external]  # pip and a venv, as processes


def shipped_files() -> dict[str, Path]:
    """Every non-Python file in a package directory, by its path inside the wheel."""
    found = {}
    for source, target in PACKAGE_DIRS.items():
        for path in source.rglob("*"):
            if (
                path.is_file()
                and path.suffix not in (".py", ".pyc")
                and "__pycache__" not in path.parts
                and not path.name.startswith(".")
            ):
                found[f"{target}/{path.relative_to(source).as_posix()}"] = path
    return found


def run(*command, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, **kwargs)
    assert result.returncode == 0, f"{command[:4]}...: {result.stderr[-2000:]}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built offline with the installed setuptools, from a copy of the tree (the build
    writes build/ and egg-info beside its input, and a stale build/ could hide a missing file)."""
    tmp = tmp_path_factory.mktemp("wheel")
    tree = tmp / "tree"
    tree.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in BUILD_INPUTS:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=ignore)
        else:
            shutil.copy2(source, tree / name)
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-w",
        str(tmp / "dist"),
        str(tree),
    )
    (built,) = (tmp / "dist").glob("spyglass-*.whl")
    return built


def test_wheel_ships_every_non_python_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = shipped_files()
    assert {
        "spyglass/tui/data/world.pbm.gz",
        "spyglass/tui/app.tcss",
        "spyglass/themes/spyglass.toml",
        "spyglass/themes/spyglass-16.toml",
    } <= set(expected)
    missing = sorted(set(expected) - names)
    assert not missing, f"not in the wheel (add the suffix to package-data in pyproject.toml): {missing}"
    assert "spyglass/themes/__init__.py" in names and "spyglass/tui/app.py" in names
    assert not [n for n in names if n.startswith("spyglass/testing/")]  # the tests' helpers: not shipped
    assert "spyglass-0.1.0.dist-info/licenses/LICENSE" in names


def test_installed_wheel_draws_the_map_and_loads_themes(wheel, tmp_path):
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    python = venv / "bin" / "python"
    new_site = Path(run(str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())
    # The dependencies come from this venv: its site-packages, after the new one's, as plain path
    # lines (so that this venv's editable install of spyglass is not activated there).
    (new_site / "dependencies.pth").write_text("".join(f"{path}\n" for path in site.getsitepackages()))
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        str(wheel),
    )

    user_themes = tmp_path / "config" / "themes"
    user_themes.mkdir(parents=True)
    (user_themes / "mine.toml").write_text('name = "mine"\nprimary = "#ff8800"\n')
    out = run(str(python), "-c", INSTALLED_CHECK, str(tmp_path / "config"), cwd=tmp_path).stdout
    result = json.loads(out)
    assert Path(result["spyglass"]).is_relative_to(venv), result["spyglass"]  # not the source tree
    assert {"spyglass", "spyglass-16", "mine"} <= set(result["themes"])
    assert result["land_cells"] > 100  # the map has land on it
    assert result["tcss"]
    assert "usage" in run(str(venv / "bin" / "spyglass"), "--help", cwd=tmp_path).stdout.lower()
