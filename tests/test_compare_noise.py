"""compare's timing verdicts against the machine's noise (issue 36): recorded A/A and slowed runs, and the rule.

The fixtures under tests/data/aa/ are three runs of ``benchmarks/bench_aa.py`` (``bench --free --sizes 6:10:2
--per-size 3 --repeats 3 --time-limit 3 --jobs 1``, four solvers and ``exec:/tmp/compbench-aa/solver.py``), made
one after the other on a shared two-core machine: ``a`` and ``b`` are an A/A pair (the same code and settings);
``slowed`` is the run after ``b`` with the exec program sleeping 50 ms before each answer (the same solver name).
Recorded (pair 5 and the slowed run of reports/performance/aa.txt, which holds every live pair; their ``verdict``
records left out, as compare recomputes them), so that the tests do not depend on this machine's noise.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from compbench.cli import main
from compbench.harness.runfiles import load_runs
from compbench.harness.comparison import compare_runs, noise_factor, timing_verdict
from compbench.harness.stats import judged, judged_summary
from compbench.limits import MIN_EFFECT

DATA = Path(__file__).parent / "data" / "aa"
A, B, SLOWED = (str(DATA / f"{name}.jsonl") for name in ("a", "b", "slowed"))
EXEC = "exec:/tmp/compbench-aa/solver.py"  # the slowed solver: the same name in the three runs


def compare_json(capsys: pytest.CaptureFixture, a: str, b: str, *options: str) -> dict:
    assert main(["compare", a, b, "--json", *options]) == 0  # every optimal objective agrees
    return json.loads(capsys.readouterr().out)


def test_the_fixtures_are_runs_with_repeats_of_the_same_solvers() -> None:
    solvers = []
    for path in (A, B, SLOWED):
        results, _ = load_runs([path])
        assert {r.get("repeat") for r in results} == {0, 1, 2}
        solvers.append({r["solver"] for r in results})
    assert solvers[0] == solvers[1] == solvers[2] and EXEC in solvers[0] and len(solvers[0]) == 5


def test_an_aa_pair_is_the_same_for_every_solver(capsys: pytest.CaptureFixture) -> None:
    result = compare_json(capsys, A, B)
    assert len(result["solvers"]) == 5 and result["forced"] is None
    assert {row["solver"]: row["verdict"] for row in result["solvers"]} == {
        row["solver"]: "same" for row in result["solvers"]}
    assert result["noise"] is not None and result["threshold"] == max(MIN_EFFECT, result["noise"])


def test_the_slowed_exec_solver_is_slower_and_the_others_the_same(capsys: pytest.CaptureFixture) -> None:
    result = compare_json(capsys, B, SLOWED)
    verdicts = {row["solver"]: row["verdict"] for row in result["solvers"]}
    assert verdicts.pop(EXEC) == "slower"
    assert len(verdicts) == 4 and set(verdicts.values()) == {"same"}
    row = next(row for row in result["solvers"] if row["solver"] == EXEC)
    assert row["low"] > result["threshold"] and row["ratio"] > 1.25  # 50 ms on a ~0.07 s program


def test_the_slowed_run_read_backwards_is_faster(capsys: pytest.CaptureFixture) -> None:
    verdicts = {row["solver"]: row["verdict"] for row in compare_json(capsys, SLOWED, B)["solvers"]}
    assert verdicts.pop(EXEC) == "faster" and set(verdicts.values()) == {"same"}


def test_the_noise_raises_the_threshold_above_the_minimum_effect(capsys: pytest.CaptureFixture) -> None:
    """With --min-effect 1 the threshold is the noise alone, the larger of the two runs' own."""
    result = compare_json(capsys, A, B, "--min-effect", "1")
    noises = [noise_factor(judged(load_runs([path])[0])) for path in (A, B)]
    assert result["min_effect"] == 1 and result["noise"] == max(noises) > 1 and result["threshold"] == max(noises)


def test_a_compare_without_repeats_uses_the_minimum_effect(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The first repeat of each solve alone, as a bench without --repeats records it: no noise is measured, and the
    threshold is MIN_EFFECT."""
    paths = []
    for name, path in (("a", A), ("b", B)):
        records = [json.loads(line) for line in Path(path).read_text().splitlines()]
        kept = [{k: v for k, v in r.items() if k != "repeat"} for r in records
                if r["type"] not in ("result", "verdict") or r.get("repeat", 0) == 0]
        paths.append(tmp_path / f"{name}.jsonl")
        paths[-1].write_text("".join(json.dumps(r) + "\n" for r in kept))
    result = compare_json(capsys, *map(str, paths))
    assert result["noise"] is None and result["threshold"] == result["min_effect"] == MIN_EFFECT
    assert all(row["instances"] == 9 for row in result["solvers"])


# ---------------------------------------------------------------------------------------------------------------
# the rule on hand-made numbers


def solved(*seconds: float, outcome: str = "solved") -> dict:
    """A judged record (one (instance, solver) pair) with its repeats' counted times."""
    return {"outcome": outcome, "repeat_seconds": list(seconds)}


def test_noise_factor_is_the_median_spread_of_the_solved_pairs_with_repeats() -> None:
    assert noise_factor([solved(1.0, 1.1), solved(2.0, 3.0, 2.5), solved(1.0, 2.0)]) == 1.5  # spreads 1.1, 1.5, 2
    assert noise_factor([solved(1.0, 1.1), solved(1.0, 1.3)]) == pytest.approx(math.sqrt(1.1 * 1.3))  # an even count
    assert noise_factor([solved(1.0, 1.2), solved(1.0, 9.0, outcome="timeout"), solved(1.0, 9.0, outcome="error"),
                         solved(5.0), solved(0.0, 1.0)]) == 1.2  # unsolved, single, zero-time pairs left out
    assert noise_factor([solved(1.0), {"outcome": "solved"}]) is None  # no repeats: not measured
    assert noise_factor([solved(3.0, 3.0, 3.0)]) == 1.0


@pytest.mark.parametrize("low, high, threshold, verdict", [
    (1.30, 1.60, 1.25, "slower"),
    (1.25, 1.60, 1.25, "same"),  # the whole interval must lie beyond the threshold
    (1.20, 1.60, 1.25, "same"),
    (0.50, 0.79, 1.25, "faster"),
    (0.50, 0.80, 1.25, "same"),  # 1 / 1.25 = 0.8
    (0.90, 1.10, 1.25, "same"),
    (1.30, 1.60, 1.40, "same"),  # beyond the minimum effect, not beyond the noise
    (0.60, 0.70, 1.40, "faster"),
])
def test_timing_verdict(low: float, high: float, threshold: float, verdict: str) -> None:
    assert timing_verdict(low, high, threshold) == verdict


def run(times: dict[str, list[float]]) -> list[dict]:
    """Result records of solver ``s``: per instance, its repeats' times (no ``repeat`` key for a single time)."""
    return [{"instance": instance, "solver": "s", "n": 3, "status": "optimal", "objective": 1.0, "kept": [1],
             "heads": [0], "validity": "ok", "seconds": {"total": t}, "time_limit": 10.0,
             "reference": {"status": "optimal", "objective": 1.0, "source": "certified"},
             **({"repeat": k} if len(ts) > 1 else {})}
            for instance, ts in times.items() for k, t in enumerate(ts)]


def test_compare_runs_takes_the_larger_noise_of_the_two_runs() -> None:
    a = run({f"x{i}": [1.0, 1.1, 1.05] for i in range(6)})  # noise 1.1
    b = run({f"x{i}": [1.3, 1.82, 1.5] for i in range(6)})  # noise 1.4, median 1.5: B/A = 1.5 / 1.05
    result = compare_runs(a, b, shift=0.0)
    assert result["noise"] == pytest.approx(1.4) and result["threshold"] == pytest.approx(1.4)
    row = result["solvers"]["s"]
    assert row["ratio"] == pytest.approx(1.5 / 1.05) and row["low"] == row["high"] == pytest.approx(row["ratio"])
    assert row["verdict"] == "slower"  # 1.43 > 1.4
    assert compare_runs(a, b, shift=0.0, min_effect=1.5)["solvers"]["s"]["verdict"] == "same"


def test_compare_runs_without_repeats_uses_the_minimum_effect() -> None:
    a = run({f"x{i}": [1.0] for i in range(6)})
    for factor, verdict in ((1.2, "same"), (1.3, "slower"), (0.7, "faster")):
        result = compare_runs(a, run({f"x{i}": [factor] for i in range(6)}), shift=0.0)
        assert result["noise"] is None and result["threshold"] == MIN_EFFECT
        assert result["solvers"]["s"]["verdict"] == verdict, factor


def test_a_run_with_repeats_counts_each_instance_and_solver_once(tmp_path: Path) -> None:
    """bench's outcome line counts (instance, solver) pairs, each the worst of its repeats (it said "solved 135" for
    45 pairs), and a wrong answer of any repeat is a FAIL line naming that repeat."""
    results, _ = load_runs([A])
    pairs = {(r["instance"], r["solver"]) for r in results}
    counts, fails, compared, why = judged_summary(A)
    assert counts == f"solved {len(pairs)} (instance-solver pairs, each the worst of its 3 repeats)"
    instances = len({r["instance"] for r in results})
    assert not fails and why is None and compared == f"compared {instances} of {instances} instances"
    lines = Path(A).read_text().splitlines()
    wrong = next(i for i, line in enumerate(lines) if '"solver": "resource-dp", "repeat": 1,' in line)
    record = json.loads(lines[wrong])
    record["objective"] -= 1.0  # a claim below the optimum (the record calls its tree valid)
    lines[wrong] = json.dumps(record)
    run = tmp_path / "wrong.jsonl"
    run.write_text("\n".join(lines) + "\n")
    counts, fails, _, _ = judged_summary(str(run))
    assert counts.startswith(f"solved {len(pairs) - 1}, contradicted 1 (")
    assert len(fails) == 1 and fails[0].startswith(f"FAIL resource-dp on {record['instance']} (repeat 1): disagrees")


def test_an_unchecked_answer_is_timed_only_when_the_other_run_confirms_it() -> None:
    """A solver alone in each run (nothing compares its answers within a run): an optimum the other run gives too
    is timed by its time; one the other run's valid solution beats is a difference and timed at the limit (it
    made a 'slower' verdict from a wrong answer)."""
    def answer(instance: str, status: str, objective: float, seconds: float) -> dict:
        return {"instance": instance, "solver": "s", "n": 3, "status": status, "objective": objective,
                "kept": [1], "heads": [0], "seconds": {"total": seconds}, "time_limit": 10.0}

    a = [answer(f"i{k}", "optimal", 5.0, 0.01) for k in range(5)]
    same = [answer(f"i{k}", "optimal", 5.0, 0.03) for k in range(5)]
    row = compare_runs(a, same, shift=0.01)["solvers"]["s"]  # SGMs 0.03 s over 0.01 s: their times, not 10 s
    assert row["solved_a"] == row["solved_b"] == 0 and row["verdict"] == "slower" and row["ratio"] == pytest.approx(3)
    beaten = [answer(f"i{k}", "timeout", 6.0, 10.0) for k in range(5)]
    row = compare_runs(a, beaten, shift=0.01)["solvers"]["s"]
    assert row["verdict"] == "unsolved" and row["sgm_a"] == pytest.approx(10.0)
    assert row["objective_differs"][0] == {"instance": "i0", "a": 5.0, "b": "a solution of value 6.0"}


def test_times_of_zero_and_a_dollar_in_a_name_give_tables_figures_and_json(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    """A run file may hold times of 0 (a hand-made or foreign one): the SGM's rounding was divided by (a ratio of
    1e14), and with --shift 1 report said 'Out of range float values are not JSON compliant' and compare --json died
    with a traceback; a solver named with '$' crashed plot in matplotlib's mathtext."""
    records = [json.loads(line) for line in Path(A).read_text().splitlines()]
    for r in records:
        if r.get("solver") == "hook-dp":
            r["seconds"] = {"setup": 0.0, "solve": 0.0, "total": 0.0}
        if r.get("solver") == "brute-force":
            r["solver"] = r"exec:./run$\frac$x"
        if "kind" in r:  # a kind from an instance file's meta: in every figure's title
            r["kind"] = "cost$_$"
    run = tmp_path / "zero.jsonl"
    run.write_text("".join(json.dumps(r) + "\n" for r in records if r["type"] != "verdict"))
    assert main(["report", str(run), "--shift", "1", "--out", str(tmp_path / "report")]) == 0
    readme = (tmp_path / "report" / "README.md").read_text()
    assert "shift s = 1 s (set by --shift)" in readme
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["reference"] == "hook-dp" and summary["solvers"]["hook-dp"]["sgm_seconds"] == 0.0
    assert (tmp_path / "report" / "plots" / "profile.png").exists()
    capsys.readouterr()
    rows = compare_json(capsys, str(run), str(run), "--shift", "1")["solvers"]
    row = next(r for r in rows if r["solver"] == "hook-dp")
    assert row["verdict"] == "unmeasured" and row["ratio"] is None
    assert main(["compare", str(run), str(run), "--shift", "1"]) == 0
    assert re.search(r"hook-dp +\d+ +0 s +0 s +- +- +unmeasured", capsys.readouterr().out)
