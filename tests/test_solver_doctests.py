"""The built-in solvers' docstring examples, run under the name they are installed as (``compbench_solvers``).

pytest's ``--doctest-modules`` would import ``solvers/`` by its folder name (``solvers.compressive.chart``); numba's
on-disk cache records the module a kernel was compiled in, and a cache written under the folder name is not loaded
under the installed one.  So the solvers' doctests run here, through ``doctest``, and ``solvers`` is not among
pytest's ``testpaths``.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import compbench_solvers


def solver_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.walk_packages(compbench_solvers.__path__, "compbench_solvers."))


def test_every_solver_module_is_found() -> None:
    assert {"compbench_solvers.compressive.chart", "compbench_solvers.ilp.joint"} <= set(solver_modules())


# The GPU kernels' modules need a GPU or numba's simulator to be imported (tests/test_cuda_dp.py runs their examples)
NEEDS_A_GPU = {"compbench_solvers.cuda.hook"}


@pytest.mark.parametrize("name", solver_modules())
def test_docstring_examples(name: str) -> None:
    if name.startswith("compbench_solvers.cuda."):  # modules that define GPU kernels need numba-cuda (compbench[gpu])
        pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (the gpu extra)")
    if name in NEEDS_A_GPU:
        from compbench_solvers.cuda import runtime

        if runtime.unavailable() is not None:
            pytest.skip(f"{name}: {runtime.unavailable()}")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
