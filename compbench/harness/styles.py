"""How every figure of a report looks: one colour, line style (its family's) and marker per solver, no two alike in
a report and the same in every figure of it, and the small layout helpers the figures share."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from compbench.files import atomic_output


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


# Colours a solver keeps in every report where no other solver of the report has a near one (see solver_styles):
# one per solver (the dp and the joint formulation of one MIP backend get different hues as well as their family's
# line style); a variant with options in brackets prefers a darker shade of its solver's colour.
DP_COLOURS = {"resource-dp": "#1f77b4", "hook-dp": "#17becf", "bisection": "#2ca02c", "bisection-exact": "#00441b",
              "signature-dp": "#9467bd", "pruned-dp": "#e6ab02", "ql-subgradient": "#e7298a",
              "brute-force": "#7f7f7f"}


BACKEND_COLOURS = {"highs": "#d62728", "rcfix-highs": "#ff7f0e", "pulp-highs": "#e377c2", "pulp-cbc": "#8c564b",
                   "ortools-scip": "#bcbd22", "ortools-cpsat": "#393b79", "gurobi": "#637939"}


JOINT_COLOURS = {"highs": "#67000d", "rcfix-highs": "#fdae61", "pulp-highs": "#c51b7d", "pulp-cbc": "#bf812d",
                 "ortools-scip": "#4d9221", "ortools-cpsat": "#4292c6", "gurobi": "#35978f"}


LP_COLOURS = {"lp-dp-highs": "#7b4173", "lp-joint-highs": "#b15928"}


# The colours a plug-in (or a solver whose own colour is taken) tries first, from a stable start by its name.
OTHER_COLOURS = ("#5254a3", "#8ca252", "#bd9e39", "#ad494a", "#a55194", "#6b6ecf", "#e7ba52", "#3182bd",
                 "#e6550d", "#31a354", "#756bb1", "#636363", "#9c9ede", "#8c6d31", "#e7969c", "#de9ed6", "#6baed6")


NEAR = 25.0  # two colours closer than this in CIELAB (Delta E 1976) read as one: no report gives both


# Markers a solver tries from a stable start by its name; after them the thinner EXTRA_MARKERS, then stars and
# asterisks of ever more points.
MARKERS = ("o", "^", "v", "D", "s", "P", "<", ">", "X", "p", "h", "*")
EXTRA_MARKERS = ("d", "H", "8", "+", "x", "1", "2", "3", "4")


def _stable(name: str) -> int:
    return sum(map(ord, name))


def familiar_colour(solver: str) -> Any:
    """The colour a known solver prefers (see DP_COLOURS, BACKEND_COLOURS for the dp formulation, JOINT_COLOURS
    for the joint one; a variant with options in brackets: a darker shade, a lighter one of a dark colour); None
    for a plug-in."""
    from matplotlib.colors import to_rgb

    base = solver.partition("[")[0]
    colour = DP_COLOURS.get(base) or LP_COLOURS.get(base)
    for prefix, table in (("ilp-dp-", BACKEND_COLOURS), ("ilp-", JOINT_COLOURS)):
        if colour is None and base.startswith(prefix) and base[len(prefix):] in table:
            colour = table[base[len(prefix):]]
    if colour is None:
        return None
    colour = to_rgb(colour)
    if base == solver:
        return colour
    dark = 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2] < 0.4  # a dark colour's variant is lighter
    return tuple(0.5 * c + 0.5 for c in colour) if dark else tuple(0.6 * c for c in colour)


def lab(colour: Any) -> np.ndarray:
    """CIELAB (D65) of a matplotlib colour: Euclidean distances there follow perceived differences.

    >>> [round(v) for v in lab("white")], [round(v) for v in lab("black")]
    ([100, 0, 0], [0, 0, 0])
    """
    from matplotlib.colors import to_rgb

    rgb = np.asarray(to_rgb(colour))
    linear = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    xyz = xyz / [0.95047, 1.0, 1.08883]
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


@functools.cache
def _spare_colours() -> tuple[list[tuple[float, float, float]], np.ndarray]:
    """Every colour of a 6-level RGB grid neither too light for a white page nor near black, and their Lab."""
    grid = [c for c in itertools.product(np.linspace(0.0, 1.0, 6), repeat=3) if 25 <= lab(c)[0] <= 80]
    return grid, np.array([lab(c) for c in grid])


def _more_markers():
    """EXTRA_MARKERS, then stars and asterisks of ever more points."""
    yield from EXTRA_MARKERS
    for points in itertools.count(6):
        yield from ((points, 1, 0), (points, 2, 0))


def solver_styles(solvers: Iterable[str], disqualified: dict[str, dict] | None = None) -> dict[str, dict[str, Any]]:
    """Colour, line style (its family's), marker and legend label of each solver of one report, for
    ``ax.plot(..., **styles[s])``: no two solvers share a marker or have colours within NEAR of each other.

    A known solver keeps its familiar colour unless one placed before it (in family order) is near; the others take
    the first free colour of OTHER_COLOURS from a stable start by name, else the colour of a grid farthest from
    those taken (past about 30 solvers that may be within NEAR).  A marker is the first free one of MARKERS from a
    stable start by name, else of the thinner ones after them.  A disqualified solver (``stats.disqualified``) is pale and labelled with its count of
    wrong answers.

    >>> styles = solver_styles(["signature-dp", "pruned-dp", "exec:my-solver"], {"pruned-dp": {"wrong": 2}})
    >>> len({s["marker"] for s in styles.values()}), styles["signature-dp"]["linestyle"], styles["pruned-dp"]["label"]
    (3, '-', 'pruned-dp (disqualified: 2 wrong)')
    """
    from matplotlib.colors import to_rgb

    disqualified = disqualified or {}
    taken: list[np.ndarray] = []  # the colours given, in Lab
    markers: list[Any] = []
    styles = {}

    def gap(colour: Any) -> float:
        return float(np.linalg.norm(np.array(taken) - lab(colour), axis=1).min()) if taken else np.inf

    for solver in sorted(set(solvers), key=lambda s: (familiar_colour(s) is None, *family_order(s))):
        start = _stable(solver) % len(OTHER_COLOURS)
        tries = [familiar_colour(solver), *OTHER_COLOURS[start:], *OTHER_COLOURS[:start]]
        colour = next((c for c in tries if c is not None and gap(c) >= NEAR), None)
        if colour is None:  # the spare colour farthest from those taken
            grid, labs = _spare_colours()
            colour = grid[int(np.argmax(np.linalg.norm(labs[:, None] - np.array(taken)[None], axis=2).min(axis=1)))]
        colour = to_rgb(colour)
        start = _stable(solver) % len(MARKERS)
        marker = next(m for m in itertools.chain(MARKERS[start:], MARKERS[:start], _more_markers())
                      if m not in markers)
        taken.append(lab(colour))
        markers.append(marker)
        styles[solver] = {"color": colour, "linestyle": FAMILY_STYLE[family(solver)], "marker": marker,
                          "label": solver}
        if solver in disqualified:
            styles[solver].update(alpha=0.45, label=f"{solver} (disqualified: {disqualified[solver]['wrong']} wrong)")
    return {s: styles[s] for s in sorted(styles, key=family_order)}


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


def drawn(name: str) -> str:
    """A solver or system name as a figure draws it, as written: its '$' escaped (``exec:./run$x`` is no mathtext:
    an odd number of them crashed the plot, a pair was typeset as maths; the axes' own labels stay mathtext)."""
    return name.replace("$", r"\$")


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
    try:
        for ext in ("png", "svg"):
            path = out / f"{name}.{ext}"
            with atomic_output(path) as partial:  # a figure is whole or absent
                fig.savefig(partial, dpi=200, bbox_inches="tight", format=ext)  # legends sit outside the axes
            paths.append(str(path))
    finally:
        plt.close(fig)
    return paths


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


def labelled_line(ax: Any, value: float, text: str, vertical: bool = False) -> None:
    """A dotted grey line at ``value`` (across the panel, or up it when ``vertical``) with ``text`` on it."""
    from matplotlib.transforms import blended_transform_factory

    line = dict(color="gray", lw=0.6, ls=(0, (1, 2)))
    words = dict(color="dimgray", fontsize=5, clip_on=False)
    if vertical:
        ax.axvline(value, **line)
        ax.text(value, 0.02, f" {text}", rotation=90, ha="right", va="bottom",
                transform=blended_transform_factory(ax.transData, ax.transAxes), **words)
    else:
        ax.axhline(value, **line)
        ax.text(0.01, value, text, ha="left", va="bottom",
                transform=blended_transform_factory(ax.transAxes, ax.transData), **words)


def name_missing(ax: Any, names: list[str], what: str = "no point", label: str = "") -> None:
    """Name under the panel (in its x label, so the layout makes room) the solvers missing from it and why."""
    import textwrap

    note = "\n".join(textwrap.wrap(f"{what}: " + "; ".join(names), 75)) if names else ""
    ax.set_xlabel(label + ("\n" + note if note else ""), fontsize=5.5 if note else 7)


def figure_note(fig: Any, lines: list[str]) -> None:
    """Small print above all panels, e.g. the panels left out for having nothing to show and why."""
    import textwrap

    if lines:
        text = "\n".join(part for line in lines for part in textwrap.wrap(line, 110))
        fig.text(0.5, 1.0, text, ha="center", va="bottom", fontsize=5.5)


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
