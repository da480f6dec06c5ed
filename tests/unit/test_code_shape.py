"""The code stays a house a newcomer can live in: no import cycles (an import under ``TYPE_CHECKING``
or inside a function ties two modules as much as one at the top), no module over 500 lines, no class
over 400, no function over 80. The measures are those ``scripts/code_measures.py`` prints."""

from __future__ import annotations

import ast
import textwrap

from scripts.code_measures import (
    LIMITS,
    Oversize,
    any_annotations,
    cycles,
    folder_graph,
    import_graph,
    oversize,
    type_ignores,
    up_imports,
)


def test_src_has_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles in src/:\n" + "\n".join(" ".join(loop) for loop in found)


def test_server_folders_form_no_loop_and_no_import_points_up_a_floor():
    """server/ in floors (state < stores < features < composition, scripts/code_measures.py's
    FLOORS): no two of its folders import each other, through any chain, and nothing imports a
    floor above its own."""
    graph = import_graph()
    loops = cycles(folder_graph(graph))
    assert not loops, "server/ folders in an import loop:\n" + "\n".join(" ".join(loop) for loop in loops)
    up = up_imports(graph)
    assert not up, "server imports that point up a floor:\n" + "\n".join(f"{a} -> {b}" for a, b in up)


def test_src_has_nothing_over_its_size_limit():
    found = oversize()
    assert not found, "over the size limits in src/:\n" + "\n".join(map(str, found))


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_every_kind_of_import_counts_toward_a_cycle(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.b import B\n",
            "pkg/b.py": "from . import c\n",
            "pkg/c.py": "def late():\n    from .a import A\n",
            "pkg/d.py": "import pkg.a\n",  # imports into the loop, and is no part of it
            "pkg/sub/__init__.py": "from .. import d\n",
            "pkg/sub/e.py": "from ..sub import f\n",
            "pkg/sub/f.py": "import pkg.sub.e as e\n",
        },
    )
    graph = import_graph(tmp_path)
    assert graph["pkg.sub"] == {"pkg.d"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"], ["pkg.sub.e", "pkg.sub.f"]]


def test_server_folders_in_a_loop_and_imports_up_a_floor(tmp_path):
    """No module cycle, yet alerts/ and state/ import each other: a loop of folders. The state's
    import of an alert feature points up a floor; the route's import of the state points down."""
    write(
        tmp_path,
        {
            "spyglass/__init__.py": "",
            "spyglass/server/__init__.py": "",
            "spyglass/server/app.py": "from spyglass.server.state import accounts\n",
            "spyglass/server/state/__init__.py": "",
            "spyglass/server/state/accounts.py": "def late():\n    from spyglass.server.alerts import engine\n",
            "spyglass/server/state/alerts.py": "",
            "spyglass/server/alerts/__init__.py": "",
            "spyglass/server/alerts/engine.py": "from spyglass.server.state import alerts\n",
        },
    )
    graph = import_graph(tmp_path)
    assert not cycles(graph)
    folders = folder_graph(graph, tmp_path)
    assert folders["server/app.py"] == {"server/state/"}
    assert cycles(folders) == [["server/alerts/", "server/state/"]]
    assert up_imports(graph) == [("spyglass.server.state.accounts", "spyglass.server.alerts.engine")]


def test_sizes_are_measured_per_module_class_and_function(tmp_path):
    lines = LIMITS["function"]  # a def line and as many more: one over the limit
    write(
        tmp_path,
        {
            "m.py": "class C:\n    def long(self):\n"
            + "        x = 1\n" * lines
            # at the limit: not over it
            + "def short():\n"
            + "    x = 1\n" * (lines - 1),
            "big.py": "\n" * (LIMITS["module"] + 1),
        },
    )
    assert sorted(oversize(tmp_path), key=str) == [
        Oversize("function", "m:C.long", lines + 1),
        Oversize("module", "big", LIMITS["module"] + 1),
    ]


def test_any_and_type_ignore_are_counted_where_they_are_written():
    tree = ast.parse(
        textwrap.dedent(
            """
            from typing import Any, Literal
            import typing
            def f(a: Any, b: "dict[str, Any]", c: Literal["Any x"]) -> typing.Any:
                d: list[Any] = []
                return cast(Any, d)  # a call's argument is no annotation
            """
        )
    )
    assert any_annotations(tree) == 4
    assert type_ignores("x = 1  # type: ignore[assignment]\ny = '# type: ignore'\n") == 1
