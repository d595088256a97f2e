"""The statistics of run files, one home for report, plots, compare and bench: what counts as solved, the shifted
geometric mean (SGM), PAR-2, bootstrap intervals of SGM ratios, and performance-profile data.

What counts as solved: an ``optimal`` or ``infeasible`` answer that passed validation (its ``validity`` is ``ok``)
and agrees with its instance's reference (:func:`compbench.agreement.verdict`, with the reference the run file
recorded: a certified optimum or one the resource-constrained DP computed in the run, else the best valid objective
any answer reached, see :mod:`.references`).  A solver with any invalid or contradicted answer is disqualified.

Times: ``seconds.total`` of each result (setup + solve).  An instance a solver ran but did not solve (timeout, error,
invalid or contradicted answer, ``feasible`` without a proof) or was skipped on counts at its time limit;
``unsupported`` solves (outside what the solver declares) are left out of the time statistics and counted apart.

>>> times = np.array([1.0, 4.0])
>>> round(sgm(times, shift=1.0), 6)  # exp(mean(log(2), log(5))) - 1 = sqrt(10) - 1
2.162278
>>> par2(np.array([1.0, 9.0]), solved=np.array([True, False]), limits=np.array([5.0, 5.0]))
5.5
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from typing import Any, Iterable

import numpy as np

from compbench.limits import MIN_EFFECT, MIN_TIMED_INSTANCES
from compbench.records import decode_number, encode_number, recorded_error
from compbench.registry import base_name

from .judging import judge_results, outcome, recorded_reference

LEFT_OUT = ("unsupported",)
# outcome of one result: solved, or why not (unchecked: a proven answer with nothing to judge it against)
OUTCOMES = ("solved", "unproven", "unchecked", "timeout", "error", "invalid", "contradicted", "unsupported",
            "skipped")
WRONG = ("invalid", "contradicted")  # outcomes that disqualify a solver (compbench.agreement.WRONG)
SHIFT_FRACTION = 1e-3  # the default shift: this fraction of the time limit (MIPLIB 2017: 10 s over 2 h, ~1/720)
BOOTSTRAP_SAMPLES = 2000
SEED = 0


def is_exact(solver: str, infos: dict[str, dict]) -> bool:
    """Whether the run header's solver infos call the solver exact (unknown solvers are taken as exact)."""
    return bool(infos.get(base_name(solver), {}).get("exact", True))


def runtime(record: dict) -> float | None:
    """``seconds.total`` of a result (``seconds.wall`` when there is no total), or None."""
    seconds = record.get("seconds") or {}
    value = seconds.get("total", seconds.get("wall"))
    return float(value) if value is not None else None


def time_limit_of(results: Iterable[dict]) -> float | None:
    """The largest time limit of the results (None when no solve had one)."""
    limits = [float(r["time_limit"]) for r in results if r.get("time_limit") is not None]
    return max(limits) if limits else None


def default_shift(results: list[dict]) -> float:
    """SHIFT_FRACTION of the largest time limit (1 ms without one): 5 ms for a 5 s limit, 60 ms for 60 s."""
    limit = time_limit_of(results)
    return SHIFT_FRACTION * limit if limit else 1e-3


TIMED = ("solved",)  # the outcomes timed by their own time; every other (not left out) counts at its limit


def counted_times(results: list[dict], kinds: list[str], timed: tuple[str, ...] = TIMED
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(seconds, solved) per result for the time statistics: the time of a result whose outcome is ``timed``, an
    unsolved one's limit (its own time when it had no limit, or when that is longer); left-out results are NaN."""
    fallback = time_limit_of(results)
    seconds = np.full(len(results), np.nan)
    solved = np.zeros(len(results), dtype=bool)
    for i, (r, kind) in enumerate(zip(results, kinds)):
        if kind in LEFT_OUT:
            continue
        t = runtime(r)
        if kind in timed and t is not None:
            seconds[i], solved[i] = max(t, 0.0), True
        else:
            limit = r.get("time_limit") if r.get("time_limit") is not None else fallback
            seconds[i] = max(float(limit) if limit is not None else 0.0, t or 0.0)
    return seconds, solved


def sgm(seconds: np.ndarray, shift: float) -> float:
    """Shifted geometric mean exp(mean(log(t + shift))) - shift (NaN for no times).

    >>> round(sgm(np.array([0.0, 0.99]), shift=0.01), 6)  # exp(mean(log(0.01), log(1))) - 0.01
    0.09
    """
    seconds = np.asarray(seconds, dtype=float)
    if seconds.size == 0:
        return math.nan
    return float(max(0.0, np.exp(np.mean(np.log(seconds + shift))) - shift))


def par2(seconds: np.ndarray, solved: np.ndarray, limits: np.ndarray) -> float:
    """PAR-2: the mean time with each unsolved instance counted at twice its limit."""
    seconds, limits = np.asarray(seconds, dtype=float), np.asarray(limits, dtype=float)
    return float(np.mean(np.where(solved, seconds, 2.0 * limits))) if seconds.size else math.nan


def bootstrap_ratio(a: np.ndarray, b: np.ndarray, shift: float, *, samples: int = BOOTSTRAP_SAMPLES,
                    seed: int = SEED) -> tuple[float, float, float]:
    """sgm(b) / sgm(a) over paired times (the same instances), and a 95% percentile bootstrap interval from
    ``samples`` resamples of the instances (seeded: the same numbers every time).

    >>> ratio, low, high = bootstrap_ratio(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0, 9.0]), 0.0)
    >>> round(ratio, 3), low <= ratio <= high
    (2.06, True)
    """
    a, b = np.asarray(a, dtype=float) + shift, np.asarray(b, dtype=float) + shift
    if a.size == 0:
        return math.nan, math.nan, math.nan
    ratio = (np.exp(np.mean(np.log(b))) - shift) / (np.exp(np.mean(np.log(a))) - shift)
    picks = np.random.default_rng(seed).integers(0, a.size, size=(samples, a.size))
    sampled = ((np.exp(np.log(b)[picks].mean(axis=1)) - shift) / (np.exp(np.log(a)[picks].mean(axis=1)) - shift))
    low, high = np.percentile(sampled, [2.5, 97.5])
    return float(ratio), float(low), float(high)


def profile_ratios(seconds: np.ndarray) -> np.ndarray:
    """Dolan-More performance ratios: instances x solvers times (inf: not solved) over each instance's best time;
    inf where the solver did not solve the instance (or nobody did).

    >>> profile_ratios(np.array([[1.0, 2.0], [4.0, np.inf]])).tolist()
    [[1.0, 2.0], [1.0, inf]]
    """
    seconds = np.asarray(seconds, dtype=float)
    best = np.min(seconds, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(np.isfinite(seconds), seconds / np.maximum(best, 1e-9), np.inf)
    return np.where(np.isfinite(best), ratios, np.inf)


def profile_fractions(ratios: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """Per solver (column) and tau, the fraction of instances solved within a factor tau of the best.

    >>> profile_fractions(np.array([[1.0, 2.0], [1.0, np.inf]]), np.array([1.0, 2.0])).tolist()
    [[1.0, 1.0], [0.0, 0.5]]
    """
    ratios = np.asarray(ratios, dtype=float)
    return (ratios[:, :, None] <= np.asarray(taus)[None, None, :]).mean(axis=0)


def disqualified(results: list[dict], kinds: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The solvers with at least one wrong answer (an ``invalid`` or ``contradicted`` outcome; the SAT competitions'
    rule): ``{solver: {"wrong": count, "first": first instance, in the results' order}}``.  ``kinds``: the results'
    outcomes (default: each result's ``outcome``, as :func:`annotate` adds it).

    >>> disqualified([{"solver": "a", "instance": "x", "outcome": "solved"},
    ...               {"solver": "b", "instance": "y", "outcome": "contradicted"}])
    {'b': {'wrong': 1, 'first': 'y'}}
    """
    kinds = [r.get("outcome") for r in results] if kinds is None else kinds
    out: dict[str, dict[str, Any]] = {}
    for r, kind in zip(results, kinds):
        if kind in WRONG:
            entry = out.setdefault(r["solver"], {"wrong": 0, "first": r["instance"]})
            entry["wrong"] += 1
    return out


def solver_row(records: list[dict], kinds: list[str], shift: float, exact: bool) -> dict[str, Any]:
    """The statistics of one solver's results (``kinds``: their outcomes); the same keys for every solver."""
    counts = {k: kinds.count(k) for k in OUTCOMES}
    seconds, solved = counted_times(records, kinds)
    ran = ~np.isnan(seconds)
    limits = np.array([float(r["time_limit"]) if r.get("time_limit") is not None else seconds[i]
                       for i, r in enumerate(records)])
    wrong = disqualified(records, kinds).get(records[0]["solver"]) if records else None
    return {"exact": exact, "disqualified": wrong is not None, "wrong": wrong["wrong"] if wrong else 0,
            "first_wrong": wrong["first"] if wrong else None,
            "instances": int(ran.sum()), "solved": counts["solved"], "timeouts": counts["timeout"],
            "errors": counts["error"], "invalid": counts["invalid"], "contradicted": counts["contradicted"],
            "unproven": counts["unproven"], "unchecked": counts["unchecked"], "unsupported": counts["unsupported"],
            "skipped": counts["skipped"],
            "sgm_seconds": _finite(sgm(seconds[ran], shift)), "shift_seconds": shift, "sgm_scaled": None,
            "par2_seconds": _finite(par2(seconds[ran], solved[ran], limits[ran]))}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def reference_solver(rows: dict[str, dict]) -> str | None:
    """The fastest exact solver not disqualified (lowest SGM) among those that ran the most instances (none left out),
    else among all such solvers with an SGM."""
    exact = {s: row for s, row in rows.items()
             if row["exact"] and not row["disqualified"] and row["sgm_seconds"] is not None}
    most = max((row["instances"] for row in exact.values()), default=0)
    full = {s: row for s, row in exact.items() if row["instances"] == most} or exact
    return min(full, key=lambda s: (full[s]["sgm_seconds"], s), default=None)


def paired_times(results: list[dict], kinds: list[str], a: str, b: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Counted times of solvers ``a`` and ``b`` on the instances both ran (neither left out), and those instances."""
    seconds, _ = counted_times(results, kinds)
    by: dict[str, dict[str, float]] = defaultdict(dict)
    for r, t in zip(results, seconds):
        if r["solver"] in (a, b) and not np.isnan(t):
            by[r["instance"]][r["solver"]] = t
    common = sorted(i for i, times in by.items() if a in times and b in times)
    return (np.array([by[i][a] for i in common]), np.array([by[i][b] for i in common]), common)


def summarize(results: list[dict], infos: dict[str, dict], shift: float | None = None) -> dict[str, Any]:
    """``{"shift_seconds", "time_limit", "kinds", "reference", "solvers": {NAME: row}, "pairs": [...]}``: per solver
    the counts, SGM (scaled so that ``reference``, the fastest exact solver, is 1) and PAR-2; ``pairs``: each other
    solver's SGM over the reference's, on the instances both ran, with a 95% bootstrap interval.  Pools every kind
    of the results (``kinds`` names them): call it per kind for per-kind statistics.  Repeats of a solve count
    once, at their median time (:func:`judged`).
    """
    shift = default_shift(results) if shift is None else shift
    results = judged(results)
    kinds = [r["outcome"] for r in results]
    by_solver: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(results):
        by_solver[r["solver"]].append(i)
    rows = {s: solver_row([results[i] for i in idx], [kinds[i] for i in idx], shift, is_exact(s, infos))
            for s, idx in sorted(by_solver.items())}
    reference = reference_solver(rows)
    pairs = []
    if reference is not None:
        for solver, row in rows.items():
            if row["sgm_seconds"] is not None and not row["disqualified"]:
                row["sgm_scaled"] = row["sgm_seconds"] / max(rows[reference]["sgm_seconds"], 1e-12)
            if solver == reference or row["disqualified"]:
                continue
            a, b, common = paired_times(results, kinds, reference, solver)
            if common:
                ratio, low, high = bootstrap_ratio(a, b, shift)
                pairs.append({"solver": solver, "reference": reference, "instances": len(common), "ratio": ratio,
                              "low": low, "high": high, "exact": row["exact"]})
    return {"shift_seconds": shift, "time_limit": time_limit_of(results),
            "kinds": sorted({r.get("kind", "file") for r in results}), "reference": reference, "solvers": rows,
            "pairs": pairs, "bootstrap": {"samples": BOOTSTRAP_SAMPLES, "seed": SEED, "interval": 0.95}}


def summary_by_kind(results: list[dict], infos: dict[str, dict], shift: float | None = None) -> dict[str, Any]:
    """``summarize`` of all results (``kinds`` says which are pooled) and, when there are several kinds, of each kind
    under ``by_kind`` (the same shift everywhere)."""
    shift = default_shift(results) if shift is None else shift
    summary = summarize(results, infos, shift)
    if len(summary["kinds"]) > 1:
        summary["by_kind"] = {kind: summarize([r for r in results if r.get("kind", "file") == kind], infos, shift)
                              for kind in summary["kinds"]}
    return summary


FIT_MIN_SIZES = 4  # an exponent needs at least this many sizes,
FIT_MIN_SPAN = 2.0  # spanning at least this factor in n,
FIT_MIN_PER_SIZE = 3  # with at least this many instances per size (each size's median solved)


def scaling_fit(times: dict[int, np.ndarray], *, samples: int = BOOTSTRAP_SAMPLES,
                seed: int = SEED) -> tuple[float, float, float, int, int] | None:
    """(exponent, low, high, first n, last n): the slope of log(median time) against log(n) over the sizes with at
    least FIT_MIN_PER_SIZE instances whose median is a solved time, and a 95% bootstrap interval (instances resampled
    within each size); None unless there are FIT_MIN_SIZES such sizes spanning a factor FIT_MIN_SPAN in n.

    ``times``: per n, the counted times (unsolved at the limit, so a median at the limit is no solved time) and
    ``inf`` never; pass only sizes whose median was solved.

    >>> fit = scaling_fit({n: np.array([1e-6 * n ** 3] * 3) for n in (10, 15, 20, 30)})
    >>> [round(v, 6) for v in fit[:3]], fit[3:]
    ([3.0, 3.0, 3.0], (10, 30))
    >>> scaling_fit({n: np.array([1.0] * 3) for n in (10, 12, 14, 16)}) is None  # less than a factor 2 in n
    True
    """
    sizes = sorted(n for n, t in times.items() if n > 0 and len(t) >= FIT_MIN_PER_SIZE and np.all(np.asarray(t) > 0))
    if len(sizes) < FIT_MIN_SIZES or sizes[-1] < FIT_MIN_SPAN * sizes[0]:
        return None
    x = np.log(sizes)
    slope = float(np.polyfit(x, np.log([np.median(times[n]) for n in sizes]), 1)[0])
    rng = np.random.default_rng(seed)
    medians = np.array([np.median(rng.choice(np.asarray(times[n]), size=(samples, len(times[n]))), axis=1)
                        for n in sizes])  # sizes x samples
    slopes = np.polyfit(x, np.log(medians), 1)[0]
    low, high = np.percentile(slopes, [2.5, 97.5])
    return slope, float(low), float(high), sizes[0], sizes[-1]


def annotate(results: list[dict], timed: tuple[str, ...] = TIMED) -> list[dict]:
    """Copies of the results with their judgement added: ``outcome`` (see :func:`outcome`), ``verdict`` and ``why``
    (:class:`compbench.agreement.Verdict`), ``solved``, ``compared``, ``reference_value``, ``reference_source`` and
    ``counted`` (the time the statistics use: the solve's time when its outcome is ``timed``, its limit when not,
    None when left out)."""
    judged = judge_results(results)
    kinds = [outcome(j) for j in judged]
    seconds, _ = counted_times(results, kinds, timed)
    return [{**r, "outcome": kind, "verdict": j.verdict.value, "why": j.why, "solved": j.solved, "compared": j.compared,
             "reference_value": None if j.reference is None else j.reference.objective,
             "reference_source": None if j.reference is None else j.reference.source,
             "counted": None if np.isnan(t) else float(t)}
            for r, j, kind, t in zip(results, judged, kinds, seconds)]


def verdict_records(path: str | os.PathLike) -> list[dict]:
    """The judged verdict of every answer of a run file, as the records a run file ends with: instance, solver,
    status, verdict, why, outcome, solved, compared, and the reference value and its source."""
    from .runfiles import load_runs

    results, _ = load_runs([path])
    return [{"type": "verdict", "instance": r["instance"], "solver": r["solver"],
             **({"repeat": r["repeat"]} if "repeat" in r else {}), "status": r.get("status"),
             "verdict": r["verdict"], "why": r["why"], "outcome": r["outcome"], "solved": r["solved"],
             "compared": r["compared"], "reference": encode_number(r["reference_value"]),
             "reference_source": r["reference_source"]} for r in annotate(results)]


def left_out_reason(records: list[dict]) -> str:
    """Why a solver has no point among ``records``: e.g. ``unsupported: exact length is not supported`` (the first
    unsupported message without the solver's name), else the outcome counts."""
    for r in records:
        if r.get("status") == "unsupported" and r.get("message"):
            message = r["message"].split(": ", 1)[-1] if r["message"].startswith(r["solver"]) else r["message"]
            return f"unsupported: {message.split(' (')[0].split('; ')[0][:70]}"
    counts = defaultdict(int)
    for r in records:
        counts[r.get("outcome") or r.get("status")] += 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


WORST_FIRST = ("invalid", "contradicted", "error", "timeout", "skipped", "unchecked", "unproven", "unsupported",
               "solved")  # which repeat speaks for a pair: the worst outcome


def judged(results: list[dict], timed: tuple[str, ...] = TIMED) -> list[dict]:
    """:func:`annotate`, then one record per (instance, solver): repeats merged (``bench --repeats``) into the
    worst outcome among them, timed by the median of their counted times (``seconds.total``) when every repeat's
    outcome is ``timed``, else as the worst, with every repeat's counted time under ``repeat_seconds``."""
    return merge_repeats(annotate(results, timed), timed)


def merge_repeats(annotated: list[dict], timed: tuple[str, ...] = TIMED) -> list[dict]:
    """One record per (instance, solver) of :func:`annotate`'s records, as :func:`judged` describes."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in annotated:
        groups[r["instance"], r["solver"]].append(r)
    out = []
    for records in groups.values():
        if len(records) == 1:
            out.append(records[0])
            continue
        worst = min(records, key=lambda r: WORST_FIRST.index(r["outcome"]))
        times = [r["counted"] for r in records if r["counted"] is not None]
        median = float(np.median(times)) if times else None
        if worst["outcome"] not in timed:  # a pair not solved in every repeat is unsolved: timed as its worst
            median = worst["counted"]
        out.append({**worst, "seconds": {"total": median}, "counted": median, "repeat_seconds": times})
    return out


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
    """
    if instances < MIN_TIMED_INSTANCES:
        return "too few"
    return "slower" if low > threshold else "faster" if high < 1.0 / threshold else "same"


# compare times a proven answer that nothing in its own run contradicted or compared (a solver run alone) by its own
# time too: the other run checks it (an optimum that differs between the runs is reported, exit 1)
COMPARE_TIMED = ("solved", "unchecked")


def compare_runs(a: list[dict], b: list[dict], shift: float | None = None,
                 min_effect: float = MIN_EFFECT) -> dict[str, Any]:
    """Run ``b`` against run ``a``, per solver over the instances both runs hold for it (the same id and content
    hash; neither left out): the SGM of each and their ratio b / a with its bootstrap interval, a ``verdict``
    (:func:`timing_verdict` against the larger of ``min_effect`` and the noise the runs' repeats measured), the
    instances one solved and the other did not, how many have a proven answer in both (``proven_both``), and every
    instance whose proven answers differ (``optimal`` in both with other objectives, or optimal in one and
    infeasible in the other; neither invalid), with both values.  Returns ``{"threshold", "noise", "min_effect",
    "shift_seconds", "solvers": {solver: row}, "unpaired": {solver: why}}`` (``unpaired``: the solvers with no
    instance timed in both runs).

    >>> run = lambda t, obj: [{"instance": "x", "solver": "s", "n": 3, "status": "optimal", "objective": obj,
    ...                        "seconds": {"total": t}, "time_limit": 10.0,
    ...                        "reference": {"status": "optimal", "objective": obj, "source": "certified"}}]
    >>> row = compare_runs(run(1.0, 2.0), run(2.0, 2.5), shift=0.0)["solvers"]["s"]
    >>> row["ratio"], row["objective_differs"], row["verdict"]
    (2.0, [{'instance': 'x', 'a': 2.0, 'b': 2.5}], 'too few')
    """
    from compbench.agreement import objectives_agree

    shift = default_shift(a + b) if shift is None else shift
    first, second = judged(a, COMPARE_TIMED), judged(b, COMPARE_TIMED)
    noises = [x for x in (noise_factor(first, COMPARE_TIMED), noise_factor(second, COMPARE_TIMED)) if x is not None]
    noise = max(noises) if noises else None
    threshold = max(min_effect, noise or 0.0)
    index = lambda rs: {(r["solver"], r["instance"], r.get("hash")): r for r in rs if r["counted"] is not None}
    ia, ib = index(first), index(second)
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
        ta, tb = np.array([r["counted"] for r in ra]), np.array([r["counted"] for r in rb])
        ratio, low, high = bootstrap_ratio(ta, tb, shift)
        names = [key[1] for key in common]
        proven = [(i, x, y) for i, x, y in zip(names, ra, rb) if {x["status"], y["status"]} <= {"optimal", "infeasible"}
                  and "invalid" not in (x["outcome"], y["outcome"])]
        claim = lambda r: "infeasible" if r["status"] == "infeasible" else decode_number(r["objective"])  # noqa: E731
        differs = [{"instance": i, "a": claim(x), "b": claim(y)} for i, x, y in proven
                   if x["status"] != y["status"] or x["status"] == "optimal" and not objectives_agree(
                       float(claim(x)), float(claim(y)), slack=recorded_error(x) + recorded_error(y))]
        rows[solver] = {"solver": solver, "instances": len(common), "sgm_a": _finite(sgm(ta, shift)),
                        "sgm_b": _finite(sgm(tb, shift)), "ratio": ratio, "low": low, "high": high,
                        "verdict": timing_verdict(low, high, threshold, len(common)) if any(
                            r["outcome"] in COMPARE_TIMED for r in ra + rb) else "unsolved",
                        "proven_both": len(proven),
                        "solved_a": sum(r["outcome"] == "solved" for r in ra),
                        "solved_b": sum(r["outcome"] == "solved" for r in rb),
                        "only_a": [i for i, x, y in zip(names, ra, rb) if x["outcome"] == "solved" != y["outcome"]],
                        "only_b": [i for i, x, y in zip(names, ra, rb) if y["outcome"] == "solved" != x["outcome"]],
                        "objective_differs": differs}
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


def judged_summary(run: str) -> tuple[str, list[str], int, str | None]:
    """The outcomes of a run file's (instance, solver) pairs, repeats merged as :func:`judged` merges them (solved:
    validated and agreeing with the reference, see :func:`outcome`), a FAIL line per invalid or contradicted answer
    (as ``check`` prints them, every repeat), how many instances
    were compared, and why the run failed without a wrong answer (nothing compared, a solver that only errored)."""
    from .runfiles import load_runs

    results, _ = load_runs([run])
    answers = annotate(results)
    pairs = merge_repeats(answers)
    kinds = [r["outcome"] for r in pairs]
    fails = [f"FAIL {r['solver']} on {r['instance']}" + (f" (repeat {r['repeat']})" if "repeat" in r else "") + ": "
             + ("disagrees" if r["outcome"] == "contradicted" else r["outcome"]) + f": {r['why']}"
             for r in sorted(answers, key=lambda r: (r["instance"], r["solver"], r.get("repeat", 0)))
             if r["outcome"] in WRONG]
    compared = len({r["instance"] for r in answers if r["compared"]})
    why = None
    if not compared:
        why = "nothing was compared: no answer was judged against a reference optimum or a second proven answer"
    errors = sorted({r["solver"] for r in answers} - {r["solver"] for r in answers if r["outcome"] != "error"})
    if errors:
        why = "; ".join(filter(None, [why, f"every answer of {', '.join(errors)} is an error"]))
    counts = ", ".join(f"{o} {kinds.count(o)}" for o in OUTCOMES if kinds.count(o))
    if len(pairs) < len(answers):
        counts += (f" (instance-solver pairs, each the worst of its {max(r.get('repeat', 0) for r in answers) + 1}"
                   " repeats)")
    return counts, fails, compared, why
