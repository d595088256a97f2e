"""The conformance kit: check a solver against ``brute-force`` on random small problems (needs hypothesis).

In a plug-in's own tests, one line::

    from compbench.testing import check_solver

    def test_my_solver_conforms():
        check_solver("my-solver")

The random problems cover what breaks solvers: ties (integer scores), forbidden (-inf) tokens, arcs and bigrams
(including problems with no solution), both root modes, exact, range and free lengths, n = 0 and n = 1.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable

import hypothesis
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .agreement import judge
from .problem import Length, Problem, Solution, Status, changed_scores, score_digest
from .registry import get_solver
from .solver import Solver

LENGTH_MODES = ("exact", "range", "free")


@st.composite
def problems(draw: Any, min_n: int = 0, max_n: int = 8, length_modes: Iterable[str] = LENGTH_MODES,
             single_root: bool | None = None, forbid: bool = True, second_order: bool | None = False) -> Problem:
    """A hypothesis strategy for random problems (scores from a drawn seed, so shrinking acts on n and modes).

    ``single_root`` and ``second_order`` (sibling scores): True, False, or None to draw both ways.
    """
    n = draw(st.integers(min_n, max_n))
    ties = draw(st.booleans())
    forbid_rate = draw(st.sampled_from((0.0, 0.0, 0.15, 0.4))) if forbid else 0.0
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    with_siblings = draw(st.booleans()) if second_order is None else second_order
    shapes = [(n,), (n + 1, n + 1), (n + 2, n + 2)] + ([(n + 1,) * 3] if with_siblings else [])
    if ties:
        arrays = [rng.integers(-2, 3, size=s).astype(np.float64) for s in shapes]
    else:
        arrays = [np.round(rng.standard_normal(s), 3) for s in shapes]
    for array in arrays:
        array[rng.random(array.shape) < forbid_rate] = -np.inf
    token, arc, bigram, *sibling = arrays
    mode = draw(st.sampled_from(tuple(length_modes)))
    if mode == "exact":
        length = Length.exact(draw(st.integers(0, n)))
    elif mode == "range":
        lo = draw(st.integers(0, n))
        length = Length(lo, draw(st.integers(lo, n)))
    else:
        length = None
    root = draw(st.booleans()) if single_root is None else single_root
    return Problem(token, arc, bigram, length=length, single_root=root, id=f"hyp-n{n}-{seed}",
                   sibling_scores=sibling[0] if sibling else None)


def assert_conforms(solver: Solver, problem: Problem, *, all_lengths: bool = False,
                    reference: Solution | None = None, exact: bool | None = None, **options: Any) -> Solution:
    """Solve ``problem`` with ``solver`` and assert that its answer holds up against brute force.

    An exact solver given no time limit must prove its answer (``optimal`` or ``infeasible``); any solver must
    return valid solutions whose reported objective is right, never beat the optimum, and never claim ``optimal``
    falsely.  A solver must not answer ``unsupported`` for a problem its capabilities claim.  ``exact``: hold it to
    proving every answer or not (None: as it declares; a solver whose answers say what it takes on and whether it
    proves, ``claims_per_answer`` as an ``exec:`` program, is held to its claims only).  Such a solver may answer
    ``unsupported`` to anything (check_solver still wants a solution from it on some draw).
    """
    by_answer = getattr(solver, "claims_per_answer", False)
    exact = (solver.exact and not by_answer) if exact is None else exact
    if reference is None:
        reference = get_solver("brute-force").solve(problem, all_lengths=all_lengths)
    given = problem
    problem = copy.deepcopy(given)  # judged on the scores as given
    digest = score_digest(given)
    solution = solver.solve(given, all_lengths=all_lengths, **options)
    claimed = solver.supports.reason_unsupported(problem, all_lengths) is None
    context = f"{solver.name} on {problem.id} (n={problem.n}, length={problem.length}, single_root={problem.single_root})"
    changed = changed_scores(given, digest)
    assert changed is None, f"{context}: wrote into its input ({changed} changed while it solved)"
    if not claimed:
        assert solution.status == Status.UNSUPPORTED, f"{context}: should answer unsupported"
        return solution
    if by_answer and solution.status == Status.UNSUPPORTED:
        return solution
    assert solution.status not in (Status.UNSUPPORTED, Status.ERROR), f"{context}: {solution.status} {solution.message}"
    verdict = judge(problem, solution, reference)
    assert verdict == "ok", f"{context}: {verdict}"
    if exact:
        assert solution.status == reference.status, f"{context}: status {solution.status}, expected {reference.status}"
    if all_lengths:
        assert solution.by_length is not None and len(solution.by_length) == problem.n + 1, f"{context}: by_length"
        for m, (got, expected) in enumerate(zip(solution.by_length, reference.by_length)):
            at_m = problem.replace(length=Length.exact(m))
            verdict = judge(at_m, got, expected)
            assert verdict == "ok", f"{context}, length {m}: {verdict}"
            if exact:
                assert got.status == expected.status, f"{context}, length {m}: {got.status} vs {expected.status}"
    return solution


def check_solver(solver: str | Solver, *, max_n: int = 7, max_examples: int = 200, all_lengths: bool | None = None,
                 length_modes: Iterable[str] = LENGTH_MODES, seed: int | None = None, exact: bool | None = None,
                 **options: Any) -> None:
    """Run ``solver`` against brute force on ``max_examples`` random problems with up to ``max_n`` tokens.

    A solver must also give a solution on at least one draw of two or more tokens that has one.
    ``all_lengths=None`` also checks the all-lengths mode when the solver supports it; second-order problems
    (sibling scores) are drawn half the time when the solver supports them; ``seed`` makes the draw reproducible;
    ``exact`` (see :func:`assert_conforms`): ``True`` holds an ``exec:`` program to proving every answer.
    """
    solver = get_solver(solver) if isinstance(solver, str) else solver
    check_curve = solver.supports.all_lengths if all_lengths is None else all_lengths
    declines_by_answer = getattr(solver, "claims_per_answer", False)  # its unsupported answers are no solution

    second_order = None if solver.supports.second_order else False

    @settings(max_examples=max_examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(problem=problems(max_n=max_n, length_modes=tuple(length_modes), second_order=second_order),
           curve=st.booleans())
    def run(problem: Problem, curve: bool) -> None:
        all_lengths = check_curve and curve
        reference = get_solver("brute-force").solve(problem, all_lengths=all_lengths)
        solution = assert_conforms(solver, problem, all_lengths=all_lengths, reference=reference, exact=exact,
                                   **options)
        took_it_on = solution.status != Status.UNSUPPORTED or declines_by_answer
        if took_it_on and reference.has_solution and problem.n >= 2:
            solvable.append(solution.has_solution)  # n >= 2: a choice to make (n = 0 has one solution, kept nothing)

    solvable: list[bool] = []  # per draw of n >= 2 with a solution that the solver took on: did it give one?
    (run if seed is None else hypothesis.seed(seed)(run))()
    assert not solvable or any(solvable), (f"{solver.name} gave no solution on any of the {len(solvable)} draws "
                                           "of n >= 2 that have one (an answer of none is valid, an inexact solver "
                                           "of none is no solver)")
