"""The figures' looks: distinct styles per report, disqualified solvers marked, no exponent from sub-ms fits, no
empty panel."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np

from compbench.harness.plots import plot_runs, runtime_fit
from compbench.harness.styles import NEAR, lab, solver_styles

from .test_harness import synthetic_run


def test_every_solver_of_a_report_has_its_own_colour_and_marker() -> None:
    solvers = ["pruned-dp", "signature-dp", "resource-dp", "exec:./my-solver --fast"] + [f"plug-{i}" for i in range(20)]
    styles = solver_styles(solvers)
    assert sorted(styles) == sorted(solvers)
    for a, b in itertools.combinations(solvers, 2):
        assert np.linalg.norm(lab(styles[a]["color"]) - lab(styles[b]["color"])) >= NEAR, (a, b)
    assert len({str(s["marker"]) for s in styles.values()}) == len(solvers)
    assert {s["linestyle"] for s in styles.values()} == {"-"}
    assert styles["resource-dp"]["color"] == solver_styles(["resource-dp"])["resource-dp"]["color"]  # familiar


def test_no_exponent_from_sub_millisecond_fits() -> None:
    fast = {n: np.array([1e-6 * n] * 3) for n in (10, 20, 40, 80)}
    assert runtime_fit(fast) is None
    assert runtime_fit({n: t * 100 for n, t in fast.items()}) is not None  # 1 ms to 8 ms


def test_figures_mark_the_disqualified_and_draw_no_empty_panel(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    run = tmp_path / "synthetic.jsonl"
    synthetic_run(run)
    lines = run.read_text().splitlines()
    lines.append(json.dumps({**json.loads(lines[1]), "instance": "other-n10", "kind": "other", "solver": "dp",
                             "status": "timeout", "objective": None, "heads": None, "seconds": {"total": 5.0}}))
    run.write_text("\n".join(lines) + "\n")
    saved: list[Figure] = []
    original = Figure.savefig

    def keep(fig: Figure, *args, **kwargs):
        saved.append(fig)
        return original(fig, *args, **kwargs)

    Figure.savefig = keep
    try:
        written = plot_runs([run], tmp_path / "plots")
    finally:
        Figure.savefig = original
    assert written
    texts = {}
    for fig in saved:
        axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
        assert all(ax.lines or ax.images or ax.collections for ax in axes)  # no panel without data
        assert all(ax.get_title() or fig._suptitle for ax in axes)
        words = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text"))]
        texts.setdefault(id(fig), " ".join(words))
    everything = " ".join(texts.values())
    assert "greedy (disqualified: 1 wrong)" in everything
    assert "time limit 5 s" in everything and "hollow:" in everything and "certified:" in everything
