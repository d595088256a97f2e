"""Does a solver's answer hold up?  One judgement shared by ``compbench check``, ``bench``, the statistics, the
report and the conformance kit.

An answer is *validated* against its problem (:func:`validate`: a tree of the right length over allowed scores, the
objective it reports recomputed) and then judged against the instance's *reference* (:func:`verdict`): a certified
optimum (a ``.solu.json`` file beside the instance file), an optimum an exact DP computed in the run, or at least the
best valid objective any answer reached (a lower bound only).  The result is a :class:`Judgement`: a
:class:`Verdict`, why, and whether the answer was *compared* at all (an exact, proven answer judged against a proven
reference or a second exact answer); only a compared answer can be *solved*.

>>> ref = Reference(Status.OPTIMAL, 2.0, "certified")
>>> verdict(Solution(Status.INFEASIBLE), "ok", ref).verdict
<Verdict.CONTRADICTED: 'contradicted'>
>>> verdict(Solution(Status.TIMEOUT), "ok", ref).solved
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from .evaluate import InvalidSolution, evaluate, objective_error, score_tolerance
from .problem import Problem, Solution, Status
from .registry import opinion

RTOL = 1e-9
PROVEN = (Status.OPTIMAL, Status.INFEASIBLE)


class Verdict(str, Enum):
    """What an answer is worth, once judged."""

    OK = "ok"  # validated, and nothing contradicts it
    INVALID = "invalid"  # not a valid solution of the problem, or a wrong objective reported
    CONTRADICTED = "contradicted"  # valid but contradicts the reference (a wrong optimum, infeasible, bound)
    TIMEOUT = "timeout"
    ERROR = "error"
    UNSUPPORTED = "unsupported"
    SKIPPED = "skipped"  # not run: the harness skipped its size

    def __str__(self) -> str:
        return self.value


WRONG = (Verdict.INVALID, Verdict.CONTRADICTED)  # the verdicts that disqualify a solver


@dataclass(frozen=True)
class Reference:
    """What an instance's answers are judged against: a proven ``optimal`` value or ``infeasible`` (``proven``), or
    only the best valid objective some answer reached (a lower bound, ``proven=False``); ``source`` says where it
    comes from (``certified (FILE)``, ``resource-dp in this run``, ``best valid answer``); ``solver``: the solver
    whose answer it is (None for a certified optimum), whose own answers it cannot check; ``error``: how far another
    float64 sum of its solution's scores could lie from ``objective`` (:func:`compbench.evaluate.objective_error`)."""

    status: Status
    objective: float | None
    source: str
    proven: bool = True
    solver: str | None = None
    error: float = 0.0

    def describe(self) -> str:
        value = "infeasible" if self.status == Status.INFEASIBLE else f"{self.objective!r}"
        return f"{value} ({self.source})"


@dataclass(frozen=True)
class Judgement:
    """The judged answer: its verdict, why (empty when ok), the reference it was judged against, and whether it was
    compared (a proven answer against a proven reference or a second proven answer)."""

    verdict: Verdict
    why: str = ""
    reference: Reference | None = None
    compared: bool = False
    proven: bool = False  # the answer claims optimal or infeasible

    @property
    def solved(self) -> bool:
        """A proven answer that passed validation and agrees with a reference it was compared against."""
        return self.verdict == Verdict.OK and self.proven and self.compared

    def __str__(self) -> str:
        """``ok``, ``invalid: <why>``, ``disagrees: <why>`` or the verdict's name (the form ``judge`` returns)."""
        if self.verdict == Verdict.CONTRADICTED:
            return f"disagrees: {self.why}"
        return f"{self.verdict}: {self.why}" if self.why and self.verdict != Verdict.OK else str(self.verdict)


def validate(problem: Problem, solution: Solution, rtol: float = RTOL) -> str:
    """``"ok"`` or ``"invalid: <why>"``: is the solution a valid answer to the problem (its tree, length and
    scores, its reported objective; an ``optimal`` claim needs a solution; a bound is a number, not below the
    solution's own value)?"""
    if solution.bound is not None and math.isnan(solution.bound):
        return "invalid: the bound is NaN"
    if solution.has_solution and solution.objective is None:
        return "invalid: a solution without its objective"
    if solution.has_solution and solution.status == Status.INFEASIBLE:
        return "invalid: claims infeasible and gives a solution"
    if solution.has_solution:
        try:
            evaluate(problem, solution, rtol=rtol)
        except InvalidSolution as exc:
            return f"invalid: {exc}"
        if solution.bound is not None and solution.bound < solution.objective \
                and not objectives_agree(solution.bound, solution.objective, rtol, abs_tol=rtol):
            return f"invalid: bound {solution.bound!r} is below the solution's own value {solution.objective!r}"
    elif solution.status == Status.OPTIMAL:
        return "invalid: status optimal without a solution"
    return "ok"


def verdict(solution: Solution, validity: str, reference: Reference | None, *, skipped: bool = False,
            second_opinion: bool = False, solver: str | None = None, implementation: str | None = None,
            error: float = 0.0, rtol: float = RTOL) -> Judgement:
    """The one judgement of an answer: ``solution`` (its status, value and bound), its ``validity`` (from
    :func:`validate`), and the instance's ``reference``.  ``second_opinion``: another solver gave a proven valid
    answer on the same instance (so that agreeing with a reference that is only a lower bound is a comparison too);
    ``solver``: the answer's solver (an answer agreeing with a reference its own solver computed, with any options,
    or another solver of its implementation, :func:`compbench.registry.opinion`, was not compared);
    ``implementation``: the solver's implementation as its run recorded it (default: the registry's here);
    ``error``: the float64 error of the answer's objective (:func:`compbench.evaluate.objective_error`), within which,
    with the reference's own, two objectives agree; ``skipped``: the harness never ran it.

    >>> own = Reference(Status.OPTIMAL, 2.0, "resource-dp in this run", solver="resource-dp")
    >>> answer = Solution(Status.OPTIMAL, objective=2.0)
    >>> [verdict(answer, "ok", own, solver=name).compared for name in ("resource-dp", "resource-dp[cap=2]", "hook-dp",
    ...                                                                  "signature-dp")]
    [False, False, False, True]
    """
    proven = solution.status in PROVEN
    if skipped:
        return Judgement(Verdict.SKIPPED, reference=reference)
    if validity == "ok" and solution.has_solution and solution.objective is None:  # a record that lost its value
        validity = "invalid: a solution without its objective"
    independent = reference is not None and reference.proven and (
        reference.solver is None or solver is None
        or opinion(reference.solver) != (implementation or opinion(solver)))
    compared = proven and reference is not None and (independent or second_opinion)
    if validity != "ok":
        return Judgement(Verdict.INVALID, validity.partition(": ")[2] or validity, reference, compared, proven)
    why = contradiction(solution, reference, rtol, error)
    if why != "ok":
        return Judgement(Verdict.CONTRADICTED, why.partition(": ")[2], reference, compared, proven)
    plain = {Status.TIMEOUT: Verdict.TIMEOUT, Status.ERROR: Verdict.ERROR, Status.UNSUPPORTED: Verdict.UNSUPPORTED}
    return Judgement(plain.get(solution.status, Verdict.OK), "", reference, compared, proven)


def answers_agree(a: Solution, b: Solution, slack: float = 0.0, rtol: float = RTOL) -> bool:
    """Do two proven answers say the same: both ``infeasible``, or both ``optimal`` with objectives that agree
    (within ``slack``, the sum of their float64 errors)?  An answer that agrees is a second opinion; one that does
    not is none.

    >>> answers_agree(Solution(Status.INFEASIBLE), Solution(Status.INFEASIBLE))
    True
    >>> answers_agree(Solution(Status.OPTIMAL, objective=7.0), Solution(Status.INFEASIBLE))
    False
    """
    if a.status not in PROVEN or a.status != b.status:
        return False
    return a.status == Status.INFEASIBLE or objectives_agree(a.objective, b.objective, rtol, slack)


def refutes(solution: Solution, validity: str, reference: Reference | None, error: float = 0.0,
            rtol: float = RTOL) -> bool:
    """Does a valid answer prove a proven ``reference`` wrong: a solution where it says infeasible, or one whose
    value beats its optimum (beyond both float64 errors)?  A valid tree is a fact about the instance; a reference
    it beats is set aside, and the answer is not blamed.

    >>> refutes(Solution(Status.FEASIBLE, objective=6.0, heads=[-1, 0]), "ok", Reference(Status.OPTIMAL, 5.0, "x"))
    True
    """
    if validity != "ok" or not solution.has_solution or solution.objective is None or reference is None \
            or not reference.proven:  # a solution without its value is invalid (verdict), refuting nothing
        return False
    if reference.status == Status.INFEASIBLE:
        return True
    return solution.objective > reference.objective and not objectives_agree(
        solution.objective, reference.objective, rtol, error + reference.error)


def objectives_agree(a: float, b: float, rtol: float = RTOL, slack: float = 0.0, abs_tol: float | None = None
                     ) -> bool:
    """Equal to ``rtol`` relative, or absolute as :func:`compbench.evaluate.score_tolerance` reads it off ``slack``
    (their float64 errors, :func:`compbench.evaluate.objective_error`: ``rtol``, shrunk for scores far below 1), or
    within ``slack``.  Two optima of scores near 1e-10 that are 4x apart do not agree; an optimum near 0 of scores
    near 1 keeps 1e-9.  ``abs_tol``: an absolute tolerance instead (a solver's bound, from its own tolerances).

    >>> objectives_agree(1.0, 1.0 + 1e-12), objectives_agree(1.56029, 1.56030)
    (True, False)
    >>> objectives_agree(6e-10, 1.5e-10, slack=1e-24), objectives_agree(3e-10, 0.0, slack=1e-15)
    (False, True)
    """
    tolerance = score_tolerance(slack, rtol) if abs_tol is None else abs_tol
    return math.isclose(a, b, rel_tol=rtol, abs_tol=tolerance) or abs(a - b) <= slack


def judge(problem: Problem, solution: Solution, reference: Solution | Reference | None = None,
          rtol: float = RTOL) -> str:
    """``"ok"``, ``"invalid: <why>"`` or ``"disagrees: <why>"`` for one solution (:func:`validate`, then
    :func:`verdict` against a proven ``reference``; the conformance kit's form).

    Every returned solution must be valid and report its own objective.  Against a ``reference`` that is proven
    (``optimal`` or ``infeasible``): an ``optimal`` claim must match its objective, an ``infeasible`` claim its
    infeasibility, and no valid solution may beat it.  ``bound`` must not be below the reference optimum.
    """
    if isinstance(reference, Solution):
        reference = Reference(reference.status, reference.objective, "reference",
                              error=objective_error(problem, reference.heads)) if reference.status in PROVEN else None
    validity = validate(problem, solution, rtol)
    error = objective_error(problem, solution.heads) if validity == "ok" else 0.0
    judged = verdict(solution, validity, reference, error=error, rtol=rtol)
    return "ok" if judged.verdict not in WRONG else str(judged)


def contradiction(solution: Solution, reference: Reference | None, rtol: float = RTOL, error: float = 0.0) -> str:
    """``"ok"`` or ``"disagrees: <why>"``: does ``solution`` contradict the ``reference``?  Against a lower bound
    (``proven=False``) only a proven answer below it or an ``infeasible`` claim can.  Values within ``error`` (the
    answer's float64 error) plus the reference's own agree.

    >>> contradiction(Solution(Status.INFEASIBLE), Reference(Status.OPTIMAL, 2.0, "certified"))
    'disagrees: claims infeasible, reference optimum is 2.0 (certified)'
    """
    if reference is None or reference.status not in PROVEN:
        return "ok"
    source = f" ({reference.source})"
    if reference.status == Status.INFEASIBLE:
        if solution.has_solution:
            return (f"disagrees: reference proves infeasible{source}, got a solution of value "
                    f"{solution.objective!r}")
        return "ok"
    best, what = reference.objective, "reference optimum" if reference.proven else "best valid objective"
    if solution.status == Status.INFEASIBLE:
        return f"disagrees: claims infeasible, {what} is {best!r}{source}"
    slack = error + reference.error
    agree = lambda value, abs_tol=None: objectives_agree(value, best, rtol, slack, abs_tol)
    below = lambda value, abs_tol=None: value < best and not agree(value, abs_tol)
    if solution.status == Status.OPTIMAL and (below(solution.objective) or reference.proven and not
                                              agree(solution.objective)):
        return f"disagrees: claims optimum {solution.objective!r}, {what} is {best!r}{source}"
    if reference.proven and solution.has_solution and solution.objective > best and not agree(solution.objective):
        return f"disagrees: solution value {solution.objective!r} beats the reference optimum {best!r}{source}"
    if solution.bound is not None and below(solution.bound, abs_tol=rtol):  # a bound: the solver's own tolerance
        return f"disagrees: bound {solution.bound!r} is below the {what} {best!r}{source}"
    return "ok"
