"""bench/ uses spyglass as any script does (the installed package, its helpers in spyglass.testing)
and spyglass never uses those helpers."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def test_benchmarks_neither_edit_sys_path_nor_import_the_tests():
    for path in (ROOT / "bench").glob("*.py"):
        tree = ast.parse(path.read_text())
        assert [m for m in imported(tree) if m.split(".")[0] in ("tests", "bench")] == [], path.name
        edits = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and ast.unparse(n) == "sys.path"]
        assert edits == [], f"{path.name}: sys.path at lines {edits}"


def test_spyglass_never_imports_its_testing_helpers():
    package = ROOT / "src" / "spyglass"
    for path in package.rglob("*.py"):
        if path.is_relative_to(package / "testing"):
            continue
        assert not [m for m in imported(ast.parse(path.read_text())) if m.startswith("spyglass.testing")], path
