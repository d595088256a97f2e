"""Solvers and how they are found: the entry-point group ``compbench.solvers``.

A solver is a class (or any zero-argument callable) registered under a name in the ``compbench.solvers``
entry-point group of some installed package; compbench's built-in solvers are registered exactly that way in its
own ``pyproject.toml``.  A solver subclasses :class:`compbench.solver.Solver`, declares what it supports, and
implements ``_solve``.

Example (in your package's ``pyproject.toml``)::

    [project.entry-points."compbench.solvers"]
    my-solver = "my_package.solver:MySolver"

An entry point whose name ends in ``*`` names a provider instead: a mapping {solver name: class (or zero-argument
callable)} whose solvers are all registered, e.g. ``"my-family*" = "my_package:SOLVERS"``; compbench's ILP solvers
(every formulation on every backend) are registered so.  A name with an entry point of its own wins over the same name
from a provider (so that asking for it loads no provider); otherwise, when two entry points register one name,
compbench's own wins, else the first.

A solver name may carry solve options in brackets, ``NAME[key=value,...]`` (values read as JSON when they parse,
else as strings; ``a.b=v`` sets key ``b`` of the dict option ``a``): ``ilp-highs[tighten=true,flow=multi]`` or
``ilp-dp-highs[settings.presolve=off]``.  :func:`get_solver`, ``compbench solve``, ``check`` and ``bench`` take
such names; the options are passed to every ``solve`` call.
"""

from __future__ import annotations

import difflib
import functools
import json
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Iterable

from .problem import Problem, Solution
from .problem_batch import ProblemBatch
from .solver import Solver, SolverError

GROUP = "compbench.solvers"
PROVIDER = "*"  # the end of a provider's entry-point name


def solve_many(problems: Iterable[Problem] | ProblemBatch, solver: str | Solver, *, time_limit: float | None = None,
               jobs: int | None = None, **options: Any) -> list[Solution]:
    """Solve a list of problems or a :class:`ProblemBatch` with ``solver`` (a name or a :class:`Solver`), answers in
    order, the same as one ``solve`` per problem: the compiled chart solvers run the whole batch in compiled calls
    over ``jobs`` threads, reading a batch's padded arrays as they are; any other solver loops over ``solve`` in
    ``jobs`` processes (None: every core, :func:`cores`).

    >>> import compbench
    >>> ps = [compbench.generate("gaussian", n=8, seed=s, length=3) for s in range(4)]
    >>> [len(s.kept) for s in compbench.solve_many(ps, "resource-dp")]
    [3, 3, 3, 3]
    """
    if isinstance(solver, str):
        solver = get_solver(solver)
    elif not isinstance(solver, Solver):
        raise TypeError(f"solver: expected a solver name or a compbench.Solver, got {type(solver).__name__}")
    return solver.solve_many(problems, time_limit=time_limit, jobs=jobs, **options)


def group_entry_points(group: str) -> tuple[EntryPoint, ...]:
    """The entry points of ``group``, read once per ``sys.path`` (a scan of every installed distribution's metadata
    takes milliseconds, which a ``solve_many`` by name paid every call): a plug-in put on the path later, as a test
    does, is found under the new path.  The solvers' group here, the inference providers' in
    :mod:`compbench.inference`.  compbench's own come first: a plug-in cannot take a built-in's name, and every
    process (a worker with another ``sys.path`` order too) finds the same solver under one name."""
    return _scan(group, tuple(sys.path))


@functools.lru_cache(maxsize=16)
def _scan(group: str, path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    return tuple(sorted(entry_points(group=group), key=lambda ep: (ep.dist.name if ep.dist else None) != "compbench"))


def _entry_points() -> dict[str, Callable[[], Any]]:
    """Every registered name and what loads its solver factory (a provider is loaded here to list its names; one
    that cannot be loaded is listed under its own name, and fails again when that name is asked for)."""
    found: dict[str, Callable[[], Any]] = {}
    eps = group_entry_points(GROUP)
    for ep in eps:
        if not ep.name.endswith(PROVIDER):
            found.setdefault(ep.name, ep.load)
    for ep in eps:
        if not ep.name.endswith(PROVIDER):
            continue
        try:
            provided = dict(ep.load())
        except Exception:
            found.setdefault(ep.name, ep.load)
            continue
        for name, factory in provided.items():
            found.setdefault(name, lambda factory=factory: factory)
    return found


def _factory(name: str) -> Callable[[], Any] | None:
    """What loads the solver ``name`` when it has an entry point of its own, without loading any provider
    (``compbench solve`` with a built-in DP does not import the ILP catalog); else None."""
    if name.endswith(PROVIDER):
        return None
    return next((ep.load for ep in group_entry_points(GROUP) if ep.name == name), None)


def solver_distributions() -> dict[str, dict[str, str | None]]:
    """``{solver: {"distribution", "version"}}``: the installed distribution whose ``compbench.solvers`` entry point
    registers each solver, plug-ins included (a provider's for the names it provides; an entry point of a solver's
    own wins over a provider, and otherwise the first, as in :mod:`compbench.registry`)."""
    found: dict[str, dict[str, str | None]] = {}
    for ep in sorted(group_entry_points(GROUP), key=lambda ep: ep.name.endswith(PROVIDER)):
        names = [ep.name]
        if ep.name.endswith(PROVIDER):
            try:
                names = list(ep.load())
            except Exception:  # a broken provider: listed under its own name, as the registry lists it
                pass
        for name in names:
            found.setdefault(name, {"distribution": ep.dist.name if ep.dist else None,
                                    "version": ep.dist.version if ep.dist else None})
    return found


def solver_distribution(name: str) -> str | None:
    """The distribution that registers the solver ``name`` (None for an ``exec:`` program or an unknown name),
    without loading any provider when the name has an entry point of its own."""
    if name.startswith("exec:"):
        return None
    base = parse_solver_spec(name)[0] if "[" in name else name
    own = next((ep for ep in group_entry_points(GROUP) if ep.name == base), None)
    if own is not None:
        return own.dist.name if own.dist else None
    return (solver_distributions().get(base) or {}).get("distribution")


def solver_names() -> list[str]:
    """Names of every registered solver, sorted."""
    return sorted(_entry_points())


def base_name(spec: str) -> str:
    """The registered name of a solver spec ``NAME[key=value,...]`` (the same solver whatever its options).

    >>> base_name("resource-dp[cap=3]"), base_name("exec:./a[1]/solver")  # a program takes no options
    ('resource-dp', 'exec:./a[1]/solver')
    """
    spec = spec.strip()
    return spec if spec.startswith("exec:") else spec.partition("[")[0].strip()


@functools.cache
def opinion(spec: str) -> str:
    """Whose opinion the answers of solver ``spec`` are: its :attr:`Solver.implementation` when it declares one (the
    code it shares with other solvers), else its registered name (options never make another opinion; a solver not
    installed here is its own).  Two answers of one opinion that agree have compared nothing.

    >>> opinion("hook-dp") == opinion("resource-dp[cap=3]") == opinion("pruned-dp"), opinion("signature-dp")
    (True, 'signature-dp')
    """
    base = base_name(spec)
    if base.startswith("exec:"):
        return base
    try:
        implementation = get_solver(base).implementation
    except Exception:  # not installed here, or it cannot be built: by its name
        return base
    return implementation if isinstance(implementation, str) and implementation else base


def parse_solver_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME[key=value,...]`` as (NAME, options).

    >>> parse_solver_spec("ilp-highs[tighten=true,settings.presolve=off,flow=multi]")
    ('ilp-highs', {'tighten': True, 'settings': {'presolve': 'off'}, 'flow': 'multi'})
    """
    spec = spec.strip()
    if "[" not in spec:
        return spec, {}
    name, _, rest = spec.partition("[")
    if not rest.endswith("]") or not name or "[" in rest or "]" in rest[:-1]:
        raise KeyError(f"bad solver name {spec!r}: expected NAME or NAME[key=value,...]")
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in rest[:-1].split(","))):
        key, equals, text = item.partition("=")
        if not equals or not key.strip():
            raise KeyError(f"bad solver option {item!r} in {spec!r}: expected key=value")
        try:
            value = json.loads(text)
        except ValueError:
            value = text.strip()
        *outer, inner = parts = key.strip().split(".")
        if not all(part.strip() for part in parts):
            raise KeyError(f"bad solver option {item!r} in {spec!r}: an empty name in {key.strip()!r}")
        target = options
        for part in outer:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise KeyError(f"bad solver option {item!r} in {spec!r}: {part} is not a dict option")
        if inner in target:  # the last would win, silently (an instance file refuses a key given twice too)
            raise KeyError(f"bad solver option {item!r} in {spec!r}: {key.strip()} is given twice")
        target[inner] = value
    return name.strip(), options


def split_solver_list(text: str) -> list[str]:
    """A comma-separated list of solver names, commas inside brackets kept.

    >>> split_solver_list("hook-dp,ilp-highs[tighten=true,flow=multi]")
    ['hook-dp', 'ilp-highs[tighten=true,flow=multi]']
    """
    names, depth, current = [], 0, ""
    for char in text:
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            names.append(current.strip())
            current = ""
        else:
            current += char
    names.append(current.strip())
    return [name for name in names if name]


def get_solver(name: str, **options: Any) -> Solver:
    """The registered solver called ``name`` (``options`` go to its constructor).

    ``name`` may fix solve options in brackets: ``get_solver("ilp-highs[tighten=true]")``, each checked here
    against the options the solver takes (:meth:`Solver.check_options`; a ``KeyError`` names the bad one);
    ``exec:PATH`` is the program PATH as a solver (:class:`compbench.external.ExecSolver`).
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a solver name, got {type(name).__name__}")
    if name.startswith("exec:"):
        from .external import ExecSolver

        return ExecSolver(name[len("exec:"):], **options)
    base, solve_options = parse_solver_spec(name)
    load = _factory(base)
    if load is None:
        eps = _entry_points()
        if base not in eps:
            known = ", ".join(sorted(eps)) or "none"
            close = difflib.get_close_matches(base, eps, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise KeyError(f"no solver named {base!r} is registered ({hint}known: {known})")
        load = eps[base]
    factory = load()
    solver = factory(**options)
    if not isinstance(solver, Solver):
        raise TypeError(f"entry point {base!r} did not produce a compbench.Solver")
    if solve_options:
        try:
            solver.check_options(solve_options)
        except SolverError as exc:
            raise KeyError(f"bad solver option in {name!r}: {exc}") from None
        solver.name = name
    solver.options = solve_options or dict(solver.options)  # its own (the class's dict was every solver's)
    return solver


def list_solvers() -> list[dict[str, Any]]:
    """One dict per registered solver: name, description, exact, complexity, what it supports, and why it cannot
    run here (``unavailable``; None when it can)."""
    out = []
    for name in solver_names():
        try:
            info = get_solver(name).info()
            info["name"] = name
        except Exception as exc:  # a broken plug-in must not hide the others
            info = {"name": name, "description": f"(cannot be loaded: {exc})", "exact": False,
                    "complexity": "", "lengths": [], "single_root": False, "all_lengths": False,
                    "second_order": False, "max_n": None, "max_score": None, "unavailable": f"cannot be loaded: {exc}"}
        out.append(info)
    return out
