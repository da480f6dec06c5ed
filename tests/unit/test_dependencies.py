"""pyproject.toml declares what the code uses: each runtime dependency is imported by src/ (or is
loaded for it by another one, named below), and no dependency is declared twice."""

from __future__ import annotations

import ast
import re
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# Dependencies that src/ never imports because another dependency loads them
LOADED_BY_OTHERS = {
    "uvloop": "uvicorn runs on its event loop when it is installed",
    "python-multipart": "FastAPI and Starlette parse form bodies with it",
}


def name(requirement: str) -> str:
    """The distribution a requirement names, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]).lower()


def imported_modules() -> set[str]:
    """The top-level modules that src/ imports (absolute imports only)."""
    found = set()
    for path in (ROOT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def test_every_runtime_dependency_is_imported():
    distributions: dict[str, set[str]] = {}
    for module, names in packages_distributions().items():
        for dist in names:
            distributions.setdefault(name(dist), set()).add(module)
    imported = imported_modules()
    unused = [
        requirement
        for requirement in PROJECT["dependencies"]
        if name(requirement) not in LOADED_BY_OTHERS and not distributions.get(name(requirement), set()) & imported
    ]
    assert unused == [], "declared but never imported by src/"


def test_no_dependency_is_declared_twice():
    groups = {"dependencies": PROJECT["dependencies"], **PROJECT["optional-dependencies"]}
    for group, requirements in groups.items():
        names = [name(r) for r in requirements]
        assert sorted({n for n in names if names.count(n) > 1}) == [], f"declared twice in {group}"
