"""compbench: exact solvers for sentence compression as compressive dependency parsing, side by side.

>>> import compbench
>>> p = compbench.generate("gaussian", n=6, seed=0, length=3)
>>> sol = compbench.get_solver("brute-force").solve(p)
>>> sol.status.value, len(sol.kept), abs(compbench.evaluate(p, sol) - sol.objective) < 1e-9
('optimal', 3, True)
"""

import importlib
import sys
import types

# Every name of the API and the module that holds it, imported on first use: ``import compbench`` (and the command
# line, which needs only __version__ to build its parsers) does not import numpy and numba until they are needed.
EXPORTS = {
    "evaluate": ["InvalidSolution", "evaluate", "objective", "sibling_pairs", "tree_violation"],
    "generate": ["KINDS", "generate", "generate_set"],
    "inference": ["Marginals", "log_partition", "log_partition_many", "marginals", "marginals_many",
                  "tree_log_partition", "tree_log_partition_many", "tree_marginals",
                  "tree_marginals_many"],
    "io": ["InstanceError", "read_instance", "read_instances", "write_instance", "write_instances"],
    "problem": ["Length", "Problem", "ProblemError", "Solution", "Status", "sibling_triples"],
    "problem_batch": ["ProblemBatch"],
    "registry": ["get_solver", "list_solvers", "solve_many", "solver_names"],
    "solver": ["Capabilities", "Option", "Solver", "SolverError"],
}
_HOME = {name: module for module, names in EXPORTS.items() for name in names}


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])


class _Package(types.ModuleType):
    """``compbench.evaluate`` and ``compbench.generate`` are functions, as eager imports made them: importing the
    submodule of the same name (which sets it as an attribute of the package) puts its function there instead."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and _HOME.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = sorted(_HOME)
__version__ = "0.1.0"
