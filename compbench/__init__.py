"""compbench: exact solvers for sentence compression as compressive dependency parsing, side by side.

>>> import compbench
>>> p = compbench.generate("gaussian", n=6, seed=0, length=3)
>>> sol = compbench.get_solver("brute-force").solve(p)
>>> sol.status.value, len(sol.kept), abs(compbench.evaluate(p, sol) - sol.objective) < 1e-9
('optimal', 3, True)
"""

from .evaluate import InvalidSolution, evaluate, objective, sibling_pairs, tree_violation
from .generate import KINDS, generate, generate_set
from .inference import (Marginals, log_partition, log_partition_many, marginals, marginals_many,
                        tree_log_partition_many, tree_marginals, tree_marginals_many)
from .io import InstanceError, read_instance, read_instances, write_instance, write_instances
from .problem import Length, Problem, ProblemError, Solution, Status, sibling_triples
from .registry import Capabilities, Solver, SolverError, get_solver, list_solvers, solve_many, solver_names

__all__ = [
    "Capabilities", "InstanceError", "InvalidSolution", "KINDS", "Length", "Marginals", "Problem", "ProblemError",
    "Solution", "Solver", "SolverError", "Status", "evaluate", "generate", "generate_set", "get_solver",
    "list_solvers", "log_partition", "log_partition_many", "marginals", "marginals_many", "objective", "tree_marginals",
    "tree_log_partition_many", "tree_marginals_many", "read_instance", "read_instances",
    "sibling_pairs", "sibling_triples", "solve_many", "solver_names", "tree_violation", "write_instance",
    "write_instances",
]
__version__ = "0.1.0"
