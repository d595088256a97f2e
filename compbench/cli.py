"""The ``compbench`` command.

Each group of subcommands lives in a module with a ``register(subparsers)`` function that adds its parsers and
sets ``func`` (called with the parsed arguments, returns the exit status).  Bad input raises :class:`UsageError`
(or an InstanceError/ProblemError), which becomes a one-line message on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import sys
from typing import Iterator, Sequence

from .evaluate import InvalidSolution, evaluate
from .generate import KINDS, generate_set
from .io import InstanceError, read_instances, write_instances
from .problem import Length, Problem, ProblemError, Solution
from .registry import get_solver, list_solvers

DEFAULT_SOLVER = "resource-dp"
# Modules that add subcommands (each has register(subparsers)); this one registers the basic ones.
COMMAND_MODULES = ("compbench.cli", "compbench.harness.commands", "compbench.corpora.commands")


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit status 2."""


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to file descriptor 1 (C libraries' banners included) to stderr for a while."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def load_solver(name: str):
    try:
        return get_solver(name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None


def run_solver(solver, problem: Problem, time_limit: float | None = None, all_lengths: bool = False) -> Solution:
    """Solve with backend noise kept off stdout."""
    with stdout_to_stderr():
        return solver.solve(problem, time_limit=time_limit, all_lengths=all_lengths)


def _length_override(args: argparse.Namespace) -> Length | None | str:
    """The length the user asked for on the command line, or "keep" to use the file's."""
    if args.free:
        return None
    if args.length is not None:
        return Length.exact(args.length)
    if args.min_length is not None or args.max_length is not None:
        if args.min_length is None or args.max_length is None:
            raise UsageError("--min-length and --max-length go together")
        return Length(args.min_length, args.max_length)
    return "keep"


def _json_number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def solution_record(problem: Problem, solver_name: str, solution: Solution) -> dict:
    kept = [int(k) for k in solution.kept] if solution.has_solution else None
    return {
        "instance": problem.id,
        "solver": solver_name,
        "status": solution.status.value,
        "objective": _json_number(solution.objective),
        "kept": kept,
        "heads": [int(solution.heads[k]) for k in kept] if kept is not None else None,
        "bound": _json_number(solution.bound),
        "seconds": {k: round(v, 9) for k, v in solution.seconds.items()},
    }


def _print_solution(problem: Problem, solution: Solution, solver_name: str, verbose: bool) -> None:
    print(f"instance {problem.id or '(no id)'}: n = {problem.n}, length {problem.length or 'free'}, "
          f"single_root {str(problem.single_root).lower()}")
    print(f"solver   {solver_name}: {solution.status.value}" + (f" ({solution.message})" if solution.message else ""))
    if solution.has_solution:
        kept = solution.kept
        print(f"objective {solution.objective:.10g}" + (f"   bound {solution.bound:.10g}"
                                                        if solution.bound is not None else ""))
        print(f"kept     {len(kept)} of {problem.n}: " + " ".join(problem.word(k) for k in kept))
        print("tree     " + "  ".join(f"{problem.word(k)}<-{'ROOT' if solution.heads[k] == 0 else problem.word(solution.heads[k])}"
                                      for k in kept))
    seconds = solution.seconds
    print(f"seconds  setup {seconds.get('setup', 0.0):.6f}  solve {seconds.get('solve', 0.0):.6f}")
    if verbose and solution.stats:
        print("stats    " + json.dumps(solution.stats, default=str))
    if solution.by_length is not None:
        print("curve    m  status      objective")
        for m, at_m in enumerate(solution.by_length):
            value = f"{at_m.objective:.10g}" if at_m.has_solution else "-"
            words = " ".join(problem.word(k) for k in at_m.kept) if at_m.has_solution else ""
            print(f"         {m:<2} {at_m.status.value:<11} {value:<16} {words}")


def cmd_solve(args: argparse.Namespace) -> int:
    length = _length_override(args)
    problems = list(read_instances(args.file))
    solver = load_solver(args.solver)
    status = 0
    for problem in problems:
        if length != "keep":
            try:
                problem = problem.replace(length=length)
            except ProblemError as exc:
                raise UsageError(f"{args.file}: id {problem.id}: {exc}") from None
        solution = run_solver(solver, problem, args.time_limit, args.all_lengths)
        if solution.has_solution:
            try:
                evaluate(problem, solution)
            except InvalidSolution as exc:
                print(f"compbench: {args.solver} returned an invalid solution for {problem.id}: {exc}", file=sys.stderr)
                status = 1
        if args.json:
            record = solution_record(problem, args.solver, solution)
            if solution.by_length is not None:
                record["curve"] = [solution_record(problem, args.solver, s) for s in solution.by_length]
            print(json.dumps(record))
        else:
            _print_solution(problem, solution, args.solver, args.verbose)
    return status


def cmd_solvers(args: argparse.Namespace) -> int:
    infos = list_solvers()
    if args.json:
        print(json.dumps(infos, indent=1))
        return 0
    print(f"{'name':<20} {'exact':<6} {'lengths':<18} {'root1':<6} {'curve':<6} {'complexity':<22} description")
    for info in infos:
        print(f"{info['name']:<20} {'yes' if info['exact'] else 'no':<6} {','.join(info['lengths']):<18} "
              f"{'yes' if info['single_root'] else 'no':<6} {'yes' if info['all_lengths'] else 'no':<6} "
              f"{info['complexity']:<22} {info['description']}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    if args.n < 0 or args.count < 1:
        raise UsageError("--n must be >= 0 and --count >= 1")
    ratio = None if args.free else args.length_ratio
    if ratio is not None and not 0.0 <= ratio <= 1.0:
        raise UsageError(f"--length-ratio must lie in 0..1, got {ratio}")
    problems = generate_set(args.kind, args.n, args.count, seed=args.seed, length_ratio=ratio,
                            single_root=args.single_root, second_order=args.second_order)
    write_instances(args.out, problems)
    print(f"wrote {len(problems)} {args.kind} instances with n = {args.n} to {args.out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    solve = subparsers.add_parser("solve", help="solve the instances in a file with one solver")
    solve.add_argument("file", help="instance file (.json, .jsonl or .npz)")
    solve.add_argument("--solver", default=DEFAULT_SOLVER, help=f"solver name (default {DEFAULT_SOLVER})")
    lengths = solve.add_mutually_exclusive_group()
    lengths.add_argument("--length", type=int, metavar="M", help="keep exactly M tokens")
    lengths.add_argument("--free", action="store_true", help="no length condition")
    solve.add_argument("--min-length", type=int, metavar="LO")
    solve.add_argument("--max-length", type=int, metavar="HI")
    solve.add_argument("--all-lengths", action="store_true", help="also print the optimum for every length m")
    solve.add_argument("--time-limit", type=float, metavar="S")
    solve.add_argument("--json", action="store_true", help="print one JSON object per instance")
    solve.add_argument("--verbose", action="store_true", help="also print the solver's statistics")
    solve.set_defaults(func=cmd_solve)

    solvers = subparsers.add_parser("solvers", help="list the registered solvers")
    solvers.add_argument("--json", action="store_true")
    solvers.set_defaults(func=cmd_solvers)

    gen = subparsers.add_parser("generate", help="write a reproducible synthetic instance set")
    gen.add_argument("--kind", choices=KINDS, default="gaussian")
    gen.add_argument("--n", type=int, required=True)
    gen.add_argument("--count", type=int, default=1)
    gen.add_argument("--length-ratio", type=float, default=0.45, metavar="R", help="m = round(R n) (default 0.45)")
    gen.add_argument("--free", action="store_true", help="free length instead of a length ratio")
    gen.add_argument("--single-root", action="store_true")
    gen.add_argument("--second-order", action="store_true", help="add sibling scores")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--out", required=True, help="output file (.jsonl, .json or .npz)")
    gen.set_defaults(func=cmd_generate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compbench", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (UsageError, InstanceError, ProblemError) as exc:
        print(f"compbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("compbench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
