"""Executables as solvers: ``exec:PATH`` runs the program PATH once per instance (the protocol of docs/plugins.md).

The program gets the path of a JSON instance file (:func:`compbench.write_instance`) as its one argument and the
time limit in seconds in the environment variable ``COMPBENCH_TIME_LIMIT`` (absent when there is none); it prints
one JSON object on stdout in the format of ``compbench solve --json``: ``status``, ``objective``, ``kept``,
``heads``, optionally ``bound``, ``message`` and ``stats`` (read by :func:`compbench.records.record_solution`).
Its exit status must be 0.  Anything else — a crash, a non-zero exit, output that is not such an object, an
overrun — is an ``error`` or ``timeout`` answer whose message names the program and ends with its stderr's tail.

The program is declared exact: its ``optimal`` claims are taken as proofs and checked against the other solvers
(``check``); every answer is validated like any solver's (``compbench.agreement.judge``).  A heuristic program
answers ``feasible``; one that does not handle a kind of problem (sibling scores, say) answers ``unsupported``.

Under the harness's worker (``bench``, ``check``, ``solve --time-limit``) the program runs in the worker's process
group, so the worker's kill and memory limit take it too; called directly it runs in its own process group, killed
with it :data:`GRACE_SECONDS` past the time limit.
"""

from __future__ import annotations

import errno
import json
import math
import os
import resource
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .io import bounded_int, unique_keys, write_instance
from .problem import Problem, Solution, Status
from .processes import kill_group, kill_process_tree
from .records import record_solution
from .solver import Capabilities, Option, Solver, SolverError

PREFIX = "exec:"
TIME_LIMIT_VARIABLE = "COMPBENCH_TIME_LIMIT"
WORKER_VARIABLE = "COMPBENCH_WORKER"  # the harness's worker sets it to its pid: programs then stay in its group
GRACE_SECONDS = 0.5  # past the time limit before the program is killed (less than the worker's, which then idles)
OUTPUT_LIMIT = 64 << 20  # bytes of stdout read at most: a program that prints more is killed there
STDERR_TAIL = 64 << 10  # bytes of stderr kept (its last ones)
STATUSES = tuple(status.value for status in Status)


def resolve_program(path: str) -> Path:
    """``path`` made absolute against the current directory; a missing or non-executable file is a KeyError (as
    an unknown solver name is for :func:`compbench.get_solver`)."""
    if not path:
        raise KeyError("exec: needs a program path (exec:PATH)")
    program = Path(path).absolute()
    if not program.is_file():
        what = "a directory" if program.is_dir() else "missing"
        raise KeyError(f"exec:{path}: no such program ({program} is {what})")
    if not os.access(program, os.X_OK):
        raise KeyError(f"exec:{path}: {program} is not executable (chmod +x it)")
    return program


@dataclass
class Run:
    """What one run of the program left: its exit code (None when it was killed at the limit), stdout, the tail of
    its stderr and its wall-clock seconds."""

    code: int | None
    stdout: bytes
    stderr_tail: str
    seconds: float
    overflowed: bool = False  # printed more than OUTPUT_LIMIT on stdout: killed there


class ExecSolver(Solver):
    """The program at ``path`` as a solver (see the module's docstring for the protocol).

    ``get_solver("exec:PATH")`` builds one; its name is ``exec:PATH`` as given.
    """

    description = "an external program (the exec protocol of docs/plugins.md)"
    exact = True  # its optimal claims are checked against the other solvers' answers, and validated anyway
    # Every length mode, both root modes and sibling scores reach the program (scores.sibling in its instance
    # file); one that does not handle them answers unsupported itself.  No all-lengths mode.
    supports = Capabilities(second_order=True)
    claims_per_answer = True  # a heuristic program answers feasible, one that lacks a kind of problem unsupported
    accepted_options: dict[str, Option] = {}

    def __init__(self, path: str, grace: float = GRACE_SECONDS):
        self.program = resolve_program(path)
        self.name = PREFIX + path
        self.grace = grace
        self.description = f"the program {self.program} (exec protocol)"

    def info(self) -> dict[str, Any]:
        return {**super().info(), "program": str(self.program)}

    def _solve(self, problem: Problem, *, time_limit: float | None, all_lengths: bool) -> Solution:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="compbench-exec-") as scratch:
            instance = Path(scratch) / "instance.json"
            write_instance(instance, problem)
            setup = time.perf_counter() - started
            run = self._run(instance, time_limit)
        if run.code is None and not run.overflowed:
            solution = Solution(Status.TIMEOUT, message=f"{self.name}: killed after {run.seconds:.1f} s (time limit "
                                                        f"{time_limit:g} s + {self.grace:g} s grace)"
                                                        + _stderr_note(run.stderr_tail))
        else:
            solution = read_answer(run, problem.n)
        solution.seconds = {"setup": setup, "solve": run.seconds}
        return solution

    def _run(self, instance: Path, time_limit: float | None) -> Run:
        """Run the program on ``instance``; kill it (its process group, or its descendants inside the worker's
        group) once it passes the time limit plus the grace period."""
        env = {key: value for key, value in os.environ.items() if key != TIME_LIMIT_VARIABLE}
        if time_limit is not None:
            env[TIME_LIMIT_VARIABLE] = repr(float(time_limit))
        own_group = os.environ.get(WORKER_VARIABLE) != str(os.getpid())
        started = time.perf_counter()
        try:
            process = subprocess.Popen([str(self.program), str(instance)], stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                       start_new_session=own_group)
        except OSError as exc:  # not a binary, no or a bad #! line
            raise SolverError(f"cannot be run ({exc.strerror or exc}){_interpreter_note(self.program, exc)}") from None
        stop = lambda: kill_process_tree(process.pid)  # noqa: E731  (its descendants, and its group if it leads one)
        out = Capture(process.stdout, OUTPUT_LIMIT + 1, stop)  # more than the limit: killed, nothing kept on disk
        err = Capture(process.stderr, STDERR_TAIL, None)
        code = None
        try:
            code = wait_for(process, None if time_limit is None else time_limit + self.grace)
        finally:  # an overrun, or an interrupt of the caller: the program does not outlive the call
            seconds = time.perf_counter() - started
            if code is None:
                stop()
                process.kill()
                process.wait()
            elif own_group:  # what it left running in its group
                kill_group(process.pid)
            stdout, stderr = out.join(), err.join()
        return Run(None if out.overflowed else code, stdout, _tail(stderr), seconds, out.overflowed)


class Capture:
    """Reads a pipe in a thread into memory: its first ``limit`` bytes, or with ``overflow`` None its last ones (the
    stderr tail); past the limit ``overflow()`` is called once (the program is killed).  Nothing goes to disk."""

    def __init__(self, pipe: IO[bytes], limit: int, overflow: Any):
        import threading

        self.pipe, self.limit, self.overflow = pipe, limit, overflow
        self.data, self.overflowed = bytearray(), False
        self.done = threading.Event()  # set by join once the program ended: read what the pipe holds, then stop
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        import selectors

        with self.pipe, selectors.DefaultSelector() as selector:
            selector.register(self.pipe, selectors.EVENT_READ)
            while True:
                ended = self.done.is_set()
                if not selector.select(0 if ended else 0.05):
                    if ended:  # every byte the program wrote was in the pipe when it ended: all read
                        return
                    continue
                chunk = os.read(self.pipe.fileno(), 1 << 16)
                if not chunk:
                    return
                self.data += chunk
                if len(self.data) <= self.limit:
                    continue
                if self.overflow is None:  # keep the tail
                    del self.data[:len(self.data) - self.limit]
                    continue
                del self.data[self.limit:]
                if not self.overflowed:
                    self.overflowed = True
                    self.overflow()

    def join(self) -> bytes:
        """What the program wrote, once it ended: the pipe read until it is empty, not until it closes (a child
        the program left running may hold it open: waiting for it cost a second a pipe, and the answer its time)."""
        self.done.set()
        self.thread.join()
        return bytes(self.data)


def wait_for(process: subprocess.Popen, timeout: float | None) -> int | None:
    """The exit status of ``process``, or None when it is still running after ``timeout`` seconds.

    It wakes the moment the process exits (a pidfd under select), so the measured time is the program's:
    ``Popen.wait(timeout)`` polls, sleeping up to 50 ms between looks, which put every timed run on steps of up to
    50 ms (a 60 ms program measured 63.5 or 113.5 ms)."""
    if timeout is None:
        return process.wait()
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: Popen's polling
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
    try:
        ready, _, _ = select.select([pidfd], [], [], max(0.0, timeout))
    finally:
        os.close(pidfd)
    return process.wait() if ready else None


def read_answer(run: Run, n: int) -> Solution:
    """The solution a finished run printed, for a problem of ``n`` tokens; a :class:`SolverError` saying what is
    wrong (with the stderr tail) when it crashed or printed no valid answer."""
    note = _stderr_note(run.stderr_tail)
    if run.overflowed or len(run.stdout) > OUTPUT_LIMIT:
        raise SolverError(f"printed more than {OUTPUT_LIMIT >> 20} MiB on stdout (killed there){note}")
    if run.code < 0:
        try:
            name = f" ({signal.Signals(-run.code).name})"
        except ValueError:  # a real-time signal
            name = ""
        raise SolverError(f"killed by signal {-run.code}{name}{_address_space_note()}{note}")
    if run.code > 0:
        raise SolverError(f"exited with status {run.code}{_address_space_note()}{note}")
    text = run.stdout.decode("utf-8", errors="replace").strip()
    if not text:
        raise SolverError(f"printed nothing on stdout{note}")
    try:
        answer = json.loads(text, parse_int=bounded_int, object_pairs_hook=unique_keys)  # as instance files are read
    except (ValueError, RecursionError) as exc:
        raise SolverError(f"stdout is not one JSON object ({exc}): {text[:120]!r}{note}") from None
    if not isinstance(answer, dict):
        raise SolverError(f"stdout is a JSON {type(answer).__name__}, not an object: {text[:120]!r}{note}")
    status = answer.get("status")
    if not isinstance(status, str) or status not in STATUSES:
        what = f"status {status!r} is not" if "status" in answer else "the answer has no status, expected"
        raise SolverError(f"{what} one of {', '.join(STATUSES)}{note}")
    for key in ("kept", "heads"):
        value = answer.get(key)
        if value is not None and not (isinstance(value, list) and all(type(v) is int for v in value)):
            raise SolverError(f"{key} must be a list of integers, got {value!r}"[:300] + note)
    if (answer.get("kept") is None) != (answer.get("heads") is None):
        raise SolverError(f"gives {'kept' if answer.get('heads') is None else 'heads'} without "
                          f"{'heads' if answer.get('heads') is None else 'kept'}{note}")
    kept = answer.get("kept") or []
    if any(a >= b for a, b in zip(kept, kept[1:])):
        raise SolverError(f"kept {kept!r} is not increasing"[:300] + note)
    heads = answer.get("heads") or []
    stray = [(k, h) for k, h in zip(kept, heads) if h != 0 and h not in kept]
    if stray:
        raise SolverError(f"the head {stray[0][1]} of kept token {stray[0][0]} is neither the root (0) nor a kept "
                          f"token{note}")
    bound = answer.get("bound")
    number = isinstance(bound, (int, float)) and not isinstance(bound, bool)
    if bound is not None and bound != "-inf" and not (number and (math.isfinite(bound) or bound == -math.inf)):
        raise SolverError(f"bound {bound!r} is not a finite number or -inf (null: no bound){note}")
    objective = answer.get("objective")
    if objective == "nan" or (isinstance(objective, float) and math.isnan(objective)):  # the NaN literal too
        raise SolverError(f"objective {objective!r} is not a number{note}")
    record = {key: answer.get(key) for key in ("status", "objective", "bound", "kept", "heads")}
    try:
        solution = record_solution(record, n)
    except (TypeError, ValueError, OverflowError) as exc:
        raise SolverError(f"{exc}{note}") from None
    if solution.has_solution and solution.objective is None:
        raise SolverError(f"gives a solution without its objective{note}")
    if answer.get("message") is not None:
        solution.message = str(answer["message"])[:1000]
    if isinstance(answer.get("stats"), dict):
        solution.stats = answer["stats"]
    return solution


def _tail(data: bytes, lines: int = 3, chars: int = 300) -> str:
    """The last non-empty lines of ``data`` (joined by " | "), at most ``chars`` characters."""
    text = data[-8192:].decode("utf-8", errors="replace")
    tail = " | ".join([line.strip() for line in text.splitlines() if line.strip()][-lines:])
    return tail[-chars:]


def _interpreter_note(program: Path, exc: OSError) -> str:
    """Why a program that exists could not be found: the interpreter its ``#!`` line names is missing."""
    try:
        with open(program, "rb") as f:
            first = f.read(256).split(b"\n", 1)[0]
    except OSError:
        return ""
    if exc.errno == errno.ENOENT and first.startswith(b"#!"):
        return f": its #! interpreter {first[2:].decode(errors='replace').strip()[:100]!r} was not found"
    return ""


def _stderr_note(tail: str) -> str:
    return f"; stderr: {tail}" if tail else "; no stderr"


def _address_space_note() -> str:
    """Where a crash may come from the address-space cap (the worker's --memory-limit), say so."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return "" if soft == resource.RLIM_INFINITY else f" (its address space is capped at {soft >> 20} MiB)"
