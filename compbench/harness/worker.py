"""One solve in a child process under a hard wall-clock limit.

:class:`SolveProcess` owns a long-lived child (:func:`worker_command`) that solves one task at a
time; the parent waits for the answer and kills the child when the limit passes (recorded as ``timeout``) or
finds it dead (recorded as ``error`` with the tail of its stderr).  The child is restarted on the next task.

The child's first solve with a solver is preceded by a warm-up on a tiny problem (imports, JIT compilation),
timed separately under its own limit, so the measured solve is a warm one.  The protocol is one JSON line per
message on the child's stdin and on a private copy of its stdout (fd 1 itself goes to stderr, so banners printed
by C libraries cannot corrupt it).

>>> from compbench import generate
>>> from compbench.io import problem_to_dict
>>> task = Task("brute-force", problem_to_dict(generate("gaussian", 5, length=2)), time_limit=30)
>>> with SolveProcess() as worker:
...     worker.run(task)["status"]
'optimal'
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from compbench.limits import GRACE_SECONDS, WARMUP_SECONDS, proc_field
from compbench.processes import kill_process_tree

WARMUP_N = 4
MEMORY_SIGNALS = (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS)  # how running out of memory ends
WARMUP_SOLVE_SECONDS = 10.0  # the warm-up solve's own time limit (at most the task's)
STDERR_TAIL_BYTES = 64 * 1024  # what a crash report reads of the child's stderr: its end (as exec: programs' cap)
# Worker processes run one solve each at a time: numerical libraries get one thread unless the user says otherwise.
THREAD_DEFAULTS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "NUMBA_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Task:
    """One solve for a worker: the solver's name, its problem as it crosses the process boundary (a reference to a
    binary copy, :func:`compbench.harness.sweep.problem_reference`, or the instance's JSON object), its limits
    (seconds, MiB of address space; None: none), the header its result record starts with (instance, hash, n, m,
    kind, solver, repeat), and whether it needs a worker process of its own (a repeat)."""

    solver: str
    problem: dict[str, Any]
    time_limit: float | None = None
    memory_limit: int | None = None
    header: dict[str, Any] = field(default_factory=dict)
    fresh_worker: bool = False

    def message(self, warm_up: bool) -> str:
        """The line sent to the worker (JSON; ``warm_up``: warm the solver up first)."""
        return json.dumps({**asdict(self), "warm_up": warm_up}, allow_nan=False)

    @classmethod
    def from_message(cls, line: str) -> tuple[Task, bool]:
        """The task and the warm-up flag of a line :meth:`message` wrote."""
        data = json.loads(line)
        warm_up = bool(data.pop("warm_up", False))
        return cls(**data), warm_up


def _reset_peak_memory() -> bool:
    """Reset this process's peak resident set size (Linux >= 4.0); False when the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _memory_mb(field: str = "VmHWM") -> float:
    """``VmHWM``: peak resident set size of this process in MiB (since the last reset when resets work);
    ``VmRSS``: the current one."""
    value = proc_field("/proc/self/status", field)
    if value is None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return value / (1 << 20)


def limit_memory(megabytes: int | None) -> None:
    """Cap this process's address space at ``megabytes`` MiB (RLIMIT_AS, soft limit; None lifts the cap): an
    allocation beyond it fails (MemoryError in Python, a failed malloc in C) instead of exhausting the machine."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = hard if megabytes is None else int(megabytes) << 20
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _memory_limit_note(task: Task) -> str:
    """The task's --memory-limit, named after a failure that may come from it (a MemoryError, a signal)."""
    limit = task.memory_limit
    return f" (the solve's memory limit is {limit} MiB: --memory-limit)" if limit else ""


def solve_task(task: Task) -> dict[str, Any]:
    """Solve one task in this process and return its result fields (used inside the child)."""
    from compbench import get_solver
    from compbench.agreement import validate
    from compbench.evaluate import objective_error
    from compbench.problem import changed_scores, score_digest
    from compbench.records import solution_record
    from compbench.registry import opinion
    problem = task_problem(task.problem)
    given = score_digest(problem)  # the answer is judged on the scores as given, whatever the solver wrote
    solver = get_solver(task.solver)
    reset = _reset_peak_memory()
    before = _memory_mb("VmRSS")
    started = time.perf_counter()
    solution = solver.solve(problem, time_limit=task.time_limit)
    wall = time.perf_counter() - started
    out = solution_record(solution)
    out["seconds"]["wall"] = wall
    out.update({
        "implementation": opinion(task.solver),  # recorded: the run file is judged alike on any machine
        "peak_memory_mb": round(_memory_mb(), 3),
        "memory_before_mb": round(before, 3),
        "peak_memory_scope": "solve" if reset else "process",
        "message": solution.message + (_memory_limit_note(task) if "raised MemoryError" in solution.message else ""),
    })
    if (changed := changed_scores(problem, given)) is not None:
        out["validity"] = f"invalid: the solver wrote into its input ({changed} changed while it solved)"
        return out
    out["validity"] = validate(problem, solution)
    if out["validity"] == "ok" and solution.has_solution:
        out["objective_error"] = objective_error(problem, solution.heads)  # within it, two sums of its scores agree
    return out


def task_problem(data: dict[str, Any]):
    """A task's problem: a reference to its binary file (:func:`compbench.harness.sweep.problem_reference`) or the
    instance's JSON object."""
    from compbench.io import problem_from_dict, read_instance

    return read_instance(data["file"]) if "file" in data else problem_from_dict(data)


def _modes(like: dict[str, Any]) -> tuple[str, bool]:
    """(length mode, second order) of a task's problem, from its reference ([lo, hi] lengths) or its JSON object
    (an integer, a {min, max} range, or null)."""
    length = like.get("length")
    if isinstance(length, dict):
        length = [length["min"], length["max"]]
    elif isinstance(length, int):
        length = [length, length]
    mode = "free" if length is None else ("exact" if length[0] == length[1] else "range")
    return mode, bool(like.get("second_order") or like.get("scores", {}).get("sibling"))


def warm_up_problem(like: dict[str, Any]):
    """A tiny problem (n = WARMUP_N) of the same length mode, root mode and order as the task's problem (its
    reference or its JSON object)."""
    from compbench import Length, generate

    mode, second_order = _modes(like)
    length = {"range": Length(1, WARMUP_N - 1), "exact": WARMUP_N // 2, "free": None}[mode]
    return generate("gaussian", WARMUP_N, seed=0, length=length, single_root=bool(like.get("single_root")),
                    second_order=second_order)


def _warm_up(task: Task) -> None:
    from compbench import get_solver

    limit = WARMUP_SOLVE_SECONDS if task.time_limit is None else min(WARMUP_SOLVE_SECONDS, task.time_limit)
    get_solver(task.solver).solve(warm_up_problem(task.problem), time_limit=limit)


PR_SET_PDEATHSIG = 1
PARENT_VARIABLE = "COMPBENCH_SWEEP_PID"  # the pid of the process a worker serves, set by SolveProcess


def parent_death_signal(sig: int) -> bool:
    """Ask the kernel to send ``sig`` to this process when the thread that started it ends (Linux prctl); the
    kernel delivers it even while C code runs.  False where that is not available."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _die_with_parent(parent: int) -> None:
    """Tie this worker to the sweep: the kernel kills it (SIGKILL) when the sweep dies, whatever a backend is doing,
    and a guard process forked here kills what the worker leaves behind when it dies (its process group: a backend's
    children, CBC under PuLP) and removes the dead sweep's scratch directories."""
    parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # the sweep died before the request took effect
        os._exit(1)
    group, worker = os.getpgrp(), os.getpid()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # held until sigwait: no death can slip by
    if os.fork():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        return
    try:  # the guard: out of the group it kills, holding none of the worker's pipes; waits for the worker's death
        os.closerange(0, 2)
        os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        os.setpgid(0, 0)
        parent_death_signal(signal.SIGTERM)
        if os.getppid() == worker:
            signal.sigwait({signal.SIGTERM})
        os.killpg(group, signal.SIGKILL)
        scratch = os.environ.get("TMPDIR")
        for _ in range(100):  # the sweep's death may still be under way: up to 1 s for it to end
            if not _running(parent):
                if scratch and Path(scratch).name.startswith(SCRATCH_PREFIX):
                    _remove_orphaned_scratch(Path(scratch).parent)
                break
            time.sleep(0.01)
    except OSError:
        pass
    finally:
        os._exit(0)


def main() -> None:
    """The child's loop: read a task line, answer ``{"warm": true}`` after a warm-up if asked, then the result."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's business: it kills us if needed
    _die_with_parent(int(os.environ.get(PARENT_VARIABLE) or os.getppid()))
    os.environ["COMPBENCH_WORKER"] = str(os.getpid())  # exec: programs stay in this process group (compbench.external)
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything printed to stdout (C banners included) goes to stderr
    sys.stdout = sys.stderr
    for line in sys.stdin:
        task, warm_up = Task.from_message(line)
        limit_memory(task.memory_limit)
        if warm_up:
            try:
                _warm_up(task)
            except (Exception, KeyboardInterrupt):  # the real solve reports the failure
                pass
            channel.write(json.dumps({"warm": True}) + "\n")
        try:
            result = solve_task(task)
        except (Exception, KeyboardInterrupt) as exc:  # a crashing solver becomes an error record (a worker ignores
            # Ctrl-C: a KeyboardInterrupt here is the solver's own)
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            result = {"status": "error", "message": f"{task.solver} raised {last}"}
        try:
            line = json.dumps(result, allow_nan=False)
        except (TypeError, ValueError) as exc:
            line = json.dumps({"status": "error", "message": f"{task.solver}: result is not JSON ({exc})"})
        channel.write(line + "\n")


def worker_command() -> list[str]:
    """The command line of a worker: this Python, with the folder this process imported compbench from first on its
    path and the current folder not on it (``-P``), so that the worker imports the same compbench as its parent,
    whatever folder it starts in (a folder holding a clone named ``compbench`` included)."""
    import compbench

    root = str(Path(compbench.__file__).resolve().parent.parent)
    return [sys.executable, "-P", "-c", f"import sys; sys.path.insert(0, {root!r}); "
                                        "from compbench.harness.worker import main; main()"]


class SolveProcess:
    """A child process that solves tasks one at a time; killed and replaced when a solve overruns or crashes."""

    def __init__(self, grace: float = GRACE_SECONDS, warmup_limit: float = WARMUP_SECONDS):
        self.grace = grace
        self.warmup_limit = warmup_limit
        self._process: subprocess.Popen | None = None
        self._stderr = None
        self._warmed: set[tuple] = set()
        self._buffer = bytearray()
        self._stderr_start = 0

    def _start(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        _remove_orphaned_scratch()
        # the worker's own temporary directory (PuLP writes its .mps/.sol files there): removed with the worker
        self._scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
        env = {**THREAD_DEFAULTS, **os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": self._scratch,
               PARENT_VARIABLE: str(os.getpid())}
        self._process = spawn(worker_command(), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=self._stderr, env=env,
                              start_new_session=True)  # its own process group: see close()
        self._warmed = set()
        self._buffer = bytearray()

    def _stderr_tail(self) -> str:
        """The last line the child wrote to stderr since the current task started."""
        if self._stderr is None:
            return ""
        end = self._stderr.seek(0, os.SEEK_END)
        self._stderr.seek(max(self._stderr_start, end - STDERR_TAIL_BYTES))  # a solver may write gigabytes there
        lines = [ln for ln in self._stderr.read().decode(errors="replace").splitlines() if ln.strip()]
        return lines[-1].strip()[:300] if lines else ""

    def close(self) -> None:
        if self._process is not None:
            kill_process_tree(self._process.pid)  # a backend's own child processes (CBC under PuLP) go with it
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                stream.close()
            self._process = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if getattr(self, "_scratch", None):
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> SolveProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _read_line(self, deadline: float) -> dict[str, Any] | None:
        """The next message, or None when the deadline passed or the child died."""
        stdout, buffer = self._process.stdout, self._buffer
        searched = 0  # each byte searched for the newline once, and appended in place: a 60 MiB answer took 20 s
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while (end := buffer.find(b"\n", searched)) < 0:
                searched = len(buffer)
                remaining = deadline - time.monotonic()  # inf: no limit, wait for as long as it takes
                if remaining <= 0 or not selector.select(None if math.isinf(remaining) else remaining):
                    return None
                chunk = os.read(stdout.fileno(), 1 << 20)
                if not chunk:
                    return None
                buffer += chunk
        line = bytes(buffer[:end])
        del buffer[:end + 1]
        return json.loads(line)

    def run(self, task: Task) -> dict[str, Any]:
        """Solve ``task`` and return the result fields; never raises for what the solver does (timeouts, crashes and
        exceptions become records)."""
        if self._process is None or self._process.poll() is not None or task.fresh_worker:
            self.close()
            self._start()
        problem = task.problem
        key = (task.solver, *_modes(problem), bool(problem.get("single_root")))  # what the warm-up mirrors
        warm_up = key not in self._warmed and not task.solver.startswith("exec:")  # a program starts anew each run
        self._stderr.seek(0, os.SEEK_END)
        self._stderr_start = self._stderr.tell()  # a crash reports this task's stderr, not an earlier one's
        try:
            self._process.stdin.write((task.message(warm_up) + "\n").encode())
            self._process.stdin.flush()
        except BrokenPipeError:
            return self._died(task)
        if warm_up:
            warm_started = time.monotonic()
            warm_limit = self._warm_up_limit(task)
            reply = self._read_line(warm_started + warm_limit)
            if reply is None:
                if time.monotonic() < warm_started + warm_limit:  # its output ended: a crash, not a timeout
                    return self._died(task, "in the warm-up")
                _WARM_UPS[task.solver] = False
                return self._overran(task, f"warm-up on a tiny problem (n = {WARMUP_N}) exceeded "
                                           f"{warm_limit:g} s", time.monotonic() - warm_started)
            _WARM_UPS[task.solver] = True
            self._warmed.add(key)
        limit = task.time_limit
        started = time.monotonic()
        deadline = started + (limit + self.grace if limit is not None else float("inf"))
        reply = self._read_line(deadline)
        if reply is None:
            if time.monotonic() >= deadline:
                wall = time.monotonic() - started
                return self._overran(task, f"killed after {wall:.1f} s (time limit {limit:g} s + {self.grace:g} s "
                                           "grace)", wall)
            return self._died(task)
        return reply

    def _warm_up_limit(self, task: Task) -> float:
        """The full warm-up limit (room for a first compilation) the first time a solver warms up in this process;
        once it has warmed up (its compiled code is cached) or hung, the task's own limit plus the grace period."""
        limit = task.time_limit
        if task.solver not in _WARM_UPS or limit is None:
            return self.warmup_limit
        return min(self.warmup_limit, limit + self.grace)

    def _overran(self, task: Task, why: str, wall: float) -> dict[str, Any]:
        self.close()
        return {"status": "timeout", "message": f"{task.solver}: {why}", "killed": True,
                "seconds": {"wall": wall}}

    def _died(self, task: Task, when: str = "") -> dict[str, Any]:
        code = self._process.wait()
        tail = self._stderr_tail()
        how = f"signal {-code}" if code < 0 else f"exit status {code}"
        self.close()
        return {"status": "error", "message": f"{task.solver}: worker process died{' ' + when if when else ''} "
                                              f"({how})" + (f": {tail}" if tail else "")
                                              + (_memory_limit_note(task) if -code in MEMORY_SIGNALS else "")}


SCRATCH_PREFIX = "compbench-worker-"
# Per solver, whether its first warm-up in this process (any worker) succeeded: later warm-ups (new workers after a
# kill) need no compilation, so they get the task's own limit (a hanging warm-up then costs limit + grace once more).
_WARM_UPS: dict[str, bool] = {}


def _remove_orphaned_scratch(base: Path | None = None) -> None:
    """Remove the scratch directories (in ``base``, default the temporary directory) of sweeps that no longer run
    (their name carries the sweep's pid; a zombie not yet reaped counts as gone), e.g. after kill -9."""
    for path in Path(base or tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*-*"):
        try:
            owner = int(path.name[len(SCRATCH_PREFIX):].split("-")[0])
        except ValueError:
            continue
        if not _running(owner):
            shutil.rmtree(path, ignore_errors=True)


def _running(pid: int) -> bool:
    """Is process ``pid`` alive?  A zombie not yet reaped counts as gone, a process this user may not inspect as
    alive."""
    try:
        return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True


_spawner: concurrent.futures.ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def spawn(*args: Any, **kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen`` called from one thread that lives as long as this process: a worker's parent-death signal
    fires when the *thread* that forked it ends, so no worker may come from a short-lived thread (a pool's, Dask's)."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="compbench-spawner")
    return _spawner.submit(subprocess.Popen, *args, **kwargs).result()


_local = threading.local()
_children: list[SolveProcess] = []  # every thread's, for close_children
_children_lock = threading.Lock()


def run_in_child(task: Task, grace: float = GRACE_SECONDS,
                 warmup_limit: float = WARMUP_SECONDS) -> dict[str, Any]:
    """Run ``task`` in this thread's own child process (started on first use; also used on Dask workers)."""
    worker = getattr(_local, "worker", None)
    if worker is None:
        worker = _local.worker = SolveProcess()
        with _children_lock:
            _children.append(worker)
    worker.grace, worker.warmup_limit = grace, warmup_limit
    return worker.run(task)


def close_children() -> int:
    """End the child processes :func:`run_in_child` started in this process (a Dask worker's, when a sweep ends) and
    remove their scratch directories; a thread that runs a task again starts a new one.  Returns how many ran."""
    with _children_lock:
        running = [worker for worker in _children if worker._process is not None]
        for worker in running:
            worker.close()
    return len(running)


if __name__ == "__main__":
    main()
