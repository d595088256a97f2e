"""The harness subcommands: ``check``, ``bench``, ``plot``, ``report`` and ``demo``."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import progress
from ..limits import GRACE_SECONDS, WARMUP_SECONDS
from .common import (MAX_SECONDS, UsageError, add_memory_limit_option, load_solver, number_in, output_directory,
                     output_path, positive_seconds, shared_memory_limit, stdout_to_stderr, user_memory_limit)

# The demo's defaults: sized to finish in about 5 minutes on 2 cores with every solver registered.
DEMO_CHECK_SET = "gen:all:1-8:2:0:mixed"  # exact and free lengths: hook-dp is checked too
DEMO_SIZES = "8:48:8"
DEMO_PER_SIZE = 3
DEMO_TIME_LIMIT = 5.0
DEMO_OUT = "compbench-demo"  # in the current directory: nothing tracked is touched
REPORT_OUT = "compbench-report"  # plot and report, likewise (reports/ holds the committed measurements)
QUICK_CHECK_SET = "gen:gaussian+forbidden:1-5:1"
QUICK_SIZES = "4:8:4"


def chosen_solvers(args: argparse.Namespace) -> list[str]:
    """The solvers of ``--solvers`` (each must exist and be able to run here), or by default every registered solver
    that can run here (those that cannot are named on stderr with the reason)."""
    from ..external import PREFIX
    from ..registry import list_solvers, split_solver_list

    if args.solvers is None or args.all:
        infos = list_solvers()
        missing = [f"{info['name']} ({info['unavailable']})" for info in infos if info["unavailable"]]
        if missing:
            print(f"compbench: not run, they cannot run here: {'; '.join(missing)}", file=sys.stderr)
        return [info["name"] for info in infos if not info["unavailable"]]
    names = split_solver_list(args.solvers)
    if not names:
        raise UsageError("no solver given to --solvers")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(f"--solvers names {', '.join(twice)} more than once")
    programs: dict[Path, str] = {}  # one program under two spellings would be its own second opinion
    for name in names:
        if name.startswith(PREFIX) and Path(name[len(PREFIX):]).is_file():
            program = Path(name[len(PREFIX):]).resolve()
            if program in programs:
                raise UsageError(f"--solvers names the program {program} twice ({programs[program]}, {name})")
            programs[program] = name
    from ..registry import get_solver

    for name in names:
        try:
            reason = get_solver(name).unavailable()
        except KeyError as exc:  # no such solver
            raise UsageError(exc.args[0]) from None
        except Exception:  # a plug-in that cannot be built: its solves report the error
            reason = None
        if reason:
            raise UsageError(f"{name} cannot run here: {reason}")
    return names


def _add_solver_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--solvers", metavar="A,B,...", help="comma-separated solver names")
    group.add_argument("--all", action="store_true", help="every registered solver that can run here (the default)")


def _add_limit_options(parser: argparse.ArgumentParser, time_limit: float | None) -> None:
    parser.add_argument("--time-limit", type=positive_seconds, default=time_limit, metavar="S",
                        help=f"hard wall-clock limit per solve in seconds (default {time_limit})")
    parser.add_argument("--jobs", type=number_in(int, 1), default=1, metavar="N",
                        help="solves run at the same time (default 1)")
    parser.add_argument("--grace", type=number_in(float, 0, MAX_SECONDS), default=GRACE_SECONDS, metavar="S",
                        help=f"seconds past the limit before a solve is killed (default {GRACE_SECONDS:g})")
    parser.add_argument("--warmup-limit", type=positive_seconds, default=WARMUP_SECONDS, metavar="S",
                        help=f"limit for each solver's warm-up solve in a fresh worker (default {WARMUP_SECONDS:g})")
    add_memory_limit_option(parser)


def problems_of(source: str) -> list:
    """The problems of an instance file or ``gen:`` spec; a bad spec is a :class:`UsageError`."""
    from ..harness.sweep import SpecError, source_problems

    try:
        return source_problems(source)
    except SpecError as exc:
        raise UsageError(str(exc)) from None


def run_check(source: str, solvers: list[str], time_limit: float | None, jobs: int, repro_dir: str,
              out: str | None = None, summary: list[str] | None = None, scheduler: str | None = None,
              grace: float = GRACE_SECONDS, warmup_limit: float = WARMUP_SECONDS,
              memory_limit: int | None = None, resume: bool = False) -> int:
    """Run the agreement check, print the table and the failures; 1 if any answer is invalid or disagrees.

    ``summary``, when given, receives the printed lines; with a Dask ``scheduler`` address the solves run there.
    ``memory_limit`` None: the machine's memory shared by the solves that run at once (the cluster's slots).
    ``out``: a new run file, or with ``resume`` one of the same check whose answers are judged with the rest."""
    from ..harness.check import check, recorded_answers
    from ..harness.references import certified_for, reference_record
    from ..harness.runfiles import RecordWriter, RunFileError, end_record, environment, finished, read_records
    from ..harness.stats import verdict_records
    from ..harness.sweep import other_instances, unique_ids
    from ..io import instance_hash

    problems = unique_ids(problems_of(source))
    certified = with_reference_errors(lambda: certified_for(source, problems))
    settings = {"check": source, "time_limit": time_limit, "solvers": solvers}
    with run_file_errors():
        writer = RecordWriter(out, fresh=not resume, same_as=settings) if out else None
    try:
        with run_file_errors():
            recorded, recorded_references = recorded_answers(out, problems) if out and resume else ([], {})
            other = other_instances(out, recorded, {p.id: instance_hash(p) for p in problems},
                                    "check --resume continues a check of the same instances: choose another --out")
            if other:
                raise UsageError(other)
            answered = {(r["instance"], r.get("hash"), r["solver"]) for r in recorded}
            if writer and resume and finished(read_records(out)) and all(
                    (p.id, instance_hash(p), s) in answered for p in problems for s in solvers):
                writer.close()  # a finished check: judged again from its answers, the file left as it was
                writer = None
    except UsageError:
        writer.close()
        raise
    executor = _executor("dask" if scheduler else "local", jobs, scheduler, grace, warmup_limit)
    memory_limit = memory_limit or shared_memory_limit(executor.slots)
    counts: dict[str, int] = {}
    started, interrupted = False, True

    def record_answer(record: dict) -> None:
        writer.write(record)
        counts[record["status"]] = counts.get(record["status"], 0) + 1

    try:
        with run_file_errors():
            if writer:
                writer.write(environment({**settings, "memory_limit": memory_limit, "executor": executor.name,
                                          **executor.parallelism()}))
                started = True
            report = check(problems, solvers, time_limit=time_limit, memory_limit=memory_limit, repro_dir=repro_dir,
                           executor=executor, on_record=record_answer if writer else None,
                           references={**recorded_references, **certified}, recorded=recorded)
            if writer:
                for problem in problems:
                    if problem.id in report.reference_of and problem.id not in recorded_references:
                        writer.write(reference_record(problem, report.reference_of[problem.id]))
                for record in verdict_records(out):
                    writer.write(record)
            interrupted = False
    finally:
        executor.close()
        if writer:
            if started:
                try:
                    writer.write(end_record(counts, interrupted))
                except RunFileError:  # the disk that refused a record refuses this too: the answers stand without it
                    pass
            writer.close()
    lines = [f"check: {len(problems)} instances x {len(solvers)} solvers from {source}", report.format_table()]
    for failure in report.failures:
        lines.append(f"FAIL {failure['solver']} on {failure['instance']}: {failure['verdict']}"
                     + (f"\n     repro: {failure['file']}" if "file" in failure else "")
                     + (f"\n     repro not written: {failure['repro_error']}" if "repro_error" in failure else ""))
    lines += report.summary_lines()
    print("\n".join(lines))
    if summary is not None:
        summary += lines
    return 1 if report.failed else 0


def _executor(kind: str, jobs: int, scheduler: str | None, grace: float, warmup_limit: float):
    """``harness.sweep.make_executor``; a Dask scheduler that cannot be reached is one line, exit 2."""
    from ..harness.sweep import SpecError, make_executor

    try:
        return make_executor(kind, jobs, scheduler, grace, warmup_limit)
    except SpecError as exc:
        raise UsageError(str(exc)) from None


def with_reference_errors(read: Callable[[], Any]) -> Any:
    """``read()``, a reference-optima file that cannot be read being one line, exit 2."""
    from ..harness.references import ReferenceError

    try:
        return read()
    except ReferenceError as exc:
        raise UsageError(str(exc)) from None


@contextlib.contextmanager
def run_file_errors() -> Iterator[None]:
    """A run file that cannot be written, is in use or does not match a resume: one line, exit 2."""
    from ..harness.runfiles import RunFileError

    try:
        yield
    except RunFileError as exc:
        raise UsageError(str(exc)) from None


def cmd_check(args: argparse.Namespace) -> int:
    repro = Path(args.repro_dir)
    if repro.exists() and not repro.is_dir():
        raise UsageError(f"{repro}: is a file, expected a directory for --repro-dir")
    writable = next((p for p in (repro, *repro.parents) if p.exists()), Path("."))
    if not os.access(writable, os.W_OK):
        raise UsageError(f"{repro}: cannot be written ({writable} is not writable): choose another --repro-dir")
    if args.executor == "dask" and not args.scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
    if args.resume and not args.out:
        raise UsageError("--resume continues the run file of --out: give --out")
    out = args.out and str(output_path(args.out, what="run file"))  # a bad --out before anything is said
    return run_check(args.set, chosen_solvers(args), args.time_limit, args.jobs, args.repro_dir, out,
                     scheduler=args.scheduler if args.executor == "dask" else None, grace=args.grace,
                     warmup_limit=args.warmup_limit, memory_limit=user_memory_limit(args), resume=args.resume)


GENERATOR_DEFAULTS = {"sizes": "10:60:5", "per_size": 5, "kinds": "gaussian", "seed": 0, "length_ratio": 0.45,
                      "free": False, "second_order": False}  # bench's options for the instances it generates


def bench_problems(args: argparse.Namespace) -> list:
    """The instances of ``bench`` (and ``demo``): ``--instances`` (refused with an option that generates them), else
    those its generator options make."""
    from ..harness.sweep import SpecError, generated_problems, parse_kinds, parse_sizes

    if args.instances:
        given = [f"--{key.replace('_', '-')}" for key, value in GENERATOR_DEFAULTS.items()
                 if getattr(args, key) != value]
        if given:
            raise UsageError(f"--instances {args.instances} takes its instances as they are: {', '.join(given)} "
                             "would be ignored (leave them out, or leave --instances out to generate instances)")
        return problems_of(args.instances)
    try:
        kinds, sizes = parse_kinds(args.kinds), parse_sizes(args.sizes)
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    ratio = None if args.free else args.length_ratio
    return generated_problems(kinds, sizes, args.per_size, seed=args.seed, length_ratio=ratio,
                              second_order=args.second_order)


def run_bench(args: argparse.Namespace, solvers: list[str], problems: list, out: str) -> dict[str, int]:
    """The sweep of ``bench`` (and of ``demo``): the memory limit per solve is the user's or the memory shared by the
    solves that run at once (``--jobs`` here, the threads of a Dask cluster's workers)."""
    from ..harness.references import certified_for, compute_references, reference_record
    from ..harness.sweep import make_tasks, run_sweep, unique_ids

    if args.executor == "dask" and not args.scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
    out = str(output_path(out, what="run file"))
    memory_limit = user_memory_limit(args)
    executor = _executor(args.executor, args.jobs, args.scheduler, args.grace, args.warmup_limit)
    try:
        memory_limit = memory_limit or shared_memory_limit(executor.slots)
        settings = {"time_limit": args.time_limit, "memory_limit": memory_limit, "solvers": solvers,
                    "instances": len(problems), "jobs": args.jobs}
        repeats = getattr(args, "repeats", 1)
        tasks = make_tasks(problems, solvers, args.time_limit, memory_limit, repeats)

        def references(pool, recorded: set[str]) -> list[dict]:
            todo = [p for p in unique_ids(problems) if p.id not in recorded]
            known = with_reference_errors(lambda: certified_for(args.instances or "gen:", todo))
            found = compute_references(todo, known, pool, time_limit=args.time_limit, memory_limit=memory_limit)
            return [reference_record(p, found[p.id]) for p in todo if p.id in found]

        with run_file_errors():
            return run_sweep(tasks, out, jobs=args.jobs, resume=args.resume, executor=executor,
                             skip_fraction=args.skip_larger_after, grace=args.grace, warmup_limit=args.warmup_limit,
                             settings=settings, force=args.force, references=references)
    finally:
        executor.close()


def cmd_bench(args: argparse.Namespace) -> int:
    from ..harness.stats import judged_summary

    solvers = chosen_solvers(args)
    problems = bench_problems(args)
    started = time.perf_counter()
    counts = run_bench(args, solvers, problems, args.out)
    judged, fails, compared, why = judged_summary(args.out)
    print("\n".join(fails + [f"bench: {len(problems)} instances x {len(solvers)} solvers in "
                             f"{time.perf_counter() - started:.0f} s ({counts.get('resumed', 0)} already recorded): "
                             f"{judged}; {compared}; results in {args.out}"]))
    if fails:
        print(f"agreement: {len(fails)} wrong answer(s) (every repeat counted; the report counts instance-solver "
              "pairs): invalid or contradicted answers count as unsolved, and their solvers are disqualified")
    if why:
        print(why)
    return 1 if fails or why else 0


def check_runs(runs: list[str], accuracy: bool = False, baseline: str | None = None, together: bool = True) -> None:
    """Every file must be a run file (of bench, demo or check) with at least one result, or with ``accuracy`` (for
    ``plot``) a ``compbench evaluate --json-out`` file; a run whose last line a kill cut gets a note.  A
    ``baseline`` must have results in the run files (a misspelt one gave no speed-ups and exit 0).  Runs read
    ``together`` must not hold two instances under one id (their answers would be judged against each other's
    reference, and one run's results dropped)."""
    from ..harness.accuracy_plot import malformed_accuracy, read_accuracy
    from ..harness.runfiles import check_run_file

    solvers: set[str] = set()
    hashes: dict[str, tuple[str, str]] = {}  # instance id -> (content hash, the run that holds it)
    optima: dict[str, tuple[tuple, str]] = {}  # instance id -> ((status, objective) of its reference, the run)
    for run in runs:
        if accuracy and Path(run).is_file() and (data := read_accuracy(run)) is not None:
            bad = malformed_accuracy(data)
            if bad:
                raise UsageError(f"{run}: {bad} (an evaluation file of compbench evaluate --json-out)")
            continue
        with run_file_errors():
            everything, note = check_run_file(run)
        if note:
            print(f"compbench: note: {note}", file=sys.stderr)
        records = [r for r in everything if r.get("type") == "result"]
        solvers |= {r.get("solver") for r in records}
        for r in records if together else ():
            first = hashes.setdefault(r["instance"], (r.get("hash"), run))
            if first[0] != r.get("hash"):
                raise UsageError(f"{run} and {first[1]} hold different instances under the id {r['instance']!r} "
                                 f"(content hash {r.get('hash')} against {first[0]}): read them apart")
        for r in everything if together else ():
            if r.get("type") == "reference":  # the same instance: its answers judged against one optimum
                optimum = (r.get("status"), r.get("objective"))
                first = optima.setdefault(r["instance"], (optimum, run))
                if first[0] != optimum:
                    raise UsageError(f"{run} and {first[1]} hold different reference optima for {r['instance']!r} "
                                     f"({optimum} against {first[0]}): read them apart")
    if baseline is not None and baseline not in solvers:
        raise UsageError(f"--baseline {baseline}: no result of it in the run files (their solvers: "
                         f"{', '.join(sorted(map(str, solvers))) or 'none'})")


def report_directory(path: str | os.PathLike, what: str = "report") -> Path:
    """:func:`output_directory` for a report: a folder whose README.md is not an earlier report's (no summary.json
    of a report beside it: a project's own README) is refused, and left as it is."""
    import json

    out = output_directory(path, what)
    if (out / "README.md").is_file():
        try:
            summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            summary = None
        if not (isinstance(summary, dict) and "solvers" in summary and "runs" in summary):
            raise UsageError(f"{out / 'README.md'} exists and is not an earlier report's (no report's summary.json "
                             "beside it): it is left as it is (choose another --out)")
    return out


def cmd_plot(args: argparse.Namespace) -> int:
    from ..harness.plots import plot_runs

    check_runs(args.runs, accuracy=True, baseline=args.baseline)
    output_directory(args.out, "plots")
    written = plot_runs(args.runs, args.out, args.baseline)
    print(f"wrote {len(written)} plot files to {args.out}: " + ", ".join(Path(p).name for p in written))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ..harness.report import write_report

    check_runs(args.runs, baseline=args.baseline)
    report_directory(args.out)
    try:
        readme = write_report(args.runs, args.out, baseline=args.baseline, shift=args.shift)
    except ValueError as exc:  # runs that cannot share one table
        raise UsageError(str(exc)) from None
    print(f"wrote {readme} (plots in {Path(args.out) / 'plots'})")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Check every solver, run a short sweep, write the report, all under ``--out`` (default ``compbench-demo/`` in
    the current directory, so that nothing tracked is touched); ``compbench demo --out reports`` regenerates the
    report committed under reports/."""
    from ..harness.report import write_report
    from ..harness.stats import judged_summary

    solvers = chosen_solvers(args)
    check_set = args.check_set or (QUICK_CHECK_SET if args.quick else DEMO_CHECK_SET)
    args.sizes = args.sizes or (QUICK_SIZES if args.quick else DEMO_SIZES)
    args.per_size = args.per_size or (1 if args.quick else DEMO_PER_SIZE)
    args.instances, args.free, args.length_ratio, args.seed = None, False, 0.45, 0
    args.executor, args.scheduler, args.skip_larger_after = "local", None, 0.5
    problems = bench_problems(args)  # bad --sizes or --kinds: refused before the work
    out = report_directory(args.out, "demo")
    runs = output_directory(out / "runs", "demo's run files")
    print(f"demo: writing the check, the sweep and the report to {out}{os.sep}", flush=True)
    started = time.perf_counter()
    print(f"demo 0/3: warming up {len(solvers)} solvers in this process (numba compiles the DP kernels once per "
          "environment, then every worker loads them from the cache)", flush=True)

    with stdout_to_stderr():
        for name in progress.bar(solvers, "warm-up", unit="solver"):
            load_solver(name).warm_up()
    print(f"demo 1/3: agreement check of {len(solvers)} solvers ({', '.join(solvers)}) on {check_set}", flush=True)
    check_run = runs / "demo-check.jsonl"
    check_run.unlink(missing_ok=True)
    check_lines: list[str] = []
    status = run_check(check_set, solvers, args.time_limit, args.jobs, str(out / "check-failures"), str(check_run),
                       check_lines, grace=args.grace, warmup_limit=args.warmup_limit,
                       memory_limit=user_memory_limit(args))
    print("          (unsupported: the problem is outside what the solver declares, e.g. hook-dp takes free length "
          "only, brute-force n <= 12, Gurobi's bundled licence 2,000 variables)", flush=True)
    sweep_run = runs / "demo.jsonl"
    if not args.resume:
        sweep_run.unlink(missing_ok=True)
    print(f"demo 2/3: sweep of {len(problems)} {args.kinds} instances (n in {args.sizes}, {args.per_size} per size, "
          f"time limit {args.time_limit:g} s, {args.jobs} jobs) -> {sweep_run}", flush=True)
    run_bench(args, solvers, problems, str(sweep_run))
    judged, fails, compared, why = judged_summary(str(sweep_run))
    print("\n".join(f"          {line}" for line in fails + [judged, compared]
                    + ([why] if why else [])))
    status = status or int(bool(fails or why))
    if "skipped" in judged:
        print("          (skipped: once more than half of a solver's instances of one size time out, its larger sizes "
              "are skipped)")
    command = "compbench " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["demo"] else None
    readme = write_report([str(sweep_run)], out, title="compbench demo report",
                          reproduce=[command or f"compbench demo --out {shlex.quote(str(out))}"],
                          sections=["## Agreement check (every solver against every other, answers validated)", "",
                                    "```", *check_lines, "```", ""])
    print(f"demo 3/3: report {readme}, plots in {out / 'plots'}, agreement records in {check_run}")
    print(f"demo finished in {time.perf_counter() - started:.0f} s; agreement "
          + ("FAILED (see above)" if status else "ok") + f"; everything is in {out}{os.sep}")
    return status


def _add_executor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="where solves run: local worker processes or a Dask cluster (default local)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address for --executor dask")


def add_shift_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shift", type=number_in(float, 0, MAX_SECONDS, open_low=True), metavar="S",
                        help="shift of the shifted geometric mean in seconds (default: 1/1000 of the time limit)")


def _add_run_reader(subparsers: argparse._SubParsersAction, name: str, help: str, out: str) -> argparse.ArgumentParser:
    """A command that reads run files and writes into a directory (plot, report)."""
    parser = subparsers.add_parser(name, help=help)
    parser.add_argument("runs", nargs="+", metavar="RUN.jsonl", help="run files of bench, demo or check")
    parser.add_argument("--out", default=out, help=f"output directory (default {out})")
    parser.add_argument("--baseline", metavar="SOLVER", help="speed-up baseline (default: fastest ILP backend)")
    return parser


def register(subparsers: argparse._SubParsersAction) -> None:
    chk = subparsers.add_parser("check", help="cross-check solvers on an instance set (exit 1 on any disagreement)")
    chk.add_argument("set", help="instance file (.json/.jsonl/.npz) or generator spec "
                                 "gen:KINDS:SIZES:COUNT[:SEED[:LENGTH]], e.g. gen:all:1-9:3")
    _add_solver_options(chk)
    _add_limit_options(chk, 60.0)
    chk.add_argument("--repro-dir", default="check-failures", metavar="DIR",
                     help="where disagreeing or invalid answers are written as instance files (default check-failures)")
    chk.add_argument("--out", metavar="RUN.jsonl", help="also record every answer in a run file (a new one, or "
                                                         "with --resume the run file of the same check)")
    chk.add_argument("--resume", action="store_true", help="with --out: judge the answers the run file already "
                                                           "holds with the others, solving only the rest")
    _add_executor_options(chk)
    chk.set_defaults(func=cmd_check)

    bench = subparsers.add_parser(
        "bench", help="runtime sweep over sizes and kinds, recorded as JSONL (exit 1 on invalid or contradicted answers)",
        description="Runtime sweep over sizes and kinds, recorded as JSONL.  Every answer of the run file is then judged "
                    "as check judges it: an invalid answer, or an optimal/infeasible claim another answer on the same "
                    "instance contradicts, is printed as a FAIL line and never counts as solved.  Exit status: 0, or "
                    "1 when there was such an answer, 2 on bad input.")
    _add_sweep_options(bench)
    bench.add_argument("--instances", metavar="SET", help="an instance file or gen: spec instead of --sizes/--kinds")
    bench.add_argument("--out", required=True, metavar="RUN.jsonl", help="run file (appended as solves finish)")
    _add_executor_options(bench)
    bench.add_argument("--repeats", type=number_in(int, 1), default=1, metavar="K",
                       help="solve each instance K times, each repeat in a fresh worker process; the statistics use "
                            "each instance's median time and compare measures the noise from the repeats (default 1)")
    bench.add_argument("--skip-larger-after", type=number_in(float, 0, 1), default=0.5, metavar="F",
                       help="skip larger sizes for a solver once more than F of a size's instances timed out "
                            "(default 0.5; 1 never skips)")
    bench.set_defaults(func=cmd_bench)

    plot = _add_run_reader(subparsers, "plot", "plots (PNG and SVG) of run files", f"{REPORT_OUT}/plots")
    plot.set_defaults(func=cmd_plot)

    report = _add_run_reader(subparsers, "report", "write OUT/README.md: tables, plots, environment, how to reproduce",
                             REPORT_OUT)
    add_shift_option(report)
    report.set_defaults(func=cmd_report)

    demo = subparsers.add_parser("demo", help="the main job: check every solver, run a short sweep, write the report")
    _add_sweep_options(demo, demo=True)
    demo.add_argument("--out", default=DEMO_OUT,
                      help=f"output directory (default {DEMO_OUT} in the current directory; --out reports "
                           "regenerates the report committed under reports/)")
    demo.add_argument("--check-set", metavar="SET", help=f"instances for the agreement check (default {DEMO_CHECK_SET})")
    demo.add_argument("--quick", action="store_true", help="a tiny run that takes seconds (for trying it out)")
    demo.set_defaults(func=cmd_demo)


def _add_sweep_options(parser: argparse.ArgumentParser, demo: bool = False) -> None:
    _add_solver_options(parser)
    defaults = GENERATOR_DEFAULTS
    parser.add_argument("--sizes", default=None if demo else defaults["sizes"], metavar="START:STOP[:STEP]",
                        help="sizes n (stop included), or N,N,..."
                             f" (default {DEMO_SIZES if demo else defaults['sizes']})")
    parser.add_argument("--per-size", type=number_in(int, 1), default=None if demo else defaults["per_size"],
                        metavar="K", help="instances per kind and size"
                                          f" (default {DEMO_PER_SIZE if demo else defaults['per_size']})")
    parser.add_argument("--kinds", default=defaults["kinds"], metavar="K1,K2",
                        help=f"instance kinds (default {defaults['kinds']})")
    if not demo:
        parser.add_argument("--seed", type=number_in(int, 0), default=defaults["seed"],
                            help=f"generator seed (default {defaults['seed']})")
        length = parser.add_mutually_exclusive_group()
        length.add_argument("--length-ratio", type=number_in(float, 0, 1), default=defaults["length_ratio"],
                            metavar="R", help=f"m = round(R n) (default {defaults['length_ratio']:g})")
        length.add_argument("--free", action="store_true", help="free length")
    parser.add_argument("--second-order", action="store_true",
                        help="add sibling scores (solvers without second-order support answer unsupported)")
    _add_limit_options(parser, DEMO_TIME_LIMIT if demo else 60.0)
    parser.add_argument("--resume", action="store_true", help="skip (instance, solver) pairs already recorded")
    parser.add_argument("--force", action="store_true",
                        help="with --resume: continue a run file recorded with other solvers, sizes, kinds, limits or "
                             "compbench version (mixing them in one run file)")
