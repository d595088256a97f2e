"""Batch decoding (compbench.solve_many): the same answers as one solve per problem, for every solver."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compbench
from compbench import Length, Problem, Solution, Status
from compbench import solver as solver_module
from compbench.testing import problems
from compbench_solvers.compressive.marginals import log_space_marginals, scaled_marginals


def same(a: Solution, b: Solution) -> bool:
    heads_equal = (a.heads is None and b.heads is None) or (
        a.heads is not None and b.heads is not None and np.array_equal(a.heads, b.heads))
    return a.status == b.status and a.objective == b.objective and heads_equal


def batched(solution: Solution, size: int) -> bool:
    """Answered by the solver's compiled batch path (a batch of at most ``size``: a list is laid out as batches of
    one root mode, order and similar lengths), not one solve at a time after it raised."""
    return 1 <= solution.stats.get("batch", 0) <= size and not any(key.endswith("batch_fallback")
                                                                   for key in solution.stats)


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


@pytest.mark.parametrize("name", ["hook-dp", "resource-dp", "pruned-dp", "bisection", "bisection-exact",
                                  "brute-force"])
def test_solve_many_matches_solve(name: str) -> None:
    solver = compbench.get_solver(name)
    batch = [p for p in fixed_set() if name != "brute-force" or p.n <= 6]
    one_by_one = [solver.solve(p) for p in batch]
    supported = sum(solver.supports.reason_unsupported(p) is None for p in batch)
    for jobs in (1, 2):
        many = compbench.solve_many(batch, name, jobs=jobs)
        assert len(many) == len(batch)
        for p, a, b in zip(batch, one_by_one, many):
            assert same(a, b), (name, jobs, p.id, p.n, p.length, p.single_root, a, b)
            assert b.status == Status.UNSUPPORTED or b.seconds["total"] >= 0.0
            assert name == "brute-force" or a.status == Status.UNSUPPORTED or batched(b, supported), (name, b.stats)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(problems(max_n=9, second_order=None), min_size=0, max_size=6), st.sampled_from([1, 2]))
def test_chart_batches_match_solve(batch: list[Problem], jobs: int) -> None:
    for name in ("hook-dp", "resource-dp", "pruned-dp"):
        solver = compbench.get_solver(name)
        supported = [solver.supports.reason_unsupported(p) is None for p in batch]
        for p, ok, b in zip(batch, supported, solver.solve_many(batch, jobs=jobs), strict=True):
            assert same(solver.solve(p), b) and (len(batch) == 1 or not ok or batched(b, sum(supported)))


def test_pruned_batches_mix_compiled_and_pruned_solves() -> None:
    """pruned-dp's batch: short count vectors through the compiled batch, long ones pruned one at a time, a
    refusal in place, all in order and as solve answers them."""
    solver = compbench.get_solver("pruned-dp")
    long = [compbench.generate(kind, 60, seed=seed, length=27) for seed, kind in enumerate(("distance", "gaussian"))]
    short = fixed_set()[36:48]  # n = 6 and 7, every length mode
    batch = [long[0], *short, long[1]]
    many = solver.solve_many(batch, jobs=2)
    assert [s.stats["counted_fills"] >= 1 and s.stats["pruned_share"] > 0 for s in (many[0], many[-1])] == [True] * 2
    for p, b in zip(batch, many, strict=True):
        a = solver.solve(p)
        assert same(a, b) and set(a.stats) <= set(b.stats), (p.id, a.stats, b.stats)  # the batch adds its size
        assert batched(b, len(batch))
    refused = compbench.get_solver("pruned-dp", memory_limit=10).solve_many([long[0], short[0], short[2]])
    assert [s.status for s in refused] == [Status.UNSUPPORTED, Status.OPTIMAL, Status.UNSUPPORTED]


def test_bisection_batches_keep_the_time_limit() -> None:
    """bisection's batch runs every search in rounds: a time limit stops each search as its solve stops it."""
    solver = compbench.get_solver("bisection")
    batch = [compbench.generate("gaussian", 30, seed=seed, length=13) for seed in range(6)]
    for limit in (0.0, None):
        expected = [solver.solve(p, limit) for p in batch]
        assert (Status.TIMEOUT in [s.status for s in expected]) == (limit == 0.0)
        for p, a, b in zip(batch, expected, solver.solve_many(batch, time_limit=limit, jobs=2), strict=True):
            assert same(a, b) and a.stats["charts"] == b.stats["charts"] and batched(b, len(batch)), (p.id, a, b)


def test_every_solver_round_trips_through_pickle() -> None:
    """Every registered solver, and one with options in brackets, comes back from pickle (a worker process's copy)
    and answers as the original does."""
    p = compbench.generate("gaussian", 5, seed=2, length=2)
    for name in [*compbench.solver_names(), "ilp-highs[tighten=true]", "pruned-dp[memory_limit=1e9]"]:
        solver = compbench.get_solver(name)
        copy = pickle.loads(pickle.dumps(solver))
        assert type(copy) is type(solver) and copy.name == name and copy.options == solver.options
        assert same(copy.solve(p), solver.solve(p)), name


def _chunk_with_pid(solver, problems, time_limit, options):  # noqa: ANN001, ANN202  (stands in for _solve_chunk)
    solutions = _solve_chunk(solver, problems, time_limit, options)
    for solution in solutions:
        solution.stats["pid"] = os.getpid()
    return solutions


_solve_chunk = solver_module._solve_chunk


def test_solve_many_runs_in_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """jobs=2 solves an ILP solver's batch in two worker processes, with the answers of one solve each."""
    monkeypatch.setattr(solver_module, "_solve_chunk", _chunk_with_pid)
    solver = compbench.get_solver("ilp-highs[tighten=true]")
    batch = [compbench.generate("gaussian", 6, seed=seed, length=3) for seed in range(4)]
    many = solver.solve_many(batch, jobs=2)
    assert len({s.stats["pid"] for s in many}) == 2 and os.getpid() not in {s.stats["pid"] for s in many}
    for p, b in zip(batch, many, strict=True):
        assert same(solver.solve(p), b)


class _Unpicklable(compbench.Solver):
    name = "unpicklable"

    def __init__(self) -> None:
        self.hook = lambda: None

    def _solve(self, problem, **options):  # noqa: ANN001, ANN003, ANN202
        return Solution(Status.ERROR)


def test_an_unpicklable_solver_is_refused_in_processes() -> None:
    batch = [compbench.generate("gaussian", 3, seed=seed) for seed in range(2)]
    with pytest.raises(TypeError, match="unpicklable cannot be sent to worker processes.*jobs=1"):
        _Unpicklable().solve_many(batch, jobs=2)
    assert [s.status for s in _Unpicklable().solve_many(batch, jobs=1)] == [Status.ERROR] * 2


def test_solve_many_edge_cases() -> None:
    assert compbench.solve_many([], "hook-dp") == []
    p = compbench.generate("gaussian", 5, seed=0)
    for count in (1, 2):  # one problem takes solve's path, more the batch's
        for bad in compbench.get_solver("hook-dp").solve_many([p] * count, nonsense=1):  # an error answer each
            assert bad.status == Status.ERROR and "nonsense" in bad.message
            assert count == 1 or "nonsense" in bad.stats["batch_fallback"]  # solved one at a time, and it says so
        for refused in compbench.get_solver("resource-dp", memory_limit=10).solve_many([p.replace(length=2)] * count):
            assert refused.status == Status.UNSUPPORTED and "memory limit" in refused.message


def test_one_compiled_call_matches_the_chart() -> None:
    """hook-dp and resource-dp answer through decode_one: the same heads as Chart.fill and its backtrace."""
    from compbench_solvers.compressive.chart import Chart
    from compbench_solvers.compressive.base import count_plan

    for p in fixed_set():
        lo, hi = p.length_bounds()
        counting, cap = count_plan(p.n, lo, hi)
        chart = Chart.fill(p, counting=counting, cap=cap, tie=-1)
        index = (lambda m: m if counting == "kept" else p.n - m) if counting != "none" else (lambda m: 0)
        best = max(range(lo, hi + 1), key=lambda m: (chart.goal[index(m)], -m)) if counting != "none" else 0
        expected = chart.heads(index(best))
        got = compbench.get_solver("resource-dp").solve(p)
        if chart.goal[index(best)] == -np.inf:
            assert got.status == Status.INFEASIBLE
        else:
            assert np.array_equal(got.heads, expected) and got.objective == chart.goal[index(best)]
        if p.length is None:
            assert np.array_equal(compbench.get_solver("hook-dp").solve(p).heads, Chart.fill(p, tie=-1).heads(0))


def test_one_compiled_call_with_a_kept_bonus_matches_the_chart() -> None:
    """bisection's charts through decode_one: at any multiplier and either tie-break, the value (the bonus
    included), the kept count and the heads of Chart.fill and its backtrace."""
    from compbench_solvers.compressive.batch import decode_one
    from compbench_solvers.compressive.chart import Chart

    for p in fixed_set():
        for bonus in (-1.7, -0.25, 0.0, 0.5, 3.0):
            for tie in (-1, 1):
                chart = Chart.fill(p, kept_bonus=bonus, tie=tie)
                heads, value, kept = decode_one(p, tie=tie, kept_bonus=bonus)
                assert value == chart.goal[0] and (value == -np.inf or kept == chart.kept[0]), (p.id, bonus, tie)
                assert np.array_equal(heads, chart.heads(0)), (p.id, bonus, tie)


def test_bisection_batches_report_what_solve_reports() -> None:
    """bisection's rounds end each search where its solve ends it: the same bound, message and search stats."""
    solver = compbench.get_solver("bisection")
    batch = fixed_set()
    keys = ("iterations", "charts", "certificate", "final_lambda")
    for p, a, b in zip(batch, [solver.solve(p) for p in batch], solver.solve_many(batch, jobs=2), strict=True):
        assert same(a, b) and a.bound == b.bound and a.message == b.message and batched(b, len(batch)), p.id
        assert [a.stats.get(k) for k in keys] == [b.stats.get(k) for k in keys], p.id


def inference_set() -> list[Problem]:
    out = fixed_set()
    cold = compbench.generate("gaussian", 8, seed=3)  # scores far apart: the scaled chart's range is left
    out.append(cold.replace(arc_scores=cold.arc_scores * 400.0))
    return out


def test_batch_inference_matches_one_at_a_time() -> None:
    """The batch kernel against the one-problem engines (the scaled chart, or log space out of its range), and any
    batch against a batch of one bit for bit (marginals(p) is a batch of one)."""
    batch = inference_set()
    for jobs in (1, 2):
        log_z = compbench.log_partition_many(batch, jobs=jobs)
        many = compbench.marginals_many(batch, jobs=jobs)
        for p, z, m in zip(batch, log_z, many, strict=True):
            one = scaled_marginals(p) or log_space_marginals(p)
            assert z == pytest.approx(one.log_partition, rel=1e-12, abs=1e-12)
            assert z == compbench.log_partition(p) and m.log_partition == z
            assert np.array_equal(m.arc, compbench.marginals(p).arc)
            for field in ("token", "arc", "bigram", "sibling"):
                a, b = getattr(m, field), getattr(one, field)
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(a, b, atol=1e-12)


def test_tree_batches_match_tree_marginals() -> None:
    rng = np.random.default_rng(0)
    arcs = [2.0 * rng.standard_normal((n + 1, n + 1)) for n in (0, 1, 3, 5, 5, 9)]
    arcs[3][2, 3] = -np.inf
    arcs[4][:, 4] = -np.inf  # token 4 has no head: no tree
    for single_root in (False, True):
        log_z = compbench.tree_log_partition_many(arcs, single_root=single_root)
        for arc, z, m in zip(arcs, log_z, compbench.tree_marginals_many(arcs, single_root=single_root)):
            one = compbench.tree_marginals(arc, single_root=single_root)
            assert z == pytest.approx(one.log_partition, rel=1e-12) and m.log_partition == z
            for field in ("token", "arc", "bigram"):
                np.testing.assert_allclose(getattr(m, field), getattr(one, field), atol=1e-12)
    with pytest.raises(compbench.ProblemError, match="NaN"):
        compbench.tree_log_partition_many([np.full((3, 3), np.nan)])


def test_trusted_problem_is_the_checked_one() -> None:
    for p in fixed_set():
        q = Problem.trusted(p.token_scores, p.arc_scores, p.bigram_scores, length=p.length,
                            single_root=p.single_root, sibling_scores=p.sibling_scores)
        raw = Problem.trusted(np.asarray(p.token_scores), np.where(np.isfinite(p.arc_scores), p.arc_scores, 1.0),
                              np.where(np.isfinite(p.bigram_scores), p.bigram_scores, 1.0), length=p.length)
        for field in ("token_scores", "arc_scores", "bigram_scores", "sibling_scores", "length", "single_root"):
            a, b = getattr(p, field), getattr(q, field)
            assert (a == b) if not isinstance(a, np.ndarray) else np.array_equal(a, b)
        assert not q.arc_scores.flags.writeable
        assert np.isneginf(raw.arc_scores[:, 0]).all() and np.isneginf(np.diag(raw.arc_scores)).all()
        assert np.isneginf(raw.bigram_scores[np.tril_indices(p.n + 2)]).all()


def _parts_in_a_child() -> None:
    from compbench_solvers.compressive.batch import run_in_parts

    seen = np.zeros(40)
    run_in_parts(lambda part: seen.__setitem__(part, seen[part] + 1), np.arange(40), np.ones(40), 2)
    raise SystemExit(0 if (seen == 1).all() else 3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_run_in_parts_in_a_forked_child_and_on_a_failure() -> None:
    """The kept thread pools: a forked child (a process pool's worker) gets pools of its own instead of the
    parent's, which have no threads there; a failing part is raised, once the others stopped."""
    import multiprocessing

    from compbench_solvers.compressive.batch import run_in_parts

    run_in_parts(lambda part: None, np.arange(40), np.ones(40), 2)  # the parent's pool of 2 exists
    child = multiprocessing.get_context("fork").Process(target=_parts_in_a_child)
    child.start()
    child.join(30)
    if child.exitcode is None:
        child.kill()
    assert child.exitcode == 0

    def fails(part: np.ndarray) -> None:
        if 0 in part:
            raise ValueError("part 0 fails")

    with pytest.raises(ValueError, match="part 0 fails"):
        run_in_parts(fails, np.arange(40), np.ones(40), 2)


def test_the_kernels_loading_is_in_the_first_answers_total(monkeypatch) -> None:
    """solve_many put the loading in seconds['setup'] but not in 'total' (setup 0.04 s, total 0.0008 s)."""
    from compbench_solvers.compressive import base

    monkeypatch.setattr(base, "load_kernels", lambda *args, **kwargs: 0.5)
    problems = [compbench.generate("gaussian", 8, seed=s, length=3) for s in range(2)]
    first = compbench.get_solver("resource-dp").solve_many(problems, jobs=1)[0]
    assert first.seconds["setup"] >= 0.5 and first.seconds["total"] >= first.seconds["setup"]
