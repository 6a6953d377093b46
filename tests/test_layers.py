"""The package's import graph: no cycle between modules or between folders, and every import runs downward.

Every import counts, type-only (`if TYPE_CHECKING:`) and function-local ones included: a knot a reader meets
in a type annotation is still a knot. A folder of the package is one node; a top-level module is a node of its
own. LAYERS is the order docs/architecture.md's "Layout and how data flows" lists: a node may import its own layer
and those before it, never a later one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "scripts" / "crosslane"

# Lowest first. A node missing here fails the test: a new folder or top-level module takes its place explicitly.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"__init__", "archs", "errors", "log", "process", "files", "registry", "report", "inherit"}),
    frozenset({"config", "sessions"}),
    frozenset({"host"}),
    frozenset({"guest"}),
    frozenset({"context"}),
    frozenset({"sources", "features"}),
    frozenset({"models"}),
    frozenset({"shipping"}),
    frozenset({"gates"}),
    frozenset({"policy"}),
    frozenset({"contract"}),
    frozenset({"recipes"}),
    frozenset({"smokes"}),
    frozenset({"preflight"}),
    frozenset({"baremetal"}),
    frozenset({"suites"}),
    frozenset({"run", "reports", "localci"}),
    frozenset({"cli"}),
)


def modules(package: Path) -> dict[str, Path]:
    """Dotted module name → file, for every .py file of *package* (a package's __init__ named by the package)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = (package.name, *path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports. `from pkg import submodule` is an edge to the submodule
    (the package's __init__ only for names it defines)."""
    known = modules(package)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                    module = ".".join([*parts, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                submodules = [f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in known]
                targets = submodules + ([module] if len(submodules) < len(node.names) else [])
            else:
                continue
            graph[name] |= {t for t in targets if t in known and t != name}
    return graph


def node_of(module: str) -> str:
    """The folder a module lives in (its first level below the package), or the top-level module itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def folder_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    result: dict[str, set[str]] = {}
    for module, targets in graph.items():
        result.setdefault(node_of(module), set()).update(node_of(t) for t in targets if node_of(t) != node_of(module))
    return result


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward(graph: Mapping[str, Iterable[str]], layers: tuple[frozenset[str], ...]) -> list[str]:
    """Every folder-level import from a lower layer to a higher one, as "a -> b"."""
    rank = {node: level for level, group in enumerate(layers) for node in group}
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if rank[a] < rank[b])


def write_package(root: Path, files: Mapping[str, str]) -> Path:
    package = root / "pkg"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


def test_no_module_is_part_of_an_import_cycle() -> None:
    assert cycles(import_graph(PACKAGE)) == []


def test_no_folder_is_part_of_an_import_cycle() -> None:
    assert cycles(folder_graph(import_graph(PACKAGE))) == []


def test_every_folder_and_top_level_module_has_a_layer() -> None:
    placed = {node for group in LAYERS for node in group}
    nodes = {node_of(m) for m in import_graph(PACKAGE)}
    assert nodes - placed == set(), "give each new folder or top-level module its place in LAYERS"
    assert placed - nodes == set(), "LAYERS names what the package no longer has"


def test_every_import_runs_down_the_layers() -> None:
    assert upward(folder_graph(import_graph(PACKAGE)), LAYERS) == []


def test_the_readme_lists_the_folders_in_layer_order() -> None:
    readme = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout and how data flows", 1)[1].split("```", 2)[1]
    folders = [line.split()[0].rstrip("/") for line in layout.splitlines()
               if line.startswith("  ") and line.split()[0].endswith("/")]
    rank = {node: level for level, group in enumerate(LAYERS) for node in group}
    assert folders == sorted(folders, key=rank.__getitem__)
    assert set(folders) == {n for n in rank if (PACKAGE / n).is_dir()}


@pytest.mark.parametrize(("files", "expected"), [
    pytest.param({"__init__.py": "", "a/__init__.py": "", "a/x.py": "from pkg.b import y\n",
                  "b/__init__.py": "", "b/y.py": "import pkg.a.x\n"}, [["pkg.a.x", "pkg.b.y"]], id="module-cycle"),
    pytest.param({"__init__.py": "", "a/__init__.py": "", "a/x.py": "from typing import TYPE_CHECKING\n"
                  "if TYPE_CHECKING:\n    from pkg.b.y import Y\n",
                  "b/__init__.py": "", "b/y.py": "from pkg.a import x\n"}, [["pkg.a.x", "pkg.b.y"]],
                 id="type-only-cycle"),
    pytest.param({"__init__.py": "", "a/__init__.py": "", "a/x.py": "def f():\n    from ..b import y\n",
                  "b/__init__.py": "from pkg.a import x\n", "b/y.py": ""}, [], id="no-module-cycle"),
])
def test_the_cycle_finder_sees_a_knot_of_any_kind(tmp_path: Path, files: dict[str, str],
                                                  expected: list[list[str]]) -> None:
    assert cycles(import_graph(write_package(tmp_path, files))) == expected


def test_a_folder_knot_without_a_module_cycle_is_found(tmp_path: Path) -> None:
    package = write_package(tmp_path, {"__init__.py": "", "a/__init__.py": "", "a/x.py": "from pkg.b import y\n",
                                       "a/z.py": "", "b/__init__.py": "", "b/y.py": "from pkg.a import z\n"})
    graph = import_graph(package)
    assert cycles(graph) == []
    assert cycles(folder_graph(graph)) == [["a", "b"]]
    assert upward(folder_graph(graph), (frozenset({"__init__", "a"}), frozenset({"b"}))) == ["a -> b"]
