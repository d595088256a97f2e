"""``reports/README.md`` from run files: tables per solver and size, the plots, the environment, how to reproduce.

>>> import tempfile, os
>>> from compbench.harness.sweep import make_tasks, run_sweep, source_problems
>>> d = tempfile.mkdtemp(); run = os.path.join(d, "run.jsonl")
>>> _ = run_sweep(make_tasks(source_problems("gen:gaussian:4-6:2"), ["brute-force"], 30), run)
>>> readme = write_report([run], d)
>>> "| brute-force | 6 |" in open(readme).read()
True
"""

from __future__ import annotations

import json
import math
import os
import shlex
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .plots import certificate_stats, plot_runs, solver_infos, speedup_baseline, theory
from .runfiles import load_runs
from .stats import LEFT_OUT, annotate, runtime, summary_by_kind

PLOTS = (("profile", "Performance profiles"), ("cactus", "Instances solved within a time"),
         ("runtime", "Scaling: time against n"), ("speedup", "Speed-up over the baseline"),
         ("certificates", "Certificates and iterations of the Lagrangian solvers"),
         ("gap", "Objective gap of results not proven optimal"), ("agreement", "Agreement of optimal claims"))
CAPTIONS = {
    "profile": "Dolan-Moré performance profile of the exact solvers, one panel per kind: the fraction of the "
               "instances a solver solved within a factor τ of the fastest time on that instance (τ on a log2 axis); "
               "an instance it did not solve (skipped and unsupported ones included) never counts, so a curve "
               "reaches 1 only if it solved every instance.  Inexact solvers are named under the panel, not drawn.",
    "cactus": "Instances solved within t seconds (setup + solve) by each exact solver, one panel per kind: a "
              "curve's height at the limit is the number it solved; the dotted lines are the number of instances "
              "and the time limit.",
    "runtime": "Median time per size, one panel per solver family and kind; a point is drawn where more than half "
               "of the size's instances were solved (unsolved counted at the limit, so the median is a solved "
               "time); the fastest exact solver of a panel (lowest SGM) is bold; the dotted line is the limit.  An "
               "exponent n^k [95% bootstrap interval] is given only when fitted over at least 4 sizes spanning a "
               "factor 2 in n, each with at least 3 instances, and some fitted median reaches 1 ms.  Timeouts and other unsolved instances per size: "
               "the table 'Per solver and size'.  Solvers without a point are named in the panel with the reason.",
    "speedup": "Median of time(baseline) / time(solver) per size over the instances the baseline solved, the "
               "solver's unsolved ones counted at the limit (a timeout costs; a ratio is then at most what it would "
               "be); a hollow marker shows where a line stops before the largest size.  Exact solvers only.",
    "certificates": "Per size, how many instances each Lagrangian solver certified (k/N beside each marker), and "
                    "its median number of iterations.",
    "gap": "Relative objective gap (optimum - value) / max(1, |optimum|) of the answers not proven optimal, against "
           "the best optimum an exact solver proved: mean per size (line) and largest (hollow marker).",
    "agreement": "For each pair of solvers, the share of the instances where both claimed optimal on which the "
                 "objectives agree.",
}
NOT_DRAWN = {"speedup": "No exact solver besides the baseline has an instance the baseline solved: no speed-up to "
                        "plot.",
             "certificates": "No Lagrangian solver reported certificates or iterations in these runs.",
             "gap": "Every answer with a known optimum was proven optimal or matched it: no gap to plot.",
             "agreement": "Every optimal claim agrees with every other on the instances they share: no heat map "
                          "to draw."}


def _seconds(value: float) -> str:
    if value >= 100:
        return f"{value:.0f} s"
    if value >= 1:
        return f"{value:.3g} s"
    return f"{value * 1000:.3g} ms"


def size_table(results: list[dict]) -> list[str]:
    """Markdown rows per solver and n: instances, median time of the solved ones, solved, timeouts, skipped, other
    unsolved (error, invalid, contradicted, not proven), certificates, memory (``results`` annotated)."""
    certs, _ = certificate_stats(results)
    groups: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
    for r in results:
        groups[r["solver"], r.get("kind", "file"), r["n"]].append(r)
    several = len({kind for _, kind, _ in groups}) > 1
    lines = ["| solver | " + ("kind | " if several else "") + "n | instances | median time | solved | timeouts | "
             "skipped | other unsolved | certified | memory (MiB) |",
             "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if several else "")]
    for (solver, kind, n), records in sorted(groups.items()):
        if all(r.get("status") == "unsupported" for r in records):
            continue  # e.g. brute force beyond its size limit
        times = [r["counted"] for r in records if r["outcome"] == "solved"]
        count = lambda *s: sum(r["outcome"] in s for r in records)
        cert = certs.get(solver, {}).get(n)
        extra = [memory_growth(r) for r in records
                 if "peak_memory_mb" in r and "memory_before_mb" in r and r.get("peak_memory_scope") == "solve"]
        lines.append(
            f"| {solver} | " + (f"{kind} | " if several else "") + f"{n} | {len(records)} | "
            f"{_seconds(float(np.median(times))) if times else '-'} | {count('solved')} | {count('timeout')} | "
            f"{count('skipped')} | {count('error', 'invalid', 'contradicted', 'unproven')} | "
            f"{f'{sum(cert)}/{len(cert)}' if cert else '-'} | "
            f"{f'{float(np.median(extra)):.1f}' if extra else '-'} |")
    lines += ["", "Median time: setup + solve of the solved instances of that size.  Solved: `optimal` or "
              "`infeasible`, validated and not contradicted by another answer.  Other unsolved: errors, invalid or "
              "contradicted answers, answers without a proof.  Memory: median growth of the worker's peak resident "
              "set during the solve over its resident set before it (MiB); the kernel's resident-set counters are "
              "approximate (kept in batches per thread or CPU), so a solve that allocates almost nothing can measure "
              "a fraction of a MiB below zero: shown as 0.0."]
    return lines


def memory_growth(record: dict) -> float:
    """The peak resident set of a solve over the resident set before it, in MiB, never below 0: ``VmHWM`` and
    ``VmRSS`` come from the kernel's approximate page counters (batched per thread or CPU), so the difference for a
    solve that allocates nearly nothing can come out a fraction of a MiB below zero."""
    return max(0.0, record["peak_memory_mb"] - record["memory_before_mb"])


def solver_table(results: list[dict], infos: dict[str, dict]) -> list[str]:
    """Per solver: exactness, complexity, solves, solved, timeouts, errors, invalid and contradicted answers."""
    lines = ["| solver | exact | complexity (theory) | solves | solved | timeouts | errors | invalid | "
             "contradicted | largest n solved |", "|---|---|---|---|---|---|---|---|---|---|"]
    by_solver: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_solver[r["solver"]].append(r)
    for solver, records in sorted(by_solver.items()):
        info = infos.get(solver.partition("[")[0], {})
        solved = [r["n"] for r in records if r["outcome"] == "solved"]
        count = lambda o: sum(r["outcome"] == o for r in records)
        lines.append(
            f"| {solver} | {'yes' if info.get('exact', True) else 'no'} | {info.get('complexity') or '-'} "
            f"({theory(solver, infos)}) | {len(records)} | {len(solved)} | {count('timeout')} | {count('error')} | "
            f"{count('invalid')} | {count('contradicted')} | {max(solved) if solved else '-'} |")
    lines += ["", "Complexity: the solver's own statement of its worst case; in parentheses the exponent k of n in "
              "its running time O(n^k) in theory, to compare with the exponents fitted in the scaling figure "
              "(`5 (n^3 d^2)`: d = min(m, n - m), at most n/2; `per iteration`: times the number of iterations; "
              "`none`: a MIP, no polynomial bound; `poly`: an LP, polynomial; `?`: not stated)."]
    return lines


def _ratio(pair: dict | None) -> str:
    if pair is None:
        return "-"
    return f"{pair['ratio']:.3g} [{pair['low']:.3g}, {pair['high']:.3g}] ({pair['instances']})"


def statistics_tables(summary: dict[str, Any], results: list[dict]) -> list[str]:
    """The exact solvers' table (SGM, scaled, paired ratio, PAR-2) and the inexact solvers' one, for one summary."""
    rows, pairs = summary["solvers"], {p["solver"]: p for p in summary["pairs"]}
    reference = summary["reference"]
    lines = ["| solver | instances | solved | timeouts | errors | invalid | contradicted | left out | SGM | "
             f"SGM / {reference} | paired ratio [95%] (instances) | PAR-2 |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ratio = lambda s: 1.0 if s == reference else pairs[s]["ratio"] if s in pairs else math.inf
    exact = sorted((s for s in rows if rows[s]["exact"]), key=lambda s: (ratio(s), s))  # fair order: paired ratio
    fewer = False
    for solver in exact:
        row = rows[solver]
        scaled = "-" if row["sgm_scaled"] is None else format(row["sgm_scaled"], ".3g")
        if row["sgm_scaled"] is not None and reference and row["instances"] < rows[reference]["instances"]:
            scaled, fewer = scaled + " †", True
        lines.append(f"| {solver} | {row['instances']} | {row['solved']} | {row['timeouts']} | {row['errors']} | "
                     f"{row['invalid']} | {row['contradicted']} | {row['unsupported'] + row['skipped']} | "
                     f"{_seconds(row['sgm_seconds']) if row['sgm_seconds'] is not None else '-'} | "
                     f"{scaled} | "
                     f"{'1 (reference)' if solver == reference else _ratio(pairs.get(solver))} | "
                     f"{_seconds(row['par2_seconds']) if row['par2_seconds'] is not None else '-'} |")
    if fewer:
        lines += ["", f"† over fewer instances than {reference} (the others unsupported or skipped): not comparable; "
                  "the paired ratio is (the rows are sorted by it)."]
    inexact = sorted(s for s in rows if not rows[s]["exact"])
    if inexact:
        lines += ["", "Inexact solvers (Lagrangian methods, LP relaxations): an answer is a proof only when they "
                  "certify it; they are not ranked against the exact solvers above.", "",
                  "| solver | instances | proved optimal | not proven | timeouts | errors, invalid, contradicted | "
                  "median time per answer | SGM, unproven at the limit |", "|---|---|---|---|---|---|---|---|"]
        for solver in inexact:
            row = rows[solver]
            times = [runtime(r) for r in results if r["solver"] == solver and r["outcome"] not in LEFT_OUT
                     and runtime(r) is not None]
            lines.append(f"| {solver} | {row['instances']} | {row['solved']} | {row['unproven']} | {row['timeouts']} | "
                         f"{row['errors'] + row['invalid'] + row['contradicted']} | "
                         f"{_seconds(float(np.median(times))) if times else '-'} | "
                         f"{_seconds(row['sgm_seconds']) if row['sgm_seconds'] is not None else '-'} |")
    return lines


def statistics_lines(summary: dict[str, Any], results: list[dict]) -> list[str]:
    """The statistics section: how they are computed, then the tables (pooled, and per kind when there are several)."""
    limit = summary["time_limit"]
    lines = [f"Solved: an `optimal` or `infeasible` answer that passed validation and that no other answer on the "
             f"same instance contradicts.  SGM: shifted geometric mean exp(mean(log(t + s))) - s of `seconds.total` "
             f"with shift s = {_seconds(summary['shift_seconds'])} (1/1000 of the time limit), an unsolved instance "
             f"(timeout, error, invalid or contradicted answer, no proof) counted at its time limit "
             f"({_seconds(limit) if limit else 'none'}), unsupported and skipped solves left out (column "
             f"'left out'; a solver's SGM is over the instances it ran).  SGM / {summary['reference']}: scaled so "
             "that the fastest exact solver among those that ran the most instances is 1.  Paired ratio: the SGM "
             f"ratio solver / {summary['reference']} over the instances both ran, with a 95% bootstrap interval "
             f"({summary['bootstrap']['samples']} resamples of the instances, seed {summary['bootstrap']['seed']}); "
             "compare solvers by it when they ran different instances.  PAR-2: mean time with unsolved instances at "
             "twice the limit."]
    if "by_kind" not in summary:
        return lines + ["", *statistics_tables(summary, results)]
    lines += ["", f"### All kinds pooled ({', '.join(summary['kinds'])})", "", *statistics_tables(summary, results)]
    for kind, part in summary["by_kind"].items():
        lines += ["", f"### {kind}", "",
                  *statistics_tables(part, [r for r in results if r.get("kind", "file") == kind])]
    return lines


def fastest_ilp_per_size(results: list[dict], dp: str = "resource-dp") -> list[tuple[int, str | None, float | None,
                                                                                    float | None]]:
    """Per n: the ILP solver (name starting with ``ilp``) with the lowest median time among those that solved every
    instance of that size (``results`` annotated), its median, and ``dp``'s median (None where there is none)."""
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in results:
        groups[r["solver"], r["n"]].append(r)
    rows = []
    for n in sorted({n for _, n in groups}):
        medians = {}
        for (solver, size), records in groups.items():
            proven = [runtime(r) for r in records if r["outcome"] == "solved"]
            if size == n and proven and len(proven) == len(records) and None not in proven:
                medians[solver] = float(np.median(proven))
        ilps = {s: t for s, t in medians.items() if s.startswith("ilp")}
        best = min(ilps, key=ilps.get) if ilps else None
        rows.append((n, best, ilps.get(best), medians.get(dp)))
    return rows


def ilp_lines(results: list[dict], infos: dict[str, dict]) -> list[str]:
    """Each ILP / LP solver's formulation, and per n the fastest ILP that proves every instance vs resource-dp."""
    ilps = sorted({r["solver"] for r in results if r["solver"].startswith(("ilp", "lp"))})
    if not ilps:
        return []
    lines = ["## The ILP side", "", "| solver | formulation | what it solves |", "|---|---|---|"]
    for solver in ilps:
        info = infos.get(solver.partition("[")[0], {})
        lines.append(f"| {solver} | {info.get('formulation', '-')} | {info.get('description', '-')} |")
    lines += ["", "Formulations: `dp`, the hook-trick chart's hypergraph flow (one column per rule instance, one "
              "flow-conservation row per item, z integer: the DP's own polytope, integral at free length); `joint`, "
              "the joint model of tree (single-commodity flow), bigram chain and projectivity rows "
              "(Thadani & McKeown 2013 style).", "",
              "| n | fastest ILP proving every instance | its median | resource-dp median | ILP / DP |",
              "|---|---|---|---|---|"]
    for n, best, t_best, t_dp in fastest_ilp_per_size(results):
        ratio = f"{t_best / t_dp:.0f}x" if best and t_dp else "-"
        lines.append(f"| {n} | {best or 'none'} | {_seconds(t_best) if best else '-'} | "
                     f"{_seconds(t_dp) if t_dp else '-'} | {ratio} |")
    return lines + [""]


def environment_lines(environments: list[dict]) -> list[str]:
    if not environments:
        return ["(no environment record in the run files)"]
    env = environments[0]
    packages = ", ".join(f"{k} {v}" for k, v in (env.get("packages") or {}).items() if v)
    threads = ", ".join(f"{k}={v}" for k, v in (env.get("threads") or {}).items() if v) or "none set"
    settings = env.get("settings") or {}
    return [f"- started {env.get('started')} ({len(environments)} run part(s))",
            f"- CPU: {env.get('cpu')} ({env.get('cpu_count')} logical cores); {env.get('platform')}",
            f"- Python {env.get('python')}; {packages}",
            f"- thread variables: {threads}",
            "- settings: " + ", ".join(f"{k}={v}" for k, v in settings.items())]


def reproduce_commands(environments: list[dict], runs: list[str], out: str) -> list[str]:
    commands = []
    for env in environments:
        command = env.get("command")
        if command and command not in commands:
            commands.append(command)
    commands.append("compbench report " + " ".join(shlex.quote(r) for r in runs) + f" --out {shlex.quote(out)}")
    return commands


def figure_scope(results: list[dict], environments: list[dict]) -> str:
    """One sentence for every caption: which instances, under which limit, on which machine."""
    env = environments[0] if environments else {}
    sizes = sorted({r["n"] for r in results})
    kinds = sorted({r.get("kind", "file") for r in results})
    limits = sorted({r["time_limit"] for r in results if r.get("time_limit") is not None})
    return (f"Instances: {len({r['instance'] for r in results})} ({', '.join(kinds)}; n = "
            f"{', '.join(map(str, sizes)) if len(sizes) <= 12 else f'{sizes[0]}-{sizes[-1]}'}); time limit "
            f"{', '.join(f'{t:g} s' for t in limits) or 'none'}; machine: {env.get('cpu', '?')}, "
            f"{env.get('cpu_count', '?')} logical cores, Python {env.get('python', '?')}.")


def write_report(runs: Iterable[str | os.PathLike], out: str | os.PathLike, *, baseline: str | None = None,
                 title: str = "compbench report", reproduce: list[str] | None = None,
                 sections: list[str] | None = None, shift: float | None = None) -> str:
    """Write the plots, ``out/summary.json`` and ``out/README.md`` for the given run files; returns the README's path.

    ``sections``: extra Markdown lines placed before the tables (the demo puts its agreement check there);
    ``shift``: the SGM's shift in seconds (default 1/1000 of the time limit)."""
    runs = [str(r) for r in runs]
    out = Path(out)
    raw, environments = load_runs(runs)
    infos = solver_infos(environments)
    results = annotate(raw)
    summary = summary_by_kind(raw, infos, shift)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({**summary, "runs": runs}, indent=1, allow_nan=False) + "\n",
                                      encoding="utf-8")
    plots_dir = out / "plots"
    drawn = {Path(p).stem for p in plot_runs(runs, plots_dir, baseline)}
    baseline = baseline or speedup_baseline(results, infos)
    commands = reproduce or reproduce_commands(environments, runs, str(out))
    limits = sorted({r.get("time_limit") for r in results if r.get("time_limit") is not None})
    scope = figure_scope(results, environments)
    lines = [f"# {title}", "",
             f"{len(results)} solves of {len({r['instance'] for r in results})} instances by "
             f"{len({r['solver'] for r in results})} solvers, time limit {', '.join(f'{t:g} s' for t in limits) or 'none'} "
             "per solve (a hard wall-clock limit: a solve still running a grace period past it was killed). Times are "
             "setup + solve inside the solver, measured in a warm worker process.", "",
             "Regenerate this report with:", "", "```sh", *commands, "```", "", *(sections or []),
             "## Statistics", "", *statistics_lines(summary, results), "",
             "The same numbers, per solver with the same keys: `summary.json`.", "",
             "## Solvers", "", *solver_table(results, infos), "",
             "## Per solver and size", "", *size_table(results), "", *ilp_lines(results, infos)]
    for name, caption in PLOTS:
        if name in drawn:
            what = CAPTIONS[name] + (f"  Baseline: {baseline}." if name == "speedup" else "")
            lines += [f"## {caption}", "", f"![{caption}](plots/{name}.png)", "", f"{what}  {scope}", "",
                      f"([SVG](plots/{name}.svg))", ""]
        else:
            lines += [f"## {caption}", "", NOT_DRAWN.get(name, "Nothing to draw in these runs."), ""]
    lines += ["## Environment", "", *environment_lines(environments), "",
              "Run files: " + ", ".join(f"`{r}`" for r in runs), ""]
    readme = out / "README.md"
    readme.write_text("\n".join(lines), encoding="utf-8")
    return str(readme)
