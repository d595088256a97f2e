"""The third-party solver of docs/plugins.md, installed as a real distribution, is found, conforms and runs from the CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import compbench
from compbench.testing import check_solver

PLUGINS = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"


def _docs_block(language: str, first_line: str) -> str:
    for block in re.findall(rf"```{language}\n(.*?)```", PLUGINS.read_text(), flags=re.S):
        if block.startswith(first_line):
            return block
    raise AssertionError(f"docs/plugins.md has no {language} block starting with {first_line!r}")


@pytest.fixture
def greedy_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Install the my-greedy package into a fresh site directory (what pip would write)."""
    project = tomllib.loads(_docs_block("toml", "# my-greedy/pyproject.toml"))
    (tmp_path / "my_greedy.py").write_text(_docs_block("python", "# my-greedy/my_greedy.py"))
    info = tmp_path / "my_greedy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['project']['name']}\nVersion: 0.1\n")
    entry_points = project["project"]["entry-points"]["compbench.solvers"]
    (info / "entry_points.txt").write_text(
        "[compbench.solvers]\n" + "".join(f"{name} = {target}\n" for name, target in entry_points.items()))
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_plugin_is_listed_and_conforms(greedy_plugin: Path) -> None:
    assert "greedy-flat" in compbench.solver_names()
    info = {i["name"]: i for i in compbench.list_solvers()}["greedy-flat"]
    assert info["exact"] is False and info["lengths"] == ["exact"]
    check_solver("greedy-flat", max_n=7, max_examples=80)


def test_plugin_runs_from_the_cli(greedy_plugin: Path) -> None:
    env = {**os.environ, "PYTHONPATH": f"{greedy_plugin}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    example = Path(__file__).resolve().parents[1] / "instances" / "ex1.json"
    result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(example), "--solver", "greedy-flat"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "solver   greedy-flat: feasible" in result.stdout and "kept     2 of 3" in result.stdout


def test_conformance_kit_catches_a_wrong_solver(greedy_plugin: Path) -> None:
    class Liar(compbench.get_solver("greedy-flat").__class__):
        name = "liar"
        exact = True  # claims proofs it does not have

        def _solve(self, problem, **kwargs):
            solution = super()._solve(problem, **kwargs)
            if solution.has_solution:
                solution.status = compbench.Status.OPTIMAL
            return solution

    # hypothesis reports one AssertionError, or an ExceptionGroup of them when it finds several distinct failures
    with pytest.raises((AssertionError, ExceptionGroup)):
        check_solver(Liar(), max_n=6, max_examples=50, seed=0)  # a fixed draw: the same examples on every run


MISSING_BACKEND = '''
import compbench

class NeedsBackend(compbench.Solver):
    name = "needs-backend"
    requires = ("compbench_no_such_backend",)
    install = "pip install compbench-no-such-backend"

    def _solve(self, problem, **options):
        import compbench_no_such_backend  # noqa: F401
'''


def test_a_solver_whose_backend_is_missing_says_how_to_install_it(tmp_path: Path, capsys, monkeypatch) -> None:
    from compbench.cli import main

    (tmp_path / "needs_backend.py").write_text(MISSING_BACKEND)
    info = tmp_path / "needs_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: needs-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[compbench.solvers]\nneeds-backend = needs_backend:NeedsBackend\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reason = "needs compbench_no_such_backend: pip install compbench-no-such-backend"
    assert {i["name"]: i for i in compbench.list_solvers()}["needs-backend"]["unavailable"] == reason
    solution = compbench.get_solver("needs-backend").solve(compbench.generate("gaussian", 4, length=2))
    assert solution.status == compbench.Status.UNSUPPORTED and reason in solution.message
    assert main(["solvers"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^needs-backend +no ", out, flags=re.M) and f"  needs-backend: {reason}" in out
    assert main(["check", "gen:gaussian:4:1", "--solvers", "brute-force,needs-backend", "--time-limit", "5"]) == 2
    assert f"needs-backend cannot run here: {reason}" in capsys.readouterr().err


def test_a_plugin_cannot_take_a_builtin_name(tmp_path: Path, monkeypatch) -> None:
    # first on sys.path, a plug-in registering "resource-dp" would win in this process and lose in a worker (which
    # puts compbench first): the built-in wins everywhere, and the run file names its distribution
    (tmp_path / "shadow.py").write_text("from compbench_solvers.brute_force import BruteForce as Fake\n")
    info = tmp_path / "shadow-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shadow\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[compbench.solvers]\nresource-dp = shadow:Fake\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from compbench.registry import solver_distribution, solver_distributions

    assert type(compbench.get_solver("resource-dp")).__module__ == "compbench_solvers.compressive.solvers"
    assert solver_distribution("resource-dp") == solver_distributions()["resource-dp"]["distribution"] == "compbench"
