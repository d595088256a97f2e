"""The statistics of run files, one home for report, plots, compare and bench: what counts as solved, the shifted
geometric mean (SGM), PAR-2, bootstrap intervals of SGM ratios, and performance-profile data.

What counts as solved: an ``optimal`` or ``infeasible`` answer that passed validation (its ``validity`` is ``ok``)
and agrees with its instance's reference (:func:`compbench.agreement.verdict`, with the reference the run file
recorded: a certified optimum or one the resource-constrained DP computed in the run, else the best valid objective
any answer reached, see :mod:`.references`).  A solver with any invalid or contradicted answer is disqualified.

Times: :func:`runtime` of each result (``seconds.total``, setup + solve, or the worker's clock when that is longer).
An instance a solver ran but did not solve (timeout, error, invalid or contradicted answer, ``feasible`` without a
proof, an answer after its time limit) or was skipped on counts at its time limit;
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

from compbench.records import encode_number, runtime
from compbench.registry import base_name

from .judging import judge_results, outcome

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


def time_limit_of(results: Iterable[dict]) -> float | None:
    """The largest time limit of the results (None when no solve had one)."""
    limits = [float(r["time_limit"]) for r in results if r.get("time_limit") is not None]
    return max(limits) if limits else None


def default_shift(results: list[dict]) -> float:
    """SHIFT_FRACTION of the largest time limit (1 ms without one): 5 ms for a 5 s limit, 60 ms for 60 s."""
    return shift_for(time_limit_of(results))


def shift_for(limit: float | None) -> float:
    """The default shift of runs whose largest time limit is ``limit`` (None: none): :func:`default_shift`'s rule."""
    return SHIFT_FRACTION * limit if limit else 1e-3


TIMED = ("solved",)  # the outcomes timed by their own time; every other (not left out) counts at its limit


def counted_times(results: list[dict], kinds: list[str], timed: tuple[str, ...] = TIMED) -> np.ndarray:
    """The seconds of each result for the time statistics: the time of a result whose outcome is ``timed``, an
    unsolved one's limit (its own time when that is longer); left-out results are NaN.  An unsolved result without
    a limit counts at the run's largest limit, else at the longest time any result of the run took: an answer with
    no proof never counts faster than a solved one (an all-error solver ranked fastest at its error's time)."""
    fallback = time_limit_of(results)
    if fallback is None:
        fallback = max((t for r in results if (t := runtime(r)) is not None), default=None)
    seconds = np.full(len(results), np.nan)
    for i, (r, kind) in enumerate(zip(results, kinds)):
        if kind in LEFT_OUT:
            continue
        t = runtime(r)
        if kind in timed and t is not None:
            seconds[i] = max(t, 0.0)
        else:
            limit = r.get("time_limit") if r.get("time_limit") is not None else fallback
            seconds[i] = max(float(limit) if limit is not None else 0.0, t or 0.0)
    return seconds


def sgm(seconds: np.ndarray, shift: float) -> float:
    """Shifted geometric mean exp(mean(log(t + shift))) - shift (NaN for no times).

    >>> round(sgm(np.array([0.0, 0.99]), shift=0.01), 6)  # exp(mean(log(0.01), log(1))) - 0.01
    0.09
    """
    seconds = np.asarray(seconds, dtype=float)
    if seconds.size == 0:
        return math.nan
    return float(_sgms(seconds[None, :], shift)[0])


def _sgms(seconds: np.ndarray, shift: float) -> np.ndarray:
    """The SGM of every row of ``seconds``, as shift * expm1(mean(log1p(t / shift))): exactly 0 for times of 0 (the
    textbook form's exp(log(s)) - s leaves rounding, 1.7e-18 for s = 5 ms, which a ratio then divides by)."""
    with np.errstate(divide="ignore"):
        if shift > 0:
            return np.maximum(0.0, shift * np.expm1(np.mean(np.log1p(seconds / shift), axis=-1)))
        return np.exp(np.mean(np.log(seconds), axis=-1))


def par2(seconds: np.ndarray, solved: np.ndarray, limits: np.ndarray) -> float:
    """PAR-2: the mean time with each unsolved instance counted at twice its limit."""
    seconds, limits = np.asarray(seconds, dtype=float), np.asarray(limits, dtype=float)
    return float(np.mean(np.where(solved, seconds, 2.0 * limits))) if seconds.size else math.nan


def bootstrap_ratio(a: np.ndarray, b: np.ndarray, shift: float, *, samples: int = BOOTSTRAP_SAMPLES,
                    seed: int = SEED) -> tuple[float, float, float]:
    """sgm(b) / sgm(a) over paired times (the same instances), and a 95% percentile bootstrap interval from
    ``samples`` resamples of the instances (seeded: the same numbers every time); NaN when either SGM is 0 (every
    time 0: the ratio says nothing).

    >>> ratio, low, high = bootstrap_ratio(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 4.0, 6.0, 9.0]), 0.0)
    >>> round(ratio, 3), low <= ratio <= high
    (2.06, True)
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    below, above = (sgm(a, shift), sgm(b, shift)) if a.size else (math.nan, math.nan)
    if not (below > 0 and above > 0):  # no time, or an SGM of times of 0: nothing to divide
        return math.nan, math.nan, math.nan
    ratio = above / below
    picks = np.random.default_rng(seed).integers(0, a.size, size=(samples, a.size))
    below_sampled, above_sampled = _sgms(a[picks], shift), _sgms(b[picks], shift)
    usable = (below_sampled > 0) & (above_sampled > 0)  # a resample of only times of 0 has no ratio either
    low, high = np.percentile(above_sampled[usable] / below_sampled[usable], [2.5, 97.5])
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


def solver_row(records: list[dict], kinds: list[str], shift: float, exact: bool,
               wrong: dict[str, Any] | None = None) -> dict[str, Any]:
    """The statistics of one solver's judged results (``kinds``: their outcomes; times: their ``counted``, see
    :func:`annotate`; ``wrong``: its entry of
    :func:`disqualified` over every run, None when it gave no wrong answer); the same keys for every solver."""
    counts = {k: kinds.count(k) for k in OUTCOMES}
    seconds = np.array([math.nan if r["counted"] is None else r["counted"] for r in records])
    solved = np.array([kind in TIMED for kind in kinds], bool)
    ran = ~np.isnan(seconds)
    limits = np.array([float(r["time_limit"]) if r.get("time_limit") is not None else seconds[i]
                       for i, r in enumerate(records)])  # no limit: an unsolved result's counted time stands for it
    return {"exact": exact, "disqualified": wrong is not None, "wrong": wrong["wrong"] if wrong else 0,
            "first_wrong": wrong["first"] if wrong else None,
            "instances": int(ran.sum()), "solved": counts["solved"], "timeouts": counts["timeout"],
            "errors": counts["error"], "invalid": counts["invalid"], "contradicted": counts["contradicted"],
            "unproven": counts["unproven"], "unchecked": counts["unchecked"], "unsupported": counts["unsupported"],
            "skipped": counts["skipped"],
            "sgm_seconds": finite_or_none(sgm(seconds[ran], shift)), "shift_seconds": shift, "sgm_scaled": None,
            "par2_seconds": finite_or_none(par2(seconds[ran], solved[ran], limits[ran]))}


def finite_or_none(value: float) -> float | None:
    """``value``, or None when it is not finite (JSON has no infinity)."""
    return value if math.isfinite(value) else None


def reference_solver(rows: dict[str, dict]) -> str | None:
    """The fastest exact solver not disqualified (lowest SGM) that solved an instance, among those that ran the most
    instances (none left out), else among all such solvers with an SGM; None when no exact solver solved one."""
    exact = {s: row for s, row in rows.items()
             if row["exact"] and not row["disqualified"] and row["solved"] and row["sgm_seconds"] is not None}
    most = max((row["instances"] for row in exact.values()), default=0)
    full = {s: row for s, row in exact.items() if row["instances"] == most} or exact
    return min(full, key=lambda s: (full[s]["sgm_seconds"], s), default=None)


def paired_times(results: list[dict], a: str, b: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Counted times of solvers ``a`` and ``b`` on the instances both ran (neither left out), and those instances."""
    by: dict[str, dict[str, float]] = defaultdict(dict)
    for r in results:
        if r["solver"] in (a, b) and r["counted"] is not None:
            by[r["instance"]][r["solver"]] = r["counted"]
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
    return summarize_judged(judged(results), infos, shift)


def summarize_judged(results: list[dict], infos: dict[str, dict], shift: float | None = None,
                     wrong: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """:func:`summarize` of records :func:`judged` already (judged with every other answer of their runs: a subset,
    one kind or one solver family, is never judged alone, which would lose its second opinions and the
    disqualifications found elsewhere).  ``wrong``: the disqualified solvers of the whole (:func:`disqualified`;
    default: those of ``results``)."""
    shift = default_shift(results) if shift is None else shift
    kinds = [r["outcome"] for r in results]
    wrong = disqualified(results, kinds) if wrong is None else wrong
    by_solver: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(results):
        by_solver[r["solver"]].append(i)
    rows = {s: solver_row([results[i] for i in idx], [kinds[i] for i in idx], shift, is_exact(s, infos),
                          wrong.get(s))
            for s, idx in sorted(by_solver.items())}
    reference = reference_solver(rows)
    pairs = []
    if reference is not None:
        for solver, row in rows.items():
            if row["sgm_seconds"] is not None and not row["disqualified"] and rows[reference]["sgm_seconds"] > 0:
                row["sgm_scaled"] = row["sgm_seconds"] / rows[reference]["sgm_seconds"]
            if solver == reference or row["disqualified"]:
                continue
            a, b, common = paired_times(results, reference, solver)
            ratio, low, high = bootstrap_ratio(a, b, shift)
            if common and not math.isnan(ratio):  # times of 0 on either side: no ratio, the cell says '-'
                pairs.append({"solver": solver, "reference": reference, "instances": len(common), "ratio": ratio,
                              "low": low, "high": high, "exact": row["exact"]})
    return {"shift_seconds": shift, "time_limit": time_limit_of(results),
            "kinds": sorted({r.get("kind", "file") for r in results}), "reference": reference, "solvers": rows,
            "pairs": pairs, "bootstrap": {"samples": BOOTSTRAP_SAMPLES, "seed": SEED, "interval": 0.95}}


def summary_by_kind(results: list[dict], infos: dict[str, dict], shift: float | None = None) -> dict[str, Any]:
    """``summarize`` of all results (``kinds`` says which are pooled) and, when there are several kinds, of each kind
    under ``by_kind`` (the same shift everywhere)."""
    shift = default_shift(results) if shift is None else shift
    records = judged(results)
    summary = summarize_judged(records, infos, shift)
    wrong = disqualified(records)
    if len(summary["kinds"]) > 1:  # each kind's table, judged with every answer (a solver wrong elsewhere stays so)
        summary["by_kind"] = {kind: summarize_judged([r for r in records if r.get("kind", "file") == kind], infos,
                                                     shift, wrong) for kind in summary["kinds"]}
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
    (:class:`compbench.agreement.Verdict`), ``solved`` (the outcome is ``solved``: an answer after its limit is
    not, though its judgement held), ``compared``, ``reference_value``, ``reference_source`` and
    ``counted`` (the time the statistics use: the solve's time when its outcome is ``timed``, its limit when not,
    None when left out)."""
    judged = judge_results(results)
    kinds = [outcome(j, r) for r, j in zip(results, judged)]
    seconds = counted_times(results, kinds, timed)
    return [{**r, "outcome": kind, "verdict": j.verdict.value, "why": j.why, "solved": kind == "solved",
             "compared": j.compared,
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
    worst outcome among them, timed by the median of their counted times (:func:`runtime`) when every repeat's
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


def judged_summary(run: str) -> tuple[str, list[str], str, str | None]:
    """The outcomes of a run file's (instance, solver) pairs, repeats merged as :func:`judged` merges them (solved:
    validated and agreeing with the reference, see :func:`outcome`), a FAIL line per invalid or contradicted answer
    (as ``check`` prints them, every repeat), how many of the file's instances were compared (``compared 7 of 7
    instances``: the whole file, a resumed run's earlier part too), and why the run failed without a wrong answer
    (nothing compared, a solver that only errored)."""
    from .runfiles import load_runs

    results, _ = load_runs([run])
    answers = annotate(results)
    pairs = merge_repeats(answers)
    kinds = [r["outcome"] for r in pairs]
    fails = [f"FAIL {r['solver']} on {r['instance']}" + (f" (repeat {r['repeat']})" if "repeat" in r else "") + ": "
             + ("disagrees" if r["outcome"] == "contradicted" else r["outcome"]) + f": {r['why']}"
             for r in sorted(answers, key=lambda r: (r["instance"], r["solver"], r.get("repeat", 0)))
             if r["outcome"] in WRONG]
    count = len({r["instance"] for r in answers if r["compared"]})
    compared = f"compared {count} of {len({r['instance'] for r in answers})} instances"
    why = None
    if not count:
        why = "nothing was compared: no answer was judged against a reference optimum or a second proven answer"
    declined = ("error", "unsupported", "skipped")  # an answer of none: no solver that only declines has solved
    errors = sorted({r["solver"] for r in answers if r["outcome"] == "error"}
                    - {r["solver"] for r in answers if r["outcome"] not in declined})
    if errors:
        why = "; ".join(filter(None, [why, f"every answer of {', '.join(errors)} is an error (or unsupported)"]))
    counts = ", ".join(f"{o} {kinds.count(o)}" for o in OUTCOMES if kinds.count(o))
    if len(pairs) < len(answers):
        counts += (f" (instance-solver pairs, each the worst of its {max(r.get('repeat', 0) for r in answers) + 1}"
                   " repeats)")
    return counts, fails, compared, why
