"""How every figure of a report looks: one colour, line style (its family's) and marker per solver, the same in
every figure, and the small layout helpers the figures share."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np


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


# Colours, the same in every figure and report: one per solver (the dp and the joint formulation of one MIP backend
# get different hues as well as their family's line style); a variant with options in brackets is a darker shade of
# its solver's colour with its own marker; plug-ins get a colour by a stable hash of their name.
DP_COLOURS = {"resource-dp": "#1f77b4", "hook-dp": "#17becf", "bisection": "#2ca02c", "bisection-exact": "#00441b",
              "signature-dp": "#9467bd", "ql-subgradient": "#e7298a", "brute-force": "#7f7f7f"}


BACKEND_COLOURS = {"highs": "#d62728", "rcfix-highs": "#ff7f0e", "pulp-highs": "#e377c2", "pulp-cbc": "#8c564b",
                   "ortools-scip": "#bcbd22", "ortools-cpsat": "#393b79", "gurobi": "#637939"}


JOINT_COLOURS = {"highs": "#67000d", "rcfix-highs": "#fdae61", "pulp-highs": "#c51b7d", "pulp-cbc": "#bf812d",
                 "ortools-scip": "#4d9221", "ortools-cpsat": "#4292c6", "gurobi": "#35978f"}


LP_COLOURS = {"lp-dp-highs": "#7b4173", "lp-joint-highs": "#b15928"}


OTHER_COLOURS = ("#5254a3", "#8ca252", "#bd9e39", "#ad494a", "#a55194", "#6b6ecf", "#e7ba52", "#3182bd",
                 "#e6550d", "#31a354", "#756bb1", "#636363", "#9c9ede", "#cedb9c", "#e7969c", "#de9ed6", "#6baed6")


MARKERS = "o^vDsP<>Xph*"


def solver_colour(solver: str) -> Any:
    """A solver's colour in every figure (see DP_COLOURS, BACKEND_COLOURS for the dp formulation, JOINT_COLOURS for
    the joint one); a variant with options in brackets gets a darker shade of its solver's colour (a lighter one of
    a dark colour)."""
    from matplotlib.colors import to_rgb

    base = solver.partition("[")[0]
    colour = DP_COLOURS.get(base) or LP_COLOURS.get(base)
    for prefix, table in (("ilp-dp-", BACKEND_COLOURS), ("ilp-", JOINT_COLOURS)):
        if colour is None and base.startswith(prefix) and base[len(prefix):] in table:
            colour = table[base[len(prefix):]]
    colour = to_rgb(colour or OTHER_COLOURS[sum(map(ord, base)) % len(OTHER_COLOURS)])
    if base == solver:
        return colour
    dark = 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2] < 0.4  # a dark colour's variant is lighter
    return tuple(0.5 * c + 0.5 for c in colour) if dark else tuple(0.6 * c for c in colour)


def solver_marker(solver: str) -> str:
    """A solver's marker in every figure: a stable pick by name (a variant with options picks by its full name)."""
    return MARKERS[sum(map(ord, solver)) % len(MARKERS)]


def solver_style(solver: str) -> dict[str, Any]:
    """Colour, line style (its family's) and marker of a solver: pass as ``ax.plot(..., **solver_style(s))``."""
    return {"color": solver_colour(solver), "linestyle": FAMILY_STYLE[family(solver)], "marker": solver_marker(solver)}


def integer_log_axis(ax: Any, sizes: Iterable[int]) -> None:
    """A log-scale n axis labelled with the plain sizes measured (no 2x10^1)."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator, ScalarFormatter

    sizes = sorted(set(sizes))
    ax.set_xscale("log")
    ticks: list[int] = []
    for n in sizes:  # labels at least 15% apart in n, so that neighbours never overprint
        if not ticks or n >= 1.15 * ticks[-1]:
            ticks.append(n)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def new_figure(title: str, ncols: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, ncols, figsize=(7.5 * ncols, 5.0), squeeze=False)
    fig.suptitle(title)
    return fig, list(axes[0])


def save_figure(fig: Any, out: Path, name: str) -> list[str]:
    import matplotlib.pyplot as plt

    paths = []
    if not fig.legends:  # a figure with a shared legend was laid out before it was placed
        fig.tight_layout()
    for ext in ("png", "svg"):
        path = out / f"{name}.{ext}"
        fig.savefig(path, dpi=200, bbox_inches="tight")  # nothing clipped: legends sit outside the axes
        paths.append(str(path))
    plt.close(fig)
    return paths


def note(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


FAMILY_TITLES = {"dp": "dynamic programs", "ilp-dp": "ILPs on the DP's polytope", "ilp": "joint ILPs",
                 "lp": "LP relaxations (inexact)"}


def grid(nrows: int, ncols: int, width: float = 3.4, height: float = 2.6) -> tuple[Any, np.ndarray]:
    """A figure of nrows x ncols panels, each ``width`` x ``height`` inches (a paper column is about 3.4 in)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.size": 7}):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, axes


def small_print(ax: Any, legend: bool = True) -> None:
    ax.tick_params(labelsize=6)
    ax.yaxis.label.set_size(7)
    ax.title.set_size(7)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=5.5, loc="best", handlelength=2.5, framealpha=0.8)


def family_order(solver: str) -> tuple[int, str]:
    return list(FAMILY_STYLE).index(family(solver)), solver


def name_missing(ax: Any, names: list[str], what: str = "no point", label: str = "") -> None:
    """Name under the panel (in its x label, so the layout makes room) the solvers missing from it and why."""
    import textwrap

    note = "\n".join(textwrap.wrap(f"{what}: " + "; ".join(names), 75)) if names else ""
    ax.set_xlabel(label + ("\n" + note if note else ""), fontsize=5.5 if note else 7)


def shared_legend(fig: Any, axes: Any, ncol: int = 3) -> None:
    """One legend below all panels: a solver keeps its colour, line style and marker in every panel."""
    handles: dict[str, Any] = {}
    for ax in np.ravel(axes):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.tight_layout()
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=ncol, fontsize=6, handlelength=3.0, frameon=False)
