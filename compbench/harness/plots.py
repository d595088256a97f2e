"""Plots of run files (matplotlib Agg, PNG and SVG): performance profiles, cactus, scaling (``runtime``), speed-up,
certificates, gaps, agreement; the statistics behind them are :mod:`compbench.harness.stats`'s.

>>> import tempfile, os
>>> from compbench.harness.sweep import make_tasks, run_sweep, source_problems
>>> d = tempfile.mkdtemp(); run = os.path.join(d, "run.jsonl")
>>> _ = run_sweep(make_tasks(source_problems("gen:gaussian:4-6:2"), ["brute-force", "resource-dp"], 30), run)
>>> sorted(os.path.basename(p) for p in plot_runs([run], d) if p.endswith(".png"))  # nothing else to show
['cactus.png', 'profile.png', 'runtime.png', 'speedup.png']
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from compbench.files import replaced_together
from compbench.problem import is_finite_number

from .check import agreement_matrix
from .stats import (FIT_MIN_PER_SIZE, WRONG, annotate, disqualified, judged, is_exact, left_out_reason,
                    profile_fractions, profile_ratios, scaling_fit, reference_solver, summarize_judged, time_limit_of)
from .accuracy_plot import plot_accuracy, read_accuracy
from .runfiles import load_runs
from .styles import (FAMILY_STYLE, FAMILY_TITLES, drawn, family, family_order, figure_note, grid, integer_log_axis,
                     labelled_line, name_missing, new_figure, save_figure, shared_legend, small_print,
                     solver_styles)

# Theoretical exponent of n in the running time (resource-dp: n^3 d^2 with d ~ m ~ n).
THEORY = {"hook-dp": "3", "resource-dp": "5 (n^3 d^2)", "signature-dp": "6", "bisection": "3 per iteration",
          "bisection-exact": "3 per iteration", "ql-subgradient": "3 per iteration", "brute-force": "exponential"}


def solver_infos(environments: list[dict]) -> dict[str, dict]:
    infos: dict[str, dict] = {}
    for env in environments:
        infos.update(env.get("solvers") or {})
    return infos


def theory(solver: str, infos: dict[str, dict]) -> str:
    if solver in THEORY:
        return THEORY[solver]
    if solver.startswith(("ilp-", "lp-")):
        return "none" if solver.startswith("ilp-") else "poly"
    return infos.get(solver, {}).get("complexity") or "?"


def kind_panels(results: list[dict], panel: Any, what: str) -> tuple[list[tuple], list[str]]:
    """One panel per kind that has something to draw: ``panel(records of the kind)`` gives (its content, or None
    when there is nothing to draw, and what it leaves out); returns the panels as (kind, *content) and a line
    ``no WHAT for KIND: ...`` per kind without one (an empty panel is never drawn)."""
    panels, dropped = [], []
    for kind in _kinds(results):
        content, left = panel([r for r in results if r.get("kind", "file") == kind])
        if content is None:
            dropped.append(f"no {what} for {kind}: " + "; ".join(left))
        else:
            panels.append((kind, *content))
    return panels, dropped


def _kinds(results: list[dict]) -> list[str]:
    return sorted({r.get("kind", "file") for r in results})


def scaling_points(records: list[dict]) -> tuple[dict[int, np.ndarray], dict[int, tuple[int, int]]]:
    """Per n, the counted times of one solver (unsolved at the limit) at the sizes where more than half were solved
    (so the median is a solved time), and per n (solved, ran)."""
    by_n: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        if r["counted"] is not None:
            by_n[r["n"]].append(r)
    counts = {n: (sum(r["outcome"] == "solved" for r in rs), len(rs)) for n, rs in by_n.items()}
    times = {n: np.array([r["counted"] for r in rs]) for n, rs in by_n.items() if 2 * counts[n][0] > counts[n][1]}
    return times, counts


FIT_MIN_SECONDS = 1e-3  # no exponent when every fitted median is below this: fixed costs and timer noise, not growth


def runtime_fit(times: dict[int, np.ndarray]) -> tuple[float, float, float, int, int] | None:
    """``stats.scaling_fit`` of a solver's times per n, or None when every median it fits is below FIT_MIN_SECONDS.

    >>> runtime_fit({n: np.array([1e-7 * n ** 2] * 3) for n in (10, 20, 40, 80)}) is None  # 10 us to 0.6 ms
    True
    """
    fit = scaling_fit(times)
    if fit is None:
        return None
    fitted = [np.median(t) for n, t in times.items() if fit[3] <= n <= fit[4] and len(t) >= FIT_MIN_PER_SIZE]
    return fit if max(fitted) >= FIT_MIN_SECONDS else None


def plot_runtime(results: list[dict], infos: dict[str, dict], out: Path, styles: dict[str, dict]) -> list[str]:
    """Scaling: median time against n, a block of panels per kind, one panel per solver family with a point (y
    shared in a kind); the fastest exact solver of each panel (see ``stats.reference_solver``) bold."""
    panels: dict[str, list] = {}
    dropped = []
    wrong = disqualified(results)  # over every kind and family: a panel's solvers are never judged alone
    for kind in _kinds(results):
        of_kind = [r for r in results if r.get("kind", "file") == kind]
        for fam in FAMILY_STYLE:
            mine = [r for r in of_kind if family(r["solver"]) == fam]
            rows = summarize_judged(mine, infos, wrong=wrong)["solvers"] if mine else {}
            lines, missing = {}, []
            for solver in sorted(rows):
                records = [r for r in mine if r["solver"] == solver]
                times, _ = scaling_points(records)
                if times:
                    lines[solver] = times
                else:
                    missing.append(f"{styles[solver]['label']} ({left_out_reason(records)})")
            if lines:
                panels.setdefault(kind, []).append((fam, lines, missing, rows))
            elif missing:
                dropped.append(f"no point in {FAMILY_TITLES[fam]}, {kind}: " + "; ".join(missing))
    if not panels:
        return []
    ncols = min(2, max(map(len, panels.values())))
    blocks = {kind: -(-len(kind_panels) // ncols) for kind, kind_panels in panels.items()}
    fig, axes = grid(sum(blocks.values()), ncols, width=3.5, height=2.7)
    limit = time_limit_of(results)
    row = 0
    for kind, kind_panels in panels.items():
        block = list(axes[row:row + blocks[kind]].ravel())
        row += blocks[kind]
        for ax in block[len(kind_panels):]:
            ax.set_visible(False)
        for ax, (fam, lines, missing, rows) in zip(block, kind_panels):
            fastest = reference_solver(rows)
            for solver, times in lines.items():
                ns = sorted(times)
                # an exponent only for exact solvers: an inexact one's unproven answers sit at the limit
                fit = runtime_fit(times) if rows[solver]["exact"] else None
                label = styles[solver]["label"] + ("" if rows[solver]["exact"] else " (inexact)")
                if fit:
                    label += f": n^{fit[0]:.1f} [{fit[1]:.1f}, {fit[2]:.1f}]"
                ax.plot(ns, [np.median(times[n]) for n in ns], **{**styles[solver], "label": label}, markersize=3,
                        lw=2.2 if solver == fastest else 0.9)
            ax.set_title(f"{FAMILY_TITLES[fam]}, {kind}")
            name_missing(ax, missing, label="n (tokens)")
            ax.set_ylabel("median seconds")
            ax.set_yscale("log")
            ax.grid(True, which="major", alpha=0.3)
            small_print(ax, legend=False)
        drawn = block[:len(kind_panels)]  # one scale per kind: every size of the kind, times up to the limit
        low = min(ax.get_ylim()[0] for ax in drawn)
        high = max([ax.get_ylim()[1] for ax in drawn] + [1.6 * limit if limit else 0])
        all_sizes = [r["n"] for r in results if r.get("kind", "file") == kind and r["n"] > 0]
        for ax in drawn:
            integer_log_axis(ax, all_sizes)
            ax.set_xlim(min(all_sizes) / 1.08, max(all_sizes) * 1.08)
            ax.set_ylim(low, high)
            if limit:
                labelled_line(ax, limit, f"time limit {limit:g} s")
            ax.legend(fontsize=5, loc="best", handlelength=2.5, framealpha=0.85)
    figure_note(fig, dropped)
    return save_figure(fig, out, "runtime")


def profile_matrix(records: list[dict], solvers: list[str]) -> tuple[np.ndarray, list[str]]:
    """Instances x solvers times for a performance profile: the time where solved, inf where not (including
    left-out solves of a solver that ran other instances); the instances are those of ``records``."""
    instances = sorted({r["instance"] for r in records})
    index = {i: k for k, i in enumerate(instances)}
    times = np.full((len(instances), len(solvers)), np.inf)
    column = {s: j for j, s in enumerate(solvers)}
    for r in records:
        if r["solver"] in column and r["outcome"] == "solved":
            times[index[r["instance"]], column[r["solver"]]] = max(r["counted"], 1e-9)
    return times, instances


def _profile_solvers(records: list[dict], infos: dict[str, dict],
                     wrong: dict[str, dict]) -> tuple[list[str], list[str]]:
    """The exact solvers that ran at least one of the records' instances and are not disqualified (``wrong``: see
    ``stats.disqualified``), and notes naming the others with the reason (and the solvers unsupported on some
    instances, which count as unsolved there; skipped ones always do)."""
    solvers = sorted({r["solver"] for r in records}, key=family_order)
    shown, inexact, left, partly = [], [], [], []
    for solver in solvers:
        mine = [r for r in records if r["solver"] == solver]
        unsupported = sum(r["outcome"] == "unsupported" for r in mine)
        if solver in wrong:
            left.append(f"{solver} (disqualified: {wrong[solver]['wrong']} wrong)")
        elif not is_exact(solver, infos):
            inexact.append(solver)
        elif all(r["counted"] is None for r in mine):
            left.append(f"{solver} ({left_out_reason(mine)})")
        else:
            shown.append(solver)
            if unsupported:
                partly.append(f"{solver} {unsupported}")
    notes = left + ([f"inexact: {', '.join(inexact)}"] if inexact else [])
    if partly:
        notes.append(f"unsupported on some instances (counted unsolved): {', '.join(partly)}")
    return shown, notes


MARK_EVERY = 0.08  # markers on a long curve: one per this fraction of the panel's diagonal


def plot_profile(results: list[dict], infos: dict[str, dict], out: Path, styles: dict[str, dict]) -> list[str]:
    """Dolan-More performance profiles of the exact solvers not disqualified, one panel per kind where one solved an
    instance."""
    wrong = disqualified(results)
    def panel(records: list[dict]) -> tuple[tuple | None, list[str]]:
        solvers, left = _profile_solvers(records, infos, wrong)
        times, instances = profile_matrix(records, solvers)
        if np.isfinite(times).any():
            return (solvers, left, times, instances), left
        return None, left + [f"{', '.join(solvers)} solved none"]

    panels, dropped = kind_panels(results, panel, "profile")
    if not panels:
        return []
    fig, axes = grid(1, len(panels), width=3.4, height=3.0)
    for ax, (kind, solvers, left, times, instances) in zip(axes[0], panels):
        ratios = profile_ratios(times)
        finite = ratios[np.isfinite(ratios)]
        top = max(2.0, float(finite.max()) * 1.5) if finite.size else 2.0
        taus = np.unique(np.concatenate([[1.0, top], finite]))
        fractions = profile_fractions(ratios, taus)
        for j, solver in enumerate(solvers):
            ax.step(taus, fractions[j], where="post", **styles[solver], markevery=MARK_EVERY, markersize=3, lw=1.0)
        ax.set_xscale("log", base=2)
        ax.set_xlim(1.0, top)
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel(f"fraction of the {len(instances)} instances")
        _finish_panel(ax, f"performance profile, {kind}", left, "not in the profile",
                      "τ: time within a factor τ of the best")
    shared_legend(fig, axes, ncol=3 if len(panels) == 1 else 6)
    figure_note(fig, dropped)
    return save_figure(fig, out, "profile")


def plot_cactus(results: list[dict], infos: dict[str, dict], out: Path, styles: dict[str, dict]) -> list[str]:
    """Instances solved within t seconds against t (an ECDF of solved times), exact solvers not disqualified, one
    panel per kind where one solved an instance."""
    wrong = disqualified(results)
    limit = time_limit_of(results)
    def panel(records: list[dict]) -> tuple[tuple | None, list[str]]:
        solvers, left = _profile_solvers(records, infos, wrong)
        solved = {s: np.sort([r["counted"] for r in records if r["solver"] == s and r["outcome"] == "solved"])
                  for s in solvers}
        left += [f"{s} (none solved)" for s, t in solved.items() if not t.size]
        solved = {s: t for s, t in solved.items() if t.size}
        return ((records, solved, left) if solved else None), left

    panels, dropped = kind_panels(results, panel, "cactus")
    if not panels:
        return []
    fig, axes = grid(1, len(panels), width=3.4, height=3.0)
    for ax, (kind, records, solved, left) in zip(axes[0], panels):
        total = len({r["instance"] for r in records})
        for solver, t in solved.items():
            ax.step(np.concatenate([t, [limit or t[-1]]]), np.concatenate([np.arange(1, t.size + 1), [t.size]]),
                    where="post", **styles[solver], markevery=MARK_EVERY, markersize=3, lw=1.0)
        labelled_line(ax, total, f"all {total} instances")
        if limit:
            labelled_line(ax, limit, f"time limit {limit:g} s", vertical=True)
        ax.set_xscale("log")
        ax.set_ylabel(f"instances solved (of {total})")
        ax.yaxis.get_major_locator().set_params(integer=True)
        _finish_panel(ax, f"solved within t, {kind}", left, "not drawn", "t: seconds (setup + solve)")
    shared_legend(fig, axes, ncol=3 if len(panels) == 1 else 6)
    figure_note(fig, dropped)
    return save_figure(fig, out, "cactus")


def _finish_panel(ax: Any, title: str, left: list[str], what: str, xlabel: str) -> None:
    """Title, grid, the solvers left out (``what``: why) under the x label, and small print."""
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    name_missing(ax, left, what, xlabel)
    small_print(ax, legend=False)


def speedup_baseline(results: list[dict], infos: dict[str, dict]) -> str | None:
    """The default speed-up baseline: the fastest exact ILP that solved an instance (``stats.reference_solver``);
    without one, the exact solver not disqualified that solved an instance, with the highest SGM."""
    rows = summarize_judged(results, infos)["solvers"]
    ilp = reference_solver({s: row for s, row in rows.items() if family(s) in ("ilp", "ilp-dp")})
    if ilp is not None:
        return ilp
    exact = {s: row["sgm_seconds"] for s, row in rows.items()
             if row["exact"] and not row["disqualified"] and row["solved"] and row["sgm_seconds"] is not None}
    return max(exact, key=exact.get) if exact else None


def speedups(records: list[dict], baseline: str) -> dict[str, dict[int, list[float]]]:
    """Per solver and n, time(baseline) / time(solver) over the instances the baseline solved, the solver's unsolved
    counted at its limit (a timeout costs), its left-out solves omitted."""
    base = {r["instance"]: r["counted"] for r in records if r["solver"] == baseline and r["outcome"] == "solved"}
    out: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r["solver"] != baseline and r["instance"] in base and r["counted"] is not None:
            out[r["solver"]][r["n"]].append(max(base[r["instance"]], 1e-9) / max(r["counted"], 1e-9))
    return out


def hollow_key(ax: Any, text: str) -> None:
    """A legend entry saying what a hollow marker means."""
    ax.plot([], [], marker="o", markerfacecolor="none", markersize=6, color="gray", lw=0, label=text)


def plot_speedup(results: list[dict], infos: dict[str, dict], out: Path, styles: dict[str, dict],
                 baseline: str | None = None) -> list[str]:
    """Median speed-up of each exact solver not disqualified over one baseline per n, one panel per kind with a
    ratio; a hollow marker where a line stops before the panel's largest size."""
    baseline = baseline or speedup_baseline(results, infos)
    wrong = disqualified(results)
    def panel(records: list[dict]) -> tuple[tuple | None, list[str]]:
        ratios = speedups(records, baseline) if baseline else {}
        solvers, left = _profile_solvers([r for r in records if r["solver"] != baseline], infos, wrong)
        left = [s for s in left if "counted unsolved" not in s]  # the speed-up leaves them out
        left += [f"{s} (no instance the baseline solved)" for s in solvers if not ratios.get(s)]
        solvers = [s for s in solvers if ratios.get(s)]
        return ((ratios, solvers, left) if solvers else None), left

    panels, dropped = kind_panels(results, panel, f"speed-up over {baseline}")
    if not panels:
        return []
    fig, axes = grid(1, len(panels), width=3.4, height=3.0)
    hollow = False
    for ax, (kind, ratios, solvers, left) in zip(axes[0], panels):
        last = max(n for s in solvers for n in ratios[s])
        for solver in solvers:
            ns = sorted(ratios[solver])
            style = styles[solver]
            ax.plot(ns, [np.median(ratios[solver][n]) for n in ns], **style, markersize=3, lw=1.0)
            if ns[-1] != last:  # where the line stops: a large hollow marker
                ax.plot(ns[-1:], [np.median(ratios[solver][ns[-1]])], marker=style["marker"], markersize=8,
                        markerfacecolor="none", color=style["color"], alpha=style.get("alpha"), lw=0)
                hollow = True
        labelled_line(ax, 1.0, f"as fast as {baseline}")
        integer_log_axis(ax, [n for s in solvers for n in ratios[s]])
        ax.set_yscale("log")
        ax.set_ylabel(f"time({baseline}) / time(solver)")
        ax.set_title(f"speed-up over {baseline}, {kind}")
        ax.grid(True, which="major", alpha=0.3)
        name_missing(ax, left, "not drawn", "n (tokens)")
        small_print(ax, legend=False)
    if hollow:
        hollow_key(axes[0, 0], "hollow: a line's last size, short of the largest")
    shared_legend(fig, axes, ncol=3 if len(panels) == 1 else 6)
    figure_note(fig, dropped)
    return save_figure(fig, out, "speedup")


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
        has_iterations = is_finite_number(it)
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


def plot_certificates(results: list[dict], out: Path, styles: dict[str, dict]) -> list[str]:
    """Per solver and n, how many instances were certified (markers labelled k/N, no line: a few instances per size
    are counts, not a curve) and the median iterations, a panel for each reported; nothing is drawn when no solver
    reported either."""
    certs, iters = certificate_stats(results)
    panels = [(data, title, ylabel) for data, title, ylabel in (
        (certs, "certified: the solver's own bound proves\nits answer optimal (k of N beside each marker)",
         "certified (% of the instances of that size)"),
        (iters, "iterations per size", "iterations (median per size)")) if data]
    if not panels:
        return []
    fig, axes = grid(1, len(panels), width=3.6, height=2.8)
    for ax, (data, title, ylabel) in zip(axes[0], panels):
        solvers = sorted(data, key=family_order)
        sizes = sorted({n for s in data.values() for n in s})
        step = min(np.diff(np.log(sizes)), default=0.3) * 0.6 / max(1, len(solvers))  # dodge solvers apart in n
        for i, solver in enumerate(solvers):
            ns = sorted(data[solver])
            xs = [n * math.exp(step * (i - (len(solvers) - 1) / 2)) for n in ns]
            style = {**styles[solver], "linestyle": "none"}
            if data is certs:
                ys = [100.0 * np.mean(data[solver][n]) for n in ns]
                ax.plot(xs, ys, **style, markersize=4)
                for x, y, n in zip(xs, ys, ns):
                    ax.annotate(f"{sum(data[solver][n])}/{len(data[solver][n])}", (x, y), xytext=(0, 4 + 6 * (i % 3)),
                                textcoords="offset points", fontsize=5, ha="center", color=style["color"])
                ax.set_ylim(-8, 118)
            else:
                ax.plot(xs, [np.median(data[solver][n]) for n in ns], **style, markersize=4)
        integer_log_axis(ax, sizes)
        ax.set_title(title)
        ax.set_xlabel("n (tokens)")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        small_print(ax)
    return save_figure(fig, out, "certificates")


def objective_gaps(results: list[dict], infos: dict[str, dict]) -> dict[str, dict[int, list[float]]]:
    """Relative gap (optimum - value) / max(1, |optimum|) of each valid tree short of a proof (``feasible``,
    ``timeout``, an inexact solver's ``optimal``), against its instance's verified optimum: the best optimal answer
    compared and agreeing (:func:`~compbench.harness.stats.annotate`; one after its limit too, a timeout in the
    statistics but a fact about the instance).  An invalid or contradicted answer, or one without a tree, has no
    gap."""
    answers = annotate(results)
    optimum: dict[str, float] = {}
    for r in answers:
        if r["verdict"] == "ok" and r["compared"] and r["status"] == "optimal":
            optimum[r["instance"]] = max(optimum.get(r["instance"], -math.inf), float(r["objective"]))
    gaps: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in answers:
        exact = infos.get(r["solver"], {}).get("exact", True)
        tree = r.get("kept") is not None or r.get("heads") is not None  # older run files: heads only
        if r["instance"] not in optimum or not tree or r["outcome"] in WRONG \
                or r["status"] not in ("feasible", "timeout", "optimal") or (exact and r["status"] == "optimal"):
            continue
        best = optimum[r["instance"]]  # a valid value above it would have refuted it: max() takes float noise
        gaps[r["solver"]][r["n"]].append(max(0.0, (best - float(r["objective"])) / max(1.0, abs(best))))
    return gaps


def plot_gaps(results: list[dict], infos: dict[str, dict], out: Path, styles: dict[str, dict]) -> list[str]:
    """Objective gaps of the answers not proven optimal (mean per size: line; largest: hollow marker); nothing is
    drawn when there is none."""
    gaps = {s: sizes for s, sizes in objective_gaps(results, infos).items()
            if any(v > 0 for values in sizes.values() for v in values)}
    if not gaps:
        return []
    fig, axes = grid(1, 1, width=4.6, height=3.0)
    ax = axes[0, 0]
    for solver, sizes in sorted(gaps.items(), key=lambda item: family_order(item[0])):
        ns = sorted(sizes)
        style = styles[solver]
        ax.plot(ns, [np.mean(sizes[n]) for n in ns], **style, markersize=3, lw=1.0)
        ax.plot(ns, [np.max(sizes[n]) for n in ns], marker=style["marker"], markerfacecolor="none", markersize=5,
                color=style["color"], alpha=style.get("alpha"), lw=0)
    hollow_key(ax, "hollow: the largest gap of a size (line: the mean)")
    integer_log_axis(ax, [n for s in gaps.values() for n in s])
    ax.set_title("gaps of answers not proven optimal")
    ax.set_xlabel("n (tokens)")
    ax.set_ylabel("(optimum - value) / max(1, |optimum|)")
    ax.grid(True, alpha=0.3)
    small_print(ax, legend=False)
    ax.legend(fontsize=5.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, handlelength=2.5)
    return save_figure(fig, out, "gap")


def plot_agreement(results: list[dict], out: Path, styles: dict[str, dict]) -> list[str]:
    """Per pair of solvers, the share of the instances both claimed optimal with equal objectives; nothing is drawn
    when every claim agrees."""
    solvers, both, agree = agreement_matrix(results)
    if not solvers or np.array_equal(agree, both):  # nothing disagrees: the report says so in one line
        return []
    fig, (ax,) = new_figure("Agreement of optimal claims: share of common instances with equal objectives")
    rate = np.divide(agree, both, out=np.full(both.shape, np.nan), where=both > 0)
    image = ax.imshow(rate, vmin=0.0, vmax=1.0, cmap="RdYlGn")
    names = [styles[s]["label"] for s in solvers]
    ax.set_xticks(range(len(solvers)), names, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(solvers)), names, fontsize=8)
    for i in range(len(solvers)):
        for j in range(len(solvers)):
            text = f"{agree[i, j]}/{both[i, j]}" if both[i, j] else "-"
            ax.text(j, i, text, ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, label="agreeing share")
    return save_figure(fig, out, "agreement")


RUN_PLOTS = ("profile", "cactus", "runtime", "speedup", "certificates", "gap", "agreement")


def plot_runs(paths: Iterable[str | os.PathLike], out: str | os.PathLike, baseline: str | None = None) -> list[str]:
    """Write every plot of the given files into ``out`` (PNG and SVG); returns the paths written.

    JSONL run files give the runtime, speed-up, certificate, gap and agreement plots; ``compbench evaluate``
    JSON files give the accuracy plot.
    """
    records = {str(p): read_accuracy(p) for p in paths}
    accuracy = {p: record for p, record in records.items() if record is not None}
    paths = [p for p, record in records.items() if record is None]
    out = Path(out)
    stale = [f"{name}.{ext}" for name in RUN_PLOTS for ext in ("png", "svg")] if paths else []  # an earlier run's
    with replaced_together(out, stale) as staging:  # all the figures, or none (the old ones kept)
        written = _plot_all(accuracy, paths, staging, baseline)
    return [str(out / Path(path).relative_to(staging)) for path in written]


def _plot_all(accuracy: dict[str, dict], paths: list[str], out: Path, baseline: str | None) -> list[str]:
    """:func:`plot_runs`' figures, written into ``out``."""
    written = plot_accuracy(accuracy, out) if accuracy else []
    if not paths:
        return written
    results, environments = load_runs(paths)
    # every solver and kind name a figure draws comes from here, as written ('$' is no mathtext)
    results = [{**r, "solver": drawn(r["solver"]), **({"kind": drawn(r["kind"])} if "kind" in r else {})}
               for r in results]
    baseline = drawn(baseline) if baseline else baseline
    infos = {drawn(name): info for name, info in solver_infos(environments).items()}
    judged_records = judged(results)
    styles = solver_styles({r["solver"] for r in results}, disqualified(judged_records))  # one look in every figure
    written += plot_profile(judged_records, infos, out, styles)
    written += plot_cactus(judged_records, infos, out, styles)
    written += plot_runtime(judged_records, infos, out, styles)
    written += plot_speedup(judged_records, infos, out, styles, baseline)
    written += plot_certificates(results, out, styles)
    written += plot_gaps(results, infos, out, styles)
    written += plot_agreement(results, out, styles)
    return written
