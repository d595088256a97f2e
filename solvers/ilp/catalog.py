"""The ILP solvers: every formulation on every backend that serves it, and its LP relaxation on the backends that
offer one.  :data:`SOLVERS` is registered by one entry point (``"ilp*"`` in the ``compbench.solvers`` group).

Names: ``ilp-{infix}{backend}`` (``ilp-highs``, ``ilp-dp-pulp-cbc``) and ``lp-{formulation}-{backend}``
(``lp-joint-highs``).  Each class is this module's attribute of its name (``catalog.__getattr__``), so that pickle
finds it: solvers go to worker processes (``solve_many(jobs=...)``) by reference to their class.
"""

from __future__ import annotations

from .backends import BACKENDS, ILPSolver
from .formulations import FORMULATIONS, Formulation


def ilp_solver(backend: type[ILPSolver], formulation: Formulation, relax: bool = False) -> type[ILPSolver]:
    """The solver class of ``formulation`` on ``backend`` (its LP relaxation when ``relax``)."""
    if relax:
        name = f"lp-{formulation.name}-{backend.key}"
        description = (f"LP relaxation of {formulation.description} {backend.description}: optimal only when the "
                       "decoded solution reaches the LP value")
        attributes = {"relax": True, "exact": False, "defaults": backend.lp_defaults}
    else:
        name = f"ilp-{formulation.infix}{backend.key}"
        description, attributes = f"{formulation.description} {backend.description}", {}
    return type(name, (backend,), {"name": name, "formulation": formulation.name, "__module__": __name__,
                                   "__qualname__": name, "description": description[0].upper() + description[1:],
                                   **attributes})


SOLVERS: dict[str, type[ILPSolver]] = {}
for _backend in BACKENDS:
    for _formulation in FORMULATIONS.values():
        if _backend.formulations is None or _formulation.name in _backend.formulations:
            for _relax in (False, True) if _backend.lp_defaults is not None else (False,):
                _solver = ilp_solver(_backend, _formulation, _relax)
                SOLVERS[_solver.name] = _solver


def __getattr__(name: str) -> type[ILPSolver]:
    """The solver class called ``name`` (not an identifier: ``getattr(catalog, "ilp-highs")``), where pickle looks
    a class up by its module and qualified name."""
    try:
        return SOLVERS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
