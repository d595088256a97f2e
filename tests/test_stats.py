"""The statistics of run files against hand-computed values (compbench.harness.stats)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from compbench.harness.judging import judge_results, outcome, outcomes
from compbench.harness.stats import (annotate, bootstrap_ratio, par2, profile_fractions, profile_ratios, scaling_fit,
                                     sgm, summarize, summary_by_kind)


def result(instance: str, solver: str, status: str, seconds: float = 1.0, objective: float | None = 1.0,
           validity: str = "ok", reference: float | dict | None = 1.0, **extra: Any) -> dict:
    """A result record as a run file holds it, with its instance's recorded reference (an optimum, a reference
    record's fields, or None: none)."""
    heads = {"kept": [1], "heads": [0]} if objective is not None else {}
    recorded = {} if reference is None else {"reference": reference if isinstance(reference, dict) else {
        "status": "optimal", "objective": reference, "source": "test"}}
    return {"type": "result", "instance": instance, "solver": solver, "n": 3, "kind": "gaussian", "status": status,
            "objective": objective, "bound": None, "seconds": {"total": seconds}, "time_limit": 10.0,
            "validity": validity, **heads, **recorded, **extra}


def test_sgm_with_a_shift_and_par2() -> None:
    assert sgm(np.array([1.0, 4.0]), shift=1.0) == pytest.approx(math.sqrt(2 * 5) - 1)
    assert sgm(np.array([1.0, 4.0]), shift=0.0) == pytest.approx(2.0)
    assert par2(np.array([1.0, 4.0, 9.0]), np.array([True, True, False]), np.full(3, 10.0)) == pytest.approx(25 / 3)


def test_summary_counts_unsolved_at_the_limit_and_scales_by_the_fastest_exact_solver() -> None:
    results = [result("a", "slow", "optimal", 1.0), result("b", "slow", "optimal", 4.0),
               result("c", "slow", "timeout", 10.4, None), result("d", "slow", "unsupported", 0.0, None),
               *(result(i, "fast", "optimal", 0.5) for i in "abcd")]
    summary = summarize(results, {}, shift=1.0)
    slow, fast = summary["solvers"]["slow"], summary["solvers"]["fast"]
    # times 1, 4 and the timeout at its own 10.4 s (longer than the 10 s limit); unsupported left out
    assert (slow["instances"], slow["solved"], slow["timeouts"], slow["unsupported"]) == (3, 2, 1, 1)
    assert slow["sgm_seconds"] == pytest.approx((2 * 5 * 11.4) ** (1 / 3) - 1)
    assert slow["par2_seconds"] == pytest.approx((1 + 4 + 20) / 3)
    assert summary["reference"] == "fast" and fast["sgm_scaled"] == 1.0
    assert slow["sgm_scaled"] == pytest.approx(slow["sgm_seconds"] / 0.5)
    (pair,) = summary["pairs"]  # over the 3 instances both ran
    assert pair["instances"] == 3 and pair["ratio"] == pytest.approx(slow["sgm_seconds"] / 0.5)
    assert set(slow) == set(fast)


def test_what_counts_as_solved_without_a_recorded_reference() -> None:
    """No reference recorded: the best valid objective (5, the oracle's) is a lower bound, and a proven answer that
    agrees with it counts as solved only beside a second proven answer that agrees with it too (the liar's and the
    low claim contradict it: they are no second opinion, and the oracle alone was counted solved beside them)."""
    results = [result("a", "oracle", "optimal", 1.0, 5.0, reference=None),
               result("a", "liar", "infeasible", 1.0, None, reference=None),
               result("a", "low", "optimal", 1.0, 4.0, reference=None),
               result("a", "broken", "optimal", 1.0, 6.0, "invalid: a cycle", reference=None),
               result("a", "lagrangian", "feasible", 1.0, 5.0, reference=None)]
    assert outcomes(results) == ["unchecked", "contradicted", "contradicted", "invalid", "unproven"]
    twin = result("a", "twin", "optimal", 2.0, 5.0 + 1e-12, reference=None)
    assert outcomes(results + [twin]) == ["solved", "contradicted", "contradicted", "invalid", "unproven", "solved"]
    assert outcomes([results[0], {**twin, "solver": "oracle[x=1]"}]) == ["unchecked"] * 2  # the same solver twice
    assert outcomes(results[:1]) == ["unchecked"]  # alone: nothing to judge it against
    summary = summarize(results + [twin], {"lagrangian": {"exact": False}}, shift=1.0)
    assert summary["solvers"]["liar"]["sgm_seconds"] == pytest.approx(10.0)  # counted at the limit
    assert summary["solvers"]["lagrangian"]["exact"] is False and summary["reference"] == "oracle"


def test_a_valid_answer_that_beats_the_reference_refutes_it() -> None:
    """A valid tree is a fact about the instance: one that beats the reference optimum (here computed in the run by
    resource-dp) proves the reference wrong, so resource-dp's claim is the contradicted one, not the answer."""
    ref = {"status": "optimal", "objective": 5.0, "source": "resource-dp in this run", "solver": "resource-dp"}
    results = [{**result("a", "resource-dp", "optimal", 1.0, 5.0), "reference": ref},
               {**result("a", "better", "optimal", 1.0, 6.0), "reference": ref}]
    judged = judge_results(results)
    assert [outcome(j) for j in judged] == ["contradicted", "unchecked"]
    assert "it refutes 5.0 (resource-dp in this run)" in judged[0].why


def test_the_references_of_a_solver_found_wrong_are_set_aside() -> None:
    """resource-dp is wrong on b (against a certified optimum): its own reference on a no longer makes a lone
    answer there solved; with a second solver agreeing, a is solved again."""
    own = {"status": "optimal", "objective": 5.0, "source": "resource-dp in this run", "solver": "resource-dp"}
    certified = {"status": "optimal", "objective": 9.0, "source": "certified, set.solu.json"}
    results = [{**result("a", "resource-dp", "optimal", 1.0, 5.0), "reference": own},
               {**result("a", "lone", "optimal", 1.0, 5.0), "reference": own},
               {**result("b", "resource-dp", "optimal", 1.0, 8.0), "reference": certified}]
    judged = judge_results(results)
    assert [outcome(j) for j in judged] == ["solved", "unchecked", "contradicted"]
    assert "set aside: resource-dp is disqualified" in judged[1].reference.source
    second = {**result("a", "second", "optimal", 1.0, 5.0), "reference": own}
    assert outcomes(results + [second])[1] == "solved"


def test_a_lone_wrong_answer_is_caught_by_the_recorded_reference() -> None:
    """One solver alone, claiming optimal 2.19 where the reference optimum is 10.53: contradicted, disqualified."""
    results = [result("a", "sloppy", "optimal", 1.0, 2.19, reference=10.53),
               result("b", "sloppy", "optimal", 1.0, 1.0)]
    assert outcomes(results) == ["contradicted", "solved"]
    row = summarize(results, {}, shift=1.0)["solvers"]["sloppy"]
    assert row["disqualified"] and (row["wrong"], row["first_wrong"]) == (1, "a") and row["sgm_scaled"] is None


def test_performance_profile_fractions() -> None:
    times = np.array([[1.0, 2.0, np.inf], [3.0, 1.5, np.inf], [np.inf, np.inf, np.inf]])
    ratios = profile_ratios(times)
    assert ratios.tolist() == [[1.0, 2.0, math.inf], [2.0, 1.0, math.inf], [math.inf] * 3]
    fractions = profile_fractions(ratios, np.array([1.0, 1.9, 2.0, 1e9]))
    assert fractions[0].tolist() == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3])  # never 1: one instance unsolved
    assert fractions[2].tolist() == [0.0] * 4


def test_bootstrap_interval_is_seeded_and_contains_the_estimate() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(0.1, 1.0, 30)
    b = a * rng.uniform(1.5, 2.5, 30)
    first, second = bootstrap_ratio(a, b, 0.01), bootstrap_ratio(a, b, 0.01)
    assert first == second
    ratio, low, high = first
    assert low < ratio < high and 1.5 < ratio < 2.5


def test_exponents_need_four_sizes_over_a_factor_two_with_three_instances_each() -> None:
    cubic = {n: np.array([1e-6 * n ** 3 * f for f in (0.9, 1.0, 1.1)]) for n in (10, 14, 20, 28)}
    slope, low, high, first, last = scaling_fit(cubic)
    assert slope == pytest.approx(3.0) and low <= slope <= high and (first, last) == (10, 28)
    assert scaling_fit({n: t for n, t in cubic.items() if n != 28}) is None  # three sizes
    assert scaling_fit({n: t[:2] for n, t in cubic.items()}) is None  # two instances per size


def test_the_report_tables_show_no_negative_memory_and_explain_the_complexity_column() -> None:
    from compbench.harness.report import size_table, solver_table
    from compbench.harness.stats import annotate

    results = [{**result(f"i{k}", "resource-dp", "optimal", 0.01), "peak_memory_scope": "solve",
                "peak_memory_mb": 80.0, "memory_before_mb": 80.0 + shrink} for k, shrink in enumerate((0.3, 0.2, 0.1))]
    results += [{**result(f"i{k}", "hook-dp", "optimal", 0.01), "peak_memory_scope": "solve",
                 "peak_memory_mb": 90.0 + growth, "memory_before_mb": 90.0}
                for k, growth in enumerate((1.0, 2.0, -0.1))]
    sizes = size_table(annotate(results))
    rows = {line.split(" | ")[0].strip("| "): line.rstrip(" |").rsplit(" | ", 1)[1] for line in sizes[2:4]}
    assert rows == {"hook-dp": "1.0", "resource-dp": "0.0"}  # medians of (1, 2, 0) and (0, 0, 0), never -0.2
    assert "shown as 0.0" in sizes[-1]
    solvers = solver_table(annotate(results), {"resource-dp": {"exact": True, "complexity": "O(n^3 d^2) time"}})
    assert "(5 (n^3 d^2))" in solvers[3] and solvers[-1].startswith("Complexity: ")
    assert "exponent k of n" in solvers[-1] and "`none`: a MIP" in solvers[-1]


def test_a_set_aside_reference_stays_a_lower_bound() -> None:
    """resource-dp is wrong on y, so its reference on x is set aside; its value, a validated tree's, still bounds
    the optimum: a's claim below it stays contradicted (it was 'unchecked', and a's disqualification hidden)."""
    dp = {"status": "optimal", "objective": 5.0, "source": "resource-dp in this run", "solver": "resource-dp"}
    cert = {"status": "optimal", "objective": 3.0, "source": "certified"}
    results = [result("x", "resource-dp", "timeout", objective=None, reference=dp),
               result("x", "a", "optimal", objective=4.0, reference=dp),
               result("y", "resource-dp", "optimal", objective=2.0, reference=cert),
               result("z", "a", "optimal", objective=7.0, reference=None),
               result("z", "b", "optimal", objective=7.0, reference=None)]
    assert outcomes(results) == ["timeout", "contradicted", "contradicted", "solved", "unchecked"]  # z: b confirms
    # a's answer; a, wrong elsewhere, is no second opinion for b's


def test_verdicts_do_not_depend_on_the_order_of_the_records() -> None:
    """Two best valid answers of one value but other float64 errors, and two runs' references of one optimum from
    other sources: the same verdicts in any order (the first record's error, the last file's reference, won)."""
    tied = [result("x", "a", "feasible", objective=5.0, reference=None, objective_error=0.5),
            result("x", "b", "feasible", objective=5.0, reference=None),
            result("x", "c", "optimal", objective=4.7, reference=None),
            result("x", "d", "optimal", objective=4.7, reference=None)]
    assert outcomes(tied) == outcomes([tied[1], tied[0], *tied[2:]]) == ["unproven", "unproven", "solved", "solved"]
    cert = {"status": "optimal", "objective": 5.0, "source": "certified, x.solu.json"}
    dp = {"status": "optimal", "objective": 5.0, "source": "resource-dp in this run", "solver": "resource-dp"}
    runs = [result("x", "resource-dp", "optimal", objective=5.0, reference=cert),
            result("x", "resource-dp", "optimal", objective=5.0, reference=dp, repeat=1)]
    assert outcomes(runs) == outcomes(runs[::-1]) == ["solved", "solved"]  # against the certified optimum


def test_an_unreadable_tree_is_no_best_valid_answer() -> None:
    bad = result("x", "a", "feasible", objective=9.0, reference=None, kept=[7])  # beyond n = 3: invalid
    agreeing = [result("x", "b", "optimal", objective=5.0, reference=None),
                result("x", "c", "optimal", objective=5.0, reference=None)]
    assert outcomes([bad, *agreeing]) == ["invalid", "solved", "solved"]


def test_each_kinds_table_is_judged_with_every_answer() -> None:
    """a is wrong on a gaussian instance: in the uniform table too it is disqualified, and its answer there is no
    second opinion for b (judging the kind alone made b solved and a clean)."""
    cert = {"status": "optimal", "objective": 5.0, "source": "certified"}
    results = [result("x", "a", "optimal", objective=4.0, reference=cert),
               {**result("y", "a", "optimal", objective=7.0, reference=None), "kind": "uniform"},
               {**result("y", "b", "optimal", objective=7.0, reference=None), "kind": "uniform"}]
    uniform = summary_by_kind(results, {}, shift=1.0)["by_kind"]["uniform"]["solvers"]
    assert uniform["a"]["disqualified"] and uniform["b"]["solved"] == 0 and uniform["b"]["unchecked"] == 1


def test_an_answer_after_its_limit_is_not_solved_in_the_verdicts_either() -> None:
    """A proven answer in the grace after its limit is a timeout in the tables, but annotate (results.csv and the
    verdict records) still called it solved: df[df.solved] held it."""
    late = result("a", "late", "optimal", 12.0)
    (record,) = annotate([late, result("a", "other", "optimal", 1.0)])[:1]
    assert record["outcome"] == "timeout" and record["solved"] is False
    assert summarize([late], {}, shift=1.0)["solvers"]["late"]["timeouts"] == 1


def test_times_of_zero_give_an_sgm_of_zero_and_no_ratio() -> None:
    """exp(mean(log(t + s))) - s of times of 0 left rounding (1.7e-18 for s = 5 ms), which the scaled SGM and the
    paired ratio then divided by (1e14 against a solver of 0.1 s); with --shift 1 the report died on an infinity."""
    zero = [result(i, "zero", "optimal", 0.0) for i in "abcdef"]
    slow = [result(i, "slow", "optimal", 0.1) for i in "abcdef"]
    assert sgm(np.zeros(6), 0.005) == 0.0 and sgm(np.zeros(6), 1.0) == 0.0 and sgm(np.zeros(6), 0.0) == 0.0
    assert all(math.isnan(x) for x in bootstrap_ratio(np.zeros(6), np.full(6, 0.1), 0.005))
    for shift in (0.005, 1.0):
        summary = summarize(zero + slow, {}, shift=shift)
        assert summary["reference"] == "zero" and summary["pairs"] == []
        assert summary["solvers"]["zero"]["sgm_seconds"] == 0.0
        assert summary["solvers"]["zero"]["sgm_scaled"] is None and summary["solvers"]["slow"]["sgm_scaled"] is None
    ratio, low, high = bootstrap_ratio(np.array([0.0] * 5 + [0.1]), np.full(6, 0.1), 0.005)
    assert math.isfinite(low) and low <= ratio <= high  # resamples of only zeros are left out


def test_without_a_limit_an_unsolved_answer_counts_at_the_longest_time_of_the_run() -> None:
    """No time limit: an error counted at its own 10 us made a solver that solved nothing the fastest, the
    reference every solved one was scaled by."""
    records = [{**r, "time_limit": None} for r in
               [result(i, "broken", "error", 1e-5, None) for i in "abc"]
               + [result(i, "solver", "optimal", t) for i, t in zip("abc", (0.5, 1.0, 2.0))]]
    summary = summarize(records, {}, shift=0.001)
    broken = summary["solvers"]["broken"]
    assert broken["sgm_seconds"] == pytest.approx(2.0) and broken["par2_seconds"] == pytest.approx(4.0)
    assert summary["reference"] == "solver"


def test_the_default_speedup_baseline_solved_something() -> None:
    """Without an ILP the baseline is the slowest exact solver: one that timed out everywhere was taken, and the
    speed-up figure had nothing to divide by ('no speed-up to plot')."""
    from compbench.harness.plots import speedup_baseline
    from compbench.harness.stats import judged

    records = [result(i, "fast", "optimal", 0.1) for i in "abc"] + [result(i, "slow", "optimal", 1.0) for i in "abc"]
    records += [result(i, "stuck", "timeout", 10.0, None) for i in "abc"]
    assert speedup_baseline(judged(records), {}) == "slow"


def test_a_late_optimum_still_measures_the_gaps_of_the_others() -> None:
    """A proven, agreeing optimum after its limit is a timeout in the statistics, but still the instance's verified
    optimum for the gap figure (the others' gaps on that instance vanished when annotate's solved changed)."""
    from compbench.harness.plots import objective_gaps

    records = [result("a", "late", "optimal", 12.0, 5.0, reference=5.0),
               result("a", "greedy", "feasible", 1.0, 4.0, reference=5.0)]
    assert objective_gaps(records, {}) == {"greedy": {3: [pytest.approx(0.2)]}}
