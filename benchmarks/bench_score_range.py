"""Where large scores outrun float64: the measurements behind compbench.limits.MIP_MAX_SCORE and the float64 slack of
the verdicts (compbench.evaluate.objective_error), in one run.

    .venv/bin/python benchmarks/bench_score_range.py > reports/ilp/score-range.md

1. A problem (n = 6, lengths 3..5) whose costs near a scale S cancel to an optimum of 1 (the fuzzer's case, in
   tests/test_ilp.py), solved at S = 1e12 .. 1e6 by resource-dp and by each floating-point MIP backend called past
   its score limit (``_solve``: the capability check that now refuses S > 1e6 is skipped on purpose).
2. Gaussian-rounded scores near 3e10 (as in tests/test_harness.py): the first instance whose resource-dp and
   signature-dp objectives differ beyond 1e-9, with both objectives and the float64 error of the tree's sum; and
   CP-SAT's median integer-scaling tolerance over the 40 instances there.
3. Near ties: how many optimal claims of each floating-point backend are wrong where the choices differ by about
   1e-6, with all scores that small (scaled by the driver) or beside one large score (not scaled).
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

import numpy as np

import compbench
from compbench.evaluate import objective_error

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_ilp import cancelling_problem  # noqa: E402  (one definition of the problem)

from machine import machine_line  # noqa: E402

BACKENDS = ("ilp-highs", "ilp-ortools-scip", "ilp-pulp-cbc", "ilp-dp-highs")


def scales() -> list[str]:
    lines = ["| scale | resource-dp | " + " | ".join(BACKENDS) + " |", "|---" * (2 + len(BACKENDS)) + "|"]
    for exponent in range(12, 5, -1):
        problem = cancelling_problem(10.0 ** exponent)
        cells = [f"{compbench.get_solver('resource-dp').solve(problem).objective:g}"]
        for name in BACKENDS:
            solver = compbench.get_solver(name)
            answer = solver._solve(problem, time_limit=20.0, all_lengths=False)  # past the score limit, on purpose
            right = answer.status.value == "optimal" and math.isclose(answer.objective, 1.0, abs_tol=1e-9)
            cells.append(f"{answer.status.value} {answer.objective:g}" + ("" if right else " WRONG")
                         if answer.objective is not None else answer.status.value)
        lines.append(f"| 1e{exponent} | " + " | ".join(cells) + " |")
    return lines


def cancelling_sums() -> list[str]:
    rng = np.random.default_rng(1)
    tolerances, found = [], None
    for _ in range(100):
        n = int(rng.integers(3, 7))
        scores = lambda shape: np.round(rng.standard_normal(shape) * 3) * 3e10 + rng.standard_normal(shape)  # noqa
        p = compbench.Problem(scores((n,)), scores((n + 1, n + 1)), scores((n + 2, n + 2)),
                              length=int(rng.integers(1, n + 1)))
        if len(tolerances) < 40:
            tolerances.append(compbench.get_solver("ilp-ortools-cpsat").solve(p).stats["scale_tolerance"])
        dp, signature = (compbench.get_solver(name).solve(p) for name in ("resource-dp", "signature-dp"))
        if found is None and not math.isclose(dp.objective, signature.objective, rel_tol=1e-9, abs_tol=1e-9):
            found = dp, signature, objective_error(p, dp.heads), np.array_equal(dp.heads, signature.heads)
    dp, signature, error, same = found
    return [f"scores near 3e10: resource-dp objective {dp.objective!r}, signature-dp {signature.objective!r}, "
            f"same tree {same}, apart {abs(dp.objective - signature.objective):.2g}, float64 error of the tree's "
            f"sum {error:.2g}",
            f"scores near 3e10: CP-SAT median scale tolerance {statistics.median(tolerances):.2g} over "
            f"{len(tolerances)} instances"]


NEAR_TIE_BACKENDS = ("ilp-highs", "ilp-dp-highs", "ilp-pulp-highs", "ilp-pulp-cbc", "ilp-ortools-scip")


def near_ties(draws: int = 40) -> list[str]:
    """Wrong optimal claims (off resource-dp's optimum by more than 1e-9 relative) on problems whose choices differ
    by about 1e-6: scores N(0, 1e-6), all of them (tiny: the driver scales such costs by a power of two) or beside a
    sure token scoring 3 (mixed: the largest cost is 3, no scaling), n = 5; HiGHS also with its feasibility
    tolerance at 1e-9."""
    rng = np.random.default_rng(0)
    runs = [(name, {}) for name in NEAR_TIE_BACKENDS] + [("ilp-highs", {"mip_feasibility_tolerance": 1e-9})]
    wrong = {(kind, k): 0 for kind in ("tiny", "mixed") for k in range(len(runs))}
    for draw in range(draws):
        n = 5
        token, arc, bigram = (rng.normal(size=shape) * 1e-6 for shape in ((n,), (n + 1, n + 1), (n + 2, n + 2)))
        for kind in ("tiny", "mixed"):
            if kind == "mixed":
                token = token.copy()
                token[0] = 3.0
            p = compbench.Problem(token, arc, bigram, single_root=bool(draw % 2))
            best = compbench.get_solver("resource-dp").solve(p).objective
            for k, (name, settings) in enumerate(runs):
                answer = compbench.get_solver(name).solve(p, settings=settings) if settings else \
                    compbench.get_solver(name).solve(p)
                if answer.status.value == "optimal" and not math.isclose(answer.objective, best, rel_tol=1e-9,
                                                                         abs_tol=1e-12):
                    wrong[kind, k] += 1
    names = [name + (" (mip_feasibility_tolerance 1e-9)" if settings else "") for name, settings in runs]
    lines = ["| scores | " + " | ".join(names) + " |", "|---" * (1 + len(runs)) + "|"]
    for kind, label in (("tiny", "all near 1e-6"), ("mixed", "near 1e-6 beside a 3")):
        lines.append(f"| {label} | " + " | ".join(f"{wrong[kind, k]} of {draws}" for k in range(len(runs))) + " |")
    return lines


def main() -> None:
    print(machine_line())
    print()
    print("Costs near the scale that cancel to an optimum of 1 (WRONG: an optimal claim off 1):")
    print()
    print("\n".join(scales()))
    print()
    print("\n".join(cancelling_sums()))
    print()
    print("Near ties: wrong optimal claims where the choices differ by about 1e-6 (n = 5, 40 draws each):")
    print()
    print("\n".join(near_ties()))


if __name__ == "__main__":
    main()
