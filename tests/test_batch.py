"""Batch decoding (compbench.solve_many): the same answers as one solve per problem, for every solver."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compbench
from compbench import Length, Problem, Solution, Status
from compbench.testing import problems


def same(a: Solution, b: Solution) -> bool:
    heads_equal = (a.heads is None and b.heads is None) or (
        a.heads is not None and b.heads is not None and np.array_equal(a.heads, b.heads))
    return a.status == b.status and a.objective == b.objective and heads_equal


def fixed_set() -> list[Problem]:
    """Every length mode, both root modes, ties, forbidden scores, n = 0 and 1, first and second order."""
    out = []
    for seed in range(24):
        n = seed % 11
        base = compbench.generate("integer-ties" if seed % 2 else "gaussian", n, seed=seed, second_order=seed % 3 == 0)
        for length in (None, Length.exact(n // 2), Length(min(1, n), max(min(1, n), n - 1))):
            for single_root in (False, True):
                out.append(base.replace(length=length, single_root=single_root))
    forbidden = compbench.generate("gaussian", 5, seed=1)
    out.append(forbidden.replace(token_scores=np.full(5, -np.inf), length=Length.exact(2)))  # infeasible
    return out


@pytest.mark.parametrize("name", ["hook-dp", "resource-dp", "bisection", "bisection-exact", "brute-force"])
def test_solve_many_matches_solve(name: str) -> None:
    solver = compbench.get_solver(name)
    batch = [p for p in fixed_set() if name != "brute-force" or p.n <= 6]
    one_by_one = [solver.solve(p) for p in batch]
    for jobs in (1, 2):
        many = compbench.solve_many(batch, name, jobs=jobs)
        assert len(many) == len(batch)
        for p, a, b in zip(batch, one_by_one, many):
            assert same(a, b), (name, jobs, p.id, p.n, p.length, p.single_root, a, b)
            assert b.status == Status.UNSUPPORTED or b.seconds["total"] >= 0.0


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(problems(max_n=9, second_order=None), min_size=0, max_size=6), st.sampled_from([1, 2]))
def test_chart_batches_match_solve(batch: list[Problem], jobs: int) -> None:
    for name in ("hook-dp", "resource-dp"):
        solver = compbench.get_solver(name)
        for p, b in zip(batch, solver.solve_many(batch, jobs=jobs), strict=True):
            assert same(solver.solve(p), b)


def test_solve_many_edge_cases() -> None:
    assert compbench.solve_many([], "hook-dp") == []
    p = compbench.generate("gaussian", 5, seed=0)
    bad = compbench.get_solver("hook-dp").solve_many([p], nonsense=1)[0]  # unknown options: an error answer each
    assert bad.status == Status.ERROR and "nonsense" in bad.message
    refused = compbench.get_solver("resource-dp", memory_limit=10).solve_many([p.replace(length=2)])[0]
    assert refused.status == Status.UNSUPPORTED and "memory limit" in refused.message
