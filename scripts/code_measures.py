"""The shape of ``src/``: what a newcomer meets before reading a line of it. Run:

    python scripts/code_measures.py [SRC]

It prints the count of ``Any`` in annotations and of ``# type: ignore``, the modules, classes and
functions over their size limits, and the import cycles. An import counts wherever it is written
(at the top, under ``if TYPE_CHECKING:`` or inside a function): each of them ties the two modules
together for whoever changes one. ``tests/unit/test_code_shape.py`` fails on the same findings,
from the same functions.

Two more measures of the server, printed and not (yet) failed on: the folders of ``server/`` that
import one another in a loop (each module at ``server/``'s top counts as a folder of its own), and
the imports that point up a floor of the server (``FLOORS``: state, stores, features, composition).
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
LIMITS = {"module": 500, "class": 400, "function": 80}  # lines


@dataclass(frozen=True)
class Oversize:
    kind: str  # a key of LIMITS
    name: str  # dotted: module, or module:Class.method
    lines: int

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: {self.lines} lines (limit {LIMITS[self.kind]})"


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module under ``src`` by its dotted name (a package by its own name)."""
    found = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, tree: ast.Module, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            # `from package import module` imports the module; `from module import name` the module
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {m for m in found if m in known and m != name}


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    known = modules(src)
    return {name: imported(name, path, ast.parse(path.read_text()), known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


SERVER = "spyglass.server"


def folder_of(name: str, known: dict[str, Path]) -> str | None:
    """The folder of ``server/`` that module ``name`` is in (``server/alerts/``), or for a module at
    ``server/``'s top the module itself (``server/app.py``); None outside the server."""
    parts = name.split(".")
    if name == SERVER or not name.startswith(SERVER + "."):
        return None
    first = ".".join(parts[:3])
    if len(parts) > 3 or known[first].name == "__init__.py":
        return f"server/{parts[2]}/"
    return f"server/{parts[2]}.py"


def folder_graph(graph: dict[str, set[str]], src: Path = SRC) -> dict[str, set[str]]:
    """Which folder of ``server/`` imports which (from :func:`import_graph`'s module imports)."""
    known = modules(src)
    folders: dict[str, set[str]] = {}
    for name, imports in graph.items():
        if (folder := folder_of(name, known)) is None:
            continue
        targets = folders.setdefault(folder, set())
        for other in imports:
            if (target := folder_of(other, known)) is not None and target != folder:
                targets.add(target)
                folders.setdefault(target, set())
    return folders


# The floors of the server, lowest first: what state and banners are (protocols, shapes, the SQLite
# and error primitives), the stores that keep them, the features built on the stores, and what
# composes the backend (the app, its routes, the process). A module is on the floor of the longest
# prefix that names it, else on "features". An import should point down or level, never up.
FLOORS: dict[str, tuple[str, ...]] = {
    "state": (
        "server.state",
        "server.banners",
        "server.extras",
        "server.plans",
        "server.memory",
        "server.errors",
        "server.asgibody",  # ASGI answers and bodies, under errors' answers
        "server.querystring",  # the query string checked, in errors' handlers of every host
        "server.tasks",
        "server.alerts.rows",  # the state's alert rows (state/alertrows.py) under their old name
        "server.directory.seed",  # the directory's starting queries, data the stores insert
    ),
    "stores": (
        "server.store",
        "server.stores",
        "server.index",
        "server.clickhouse",
        "server.postgres",
        "server.alerts.store",
        "server.scanner.store",
        "server.directory.store",
    ),
    "features": ("server.ingest", "server.grabs", "server.geoip"),
    "composition": (
        "server.app",
        "server.deps",
        "server.routers",
        "server.runner",
        "server.workers",
        "server.process",
        "server.guard",
        "server.inflight",  # the middlewares the apps are composed of, over the guard's connections
        "server.lane",
        "server.gates",
        "server.settings",
    ),
}


def floor_of(name: str) -> int | None:
    """The floor (an index into ``FLOORS``) of a server module; None outside the server."""
    if not name.startswith(SERVER + "."):
        return None
    best, floor = "", list(FLOORS).index("features")
    for number, prefixes in enumerate(FLOORS.values()):
        for prefix in prefixes:
            full = "spyglass." + prefix
            if (name == full or name.startswith(full + ".")) and len(full) > len(best):
                best, floor = full, number
    return floor


def up_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports (importer, imported) from a server module to one on a higher floor."""
    found = []
    for name, imports in sorted(graph.items()):
        low = floor_of(name)
        for other in sorted(imports):
            high = floor_of(other)
            if low is not None and high is not None and high > low:
                found.append((name, other))
    return found


def oversize(src: Path = SRC) -> list[Oversize]:
    """Every module, class and function over its limit in ``LIMITS``."""
    found = []
    for name, path in modules(src).items():
        text = path.read_text()
        if (lines := len(text.splitlines())) > LIMITS["module"]:
            found.append(Oversize("module", name, lines))
        found.extend(_oversize_defs(ast.parse(text), name + ":"))
    return found


def _oversize_defs(node: ast.AST, prefix: str) -> Iterator[Oversize]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            kind = "class" if isinstance(child, ast.ClassDef) else "function"
            lines = (child.end_lineno or child.lineno) - child.lineno + 1
            if lines > LIMITS[kind]:
                yield Oversize(kind, prefix + child.name, lines)
            yield from _oversize_defs(child, f"{prefix}{child.name}.")
        else:
            yield from _oversize_defs(child, prefix)


def any_annotations(tree: ast.Module) -> int:
    """How many times ``Any`` is named in the annotations of ``tree`` (quoted ones too)."""
    annotations: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            annotations.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            annotations.append(node.returns)
    return sum(_any_in(annotation) for annotation in annotations)


def _any_in(annotation: ast.expr) -> int:
    count = 0
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any" or isinstance(node, ast.Attribute) and node.attr == "Any":
            count += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                count += _any_in(ast.parse(node.value, mode="eval").body)
            except SyntaxError:  # a Literal["..."] member, not a quoted annotation
                pass
    return count


def type_ignores(text: str) -> int:
    """How many ``# type: ignore`` comments ``text`` holds (in comments only, not in strings)."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return sum(1 for t in tokens if t.type == tokenize.COMMENT and "type: ignore" in t.string)


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else SRC
    texts = {path: path.read_text() for path in modules(src).values()}
    print(f"modules: {len(texts)}, lines: {sum(len(t.splitlines()) for t in texts.values())}")
    print(f"Any in annotations: {sum(any_annotations(ast.parse(t)) for t in texts.values())}")
    print(f"# type: ignore: {sum(type_ignores(t) for t in texts.values())}")
    found = oversize(src)
    for kind, limit in LIMITS.items():
        over = sorted((o for o in found if o.kind == kind), key=lambda o: -o.lines)
        print(f"{kind} over {limit} lines: {len(over)}")
        for item in over:
            print(f"  {item.lines:5}  {item.name}")
    graph = import_graph(src)
    loops = cycles(graph)
    print(f"import cycles (top-level, TYPE_CHECKING and function-local imports): {len(loops)}")
    for loop in loops:
        print(f"  {len(loop)} modules: {' '.join(loop)}")
    folder_loops = cycles(folder_graph(graph, src))
    looped = [f for loop in folder_loops for f in loop if f.endswith("/")]
    print(f"server/ folders in an import loop (the same imports; a top-level module is its own folder): {len(looped)}")
    for loop in folder_loops:
        folders = [f for f in loop if f.endswith("/")]
        tops = [f for f in loop if not f.endswith("/")]
        print(f"  {len(folders)} folders: {' '.join(folders)}; with {len(tops)} modules: {' '.join(tops)}")
    up = up_imports(graph)
    names = list(FLOORS)
    print(f"server imports that point up a floor ({' < '.join(names)}): {len(up)}")
    pairs: dict[tuple[str, str], int] = {}
    for name, other in up:
        key = (f"{names[floor_of(name) or 0]} {name}", f"{names[floor_of(other) or 0]} {other}")
        pairs[key] = pairs.get(key, 0) + 1
    for (low, high), _ in sorted(pairs.items()):
        print(f"  {low} -> {high}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
