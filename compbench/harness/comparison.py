"""Two runs against each other, solver by solver (``compbench compare``): the time of B over A with a bootstrap
interval and a verdict against the noise, and the answers the two runs give differently.

Times: the statistics' rule (:mod:`.stats`: a solved answer at its time, the rest at the limit), and a proven answer
that nothing in its own run compared (a solver run alone: ``unchecked``) at its time too when the other run gives
the same proven answer on that instance (a second opinion across the runs); else at the limit.  Answers: a proven
answer in both runs that differs (optimal objectives apart, optimal against infeasible), or a valid solution in one
run that beats the other's optimum (or exists where it claims infeasible), is a difference (``DIFFERS``, exit 1).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from compbench.agreement import Reference, answers_agree, refutes
from compbench.limits import MIN_EFFECT, MIN_TIMED_INSTANCES
from compbench.problem import Status
from compbench.records import decode_number, recorded_error

from .judging import recorded_answer, recorded_reference
from .stats import (TIMED, WRONG, annotate, bootstrap_ratio, counted_times, default_shift, finite_or_none,
                    merge_repeats, sgm)

PROVEN = ("optimal", "infeasible")
COMPARE_TIMED = ("solved", "unchecked")  # the outcomes compare can time by their own time (see the module's doc)


def noise_factor(records: Iterable[dict], timed: tuple[str, ...] = TIMED) -> float | None:
    """The timing noise of judged records with repeats: exp of the median, over the (instance, solver) pairs timed
    by their own time (``timed``: solved) with at least two repeats, of log(slowest / fastest repeat); None
    without repeats.

    >>> noise_factor([{"outcome": "solved", "repeat_seconds": [1.0, 1.2, 1.1]}])
    1.2
    """
    spreads = [math.log(max(t) / min(t)) for r in records if r["outcome"] in timed
               and len(t := r.get("repeat_seconds") or []) >= 2 and min(t) > 0]
    return round(math.exp(float(np.median(spreads))), 12) if spreads else None


def timing_verdict(low: float, high: float, threshold: float, instances: int = MIN_TIMED_INSTANCES) -> str:
    """``slower`` when the whole interval of B/A lies above ``threshold``, ``faster`` when below 1/threshold, else
    ``same``; ``too few`` over fewer than :data:`~compbench.limits.MIN_TIMED_INSTANCES` ``instances`` (the
    bootstrap interval of one instance is a point, of two three points).  (:func:`compare_runs` says ``unsolved``
    when neither run timed any of them: both at the limit says nothing.)

    >>> timing_verdict(1.05, 1.63, 1.25), timing_verdict(1.3, 1.6, 1.25), timing_verdict(0.5, 0.7, 1.25)
    ('same', 'slower', 'faster')
    >>> timing_verdict(1.3, 1.3, 1.25, instances=1)
    'too few'
    >>> timing_verdict(math.nan, math.nan, 1.25)  # no ratio (an SGM of times of 0)
    'unmeasured'
    """
    if instances < MIN_TIMED_INSTANCES:
        return "too few"
    if math.isnan(low) or math.isnan(high):
        return "unmeasured"
    return "slower" if low > threshold else "faster" if high < 1.0 / threshold else "same"


def _claim(r: dict) -> Any:
    """What an answer says about its instance: ``infeasible``, an optimum, or a valid solution's value."""
    if r["status"] == "infeasible":
        return "infeasible"
    value = decode_number(r["objective"])
    return value if r["status"] == "optimal" else f"a solution of value {value!r}"


def _same_proven(x: dict, y: dict) -> bool:
    """Both valid and proven, saying the same (:func:`compbench.agreement.answers_agree`)."""
    return "invalid" not in (x["outcome"], y["outcome"]) and answers_agree(
        recorded_answer(x)[0], recorded_answer(y)[0], recorded_error(x) + recorded_error(y))


def _differ(x: dict, y: dict) -> bool:
    """Do the two runs' answers on one instance contradict each other: both proven and not the same, or a valid
    solution of one that refutes the other's proven claim (:func:`compbench.agreement.refutes`)?"""
    if "invalid" in (x["outcome"], y["outcome"]):
        return False
    if x["status"] in PROVEN and y["status"] in PROVEN:
        return not _same_proven(x, y)
    for claim, other in ((x, y), (y, x)):
        if claim["status"] in PROVEN:
            said = Reference(Status(claim["status"]), decode_number(claim["objective"]), "the other run",
                             error=recorded_error(claim))
            if refutes(recorded_answer(other)[0], "ok", said, recorded_error(other)):
                return True
    return False


def _judged_both_ways(results: list[dict]) -> tuple[list[dict], list[dict]]:
    """The run judged once (:func:`.stats.annotate`), its repeats merged twice: with an unchecked answer timed by
    its own time (:data:`COMPARE_TIMED`) and at the limit (the statistics' rule)."""
    answers = annotate(results)
    seconds = counted_times(results, [r["outcome"] for r in answers], COMPARE_TIMED)
    timed = [{**r, "counted": None if np.isnan(t) else float(t)} for r, t in zip(answers, seconds)]
    return merge_repeats(timed, COMPARE_TIMED), merge_repeats(answers)


def _times(own: dict, strict: dict, other: dict) -> float:
    """The time compare counts for one answer: its own when solved, or when unchecked and the other run's answer
    is the same proven one; else the statistics' (the limit)."""
    if own["outcome"] == "unchecked" and not _same_proven(own, other):
        return strict["counted"]
    return own["counted"]


def compare_runs(a: list[dict], b: list[dict], shift: float | None = None,
                 min_effect: float = MIN_EFFECT) -> dict[str, Any]:
    """Run ``b`` against run ``a``, per solver over the instances both runs hold for it (the same id and content
    hash; neither left out): the SGM of each and their ratio b / a with its bootstrap interval, a ``verdict``
    (:func:`timing_verdict` against the larger of ``min_effect`` and the noise the runs' repeats measured), the
    instances one solved and the other did not, how many have a proven answer in both (``proven_both``), every
    instance whose answers differ (see the module's doc), with both, and each run's wrong answers (``wrong_a``,
    ``wrong_b``: invalid or contradicted, with why).  Returns ``{"threshold", "noise",
    "min_effect", "shift_seconds", "solvers": {solver: row}, "unpaired": {solver: why}}`` (``unpaired``: the
    solvers with no instance timed in both runs).

    >>> run = lambda t, obj: [{"instance": "x", "solver": "s", "n": 3, "status": "optimal", "objective": obj,
    ...                        "seconds": {"total": t}, "time_limit": 10.0,
    ...                        "reference": {"status": "optimal", "objective": obj, "source": "certified"}}]
    >>> row = compare_runs(run(1.0, 2.0), run(2.0, 2.5), shift=0.0)["solvers"]["s"]
    >>> row["ratio"], row["objective_differs"], row["verdict"]
    (2.0, [{'instance': 'x', 'a': 2.0, 'b': 2.5}], 'too few')
    """
    shift = default_shift(a + b) if shift is None else shift
    (first, strict_first), (second, strict_second) = _judged_both_ways(a), _judged_both_ways(b)
    noises = [x for x in (noise_factor(first, COMPARE_TIMED), noise_factor(second, COMPARE_TIMED)) if x is not None]
    noise = max(noises) if noises else None
    threshold = max(min_effect, noise or 0.0)
    index = lambda rs: {(r["solver"], r["instance"], r.get("hash")): r for r in rs if r["counted"] is not None}
    ia, ib = index(first), index(second)
    strict_a, strict_b = index(strict_first), index(strict_second)  # unchecked answers at the limit
    rows: dict[str, dict[str, Any]] = {}
    unpaired: dict[str, str] = {}
    in_a, in_b = {r["solver"] for r in first}, {r["solver"] for r in second}
    for solver in sorted(in_a ^ in_b):
        unpaired[solver] = f"in {'A' if solver in in_a else 'B'} only"
    for solver in sorted(in_a & in_b):
        common = sorted(key for key in ia if key[0] == solver and key in ib)
        if not common:
            unpaired[solver] = "no instance timed in both runs (unsupported or left out in one)"
            continue
        ra, rb = [ia[key] for key in common], [ib[key] for key in common]
        ta = np.array([_times(ia[k], strict_a[k], ib[k]) for k in common])
        tb = np.array([_times(ib[k], strict_b[k], ia[k]) for k in common])
        ratio, low, high = bootstrap_ratio(ta, tb, shift)
        names = [key[1] for key in common]
        timed = [x["outcome"] == "solved" or _same_proven(x, y) for x, y in zip(ra + rb, rb + ra)]
        rows[solver] = {"solver": solver, "instances": len(common), "sgm_a": finite_or_none(sgm(ta, shift)),
                        "sgm_b": finite_or_none(sgm(tb, shift)), "ratio": finite_or_none(ratio),
                        "low": finite_or_none(low), "high": finite_or_none(high),
                        "verdict": timing_verdict(low, high, threshold, len(common)) if any(timed) else "unsolved",
                        "proven_both": sum(x["status"] in PROVEN and y["status"] in PROVEN
                                           and "invalid" not in (x["outcome"], y["outcome"]) for x, y in zip(ra, rb)),
                        "solved_a": sum(r["outcome"] == "solved" for r in ra),
                        "solved_b": sum(r["outcome"] == "solved" for r in rb),
                        "only_a": [i for i, x, y in zip(names, ra, rb) if x["outcome"] == "solved" != y["outcome"]],
                        "only_b": [i for i, x, y in zip(names, ra, rb) if y["outcome"] == "solved" != x["outcome"]],
                        "objective_differs": [{"instance": i, "a": _claim(x), "b": _claim(y)}
                                              for i, x, y in zip(names, ra, rb) if _differ(x, y)],
                        **{f"wrong_{side}": [{"instance": i, "outcome": r["outcome"], "why": r.get("why") or ""}
                                             for i, r in zip(names, records) if r["outcome"] in WRONG]
                           for side, records in (("a", ra), ("b", rb))}}
    return {"threshold": threshold, "noise": noise, "min_effect": min_effect, "shift_seconds": shift,
            "solvers": rows, "unpaired": unpaired}


def comparable(a: list[dict], b: list[dict]) -> str | None:
    """Why two runs cannot be compared (different time limits, instance sets or reference optima), or None."""
    limits = [sorted({r.get("time_limit") for r in rs}, key=str) for rs in (a, b)]
    if limits[0] != limits[1]:
        return f"different time limits ({limits[0]} against {limits[1]})"
    instances = [{(r["instance"], r.get("hash")) for r in rs} for rs in (a, b)]
    if instances[0] != instances[1]:
        only = sorted(f"{i}" for i, _ in instances[0] ^ instances[1])
        return (f"different instance sets ({len(instances[0] ^ instances[1])} instances, by id and content hash, in "
                f"one run only, e.g. {only[0]})")
    refs = [{r["instance"]: recorded_reference(r) for r in rs} for rs in (a, b)]
    for instance, ref in refs[0].items():
        other = refs[1].get(instance)
        if (ref is None) != (other is None):  # the answers of one run are judged against a reference, the other's not
            return (f"a reference optimum for {instance} in {'A' if other is None else 'B'} only "
                    f"({(ref or other).describe()})")
        if ref is not None and (ref.status, ref.objective) != (other.status, other.objective):
            return f"different reference optima on {instance} ({ref.describe()} against {other.describe()})"
    return None
