"""Run files: JSON Lines of an ``environment`` record each time a sweep starts or resumes (what the results depend
on: versions, git commit, machine, load, settings), one ``result`` record per (instance, solver) pair, appended and
flushed as each solve finishes, and an ``end`` record when that part of the sweep ends (the load then, the counts,
whether it was interrupted).  Nothing written is ever rewritten: a sweep killed midway leaves a valid file without its
end record, and ``--resume`` continues it.  Each record is one complete line or nothing; one command at a time writes
a run file (an exclusive lock on it).
"""

from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from compbench.external import PREFIX, resolve_program
from compbench.files import text_lines
from compbench.problem import is_finite_number
from compbench.records import is_error_value, number_field
from compbench.registry import list_solvers, solver_distributions

from .worker import THREAD_DEFAULTS, Task


PACKAGES = ("compbench", "numpy", "numba", "llvmlite", "highspy", "pulp", "ortools", "gurobipy", "cplex", "xpress",
            "coptpy", "scipy", "psutil", "matplotlib", "tqdm", "dask", "distributed")


# What a run's results depend on: a resume that differs in one of them is refused unless forced.
RUN_SETTINGS = ("solvers", "sizes", "kinds", "time_limit", "memory_limit", "repeats", "compbench")


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
                    "NUMEXPR_NUM_THREADS")


RUN_FORMAT = "compbench-run/1"  # the environment record's "format": what this compbench writes and reads


class RunFileError(Exception):
    """A run file that cannot be written, is in use by another command, or does not match a resume: one line naming
    the file."""


SOURCE_PATHS = ("compbench", "solvers", "pyproject.toml")  # what a run executes of the checkout


def source_revision() -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the git checkout compbench runs from (its package directory sits at the top of
    one), or None: installed from a wheel, git absent, or git failing (quietly, within seconds).  ``dirty``: the
    source that runs (:data:`SOURCE_PATHS`) has uncommitted changes; a report written into the checkout
    (``demo --out reports``) does not make its own run dirty."""
    import compbench

    root = Path(compbench.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5)
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                 *SOURCE_PATHS], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if commit.returncode != 0:
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip()) if status.returncode == 0 else None}


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where the system has none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def program_hashes(solvers: Iterable[str]) -> dict[str, dict[str, str | None]]:
    """``{"exec:PATH": {"path", "sha256"}}`` of the ``exec:`` solvers among ``solvers``: the file each name resolves
    to and its SHA-256 (both None for a name that names no executable file)."""
    out: dict[str, dict[str, str | None]] = {}
    for name in solvers:
        if not name.startswith(PREFIX):
            continue
        try:
            program = resolve_program(name[len(PREFIX):])
            out[name] = {"path": str(program), "sha256": hashlib.sha256(program.read_bytes()).hexdigest()}
        except (KeyError, OSError):
            out[name] = {"path": None, "sha256": None}
    return out


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def environment(settings: dict[str, Any]) -> dict[str, Any]:
    """The environment record: compbench's version and git commit, package versions (every backend), CPU, cores,
    memory, load average, thread settings, solvers with their distributions, the SHA-256 of every ``exec:`` program
    in ``settings["solvers"]``, the command (shell-quoted) and the settings."""
    from compbench.limits import physical_memory

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    return {
        "type": "environment",
        "format": RUN_FORMAT,
        "started": _now(),
        "command": "compbench " + shlex.join(sys.argv[1:]) if Path(sys.argv[0]).name in ("compbench", "__main__.py")
        else None,
        "compbench": versions["compbench"],
        "git": source_revision(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "memory_mb": physical_memory() >> 20,
        "load_average": load_average(),
        "threads": {name: os.environ.get(name, THREAD_DEFAULTS.get(name)) for name in THREAD_VARIABLES},
        "packages": versions,
        "solvers": {info["name"]: info for info in list_solvers()},
        "solver_distributions": solver_distributions(),
        "programs": program_hashes(settings.get("solvers") or []),
        "settings": settings,
    }


def end_record(counts: dict[str, int], interrupted: bool) -> dict[str, Any]:
    """The record that closes one part of a sweep: when, the load average then, what it recorded."""
    return {"type": "end", "ended": _now(), "load_average": load_average(), "interrupted": interrupted,
            "counts": {k: v for k, v in sorted(counts.items()) if v}}


def finished(records: list[dict[str, Any]]) -> bool:
    """Whether a run file's records end with the end record of a part that ran to its end (not interrupted): a
    resume with nothing left to solve then appends nothing.

    >>> finished([{"type": "result"}, {"type": "end", "interrupted": False}]), finished([{"type": "result"}])
    (True, False)
    """
    return bool(records) and records[-1].get("type") == "end" and records[-1].get("interrupted") is False


def run_settings(tasks: list[Task]) -> dict[str, Any]:
    """What the results of these tasks depend on (see RUN_SETTINGS): solvers, sizes, kinds, limits, version."""
    def distinct(key: Any) -> list:
        return list(dict.fromkeys(key(t) for t in tasks))

    limits = {name: distinct(lambda t: getattr(t, name)) for name in ("time_limit", "memory_limit")}
    return {"solvers": distinct(lambda t: t.solver), "sizes": sorted(distinct(lambda t: t.header["n"])),
            "kinds": sorted(distinct(lambda t: t.header["kind"])),
            "repeats": 1 + max((t.header.get("repeat", 0) for t in tasks), default=0),
            **{name: values[0] if len(values) == 1 else values for name, values in limits.items()}}


def resume_mismatch(path: Path, existing: list[dict], settings: dict[str, Any]) -> str | None:
    """Why a resume with ``settings`` would mix different runs in ``path`` (the fields of RUN_SETTINGS that differ
    from its latest environment record; fields an older file lacks are not compared), or None."""
    headers = [r for r in existing if r.get("type") == "environment" and isinstance(r.get("settings"), dict)]
    if not headers:
        return None
    recorded = {**headers[-1]["settings"], "compbench": headers[-1].get("compbench")
                or (headers[-1].get("packages") or {}).get("compbench")}
    current = {**settings, "compbench": metadata.version("compbench")}

    def shown(value: Any) -> str:
        return ",".join(map(str, value)) if isinstance(value, list) else str(value)

    differ = [f"{name} {shown(recorded[name])} there, {shown(current.get(name))} here" for name in RUN_SETTINGS
              if recorded.get(name) is not None and recorded[name] != current.get(name)]
    if "check" in recorded and "check" not in current:  # a check's run file: its answers are no sweep's
        differ.insert(0, f"it is the run file of a check of {shown(recorded['check'])}")
    if not differ:
        return None
    return (f"{path}: this command differs from the run it resumes ({'; '.join(differ)}); pass --force to mix them "
            "in one run file, or choose another --out")


def read_records(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every complete record of a run file (a line cut short by a kill is ignored)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return records_in(text)


def records_in(text: str) -> list[dict[str, Any]]:
    """The complete records of a run file's text."""
    return [record for line in text_lines(text) if (record := parsed_record(line)) is not None]


def parsed_record(line: str | bytes) -> dict[str, Any] | None:
    """The record a run file's line holds, or None (not JSON: e.g. cut short by a kill; not a record)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) and "type" in record else None


RECORD_TYPES = ("environment", "reference", "result", "verdict", "end")
REFERENCE_FIELDS = ("status", "objective", "source", "solver", "objective_error")  # what a result carries of its own


def not_a_run_file(data: bytes) -> str | None:
    """Why ``data`` is not the contents of a run file (every complete line a JSON record of RECORD_TYPES, the first an
    environment record of a known format; a last line without its newline is a record cut by a kill), or None."""
    lines = data.split(b"\n")
    complete = lines[:-1] if lines[-1] else lines[:-1]
    for number, line in enumerate(complete, 1):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return f"line {number} is not JSON"
        if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
            return f"line {number} is not a run record"
        if number == 1 and record["type"] != "environment":
            return "its first record is not an environment record"
        if record["type"] == "environment" and record.get("format", RUN_FORMAT) != RUN_FORMAT:
            return f"format {record.get('format')!r}, this compbench reads {RUN_FORMAT!r}"
    if not complete:
        return "no complete record"
    return None


RESULT_STATUSES = ("optimal", "feasible", "infeasible", "timeout", "unsupported", "error", "skipped")
MAX_RECORD_SECONDS = 1e9  # about 32 years: a time or limit beyond it is damage (the CLI's limits stop at 1e6 s)


def malformed_result(record: dict[str, Any]) -> str | None:
    """What a result record lacks that the statistics read (field and why), or None: its instance, solver, a known
    status, a size n >= 0, its times (in 0..1e9 s; an answer other than an error has ``seconds.total`` or
    ``.wall``), a number or nothing for objective and bound, a tree of integers, a string kind and hash, memory in
    MiB, and a positive time limit or none.

    >>> print(malformed_result({"instance": "a", "solver": "s", "n": 3, "status": "optimal", "seconds": {"total": -1}}))
    seconds.total: expected a number of seconds in 0..1e+09, got -1
    >>> print(malformed_result({"instance": "a", "solver": "s", "n": 3, "status": "optimal", "seconds": {}}))
    seconds.total: missing (a solve that answered records its time)
    """
    def shown(why: str) -> str:
        return why[:200]

    for key, kind in (("instance", str), ("solver", str), ("status", str), ("n", int)):
        if not isinstance(record.get(key), kind) or isinstance(record.get(key), bool):
            return shown(f"{key}: expected {'an integer' if kind is int else 'a string'}, got {record.get(key)!r}")
    if record["status"] not in RESULT_STATUSES:
        return shown(f"status: expected one of {', '.join(RESULT_STATUSES)}, got {record['status']!r}")
    if record["n"] < 0:
        return f"n: expected a size >= 0, got {record['n']}"
    seconds = record.get("seconds", {})
    if not isinstance(seconds, dict):
        return shown(f"seconds: expected an object, got {seconds!r}")
    for key, value in seconds.items():
        if not is_finite_number(value) or not 0 <= value <= MAX_RECORD_SECONDS:
            return shown(f"seconds.{key}: expected a number of seconds in 0..{MAX_RECORD_SECONDS:g}, got {value!r}")
    for key, kind in (("kind", str), ("hash", str), ("implementation", str), ("m", int), ("repeat", int)):
        value = record.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)
                                  or kind is int and value < 0):
            return shown(f"{key}: expected {'an integer >= 0' if kind is int else 'a string'}, got {value!r}")
    for key in ("peak_memory_mb", "memory_before_mb"):
        value = record.get(key)
        if value is not None and not (is_finite_number(value) and value >= 0):
            return shown(f"{key}: expected a number of MiB >= 0, got {value!r}")
    if record["status"] not in ("skipped", "error") and "total" not in seconds and "wall" not in seconds:
        return "seconds.total: missing (a solve that answered records its time)"
    for key in ("objective", "bound"):  # NaN is a number here: the judgement calls the answer invalid
        try:
            number_field(record, key)
        except ValueError as exc:
            return shown(str(exc))
    for key in ("kept", "heads"):  # a tree a solver wrote is judged (tokens beyond n: invalid), but only integers
        value = record.get(key)
        if value is not None and (not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value)):
            return shown(f"{key}: expected a list of integers, got {value!r}")
    kept = record.get("kept")
    if kept is not None and (any(k < 1 for k in kept) or any(a >= b for a, b in zip(kept, kept[1:]))):
        return shown(f"kept: expected increasing token positions >= 1, got {kept!r}")
    if kept is not None and len(kept) != len(record.get("heads") or []):
        return shown(f"heads: expected one head per kept token ({len(kept)}), got {record.get('heads')!r}")
    if not isinstance(record.get("validity", "ok"), str):
        return shown(f"validity: expected a string ('ok' or why not), got {record['validity']!r}")
    if not is_error_value(record.get("objective_error", 0.0)):
        return shown(f"objective_error: expected a finite number >= 0, got {record['objective_error']!r}")
    limit = record.get("time_limit")
    if limit is not None and not (is_finite_number(limit) and 0 < limit <= MAX_RECORD_SECONDS):
        return shown(f"time_limit: expected a number of seconds in (0, {MAX_RECORD_SECONDS:g}], or null, got "
                     f"{limit!r}")
    return None


ENVIRONMENT_OBJECTS = ("settings", "packages", "threads", "solvers", "solver_distributions", "programs")
ENVIRONMENT_TEXTS = ("command", "compbench", "started", "python", "platform", "cpu")  # each a string or none
ENVIRONMENT_COUNTS = ("cpu_count", "cpus_usable", "memory_mb")  # each a number >= 0 or none
# the fields of each entry of an object the report reads, each a string or none
ENVIRONMENT_ENTRIES = {"solver_distributions": ("distribution", "version"), "programs": ("path", "sha256")}


def malformed_environment(record: dict[str, Any]) -> str | None:
    """What an environment record holds that the report cannot read (field and why), or None: its objects
    (settings, packages, threads, solvers and their distributions and programs, each entry an object where the
    report reads one) and its load average (numbers).

    >>> print(malformed_environment({"type": "environment", "settings": "x"}))
    settings: expected an object, got 'x'
    """
    for key in ENVIRONMENT_OBJECTS:
        value = record.get(key)
        if value is not None and not isinstance(value, dict):
            return f"{key}: expected an object, got {value!r}"[:200]
        for name, entry in (value or {}).items() if key in ("solvers", "solver_distributions", "programs") else ():
            if not isinstance(entry, dict):
                return f"{key}.{name}: expected an object, got {entry!r}"[:200]
            for field in ENVIRONMENT_ENTRIES.get(key, ()):
                if not isinstance(entry.get(field), (str, type(None))) or field not in entry:
                    return f"{key}.{name}.{field}: expected a string or null, got {entry.get(field)!r}"[:200]
    for key in ENVIRONMENT_TEXTS:
        if not isinstance(record.get(key), (str, type(None))):
            return f"{key}: expected a string, got {record[key]!r}"[:200]
    for key in ENVIRONMENT_COUNTS:
        if record.get(key) is not None and not (is_finite_number(record[key]) and record[key] >= 0):
            return f"{key}: expected a number >= 0, got {record[key]!r}"[:200]
    git = record.get("git")
    if git is not None and not (isinstance(git, dict) and isinstance(git.get("commit"), str)
                                and git.get("dirty") in (True, False, None)):
        return f"git: expected {{commit, dirty}} or null, got {git!r}"[:200]
    load = record.get("load_average")
    if load is not None and not (isinstance(load, list) and all(map(is_finite_number, load))):
        return f"load_average: expected a list of numbers, got {load!r}"[:200]
    return None


def malformed_reference(record: dict[str, Any]) -> str | None:
    """What a reference record lacks that the judgement reads (field and why), or None: its instance, a proven
    status, a finite objective when optimal, and an ``objective_error`` that is a finite number >= 0 or none.

    >>> print(malformed_reference({"instance": "a", "status": "optimal", "objective": "inf"}))
    objective: expected a finite number with status optimal, got 'inf'
    """
    if not isinstance(record.get("instance"), str):
        return f"instance: expected a string, got {record.get('instance')!r}"[:200]
    for key in ("solver", "source"):
        if not isinstance(record.get(key), (str, type(None))):
            return f"{key}: expected a string, got {record[key]!r}"[:200]
    if record.get("status") not in ("optimal", "infeasible"):
        return f"status: expected optimal or infeasible, got {record.get('status')!r}"[:200]
    try:
        objective = number_field(record, "objective")
    except ValueError as exc:
        return str(exc)
    if record["status"] == "optimal" and (objective is None or not math.isfinite(objective)):
        return f"objective: expected a finite number with status optimal, got {record.get('objective')!r}"[:200]
    if not is_error_value(record.get("objective_error", 0.0)):
        return f"objective_error: expected a finite number >= 0, got {record['objective_error']!r}"[:200]
    return None


def checked_results(path: str | os.PathLike, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The result records among a run file's ``records``, each as the statistics read it, and its reference records
    well formed too (:func:`malformed_result`, :func:`malformed_reference`: :class:`RunFileError` names the file,
    the record and the field)."""
    for record in records:
        check = {"result": malformed_result, "reference": malformed_reference,
                 "environment": malformed_environment}.get(record["type"])
        bad = check(record) if check else None
        if bad:
            of = f" of {str(record.get('instance'))[:60]!r}" if record["type"] != "environment" else ""
            raise RunFileError(f"{path}: {record['type']} record{of}: {bad}")
    return [r for r in records if r["type"] == "result"]


def check_run_file(path: str | os.PathLike) -> tuple[list[dict[str, Any]], str | None]:
    """The records of the run file ``path`` (read once), and a note (else None) when its last line is cut short, a
    record a kill left half written; :class:`RunFileError` unless it is a run file (of bench, demo or check) with
    at least one result, every one well formed."""
    path = Path(path)
    if path.is_dir():
        raise RunFileError(f"{path}: is a directory, expected a run file")
    if path.exists() and not path.is_file():
        raise RunFileError(f"{path}: not a regular file (a pipe or a device), expected a run file")
    if not path.is_file():
        raise RunFileError(f"no such run file: {path}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RunFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    why = not_a_run_file(data)
    if why:
        raise RunFileError(f"{path}: not a run file ({why}; run files come from bench, demo or check --out)")
    try:
        records = records_in(data.decode("utf-8"))
    except UnicodeDecodeError as exc:  # JSON in another encoding (UTF-16): the readers take UTF-8
        raise RunFileError(f"{path}: not a run file (not UTF-8: {exc})") from None
    if not checked_results(path, records):
        raise RunFileError(f"{path}: an empty run (no results recorded yet)")
    last = data.rpartition(b"\n")[2]
    if last and parsed_record(last) is None:
        return records, f"{path}: its last line is cut short (a run killed while writing it); that record is left out"
    return records, None


def settings_mismatch(data: bytes, settings: dict[str, Any]) -> str | None:
    """Which of ``settings`` the latest environment record of a run file's ``data`` holds otherwise, or None."""
    latest: dict[str, Any] = {}
    for line in data.split(b"\n"):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and record.get("type") == "environment":
            latest = record.get("settings") or {}
    differ = [f"{k} {latest.get(k)!r} there, {v!r} here" for k, v in settings.items() if latest.get(k) != v]
    return "; ".join(differ) or None


class RecordWriter:
    """Appends records to a JSONL file under an exclusive lock (one writer per run file), each as one complete line
    or not at all: the line is built first, written (a short write's rest again, until the system says what stopped
    it) and synced; on failure (a full disk, a file size limit) the file is cut back to its previous size and
    :class:`RunFileError` names it and why.  A partial last line left by a kill is
    dropped first; with ``fresh``, a file that already holds records is refused instead."""

    def __init__(self, path: str | os.PathLike, fresh: bool = False, same_as: dict[str, Any] | None = None):
        """``same_as``: settings the file's latest environment record must hold (a file of another command or other
        settings is refused, byte for byte as it was)."""
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():  # a FIFO: open() waited for a reader, forever
            raise RunFileError(f"{self.path}: not a regular file (a pipe or a device), expected a run file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunFileError(f"{self.path}: cannot write the run file ({exc.strerror or exc})") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            raise RunFileError(f"{self.path}: another compbench command is writing this run file (wait for it to "
                               "finish, or choose another --out)") from None
        try:
            data = self.path.read_bytes()
            why = not_a_run_file(data) if data else None
            if why:
                raise RunFileError(f"{self.path}: not a run file ({why}); --out only appends to a run file of the "
                                   "same command and settings: choose another --out")
            if fresh and data:
                raise RunFileError(f"{self.path} exists (use --resume to continue it, or choose another --out)")
            differ = settings_mismatch(data, same_as) if data and same_as else None
            if differ:
                raise RunFileError(f"{self.path}: a run of other settings ({differ}); --out only appends to a run "
                                   "file of the same command and settings: choose another --out")
            if data and not data.endswith(b"\n"):
                os.ftruncate(self._fd, data.rfind(b"\n") + 1)
        except OSError as exc:
            self.close()
            raise RunFileError(f"{self.path}: cannot write the run file ({exc.strerror or exc})") from None
        except RunFileError:
            self.close()
            raise

    def write(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, allow_nan=False) + "\n").encode()
        status = os.fstat(self._fd)
        size = status.st_size
        if status.st_nlink == 0:  # deleted (or its folder) under the run: what follows would be lost
            raise RunFileError(f"{self.path}: the run file was deleted during the run; the records written before "
                               "are lost with it")
        try:
            rest = memoryview(line)
            while rest:  # a short write: the rest raises what stopped it (ENOSPC, EFBIG at a file size limit)
                rest = rest[os.write(self._fd, rest):]
            os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, size)
            except OSError:
                pass
            raise RunFileError(f"{self.path}: cannot write a record ({exc.strerror or exc}); the records before it "
                               "are kept") from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # releases the lock
            self._fd = -1


def result_record(task: Task, result: dict[str, Any]) -> dict[str, Any]:
    record = {"type": "result", **task.header, "time_limit": task.time_limit}
    for key in ("status", "objective", "bound", "seconds", "peak_memory_mb", "peak_memory_scope", "memory_before_mb",
                "validity", "objective_error", "implementation",
                "stats", "message", "kept", "heads", "killed"):
        if key in result and result[key] not in (None, "", {}):
            record[key] = result[key]
    record.setdefault("objective", None)
    record.setdefault("bound", None)
    return record


def load_runs(paths: Iterable[str | os.PathLike]) -> tuple[list[dict], list[dict]]:
    """(results, environments) of some run files; a later record of the same (instance, solver, repeat) wins, and
    each result carries its file's ``reference`` for its instance (see :mod:`.references`)."""
    results: dict[tuple[str, str, int], dict] = {}
    environments = []
    for path in paths:
        records = read_records(path)
        references = {r.get("instance"): {k: r.get(k) for k in REFERENCE_FIELDS}
                      for r in records if r.get("type") == "reference"}
        for record in records:
            if record["type"] == "environment":
                environments.append(record)
            elif record["type"] == "result":
                if record.get("instance") in references:
                    record = {**record, "reference": references[record["instance"]]}
                results[record["instance"], record["solver"], record.get("repeat", 0)] = record
    return list(results.values()), environments


def recorded_pairs(records: Iterable[dict[str, Any]]) -> set[tuple[str, str, int]]:
    """The (instance, solver, repeat) of every result recorded."""
    return {(r["instance"], r["solver"], r.get("repeat", 0)) for r in records if r.get("type") == "result"}
