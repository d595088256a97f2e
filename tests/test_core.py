"""The foundation: brute force against an independent enumeration, validity rules, and the conformance kit."""

from __future__ import annotations

import itertools
import re
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import compbench
import compbench.io
from compbench import InvalidSolution, Length, Problem, Solution, Status, evaluate, tree_violation
from compbench.testing import assert_conforms, problems

FAST = settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)


# ---- an independent enumeration: every head assignment, checked with the crossing-arcs definition ----

def _crossing_free_tree(heads: dict[int, int], single_root: bool) -> bool:
    """A tree rooted at 0 (every node reaches 0) with no two crossing arcs (root leftmost)."""
    for k in heads:
        seen, node = set(), k
        while node != 0:
            if node in seen:
                return False
            seen.add(node)
            node = heads[node]
    arcs = [(min(h, k), max(h, k)) for k, h in heads.items()]
    for (a, b), (c, d) in itertools.combinations(arcs, 2):
        if a < c < b < d or c < a < d < b:
            return False
    return not single_root or not heads or sum(1 for h in heads.values() if h == 0) == 1


def _sibling_total(p: Problem, heads: dict[int, int]) -> float:
    """Sum of S(h, s, k) over each head's modifiers on each side, nearest first (s = h for the nearest)."""
    if p.sibling_scores is None:
        return 0.0
    total = 0.0
    for h in {0, *heads}:
        right = sorted(k for k, g in heads.items() if g == h and k > h)
        left = sorted((k for k, g in heads.items() if g == h and k < h), reverse=True)
        for side in (right, left):
            for i, k in enumerate(side):
                total += p.sibling_scores[h, side[i - 1] if i else h, k]
    return total


def _independent_optimum(p: Problem) -> tuple[float, list[float]]:
    """(optimum under p's length condition, optimum for every m) by enumerating every head assignment."""
    n = p.n
    best = [-math.inf] * (n + 1)
    for size in range(n + 1):
        for kept in itertools.combinations(range(1, n + 1), size):
            sequence = (0, *kept, n + 1)
            chain = sum(p.bigram_scores[a, b] for a, b in zip(sequence, sequence[1:]))
            chain += sum(p.token_scores[k - 1] for k in kept)
            if chain == -math.inf:
                continue
            for choice in itertools.product(*[[0, *[h for h in kept if h != k]] for k in kept]):
                heads = dict(zip(kept, choice))
                if _crossing_free_tree(heads, p.single_root):
                    tree = sum(p.arc_scores[h, k] for k, h in heads.items()) + _sibling_total(p, heads)
                    best[size] = max(best[size], chain + tree)
    lo, hi = p.length_bounds()
    return max(best[lo:hi + 1]), best


def _check_against_enumeration(p: Problem) -> None:
    expected, per_length = _independent_optimum(p)
    solution = compbench.get_solver("brute-force").solve(p, all_lengths=True)
    if expected == -math.inf:
        assert solution.status == Status.INFEASIBLE and not solution.has_solution
    else:
        assert solution.status == Status.OPTIMAL
        assert math.isclose(solution.objective, expected, rel_tol=1e-9, abs_tol=1e-9)
        assert math.isclose(evaluate(p, solution), expected, rel_tol=1e-9, abs_tol=1e-9)
    for m, at_m in enumerate(solution.by_length):
        if per_length[m] == -math.inf:
            assert at_m.status == Status.INFEASIBLE
        else:
            assert math.isclose(at_m.objective, per_length[m], rel_tol=1e-9, abs_tol=1e-9)
            assert len(at_m.kept) == m


@FAST
@given(problems(max_n=5, second_order=None))
def test_brute_force_matches_independent_enumeration(p: Problem) -> None:
    _check_against_enumeration(p)


@settings(FAST, max_examples=25)
@given(problems(min_n=6, max_n=6, second_order=None))
def test_brute_force_matches_independent_enumeration_n6(p: Problem) -> None:
    _check_against_enumeration(p)


def test_brute_force_passes_its_own_conformance_kit() -> None:
    compbench.testing.check_solver("brute-force", max_n=8, max_examples=60)


def test_the_conformance_kit_fails_a_solver_that_writes_into_its_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """Right answers on the scores as given, then the scores changed (a backend writing through a pointer): the
    kit said 'reported objective differs from the recomputed', or nothing at all."""
    from compbench import Capabilities, Solver

    class Scribbler(Solver):
        name, description, exact = "scribbler", "brute force, then arc scores raised", True
        supports = Capabilities(all_lengths=True, second_order=True)

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            solution = compbench.get_solver("brute-force").solve(problem, all_lengths=all_lengths)
            problem.arc_scores.setflags(write=True)
            problem.arc_scores[np.isfinite(problem.arc_scores)] += 1.0
            return solution

    with pytest.raises(AssertionError, match="wrote into its input \\(arc_scores changed while it solved\\)"):
        compbench.testing.check_solver(Scribbler(), max_n=4, max_examples=20, seed=0)

    class Unbinder(Scribbler):
        name, description = "unbinder", "drops the length condition, then solves the free problem"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            object.__setattr__(problem, "length", None)  # the answer then looks valid against the problem as left
            return compbench.get_solver("brute-force").solve(problem)

    from compbench.harness.worker import solve_task  # the worker judges it against the problem as given
    from compbench.harness.sweep import make_tasks

    (task,) = make_tasks([compbench.generate("gaussian", 7, seed=2, length=2)], ["brute-force"], 30)
    monkeypatch.setattr(compbench, "get_solver", lambda name, **options: Unbinder())
    result = solve_task(task)
    assert result["validity"] == "invalid: the solver wrote into its input (length changed while it solved)"


def test_ignored_entries_are_read_as_minus_inf_by_problem_and_batch_alike() -> None:
    """Problem refused NaN, +inf or 1e300 on the diagonal, in column 0 or below the bigram diagonal, which
    ProblemBatch.from_arrays (and the docs) read as -inf; a used entry is refused by both."""
    arc = np.zeros((4, 4))
    arc[1, 1], arc[2, 0], arc[0, 0] = np.nan, 1e300, np.inf
    bigram = np.zeros((5, 5))
    bigram[3, 1] = np.nan
    p = Problem(np.zeros(3), arc, bigram)
    assert p.arc_scores[1, 1] == p.arc_scores[2, 0] == p.bigram_scores[3, 1] == -np.inf
    batch = compbench.ProblemBatch.from_arrays(arc[None], bigram_scores=bigram[None])
    assert compbench.log_partition(p) == pytest.approx(compbench.log_partition_many(batch)[0], rel=1e-12)
    arc[1, 2] = np.nan
    for build in (lambda: Problem(np.zeros(3), arc, bigram), lambda: compbench.ProblemBatch.from_arrays(arc[None])):
        with pytest.raises(compbench.ProblemError, match="NaN at index"):
            build()


def test_a_pickled_or_copied_problem_keeps_its_scores_read_only() -> None:
    import copy
    import pickle

    p = compbench.generate("gaussian", n=5, seed=0, length=2, second_order=True)
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        for name in compbench.problem.SCORE_FIELDS:
            assert not getattr(q, name).flags.writeable and np.array_equal(getattr(q, name), getattr(p, name))
        assert (q.n, q.length, q.id) == (p.n, p.length, p.id)


def test_the_conformance_kit_fails_a_solver_that_never_answers() -> None:
    """An inexact solver answering 'feasible' without a solution every time passed all 60 draws (and one answering
    only the trivial draws, n = 0 and 1, passed the first version of this rule)."""
    from compbench import Capabilities, Solver

    class Shrugs(Solver):
        name, description, exact = "shrugs", "finds nothing but the trivial answers of n = 0 and 1", False
        supports = Capabilities(second_order=True)

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n < 2:
                return compbench.get_solver("brute-force").solve(problem)
            return Solution(Status.FEASIBLE)

    with pytest.raises(AssertionError, match="shrugs gave no solution on any of the"):
        compbench.testing.check_solver(Shrugs(), max_n=4, max_examples=20, seed=0)


@pytest.mark.parametrize("n", [0, 1])
@pytest.mark.parametrize("single_root", [False, True])
def test_tiny_problems(n: int, single_root: bool) -> None:
    p = compbench.generate("gaussian", n=n, seed=2, length=None, single_root=single_root)
    _check_against_enumeration(p)
    assert_conforms(compbench.get_solver("brute-force"), p, all_lengths=True)


def test_brute_force_refuses_large_n_and_times_out_with_a_valid_solution() -> None:
    big = compbench.generate("gaussian", n=13, seed=0, length=6)
    assert compbench.get_solver("brute-force").solve(big).status == Status.UNSUPPORTED
    p = compbench.generate("gaussian", n=12, seed=0, length=None)
    solution = compbench.get_solver("brute-force").solve(p, time_limit=0.05)
    assert solution.status == Status.TIMEOUT
    if solution.has_solution:
        evaluate(p, solution)


# ---- projectivity: the descendant definition in evaluate equals the crossing-arcs definition ----

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_projectivity_definitions_agree_on_every_head_assignment(n: int) -> None:
    for choice in itertools.product(range(-1, n + 1), repeat=n):
        heads = np.array([-1, *choice])
        kept = {k: int(heads[k]) for k in range(1, n + 1) if heads[k] >= 0}
        if any(h == k or (h != 0 and h not in kept) for k, h in kept.items()):
            continue
        for single_root in (False, True):
            assert (tree_violation(heads, single_root) is None) == _crossing_free_tree(kept, single_root), heads


# ---- evaluate rejects every kind of invalid solution ----

def _example() -> Problem:
    return compbench.generate("gaussian", n=5, seed=4, length=Length(0, 5))


@pytest.mark.parametrize("heads, rule", [
    ([-1, 2, 1, -1, -1, -1], "cycle"),
    ([-1, 0, 3, -1, -1, -1], "deleted token"),
    ([-1, 1, -1, -1, -1, -1], "own head"),
    ([-1, 0, 7, -1, -1, -1], "outside"),
])
def test_evaluate_rejects_broken_trees(heads: list[int], rule: str) -> None:
    with pytest.raises(InvalidSolution, match=rule):
        evaluate(_example(), np.array(heads))


def test_evaluate_rejects_non_projective_tree() -> None:
    # 0 -> 2, 2 -> 4, 4 -> 1, 1 -> 3 : arc (1, 3) crosses arc (2, 4).
    with pytest.raises(InvalidSolution, match="crosses"):
        evaluate(_example(), np.array([-1, 4, 0, 1, 2, -1]))


def test_evaluate_checks_root_length_forbidden_and_reported_objective() -> None:
    p = _example()
    flat = np.array([-1, 0, 0, -1, -1, -1])
    with pytest.raises(InvalidSolution, match="single_root"):
        evaluate(p.replace(single_root=True), flat)
    with pytest.raises(InvalidSolution, match="length"):
        evaluate(p.replace(length=Length.exact(3)), flat)
    arc = p.arc_scores.copy()
    arc[0, 2] = -np.inf
    with pytest.raises(InvalidSolution, match="forbidden"):
        evaluate(p.replace(arc_scores=arc), flat)
    value = evaluate(p, flat)
    with pytest.raises(InvalidSolution, match="reported objective"):
        evaluate(p, Solution(Status.OPTIMAL, flat, value + 1e-6))
    assert evaluate(p, Solution(Status.OPTIMAL, flat, value)) == value
    with pytest.raises(InvalidSolution, match="no solution"):
        evaluate(p, Solution(Status.INFEASIBLE))


def test_objective_by_hand() -> None:
    # The issue's example: keep "Production closed" with closed -> Production.
    p = _issue_example()
    heads = np.array([-1, 3, -1, 0])
    assert math.isclose(evaluate(p, heads), (0.5 + 0.25) + (1.5 + 2.0) + (0.1 + 0.4 + 0.6))


def _issue_example() -> Problem:
    return compbench.io.problem_from_dict({
        "format": "compbench.instance/1", "id": "ex1", "tokens": ["Production", "was", "closed"], "length": 2,
        "single_root": False,
        "scores": {"token": [0.5, -1.0, 0.25],
                   "arc": [[None, 1.0, 0.2, 2.0], [None, None, 0.1, 0.3], [None, 0.4, None, 0.9],
                           [None, 1.5, 0.2, None]],
                   "bigram": [[None, 0.1, 0.2, 0.3, 0.0], [None, None, 0.5, 0.4, 0.1], [None, None, None, 0.3, 0.2],
                              [None, None, None, None, 0.6], [None, None, None, None, None]]}})


def test_issue_example_optimum_by_hand() -> None:
    # Hand-checked: {1,2}: -0.5 + 0.8 + 1.2 = 1.5; {1,3}: 0.75 + 1.1 + 3.5 = 5.35; {2,3}: -0.75 + 1.1 + 2.2 = 2.55.
    solution = compbench.get_solver("brute-force").solve(_issue_example())
    assert list(solution.kept) == [1, 3] and list(solution.heads) == [-1, 3, -1, 0]
    assert math.isclose(solution.objective, 5.35)


@FAST
@given(problems(max_n=6))
def test_solution_status_and_bound_are_consistent(p: Problem) -> None:
    solution = compbench.get_solver("brute-force").solve(p)
    if solution.status == Status.OPTIMAL:
        assert solution.bound == solution.objective
    else:
        assert solution.status == Status.INFEASIBLE and solution.objective is None


def test_sibling_scores_by_hand() -> None:
    # heads: 1 <- 0, 3 <- 0, 2 <- 3, 4 <- 3: the root's right modifiers 1 then 3; 3 has 2 on its left, 4 on its right.
    sibling = np.zeros((5, 5, 5))
    sibling[0, 0, 1], sibling[0, 1, 3], sibling[3, 3, 2], sibling[3, 3, 4] = 1.0, 10.0, 100.0, 1000.0
    sibling[0, 0, 3] = sibling[0, 1, 2] = 5e4  # not used by this tree
    p = Problem(np.zeros(4), np.zeros((5, 5)), np.zeros((6, 6)), sibling_scores=sibling)
    heads = np.array([-1, 0, 3, 0, 3])
    assert evaluate(p, heads) == 1111.0
    assert compbench.get_solver("brute-force").solve(p).objective >= 5e4


def test_faulty_solvers_are_classified_not_crashed():
    from compbench import Capabilities, Solver
    from compbench.agreement import judge

    p = compbench.generate("gaussian", n=4, seed=0, length=2)

    class Faulty(Solver):
        supports = Capabilities()

        def __init__(self, answer):
            self.answer = answer

        def _solve(self, problem, **options):
            return self.answer()

    def raises():
        raise ZeroDivisionError("boom")

    def fractional_heads():
        return Solution(Status.FEASIBLE, np.array([-1, 0.6, -1, -1, -1]), 0.0)

    def not_a_solution():
        return {"status": "optimal"}

    assert Faulty(raises).solve(p).message.endswith("raised ZeroDivisionError: boom")
    answer = Faulty(fractional_heads).solve(p)
    assert answer.status == Status.ERROR and "heads must be a vector of integers" in answer.message
    for beyond in (np.array([-1, 1e30, -1, -1, -1]), np.array([-1, np.inf, -1, -1, -1]),
                   np.array([0, 2 ** 64 - 1, 0, 0, 0], np.uint64)):  # cast to int64, they had wrapped (to -1)
        answer = Faulty(lambda: Solution(Status.FEASIBLE, beyond, 0.0)).solve(p)
        assert answer.status == Status.ERROR and "heads must be a vector of integers" in answer.message
    assert Faulty(not_a_solution).solve(p).status == Status.ERROR
    assert judge(p, Faulty(lambda: Solution(Status.OPTIMAL)).solve(p)) == "invalid: status optimal without a solution"


# ---- the solution codec: one JSON convention for solve --json, the worker and the run files ----

@pytest.mark.parametrize("bound", [None, 7.5, math.inf, -math.inf])
def test_solution_record_round_trips_with_non_finite_numbers_as_strings(bound) -> None:
    from compbench.records import record_solution, solution_record
    import json

    solution = Solution(Status.TIMEOUT, heads=np.array([-1, 3, -1, 0, -1]), objective=2.5, bound=bound,
                        seconds={"solve": 0.5}, stats={"gap": math.nan, "nodes": np.int64(4)}, message="limit")
    record = json.loads(json.dumps(solution_record(solution), allow_nan=False))
    assert record["kept"] == [1, 3] and record["heads"] == [3, 0]
    assert record["bound"] == (None if bound is None else bound if math.isfinite(bound) else str(bound))
    assert record["stats"] == {"gap": "nan", "nodes": 4}
    back = record_solution(record, n=4)
    assert back.heads.tolist() == [-1, 3, -1, 0, -1] and back.status == Status.TIMEOUT
    assert back.objective == 2.5 and back.bound == bound and back.message == "limit"
    assert "stats" not in solution_record(solution, stats=False)


def test_record_solution_reads_older_run_files_and_refuses_tokens_out_of_range() -> None:
    from compbench.records import record_solution

    older = {"status": "optimal", "objective": 1.0, "heads": [-1, 0, 1]}  # all n + 1 heads, no kept
    assert record_solution(older, n=2).heads.tolist() == [-1, 0, 1]
    assert record_solution({"status": "nonsense"}, n=2).status == Status.ERROR
    with pytest.raises(ValueError, match="do not describe tokens of 1..2"):
        record_solution({"status": "optimal", "kept": [3], "heads": [0]}, n=2)


@pytest.mark.parametrize("name", compbench.solver_names())
def test_every_builtin_solver_refuses_a_bad_option_in_its_name(name: str) -> None:
    """An option a built-in solver does not take, or a value it does not take, is refused when the name is read
    (a KeyError naming it), never left for the solves to answer as errors."""
    with pytest.raises(KeyError, match=r"bogus_option"):
        compbench.get_solver(f"{name}[bogus_option=1]")
    taken = compbench.get_solver(name).accepted_options
    for option in ("threads", "settings") if taken is None else taken:  # None: an ILP solver's own check
        with pytest.raises(KeyError, match=rf"{option} must be"):
            compbench.get_solver(f"{name}[{option}=\"not a value\"]")


@pytest.mark.parametrize("heads, message", [
    ([-1, 0, 1], "heads must be n+1 = 6 integers, got shape (3,)"),
    (np.array([-1, 0, 1.5, -1, -1, -1]), "got shape (6,) of float64"),
    (None, "got shape () of object"),
    ([-1, 0, 9, -1, -1, -1], "token 2 has head 9 outside -1..5"),
    ([-1, 0, -2, -1, -1, -1], "token 2 has head -2 outside -1..5"),
])
def test_objective_refuses_heads_that_cannot_index_the_scores(heads: object, message: str) -> None:
    """objective checks no tree, but what it indexes with: a clear InvalidSolution, not an IndexError."""
    for function in (compbench.objective, evaluate):
        with pytest.raises(InvalidSolution, match=re.escape(message)):
            function(_example(), heads)


@pytest.mark.parametrize("value", ["false", 1, None])
def test_single_root_is_a_bool_never_a_value_read_as_one(value: object) -> None:
    p = _example()
    with pytest.raises(compbench.ProblemError, match="single_root: expected true or false"):
        p.replace(single_root=value)
    with pytest.raises(compbench.ProblemError, match="single_root: expected true or false"):
        compbench.ProblemBatch.from_arrays(p.arc_scores[None], single_root=value)
    assert p.replace(single_root=np.True_).single_root is True


class DiesAtFive(compbench.Solver):
    """Brute force, but its process ends at n = 5 (as a plug-in's C code crashing it)."""

    name, description, exact = "dies-at-five", "brute force; its process ends at n = 5", True

    def _solve(self, problem, *, time_limit, all_lengths, **options):
        if problem.n == 5:
            os._exit(3)
        return compbench.get_solver("brute-force").solve(problem)


def test_an_empty_batch_has_no_answers() -> None:
    """An empty ProblemBatch raised 'max() arg is an empty sequence' on the CPU (a list of none gave [])."""
    empty = compbench.ProblemBatch.from_arrays(np.zeros((0, 3, 3)))
    assert len(compbench.log_partition_many(empty)) == 0 and compbench.marginals_many(empty) == []


def test_solve_many_answers_error_where_a_worker_process_dies() -> None:
    """One worker's death broke the whole pool: BrokenProcessPool, every answer lost (evaluate with a crashing
    plug-in)."""
    problems = [compbench.generate("gaussian", n=n, seed=0, length=2) for n in (4, 5, 6, 4)]
    answers = DiesAtFive().solve_many(problems, jobs=2)
    assert [a.status for a in answers] == [Status.OPTIMAL, Status.ERROR, Status.OPTIMAL, Status.OPTIMAL]
    assert "the process solving it died" in answers[1].message
    assert [a.objective for a in answers[2:]] == [compbench.get_solver("brute-force").solve(p).objective
                                                  for p in problems[2:]]


@pytest.mark.parametrize("name", ["brute-force", "hook-dp", "resource-dp", "bisection", "signature-dp", "ilp-highs"])
def test_a_bad_argument_to_solve_is_refused_by_name_before_any_solver_runs(name: str) -> None:
    """A time limit of "5" raised a raw TypeError out of the chart solvers and an error answer from others; NaN or
    -1 ran with no limit or timed out at once; all_lengths="false" filled every length; jobs=0 ran one worker."""
    solver, p = compbench.get_solver(name), _example()
    for limit in ("5", math.nan, -1, True):
        with pytest.raises(ValueError, match="time_limit: expected None or seconds >= 0"):
            solver.solve(p, limit)
        with pytest.raises(ValueError, match="time_limit: expected None or seconds >= 0"):
            solver.solve_many([p, p], time_limit=limit)
    with pytest.raises(TypeError, match="all_lengths: expected true or false, got 'false'"):
        solver.solve(p, all_lengths="false")
    for jobs in (0, -2, 1.5, "2", True):
        with pytest.raises(ValueError, match="jobs: expected None or an integer >= 1"):
            solver.solve_many([p, p], jobs=jobs)
    with pytest.raises(TypeError, match="problem: expected a compbench.Problem, got NoneType"):
        solver.solve(None)
    with pytest.raises(TypeError, match=r"problems\[1\]: expected a compbench.Problem, got list"):
        solver.solve_many([p, [p]])
    assert solver.solve(p, 0.0).status in (Status.OPTIMAL, Status.TIMEOUT, Status.UNSUPPORTED)


@pytest.mark.parametrize("heads, why", [
    ([-1, 0.5, 1.7], "heads must be n+1 = 3 integers, got shape (3,) of float64"),  # was None: int() truncated
    ([-1, -5, 0], "token 1 has head -5 outside -1..2"),  # was None: read as deleted
    (5, "heads must be n+1 integers, got shape ()"),
    ([-1, 0, 3], "token 2 has head 3 outside -1..2"),
])
def test_tree_violation_names_heads_that_are_not_heads(heads: object, why: str) -> None:
    assert tree_violation(heads).startswith(why)
    with pytest.raises(TypeError, match="single_root: expected true or false"):
        tree_violation([-1, 0], "false")


@pytest.mark.parametrize("kwargs, why", [
    ({"n": -1}, "n: expected an integer >= 0"), ({"n": 3.0}, "n: expected an integer >= 0"),
    ({"n": 3, "seed": None}, "seed: expected an integer >= 0"), ({"n": 3, "seed": True}, "seed: expected"),
    ({"n": 3, "index": -1}, "index: expected an integer >= 0"),
    ({"n": 3, "second_order": "no"}, "second_order: expected true or false"),
])
def test_generate_refuses_its_arguments_by_name(kwargs: dict, why: str) -> None:
    with pytest.raises((ValueError, TypeError), match=why):
        compbench.generate("gaussian", **kwargs)
    for bad, why in (({"count": -1}, "count: expected an integer >= 0"),
                     ({"count": 2, "length_ratio": math.nan}, "length_ratio: expected None or a number in 0..1")):
        with pytest.raises(ValueError, match=why):
            compbench.generate_set("gaussian", 4, **bad)


@pytest.mark.parametrize("name", ["resource-dp", "pruned-dp", "signature-dp"])
def test_a_solver_built_with_a_bad_memory_limit_is_refused(name: str) -> None:
    """memory_limit=-5 was taken, and every solve then answered unsupported 'above the memory limit of -0 MiB'."""
    for value in (-5, True, "x", math.inf):
        with pytest.raises(ValueError, match="memory_limit: expected None or a positive number of bytes"):
            compbench.get_solver(name, memory_limit=value)
    assert compbench.get_solver(name, memory_limit=np.int64(10 ** 9)).memory_limit == 10 ** 9


def test_a_length_is_integers_from_0_with_min_at_most_max() -> None:
    for args, field in (((3, 1), "length"), (("a", 2), "length.min"), ((-1, -1), "length"), ((0, 2.5), "length.max"),
                        ((True, 2), "length.min")):
        with pytest.raises(compbench.ProblemError) as error:
            Length(*args)
        assert error.value.field == field, args
    assert Length(np.int64(1), 2) == Length(1, 2) and type(Length(np.int64(1), 2).min) is int


def test_evaluate_refuses_a_bad_tolerance_and_a_problem_that_is_not_one() -> None:
    p = _example()
    heads = compbench.get_solver("brute-force").solve(p).heads
    for rtol in (-1, math.nan, "0"):
        with pytest.raises(ValueError, match="rtol: expected a number in"):
            evaluate(p, heads, rtol=rtol)
    with pytest.raises(TypeError, match="problem: expected a compbench.Problem"):
        evaluate(None, heads)


def test_what_is_not_a_problem_is_refused_by_name_everywhere_one_is_taken(tmp_path) -> None:
    """Each of these raised an AttributeError ('NoneType' object has no attribute 'single_root', ...)."""
    p = _example()
    calls = [(lambda: compbench.log_partition([p]), "problem: expected a compbench.Problem, got list"),
             (lambda: compbench.marginals(None), "problem: expected"),
             (lambda: compbench.objective(None, [-1, 0]), "problem: expected"),
             (lambda: compbench.log_partition_many([p, None]), r"problems\[1\]: expected"),
             (lambda: compbench.ProblemBatch.from_problems([p, 3]), r"problems\[1\]: expected"),
             (lambda: compbench.write_instances(tmp_path / "x.jsonl", [p, 3]), r"problems\[1\]: expected"),
             (lambda: compbench.solve_many([p], None), "solver: expected a solver name or a compbench.Solver"),
             (lambda: compbench.get_solver(None), "name: expected a solver name")]
    for call, why in calls:
        with pytest.raises(TypeError, match=why):
            call()
    assert not list(tmp_path.iterdir())


def test_what_the_checks_still_take() -> None:
    """numpy strings as tokens, a numpy tolerance, a plug-in declaring option_names (names only) as before."""
    p = _example()
    tokens = np.array([f"w{k}" for k in range(1, 6)])
    assert p.replace(tokens=tokens).tokens == tuple(tokens.tolist())
    assert type(p.replace(tokens=(t for t in tokens)).tokens[0]) is str
    heads = compbench.get_solver("brute-force").solve(p).heads
    assert evaluate(p, heads, rtol=np.float32(1e-9)) == compbench.objective(p, heads)

    class Older(compbench.Solver):
        name = "older"
        option_names = frozenset({"depth"})

    with pytest.raises(compbench.SolverError, match="unknown options: typo"):
        Older().check_options({"typo": 1})
    Older().check_options({"depth": "anything"})


@pytest.mark.parametrize("spec, why", [("pruned-dp[floor=NaN]", "floor must be a number"),
                                       ("ql-subgradient[step=Infinity]", "step must be a finite positive number"),
                                       ("ilp-highs[formulation.x=1]", "formulation must be one of")])
def test_option_values_that_mean_nothing_are_refused(spec: str, why: str) -> None:
    with pytest.raises(KeyError, match=why):
        compbench.get_solver(spec)


def test_objectives_of_tiny_scores_are_judged_relatively() -> None:
    """An absolute tolerance of 1e-9 let a claimed optimum 4x too small pass on scores near 1e-10."""
    p = compbench.generate("gaussian", 4, seed=3, length=2)
    tiny = p.replace(token_scores=p.token_scores * 1e-10, arc_scores=p.arc_scores * 1e-10,
                     bigram_scores=p.bigram_scores * 1e-10)
    best = compbench.get_solver("brute-force").solve(tiny)
    worse = [heads for heads in ([-1, 0, 1, -1, -1], [-1, -1, 0, 2, -1], [-1, 0, -1, -1, 1])
             if compbench.objective(tiny, np.array(heads)) < best.objective * 0.9][0]
    claim = compbench.Solution(compbench.Status.OPTIMAL, np.array(worse), compbench.objective(tiny, np.array(worse)))
    from compbench.agreement import judge

    assert judge(tiny, claim, best).startswith("disagrees: claims optimum")
    assert judge(tiny, best, best) == "ok"
    # an optimum near 0 of scores near 1: its tolerance is the scores' (CP-SAT's rounding picked the other tree)
    near_zero = compbench.Problem(np.array([0.1886000603993936]), np.array([[-np.inf, -0.3241775489857335],
                                                                            [-np.inf, -np.inf]]),
                                  np.array([[-np.inf, -0.21676199894367754, 0.0], [-np.inf, -np.inf, 0.3523394875300187],
                                            [-np.inf, -np.inf, -np.inf]]))
    best = compbench.get_solver("brute-force").solve(near_zero)
    assert 0 < best.objective < 1e-14
    assert judge(near_zero, compbench.Solution(compbench.Status.OPTIMAL, np.array([-1, -1]), 0.0), best) == "ok"


def test_a_batch_solver_gets_no_limit_for_an_infinite_one() -> None:
    """solve passed None for a limit beyond a year, solve_many passed inf on to a batch path."""
    seen = []

    class Recorder(compbench.Solver):
        name = "recorder"

        def _solve(self, problem, *, time_limit, all_lengths):
            seen.append(time_limit)
            return compbench.get_solver("brute-force").solve(problem)

        def _solve_batch(self, batch, *, time_limit, jobs):
            seen.append(time_limit)
            return [self._solve(p, time_limit=time_limit, all_lengths=False) for p in batch.problems()]

    problems = [compbench.generate("gaussian", 3, seed=s) for s in range(2)]
    Recorder().solve(problems[0], time_limit=float("inf"))
    Recorder().solve_many(problems, time_limit=1e300)
    assert seen and all(limit is None for limit in seen), seen


def test_solvers_do_not_share_options_and_specs_are_read_strictly() -> None:
    """Solver.options was one class dict: an option set on one solver reached every other built without a spec (and
    brute-force then refused 'memory_limit'); a key given twice in a spec kept the last; exec paths holding '['
    were cut there, so two programs were one opinion."""
    from compbench.registry import base_name, opinion

    compbench.get_solver("hook-dp").options["memory_limit"] = 1e9
    assert compbench.get_solver("brute-force").options == {} == compbench.get_solver("resource-dp").options
    with pytest.raises(TypeError):
        compbench.solver.Solver.options["memory_limit"] = 1
    for spec, says in (("ilp-highs[tighten=true,tighten=false]", "tighten is given twice"),
                       ("ilp-highs[.a=1]", "an empty name in '.a'")):
        with pytest.raises(KeyError, match=re.escape(says)):
            compbench.get_solver(spec)
    assert base_name("exec:/x/a[1]/chain") == "exec:/x/a[1]/chain"
    assert opinion("exec:/x/a[1]/chain") != opinion("exec:/x/a[2]/other")
