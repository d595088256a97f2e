"""Sweeps: tasks over instance sets, executors (local process pool or Dask), resume, size skipping; the records go
to a run file (:mod:`.runfiles`).

>>> import tempfile, os
>>> out = os.path.join(tempfile.mkdtemp(), "run.jsonl")
>>> tasks = make_tasks(source_problems("gen:gaussian:5:2"), ["brute-force"], time_limit=30)
>>> summary = run_sweep(tasks, out, jobs=1)
>>> [r["status"] for r in read_records(out) if r["type"] == "result"]
['optimal', 'optimal']
"""

from __future__ import annotations

import atexit
import concurrent.futures
import dataclasses
import math
import os
import queue
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from compbench.generate import KINDS, generate
from compbench.io import problem_to_dict, read_instance, read_instances, write_instances
from compbench.problem import Problem

from .runfiles import (RecordWriter, RunFileError, checked_results, environment, end_record, finished, read_records,
                       recorded_pairs, result_record, resume_mismatch, run_settings)
from .worker import GRACE_SECONDS, WARMUP_SECONDS, SolveProcess, Task, close_children, run_in_child


class SpecError(ValueError):
    """A bad size range or generator spec."""


def parse_sizes(text: str) -> list[int]:
    """``"10:60:5"`` (start:stop:step, stop included), ``"10:20"`` (step 1) or ``"6,8,12"``.

    >>> parse_sizes("10:30:10"), parse_sizes("4,6")
    ([10, 20, 30], [4, 6])
    """
    try:
        if ":" in text:
            parts = [int(p) for p in text.split(":")]
            if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] <= 0):
                raise ValueError
            start, stop, step = parts[0], parts[1], parts[2] if len(parts) == 3 else 1
            sizes = list(range(start, stop + 1, step))
        else:
            sizes = [int(p) for p in text.split(",")]
    except ValueError:
        raise SpecError(f"bad sizes {text!r} (expected START:STOP[:STEP] or N,N,...)") from None
    if not sizes or min(sizes) < 0:
        raise SpecError(f"bad sizes {text!r}: need at least one size, all >= 0")
    return sizes


def parse_kinds(text: str) -> list[str]:
    kinds = [k for k in text.replace("+", ",").split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise SpecError(f"unknown kind(s) {', '.join(unknown) or text!r} (known: {', '.join(KINDS)})")
    twice = sorted({k for k in kinds if kinds.count(k) > 1})
    if twice:  # the same instances twice, each answer counted twice
        raise SpecError(f"kind {twice[0]} given twice in {text!r}")
    return kinds


def generated_problems(kinds: Iterable[str], sizes: Iterable[int], per_size: int, seed: int = 0,
                       length_ratio: float | None = 0.45, second_order: bool = False) -> list[Problem]:
    """``per_size`` problems of each kind and size, ordered by size (then kind, index); ``second_order`` adds
    sibling scores."""
    problems = []
    for n in sorted(set(sizes)):
        for kind in kinds:
            length = None if length_ratio is None else int(round(length_ratio * n))
            problems += [generate(kind, n, seed=seed, length=length, index=i, second_order=second_order)
                         for i in range(per_size)]
    return problems


def source_problems(source: str) -> list[Problem]:
    """The problems of an instance file (.json, .jsonl, .npz) or a generator spec
    ``gen:KINDS:SIZES:COUNT[:SEED[:LENGTH]]``.

    In a spec, KINDS is e.g. ``gaussian+forbidden`` (``all``: every kind) and SIZES ``6``, ``1-9`` or ``10-40/10``;
    ``gen:all:1-9:3`` gives 3 instances of each kind for each n = 1..9 (m = round(0.45 n)).  LENGTH is a ratio R
    (m = round(R n), default 0.45), ``free``, or ``mixed``: as many free-length instances again, so that solvers of
    free length only (``hook-dp``) are checked too.
    """
    if not source.startswith("gen:"):
        problems = list(read_instances(source))
        if not problems:
            raise SpecError(f"{source}: no instances in the file")
        return problems
    parts = source[4:].split(":")
    if len(parts) not in (3, 4, 5):
        raise SpecError(f"bad generator spec {source!r} (expected gen:KINDS:SIZES:COUNT[:SEED[:LENGTH]], "
                        f"e.g. gen:gaussian+forbidden:4-9:3)")
    kinds = list(KINDS) if parts[0] == "all" else parse_kinds(parts[0])
    sizes_text = parts[1]
    if "-" in sizes_text:
        lo, _, rest = sizes_text.partition("-")
        stop, _, step = rest.partition("/")
        sizes_text = f"{lo}:{stop}:{step or 1}"
    try:
        count, seed = int(parts[2]), int(parts[3]) if len(parts) >= 4 else 0
    except ValueError:
        raise SpecError(f"bad generator spec {source!r}: COUNT and SEED are integers") from None
    if count < 1 or seed < 0:
        raise SpecError(f"bad generator spec {source!r}: COUNT must be >= 1 and SEED >= 0")
    length = parts[4] if len(parts) == 5 else "0.45"
    sizes = parse_sizes(sizes_text)
    if length in ("free", "mixed"):
        free = [p.replace(id=f"{p.id}-free") for p in generated_problems(kinds, sizes, count, seed, None)]
        return free if length == "free" else sorted(generated_problems(kinds, sizes, count, seed) + free,
                                                     key=lambda p: p.n)
    try:
        ratio = float(length)
    except ValueError:
        ratio = math.nan
    if not 0 <= ratio <= 1:
        raise SpecError(f"bad generator spec {source!r}: LENGTH is a ratio in 0..1, free or mixed")
    return generated_problems(kinds, sizes, count, seed=seed, length_ratio=ratio)


def problem_kind(problem: Problem) -> str:
    """The generator kind of a problem (``file`` when unknown), with ``+sibling`` when it has sibling scores."""
    meta = problem.extra.get("meta")
    kind = meta["kind"] if isinstance(meta, dict) and isinstance(meta.get("kind"), str) else "file"
    return f"{kind}+sibling" if problem.second_order else kind


def unique_ids(problems: Iterable[Problem]) -> list[Problem]:
    """The problems with unique, non-empty ids: when some id repeats or is missing, every problem becomes
    ``ID#i`` (its place in the list), the same on every run over the same file, so results and resume agree."""
    problems = list(problems)
    ids = [p.id for p in problems]
    if all(ids) and len(set(ids)) == len(ids):
        return problems
    return [p.replace(id=f"{p.id or 'instance'}#{i}") for i, p in enumerate(problems)]


def problem_files() -> Path:
    """A directory for this process's problem files (binary NPZ, one per problem), removed at exit and, after a
    kill -9, by the next worker started on this machine (its name carries this process's id)."""
    global _problem_dir
    if _problem_dir is None:
        from .worker import SCRATCH_PREFIX

        _problem_dir = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-problems-"))
        atexit.register(shutil.rmtree, _problem_dir, True)
    return _problem_dir


_problem_dir: Path | None = None
_problem_count = 0


def problem_reference(problem: Problem) -> dict[str, Any]:
    """What a task carries of its problem: the path of a binary copy written once (a worker reads the arrays
    straight from it, never a JSON text of n^2 numbers) and the modes its warm-up problem mirrors."""
    global _problem_count
    _problem_count += 1
    path = problem_files() / f"{_problem_count}.npz"
    write_instances(path, [problem])
    return {"file": str(path), "length": None if problem.length is None else [problem.length.min, problem.length.max],
            "single_root": problem.single_root, "second_order": problem.second_order}


def make_tasks(problems: Iterable[Problem], solvers: Iterable[str], time_limit: float | None,
               memory_limit: int | None = None, repeats: int = 1) -> list[Task]:
    """One task per (problem, solver), by increasing n so that size skipping can act (ids made unique first); each
    solve gets ``time_limit`` seconds and ``memory_limit`` MiB of address space (None: no limit).  With ``repeats``
    K > 1, K tasks per pair (``repeat`` 0..K-1 in their header), each later repeat in a fresh worker process."""
    from compbench.io import instance_hash

    solvers = list(solvers)
    tasks = []
    for problem in sorted(unique_ids(problems), key=lambda p: p.n):
        lo, hi = problem.length_bounds()
        header = {"instance": problem.id, "hash": instance_hash(problem), "n": problem.n,
                  "m": lo if lo == hi else None,
                  "length": problem.length_mode if problem.length is None or lo != hi else "exact",
                  "length_bounds": [lo, hi], "kind": problem_kind(problem)}
        data = problem_reference(problem)
        for solver in solvers:
            for repeat in range(repeats):
                tasks.append(Task(solver, data, time_limit, memory_limit,
                                  {**header, "solver": solver, **({"repeat": repeat} if repeats > 1 else {})},
                                  fresh_worker=repeat > 0))
    return tasks


@dataclass
class SizeSkipper:
    """Skips larger sizes for a (solver, kind) once more than ``fraction`` of a size's instances timed out."""

    fraction: float = 0.5
    per_size: dict[tuple[str, str, int], int] = field(default_factory=dict)  # instances planned per size
    timeouts: dict[tuple[str, str, int], int] = field(default_factory=lambda: defaultdict(int))
    limit: dict[tuple[str, str], int] = field(default_factory=dict)  # smallest size that tripped

    def plan(self, tasks: Iterable[Task], recorded: Iterable[dict] = ()) -> None:
        """Count the instances per (solver, kind, size): the tasks', and those of earlier records of the run file
        that are not among them (a resumed run extended to larger sizes still skips after the smaller ones)."""
        counts: dict[tuple[str, str, int], int] = defaultdict(int)
        seen = set()
        for header in [task.header for task in tasks] + [r for r in recorded if r.get("type") == "result"]:
            if (header["instance"], header["solver"]) not in seen:
                seen.add((header["instance"], header["solver"]))
                counts[header["solver"], header["kind"], header["n"]] += 1
        self.per_size = dict(counts)

    def observe(self, record: dict[str, Any]) -> None:
        if record.get("status") == "skipped":  # skipped in an earlier part of the run: still skipped
            pair = (record["solver"], record["kind"])
            self.limit[pair] = min(self.limit.get(pair, record["n"] - 1), record["n"] - 1)
            return
        if record.get("status") != "timeout" or record.get("repeat", 0):  # a pair's first repeat speaks for it
            return
        key = (record["solver"], record["kind"], record["n"])
        self.timeouts[key] += 1
        planned = self.per_size.get(key, 0)
        if planned and self.timeouts[key] > self.fraction * planned:
            pair = key[:2]
            self.limit[pair] = min(self.limit.get(pair, key[2]), key[2])

    def skips(self, header: dict[str, Any]) -> int | None:
        """The size that tripped the skip for this task, or None to run it."""
        tripped = self.limit.get((header["solver"], header["kind"]))
        return tripped if tripped is not None and header["n"] > tripped else None


class LocalExecutor:
    """A pool of ``jobs`` child processes (each solve under a hard limit); threads only wait on them."""

    name = "local"

    def __init__(self, jobs: int, grace: float = GRACE_SECONDS, warmup_limit: float = WARMUP_SECONDS):
        self.slots = jobs
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
        self._idle: queue.SimpleQueue[SolveProcess] = queue.SimpleQueue()
        self._workers = [SolveProcess(grace, warmup_limit) for _ in range(jobs)]
        for worker in self._workers:
            self._idle.put(worker)

    def _run(self, task: Task) -> dict[str, Any]:
        worker = self._idle.get()
        try:
            return worker.run(task)
        finally:
            self._idle.put(worker)

    def submit(self, task: Task) -> concurrent.futures.Future:
        return self._pool.submit(self._run, task)

    def wait_any(self, futures: Iterable[Any]) -> set:
        done, _ = concurrent.futures.wait(list(futures), return_when=concurrent.futures.FIRST_COMPLETED)
        return done

    def parallelism(self) -> dict[str, Any]:
        """How many solves run at once, for the run's environment record."""
        return {"slots": self.slots}

    def close(self) -> None:
        for worker in self._workers:  # kills solves still running (after Ctrl-C): their results are not recorded
            worker.close()
        self._pool.shutdown(wait=True, cancel_futures=True)


DASK_CONNECT_SECONDS = 10  # how long --scheduler may take to answer


class DaskExecutor:
    """The same tasks on a Dask distributed cluster; each Dask worker thread keeps its own child process, closed
    (with its scratch directory) when the executor closes.  The cluster runs as many solves at once as its workers
    have threads (``slots``)."""

    name = "dask"

    def __init__(self, scheduler: Any, grace: float = GRACE_SECONDS, warmup_limit: float = WARMUP_SECONDS):
        from distributed import Client

        self._own_client = not hasattr(scheduler, "submit")
        try:
            self.client = Client(scheduler, timeout=DASK_CONNECT_SECONDS) if self._own_client else scheduler
        except (OSError, TimeoutError, ValueError) as exc:
            raise SpecError(f"cannot reach the Dask scheduler at {scheduler} within {DASK_CONNECT_SECONDS} s "
                            f"({type(exc).__name__}: {str(exc)[:200]})") from None
        self.threads = self.client.nthreads()
        self.slots = max(1, sum(self.threads.values()))
        self.grace, self.warmup_limit = grace, warmup_limit
        self._futures: list[Any] = []

    def submit(self, task: Task) -> Any:
        if "file" in task.problem:  # a remote worker cannot read this machine's files: send the instance itself
            task = dataclasses.replace(task, problem=problem_to_dict(read_instance(task.problem["file"])))
        future = self.client.submit(run_in_child, task, self.grace, self.warmup_limit, pure=False)
        self._futures = [f for f in self._futures if not f.done()] + [future]
        return future

    def parallelism(self) -> dict[str, Any]:
        return {"slots": self.slots, "workers": dict(self.threads)}

    def wait_any(self, futures: Iterable[Any]) -> set:
        from distributed import wait

        done, _ = wait(list(futures), return_when="FIRST_COMPLETED")
        return set(done)

    def close(self) -> None:
        try:
            self.client.cancel([f for f in self._futures if not f.done()])
            self.client.run(close_children)  # every worker's solve processes and their scratch directories
        except Exception:  # a cluster already gone has nothing left to clean
            pass
        if self._own_client:
            self.client.close()


def make_executor(kind: str, jobs: int = 1, scheduler: Any = None, grace: float = GRACE_SECONDS,
                  warmup_limit: float = WARMUP_SECONDS) -> LocalExecutor | DaskExecutor:
    """``local``: ``jobs`` worker processes here; ``dask``: the cluster of ``scheduler`` (an address or a Client)."""
    return DaskExecutor(scheduler, grace, warmup_limit) if kind == "dask" else LocalExecutor(jobs, grace, warmup_limit)


def run_tasks(tasks: list[Task], executor: Any, on_record: Any, skipper: SizeSkipper | None = None,
              progress: Any = None) -> None:
    """Run tasks on the executor and call ``on_record(record)`` as each one finishes, in the calling thread.

    At most the executor's number of slots are in flight.  With a ``skipper``, a task waits while the same
    (solver, kind) has a smaller size in flight, so that skipping acts on the results of the smaller sizes.
    """
    pending = list(tasks)
    in_flight: dict[Any, Task] = {}

    def blocked(task: Task) -> bool:
        h = task.header
        return skipper is not None and any(
            t.solver == task.solver and t.header["kind"] == h["kind"] and t.header["n"] < h["n"]
            for t in in_flight.values())

    while pending or in_flight:
        while pending and len(in_flight) < executor.slots:
            ready = next((i for i, t in enumerate(pending) if not blocked(t)), None)
            if ready is None:
                break
            task = pending.pop(ready)
            tripped = skipper.skips(task.header) if skipper else None
            if tripped is not None:
                on_record(result_record(task, {"status": "skipped", "message": f"skipped: more than "
                          f"{skipper.fraction:g} of the instances timed out at n = {tripped}"}))
                continue
            in_flight[executor.submit(task)] = task
        for future in executor.wait_any(in_flight):
            task = in_flight.pop(future)
            try:
                result = future.result()
            except Exception as exc:  # the executor itself failed (e.g. a lost Dask worker)
                result = {"status": "error", "message": f"executor: {type(exc).__name__}: {exc}"}
            record = result_record(task, result)
            if skipper:
                skipper.observe(record)
            on_record(record)
            if progress is not None:
                progress.set_postfix_str(f"{task.solver} n={task.header['n']}")


def other_instances(path: str | Path, existing: list[dict], wanted: dict[str, str],
                    way_out: str = "pass --force to mix them in one run file, or choose another --out") -> str | None:
    """Why resuming ``existing`` records with the instances ``wanted`` (id -> content hash) would mix other
    instances in (ids it does not make: another --seed or set; or the same id with another content hash, e.g.
    another --length-ratio or an edited instance file), or None."""
    recorded = {r["instance"]: r["hash"] for r in existing if r.get("type") == "result" and r.get("hash")}
    foreign = sorted(set(recorded) - set(wanted))
    if foreign:  # another --seed, --per-size or instance set: its answers would be counted with this run's
        return (f"{path}: it holds answers on {len(foreign)} instance(s) this command does not make ({foreign[0]}, "
                f"...); {way_out}")
    for instance, content in wanted.items():
        was = recorded.get(instance)
        if was is not None and was != content:
            return (f"{path}: instance {instance} there is another instance than here (content hash {was} there, "
                    f"{content} here: other scores, length or root mode); {way_out}")
    return None


def run_sweep(tasks: list[Task], out: str | os.PathLike, *, jobs: int = 1, resume: bool = False,
              executor: str | LocalExecutor | DaskExecutor = "local", scheduler: Any = None, skip_fraction: float = 0.5,
              grace: float = GRACE_SECONDS, warmup_limit: float = WARMUP_SECONDS,
              settings: dict[str, Any] | None = None, show_progress: bool | None = None,
              force: bool = False, references: Any = None) -> dict[str, int]:
    """Run every task not yet in ``out`` (with ``resume``), appending records; returns status counts.

    ``executor`` is ``local``, ``dask`` (made here, closed at the end) or an executor the caller made and closes.  A
    resume whose solvers, sizes, kinds, limits or compbench version differ from the run file's is a
    :class:`RunFileError` unless ``force``.  ``references(pool, recorded)``: the reference records to write for
    the instances whose reference is not ``recorded`` yet (see :mod:`.references`); when the sweep completes, the
    judged verdict of every answer in the file is appended (:func:`.stats.verdict_records`)."""
    from ..progress import bar

    path = Path(out)
    writer = RecordWriter(path, fresh=not resume)
    pool, started, interrupted = None, False, True
    counts: dict[str, int] = defaultdict(int)
    try:
        existing = read_records(path) if resume else []
        checked_results(path, existing)  # a damaged record: one line naming it, before anything is written
        current = run_settings(tasks)
        why = None if force else resume_mismatch(path, existing, current) or other_instances(
            path, existing, {t.header["instance"]: t.header["hash"] for t in tasks})
        if why:
            raise RunFileError(why)
        done = recorded_pairs(existing)
        skipper = SizeSkipper(skip_fraction)
        skipper.plan(tasks, existing)
        for record in existing:
            if record.get("type") == "result":
                skipper.observe(record)
        todo = [t for t in tasks if (t.header["instance"], t.solver, t.header.get("repeat", 0)) not in done]
        counts["resumed"] = len(tasks) - len(todo)
        if not todo and finished(existing):  # a finished run: its verdicts stand, the file is left as it was
            return dict(counts)
        pool = make_executor(executor, jobs, scheduler, grace, warmup_limit) if isinstance(executor, str) else executor
        writer.write(environment({**(settings or {}), **current, "executor": pool.name, **pool.parallelism(),
                                  "tasks": len(tasks), "already_recorded": counts["resumed"],
                                  "skip_fraction": skip_fraction, "grace_seconds": grace}))
        started = True
        if references is not None:
            for record in references(pool, {r["instance"] for r in existing if r.get("type") == "reference"}):
                writer.write(record)
        progress = bar(total=len(todo), desc="sweep", unit="solve", show=show_progress)

        def on_record(record: dict[str, Any]) -> None:
            writer.write(record)
            counts[record["status"]] += 1
            progress.update(1)

        try:
            run_tasks(todo, pool, on_record, skipper, progress)
        finally:
            progress.close()
        from .stats import verdict_records

        for record in verdict_records(path):
            writer.write(record)
        interrupted = False
    finally:
        if pool is not None and isinstance(executor, str):
            pool.close()
        if started:
            try:
                writer.write(end_record(counts, interrupted))
            except RunFileError:  # the disk that refused a result refuses this too: the results stand without it
                pass
        writer.close()
    return dict(counts)
