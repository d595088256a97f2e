"""Plots of run files (matplotlib Agg, PNG and SVG): runtime, speed-up, certificates, gaps, agreement.

>>> import tempfile, os
>>> from compbench.harness.sweep import make_tasks, run_sweep, source_problems
>>> d = tempfile.mkdtemp(); run = os.path.join(d, "run.jsonl")
>>> _ = run_sweep(make_tasks(source_problems("gen:gaussian:4-6:2"), ["brute-force"], 30), run)
>>> sorted(os.path.basename(p) for p in plot_runs([run], d) if p.endswith(".png"))  # nothing else to show
['runtime.png', 'speedup.png']
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .check import agreement_matrix
from .sweep import read_records

SOLVED = ("optimal", "infeasible", "feasible")
# Theoretical exponent of n in the running time (resource-dp: n^3 d^2 with d ~ m ~ n).
THEORY = {"hook-dp": "3", "resource-dp": "5 (n^3 d^2)", "signature-dp": "6", "bisection": "3 per iteration",
          "bisection-exact": "3 per iteration", "ql-subgradient": "3 per iteration", "brute-force": "exponential"}


def load_runs(paths: Iterable[str | os.PathLike]) -> tuple[list[dict], list[dict]]:
    """(results, environments) of some run files; a later record of the same (instance, solver) wins."""
    results: dict[tuple[str, str], dict] = {}
    environments = []
    for path in paths:
        for record in read_records(path):
            if record["type"] == "environment":
                environments.append(record)
            elif record["type"] == "result":
                results[record["instance"], record["solver"]] = record
    return list(results.values()), environments


def solver_infos(environments: list[dict]) -> dict[str, dict]:
    infos: dict[str, dict] = {}
    for env in environments:
        infos.update(env.get("solvers") or {})
    return infos


# One line style per solver family, the same in every figure: the dynamic programs solid, the ILP over the DP's own
# polytope dashed, the joint ILP dotted, the LP relaxations dash-dot.
FAMILY_STYLE = {"dp": "-", "ilp-dp": "--", "ilp": ":", "lp": "-."}


def family(solver: str) -> str:
    """``lp``, ``ilp-dp`` (the dp formulation), ``ilp`` (the joint model) or ``dp`` (everything else)."""
    if solver.startswith("lp-"):
        return "lp"
    if solver.startswith("ilp-dp") or "formulation=dp" in solver:
        return "ilp-dp"
    return "ilp" if solver.startswith("ilp") else "dp"


# Colours, the same in every figure: one per dynamic program, and one per MIP backend shared by both formulations
# (the family's line style tells them apart); a solver with options in brackets keeps its colour, square markers.
DP_COLOURS = {"resource-dp": "#1f77b4", "hook-dp": "#17becf", "bisection": "#2ca02c", "bisection-exact": "#98df8a",
              "signature-dp": "#9467bd", "ql-subgradient": "#c5b0d5", "brute-force": "#7f7f7f"}
BACKEND_COLOURS = {"highs": "#d62728", "rcfix-highs": "#ff7f0e", "pulp-highs": "#e377c2", "pulp-cbc": "#8c564b",
                   "ortools-scip": "#bcbd22", "ortools-cpsat": "#393b79", "gurobi": "#637939"}
LP_COLOURS = {"lp-dp-highs": "#7b4173", "lp-joint-highs": "#9e9ac8"}
OTHER_COLOURS = ("#5254a3", "#8ca252", "#bd9e39", "#ad494a", "#a55194", "#6b6ecf", "#e7ba52", "#3182bd",
                 "#e6550d", "#31a354", "#756bb1", "#636363", "#9c9ede", "#cedb9c", "#e7969c", "#de9ed6", "#6baed6")


def solver_colour(solver: str) -> Any:
    """A solver's colour in every figure (see DP_COLOURS and BACKEND_COLOURS; plug-ins by a stable hash); a
    variant with options in brackets gets a lighter shade of its solver's colour."""
    from matplotlib.colors import to_rgb

    base = solver.partition("[")[0]
    colour = DP_COLOURS.get(base) or LP_COLOURS.get(base)
    for prefix in ("ilp-dp-", "ilp-"):
        if colour is None and base.startswith(prefix) and base[len(prefix):] in BACKEND_COLOURS:
            colour = BACKEND_COLOURS[base[len(prefix):]]
    colour = to_rgb(colour or OTHER_COLOURS[sum(map(ord, base)) % len(OTHER_COLOURS)])
    return tuple(0.55 * c + 0.45 for c in colour) if base != solver else colour


def solver_marker(solver: str) -> str:
    return "s" if "[" in solver else "o"


def integer_log_axis(ax: Any, sizes: Iterable[int]) -> None:
    """A log-scale n axis labelled with the plain sizes measured (no 2x10^1)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator, ScalarFormatter

    sizes = sorted(set(sizes))
    ax.set_xscale("log")
    step = max(1, len(sizes) // 10)
    ax.xaxis.set_major_locator(FixedLocator(sizes[::step]))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def theory(solver: str, infos: dict[str, dict]) -> str:
    if solver in THEORY:
        return THEORY[solver]
    if solver.startswith(("ilp-", "lp-")):
        return "none" if solver.startswith("ilp-") else "poly"
    return infos.get(solver, {}).get("complexity") or "?"


def runtime(record: dict) -> float | None:
    seconds = record.get("seconds") or {}
    value = seconds.get("total", seconds.get("wall"))
    return float(value) if value is not None else None


def by_solver_size(results: list[dict], statuses: tuple[str, ...] = SOLVED) -> dict[str, dict[int, list[float]]]:
    """Runtimes of the records with one of ``statuses``, per solver and n."""
    out: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        t = runtime(r)
        if r.get("status") in statuses and t is not None:
            out[r["solver"]][r["n"]].append(max(t, 1e-7))
    return out


def fitted_exponent(sizes: list[int], medians: list[float]) -> float | None:
    """Slope of log(median time) against log(n) (see :func:`fit_points`); None with too few sizes."""
    fit = fit_points(sizes, medians)
    return None if fit is None else fit[0]


def fit_points(sizes: list[int], medians: list[float], min_sizes: int = 3) -> tuple[float, int, int] | None:
    """(slope, first n, last n) of log(median time) against log(n); with 6 sizes or more over the larger half only
    (small sizes measure overhead).  None with fewer than ``min_sizes`` sizes."""
    points = [(n, t) for n, t in zip(sizes, medians) if n > 0 and t > 0]
    if len(points) < min_sizes:
        return None
    if len(points) >= 6:
        points = points[len(points) // 2:]
    x = np.log([n for n, _ in points])
    y = np.log([t for _, t in points])
    if np.ptp(x) == 0:
        return None
    return float(np.polyfit(x, y, 1)[0]), points[0][0], points[-1][0]


def _figure(title: str, ncols: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(7.5 * ncols, 5.0), squeeze=False)
    fig.suptitle(title)
    return fig, list(axes[0])


def _save(fig: Any, out: Path, name: str) -> list[str]:
    import matplotlib.pyplot as plt

    paths = []
    fig.tight_layout()
    for ext in ("png", "svg"):
        path = out / f"{name}.{ext}"
        fig.savefig(path, dpi=110, bbox_inches="tight")  # nothing clipped: legends sit outside the axes
        paths.append(str(path))
    plt.close(fig)
    return paths


def _note(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def plot_runtime(results: list[dict], infos: dict[str, dict], out: Path) -> list[str]:
    fig, (ax,) = _figure("Runtime per instance vs n (median, inter-quartile band; x = timeouts at the limit)")
    times = by_solver_size(results)
    timeouts: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r.get("status") == "timeout":
            timeouts[r["solver"]][r["n"]].append(float(r.get("time_limit") or runtime(r) or 1.0))
    solvers = sorted(set(times) | set(timeouts), key=lambda s: (list(FAMILY_STYLE).index(family(s)), s))
    colors = {s: solver_colour(s) for s in solvers}
    for solver in solvers:
        sizes = sorted(n for n in times[solver] if n > 0)
        if sizes:
            q = np.array([np.percentile(times[solver][n], [25, 50, 75]) for n in sizes])
            # a fit only over sizes with at least 3 instances, and at least 4 such sizes
            enough = [i for i, n in enumerate(sizes) if len(times[solver][n]) >= 3]
            fit = fit_points([sizes[i] for i in enough], [q[i, 1] for i in enough], min_sizes=4)
            fitted = f"n^{fit[0]:.1f} over n = {fit[1]}-{fit[2]}" if fit else "no fit (too few sizes)"
            label = f"{solver}: {fitted}; theory {theory(solver, infos)}"
            ax.plot(sizes, q[:, 1], FAMILY_STYLE[family(solver)], marker=solver_marker(solver), color=colors[solver],
                    label=label, markersize=3)
            ax.fill_between(sizes, q[:, 0], q[:, 2], color=colors[solver], alpha=0.2)
        marks = sorted(timeouts[solver].items())
        if marks:
            ax.scatter([n for n, _ in marks], [max(v) for _, v in marks], marker="x", s=60, color=colors[solver],
                       label=f"{solver}: timeouts ({sum(len(v) for _, v in marks)})" if not sizes else None)
            for n, v in marks:
                ax.annotate(str(len(v)), (n, max(v)), textcoords="offset points", xytext=(4, 4), fontsize=7,
                            color=colors[solver])
    absent = sorted({r["solver"] for r in results} - set(solvers))
    if absent:  # say why a solver has no curve
        reasons = []
        for solver in absent:
            statuses = defaultdict(int)
            for r in results:
                if r["solver"] == solver:
                    statuses[r.get("status")] += 1
            reasons.append(f"{solver} ({', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))})")
        fig.text(0.01, 0.01, "no solved instance, not drawn: " + "; ".join(reasons), fontsize=7, wrap=True)
    if not solvers:
        _note(ax, "no completed solves in these runs")
    else:
        integer_log_axis(ax, [n for s in solvers for n in (*times[s], *timeouts[s]) if n > 0])
        ax.set_yscale("log")
        ax.set_xlabel("n (tokens)")
        ax.set_ylabel("seconds (setup + solve)")
        ax.grid(True, which="both", alpha=0.3)
        fig.set_size_inches(13.0, 6.0)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                  title="solid: DP, dashed: ILP over the DP's polytope,\ndotted: joint ILP, dash-dot: LP only",
                  title_fontsize=7)
    return _save(fig, out, "runtime")


def baselines_per_size(results: list[dict], infos: dict[str, dict]) -> tuple[dict[int, str], str]:
    """Per n, the fastest (median) ILP solver that proved every instance of that size; without any ILP the slowest
    exact solver that did; and a sentence saying which rule chose them."""
    groups: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for r in results:
        groups[r["solver"], r["n"]].append(r)
    chosen: dict[int, str] = {}
    any_ilp = any(s.startswith("ilp") for s, _ in groups)
    for n in sorted({n for _, n in groups}):
        proven = {}
        for (solver, size), records in groups.items():
            times = [runtime(r) for r in records if r.get("status") in ("optimal", "infeasible")]
            if size == n and len(times) == len(records) and None not in times:
                proven[solver] = float(np.median(times))
        ilps = {s: t for s, t in proven.items() if s.startswith("ilp")}
        exact = {s: t for s, t in proven.items() if infos.get(s.partition("[")[0], {}).get("exact", True)
                 and s != "brute-force"}
        if ilps:
            chosen[n] = min(ilps, key=ilps.get)
        elif exact and not any_ilp:
            chosen[n] = max(exact, key=exact.get)
    why = ("baseline per n: the fastest ILP that proved every instance of that size (named under the axis)" if any_ilp
           else "baseline per n: the slowest exact solver that proved every instance (no ILP in these runs)")
    return chosen, why


def plot_speedup(results: list[dict], infos: dict[str, dict], out: Path, baseline: str | None = None) -> list[str]:
    if baseline is None:
        chosen, why = baselines_per_size(results, infos)
    else:
        chosen, why = {r["n"]: baseline for r in results}, f"baseline {baseline} (chosen)"
    fig, (ax,) = _figure(f"Speed-up over the baseline, per instance both solved (median)\n{why}")
    base = {r["instance"]: runtime(r) for r in results if r["solver"] == chosen.get(r["n"])
            and r.get("status") in ("optimal", "infeasible")}
    ratios: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        t = runtime(r)
        if r["solver"] != chosen.get(r["n"]) and r["instance"] in base and r.get("status") in SOLVED and t:
            ratios[r["solver"]][r["n"]].append(base[r["instance"]] / max(t, 1e-7))
    if not ratios:
        _note(ax, f"{why}\nno instance solved by both the baseline and another solver")
        return _save(fig, out, "speedup")
    for solver in sorted(ratios, key=lambda s: (list(FAMILY_STYLE).index(family(s)), s)):
        ns = sorted(ratios[solver])
        ax.plot(ns, [np.median(ratios[solver][n]) for n in ns], FAMILY_STYLE[family(solver)],
                marker=solver_marker(solver), color=solver_colour(solver), label=solver, markersize=3)
    ax.axhline(1.0, color="gray", lw=0.8)
    sizes = sorted({n for s in ratios.values() for n in s})
    integer_log_axis(ax, sizes)
    ax.set_yscale("log")
    ax.set_xlabel("n (tokens); the baseline at each n below it", labelpad=34)
    ax.set_ylabel("time(baseline) / time(solver)")
    ax.grid(True, which="both", alpha=0.3)
    for n in sizes:  # which solver was the baseline at each size
        if n in chosen:
            ax.annotate(chosen[n], (n, 0), xycoords=("data", "axes fraction"), xytext=(0, -30),
                        textcoords="offset points", fontsize=7, rotation=15, ha="center", color="dimgray")
    fig.set_size_inches(13.0, 6.0)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return _save(fig, out, "speedup")


CERTIFICATE_KEYS = ("certificate", "certified", "converged")  # what Lagrangian solvers call "optimality proven"


def certificate_stats(results: list[dict]) -> tuple[dict, dict]:
    """Per solver and n: certificate flags and iteration counts read from ``stats``.

    The flag is the first of ``stats["certificate"]``, ``["certified"]``, ``["converged"]`` present; a solver that
    reports ``iterations`` but none of those counts as certified when its status is ``optimal``.
    """
    certs: dict[str, dict[int, list[bool]]] = defaultdict(lambda: defaultdict(list))
    iters: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        stats = r.get("stats")
        if not isinstance(stats, dict):
            continue
        it = stats.get("iterations")
        has_iterations = isinstance(it, (int, float)) and not isinstance(it, bool) and math.isfinite(it)
        cert = next((stats[k] for k in CERTIFICATE_KEYS if k in stats), None)
        if isinstance(cert, str):
            certs[r["solver"]][r["n"]].append(cert.strip().lower() not in ("", "none", "false", "no", "0"))
        elif isinstance(cert, (bool, int, float)):
            certs[r["solver"]][r["n"]].append(bool(cert))
        elif cert is None and has_iterations:
            certs[r["solver"]][r["n"]].append(r.get("status") == "optimal")
        if has_iterations:
            iters[r["solver"]][r["n"]].append(float(it))
    return certs, iters


def plot_certificates(results: list[dict], out: Path) -> list[str]:
    """Certificate rate and iterations of the Lagrangian solvers; nothing is drawn when none of them ran."""
    certs, iters = certificate_stats(results)
    if not certs and not iters:
        return []
    fig, (left, right) = _figure("Lagrangian solvers: how often the optimum is certified, and the work it takes", 2)
    markers = "osD^v<>"
    for ax, data, reduce in ((left, certs, lambda v: 100.0 * np.mean(v)), (right, iters, np.median)):
        for i, solver in enumerate(sorted(data)):
            ns = sorted(data[solver])
            counts = sorted({len(data[solver][n]) for n in ns})
            per = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
            ax.plot(ns, [reduce(data[solver][n]) for n in ns], FAMILY_STYLE[family(solver)],
                    color=solver_colour(solver), marker=markers[i % len(markers)], markersize=7 - 2 * (i % 3),
                    alpha=0.85, label=f"{solver} ({per} instances per n)")
        if not data:
            _note(ax, "no solver reported this")
            continue
        integer_log_axis(ax, [n for s in data.values() for n in s])
        ax.set_xlabel("n (tokens)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    left.set_ylabel("certified (% of the instances of that size)")
    right.set_ylabel("iterations (median)")
    left.set_ylim(-5, 105)
    return _save(fig, out, "certificates")


def objective_gaps(results: list[dict], infos: dict[str, dict]) -> dict[str, dict[int, list[float]]]:
    """Relative gap (optimum - value) / max(1, |optimum|) of results not proven optimal by an exact solver."""
    optimum: dict[str, float] = {}
    for r in results:
        if r.get("status") == "optimal" and r.get("objective") is not None and infos.get(r["solver"], {}).get(
                "exact", True) and r.get("validity", "ok") == "ok":
            optimum[r["instance"]] = max(optimum.get(r["instance"], -math.inf), float(r["objective"]))
    gaps: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        exact = infos.get(r["solver"], {}).get("exact", True)
        if r["instance"] not in optimum or r.get("objective") is None or (exact and r.get("status") == "optimal"):
            continue
        if r.get("status") not in ("feasible", "timeout", "optimal"):
            continue
        best = optimum[r["instance"]]
        gaps[r["solver"]][r["n"]].append(max(0.0, (best - float(r["objective"])) / max(1.0, abs(best))))
    return gaps


def plot_gaps(results: list[dict], infos: dict[str, dict], out: Path) -> list[str]:
    """Objective gaps of the answers not proven optimal; nothing is drawn when there is none."""
    gaps = {s: sizes for s, sizes in objective_gaps(results, infos).items()
            if any(v > 0 for values in sizes.values() for v in values)}
    if not gaps:
        return []
    fig, (ax,) = _figure("Objective gap of the answers not proven optimal: (optimum - value) / max(1, |optimum|)\n"
                         "(line: mean over the instances of that size; triangle: the largest)")
    for solver, sizes in sorted(gaps.items()):
        ns = sorted(sizes)
        ax.plot(ns, [np.mean(sizes[n]) for n in ns], FAMILY_STYLE[family(solver)], marker="o",
                color=solver_colour(solver), label=solver, markersize=3)
        ax.plot(ns, [np.max(sizes[n]) for n in ns], "^", color=solver_colour(solver))
    integer_log_axis(ax, [n for s in gaps.values() for n in s])
    ax.set_xlabel("n (tokens)")
    ax.set_ylabel("relative gap")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, out, "gap")


def plot_agreement(results: list[dict], out: Path) -> list[str]:
    solvers, both, agree = agreement_matrix(results)
    if not solvers or np.array_equal(agree, both):  # nothing disagrees: the report says so in one line
        return []
    fig, (ax,) = _figure("Agreement of optimal claims: share of common instances with equal objectives")
    if solvers:
        rate = np.divide(agree, both, out=np.full(both.shape, np.nan), where=both > 0)
        image = ax.imshow(rate, vmin=0.0, vmax=1.0, cmap="RdYlGn")
        ax.set_xticks(range(len(solvers)), solvers, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(len(solvers)), solvers, fontsize=8)
        for i in range(len(solvers)):
            for j in range(len(solvers)):
                text = f"{agree[i, j]}/{both[i, j]}" if both[i, j] else "-"
                ax.text(j, i, text, ha="center", va="center", fontsize=7)
        fig.colorbar(image, ax=ax, label="agreeing share")
    else:
        _note(ax, "no optimal claims in these runs")
    return _save(fig, out, "agreement")


def read_accuracy(path: str | os.PathLike) -> dict | None:
    """The record of a ``compbench evaluate`` JSON file (one object with ``systems``), or None for anything else
    (e.g. a JSONL run file)."""
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("systems"), dict) else None


def plot_accuracy(records: dict[str, dict], out: Path) -> list[str]:
    """F1 vs compression rate and F1 vs time per sentence, one colour per evaluate record (corpus and length)."""
    fig, (rate_ax, time_ax) = _figure("token F1 against human compressions (test split)\n(hollow: an inexact "
                                      "solver's F1 over the sentences it answered, i.e. certified)", ncols=2)
    fig.set_size_inches(16.0, 7.0)
    for index, (path, data) in enumerate(records.items()):
        label = f"{data.get('corpus', Path(path).stem)}, length {data.get('length', '?')}"
        colour = f"C{index % 10}"
        labelled: set[Any] = set()  # one legend entry per file and axis
        for rank, (name, row) in enumerate(data["systems"].items()):
            if row.get("f1") is None:
                continue
            f1, rate, hollow = row["f1"], row["compression_rate"], False
            if row.get("failed") and row.get("answered_f1") is not None:  # unanswered sentences are no compression
                f1, rate, hollow = row["answered_f1"], row.get("answered_compression_rate", rate), True
                name = f"{name}: {row['answered_sentences']}/{row['sentences']} answered"
            ms = 1000 * (row.get("seconds_per_solve") or 0.0)
            points = [(rate_ax, rate)] + ([(time_ax, ms)] if ms > 1e-2 else [])  # first-m: 0 ms
            for ax, x in points:
                ax.scatter(x, f1, color=colour, facecolors="none" if hollow else colour,
                           label=None if ax in labelled else label)
                ax.annotate(name, (x, f1), fontsize=6.5, xytext=(4, -9 + 6 * (rank % 4)), textcoords="offset points",
                            color=colour)
                labelled.add(ax)
    rate_ax.set_xlabel("compression rate (kept / original tokens)")
    time_ax.set_xlabel("mean ms per sentence (log)")
    time_ax.set_xscale("log")
    for ax in (rate_ax, time_ax):
        ax.set_ylabel("token F1 (per-sentence macro average)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    return _save(fig, out, "accuracy")


def plot_runs(paths: Iterable[str | os.PathLike], out: str | os.PathLike, baseline: str | None = None) -> list[str]:
    """Write every plot of the given files into ``out`` (PNG and SVG); returns the paths written.

    JSONL run files give the runtime, speed-up, certificate, gap and agreement plots; ``compbench evaluate``
    JSON files give the accuracy plot.
    """
    records = {str(p): read_accuracy(p) for p in paths}
    accuracy = {p: record for p, record in records.items() if record is not None}
    paths = [p for p, record in records.items() if record is None]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = plot_accuracy(accuracy, out) if accuracy else []
    if not paths:
        return written
    results, environments = load_runs(paths)
    infos = solver_infos(environments)
    for name in ("runtime", "speedup", "certificates", "gap", "agreement"):  # no stale figure of an earlier run
        for ext in ("png", "svg"):
            (out / f"{name}.{ext}").unlink(missing_ok=True)
    written += plot_runtime(results, infos, out)
    written += plot_speedup(results, infos, out, baseline)
    written += plot_certificates(results, out)
    written += plot_gaps(results, infos, out)
    written += plot_agreement(results, out)
    return written
