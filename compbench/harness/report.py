"""``reports/README.md`` from run files: tables per solver and size, the plots, the provenance, how to reproduce; the
summary for a paper as ``summary.csv`` and a booktabs table ``summary.tex``.

>>> import tempfile, os
>>> from compbench.harness.sweep import make_tasks, run_sweep, source_problems
>>> d = tempfile.mkdtemp(); run = os.path.join(d, "run.jsonl")
>>> _ = run_sweep(make_tasks(source_problems("gen:gaussian:4-6:2"), ["brute-force"], 30), run)
>>> readme = write_report([run], d)
>>> "| brute-force | 6 |" in open(readme).read()
True
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shlex
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from compbench.files import atomic_output, replaced_together

from .check import agreement_matrix
from .plots import (RUN_PLOTS, certificate_stats, objective_gaps, plot_runs, solver_infos, speedup_baseline,
                    theory)
from .runfiles import load_runs, read_records
from .stats import LEFT_OUT, annotate, judged, runtime, shift_for, summary_by_kind

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
    "gap": "Relative objective gap (optimum - value) / max(1, |optimum|) of the valid answers not proven optimal, "
           "against the instance's verified optimum (the best solved answer's): mean per size (line) and largest "
           "(hollow marker).",
    "agreement": "For each pair of solvers, the share of the instances where both claimed optimal on which the "
                 "objectives agree (every claim, repeats included: the diagonal is a solver's repeats against each "
                 "other).",
}
NOT_DRAWN = {"speedup": "No exact solver besides the baseline has an instance the baseline solved: no speed-up to "
                        "plot.",
             "certificates": "No Lagrangian solver reported certificates or iterations in these runs.",
             }


def not_drawn(name: str, answers: list[dict], infos: dict[str, dict]) -> str:
    """Why the figure ``name`` was not drawn, as checked in these runs' ``answers`` (every repeat)."""
    if name == "agreement":
        _, both, agree = agreement_matrix(answers)
        shared = int(both.sum() - np.trace(both))
        if not shared:
            return ("No two solvers both claimed optimal on an instance: no optimal claims to compare, no heat map "
                    "to draw.")
        return (f"Every optimal claim agrees with every other on the instances they share ({shared // 2} pairs of "
                "solvers' claims on one instance, repeats included): no heat map to draw.")
    if name == "gap":
        measured = sum(len(values) for sizes in objective_gaps(answers, infos).values() for values in sizes.values())
        if not measured:
            return ("No valid answer short of a proof has a verified optimum (a solved answer's) to measure it "
                    "against: no gap to plot.")
        return (f"Every valid answer short of a proof matched its instance's verified optimum, a solved answer's "
                f"({measured} answers): no gap to plot.")
    return NOT_DRAWN.get(name, "Nothing to draw in these runs.")


def _cell(text: Any) -> str:
    """``text`` for a Markdown table cell: a ``|`` escaped so that it does not end the cell."""
    return str(text).replace("|", "\\|")


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
            f"| {_cell(solver)} | " + (f"{kind} | " if several else "") + f"{n} | "
            f"{sum(r['outcome'] not in LEFT_OUT for r in records)} | "
            f"{_seconds(float(np.median(times))) if times else '-'} | {count('solved')} | {count('timeout')} | "
            f"{count('skipped')} | {count('error', 'invalid', 'contradicted', 'unproven', 'unchecked')} | "
            f"{f'{sum(cert)}/{len(cert)}' if cert else '-'} | "
            f"{f'{float(np.median(extra)):.1f}' if extra else '-'} |")
    lines += ["", "Instances: those the solver supports (unsupported ones left out).  "
              "Median time: setup + solve of the solved instances of that size.  Solved: `optimal` or "
              "`infeasible`, validated, not contradicted by another answer, and compared.  Other unsolved: errors, "
              "invalid or contradicted answers, answers without a proof, proven answers nothing compared.  Memory: "
              "median growth of the worker's peak resident set during the solve over its resident set before it "
              "(MiB); the kernel's resident-set counters are approximate (kept in batches per thread or CPU), so a "
              "solve that allocates almost nothing can measure a fraction of a MiB below zero: shown as 0.0."]
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
            f"| {_cell(solver)} | {'yes' if info.get('exact', True) else 'no'} | "
            f"{_cell(info.get('complexity') or '-')} ({_cell(theory(solver, infos))}) | {len(records)} | "
            f"{len(solved)} | {count('timeout')} | {count('error')} | "
            f"{count('invalid')} | {count('contradicted')} | {max(solved) if solved else '-'} |")
    lines += ["", "Complexity: the solver's own statement of its worst case; in parentheses the exponent k of n in "
              "its running time O(n^k) in theory, to compare with the exponents fitted in the scaling figure "
              "(`5 (n^3 d^2)`: d = min(m, n - m), at most n/2; `per iteration`: times the number of iterations; "
              "`none`: a MIP, no polynomial bound; `poly`: an LP, polynomial; `?`: not stated)."]
    return lines


def _times(ratio: float) -> str:
    """A ratio as "how many times": whole from 10 on, two digits below (an ILP faster than the DP reads 0.4x).

    >>> _times(1132.4), _times(0.4), _times(2.345)
    ('1132x', '0.4x', '2.3x')
    """
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2g}x"


def _ratio(pair: dict | None) -> str:
    if pair is None:
        return "-"
    return f"{pair['ratio']:.3g} [{pair['low']:.3g}, {pair['high']:.3g}] ({pair['instances']})"


def ranking(summary: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(exact, inexact) solvers of a summary in the tables' order: the exact ones by their paired ratio to the
    reference (fair when they ran different instances; the disqualified ones, which have none, last), the inexact
    ones by name."""
    rows, pairs = summary["solvers"], {p["solver"]: p["ratio"] for p in summary["pairs"]}
    ratio = lambda s: 1.0 if s == summary["reference"] else pairs.get(s, math.inf)
    return (sorted((s for s in rows if rows[s]["exact"]), key=lambda s: (ratio(s), s)),
            sorted(s for s in rows if not rows[s]["exact"]))


def statistics_tables(summary: dict[str, Any], results: list[dict]) -> list[str]:
    """The exact solvers' table (SGM, scaled, paired ratio, PAR-2) and the inexact solvers' one, for one summary."""
    rows, pairs = summary["solvers"], {p["solver"]: p for p in summary["pairs"]}
    reference = summary["reference"]  # None: no exact solver, not disqualified, with an SGM
    lines = ["| solver | instances | solved | unchecked | unproven | skipped | timeouts | errors | invalid | "
             f"contradicted | unsupported | SGM | SGM / {_cell(reference or 'none')} | paired ratio [95%] (instances) "
             "| PAR-2 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    exact, inexact = ranking(summary)
    fewer = False
    for solver in exact:
        row = rows[solver]
        scaled = "-" if row["sgm_scaled"] is None else format(row["sgm_scaled"], ".3g")
        if row["disqualified"]:
            scaled = f"disqualified: {row['wrong']} wrong, first on {_cell(row['first_wrong'])}"
        if row["sgm_scaled"] is not None and reference and row["instances"] < rows[reference]["instances"]:
            scaled, fewer = scaled + " †", True
        lines.append(f"| {_cell(solver)} | {row['instances']} | {row['solved']} | {row['unchecked']} | "
                     f"{row['unproven']} | {row['skipped']} | {row['timeouts']} | "
                     f"{row['errors']} | {row['invalid']} | {row['contradicted']} | "
                     f"{row['unsupported']} | "
                     f"{_seconds(row['sgm_seconds']) if row['sgm_seconds'] is not None else '-'} | "
                     f"{scaled} | "
                     f"{'1 (reference)' if solver == reference else _ratio(pairs.get(solver))} | "
                     f"{_seconds(row['par2_seconds']) if row['par2_seconds'] is not None else '-'} |")
    if fewer:
        lines += ["", f"† over fewer instances than {_cell(reference)} (the others unsupported): not "
                  "comparable; the paired ratio is (the rows are sorted by it)."]
    if inexact:
        lines += ["", "Inexact solvers (Lagrangian methods, LP relaxations): an answer is a proof only when they "
                  "certify it; they are not ranked against the exact solvers above.", "",
                  "| solver | instances | proved optimal | not proven | timeouts | errors, invalid, contradicted | "
                  "median time per answer | SGM, unproven at the limit |", "|---|---|---|---|---|---|---|---|"]
        for solver in inexact:
            row = rows[solver]
            times = [runtime(r) for r in results if r["solver"] == solver and r["outcome"] not in LEFT_OUT
                     and runtime(r) is not None]
            lines.append(f"| {_cell(solver)} | {row['instances']} | {row['solved']} | {row['unproven']} | "
                         f"{row['timeouts']} | {row['errors'] + row['invalid'] + row['contradicted']} | "
                         f"{_seconds(float(np.median(times))) if times else '-'} | "
                         f"{_seconds(row['sgm_seconds']) if row['sgm_seconds'] is not None else '-'} |")
    return lines


def shift_origin(summary: dict[str, Any]) -> str:
    """Where a summary's shift came from: the default's rule, or ``--shift`` (any other value)."""
    limit, shift = summary["time_limit"], summary["shift_seconds"]
    if shift == shift_for(limit):
        return "1/1000 of the time limit" if limit else "1 ms: no time limit"
    return "set by --shift"


def statistics_lines(summary: dict[str, Any], results: list[dict]) -> list[str]:
    """The statistics section: how they are computed, then the tables (pooled, and per kind when there are several)."""
    limit = summary["time_limit"]
    lines = [f"Solved: an `optimal` or `infeasible` answer that passed validation, agrees with its instance's "
             f"reference optimum (certified beside the instance file, else computed by the resource-constrained DP "
             f"in the run; see 'Reference optima' below) and was compared: against a proven reference, or beside "
             f"another solver's proven answer that agrees (a proven answer nothing compared is 'unchecked', not "
             f"solved).  A solver with any invalid or contradicted answer is "
             f"disqualified (the SAT competitions' rule): marked in the tables and figures, never ranked, scaled or "
             f"fastest.  SGM: shifted geometric mean exp(mean(log(t + s))) - s of each solve's time "
             f"(`seconds.total`, or the worker's clock around the call when that is longer) with shift s = "
             f"{_seconds(summary['shift_seconds'])} ({shift_origin(summary)}), an unsolved instance (timeout, "
             f"error, invalid or contradicted answer, no proof, or skipped) counted at its time limit "
             f"({_seconds(limit) if limit else 'none: at the longest time any answer of the run took'}); only "
             f"unsupported solves (outside what a solver declares) are left out (column 'unsupported'; a solver's "
             f"SGM is over the instances it supports).  Repeats of a "
             f"solve (`bench --repeats`) count once: at their median time when every repeat solved it, else as "
             f"the worst.  SGM / {summary['reference'] or 'none'}: scaled so "
             "that the fastest exact solver not disqualified that solved an instance, among those that ran the most "
             "instances, is 1.  Paired "
             f"ratio: the SGM ratio solver / {summary['reference'] or 'none'} over the instances both ran, with a 95% "
             f"bootstrap interval ({summary['bootstrap']['samples']} resamples of the instances, seed "
             f"{summary['bootstrap']['seed']}); compare solvers by it when they ran different instances.  PAR-2: "
             "mean time with unsolved instances at twice the limit."]
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
        lines.append(f"| {_cell(solver)} | {_cell(info.get('formulation', '-'))} | "
                     f"{_cell(info.get('description', '-'))} |")
    lines += ["", "Formulations: `dp`, the hook-trick chart's hypergraph flow (one column per rule instance, one "
              "flow-conservation row per item, z integer: the DP's own polytope, integral at free length); `joint`, "
              "the joint model of tree (single-commodity flow), bigram chain and projectivity rows "
              "(Thadani & McKeown 2013 style).", "",
              "| n | fastest ILP proving every instance | its median | resource-dp median | ILP / DP |",
              "|---|---|---|---|---|"]
    for n, best, t_best, t_dp in fastest_ilp_per_size(results):
        ratio = _times(t_best / t_dp) if best and t_dp else "-"
        lines.append(f"| {n} | {_cell(best or 'none')} | {_seconds(t_best) if best else '-'} | "
                     f"{_seconds(t_dp) if t_dp else '-'} | {ratio} |")
    return lines + [""]


def run_parts(runs: list[str]) -> list[tuple[dict, dict | None]]:
    """Each part of the runs (a sweep's start or resume): its environment record and the end record that closed it
    (None when there is none: killed, or still running)."""
    parts: list[tuple[dict, dict | None]] = []
    for path in runs:
        mine: list[list] = []
        for record in read_records(path):
            if record["type"] == "environment":
                mine.append([record, None])
            elif record["type"] == "end" and mine and mine[-1][1] is None:
                mine[-1][1] = record
        parts += [(env, end) for env, end in mine]
    return parts


def machine(env: dict) -> str:
    """The machine of an environment record: CPU, logical cores (and the usable ones when fewer), memory."""
    usable = env.get("cpus_usable")
    memory = env.get("memory_mb")
    return (f"{env.get('cpu', '?')}, {env.get('cpu_count', '?')} logical cores"
            + (f" ({usable} usable)" if usable and usable != env.get("cpu_count") else "")
            + (f", {memory / 1024:.1f} GiB memory" if memory else ""))


def source(env: dict) -> str:
    """compbench's version and git commit in an environment record, and whether the checkout had changes."""
    version = env.get("compbench") or (env.get("packages") or {}).get("compbench") or "?"
    git = env.get("git")
    if "git" not in env:
        return f"compbench {version}, commit not recorded"
    if not git:
        return f"compbench {version}, not run from a git checkout (no commit)"
    tree = {True: "dirty tree: uncommitted changes to the source", False: "clean tree"}.get(git.get("dirty"),
                                                                                            "dirty or not: unknown")
    return f"compbench {version}, commit `{git['commit']}` ({tree})"


def _load(values: list[float] | None) -> str:
    return ", ".join(map(str, values)) if values else "unknown"


def provenance_lines(parts: list[tuple[dict, dict | None]], solvers: list[str]) -> list[str]:
    """What the results came from: per run part the source, machine and load at start and end; packages, threads and
    settings; per solver its distribution and version, or an ``exec:`` program's path and SHA-256."""
    if not parts:
        return ["(no environment record in the run files)"]
    env = parts[0][0]
    lines = []
    for i, (start, end) in enumerate(parts, 1):
        lines += [f"- part {i} of {len(parts)}, started {start.get('started')}: {source(start)}; machine: "
                  f"{machine(start)}; load average (1, 5, 15 min) {_load(start.get('load_average'))} at the start, "
                  + (f"{_load(end.get('load_average'))} at the end ({end.get('ended')})" if end
                     else "no end record (killed, or still running)")]
    packages = ", ".join(f"{k} {v}" for k, v in (env.get("packages") or {}).items() if v)
    threads = ", ".join(f"{k}={v}" for k, v in (env.get("threads") or {}).items() if v) or "none set"
    settings = env.get("settings") or {}
    lines += [f"- {env.get('platform')}; Python {env.get('python')}; {packages}",
              f"- thread variables: {threads}",
              "- settings: " + ", ".join(f"{k}={v}" for k, v in settings.items()), "",
              "| solver | distribution or program | version or SHA-256 |", "|---|---|---|"]
    distributions, programs = {}, {}
    for start, _ in parts:
        distributions.update(start.get("solver_distributions") or {})
        programs.update(start.get("programs") or {})
    for solver in solvers:
        if solver in programs:
            program = programs[solver]
            what, version = (f"program `{program['path']}`", f"`{program['sha256']}`") if program["sha256"] \
                else ("program not found when the run started", "-")
        else:
            dist = distributions.get(solver.partition("[")[0])
            what, version = (dist["distribution"], dist["version"]) if dist else ("not recorded", "-")
        lines.append(f"| {_cell(solver)} | {_cell(what)} | {_cell(version)} |")
    return lines


def reproduce_commands(environments: list[dict], runs: list[str], out: str, baseline: str | None = None,
                       shift: float | None = None) -> list[str]:
    """The commands that made the runs (as recorded, shell-quoted) and the one that writes this report."""
    commands = []
    for env in environments:
        command = env.get("command") or f"# the run part started {env.get('started')} was not run from the command line"
        if command not in commands:
            commands.append(command)
    report = ["compbench", "report", *runs, "--out", out]
    report += ["--baseline", baseline] if baseline else []
    report += ["--shift", str(shift)] if shift is not None else []
    return commands + [shlex.join(report)]


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


CSV_COLUMNS = ("solver", "exact", "disqualified", "solved", "total", "sgm_seconds", "shift_seconds", "par2_seconds",
               "sgm_scaled", "timeouts", "errors", "wrong")
LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                 "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "|": r"\textbar{}",
                 "<": r"\textless{}", ">": r"\textgreater{}"}


RESULT_COLUMNS = ("solver", "instance", "hash", "n", "kind", "repeat", "status", "verdict", "solved", "objective",
                  "reference", "reference_source", "seconds", "time_limit", "why")


def results_csv(results: list[dict]) -> str:
    """``results.csv``: one row per answer (every repeat) with RESULT_COLUMNS; ``results`` annotated.  ``solved`` is
    true only for a validated answer that agrees with its reference; ``seconds`` is the solve's own time."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(RESULT_COLUMNS)
    for r in sorted(results, key=lambda r: (r["solver"], r["n"], r["instance"], r.get("repeat", 0))):
        row = {**r, "reference": r["reference_value"], "seconds": runtime(r), "repeat": r.get("repeat", 0)}
        writer.writerow(["" if row.get(c) is None else str(row[c]).lower() if isinstance(row[c], bool) else row[c]
                         for c in RESULT_COLUMNS])
    return text.getvalue()


def reference_lines(results: list[dict]) -> list[str]:
    """What the answers were judged against: per source, how many instances it served."""
    sources: dict[str, set] = defaultdict(set)
    for r in results:
        sources[r["reference_source"] or "none (nothing to judge against)"].add(r["instance"])
    return ["Every answer was judged against its instance's reference (`results.csv` has the verdict of each): "
            "a certified optimum (two independent exact methods agreed, `compbench certify`), else the optimum the "
            "resource-constrained DP computed in the run, else the best valid objective any answer reached (a lower "
            "bound: a proven answer then counts as solved only beside a second one that agrees).", "",
            "| reference | instances |", "|---|---|",
            *(f"| {_cell(source)} | {len(instances)} |" for source, instances in sorted(sources.items()))]


def summary_csv(summary: dict[str, Any], total: int) -> str:
    """``summary.csv``: one row per solver of the summary (the tables' order) with CSV_COLUMNS; ``total`` is the
    number of instances of the set; a missing value is an empty cell."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    exact, inexact = ranking(summary)
    for solver in exact + inexact:
        row = {**summary["solvers"][solver], "solver": solver, "total": total}
        writer.writerow(["" if row[c] is None else str(row[c]).lower() if isinstance(row[c], bool) else row[c]
                         for c in CSV_COLUMNS])
    return text.getvalue()


def latex_escape(text: str) -> str:
    r"""``text`` as LaTeX typesets it in any font encoding: its special characters escaped.

    >>> print(latex_escape("ilp_x[a=1]&b%c#d$e|f"))
    ilp\_x[a=1]\&b\%c\#d\$e\textbar{}f
    """
    return "".join(LATEX_SPECIAL.get(char, char) for char in text)


def _tex_seconds(value: float | None) -> str:
    return "--" if value is None else _seconds(value).replace(" ", "~")


def summary_tex(summary: dict[str, Any], total: int, environments: list[dict]) -> str:
    """``summary.tex``: the summary as a booktabs table for a paper (``\\usepackage{booktabs}``, then ``\\input``
    it): per solver the solved instances, SGM, PAR-2 and scaled SGM; the exact solvers first, by their paired ratio
    to the reference; a disqualified solver marked with a dagger and a note; the caption says how it was measured."""
    rows, reference = summary["solvers"], summary["reference"]
    exact, inexact = ranking(summary)
    limit = summary["time_limit"]
    machines = "; ".join(dict.fromkeys(machine(env) for env in environments)) or "not recorded"
    caption = (f"Time limit {_seconds(limit) if limit else 'none'} per solve.  SGM: shifted geometric mean of the "
               f"time (setup + solve) with shift {_seconds(summary['shift_seconds'])}, an unsolved instance counted "
               f"at the limit{'' if limit else ' (none: the longest time of the run)'}; PAR-2: mean time, an unsolved "
               "instance counted at twice the limit; both over the instances a solver ran.  Scaled SGM: SGM over "
               "that of "
               + (f"{reference}, the fastest exact solver" if reference else "the fastest exact solver (none here)")
               + ".  Solved: an optimal or infeasible answer that passed validation and agrees with the reference "
               "optimum." + ("  Below the second rule: inexact solvers, not ranked; solved means proven optimal."
                             if exact and inexact else "") + f"  Machine: {machines}.")
    lines = [r"% compbench report: \input this table after \usepackage{booktabs}", r"\begin{table}", r"\centering",
             rf"\caption{{{latex_escape(caption)}}}", r"\label{tab:compbench-summary}", r"\begin{tabular}{lrrrr}",
             r"\toprule", rf"Solver & Solved & SGM (shift {_tex_seconds(summary['shift_seconds'])}) & PAR-2 & "
             r"Scaled SGM \\", r"\midrule"]
    for group in (exact, inexact):
        if group is inexact and exact and inexact:
            lines.append(r"\midrule")
        for solver in group:
            row = rows[solver]
            scaled = row["sgm_scaled"]
            scaled = "--" if scaled is None else f"{scaled:.0f}" if scaled >= 1000 else f"{scaled:.3g}"  # no 2.87e+03
            dagger = r"$^\dagger$" if row["disqualified"] else ""
            lines.append(f"{latex_escape(solver)}{dagger} & "
                         f"{row['solved']}/{total} & {_tex_seconds(row['sgm_seconds'])} & "
                         f"{_tex_seconds(row['par2_seconds'])} & {scaled} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    wrong = [s for s in exact + inexact if rows[s]["disqualified"]]
    if wrong:
        lines += [r"\par\smallskip\footnotesize"] + [
            rf"$^\dagger$\,{latex_escape(s)} disqualified: {rows[s]['wrong']} wrong answer"
            f"{'s' if rows[s]['wrong'] != 1 else ''} (invalid or contradicted)\\par" for s in wrong]
    return "\n".join(lines + [r"\end{table}", ""])


def write_report(runs: Iterable[str | os.PathLike], out: str | os.PathLike, *, baseline: str | None = None,
                 title: str = "compbench report", reproduce: list[str] | None = None,
                 sections: list[str] | None = None, shift: float | None = None) -> str:
    """Write the plots, ``out/summary.json``, ``summary.csv``, ``summary.tex`` (all kinds pooled) and ``README.md``
    for the given run files, each file whole or not at all; returns the README's path.

    ``sections``: extra Markdown lines placed before the tables (the demo puts its agreement check there);
    ``shift``: the SGM's shift in seconds (default 1/1000 of the time limit)."""
    runs = [str(r) for r in runs]
    out = Path(out)
    raw, environments = load_runs(runs)
    limits = sorted({r.get("time_limit") for run in runs for r in read_records(run) if r["type"] == "result"}, key=str)
    if len(limits) > 1:
        raise ValueError(f"{', '.join(runs)}: the runs mix time limits ({', '.join(map(str, limits))} s); a table "
                         "compares solves under one limit: report them apart")
    infos = solver_infos(environments)
    answers = annotate(raw)
    results = judged(raw)
    summary = summary_by_kind(raw, infos, shift)
    total = len({r["instance"] for r in results})
    stale = [f"plots/{name}.{ext}" for name in RUN_PLOTS for ext in ("png", "svg")]  # an earlier report's
    with replaced_together(out, stale, last="README.md") as staging:  # the whole report, or the old one kept
        _write(staging / "results.csv", results_csv(answers))
        _write(staging / "summary.json", json.dumps({**summary, "runs": runs}, indent=1, allow_nan=False) + "\n")
        _write(staging / "summary.csv", summary_csv(summary, total))
        _write(staging / "summary.tex", summary_tex(summary, total, environments))
        drawn = {Path(p).stem for p in plot_runs(runs, staging / "plots", baseline)}
        commands = reproduce or reproduce_commands(environments, runs, str(out), baseline, shift)
        baseline = baseline or speedup_baseline(results, infos)
        limits = sorted({r.get("time_limit") for r in results if r.get("time_limit") is not None})
        scope = figure_scope(results, environments)
        limit_text = ", ".join(f"{t:g} s" for t in limits) or "none"
        lines = [f"# {title}", "",
                 f"{len(results)} solves of {total} instances by {len({r['solver'] for r in results})} solvers, time "
                 f"limit {limit_text} per solve (a hard wall-clock limit: a solve still running a grace period past "
                 "it was killed; an answer that came after the limit is a timeout). Times are setup + solve, "
                 "measured in a warm worker process (the solver's own clock, or the worker's around the call when "
                 "that is longer).", "",
                 "Regenerate this report with:", "", "```sh", *commands, "```", "", *(sections or []),
                 "## Statistics", "", *statistics_lines(summary, results), "",
                 "The same numbers, per solver with the same keys: `summary.json`; for a paper, pooled over the "
                 "kinds: `summary.csv` and the booktabs table `summary.tex`; every answer with its verdict: "
                 "`results.csv`.", "",
                 "## Reference optima", "", *reference_lines(answers), "",
                 "## Solvers", "", *solver_table(results, infos), "",
                 "## Per solver and size", "", *size_table(results), "", *ilp_lines(results, infos)]
        for name, caption in PLOTS:
            if name in drawn:
                what = CAPTIONS[name] + (f"  Baseline: {baseline}." if name == "speedup" else "")
                lines += [f"## {caption}", "", f"![{caption}](plots/{name}.png)", "", f"{what}  {scope}", "",
                          f"([SVG](plots/{name}.svg))", ""]
            else:
                lines += [f"## {caption}", "", not_drawn(name, answers, infos), ""]
        lines += ["## Provenance", "", *provenance_lines(run_parts(runs), sorted({r["solver"] for r in results})), "",
                  "Run files: " + ", ".join(f"`{r}`" for r in runs), ""]
        _write(staging / "README.md", "\n".join(lines))
    return str(out / "README.md")


def _write(path: Path, text: str) -> None:
    """``text`` into ``path`` whole or not at all (a temporary file beside it, then renamed)."""
    with atomic_output(path) as partial:
        partial.write_text(text, encoding="utf-8")
