"""``compbench compare``: two run files, solver by solver: times (shifted geometric means, their ratio with a
bootstrap interval and a verdict against the noise) and the proven answers that differ."""

from __future__ import annotations

import argparse

from ..limits import MIN_EFFECT, MIN_TIMED_INSTANCES
from .common import UsageError, number_in
from .harness import add_shift_option, check_runs


def cmd_compare(args: argparse.Namespace) -> int:
    import json

    from ..harness.runfiles import load_runs
    from ..harness.comparison import comparable, compare_runs

    check_runs([args.a, args.b], together=False)  # A and B are read apart: comparable() matches id and hash
    runs = []
    for path in (args.a, args.b):
        results, _ = load_runs([path])
        if not results:
            raise UsageError(f"{path}: no result records (not a run file of bench, demo or check)")
        runs.append(results)
    why = comparable(*runs)
    if why and not args.force:
        raise UsageError(f"{args.a} and {args.b} cannot be compared: {why} (--force compares them anyway)")
    comparison = compare_runs(*runs, shift=args.shift, min_effect=args.min_effect)
    rows = comparison["solvers"]
    if not rows:
        raise UsageError(f"{args.a} and {args.b} share no (solver, instance) pair")
    differ = [{"solver": solver, **d} for solver, row in rows.items() for d in row["objective_differs"]]
    wrong = _wrong_answers(rows)
    status = 1 if differ or any(w["runs"] == "B" for w in wrong) else 0
    if args.json:
        keys = ("solver", "sgm_a", "sgm_b", "ratio", "low", "high", "verdict", "instances", "solved_a", "solved_b",
                "proven_both")
        print(json.dumps({"a": args.a, "b": args.b, "solvers": [{k: row[k] for k in keys} for row in rows.values()],
                          "unpaired": comparison["unpaired"], "objective_differs": differ, "wrong": wrong,
                          "threshold": comparison["threshold"],
                          "noise": comparison["noise"], "min_effect": comparison["min_effect"],
                          "shift_seconds": comparison["shift_seconds"], "forced": why}, allow_nan=False))
        return status
    noise = comparison["noise"]
    print(f"compare: B = {args.b} over A = {args.a}, per solver on the instances both runs hold (same id and content "
          f"hash); shifted geometric means (shift {comparison['shift_seconds']:g} s, unsolved at the limit; a proven "
          "answer nothing in its run compared at its time when the other run gives the same), their "
          "ratio B/A with a 95% bootstrap interval; faster/slower only when the whole interval lies beyond "
          f"{comparison['threshold']:.3g}x (the larger of the minimum effect {comparison['min_effect']:g}x and the "
          + (f"noise of the repeats, {noise:.3g}x)" if noise else "noise, not measured: no repeats)")
          + f", over {MIN_TIMED_INSTANCES} instances at least (else too few)")
    if why:
        print(f"compare: forced: {why}")
    print(f"{'solver':<28}{'instances':>10} {'SGM A':>11} {'SGM B':>11} {'B/A':>9} {'95% interval':>22} "
          f"{'verdict':>9}{'solved A':>10}{'solved B':>10}")
    for solver, row in rows.items():
        number = lambda v, unit="": "-" if v is None else f"{v:.3g}{unit}"  # None: no ratio (SGMs of 0)
        interval = f"[{number(row['low'])}, {number(row['high'])}]" if row["ratio"] is not None else "-"
        print(f"{solver:<28}{row['instances']:>10} {number(row['sgm_a'], ' s'):>11} {number(row['sgm_b'], ' s'):>11} "
              f"{number(row['ratio']):>9} {interval:>22} {row['verdict']:>9}{row['solved_a']:>10}{row['solved_b']:>10}")
    for solver, row in rows.items():
        for key, what in (("only_a", "solved in A only"), ("only_b", "solved in B only")):
            if row[key]:
                print(f"  {solver}: {what}: {', '.join(row[key][:8])}" + (" ..." if len(row[key]) > 8 else ""))
    for solver, why in comparison["unpaired"].items():
        print(f"  {solver}: not compared: {why}")
    for d in differ:
        print(f"DIFFERS {d['solver']} on {d['instance']}: proven answer {d['a']!r} in A, {d['b']!r} in B")
    for w in wrong:
        print(f"WRONG {w['solver']} on {w['instance']} in {w['runs']}: {w['outcome']}: {w['why']}")
    proven = sum(row["proven_both"] for row in rows.values())
    print("compare: " + (f"{len(differ)} of {proven} proven answer(s) in both runs differ" if differ else
                         f"every proven answer agrees ({proven} instance-solver pairs proven in both runs)" if proven
                         else "no instance has a proven answer (optimal or infeasible) in both runs: no optimum was "
                              "compared")
          + (f"; {len(wrong)} wrong answer(s) (invalid or contradicted)" if wrong else ""))
    return status


def _wrong_answers(rows: dict[str, dict]) -> list[dict]:
    """Each (solver, instance) with a wrong answer (invalid or contradicted) in either run: ``runs`` says in which
    ("A", "B" or "A and B": wrong in B only is a regression, and fails the comparison as a differing optimum does)."""
    out = []
    for solver, row in rows.items():
        wrong = {side: {w["instance"]: w for w in row[f"wrong_{side}"]} for side in ("a", "b")}
        for instance in sorted(wrong["a"].keys() | wrong["b"].keys()):
            runs = " and ".join(side.upper() for side in ("a", "b") if instance in wrong[side])
            w = wrong["b"].get(instance) or wrong["a"][instance]
            out.append({"solver": solver, "instance": instance, "runs": runs, "outcome": w["outcome"],
                        "why": w["why"]})
    return out


def register(subparsers: argparse._SubParsersAction) -> None:
    compare = subparsers.add_parser(
        "compare", help="compare two run files solver by solver (exit 1 if a proven answer differs or is wrong in B "
                        "only)",
        description="Per solver, over the instances both run files hold for it (same id and content hash): the "
                    "shifted geometric mean time of each, their ratio B/A with a 95%% bootstrap interval and a "
                    "verdict (faster or slower only when the whole interval lies beyond the minimum effect and the "
                    "noise the runs' repeats measured, else same; too few under %d instances, unsolved when neither "
                    "run timed any, unmeasured when the ratio has no value: SGMs of times of 0), the instances one "
                    "run solved and the other did not, and any proven answer "
                    "that differs (optimal objectives apart, optimal against infeasible, or beaten by the other "
                    "run's valid solution), with both values, and each run's wrong answers (invalid or "
                    "contradicted).  Exit status: 0; 1 if a proven answer differs or B holds a wrong answer A does "
                    "not; 2 for a file that is missing or holds no results, or for runs with different time limits, "
                    "instance sets or reference optima (unless --force)." % MIN_TIMED_INSTANCES)
    compare.add_argument("a", metavar="A.jsonl", help="the first run (e.g. the older commit)")
    compare.add_argument("b", metavar="B.jsonl", help="the second run")
    add_shift_option(compare)
    compare.add_argument("--min-effect", type=number_in(float, 1), default=MIN_EFFECT, metavar="F",
                         help=f"the smallest time ratio called faster or slower (default {MIN_EFFECT:g}; the noise "
                              "the runs' repeats measured raises it)")
    compare.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    compare.add_argument("--force", action="store_true",
                         help="compare runs with different time limits, instance sets or reference optima")
    compare.set_defaults(func=cmd_compare)
