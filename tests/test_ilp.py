"""The joint ILP on five backends against brute force; the projectivity constraint; honest time limits."""

import itertools

import numpy as np
import pytest

import compbench
from compbench import Length, Status, evaluate
from compbench.evaluate import tree_violation
from compbench.testing import assert_conforms, check_solver
from solvers.ilp.model import build_model, model_size

BACKENDS = {  # name: (max_n, hypothesis examples)
    "ilp-highs": (8, 40),
    "ilp-pulp-highs": (7, 25),
    "ilp-pulp-cbc": (7, 25),
    "ilp-ortools-scip": (7, 25),
    "ilp-ortools-cpsat": (7, 25),
}


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_backend_matches_brute_force(name):
    max_n, examples = BACKENDS[name]
    check_solver(name, max_n=max_n, max_examples=examples)


@pytest.mark.parametrize("options", [{"flow": "multi"}, {"bigram_cuts": True}])
def test_formulation_options_match_brute_force(options):
    check_solver("ilp-highs", max_n=7, max_examples=20, **options)


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_infeasible_and_empty(name):
    solver = compbench.get_solver(name)
    p = compbench.generate("forbidden", n=5, seed=1, length=2)
    arc = np.full((6, 6), -np.inf)  # no arc at all: only the empty compression is possible
    infeasible = compbench.Problem(p.token_scores, arc, p.bigram_scores, length=Length.exact(2))
    assert solver.solve(infeasible).status == Status.INFEASIBLE
    empty = assert_conforms(solver, infeasible.replace(length=None))
    assert empty.status == Status.OPTIMAL and len(empty.kept) == 0


def _column_vector(model, n, heads):
    """Columns for an all-kept head assignment that is a tree: z = 1, y from heads, consecutive bigrams, flow =
    subtree sizes (single flow)."""
    x = np.zeros(model.num_cols)
    x[model.z_index[1:]] = 1
    for k in range(1, n + 1):
        x[model.y_index[heads[k], k]] = 1
    for a in range(n + 1):
        x[model.b_index[a, a + 1]] = 1
    flow_start = int(model.integrality.sum())  # single flow: one column per arc, in the order of the y columns
    for k in range(1, n + 1):  # each token adds one unit to every arc on its path from the root
        j = k
        while j != 0:
            x[flow_start + model.y_index[heads[j], j] - n] += 1
            j = heads[j]
    return x


@pytest.mark.parametrize("n", [3, 4, 5])
def test_model_accepts_exactly_the_projective_trees(n):
    p = compbench.generate("gaussian", n=n, seed=0)
    model = build_model(p)
    projective = 0
    for assignment in itertools.product(range(n + 1), repeat=n):
        heads = np.array((-1, *assignment))
        if any(heads[k] == k for k in range(1, n + 1)):
            continue
        violation = tree_violation(heads)
        if violation is not None and "cycl" in violation.lower():
            continue
        x = _column_vector(model, n, heads)
        ax = np.add.reduceat(model.row_values * x[model.row_cols], model.row_starts[:-1])
        feasible = bool(np.all(ax >= model.row_lower - 1e-9) and np.all(ax <= model.row_upper + 1e-9))
        assert feasible == (violation is None), (heads, violation)
        projective += feasible
    assert projective > 0


@pytest.mark.parametrize("flow", ["single", "multi"])
@pytest.mark.parametrize("second_order", [False, True])
def test_model_size_formula(flow, second_order):
    for n in (1, 2, 4, 7):
        p = compbench.generate("gaussian", n=n, seed=0, length=2 if n > 1 else 1, single_root=True,
                               second_order=second_order)
        stats = build_model(p, flow=flow).stats()
        expected = model_size(n, flow=flow, single_root=True, second_order=second_order)
        assert {k: stats[k] for k in expected} == expected


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_second_order_backend_matches_brute_force(name):
    # the kit draws sibling scores half the time; here every problem has them
    from compbench.testing import problems
    from hypothesis import HealthCheck, given, settings

    solver = compbench.get_solver(name)

    @settings(max_examples=BACKENDS[name][1], deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(problem=problems(max_n=6, second_order=True))
    def run(problem):
        assert_conforms(solver, problem)

    run()


@pytest.mark.parametrize("name", ["ilp-highs", "ilp-pulp-cbc", "ilp-ortools-cpsat"])
def test_time_limit_never_yields_invalid_solution(name):
    p = compbench.generate("distance", n=22, seed=4, length=10)
    solution = compbench.get_solver(name).solve(p, time_limit=0.05)
    assert solution.status in (Status.OPTIMAL, Status.TIMEOUT), solution.message
    if solution.heads is not None:
        assert evaluate(p, solution) == pytest.approx(solution.objective)
    if solution.status == Status.TIMEOUT and solution.bound is not None and solution.objective is not None:
        assert solution.bound >= solution.objective - 1e-6
