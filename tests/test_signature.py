"""signature-dp and ql-subgradient (Qian & Liu 2014) against brute force, through the conformance kit."""

import numpy as np
import pytest

import compbench
from compbench import Length, Status
from compbench.testing import check_solver
from compbench_solvers.signature import QLSubgradient, SignatureDP, chart_bytes


@pytest.mark.parametrize("modes", [("exact",), ("range",), ("free",)])
def test_signature_dp_matches_brute_force(modes):
    # every mode the kit draws: ties, -inf, both root modes, infeasible instances, all_lengths half the time
    check_solver("signature-dp", max_n=8, max_examples=600, length_modes=modes)


def test_ql_subgradient_never_claims_without_certificate():
    check_solver("ql-subgradient", max_n=8, max_examples=600, length_modes=("exact", "free"))


def test_ql_subgradient_few_iterations_stays_honest():
    # one iteration rarely certifies: the answer must then be a bound, never a false "optimal"
    check_solver(QLSubgradient(max_iterations=1), max_n=7, max_examples=100, length_modes=("exact",))


def test_signature_dp_refuses_a_chart_above_the_memory_limit():
    problem = compbench.generate("gaussian", n=10, seed=0, length=4)
    needed = chart_bytes(10, count=True)
    refused = SignatureDP(memory_limit=needed - 1).solve(problem)
    assert refused.status == Status.UNSUPPORTED and "memory limit" in refused.message
    assert SignatureDP(memory_limit=needed).solve(problem).status == Status.OPTIMAL
    assert SignatureDP().solve(problem, memory_limit=needed - 1).status == Status.UNSUPPORTED


def test_ql_subgradient_reports_iterations_and_convergence():
    problem = compbench.generate("gaussian", n=9, seed=3, length=4)
    solution = compbench.get_solver("ql-subgradient").solve(problem, max_iterations=30)
    assert 1 <= solution.stats["iterations"] <= 30
    assert solution.stats["converged"] == (solution.status == Status.OPTIMAL)
    exact = compbench.get_solver("signature-dp").solve(problem)
    assert solution.bound >= exact.objective - 1e-9
    free = compbench.get_solver("ql-subgradient").solve(problem.replace(length=None))
    assert free.status == Status.OPTIMAL and free.stats["iterations"] == 1


def test_all_lengths_curve_beyond_brute_force_size():
    # n = 14: every by_length entry is a valid solution keeping exactly m words, and the top is their best
    problem = compbench.generate("gaussian", n=14, seed=5, length=Length(4, 9), single_root=True)
    solution = compbench.get_solver("signature-dp").solve(problem, all_lengths=True)
    values = []
    for m, at_m in enumerate(solution.by_length):
        assert at_m.status == Status.OPTIMAL and len(at_m.kept) == m
        values.append(compbench.evaluate(problem.replace(length=Length.exact(m)), at_m))
    assert solution.objective == pytest.approx(max(values[4:10]))
    assert np.isclose(compbench.evaluate(problem, solution), solution.objective)
