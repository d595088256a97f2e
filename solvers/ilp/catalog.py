"""The ILP solvers: every formulation on every backend that serves it, and its LP relaxation on the backends that
offer one.  :data:`SOLVERS` is registered by one entry point (``"ilp*"`` in the ``compbench.solvers`` group).

Names: ``ilp-{infix}{backend}`` (``ilp-highs``, ``ilp-dp-pulp-cbc``) and ``lp-{formulation}-{backend}``
(``lp-joint-highs``).
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
