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

import math
import os
import shlex
from collections import defaultdict
from pathlib import Path
from typing import Iterable

import numpy as np

from compbench.agreement import objectives_agree

from .plots import SOLVED, certificate_stats, load_runs, plot_runs, runtime, solver_infos, theory

PLOTS = (("runtime", "Runtime vs n"), ("speedup", "Speed-up over the baseline"),
         ("certificates", "Certificates and iterations of the Lagrangian solvers"),
         ("gap", "Objective gap of results not proven optimal"), ("agreement", "Agreement of optimal claims"))
NOT_DRAWN = {"certificates": "No Lagrangian solver reported certificates or iterations in these runs.",
             "gap": "Every answer with a known optimum was proven optimal or matched it: no gap to plot.",
             "agreement": "Every optimal claim agrees with every other on the instances they share: no heat map "
                          "to draw."}


def _seconds(value: float) -> str:
    if value >= 100:
        return f"{value:.0f} s"
    if value >= 1:
        return f"{value:.3g} s"
    return f"{value * 1000:.3g} ms"


def agreement_by_record(results: list[dict]) -> dict[tuple[str, str], bool]:
    """For each optimal claim: does it equal the best valid objective any solver found on that instance?"""
    best: dict[str, float] = {}
    for r in results:
        if r.get("objective") is not None and r.get("validity", "ok") == "ok" and r.get("status") in (*SOLVED, "timeout"):
            best[r["instance"]] = max(best.get(r["instance"], -math.inf), float(r["objective"]))
    return {(r["instance"], r["solver"]): r.get("validity", "ok") == "ok" and r["instance"] in best
            and objectives_agree(float(r["objective"]), best[r["instance"]])
            for r in results if r.get("status") == "optimal" and r.get("objective") is not None}


def size_table(results: list[dict]) -> list[str]:
    """Markdown rows: per solver and n, instances, median time, solved / timeouts / other, certificates, agreement."""
    agree = agreement_by_record(results)
    certs, _ = certificate_stats(results)
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in results:
        groups[r["solver"], r["n"]].append(r)
    lines = ["| solver | n | instances | median time | proven | timeouts | skipped | other | certified | "
             "optimal claims agreeing | memory (MiB) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (solver, n), records in sorted(groups.items()):
        if all(r.get("status") == "unsupported" for r in records):
            continue  # e.g. brute force beyond its size limit
        times = [runtime(r) for r in records if r.get("status") in SOLVED and runtime(r) is not None]
        count = lambda *s: sum(r.get("status") in s for r in records)
        claims = [agree[r["instance"], solver] for r in records if (r["instance"], solver) in agree]
        cert = certs.get(solver, {}).get(n)
        extra = [r["peak_memory_mb"] - r["memory_before_mb"] for r in records
                 if "peak_memory_mb" in r and "memory_before_mb" in r and r.get("peak_memory_scope") == "solve"]
        lines.append(
            f"| {solver} | {n} | {len(records)} | {_seconds(float(np.median(times))) if times else '-'} | "
            f"{count('optimal', 'infeasible')} | {count('timeout')} | {count('skipped')} | "
            f"{count('feasible', 'unsupported', 'error')} | "
            f"{f'{100 * np.mean(cert):.0f}%' if cert else '-'} | "
            f"{f'{sum(claims)}/{len(claims)}' if claims else '-'} | "
            f"{f'{float(np.median(extra)):.1f}' if extra else '-'} |")
    lines += ["", "Time: median setup + solve of the solves that finished (proven, or feasible for inexact solvers). "
              "Memory: median growth of the worker's peak resident set during the solve (MiB)."]
    return lines


def solver_table(results: list[dict], infos: dict[str, dict]) -> list[str]:
    agree = agreement_by_record(results)
    lines = ["| solver | exact | complexity (theory) | solves | proven | timeouts | errors | invalid | "
             "disagreeing optimal claims | largest n proven |", "|---|---|---|---|---|---|---|---|---|---|"]
    by_solver: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_solver[r["solver"]].append(r)
    for solver, records in sorted(by_solver.items()):
        info = infos.get(solver, {})
        proven = [r["n"] for r in records if r.get("status") in ("optimal", "infeasible")]
        wrong = sum(1 for (i, s), ok in agree.items() if s == solver and not ok)
        lines.append(
            f"| {solver} | {'yes' if info.get('exact', True) else 'no'} | {info.get('complexity') or '-'} "
            f"({theory(solver, infos)}) | {len(records)} | {len(proven)} | "
            f"{sum(r.get('status') == 'timeout' for r in records)} | {sum(r.get('status') == 'error' for r in records)} | "
            f"{sum(r.get('validity', 'ok') != 'ok' for r in records)} | {wrong} | {max(proven) if proven else '-'} |")
    return lines


def fastest_ilp_per_size(results: list[dict], dp: str = "resource-dp") -> list[tuple[int, str | None, float | None,
                                                                                    float | None]]:
    """Per n: the ILP solver (name starting with ``ilp``) with the lowest median time among those that proved every
    instance of that size, its median, and ``dp``'s median (None where there is none)."""
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in results:
        groups[r["solver"], r["n"]].append(r)
    rows = []
    for n in sorted({n for _, n in groups}):
        medians = {}
        for (solver, size), records in groups.items():
            proven = [runtime(r) for r in records if r.get("status") in ("optimal", "infeasible")]
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


def write_report(runs: Iterable[str | os.PathLike], out: str | os.PathLike, *, baseline: str | None = None,
                 title: str = "compbench report", reproduce: list[str] | None = None,
                 sections: list[str] | None = None) -> str:
    """Write the plots and ``out/README.md`` for the given run files; returns the README's path.

    ``sections``: extra Markdown lines placed before the tables (the demo puts its agreement check there)."""
    runs = [str(r) for r in runs]
    out = Path(out)
    results, environments = load_runs(runs)
    infos = solver_infos(environments)
    plots_dir = out / "plots"
    drawn = {Path(p).stem for p in plot_runs(runs, plots_dir, baseline)}
    commands = reproduce or reproduce_commands(environments, runs, str(out))
    limits = sorted({r.get("time_limit") for r in results if r.get("time_limit") is not None})
    lines = [f"# {title}", "",
             f"{len(results)} solves of {len({r['instance'] for r in results})} instances by "
             f"{len({r['solver'] for r in results})} solvers, time limit {', '.join(f'{t:g} s' for t in limits) or 'none'} "
             "per solve (a hard wall-clock limit: a solve still running a grace period past it was killed). Times are setup + solve inside "
             "the solver, measured in a warm worker process; medians over the instances of each size.", "",
             "Regenerate this report with:", "", "```sh", *commands, "```", "", *(sections or []),
             "## Solvers", "", *solver_table(results, infos), "",
             "## Per solver and size", "", *size_table(results), "", *ilp_lines(results, infos)]
    for name, caption in PLOTS:
        if name in drawn:
            lines += [f"## {caption}", "", f"![{caption}](plots/{name}.png)", "", f"([SVG](plots/{name}.svg))", ""]
        else:
            lines += [f"## {caption}", "", NOT_DRAWN.get(name, "Nothing to draw in these runs."), ""]
    lines += ["## Environment", "", *environment_lines(environments), "",
              "Run files: " + ", ".join(f"`{r}`" for r in runs), ""]
    readme = out / "README.md"
    readme.write_text("\n".join(lines), encoding="utf-8")
    return str(readme)
