"""``compbench solve``, ``solvers``, ``warm-up`` and ``generate``."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import TYPE_CHECKING

from .. import progress
from ..limits import WARMUP_SECONDS
from .common import (DEFAULT_SOLVER, INSTANCE_SUFFIXES, Later, UsageError, add_memory_limit_option, load_solver,
                     number_in, output_path, positive_seconds, run_solver, run_solver_with_hard_limit,
                     solve_memory_limit, stdout_to_stderr, user_memory_limit)

if TYPE_CHECKING:
    from ..problem import Length, Problem, Solution


def _length_override(args: argparse.Namespace) -> Length | None | str:
    """The length the user asked for on the command line, or "keep" to use the file's."""
    from ..problem import Length

    ranged = args.min_length is not None or args.max_length is not None
    if ranged and (args.free or args.length is not None):
        raise UsageError(f"--min-length/--max-length and {'--free' if args.free else '--length'} are one length "
                         "condition each: give one")
    if args.free:
        return None
    if args.length is not None:
        return Length.exact(args.length)
    if args.min_length is not None or args.max_length is not None:
        if args.min_length is None or args.max_length is None:
            raise UsageError("--min-length and --max-length go together")
        return Length(args.min_length, args.max_length)
    return "keep"


def _json_record(problem: Problem, solver_name: str, solution: Solution) -> dict:
    from ..records import solution_record

    return {"instance": problem.id, "solver": solver_name, **solution_record(solution, stats=False)}


def _print_solution(problem: Problem, solution: Solution, solver_name: str, verbose: bool) -> None:
    print(f"instance {problem.id or '(no id)'}: n = {problem.n}, length {problem.length or 'free'}, "
          f"single_root {str(problem.single_root).lower()}")
    print(f"solver   {solver_name}: {solution.status.value}" + (f" ({solution.message})" if solution.message else ""))
    number = lambda value: "-" if value is None else f"{value:.10g}"  # an invalid answer may lack one
    word = lambda k: problem.word(k) if 0 < k <= problem.n else f"#{k}"  # ... or name a token that is not there
    if solution.has_solution:
        kept = solution.kept
        print(f"objective {number(solution.objective)}" + (f"   bound {number(solution.bound)}"
                                                            if solution.bound is not None else ""))
        print(f"kept     {len(kept)} of {problem.n}: " + " ".join(word(k) for k in kept))
        print("tree     " + "  ".join(f"{word(k)}<-{'ROOT' if solution.heads[k] == 0 else word(solution.heads[k])}"
                                      for k in kept))
    seconds = solution.seconds
    print(f"seconds  setup {seconds.get('setup', 0.0):.6f}  solve {seconds.get('solve', 0.0):.6f}")
    if verbose and solution.stats:
        print("stats    " + json.dumps(solution.stats, default=str))
    if solution.by_length is not None:
        print("curve    m  status      objective")
        for m, at_m in enumerate(solution.by_length):
            value = number(at_m.objective) if at_m.has_solution else "-"
            words = " ".join(word(k) for k in at_m.kept) if at_m.has_solution else ""
            print(f"         {m:<2} {at_m.status.value:<11} {value:<16} {words}")


def cmd_solve(args: argparse.Namespace) -> int:
    from ..io import read_instances

    length = _length_override(args)
    from ..harness.sweep import unique_ids

    problems = unique_ids(read_instances(args.file))  # ids repeated in the file: ID#i, as check and bench name them
    if not problems:
        raise UsageError(f"{args.file}: no instances in the file")
    solver = load_solver(args.solver)
    user_memory_limit(args)  # checked before any work
    if args.all_lengths and (args.time_limit is not None or args.memory_limit is not None):
        raise UsageError("--all-lengths solves in this process, where --time-limit and --memory-limit cannot be held "
                         "(they hold in a worker, which carries one answer): drop one or the other")
    from ..harness.references import certified_for
    from .harness import with_reference_errors

    certified = with_reference_errors(lambda: certified_for(args.file, problems))  # the optima beside the file
    status = 0
    worker = None
    if in_a_worker(args):
        from ..harness.worker import SolveProcess

        worker = SolveProcess(warmup_limit=args.warmup_limit)
    with worker or contextlib.nullcontext():
        for problem in progress.bar(problems, "instances", unit="instance") if len(problems) > 1 else problems:
            status = max(status, _solve_one(args, solver, worker, problem, length, certified.get(problem.id)))
    return status


def in_a_worker(args: argparse.Namespace) -> bool:
    """Whether ``solve`` runs the solver in a worker process: under a hard time or memory limit (as in bench), and
    always for a third-party solver (a plug-in's or an ``exec:`` program: one that ends its process cannot end
    compbench silently).  ``--all-lengths`` solves in this process (the worker carries one answer)."""
    from ..registry import solver_distribution

    if args.all_lengths:
        return False
    limited = args.time_limit is not None or args.memory_limit is not None
    return limited or solver_distribution(args.solver) != "compbench"


def _solve_one(args: argparse.Namespace, solver, worker, problem: Problem, length, certified=None) -> int:
    """Solve, judge (against its ``certified`` optimum, when the file has one) and print one instance; 1 when the
    answer does not hold up or is an error."""
    from ..agreement import judge
    from ..problem import Length, ProblemError, Status

    if length != "keep":
        try:
            problem = problem.replace(length=length)
        except ProblemError as exc:
            raise UsageError(f"{args.file}: id {problem.id}: {exc}") from None
        certified = None  # another problem than the one certified
    if worker is not None:
        solution = run_solver_with_hard_limit(worker, args.solver, problem, args.time_limit, solve_memory_limit(args))
    else:
        solution = run_solver(solver, problem, args.time_limit, args.all_lengths)
    verdicts = [("", _judged(problem, solution, certified))]
    for m, at_m in enumerate(solution.by_length or ()):  # each point of the curve is an answer too
        verdicts.append((f", length {m}", judge(problem.replace(length=Length.exact(m)), at_m)))
    wrong = [(where, verdict) for where, verdict in verdicts if verdict != "ok"]
    with progress.printing():
        for where, verdict in wrong:
            print(f"compbench: {args.solver} on {problem.id}{where}: {verdict}", file=sys.stderr)
        if args.json:
            record = _json_record(problem, args.solver, solution)
            if solution.by_length is not None:
                record["curve"] = [_json_record(problem, args.solver, s) for s in solution.by_length]
            print(json.dumps(record))
        else:
            _print_solution(problem, solution, args.solver, args.verbose)
    return 0 if not wrong and solution.status != Status.ERROR else 1


def _judged(problem: Problem, solution: Solution, certified=None) -> str:
    """:func:`compbench.agreement.judge` against the ``certified`` optimum; a valid answer that refutes it (beats
    its optimum, or solves what it calls infeasible) blames the certificate, as check sets such a reference aside,
    not the answer."""
    from ..agreement import judge, refutes
    from ..evaluate import objective_error

    if certified is not None and judge(problem, solution) == "ok" and refutes(
            solution, "ok", certified, objective_error(problem, solution.heads)):
        return (f"refutes the certified optimum {certified.describe()}: a valid tree beats it, so the certificate "
                "is wrong (compbench certify writes it anew)")
    return judge(problem, solution, certified)


SOLVER_COLUMNS = ("name: give it to --solver or --solvers (options in brackets: NAME[key=value,...]); "
                  "here: it can run on this machine (else why not, below); exact: its 'optimal' answers are proofs; "
                  "lengths: length conditions it takes; root1: handles single_root; curve: gives the optimum for "
                  "every length (--all-lengths); 2nd: sibling scores")


def cmd_solvers(args: argparse.Namespace) -> int:
    from ..registry import list_solvers

    infos = list_solvers()
    if args.json:
        print(json.dumps(infos, indent=1))
        return 0
    yes = lambda flag: "yes" if flag else "no"  # noqa: E731
    rows = [("name", "here", "exact", "lengths", "root1", "curve", "2nd", "complexity")]
    rows += [(i["name"], yes(not i["unavailable"]), yes(i["exact"]), ",".join(i["lengths"]), yes(i["single_root"]),
              yes(i["all_lengths"]), yes(i["second_order"]), i["complexity"]) for i in infos]
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    for row, info in zip(rows, [None, *infos]):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
        if info is not None and args.verbose:
            print(" " * 4 + info["description"])
    missing = [i for i in infos if i["unavailable"]]
    if missing:
        print("\ncannot run here:")
        for info in missing:
            print(f"  {info['name']}: {info['unavailable']}")
    print(f"\n{SOLVER_COLUMNS}" + ("" if args.verbose else "; --verbose adds each solver's description"))
    return 0


def cmd_warm_up(args: argparse.Namespace) -> int:
    from .harness import chosen_solvers

    names = chosen_solvers(argparse.Namespace(solvers=args.solvers, all=False))  # each one able to run here
    if not args.solvers:  # the inside-outside kernels (compbench.marginals) compile on first use as well
        names.append("marginals")
    solvers_bar = progress.bar(names, "warm-up", unit="solver")
    total, failed = 0.0, []
    for name in solvers_bar:
        solvers_bar.set_postfix_str(name)
        with stdout_to_stderr():
            seconds, why = _warm_up(name)
        total += seconds
        progress.echo(f"warm-up {name}: {seconds:.1f} s" + (f"; FAILED: {why}" if why else ""))
        failed += [name] if why else []
    progress.echo(f"warm-up: {len(names)} in {total:.1f} s"
                  + (f"; {len(failed)} failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def _warm_up(name: str) -> tuple[float, str | None]:
    """Seconds to warm up the solver ``name`` (or ``marginals``: the inside-outside kernels), and why it failed: its
    answer to a tiny problem, solved again once warm, is not a right one (None: it is)."""
    from ..agreement import judge
    from ..generate import generate
    from ..problem import Status

    if name == "marginals":
        from ..inference import marginals

        start = time.perf_counter()
        for second_order in (False, True):  # each order's kernels are compiled apart
            marginals(generate("gaussian", 3, seed=0, length=2, second_order=second_order))
        return time.perf_counter() - start, None
    solver = load_solver(name)
    seconds = solver.warm_up()
    problem = generate("gaussian", 4, seed=0, length=2 if "exact" in solver.supports.lengths else None)
    answer = solver.solve(problem, time_limit=60.0)
    if answer.status in (Status.ERROR, Status.UNSUPPORTED, Status.TIMEOUT):
        return seconds, f"{answer.status.value}: {answer.message or '(no message)'}"[:300]
    if not answer.has_solution:  # the problem has solutions: an answer without one checks nothing
        return seconds, f"{answer.status.value} without a solution to a problem that has one"
    verdict = judge(problem, answer, load_solver("brute-force").solve(problem))
    return seconds, None if verdict == "ok" else verdict[:300]


def cmd_generate(args: argparse.Namespace) -> int:
    from ..generate import generate_set
    from ..io import write_instances

    if args.free and args.length_ratio is not None:
        raise UsageError("--length-ratio and --free are two length conditions: give one")
    ratio = None if args.free else 0.45 if args.length_ratio is None else args.length_ratio
    out = output_path(args.out, force=args.force, what="instances", suffixes=INSTANCE_SUFFIXES)
    if not args.no_certify:
        from .certify import solu_target

        solu_target(str(out))  # the optima go beside it: refused now if that file is another set's
    problems = generate_set(args.kind, args.n, args.count, seed=args.seed, length_ratio=ratio,
                            single_root=args.single_root, second_order=args.second_order)
    write_instances(out, problems)  # whole or not at all
    print(f"wrote {len(problems)} {args.kind} instances with n = {args.n} to {args.out}")
    if args.no_certify:
        return 0
    from .certify import certify_file

    written, missing, _ = certify_file(str(out))
    print("\n".join(missing + [f"wrote their certified optima to {written}"]))
    return 1 if missing else 0


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
    solve.add_argument("--time-limit", type=positive_seconds, metavar="S",
                       help="hard time limit per instance in seconds: the solve runs in a child process, killed a "
                            "grace period past it (also applies --memory-limit)")
    solve.add_argument("--warmup-limit", type=positive_seconds, default=WARMUP_SECONDS, metavar="S",
                       help=f"limit for the solver's first, warm-up solve in that child process, on a tiny problem "
                            f"(default {WARMUP_SECONDS:g}; as bench's): a plug-in that hangs is stopped there")
    add_memory_limit_option(solve)
    solve.add_argument("--json", action="store_true", help="print one JSON object per instance")
    solve.add_argument("--verbose", action="store_true", help="also print the solver's statistics")
    solve.set_defaults(func=cmd_solve)

    solvers = subparsers.add_parser("solvers", help="list the registered solvers")
    solvers.add_argument("--json", action="store_true", help="print the solvers as a JSON list")
    solvers.add_argument("--verbose", action="store_true", help="add each solver's description")
    solvers.set_defaults(func=cmd_solvers)

    warm = subparsers.add_parser("warm-up", help="compile and load every solver once (numba kernels are compiled "
                                                 "once per environment and cached), so that the first real solve "
                                                 "is fast")
    warm.add_argument("--solvers", metavar="A,B,...", help="only these solvers (default: every registered one)")
    warm.set_defaults(func=cmd_warm_up)

    gen = subparsers.add_parser("generate", help="write a reproducible synthetic instance set")
    gen.add_argument("--kind", choices=Later("compbench.generate", "KINDS"), metavar="KIND", default="gaussian",
                     help="score distribution: %(choices)s (default gaussian)")
    gen.add_argument("--n", type=number_in(int, 0), required=True, help="tokens per instance")
    gen.add_argument("--count", type=number_in(int, 1), default=1, help="number of instances (default 1)")
    gen.add_argument("--length-ratio", type=number_in(float, 0, 1), metavar="R",
                     help="m = round(R n); R is 0.45 when neither it nor --free is given")
    gen.add_argument("--free", action="store_true", help="free length instead of a length ratio")
    gen.add_argument("--single-root", action="store_true", help="the root takes at most one modifier")
    gen.add_argument("--second-order", action="store_true", help="add sibling scores")
    gen.add_argument("--seed", type=number_in(int, 0), default=0, help="random seed (default 0)")
    gen.add_argument("--out", required=True, help="output file (.jsonl, .json or .npz)")
    gen.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    gen.add_argument("--no-certify", action="store_true",
                     help="do not write the certified optima beside --out (compbench certify; two exact methods)")
    gen.set_defaults(func=cmd_generate)


