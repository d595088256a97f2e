"""Solvers and how they are found: the entry-point group ``compbench.solvers``.

A solver is a class (or any zero-argument callable) registered under a name in the ``compbench.solvers``
entry-point group of some installed package; compbench's built-in solvers are registered exactly that way in its
own ``pyproject.toml``.  A solver subclasses :class:`Solver`, declares what it supports, and implements
``_solve``.  :meth:`Solver.solve` turns a problem it cannot handle into an ``unsupported`` solution and times
the call.

Example (in your package's ``pyproject.toml``)::

    [project.entry-points."compbench.solvers"]
    my-solver = "my_package.solver:MySolver"

An entry point whose name ends in ``*`` names a provider instead: a mapping {solver name: class (or zero-argument
callable)} whose solvers are all registered, e.g. ``"my-family*" = "my_package:SOLVERS"``; compbench's ILP solvers
(every formulation on every backend) are registered so.  A name with an entry point of its own wins over the same name
from a provider (so that asking for it loads no provider); otherwise, when two entry points register one name, the
first wins.

A solver name may carry solve options in brackets, ``NAME[key=value,...]`` (values read as JSON when they parse,
else as strings; ``a.b=v`` sets key ``b`` of the dict option ``a``): ``ilp-highs[tighten=true,flow=multi]`` or
``ilp-dp-highs[settings.presolve=off]``.  :func:`get_solver`, ``compbench solve``, ``check`` and ``bench`` take
such names; the options are passed to every ``solve`` call.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
import os
import pickle
import time
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Callable, Iterable

from .problem import Problem, Solution, Status

GROUP = "compbench.solvers"
PROVIDER = "*"  # the end of a provider's entry-point name
LENGTH_MODES = frozenset({"exact", "range", "free"})


@dataclass(frozen=True)
class Capabilities:
    """What kinds of problems a solver handles."""

    lengths: frozenset[str] = LENGTH_MODES  # subset of {"exact", "range", "free"}
    single_root: bool = True  # handles single_root=True problems (every solver handles False)
    all_lengths: bool = False  # can return the optimum for every length in one run
    second_order: bool = False  # handles sibling scores
    max_n: int | None = None  # refuses larger problems

    def reason_unsupported(self, problem: Problem, all_lengths: bool = False) -> str | None:
        if problem.length_mode not in self.lengths:
            return f"{problem.length_mode} length is not supported (supports: {', '.join(sorted(self.lengths))})"
        if problem.single_root and not self.single_root:
            return "single_root problems are not supported"
        if all_lengths and not self.all_lengths:
            return "all_lengths is not supported"
        if getattr(problem, "sibling_scores", None) is not None and not self.second_order:
            return "second-order (sibling) scores are not supported"
        if self.max_n is not None and problem.n > self.max_n:
            return f"n = {problem.n} exceeds this solver's limit of {self.max_n} tokens"
        return None


class SolverError(RuntimeError):
    """A solver could not produce an answer for a reason it can name (reported as status ``error``)."""


class Solver:
    """Base class of every solver.

    Subclasses set the class attributes and implement :meth:`_solve`.

    >>> import compbench
    >>> s = compbench.get_solver("brute-force")
    >>> p = compbench.generate("gaussian", n=5, seed=1, length=2)
    >>> s.solve(p).status.value
    'optimal'
    """

    name: str = ""
    options: dict[str, Any] = {}  # solve options fixed by a NAME[key=value] spec (see get_solver)
    description: str = ""
    exact: bool = True  # its "optimal" claims are proofs
    complexity: str = ""
    supports: Capabilities = Capabilities()
    requires: tuple[str, ...] = ()  # modules it imports that may be missing (a MIP backend's Python package)
    install: str = ""  # the command that installs them, named when they are missing

    def unavailable(self) -> str | None:
        """Why this solver cannot run here (a required module is not installed, with the command that installs
        it), or None when it can."""
        return _missing_modules(self.requires, self.install)

    def solve(self, problem: Problem, time_limit: float | None = None, *, all_lengths: bool = False,
              **options: Any) -> Solution:
        """Solve ``problem`` (time limit in seconds, None = no limit).

        With ``all_lengths=True`` the solution also carries ``by_length[m]`` for m = 0..n.
        """
        reason = self.unavailable() or self.supports.reason_unsupported(problem, all_lengths)
        if reason is not None:
            return Solution(Status.UNSUPPORTED, message=f"{self.name}: {reason}")
        options = {**self.options, **options}
        start = time.perf_counter()
        try:
            solution = self._solve(problem, time_limit=time_limit, all_lengths=all_lengths, **options)
        except SolverError as exc:
            solution = Solution(Status.ERROR, message=f"{self.name}: {exc}")
        except Exception as exc:  # a faulty solver is an error answer, never a crash of the caller
            solution = Solution(Status.ERROR, message=f"{self.name} raised {type(exc).__name__}: {exc}")
        except SystemExit as exc:  # sys.exit in a plug-in ends its answer, not the caller
            solution = Solution(Status.ERROR, message=f"{self.name} called sys.exit({exc.code!r})")
        if not isinstance(solution, Solution):
            solution = Solution(Status.ERROR, message=f"{self.name} returned {type(solution).__name__}, "
                                                      "not a compbench.Solution")
        total = time.perf_counter() - start
        solution.seconds.setdefault("setup", 0.0)
        solution.seconds.setdefault("solve", max(0.0, total - solution.seconds["setup"]))
        solution.seconds["total"] = total
        return solution

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool, **options: Any) -> Solution:
        raise NotImplementedError

    def solve_many(self, problems: Iterable[Problem], *, time_limit: float | None = None, jobs: int | None = None,
                   **options: Any) -> list[Solution]:
        """Solve every problem (``time_limit`` per problem), answers in order: the same answers as one :meth:`solve`
        per problem, over ``jobs`` workers (None: every core, :func:`cores`).  This default loops over
        :meth:`solve`, in ``jobs`` processes when more than one; a solver with a compiled batch path overrides
        :meth:`_solve_batch` instead (``jobs`` threads).

        >>> import compbench
        >>> ps = [compbench.generate("gaussian", n=6, seed=s) for s in range(3)]
        >>> [s.status.value for s in compbench.get_solver("hook-dp").solve_many(ps)]
        ['optimal', 'optimal', 'optimal']
        """
        problems = list(problems)
        if len(problems) == 1:  # solve's own path: packing a batch of one costs more than one call (twice at n = 25)
            return [self.solve(problems[0], time_limit, **options)]
        if type(self)._solve_batch is Solver._solve_batch:
            workers = min(cores(jobs), len(problems))
            if workers > 1:
                return _solve_in_processes(self, problems, time_limit, workers, options)
            return [self.solve(problem, time_limit, **options) for problem in problems]
        return self._solve_checked(problems, time_limit, cores(jobs), options)

    def _solve_batch(self, problems: list[Problem], *, time_limit: float | None, jobs: int,
                     **options: Any) -> list[Solution]:
        """Answers for a batch of problems this solver supports, in order (a compiled batch path); its ``seconds``
        are filled by :meth:`solve_many`.  Not implemented: :meth:`solve_many` loops over :meth:`solve`."""
        raise NotImplementedError

    def _solve_checked(self, problems: list[Problem], time_limit: float | None, jobs: int,
                       options: dict[str, Any]) -> list[Solution]:
        """:meth:`_solve_batch` with what :meth:`solve` adds paid once per batch: availability, each problem's
        capabilities (unsupported answers in place), the options, the timing (the batch's seconds shared equally).
        Each answer of the batch records its size in ``stats["batch"]``.  A batch that raises (an unknown option,
        a refusal) is solved one problem at a time, so that each gets its own answer, and each such answer says why
        in ``stats["batch_fallback"]``."""
        reason = self.unavailable()
        answers: list[Solution | None] = [None] * len(problems)
        supported = []
        for k, problem in enumerate(problems):
            why = reason or self.supports.reason_unsupported(problem)
            if why is not None:
                answers[k] = Solution(Status.UNSUPPORTED, message=f"{self.name}: {why}")
            else:
                supported.append(k)
        start = time.perf_counter()
        try:
            solved = self._solve_batch([problems[k] for k in supported], time_limit=time_limit, jobs=jobs,
                                       **{**self.options, **options})
        except Exception as exc:
            for k in supported:
                answers[k] = self.solve(problems[k], time_limit, **options)
                answers[k].stats["batch_fallback"] = f"{type(exc).__name__}: {exc}"
            return answers  # type: ignore[return-value]
        share = (time.perf_counter() - start) / max(1, len(supported))
        for k, solution in zip(supported, solved):
            solution.stats["batch"] = len(supported)
            solution.seconds.setdefault("setup", 0.0)
            solution.seconds.setdefault("solve", share)
            solution.seconds["total"] = share
            answers[k] = solution
        return answers  # type: ignore[return-value]

    def warm_up(self) -> float:
        """Solve a tiny problem of every kind this solver supports (imports, compilation, caches); the seconds."""
        from .generate import generate

        start = time.perf_counter()
        caps = self.supports
        for second_order in sorted({False, caps.second_order}):
            length = 2 if "exact" in caps.lengths else None
            self.solve(generate("gaussian", 4, seed=0, length=length, second_order=second_order), time_limit=60.0)
        return time.perf_counter() - start

    def info(self) -> dict[str, Any]:
        caps = self.supports
        return {
            "name": self.name,
            "description": self.description,
            "exact": self.exact,
            "complexity": self.complexity,
            "lengths": sorted(caps.lengths),
            "single_root": caps.single_root,
            "all_lengths": caps.all_lengths,
            "second_order": caps.second_order,
            "max_n": caps.max_n,
            "unavailable": self.unavailable(),
        }


def cores(jobs: int | None = None) -> int:
    """The workers ``jobs`` asks for: None means every core this process may run on."""
    if jobs is not None:
        return max(1, int(jobs))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def solve_many(problems: Iterable[Problem], solver: str | Solver, *, time_limit: float | None = None,
               jobs: int | None = None, **options: Any) -> list[Solution]:
    """Solve a batch with ``solver`` (a name or a :class:`Solver`), answers in order, the same as one ``solve`` per
    problem: the compiled chart solvers run the whole batch in compiled calls over ``jobs`` threads, any other
    solver loops over ``solve`` in ``jobs`` processes (None: every core, :func:`cores`).

    >>> import compbench
    >>> ps = [compbench.generate("gaussian", n=8, seed=s, length=3) for s in range(4)]
    >>> [len(s.kept) for s in compbench.solve_many(ps, "resource-dp")]
    [3, 3, 3, 3]
    """
    if isinstance(solver, str):
        solver = get_solver(solver)
    return solver.solve_many(problems, time_limit=time_limit, jobs=jobs, **options)


def _solve_chunk(solver: Solver, problems: list[Problem], time_limit: float | None,
                 options: dict[str, Any]) -> list[Solution]:
    return [solver.solve(problem, time_limit, **options) for problem in problems]


def _solve_in_processes(solver: Solver, problems: list[Problem], time_limit: float | None, jobs: int,
                        options: dict[str, Any]) -> list[Solution]:
    """The default batch over ``jobs`` processes, in contiguous chunks (answers in order).  A solver (or options)
    that cannot be pickled is a TypeError that says so, never a quiet serial run."""
    from concurrent.futures import ProcessPoolExecutor

    try:
        pickle.dumps((solver, options))
    except Exception as exc:
        raise TypeError(f"{solver.name or type(solver).__name__} cannot be sent to worker processes "
                        f"({type(exc).__name__}: {exc}); pass jobs=1 to solve in this process") from exc
    bounds = [round(len(problems) * w / jobs) for w in range(jobs + 1)]
    with ProcessPoolExecutor(jobs) as pool:
        chunks = pool.map(_solve_chunk, [solver] * jobs, [problems[a:b] for a, b in zip(bounds, bounds[1:])],
                          [time_limit] * jobs, [options] * jobs)
        return [solution for chunk in chunks for solution in chunk]


@functools.cache
def _missing_modules(modules: tuple[str, ...], install: str) -> str | None:
    missing = [module for module in modules if importlib.util.find_spec(module) is None]
    if not missing:
        return None
    return f"needs {', '.join(missing)}: {install or 'pip install ' + ' '.join(missing)}"


def _entry_points() -> dict[str, Callable[[], Any]]:
    """Every registered name and what loads its solver factory (a provider is loaded here to list its names; one
    that cannot be loaded is listed under its own name, and fails again when that name is asked for)."""
    found: dict[str, Callable[[], Any]] = {}
    eps = entry_points(group=GROUP)
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
    return next((ep.load for ep in entry_points(group=GROUP) if ep.name == name), None)


def solver_distributions() -> dict[str, dict[str, str | None]]:
    """``{solver: {"distribution", "version"}}``: the installed distribution whose ``compbench.solvers`` entry point
    registers each solver, plug-ins included (a provider's for the names it provides; an entry point of a solver's
    own wins over a provider, and otherwise the first, as in :mod:`compbench.registry`)."""
    found: dict[str, dict[str, str | None]] = {}
    for ep in sorted(entry_points(group=GROUP), key=lambda ep: ep.name.endswith(PROVIDER)):
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
    own = next((ep for ep in entry_points(group=GROUP) if ep.name == base), None)
    if own is not None:
        return own.dist.name if own.dist else None
    return (solver_distributions().get(base) or {}).get("distribution")


def solver_names() -> list[str]:
    """Names of every registered solver, sorted."""
    return sorted(_entry_points())


def parse_solver_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME[key=value,...]`` as (NAME, options).

    >>> parse_solver_spec("ilp-highs[tighten=true,settings.presolve=off,flow=multi]")
    ('ilp-highs', {'tighten': True, 'settings': {'presolve': 'off'}, 'flow': 'multi'})
    """
    spec = spec.strip()
    if "[" not in spec:
        return spec, {}
    name, _, rest = spec.partition("[")
    if not rest.endswith("]") or not name:
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
        *outer, inner = key.strip().split(".")
        target = options
        for part in outer:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise KeyError(f"bad solver option {item!r} in {spec!r}: {part} is not a dict option")
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

    ``name`` may fix solve options in brackets: ``get_solver("ilp-highs[tighten=true]")``; ``exec:PATH`` is the
    program PATH as a solver (:class:`compbench.external.ExecSolver`).
    """
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
        solver.options = solve_options
        solver.name = name
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
                    "second_order": False, "max_n": None, "unavailable": f"cannot be loaded: {exc}"}
        out.append(info)
    return out
