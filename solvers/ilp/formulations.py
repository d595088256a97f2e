"""The formulations: one :class:`Formulation` record each in :data:`FORMULATIONS`.

A record names the builder (problem -> :class:`~compbench_solvers.ilp.model.Model`), the model options it takes
(with their values), an estimate of its nonzeros before anything is built (the memory check), its size in
words and a description.  The solvers are generated from the formulations x the backends
(:mod:`compbench_solvers.ilp.catalog`): a new formulation is one record here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from compbench import Problem, SolverError
from compbench.solver import BOOLEAN, Option, one_of

from .dp_flow import build_dp_model
from .joint import FLOWS, build_joint_model, model_size
from .model import Model


@dataclass(frozen=True)
class Formulation:
    """A formulation: how its model is built, which options it takes and how large it is."""

    name: str
    build: Callable[..., Model]
    options: dict[str, Option]  # the model options it takes and their values
    nonzeros: Callable[[Problem, dict[str, Any]], int]  # estimated from a size formula, before building
    complexity: str
    description: str  # a noun phrase: "the joint ILP (...)"
    infix: str  # in its solvers' names: ilp-{infix}{backend}


def _dp_nonzeros(problem: Problem, options: dict[str, Any]) -> int:
    from ..compressive.chart import max_hyperedges  # imported when needed: listing the solvers needs no numba

    return 3 * max_hyperedges(problem.n) + 2 * problem.n


FORMULATIONS: dict[str, Formulation] = {f.name: f for f in (
    Formulation("joint", build_joint_model, {"flow": one_of(*FLOWS), "bigram_cuts": BOOLEAN, "tighten": BOOLEAN},
                # the joint model's options are model_size's, with the same defaults
                lambda problem, options: model_size(problem.n, second_order=problem.second_order,
                                                    **options)["nonzeros"],
                "O(n^3) rows, O(n^4) nonzeros", "the joint ILP (tree, bigrams, projectivity)", ""),
    Formulation("dp", build_dp_model, {}, _dp_nonzeros, "O(n^3) columns and nonzeros, O(n^2) rows",
                "the chart's hypergraph flow as an ILP (z integer)", "dp-"),
)}


def check_model_options(formulation: str, options: dict[str, Any]) -> Formulation:
    """The formulation, after refusing an unknown one or an unknown or invalid model option (a
    :class:`SolverError`, answered as status ``error``)."""
    if not isinstance(formulation, str) or formulation not in FORMULATIONS:
        raise SolverError(f"formulation must be one of {', '.join(sorted(FORMULATIONS))}, got {formulation!r}")
    record = FORMULATIONS[formulation]
    unknown = sorted(set(options) - set(record.options))
    if unknown:
        takes = ", ".join(sorted(record.options)) or "none"
        raise SolverError(f"unknown options for the {formulation} formulation: {', '.join(unknown)} (takes: {takes})")
    for option, value in options.items():
        if not record.options[option].accepts(value):
            raise SolverError(f"{option} must be {record.options[option].values}, got {value!r}")
    return record


def build_model(problem: Problem, formulation: str = "joint", **options: Any) -> Model:
    """The ``formulation`` model of ``problem`` (``options``: that formulation's model options)."""
    return check_model_options(formulation, options).build(problem, **options)
