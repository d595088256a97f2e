"""Does a solver's answer hold up?  One judgement shared by ``compbench check`` and the conformance kit."""

from __future__ import annotations

import math

from .evaluate import InvalidSolution, evaluate
from .problem import Problem, Solution, Status

RTOL = 1e-9


def objectives_agree(a: float, b: float, rtol: float = RTOL) -> bool:
    return math.isclose(a, b, rel_tol=rtol, abs_tol=rtol)


def judge(problem: Problem, solution: Solution, reference: Solution | None = None, rtol: float = RTOL) -> str:
    """``"ok"``, ``"invalid: <why>"`` or ``"disagrees: <why>"`` for one solution.

    Every returned solution must be valid and report its own objective.  Against a ``reference`` that is proven
    (``optimal`` or ``infeasible``): an ``optimal`` claim must match its objective, an ``infeasible`` claim its
    infeasibility, and no valid solution may beat it.  ``bound`` must not be below the reference optimum.
    """
    if solution.has_solution:
        try:
            evaluate(problem, solution, rtol=rtol)
        except InvalidSolution as exc:
            return f"invalid: {exc}"
    elif solution.status == Status.OPTIMAL:
        return "invalid: status optimal without a solution"
    return contradiction(solution, reference, rtol)


def contradiction(solution: Solution, reference: Solution | None, rtol: float = RTOL) -> str:
    """``"ok"`` or ``"disagrees: <why>"``: does ``solution`` contradict a proven ``reference``?  (``judge`` without
    the validation; for answers already validated, e.g. the records of a run file.)

    >>> contradiction(Solution(Status.INFEASIBLE), Solution(Status.OPTIMAL, objective=2.0))
    'disagrees: claims infeasible, reference optimum is 2.0'
    """
    if reference is None or reference.status not in (Status.OPTIMAL, Status.INFEASIBLE):
        return "ok"
    if reference.status == Status.INFEASIBLE:
        if solution.has_solution:
            return f"disagrees: reference proves infeasible, got a solution of value {solution.objective!r}"
        return "ok"
    best = reference.objective
    if solution.status == Status.INFEASIBLE:
        return f"disagrees: claims infeasible, reference optimum is {best!r}"
    if solution.status == Status.OPTIMAL and not objectives_agree(solution.objective, best, rtol):
        return f"disagrees: claims optimum {solution.objective!r}, reference optimum is {best!r}"
    if solution.has_solution and solution.objective > best and not objectives_agree(solution.objective, best, rtol):
        return f"disagrees: solution value {solution.objective!r} beats the reference optimum {best!r}"
    if solution.bound is not None and solution.bound < best and not objectives_agree(solution.bound, best, rtol):
        return f"disagrees: bound {solution.bound!r} is below the reference optimum {best!r}"
    return "ok"
