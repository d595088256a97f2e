"""pruned-dp (the counted chart restricted by a Lagrangian bound) against brute force and resource-dp."""

import math

import numpy as np
import pytest

import compbench
from compbench import Length, Problem, Status
from compbench.testing import assert_conforms, check_solver
from compbench_solvers.compressive import Chart
from compbench_solvers.compressive.chart import RTRI
from compbench_solvers.compressive.pruned import PrunedDP


PRUNING = PrunedDP(full_below=0.0)  # the search, the bound and the windows at every size (not only large charts)


@pytest.mark.parametrize("modes", [("exact",), ("range",), ("free",)])
def test_pruned_dp_matches_brute_force(modes):
    # ties, -inf scores, both root modes, second order half the time, n = 0 and 1 (the conformance kit)
    check_solver(PRUNING, max_n=9, max_examples=300, length_modes=modes)
    check_solver("pruned-dp", max_n=9, max_examples=50, length_modes=modes)


@pytest.mark.parametrize("max_charts", [1, 2, 3])
def test_any_multiplier_gives_a_valid_bound(max_charts):
    # a search cut short (poor multipliers, often no bracket): a looser bound, never a wrong answer
    check_solver(PrunedDP(max_charts=max_charts, full_below=0.0), max_n=8, max_examples=120, length_modes=("exact", "range"))


@pytest.mark.parametrize("kind", ["distance", "gaussian", "integer-ties", "forbidden"])
@pytest.mark.parametrize("n", [30, 55, 80])
def test_pruned_dp_matches_resource_dp_mid_size(kind, n):
    resource, pruned = compbench.get_solver("resource-dp"), PRUNING
    for index, (ratio, single_root, second_order) in enumerate(
            [(0.45, False, False), (0.3, True, False), (0.7, False, True)]):
        m = round(ratio * n)
        for length in (Length.exact(m), Length(m - 3, m + 2)):
            problem = compbench.generate(kind, n, seed=7, index=index, length=length, single_root=single_root,
                                         second_order=second_order and n <= 55)
            expected, got = resource.solve(problem), pruned.solve(problem)
            assert got.status == expected.status, (problem.id, length)
            if expected.status == Status.OPTIMAL:
                assert math.isclose(got.objective, expected.objective, rel_tol=1e-9, abs_tol=1e-9), problem.id
                assert math.isclose(compbench.objective(problem, got.heads), got.objective, rel_tol=1e-9,
                                    abs_tol=1e-9)
                assert length.min <= len(got.kept) <= length.max
                assert 0.0 <= got.stats["pruned_share"] <= 1.0


def test_pruning_removes_most_count_entries():
    problem = compbench.generate("distance", 60, seed=3, length=27)
    stats = PRUNING.solve(problem).stats
    assert stats["certificate"] or (stats["pruned_share"] > 0.9 and stats["count_entries"] > 0)


@pytest.mark.parametrize("floor", [1e9, -math.inf])
def test_a_floor_above_the_optimum_or_no_floor_stays_exact(floor):
    # a floor above every solution: the first fill finds nothing (no primal), the fallback fills without pruning;
    # -inf: no pruning beyond items with no derivation or no completion
    for seed in range(6):
        problem = compbench.generate("gaussian", 25, seed=seed, length=11, second_order=seed % 2 == 1)
        expected = compbench.get_solver("resource-dp").solve(problem)
        got = compbench.get_solver("pruned-dp").solve(problem, floor=floor)
        assert math.isclose(got.objective, expected.objective, rel_tol=1e-9)
        if not got.stats["certificate"]:
            assert got.stats["floor"] == -math.inf
            assert got.stats["counted_fills"] == (2 if floor > 0 else 1)


def test_a_floor_between_a_solution_and_the_optimum_is_refilled_at_the_solution():
    for seed in range(10):
        problem = compbench.generate("distance", 25, seed=seed, length=11)
        expected = compbench.get_solver("resource-dp").solve(problem)
        got = compbench.get_solver("pruned-dp").solve(problem, floor=expected.objective + 1e-3)
        assert math.isclose(got.objective, expected.objective, rel_tol=1e-9)
        if not got.stats["certificate"]:
            assert got.stats["counted_fills"] >= 2


def test_a_multiplier_at_a_breakpoint():
    # all scores 0: every compression ties, the dual is flat at lambda = 0 and jumps from 0 to n kept words: the
    # relaxed optimum at lambda = 0 keeps none (ties towards fewer), the target sits inside a breakpoint
    n = 12
    for m in (1, 5, 11):
        for single_root in (False, True):
            problem = Problem(np.zeros(n), np.zeros((n + 1, n + 1)), np.zeros((n + 2, n + 2)),
                              length=m, single_root=single_root)
            got = PRUNING.solve(problem)
            assert got.status == Status.OPTIMAL and got.objective == 0.0 and len(got.kept) == m
    # integer scores with many tied lengths
    for seed in range(15):
        problem = compbench.generate("integer-ties", 10, seed=seed, length=4)
        assert_conforms(PRUNING, problem)


def test_infeasible_lengths_come_out_infeasible():
    n = 6
    arc = np.full((n + 1, n + 1), -np.inf)
    arc[0, 1:] = 0.0  # single_root and only the root's arcs: at most one word
    for length in (Length.exact(3), Length(2, 4)):
        problem = Problem(np.zeros(n), arc, np.zeros((n + 2, n + 2)), length=length, single_root=True)
        assert PRUNING.solve(problem).status == Status.INFEASIBLE
    # no compression at all: every bigram into </s> forbidden
    bigram = np.zeros((n + 2, n + 2))
    bigram[:, n + 1] = -np.inf
    problem = Problem(np.zeros(n), np.zeros((n + 1, n + 1)), bigram, length=2)
    assert PRUNING.solve(problem).status == Status.INFEASIBLE


def test_max_outside_bounds_every_item_and_is_tight_on_the_best_derivation():
    for seed in range(5):
        problem = compbench.generate("forbidden", 9, seed=seed, second_order=seed % 2 == 0)
        chart = Chart.fill(problem, kept_bonus=0.3 * seed - 0.5, tie=-1)
        through = chart._cells.V[..., 0] + chart.best_outside()[..., 0]
        finite = np.isfinite(through)
        assert (through[finite] <= chart.goal[0] + 1e-9).all()
        assert math.isclose(through[RTRI, 0, problem.n], chart.goal[0])
        assert math.isclose(through[finite].max(), chart.goal[0])


def test_small_count_vectors_fill_the_whole_chart():
    problem = compbench.generate("gaussian", 30, seed=1, length=4)
    solution = compbench.get_solver("pruned-dp").solve(problem)
    assert solution.stats["counted_cost"] < 120 and solution.stats["pruned_share"] == 0.0
    assert math.isclose(solution.objective, compbench.get_solver("resource-dp").solve(problem).objective)


def test_bisection_exact_falls_back_to_pruned_dp():
    for seed in range(30):
        problem = compbench.generate("integer-ties", n=12, seed=seed, length=5)
        solution = compbench.get_solver("bisection-exact").solve(problem)
        assert solution.status == Status.OPTIMAL
        if solution.stats["fallback"]:
            assert "pruned_share" in solution.stats
