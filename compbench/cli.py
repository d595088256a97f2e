"""The ``compbench`` command line.

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
import time
from pathlib import Path
from typing import Iterator, Sequence

from .agreement import judge
from .generate import KINDS, generate_set
from .io import InstanceError, read_instances, write_instances
from .problem import Length, Problem, ProblemError, Solution
from .registry import get_solver, list_solvers

DEFAULT_SOLVER = "resource-dp"
# Modules that add subcommands (each has register(subparsers)); this one registers the basic ones.
COMMAND_MODULES = ("compbench.cli", "compbench.harness.commands", "compbench.corpora.commands",
                   "compbench.parser.commands")


DESCRIPTION = ("Exact solvers for sentence compression as compressive dependency parsing, side by side: solve instance "
               "files, cross-check and benchmark the solvers, plot and report, train and evaluate on real corpora.")


class UsageError(Exception):
    """Bad input from the user: reported in one line, exit status 2."""


def output_path(path: str | os.PathLike, *, force: bool = True, what: str = "output") -> Path:
    """Check an output path before any work starts: its directory is created, an existing file is refused unless
    ``force``; a path that cannot be written is a :class:`UsageError`."""
    out = Path(path)
    if out.exists() and out.is_dir():
        raise UsageError(f"{out}: is a directory, expected a file for the {what}")
    if out.exists() and not force:
        raise UsageError(f"{out} exists (pass --force to overwrite it)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out}: cannot create its directory ({exc.strerror})") from None
    if not os.access(out.parent, os.W_OK):
        raise UsageError(f"{out}: its directory is not writable")
    return out


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one step (never half a file)."""
    out = Path(path)
    partial = out.with_name(f".{out.name}.partial{out.suffix}")
    try:
        yield partial
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)


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


def add_memory_limit_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--memory-limit", type=int, metavar="MIB",
                        help="address space per solve in MiB; an allocation beyond it fails and the solve ends in "
                             "'error' (default: physical memory divided by --jobs)")


def solve_memory_limit(args: argparse.Namespace) -> int:
    """The memory limit per solve in MiB: the user's, or the machine's memory shared by the concurrent solves."""
    from .limits import default_memory_limit

    if args.memory_limit is not None and args.memory_limit < 64:
        raise UsageError(f"--memory-limit must be at least 64 MiB, got {args.memory_limit}")
    return args.memory_limit or default_memory_limit(getattr(args, "jobs", 1))


def run_solver_with_hard_limit(worker, name: str, problem: Problem, time_limit: float,
                               memory_limit: int | None = None) -> Solution:
    """Solve in ``worker`` (a :class:`~compbench.harness.worker.SolveProcess`), killed if it runs past the time
    limit plus the grace period, as ``compbench bench`` does; its address space capped at ``memory_limit`` MiB."""
    from .harness.sweep import problem_reference

    result = worker.run({"solver": name, "problem": problem_reference(problem), "time_limit": time_limit,
                         "memory_limit": memory_limit})
    number = lambda key: None if result.get(key) is None else float(result[key])  # noqa: E731 ("inf" strings too)
    return Solution(result["status"], heads=result.get("heads"), objective=number("objective"),
                    bound=number("bound"), seconds=result.get("seconds") or {}, stats=result.get("stats") or {},
                    message=result.get("message", ""))


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
    if not problems:
        raise UsageError(f"{args.file}: no instances in the file")
    solver = load_solver(args.solver)
    status = 0
    worker = None
    if args.time_limit is not None and not args.all_lengths:  # a hard limit, as in bench: a child process
        from .harness.worker import SolveProcess

        worker = SolveProcess()
    with worker or contextlib.nullcontext():
        for problem in problems:
            status = max(status, _solve_one(args, solver, worker, problem, length))
    return status


def _solve_one(args: argparse.Namespace, solver, worker, problem: Problem, length) -> int:
    """Solve, judge and print one instance; 1 when the answer does not hold up."""
    if length != "keep":
        try:
            problem = problem.replace(length=length)
        except ProblemError as exc:
            raise UsageError(f"{args.file}: id {problem.id}: {exc}") from None
    if worker is not None:
        solution = run_solver_with_hard_limit(worker, args.solver, problem, args.time_limit, solve_memory_limit(args))
    else:
        solution = run_solver(solver, problem, args.time_limit, args.all_lengths)
    verdict = judge(problem, solution)
    if verdict != "ok":
        print(f"compbench: {args.solver} on {problem.id}: {verdict}", file=sys.stderr)
    if args.json:
        record = solution_record(problem, args.solver, solution)
        if solution.by_length is not None:
            record["curve"] = [solution_record(problem, args.solver, s) for s in solution.by_length]
        print(json.dumps(record))
    else:
        _print_solution(problem, solution, args.solver, args.verbose)
    return 0 if verdict == "ok" else 1


SOLVER_COLUMNS = ("name: give it to --solver or --solvers (options in brackets: NAME[key=value,...]); "
                  "exact: its 'optimal' answers are proofs; lengths: length conditions it takes; root1: handles "
                  "single_root; curve: gives the optimum for every length (--all-lengths); 2nd: sibling scores")


def cmd_solvers(args: argparse.Namespace) -> int:
    infos = list_solvers()
    if args.json:
        print(json.dumps(infos, indent=1))
        return 0
    yes = lambda flag: "yes" if flag else "no"  # noqa: E731
    rows = [("name", "exact", "lengths", "root1", "curve", "2nd", "complexity")]
    rows += [(i["name"], yes(i["exact"]), ",".join(i["lengths"]), yes(i["single_root"]), yes(i["all_lengths"]),
              yes(i["second_order"]), i["complexity"]) for i in infos]
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    for row, info in zip(rows, [None, *infos]):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
        if info is not None and args.verbose:
            print(" " * 4 + info["description"])
    print(f"\n{SOLVER_COLUMNS}" + ("" if args.verbose else "; --verbose adds each solver's description"))
    return 0


def cmd_warm_up(args: argparse.Namespace) -> int:
    from .registry import solver_names, split_solver_list

    names = split_solver_list(args.solvers) if args.solvers else solver_names()
    for name in names:
        solver = load_solver(name)
        with stdout_to_stderr():
            seconds = solver.warm_up()
        print(f"warm-up {name}: {seconds:.1f} s", flush=True)
    if not args.solvers:  # the inside-outside kernels (compbench.marginals) compile on first use as well
        from .generate import generate
        from .inference import marginals

        start = time.perf_counter()
        with stdout_to_stderr():
            marginals(generate("gaussian", 3, seed=0, length=2, second_order=True))
        print(f"warm-up marginals: {time.perf_counter() - start:.1f} s", flush=True)
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    if args.n < 0 or args.count < 1:
        raise UsageError("--n must be >= 0 and --count >= 1")
    ratio = None if args.free else args.length_ratio
    if ratio is not None and not 0.0 <= ratio <= 1.0:
        raise UsageError(f"--length-ratio must lie in 0..1, got {ratio}")
    out = output_path(args.out, force=args.force, what="instances")
    problems = generate_set(args.kind, args.n, args.count, seed=args.seed, length_ratio=ratio,
                            single_root=args.single_root, second_order=args.second_order)
    with atomic_output(out) as partial:
        write_instances(partial, problems)
    print(f"wrote {len(problems)} {args.kind} instances with n = {args.n} to {args.out}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    solve = subparsers.add_parser("solve", help="solve the instances in a file with one solver")
    solve.add_argument("file", help="instance file (.json, .jsonl or .npz)")
    solve.add_argument("--solver", default=DEFAULT_SOLVER, help=f"solver name (default {DEFAULT_SOLVER})")
    lengths = solve.add_mutually_exclusive_group()
    lengths.add_argument("--length", type=int, metavar="M", help="keep exactly M tokens")
    lengths.add_argument("--free", action="store_true", help="no length condition")
    solve.add_argument("--min-length", type=int, metavar="LO", help="keep at least LO tokens (with --max-length)")
    solve.add_argument("--max-length", type=int, metavar="HI", help="keep at most HI tokens (with --min-length)")
    solve.add_argument("--all-lengths", action="store_true", help="also print the optimum for every length m")
    solve.add_argument("--time-limit", type=float, metavar="S",
                       help="hard time limit per instance in seconds: the solve runs in a child process, killed a "
                            "grace period past it (also applies --memory-limit)")
    add_memory_limit_option(solve)
    solve.add_argument("--json", action="store_true", help="print one JSON object per instance")
    solve.add_argument("--verbose", action="store_true", help="also print the solver's statistics")
    solve.set_defaults(func=cmd_solve)

    solvers = subparsers.add_parser("solvers", help="list the registered solvers")
    solvers.add_argument("--json", action="store_true", help="print the solvers as a JSON list")
    solvers.add_argument("--verbose", action="store_true", help="add each solver's description")
    solvers.set_defaults(func=cmd_solvers)

    warm = subparsers.add_parser("warm-up", help="compile and load every solver once (numba kernels are compiled "
                                                 "once per machine and cached), so that the first real solve is fast")
    warm.add_argument("--solvers", metavar="A,B,...", help="only these solvers (default: every registered one)")
    warm.set_defaults(func=cmd_warm_up)

    gen = subparsers.add_parser("generate", help="write a reproducible synthetic instance set")
    gen.add_argument("--kind", choices=KINDS, default="gaussian", help="score distribution (default gaussian)")
    gen.add_argument("--n", type=int, required=True, help="tokens per instance")
    gen.add_argument("--count", type=int, default=1, help="number of instances (default 1)")
    gen.add_argument("--length-ratio", type=float, default=0.45, metavar="R", help="m = round(R n) (default 0.45)")
    gen.add_argument("--free", action="store_true", help="free length instead of a length ratio")
    gen.add_argument("--single-root", action="store_true", help="the root takes at most one modifier")
    gen.add_argument("--second-order", action="store_true", help="add sibling scores")
    gen.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    gen.add_argument("--out", required=True, help="output file (.jsonl, .json or .npz)")
    gen.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    gen.set_defaults(func=cmd_generate)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="compbench", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"compbench {__version__}")
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
        resume = ""
        if getattr(args, "out", None) and getattr(args, "resume", None) is not None:
            resume = (f"; finished results are kept in {args.out}: run the same command with --resume to continue"
                      if args.command == "bench" else "; run the same command with --resume to continue its sweep")
        print(f"compbench: interrupted{resume}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `compbench solvers --json | head`: the reader left, end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
