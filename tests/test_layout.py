"""The layout keeps its shape: no import cycle between packages or between modules, no oversized module, every
package installed."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"compbench": ROOT / "compbench", "compbench_solvers": ROOT / "solvers"}  # import name -> folder
MAX_LINES = 600
# the chart's rules: one deduction system, kept in one place (on the CPU, and on the GPU with its kernels)
LONGER_ALLOWED = {"solvers/compressive/chart.py", "solvers/cuda/hook.py", "solvers/cuda/eisner.py"}  # a deduction system each, its rules in one module


def modules() -> dict[str, Path]:
    """Every module's dotted name (as installed) and its file."""
    found = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def node(module: str) -> str:
    """The package a module belongs to: a subpackage (``compbench.harness``), or the root package's own modules
    (``compbench``, the core) as one node; ``python -m compbench`` (``__main__``) stands above them all."""
    if module.endswith(".__main__"):
        return module
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or (len(parts) == 2 and _is_package(module)) else parts[0]


def _is_package(module: str) -> bool:
    path = modules().get(module)
    return path is not None and path.name == "__init__.py"


def imported(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``module`` imports, at its top level or inside functions (a lazy import is an edge too).

    ``from P import x`` imports the module ``P.x`` when there is one, else ``P`` itself; the parent packages Python
    imports on the way are not edges (a package's ``__init__`` importing its own modules is no cycle)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = set()
    for statement in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(statement, ast.Import):
            names = [alias.name for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom):
            base = statement.module or ""
            if statement.level:
                anchor = package.split(".")[: len(package.split(".")) - statement.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in statement.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                out.add(name)
    return out


def module_graph(known: dict[str, Path]) -> dict[str, set[str]]:
    """Each module and the project modules it imports (itself left out)."""
    return {module: imported(module, path, known) - {module} for module, path in known.items()}


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in module_graph(modules()).items():
        source = node(module)
        graph.setdefault(source, set())
        graph[source] |= {node(target) for target in targets} - {source}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan): every import cycle, its members sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_between_packages() -> None:
    assert cycles(package_graph()) == []


def test_no_import_cycle_between_modules() -> None:
    """The core is one node above: inside it (and inside every package) no two modules import each other, directly
    or through others, at the top level or inside functions."""
    found = cycles(module_graph(modules()))
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in found)


def test_the_cycle_finder_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_module_graph_sees_a_planted_cycle(tmp_path) -> None:
    """Two modules of a package that import each other, one at the top level and one inside a function, relatively
    and absolutely; a third that only imports one of them is no part of the cycle."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from . import a\n")
    (package / "a.py").write_text("from .b import helper\n")
    (package / "b.py").write_text("def helper():\n    from pkg import a\n    return a\n")
    (package / "c.py").write_text("import pkg.a\n")
    known = {f"pkg.{path.stem}" if path.stem != "__init__" else "pkg": path for path in package.glob("*.py")}
    graph = module_graph(known)
    assert graph == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.a"}}
    assert cycles(graph) == [["pkg.a", "pkg.b"]]


def test_the_core_imports_no_solver_and_no_package_above_it() -> None:
    assert package_graph()["compbench"] == set()


def test_no_module_over_600_lines_but_the_charts_rules() -> None:
    long = {str(path.relative_to(ROOT)): len(path.read_text().splitlines()) for path in modules().values()}
    assert {path: lines for path, lines in long.items() if lines > MAX_LINES and path not in LONGER_ALLOWED} == {}


def test_every_package_folder_is_installed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = {name for name, path in modules().items() if path.name == "__init__.py"}
    assert set(config["packages"]) == packages
    assert config["package-dir"] == {"compbench_solvers": "solvers"}
