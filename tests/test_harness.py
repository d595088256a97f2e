"""The harness: agreement detection, hard timeouts, crashes, resume after a kill, Dask, plots and the report.

Misbehaving solvers are installed the way a third party would install them: a module plus a ``*.dist-info`` with
``entry_points.txt`` in a temporary site directory on ``sys.path`` and ``PYTHONPATH`` (so worker processes see them).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import compbench
from compbench.cli import main
from tests.test_run_files import one_error_line
from compbench.harness.plots import load_runs, solver_infos
from compbench.harness.report import CSV_COLUMNS, summary_tex
from compbench.harness.runfiles import read_records
from compbench.harness.stats import summarize
from compbench.harness.sweep import make_tasks, run_sweep, source_problems

PLUGIN = textwrap.dedent('''
    import os
    import signal
    import subprocess
    import sys
    import time

    import numpy as np

    import compbench
    from compbench import Capabilities, Solution, Solver, Status


    def chain(problem):
        """Keep the first lo tokens in a chain 0 -> 1 -> 2 -> ...: valid, rarely optimal."""
        lo, _ = problem.length_bounds()
        heads = np.full(problem.n + 1, -1)
        for k in range(1, lo + 1):
            heads[k] = k - 1
        return heads


    class Base(Solver):
        exact = True
        supports = Capabilities(lengths=frozenset({"exact"}), single_root=False)


    class WrongOptimum(Base):
        name = "wrong-optimum"
        description = "claims that a chain is optimal"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            heads = chain(problem)
            return Solution(Status.OPTIMAL, heads=heads, objective=compbench.objective(problem, heads))


    class WrongObjective(Base):
        name = "wrong-objective"
        description = "brute force's tree, objective reported 1 too high"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            solution = compbench.get_solver("brute-force").solve(problem)
            solution.objective += 1.0
            return solution


    class Sleeper(Base):
        name = "sleeper"
        description = "hangs (ignoring its time limit) from n = 5 on, with a child process of its own"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n >= 5:
                helper = subprocess.Popen(["sleep", "600"])
                if os.environ.get("SLEEPER_PIDS"):
                    with open(os.environ["SLEEPER_PIDS"], "a") as f:
                        f.write(f"{helper.pid}\\n")
                time.sleep(600)
            return compbench.get_solver("brute-force").solve(problem)


    class Holder(Base):
        name = "holder"
        description = ("from n = 5 on, hangs as a backend in C code does (signals held: no Python handler runs), "
                       "with a child process of its own")

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n >= 5:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
                helper = subprocess.Popen(["sleep", "600"])
                with open(os.environ["SLEEPER_PIDS"], "a") as f:
                    f.write(f"{os.getpid()} {helper.pid}\\n")
                time.sleep(600)
            return compbench.get_solver("brute-force").solve(problem)


    class Escaper(Base):
        name = "escaper"
        description = "hangs from n = 5 on, with a child process that left its process group (setsid)"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n >= 5:
                helper = subprocess.Popen(["sleep", "600"], start_new_session=True)
                with open(os.environ["SLEEPER_PIDS"], "a") as f:
                    f.write(f"{helper.pid}\\n")
                time.sleep(600)
            return compbench.get_solver("brute-force").solve(problem)


    class Crasher(Base):
        name = "crasher"
        description = "raises at n = 5, kills its own process at n = 6"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n == 5:
                raise RuntimeError("boom at n = 5")
            if problem.n == 6:
                os.kill(os.getpid(), signal.SIGKILL)
            return compbench.get_solver("brute-force").solve(problem)


    class Overrun(Base):
        name = "overrun"
        description = "answers right, 0.4 s after its time limit (in the grace before the kill)"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            time.sleep((time_limit or 0.0) + 0.4)
            return compbench.get_solver("brute-force").solve(problem)


    class TimeLiar(Base):
        name = "time-liar"
        description = "answers right after 0.3 s and reports a microsecond"

        def solve(self, problem, time_limit=None, *, all_lengths=False, **options):
            time.sleep(0.3)
            solution = compbench.get_solver("brute-force").solve(problem)
            solution.seconds = {"setup": 0.0, "solve": 1e-6, "total": 1e-6}
            return solution


    class FreeCrasher(Base):
        name = "free-crasher"
        description = "takes free lengths only, and raises from n = 5 on"
        supports = Capabilities(lengths=frozenset({"free"}))

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n >= 5:
                raise RuntimeError("boom")
            return compbench.get_solver("brute-force").solve(problem)


    class WarmupCrasher(Base):
        name = "warmup-crasher"
        description = "exits at once on the warm-up's tiny problem (n = 4), after a line on stderr"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n <= 4:
                import sys
                print("warm-up crasher going down", file=sys.stderr, flush=True)
                os._exit(3)
            return compbench.get_solver("brute-force").solve(problem)


    class WarmupHanger(Base):
        name = "warmup-hanger"
        description = "hangs on the warm-up's tiny problem (n = 4), solves larger ones"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n <= 4:
                time.sleep(600)
            return compbench.get_solver("brute-force").solve(problem)


    def invalid_tree(problem):
        heads = chain(problem)
        heads[1], heads[2] = 2, 1  # a cycle
        return Solution(Status.FEASIBLE, heads=heads, objective=0.0)


    def writes_input(problem):
        """A chain whose arcs it scores 100 in the problem it was given (as a backend writing through a pointer)."""
        heads = chain(problem)
        problem.arc_scores.setflags(write=True)
        for k in range(1, problem.n + 1):
            if heads[k] >= 0:
                problem.arc_scores[heads[k], k] = 100.0
        return Solution(Status.FEASIBLE, heads=heads, objective=compbench.objective(problem, heads))


    def fractional_heads(problem):
        heads = chain(problem).astype(float)
        heads[2] = 0.6
        return Solution(Status.FEASIBLE, heads=heads, objective=0.0)


    def prints_to_stdout(problem):
        print("optimal 0 1 2 {")
        os.write(1, b"not json either\\n")
        return compbench.get_solver("brute-force").solve(problem)


    def heads_long(problem):
        heads = np.full(problem.n + 2, -1)  # one position too many, and a token n + 1 kept
        heads[problem.n + 1] = 0
        return Solution(Status.FEASIBLE, heads=heads, objective=0.0)


    def surrogate_message(problem):
        solution = compbench.get_solver("brute-force").solve(problem)
        solution.message = "lone \\ud800 surrogate"
        return solution


    FAULTS = {
        "invalid-tree": invalid_tree,
        "heads-long": heads_long,
        "surrogate-message": surrogate_message,
        "writes-input": writes_input,
        "fractional-heads": fractional_heads,
        "not-a-solution": lambda problem: {"status": "optimal"},
        "segfaults": lambda problem: os.kill(os.getpid(), signal.SIGSEGV),
        "exits": lambda problem: sys.exit(4),
        "hard-exits": lambda problem: os._exit(5),
        "interrupts": lambda problem: (_ for _ in ()).throw(KeyboardInterrupt()),
        "allocates": lambda problem: np.ones(1 << 30),  # 8 GiB
        "prints-to-stdout": prints_to_stdout,
    }


    class Faulty(Base):
        """Solves the warm-up's tiny problem (n = 4) right, then shows its fault (its name) from n = 5 on."""

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            if problem.n >= 5:
                return FAULTS[self.name](problem)
            return compbench.get_solver("brute-force").solve(problem)


    class CurveWrong(Solver):
        name = "curve-wrong"
        description = "brute force's curve, every point's objective reported 5 too high"
        exact = True
        supports = Capabilities(all_lengths=True)

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            solution = compbench.get_solver("brute-force").solve(problem, all_lengths=all_lengths)
            for at_m in solution.by_length or ():
                if at_m.objective is not None:
                    at_m.objective += 5.0
            return solution


    class CurveJunk(CurveWrong):
        name = "curve-junk"
        description = "brute force's answer with a curve of None"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            solution = compbench.get_solver("brute-force").solve(problem)
            solution.by_length = [None] * (problem.n + 1)
            return solution


    class ClaimsInfeasible(Base):
        name = "claims-infeasible"
        description = "says every problem is infeasible"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            return Solution(Status.INFEASIBLE)


    for fault in FAULTS:
        globals()[fault.replace("-", "_")] = type(fault, (Faulty,), {"name": fault, "description": fault})


    class Slow(Base):
        name = "slow"
        description = "brute force after a 0.25 s nap"

        def _solve(self, problem, *, time_limit, all_lengths, **options):
            time.sleep(0.25)
            solution = compbench.get_solver("brute-force").solve(problem)
            solution.stats = {"final_lambda": np.float64("inf"), "trace": np.array([1.5, np.nan])}
            return solution
''')

PLUGIN_SOLVERS = {"wrong-optimum": "WrongOptimum", "wrong-objective": "WrongObjective", "sleeper": "Sleeper",
                  "escaper": "Escaper", "holder": "Holder",
                  "crasher": "Crasher", "free-crasher": "FreeCrasher", "overrun": "Overrun", "time-liar": "TimeLiar", "slow": "Slow", "warmup-crasher": "WarmupCrasher",
                  "warmup-hanger": "WarmupHanger", "claims-infeasible": "ClaimsInfeasible",
                  "curve-wrong": "CurveWrong", "curve-junk": "CurveJunk",
                  **{fault: fault.replace("-", "_") for fault in (
                      "invalid-tree", "writes-input", "heads-long", "surrogate-message", "fractional-heads",
                      "not-a-solution", "segfaults", "exits", "hard-exits", "interrupts", "allocates",
                      "prints-to-stdout")}}


@pytest.fixture
def plugins(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path_factory.mktemp("site")
    (site / "misbehaving_solvers.py").write_text(PLUGIN)
    info = site / "misbehaving_solvers-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: misbehaving-solvers\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[compbench.solvers]\n" + "".join(
        f"{name} = misbehaving_solvers:{cls}\n" for name, cls in PLUGIN_SOLVERS.items()))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path_factory.mktemp("mpl")))
    return site


def running(pid: int) -> bool:
    """Is the process alive (not gone, not a zombie waiting to be reaped)?"""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def results(path: Path) -> list[dict]:
    return [r for r in read_records(path) if r["type"] == "result"]


def test_check_finds_wrong_solvers_and_writes_repro_files(plugins: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    repro = tmp_path / "repro"
    status = main(["check", "gen:gaussian:5-6:2", "--solvers", "brute-force,wrong-optimum,wrong-objective",
                   "--repro-dir", str(repro), "--time-limit", "30"])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL wrong-optimum" in out and "FAIL wrong-objective" in out and "FAIL brute-force" not in out
    files = sorted(repro.glob("*.json"))
    assert {f.name.split("--")[1] for f in files} == {"wrong-optimum.json", "wrong-objective.json"}
    for file in files:
        problem = compbench.read_instance(file)  # a standalone instance file
        answers = problem.extra["check"]
        assert answers["reference"]["source"] == "resource-dp in this run" and answers["reference"]["proven"]
        assert answers["verdict"].startswith("disagrees" if "wrong-optimum" in file.name else "invalid")
        assert answers["answer"]["objective"] != answers["reference"]["objective"]
    # every wrong-objective answer is caught (4 instances); and brute force alone passes
    assert len([f for f in files if "wrong-objective" in f.name]) == 4
    assert main(["check", "gen:gaussian:5-6:2", "--solvers", "brute-force", "--repro-dir", str(repro)]) == 0


def test_a_solver_writing_into_its_input_is_invalid_and_refutes_nothing(plugins: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    """Its chain, valued on the scores it raised, beat the true optimum: the right solvers were blamed."""
    status = main(["check", "gen:gaussian:5-6:2", "--solvers", "brute-force,signature-dp,writes-input",
                   "--time-limit", "30", "--repro-dir", str(tmp_path / "r")])
    out = capsys.readouterr().out
    assert status == 1 and "FAIL brute-force" not in out and "FAIL signature-dp" not in out
    assert out.count("FAIL writes-input") == 4 and "wrote into its input (arc_scores changed" in out


def test_solve_judges_every_answer_it_prints(plugins: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Each point of a curve is judged, a curve of non-answers is an error answer, a tree that cannot be read is an
    error answer, a message that cannot be printed is printed readable: no traceback, no exit 0 for a wrong answer."""
    instance = tmp_path / "i6.json"
    compbench.write_instance(instance, compbench.generate("gaussian", n=6, seed=0, length=3))
    assert main(["solve", str(instance), "--solver", "curve-wrong", "--all-lengths"]) == 1
    err = capsys.readouterr().err
    assert err.count("compbench: curve-wrong on ") == 7 and ", length 0: invalid: reported objective" in err
    assert main(["solve", str(instance), "--solver", "curve-junk", "--all-lengths"]) == 1
    assert "curve-junk returned a curve (by_length) of 7 entries, not 7 compbench.Solution" in capsys.readouterr().out
    assert main(["solve", str(instance), "--solver", "heads-long"]) == 1
    assert "heads-long: its answer cannot be read" in capsys.readouterr().out
    assert main(["solve", str(instance), "--solver", "surrogate-message"]) == 0
    assert "lone ? surrogate" in capsys.readouterr().out


def test_a_wrong_in_run_reference_is_refuted_and_its_solver_blamed(plugins: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture) -> None:
    """The reference solver itself wrong (here wrong-optimum computes the references: a chain claimed optimal):
    brute force's valid trees beat it, so the references are set aside and wrong-optimum is the one that fails
    (brute force was blamed and disqualified before)."""
    from compbench.harness import references

    monkeypatch.setattr(references, "IN_RUN_METHOD", "wrong-optimum")
    status = main(["check", "gen:gaussian:5-6:2", "--solvers", "brute-force,wrong-optimum,signature-dp",
                   "--repro-dir", str(tmp_path / "repro"), "--time-limit", "30"])
    out = capsys.readouterr().out
    assert status == 1 and "FAIL wrong-optimum" in out and "FAIL brute-force" not in out
    assert "FAIL signature-dp" not in out and "it refutes" in out
    assert "the proven reference set aside" in out


def test_hard_timeout_crash_and_size_skipping(plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run.jsonl"
    monkeypatch.setenv("SLEEPER_PIDS", str(tmp_path / "pids"))
    tasks = make_tasks(source_problems("gen:gaussian:4-6:1"), ["brute-force", "sleeper", "crasher"], time_limit=1.0)
    started = time.monotonic()
    counts = run_sweep(tasks, run, jobs=2, grace=0.5)
    elapsed = time.monotonic() - started
    assert elapsed < 30
    got = {(r["solver"], r["n"]): r for r in results(run)}
    assert len(got) == 9 and counts["optimal"] == 5
    assert all(got["brute-force", n]["status"] == "optimal" for n in (4, 5, 6))
    assert got["sleeper", 4]["status"] == "optimal"
    timeout = got["sleeper", 5]
    assert timeout["status"] == "timeout" and timeout["killed"] and "killed after" in timeout["message"]
    assert timeout["seconds"]["wall"] >= 1.5  # when the kill came (limit + grace), not the limit
    assert got["sleeper", 6]["status"] == "skipped"  # it timed out on every instance of n = 5
    (helper,) = [int(pid) for pid in (tmp_path / "pids").read_text().split()]
    assert not running(helper)  # the hung solver's own child process was killed with it
    assert got["crasher", 5]["status"] == "error" and "boom at n = 5" in got["crasher", 5]["message"]
    assert got["crasher", 6]["status"] == "error" and "signal 9" in got["crasher", 6]["message"]
    for r in results(run):
        assert {"instance", "n", "m", "kind", "solver", "status", "objective", "bound"} <= set(r)
        if r["status"] == "optimal":
            assert r["seconds"]["solve"] >= 0 and r["peak_memory_mb"] > 0 and r["validity"] == "ok"
    env = read_records(run)[0]
    assert env["type"] == "environment" and env["packages"]["numpy"] and "threads" in env and env["cpu_count"]


def test_resume_after_killing_a_sweep(plugins: Path, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    command = [sys.executable, "-m", "compbench", "bench", "--sizes", "3:8", "--per-size", "2", "--solvers",
               "brute-force,slow", "--time-limit", "20", "--out", str(run)]
    sweep = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(results(run)) < 4 and time.monotonic() < deadline and sweep.poll() is None:
        time.sleep(0.1)
    os.killpg(sweep.pid, signal.SIGKILL)  # the sweep and its worker process, mid-solve
    sweep.wait()
    before = run.read_text().splitlines()
    recorded = len(results(run))
    assert 4 <= recorded < 24, sweep.stderr.read().decode()
    with run.open("a") as f:
        f.write('{"type": "result", "instance": "cut-sh')  # a line cut short by the kill
    resumed = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    after = run.read_text().splitlines()
    assert after[: len(before)] == before  # nothing recorded is lost or rewritten
    pairs = Counter((r["instance"], r["solver"]) for r in results(run))
    assert len(pairs) == 24 and set(pairs.values()) == {1}  # nothing repeated, nothing missing
    assert all(json.loads(line) for line in after)
    assert sum(r["type"] == "environment" for r in read_records(run)) == 2
    finished = run.read_bytes()  # a finished run resumed: nothing to solve, nothing appended (verdicts included)
    assert subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=120).returncode == 0
    assert run.read_bytes() == finished


def test_existing_run_file_needs_resume(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text('{"type": "environment"}\n')
    assert main(["bench", "--sizes", "3", "--per-size", "1", "--solvers", "brute-force", "--out", str(run)]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["check", "gen:gaussian:3:1", "--solvers", "no-such-solver"]) == 2


def test_dask_executor_gives_the_same_results(plugins: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    tasks = make_tasks(source_problems("gen:gaussian+integer-ties:4-5:1"), ["brute-force", "crasher"], 20.0)
    run_sweep(tasks, tmp_path / "local.jsonl", jobs=2)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        assert main(["bench", "--instances", "gen:gaussian+integer-ties:4-5:1", "--solvers", "brute-force,crasher",
                     "--time-limit", "20", "--executor", "dask", "--scheduler", cluster.scheduler_address,
                     "--out", str(tmp_path / "dask.jsonl")]) == 0
        assert main(["check", "gen:gaussian:5:2", "--solvers", "brute-force,wrong-optimum", "--executor", "dask",
                     "--scheduler", cluster.scheduler_address, "--repro-dir", str(tmp_path / "repro")]) == 1
        assert len(list((tmp_path / "repro").glob("*--wrong-optimum.json"))) == 2

    def summary(path: Path) -> set:
        return {(r["instance"], r["solver"], r["status"], r["objective"], str(r.get("heads")))
                for r in results(path)}

    assert summary(tmp_path / "local.jsonl") == summary(tmp_path / "dask.jsonl")
    assert len(summary(tmp_path / "dask.jsonl")) == 8
    assert read_records(tmp_path / "dask.jsonl")[0]["settings"]["executor"] == "dask"


def synthetic_run(path: Path) -> None:
    """Records as solvers of every sort would write them: an ILP baseline, a DP, a Lagrangian solver with
    certificates and iterations, an inexact one with gaps, timeouts, a disagreement."""
    lines = [{"type": "environment", "command": "compbench bench --sizes 10:40:10", "packages": {"numpy": "2"},
              "solvers": {"ilp-x": {"exact": True, "complexity": ""}, "dp": {"exact": True, "complexity": "O(n^3)"},
                          "lagr": {"exact": True}, "greedy": {"exact": False}}, "settings": {"time_limit": 5}}]
    for n in (10, 20, 30, 40):
        for i in range(3):
            instance = f"gaussian-n{n}-s0-{i}"
            best = float(n + i)
            base = {"type": "result", "instance": instance, "n": n, "m": n // 2, "kind": "gaussian",
                    "time_limit": 5.0, "bound": None, "validity": "ok", "kept": [1], "heads": [0]}
            lines.append({"type": "reference", "instance": instance, "status": "optimal", "objective": best,
                          "source": "certified, synthetic.solu.json"})
            lines.append({**base, "solver": "dp", "status": "optimal", "objective": best,
                          "seconds": {"total": 1e-5 * n ** 3 * (1 + 0.1 * i)}})
            ilp = {"status": "optimal", "objective": best, "seconds": {"total": 0.005 * n ** 2}}  # within 5 s
            if n == 40:
                ilp = {"status": "timeout", "objective": best - 1, "seconds": {"wall": 5.0}}
            lines.append({**base, "solver": "ilp-x", **ilp})
            lines.append({**base, "solver": "lagr", "status": "optimal" if i else "feasible",
                          "objective": best if i else best - 0.5, "seconds": {"total": 1e-4 * n ** 3},
                          "stats": {"certificate": bool(i), "iterations": 10 + n}})
            lines.append({**base, "solver": "greedy", "status": "optimal" if n == 10 and i == 0 else "feasible",
                          "objective": best - 0.25 * (i + 1), "seconds": {"total": 1e-4 * n}})  # a wrong claim
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_report_that_fails_midway_leaves_the_one_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture) -> None:
    """A full disk or an interrupt in the middle of a report left the old README linking figures it had deleted,
    beside a summary of the new run: the report, and plot's figures, are replaced as a set or not at all."""
    from compbench.harness import plots, report

    run = tmp_path / "synthetic.jsonl"
    synthetic_run(run)
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out)]) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert "plots/profile.png" in (out / "README.md").read_text() and (out / "plots" / "profile.png").exists()
    smaller = tmp_path / "smaller.jsonl"
    smaller.write_text("".join(line for line in run.read_text().splitlines(keepends=True) if '"n": 40' not in line))

    def full_disk(*args: Any, **kwargs: Any) -> list[str]:
        raise OSError(28, "No space left on device", "provenance")

    monkeypatch.setattr(report, "provenance_lines", full_disk)  # after every figure and table was written
    assert main(["report", str(smaller), "--out", str(out)]) == 2
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    monkeypatch.setattr(plots, "plot_agreement", full_disk)  # the last figure of plot
    assert main(["plot", str(smaller), "--out", str(out / "plots")]) == 2
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    monkeypatch.undo()
    (tmp_path / "kept.md").write_text("old")
    (out / "README.md").unlink()
    (out / "README.md").symlink_to(tmp_path / "kept.md")  # a link is written through, as atomic_output does
    assert main(["report", str(smaller), "--out", str(out)]) == 0  # replaced whole
    assert {p.name for p in out.iterdir()} == {p.parts[0] for p in before}  # no staging folder left
    assert (out / "README.md").is_symlink() and "# compbench report" in (tmp_path / "kept.md").read_text()
    capsys.readouterr()


def test_plots_and_report(plugins: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "synthetic.jsonl"
    synthetic_run(run)
    assert main(["plot", str(run), "--out", str(tmp_path / "plots")]) == 0
    names = {"profile", "cactus", "runtime", "speedup", "certificates", "gap", "agreement"}
    for name in names:
        for ext in ("png", "svg"):
            assert (tmp_path / "plots" / f"{name}.{ext}").stat().st_size > 1000
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    readme = (tmp_path / "report" / "README.md").read_text()
    assert "compbench bench --sizes 10:40:10" in readme and f"compbench report {run}" in readme
    assert all(f"plots/{name}.png" in readme for name in names)
    # with nothing to show, a figure is not drawn and the report says why in one line
    agreeing = tmp_path / "agreeing.jsonl"
    agreeing.write_text("".join(line for line in run.read_text().splitlines(keepends=True) if '"type": "environment"'
                                in line or ('"greedy"' not in line and '"lagr"' not in line)))
    assert main(["report", str(agreeing), "--out", str(tmp_path / "quiet")]) == 0
    quiet = (tmp_path / "quiet" / "README.md").read_text()
    assert "no heat map" in quiet and "No Lagrangian solver" in quiet  # the ILP's timeouts still have gaps
    assert sorted(p.name for p in (tmp_path / "quiet" / "plots").glob("*.png")) == [
        "cactus.png", "gap.png", "profile.png", "runtime.png", "speedup.png"]
    older = tmp_path / "older.jsonl"  # a run file of before 'kept': heads for all n + 1 positions, still a tree
    older.write_text("".join(json.dumps({key: value for key, value in json.loads(line).items() if key != "kept"}
                                        | ({"heads": [-1, 0] + [-1] * (json.loads(line)["n"] - 1)}
                                           if '"heads"' in line else {})) + "\n"
                             for line in agreeing.read_text().splitlines()))
    assert main(["plot", str(older), "--out", str(tmp_path / "older")]) == 0
    assert (tmp_path / "older" / "gap.png").exists()
    assert "| lagr | 10 | 3 | 100 ms | 2 | 0 | 0 | 1 | 2/3 | - |" in readme  # 2 of 3 certified
    assert "| greedy | yes" not in readme and "| greedy | no | - (?) | 12 | 0 | 0 | 0 | 0 | 1 | - |" in readme
    assert "| ilp-x | 40 | 3 | - | 0 | 3 |" in readme  # three timeouts, no median time
    assert "| dp | 40 | 3 | 704 ms | 3 | 0 | 0 | 0 | - | - |" in readme  # median of 1e-5 n^3 (1 + 0.1 i)
    # the statistics: ilp-x's timeouts at n = 40 count at the 5 s limit; greedy (inexact) is reported apart
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["reference"] == "dp" and summary["shift_seconds"] == pytest.approx(0.005)
    ilp = summary["solvers"]["ilp-x"]
    times = [0.005 * n ** 2 for n in (10, 20, 30) for _ in range(3)] + [5.0] * 3
    assert ilp["sgm_seconds"] == pytest.approx(np.exp(np.mean(np.log(np.array(times) + 0.005))) - 0.005)
    assert ilp["par2_seconds"] == pytest.approx((sum(times[:9]) + 3 * 10.0) / 12)
    assert "| greedy | 12 | 0 | 11 | 0 | 1 |" in readme  # its wrong optimal claim: contradicted, not proof


ODD = {"greedy": "gr_e&e%d#y$|x", "lagr": "exec:/opt/my solver", "ilp-x": "ilp-x[t=1]"}  # LaTeX's and Markdown's


def paper_run(path: Path) -> None:
    """The synthetic run with solver names that LaTeX and Markdown must escape, the provenance of a run of today
    (commit, machine, load, distributions, an exec: program) and an end record."""
    synthetic_run(path)
    text = path.read_text()
    for old, new in ODD.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    env, *rest = text.splitlines(keepends=True)
    env = {**json.loads(env), "command": "compbench bench --solvers 'a b'", "compbench": "0.1.0",
           "git": {"commit": "a" * 40, "dirty": True}, "cpu": "Test CPU", "cpu_count": 8, "memory_mb": 16384,
           "load_average": [1.0, 2.0, 3.0],
           "solver_distributions": {ODD["greedy"]: {"distribution": "my-plugin", "version": "2.0"},
                                    "ilp-x": {"distribution": "compbench", "version": "0.1.0"}},
           "programs": {ODD["lagr"]: {"path": "/opt/my solver", "sha256": "ab" * 32}}}
    end = {"type": "end", "ended": "today", "load_average": [0.5, 0.25, 0.125], "interrupted": False}
    path.write_text(json.dumps(env) + "\n" + "".join(rest) + json.dumps(end) + "\n")


def test_report_tables_for_a_paper_and_provenance(tmp_path: Path) -> None:
    run = tmp_path / "my run.jsonl"
    paper_run(run)
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out), "--shift", "0.01"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "plots", "results.csv", "summary.csv",
                                                     "summary.json", "summary.tex"]  # no temporary file left
    with open(out / "results.csv", newline="") as f:
        answers = list(csv.DictReader(f))
    assert {"solver", "instance", "n", "kind", "status", "verdict", "solved", "objective", "reference", "seconds",
            "time_limit"} <= set(answers[0])
    wrong = [a for a in answers if a["solver"] == ODD["greedy"] and a["verdict"] == "contradicted"]
    assert len(wrong) == 1 and wrong[0]["status"] == "optimal" and wrong[0]["solved"] == "false"
    assert all(a["solved"] == "false" for a in answers if a["verdict"] != "ok")
    with open(out / "summary.csv", newline="") as f:
        rows = {row["solver"]: row for row in csv.DictReader(f)}
        f.seek(0)
        assert next(csv.reader(f)) == list(CSV_COLUMNS)
    assert set(rows) == {"dp", *ODD.values()}
    dp = rows["dp"]
    assert float(dp.pop("sgm_seconds")) > 0 and float(dp.pop("par2_seconds")) > 0
    assert dp == {"solver": "dp", "exact": "true", "disqualified": "false", "solved": "12", "total": "12",
                  "shift_seconds": "0.01", "sgm_scaled": "1.0", "timeouts": "0", "errors": "0", "wrong": "0"}
    greedy = rows[ODD["greedy"]]  # inexact, one wrong optimal claim: disqualified, never scaled
    assert (greedy["exact"], greedy["disqualified"], greedy["wrong"], greedy["sgm_scaled"]) == ("false", "true", "1",
                                                                                                "")
    tex = (out / "summary.tex").read_text()
    columns = re.search(r"\\begin\{tabular\}\{(\w+)\}", tex).group(1)
    table = tex[tex.index(r"\toprule"):tex.index(r"\bottomrule")].splitlines()
    body = [line for line in table if line.endswith(r"\\")]
    assert len(body) == 1 + 4 and r"\midrule" in table[3:]  # the header, 4 solvers; inexact greedy below a rule
    assert all(len(re.findall(r"(?<!\\)&", line)) == len(columns) - 1 for line in body), body
    depth = 0
    for char in re.sub(r"\\[{}]", "", tex):
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0
    assert r"gr\_e\&e\%d\#y\$\textbar{}x$^\dagger$ & 0/12 & " in tex and "ilp-x[t=1] & 9/12 & " in tex
    assert r"gr\_e\&e\%d\#y\$\textbar{}x disqualified: 1 wrong answer (" in tex
    assert r"Solver & Solved & SGM (shift 10~ms) & PAR-2 & Scaled SGM \\" in tex
    assert ("Time limit 5 s per solve" in tex and "shift 10 ms" in tex and "agrees with the reference optimum" in tex
            and "Machine: Test CPU, 8 logical cores, 16.0 GiB memory." in tex)
    readme = (out / "README.md").read_text()
    assert "compbench bench --solvers 'a b'\n" + shlex.join(["compbench", "report", str(run), "--out", str(out),
                                                             "--shift", "0.01"]) in readme
    assert ("compbench 0.1.0, commit `" + "a" * 40 + "` (dirty tree: uncommitted changes to the source); machine: Test CPU, 8 "
            "logical cores, 16.0 GiB memory; load average (1, 5, 15 min) 1.0, 2.0, 3.0 at the start, 0.5, 0.25, "
            "0.125 at the end (today)") in readme
    assert "| gr_e&e%d#y$\\|x | my-plugin | 2.0 |" in readme and "| ilp-x[t=1] | compbench | 0.1.0 |" in readme
    assert f"| exec:/opt/my solver | program `/opt/my solver` | `{'ab' * 32}` |" in readme
    assert "| dp | not recorded | - |" in readme
    cells = None  # every Markdown table row has as many cells as its table's header: the | in a name escaped
    for line in readme.splitlines():
        bars = len(re.findall(r"(?<!\\)\|", line))
        if line.startswith("|---"):
            cells = bars
        elif line.startswith("|") and cells is not None:
            assert bars == cells, line
        elif not line.startswith("|"):
            cells = None


def test_summary_tex_compiles(tmp_path: Path) -> None:
    latex = shutil.which("pdflatex") or shutil.which("lualatex")
    if latex is None:
        pytest.skip("neither pdflatex nor lualatex is installed: summary.tex is checked by its structure only")
    run = tmp_path / "run.jsonl"
    paper_run(run)
    raw, environments = load_runs([run])
    (tmp_path / "summary.tex").write_text(summary_tex(summarize(raw, solver_infos(environments)), 12, environments))
    (tmp_path / "paper.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
                                        "\\input{summary.tex}\n\\end{document}\n")
    done = subprocess.run([latex, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "Missing character" not in (tmp_path / "paper.log").read_text()  # every special character escaped


def test_solved_means_validated_in_bench_report_and_summary(plugins: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    """A plug-in that claims infeasible wrongly and one that returns invalid trees: never solved, anywhere."""
    run = tmp_path / "run.jsonl"
    status = main(["bench", "--instances", "gen:gaussian:5-6:2", "--solvers", "brute-force,claims-infeasible,"
                   "invalid-tree", "--out", str(run), "--time-limit", "30"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "FAIL claims-infeasible on gaussian-n5-s0-0: disagrees: claims infeasible" in out
    assert "FAIL invalid-tree on gaussian-n5-s0-0: invalid: " in out
    summary_line = next(line for line in out.splitlines() if line.startswith("bench: "))
    assert "solved 4," in summary_line and "contradicted 4" in summary_line and "invalid 4" in summary_line
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    liar, broken, oracle = (summary["solvers"][s] for s in ("claims-infeasible", "invalid-tree", "brute-force"))
    assert (liar["solved"], liar["contradicted"], broken["solved"], broken["invalid"]) == (0, 4, 0, 4)
    assert oracle["solved"] == 4 and summary["reference"] == "brute-force" and oracle["sgm_scaled"] == 1.0
    assert liar["sgm_seconds"] == pytest.approx(30.0, rel=0.01)  # every instance counted at the limit
    assert set(liar) == set(oracle)  # the same keys for every solver
    readme = (tmp_path / "report" / "README.md").read_text()
    assert "| claims-infeasible | yes | - (?) | 4 | 0 | 0 | 0 | 0 | 4 | - |" in readme
    assert "| claims-infeasible | misbehaving-solvers | 0.1 |" in readme  # a plug-in's distribution
    assert "| brute-force | compbench | " + compbench.__version__ + " |" in readme
    csv_text = (tmp_path / "report" / "summary.csv").read_text()
    assert "\nclaims-infeasible,true,true,0,4," in csv_text and csv_text.endswith(",0,0,4\n")
    assert "claims-infeasible$^\\dagger$ & 0/4 &" in (tmp_path / "report" / "summary.tex").read_text()
    # invalid trees have no gap (their cycles were drawn as gaps, or said to match the optimum)
    assert not (tmp_path / "report" / "gap.png").exists()
    assert "No valid answer short of a proof has a verified optimum" in readme


def test_compare_exit_statuses(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    synthetic_run(a)
    records = [json.loads(line) for line in a.read_text().splitlines()]
    slower = [{**r, "seconds": {"total": 2 * r["seconds"]["total"]}} if r.get("solver") == "dp" else r
              for r in records]
    b.write_text("".join(json.dumps(r) + "\n" for r in slower))
    assert main(["compare", str(a), str(b), "--shift", "1e-9", "--json"]) == 0
    dp = next(row for row in json.loads(capsys.readouterr().out)["solvers"] if row["solver"] == "dp")
    assert [round(dp[k], 6) for k in ("ratio", "low", "high")] == [2, 2, 2]  # twice as slow on all 12 instances
    assert dp["verdict"] == "slower" and dp["sgm_b"] == pytest.approx(2 * dp["sgm_a"])
    assert main(["compare", str(a), str(b)]) == 0  # the default shift (5 ms) damps the ratio of the fastest solves
    out = capsys.readouterr().out
    dp = next(line for line in out.splitlines() if line.startswith("dp "))
    assert 1.8 < float(dp.split()[6]) < 2 and dp.split()[9] == "slower"
    assert next(line for line in out.splitlines() if line.startswith("lagr ")).split()[9] == "same"  # unchanged
    wrong = [{**r, "objective": r["objective"] + 1} if r.get("solver") == "dp" and r["n"] == 10 else r
             for r in records]
    c.write_text("".join(json.dumps(r) + "\n" for r in wrong))
    assert main(["compare", str(a), str(c)]) == 1
    out = capsys.readouterr().out
    assert "DIFFERS dp on gaussian-n10-s0-0: proven answer 10.0 in A, 11.0 in B" in out
    assert "compare: 3 of 30 proven answer(s) in both runs differ" in out
    flipped = [{**r, "status": "infeasible", "objective": None, "kept": None, "heads": None}
               if r.get("solver") == "ilp-x" and r.get("instance") == "gaussian-n20-s0-1" else r for r in records]
    c.write_text("".join(json.dumps(r) + "\n" for r in flipped))
    assert main(["compare", str(a), str(c)]) == 1  # an optimum became an infeasible claim: was "agrees"
    assert "DIFFERS ilp-x on gaussian-n20-s0-1: proven answer 21.0 in A, 'infeasible' in B" in capsys.readouterr().out
    assert main(["compare", str(a), str(b)]) == 0  # greedy's wrong claim, in both runs, is no difference
    assert "WRONG greedy on gaussian-n10-s0-0 in A and B: contradicted" in capsys.readouterr().out
    invalid = [{**r, "validity": "invalid: a cycle"} if r.get("solver") == "dp" and r["n"] == 20 else r
               for r in records]
    c.write_text("".join(json.dumps(r) + "\n" for r in invalid))
    assert main(["compare", str(a), str(c)]) == 1  # every dp answer of n = 20 invalid in B: it had passed
    out = capsys.readouterr().out
    assert out.count("WRONG dp on gaussian-n20-") == 3 and "in B: invalid: a cycle" in out
    assert main(["compare", str(a), str(tmp_path / "missing.jsonl")]) == 2
    (tmp_path / "empty.jsonl").write_text("not json\n")
    assert main(["compare", str(a), str(tmp_path / "empty.jsonl")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2  # one line each


def test_compare_says_what_it_could_not_compare(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """No timing verdict over fewer than MIN_TIMED_INSTANCES instances (one instance's interval is a point), no
    "agrees" when no answer is proven in both runs, a solver of one run only or with nothing timed in both named,
    and a pair unsolved in one of its repeats timed at the limit (it was timed at the repeats' median: "faster")."""
    from compbench.limits import MIN_TIMED_INSTANCES

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    synthetic_run(a)
    records = [json.loads(line) for line in a.read_text().splitlines()]
    few = [r for r in records if r.get("instance") in (None, "gaussian-n10-s0-0", "gaussian-n10-s0-1")]
    a.write_text("".join(json.dumps(r) + "\n" for r in few))
    slower = [{**r, "seconds": {"total": 3 * r["seconds"]["total"]}} if r.get("solver") == "dp" else r for r in few]
    b.write_text("".join(json.dumps(r) + "\n" for r in slower))
    assert main(["compare", str(a), str(b), "--json"]) == 0
    dp = next(row for row in json.loads(capsys.readouterr().out)["solvers"] if row["solver"] == "dp")
    assert dp["instances"] == 2 < MIN_TIMED_INSTANCES and dp["verdict"] == "too few"
    timeouts = [{**r, "status": "timeout", "objective": None, "kept": None, "heads": None, "seconds": {"wall": 5.0}}
                if r["type"] == "result" else r for r in few]
    b.write_text("".join(json.dumps(r) + "\n" for r in timeouts))
    assert main(["compare", str(a), str(b)]) == 0
    assert "no instance has a proven answer (optimal or infeasible) in both runs" in capsys.readouterr().out
    dropped = [{**r, "status": "unsupported", "objective": None, "kept": None, "heads": None}
               if r.get("solver") == "greedy" else r for r in few if r.get("solver") != "lagr"]
    b.write_text("".join(json.dumps(r) + "\n" for r in dropped))
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "  lagr: not compared: in A only" in out and "  greedy: not compared: no instance timed in both" in out
    repeats = [dict(r, repeat=k, **({"status": "timeout", "objective": None, "kept": None, "heads": None,
                                    "seconds": {"wall": 5.0}}
                                   if k == 2 and r.get("solver") == "dp" else {}))
               for r in few if r["type"] == "result" for k in range(3)]
    b.write_text("".join(json.dumps(r) + "\n" for r in [few[0], *(r for r in few if r["type"] == "reference"),
                                                          *repeats]))
    assert main(["compare", str(a), str(b), "--json", "--force"]) == 0
    dp = next(row for row in json.loads(capsys.readouterr().out)["solvers"] if row["solver"] == "dp")
    assert dp["solved_b"] == 0 and dp["sgm_b"] == pytest.approx(5.0, rel=0.01)  # at the limit, not 0.01 s


@pytest.mark.parametrize("change, why", [
    (lambda r: {**r, "time_limit": 10.0} if r["type"] == "result" else r, "different time limits"),
    (lambda r: r if r["type"] != "reference" or r["instance"] != "gaussian-n10-s0-0" else {**r, "type": "verdict"},
     "a reference optimum for gaussian-n10-s0-0 in A only"),
    (lambda r: {**r, "hash": "0" * 16} if r.get("instance") == "gaussian-n10-s0-0" else r, "different instance sets"),
    (lambda r: {**r, "objective": 99.0} if r["type"] == "reference" and r["instance"].endswith("n10-s0-0") else r,
     "different reference optima"),
])
def test_compare_refuses_runs_that_differ_in_what_they_measure(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                change: Any, why: str) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    synthetic_run(a)
    b.write_text("".join(json.dumps(change(json.loads(line))) + "\n" for line in a.read_text().splitlines()))
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and why in err and "--force" in err
    assert main(["compare", str(a), str(b), "--force"]) in (0, 1)
    assert f"forced: {why}" in capsys.readouterr().out


def test_demo_quick(plugins: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status = main(["demo", "--quick", "--solvers", "brute-force,slow", "--out", str(tmp_path / "demo"), "--jobs", "2"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "agreement: every answer on the" in out and str(tmp_path / "demo" / "README.md") in out
    readme = (tmp_path / "demo" / "README.md").read_text()
    assert "compbench demo --quick" in readme or "compbench demo --out" in readme
    assert (tmp_path / "demo" / "plots" / "runtime.png").stat().st_size > 1000
    records = results(tmp_path / "demo" / "runs" / "demo.jsonl")
    assert len(records) == 4
    assert [r["stats"] for r in records if r["solver"] == "slow"][0] == {"final_lambda": "inf", "trace": [1.5, "nan"]}


def test_certificate_flags_are_read_under_their_various_names() -> None:
    from compbench.harness.plots import certificate_stats

    records = [{"solver": "a", "n": 5, "status": "feasible", "stats": {"converged": False, "iterations": 100}},
               {"solver": "a", "n": 5, "status": "optimal", "stats": {"converged": True, "iterations": 3}},
               {"solver": "b", "n": 5, "status": "optimal", "stats": {"certificate": "primal-dual"}},
               {"solver": "c", "n": 5, "status": "optimal", "stats": {"iterations": 7}},
               {"solver": "d", "n": 5, "status": "optimal", "stats": {"chart_mib": 1.0}}]
    certs, iters = certificate_stats(records)
    assert certs == {"a": {5: [False, True]}, "b": {5: [True]}, "c": {5: [True]}}
    assert iters == {"a": {5: [100.0, 3.0]}, "c": {5: [7.0]}}


def test_second_order_sweep_is_recorded_and_plotted(tmp_path: Path) -> None:
    run = tmp_path / "second-order.jsonl"
    assert main(["bench", "--sizes", "5:7:2", "--per-size", "1", "--second-order", "--solvers",
                 "brute-force,resource-dp,signature-dp", "--time-limit", "30", "--out", str(run)]) == 0
    records = [r for r in map(json.loads, run.read_text().splitlines()) if r["type"] == "result"]
    assert {r["kind"] for r in records} == {"gaussian+sibling"}
    by_solver = {r["solver"]: r["status"] for r in records}
    assert by_solver["resource-dp"] == "optimal" and by_solver["signature-dp"] == "unsupported"
    assert main(["plot", str(run), "--out", str(tmp_path / "plots")]) == 0
    assert (tmp_path / "plots" / "runtime.png").stat().st_size > 1000


def test_a_crash_in_the_warm_up_is_a_crash_not_a_timeout(plugins: Path, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    tasks = make_tasks(source_problems("gen:gaussian:6:1"), ["crasher", "warmup-crasher"], time_limit=5.0)
    started = time.monotonic()
    run_sweep(tasks, run, jobs=1, warmup_limit=60.0)
    assert time.monotonic() - started < 30  # not the 60 s warm-up limit
    got = {r["solver"]: r for r in results(run)}
    crash = got["warmup-crasher"]
    assert crash["status"] == "error" and "died in the warm-up (exit status 3)" in crash["message"]
    assert "warm-up crasher going down" in crash["message"]
    # the crasher died before it (signal 9 at n = 6): its message carries its own stderr only
    assert "going down" not in got["crasher"]["message"]


def test_solve_holds_the_time_limit_hard(plugins: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    instances = tmp_path / "set.jsonl"
    compbench.write_instances(instances, source_problems("gen:gaussian:6:1"))
    started = time.monotonic()
    status = main(["solve", str(instances), "--solver", "sleeper", "--time-limit", "1", "--json"])
    assert time.monotonic() - started < 20  # the sleeper sleeps 600 s
    record = json.loads(capsys.readouterr().out)
    assert status == 0 and record["status"] == "timeout" and record["seconds"]["wall"] >= 1.0
    assert main(["solve", str(instances), "--solver", "brute-force", "--time-limit", "30", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "optimal"


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_killing_a_sweep_leaves_no_process_and_no_file(plugins: Path, tmp_path: Path, how: signal.Signals) -> None:
    # the bench alone is killed (not its process group) while its worker is stuck in a solve that holds signals,
    # as C code does, with a child process of its own; one result is finished before
    pids = tmp_path / "pids"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = tmp_path / "run.jsonl"
    env = {**os.environ, "SLEEPER_PIDS": str(pids), "TMPDIR": str(scratch)}
    sweep = subprocess.Popen([sys.executable, "-m", "compbench", "bench", "--instances", "gen:gaussian:4-5:1",
                              "--solvers", "holder", "--time-limit", "60", "--out", str(run)],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().endswith("\n")) and time.monotonic() < deadline:
        assert sweep.poll() is None, sweep.stderr.read().decode()
        time.sleep(0.05)
    worker, helper = [int(pid) for pid in pids.read_text().split()]
    assert list(scratch.glob("compbench-worker-*"))  # the worker's scratch directory exists while it runs
    killed = time.monotonic()
    os.kill(sweep.pid, how)
    gone: dict[int, float] = {}
    while len(gone) < 2 and time.monotonic() < killed + 10:
        gone.update({pid: time.monotonic() - killed for pid in (worker, helper)
                     if pid not in gone and not running(pid)})
        time.sleep(0.005)
    code = sweep.wait()
    print(f"{signal.Signals(how).name}: the worker outlived the bench by {gone.get(worker)} s, its child by "
          f"{gone.get(helper)} s")
    assert set(gone) == {worker, helper}  # measured about 0.01 s; the goal is within 1 s, polled for up to 10 s
    deadline = time.monotonic() + 5
    while list(scratch.glob("compbench-worker-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not list(scratch.glob("compbench-worker-*"))  # scratch and problem files removed
    assert [r["status"] for r in results(run)] == ["optimal"]  # the finished result is kept
    if how == signal.SIGTERM:  # as Ctrl-C
        stderr = sweep.stderr.read().decode().strip()
        assert code == 130 and stderr.startswith("compbench: interrupted; finished results are kept"), stderr
        assert read_records(run)[-1]["type"] == "end" and read_records(run)[-1]["interrupted"] is True


def test_the_next_worker_removes_the_scratch_of_a_dead_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compbench.harness.worker import SCRATCH_PREFIX, SolveProcess

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / f"{SCRATCH_PREFIX}{int(dead.stdout)}-problems-x"
    left.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with SolveProcess() as worker:
        worker._start()
        assert [p.name for p in tmp_path.glob(f"{SCRATCH_PREFIX}*")] == [Path(worker._scratch).name]
    assert not list(tmp_path.glob(f"{SCRATCH_PREFIX}*"))


def test_a_child_that_left_the_process_group_is_killed_too(plugins: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLEEPER_PIDS", str(tmp_path / "pids"))
    run = tmp_path / "run.jsonl"
    run_sweep(make_tasks(source_problems("gen:gaussian:5:1"), ["escaper"], 0.5), run, grace=0.2)
    assert [r["status"] for r in results(run)] == ["timeout"]
    (helper,) = [int(pid) for pid in (tmp_path / "pids").read_text().split()]
    deadline = time.monotonic() + 5
    while running(helper) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(helper)


def test_resume_with_repeated_and_missing_ids(tmp_path: Path) -> None:
    base = compbench.generate("gaussian", n=4, seed=0, length=2)
    problems = [base.replace(id="x"), base.replace(id="x"), base.replace(id="x"), base.replace(id=""),
                base.replace(id="y")]
    instances = tmp_path / "set.jsonl"
    compbench.write_instances(instances, problems)
    run = tmp_path / "run.jsonl"
    tasks = make_tasks(source_problems(str(instances))[:2], ["brute-force"], 30)
    run_sweep(tasks, run)  # a first part: two of the five
    counts = run_sweep(make_tasks(source_problems(str(instances)), ["brute-force"], 30), run, resume=True)
    assert counts["resumed"] == 2 and counts["optimal"] == 3
    assert sorted(r["instance"] for r in results(run)) == ["instance#3", "x#0", "x#1", "x#2", "y#4"]


def test_repro_files_of_long_and_clashing_ids(plugins: Path, tmp_path: Path) -> None:
    base = compbench.generate("gaussian", n=5, seed=0, length=2)
    instances = tmp_path / "set.jsonl"
    compbench.write_instances(instances, [base.replace(id="a/b"), base.replace(id="a_b"),
                                          base.replace(id="z" * 300)])
    repro = tmp_path / "repro"
    assert main(["check", str(instances), "--solvers", "brute-force,wrong-optimum", "--repro-dir", str(repro)]) == 1
    files = sorted(repro.glob("*.json"))
    assert len(files) == 3 and all(len(f.name) < 150 for f in files)
    assert {compbench.read_instance(f).id for f in files} == {"a/b", "a_b", "z" * 300}


def test_resume_to_larger_sizes_keeps_skipping(plugins: Path, tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run_sweep(make_tasks(source_problems("gen:gaussian:4-5:1"), ["sleeper"], 0.5), run, grace=0.2)
    assert [r["status"] for r in results(run)] == ["optimal", "timeout"]
    started = time.monotonic()
    counts = run_sweep(make_tasks(source_problems("gen:gaussian:6-7:1"), ["sleeper"], 0.5), run, resume=True,
                       force=True)  # other sizes: mixed on purpose
    assert counts.get("skipped") == 2 and time.monotonic() - started < 10


def test_a_hanging_warm_up_costs_the_full_limit_once(plugins: Path, tmp_path: Path) -> None:
    from compbench.harness import worker

    worker._WARM_UPS.clear()
    run = tmp_path / "run.jsonl"
    tasks = make_tasks(source_problems("gen:gaussian:5:3"), ["warmup-hanger"], time_limit=0.5)
    started = time.monotonic()
    run_sweep(tasks, run, jobs=1, grace=0.5, warmup_limit=4.0, skip_fraction=1.0)
    assert time.monotonic() - started < 20
    messages = [r["message"] for r in results(run)]
    assert [r["status"] for r in results(run)] == ["timeout"] * 3
    # the first warm-up may be compiling: the full limit; the next ones: the task's limit + grace
    assert "exceeded 4 s" in messages[0] and all("exceeded 1 s" in m for m in messages[1:]), messages


def test_solve_takes_the_warm_up_limit_as_bench_does(plugins: Path, tmp_path: Path) -> None:
    """solve --time-limit 1 with a plug-in that hangs in its warm-up took 1 min 43 s: the warm-up's 120 s limit
    applied and solve had no --warmup-limit."""
    instance = tmp_path / "n5.json"
    compbench.write_instance(instance, compbench.generate("gaussian", 5, seed=0, length=2))
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(instance), "--solver", "warmup-hanger",
                             "--time-limit", "1", "--warmup-limit", "3", "--json"], capture_output=True, text=True,
                            timeout=120)
    assert time.monotonic() - started < 60
    record = json.loads(result.stdout)
    assert record["status"] == "timeout" and "exceeded 3 s" in record["message"], record


# What each faulty plug-in must be recorded as, by check and by bench: (status, a part of the verdict, of the message)
FAULTY = {
    "wrong-objective": ("optimal", "invalid: ", ""),
    "wrong-optimum": ("optimal", "disagrees: claims optimum", ""),
    "invalid-tree": ("feasible", "invalid: ", ""),
    "fractional-heads": ("error", "ok", "heads must be a vector of integers"),
    "not-a-solution": ("error", "ok", "returned dict, not a compbench.Solution"),
    "sleeper": ("timeout", "ok", "killed after"),
    "crasher": ("error", "ok", "raised RuntimeError: boom at n = 5"),
    "segfaults": ("error", "ok", "worker process died (signal 11)"),
    "exits": ("error", "ok", "called sys.exit(4)"),
    "hard-exits": ("error", "ok", "worker process died (exit status 5)"),
    "allocates": ("error", "ok", "raised MemoryError"),
    "prints-to-stdout": ("optimal", "ok", ""),
}


@pytest.mark.parametrize("command", ["check", "bench"])
def test_every_faulty_solver_is_recorded_as_what_it_is(plugins: Path, tmp_path: Path, command: str,
                                                       capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    solvers = ",".join(["brute-force", *FAULTY])
    limits = ["--time-limit", "2", "--grace", "0.5", "--memory-limit", "1000"]
    if command == "check":
        status = main(["check", "gen:gaussian:5:1", "--solvers", solvers, "--out", str(run),
                       "--repro-dir", str(tmp_path / "repro"), *limits])
    else:
        status = main(["bench", "--instances", "gen:gaussian:5:1", "--solvers", solvers, "--out", str(run), *limits])
    assert status == 1  # the wrong answers fail the check, and the bench (judged as check judges them)
    out = capsys.readouterr().out
    verdicts = {line.split()[1]: line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("FAIL ")}
    assert set(verdicts) == {"wrong-objective", "wrong-optimum", "invalid-tree"}
    if command == "bench":  # solved means validated: only brute force and prints-to-stdout count
        summary = next(line for line in out.splitlines() if line.startswith("bench: "))
        assert "solved 2," in summary and "invalid 2" in summary and "contradicted 1" in summary, summary
    got = {r["solver"]: r for r in results(run)}
    reference = got.pop("brute-force")
    assert reference["status"] == "optimal"
    for solver, (status, verdict, message) in FAULTY.items():
        record = got[solver]
        assert record["status"] == status, (solver, record)
        assert message in record.get("message", ""), (solver, record)
        assert verdicts.get(solver, "ok").startswith(verdict), (solver, verdicts)
    assert 2.0 <= got["sleeper"]["seconds"]["wall"] <= 3.5  # killed at 2 s + 0.5 s grace (+ a loaded machine's delay)
    assert "memory limit is 1000 MiB" in got["allocates"]["message"]
    assert got["prints-to-stdout"]["objective"] == reference["objective"]


def test_every_shipped_instance_set_has_certified_optima_for_every_instance() -> None:
    from compbench.harness.references import read_solu, solu_path
    from compbench.io import instance_hash

    root = Path(__file__).resolve().parents[1]
    sets = sorted(p for p in (root / "instances").iterdir() if p.suffix in (".json", ".jsonl")
                  and not p.name.endswith(".solu.json"))
    assert len(sets) == 11
    for path in sets:
        optima = read_solu(solu_path(path))
        assert all(instance_hash(p) in optima for p in compbench.read_instances(path)), path
    ex1 = read_solu(root / "instances" / "ex1.solu.json")
    assert [ref.objective for ref in ex1.values()] == [pytest.approx(5.35)]  # the hand-checked optimum


@pytest.mark.parametrize("change, says", [
    (lambda optima: optima + [{**optima[0], "objective": optima[0]["objective"] + 1}], "optima[2].hash: "),
    (lambda optima: [{**optima[0], "objective": float("inf")}] + optima[1:], "optima[0].status: expected optimal "
                                                                              "with a finite objective"),
    (lambda optima: [{k: v for k, v in optima[0].items() if k != "hash"}] + optima[1:], "optima[0].hash: expected"),
    (lambda optima: [{**optima[0], "objective": str(optima[0]["objective"])}] + optima[1:],
     "optima[0].objective: expected a number"),  # a number in a string was read as the number
    (lambda optima: [{**optima[0], "status": "infeasible"}] + optima[1:],
     "optima[0].objective: an infeasible instance has none (null), got "),  # the value was ignored
    (lambda optima: [{**optima[0], "objective": optima[0]["objective"] + 1, "objective_error": 1e300}] + optima[1:],
     "the optimum of gaussian-n5-s0-0: objective_error 1e+300 is above the float64 error of any tree"),  # agreed
])
def test_a_damaged_reference_optima_file_is_one_line_naming_the_entry(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                       change, says: str) -> None:
    instances = tmp_path / "set.jsonl"
    assert main(["generate", "--kind", "gaussian", "--n", "5", "--count", "2", "--out", str(instances)]) == 0
    solu = tmp_path / "set.solu.json"
    table = json.loads(solu.read_text())
    solu.write_text(json.dumps({**table, "optima": change(table["optima"])}))
    capsys.readouterr()
    assert main(["check", str(instances), "--solvers", "resource-dp", "--time-limit", "30"]) == 2
    assert f"{solu}: {says}" in one_error_line(capsys)


def test_objectives_summed_in_other_orders_agree_within_their_float64_error() -> None:
    # scores near 3e10 that cancel: resource-dp and signature-dp sum one tree's scores in other orders and report
    # objectives about 1.5e-5 apart; both are right (the check called them invalid and disagreeing before)
    from compbench.agreement import Reference, judge, validate
    from compbench.evaluate import objective_error
    from compbench.harness.check import check

    rng = np.random.default_rng(1)
    for _ in range(100):
        n = int(rng.integers(3, 7))
        scores = lambda shape: np.round(rng.standard_normal(shape) * 3) * 3e10 + rng.standard_normal(shape)
        p = compbench.Problem(scores((n,)), scores((n + 1, n + 1)), scores((n + 2, n + 2)),
                              length=int(rng.integers(1, n + 1)))
        dp, signature = (compbench.get_solver(name).solve(p) for name in ("resource-dp", "signature-dp"))
        if not math.isclose(dp.objective, signature.objective, rel_tol=1e-9, abs_tol=1e-9):
            break
    assert np.array_equal(dp.heads, signature.heads) and abs(dp.objective) < 10  # costs near 3e10 cancel
    error = objective_error(p, dp.heads)
    assert abs(dp.objective - signature.objective) <= error < 1e-1
    assert validate(p, dp) == validate(p, signature) == "ok"
    assert judge(p, signature, dp) == judge(p, dp, signature) == "ok"
    report = check([p], ["resource-dp", "signature-dp", "brute-force"], time_limit=30)
    assert not report.failed and report.compared == 1
    # beyond the error (and the relative tolerance), a wrong value is still caught
    off = 10 * error + 1e-6 * abs(dp.objective)
    signature.objective += off
    assert validate(p, signature).startswith("invalid: reported objective")
    assert judge(p, dp, Reference(compbench.Status.OPTIMAL, dp.objective + off, "x")).startswith("disagrees")


# Verdicts that hold on their own: nothing passes unchecked (issue: a check must never say "agreement" when nothing
# was compared, and a lone wrong solver must be caught).

def test_solve_judges_an_answer_against_the_certified_optimum_beside_the_file(plugins: Path,
                                                                            capsys: pytest.CaptureFixture) -> None:
    example = Path(__file__).resolve().parents[1] / "instances" / "ex1.json"  # ex1.solu.json certifies 5.35
    assert main(["solve", str(example), "--solver", "wrong-optimum"]) == 1
    assert "reference optimum is 5.35 (certified, ex1.solu.json)" in capsys.readouterr().err
    assert main(["solve", str(example), "--solver", "resource-dp"]) == 0


def test_one_program_under_two_spellings_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture) -> None:
    program = tmp_path / "solver.sh"
    program.write_text("#!/bin/sh\nexit 1\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "gen:gaussian:4:1", "--solvers", "exec:./solver.sh,exec:solver.sh"]) == 2
    assert "names the program" in one_error_line(capsys)  # it would be its own second opinion


def test_a_lying_plugin_alone_is_caught_and_disqualified_in_every_view(plugins: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    assert main(["bench", "--sizes", "6", "--per-size", "3", "--solvers", "wrong-optimum", "--time-limit", "30",
                 "--out", str(run)]) == 1
    out = capsys.readouterr().out
    assert out.count("FAIL wrong-optimum") == 3 and "disagrees: claims optimum" in out
    assert "reference optimum is" in out and "resource-dp in this run" in out
    records = read_records(run)
    verdicts = [r for r in records if r["type"] == "verdict"]
    assert [(v["verdict"], v["solved"]) for v in verdicts] == [("contradicted", False)] * 3
    assert all(v["reference"] > 0 for v in verdicts)  # the reference value beside the wrong claim
    assert records[-1]["type"] == "end"
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    row = json.loads((tmp_path / "report" / "summary.json").read_text())["solvers"]["wrong-optimum"]
    assert row["disqualified"] and row["wrong"] == 3 and row["solved"] == 0 and row["sgm_scaled"] is None
    assert "disqualified: 3 wrong" in (tmp_path / "report" / "README.md").read_text()
    assert main(["check", "gen:gaussian:6:2", "--solvers", "wrong-optimum", "--repro-dir", str(tmp_path / "r"),
                 "--time-limit", "30"]) == 1


@pytest.mark.parametrize("argv, why", [
    (["instances/small-gaussian-n8.jsonl", "--solvers", "hook-dp"], "nothing was compared"),  # all unsupported
    (["gen:gaussian:5:2", "--solvers", "crasher"], "every answer of crasher is an error"),  # all errors
    (["gen:gaussian:5:2", "--solvers", "invalid-tree"], "compared: 0 of 2 instances"),  # unproven and invalid:
])                                                                     # a failure, but no comparison
def test_a_check_that_compared_nothing_fails(plugins: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                             argv: list[str], why: str) -> None:
    root = Path(__file__).resolve().parents[1]
    argv = [str(root / argv[0]) if argv[0].startswith("instances/") else argv[0], *argv[1:]]
    assert main(["check", *argv, "--time-limit", "30", "--repro-dir", str(tmp_path / "r")]) == 1
    out = capsys.readouterr().out
    assert why in out and "nothing was compared" in out and "every answer holds up" not in out
    assert "agreement: every answer" not in out


def test_a_solver_that_errs_on_every_problem_it_takes_on_fails_check_and_bench(
        plugins: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Declining the other problems (unsupported) is no answer that holds up: free-crasher errs on all it takes."""
    assert main(["check", "gen:gaussian:5-6:2:0:mixed", "--solvers", "brute-force,free-crasher", "--time-limit",
                 "30", "--repro-dir", str(tmp_path / "r")]) == 1
    out = capsys.readouterr().out
    assert "every answer of free-crasher is an error: 4 of 4 (and 4 unsupported)" in out
    assert "agreement: every answer" not in out
    assert main(["bench", "--instances", "gen:gaussian:5-6:2:0:mixed", "--solvers", "brute-force,free-crasher",
                 "--time-limit", "30", "--out", str(tmp_path / "run.jsonl")]) == 1
    assert "every answer of free-crasher is an error (or unsupported)" in capsys.readouterr().out


def test_an_answer_after_the_limit_is_no_solve_and_no_solver_times_itself(plugins: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    from compbench.harness.stats import annotate

    run = tmp_path / "run.jsonl"
    assert main(["bench", "--instances", "gen:gaussian:5:2", "--solvers", "overrun,time-liar,brute-force",
                 "--time-limit", "1", "--out", str(run)]) == 0
    results, _ = load_runs([run])
    judged = {(r["solver"], r["instance"]): r for r in annotate(results)}
    overrun = [r for (solver, _), r in judged.items() if solver == "overrun"]
    assert [(r["status"], r["outcome"], r["counted"] >= 1.4) for r in overrun] == [("optimal", "timeout", True)] * 2
    liar = [r for (solver, _), r in judged.items() if solver == "time-liar"]
    assert [r["outcome"] for r in liar] == ["solved"] * 2 and all(r["counted"] >= 0.3 for r in liar)
    capsys.readouterr()


def test_an_agreement_with_some_error_answers_names_them(plugins: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """Errors on some instances do not fail a check (each is in the table), but the agreement line says that it
    does not cover them."""
    assert main(["check", "gen:gaussian:4-5:1", "--solvers", "brute-force,crasher", "--time-limit", "30",
                 "--repro-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert ("agreement: every answer on the 2 compared instances holds up but for 1 error answer(s), which were not "
            "judged (crasher 1)") in out


def test_a_lone_solver_is_not_checked_by_the_reference_it_computed(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    # the in-run reference is resource-dp's own answer: alone, resource-dp was compared with nothing
    assert main(["check", "gen:gaussian:5:2", "--solvers", "resource-dp", "--time-limit", "30"]) == 1
    out = capsys.readouterr().out
    assert "compared: 0 of 2 instances; reference: resource-dp in this run (2)" in out
    assert "nothing was compared" in out and "agreement: every answer" not in out
    run = tmp_path / "run.jsonl"
    assert main(["bench", "--sizes", "5", "--per-size", "2", "--solvers", "resource-dp", "--time-limit", "30",
                 "--out", str(run)]) == 1
    out = capsys.readouterr().out
    assert "unchecked 2" in out and "solved" not in out and "nothing was compared" in out
    assert main(["check", "gen:gaussian:5:2", "--solvers", "resource-dp[]", "--time-limit", "30"]) == 1  # options
    assert "nothing was compared" in capsys.readouterr().out                  # make no other solver
    # a second exact solver, or a certified optimum, checks it
    assert main(["check", "gen:gaussian:5:2", "--solvers", "resource-dp,signature-dp", "--time-limit", "30"]) == 0
    assert "compared: 2 of 2 instances" in capsys.readouterr().out


def test_solvers_of_one_implementation_are_one_opinion(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """hook-dp and pruned-dp call the chart's kernels that give resource-dp's reference in the run: a bug there
    would agree with itself, so they compared nothing (they had been 'compared: 4 of 4'), neither with the
    reference nor with each other; signature-dp is another implementation."""
    from compbench.agreement import Reference, verdict
    from compbench.harness.judging import judge_records

    argv = ["check", "gen:gaussian:5-6:2:0:free", "--time-limit", "30"]
    assert main([*argv, "--solvers", "hook-dp,pruned-dp,bisection-exact"]) == 1
    out = capsys.readouterr().out
    assert "compared: 0 of 4 instances" in out and "share one implementation (compressive chart)" in out
    assert main([*argv, "--solvers", "hook-dp,signature-dp", "--out", str(tmp_path / "run.jsonl")]) == 0
    assert "compared: 4 of 4 instances" in capsys.readouterr().out
    assert {(r["solver"], r["implementation"]) for r in read_records(tmp_path / "run.jsonl")
            if r["type"] == "result"} == {("hook-dp", "compressive chart"), ("signature-dp", "signature-dp")}
    answer = compbench.Solution(compbench.Status.OPTIMAL, objective=2.0)
    own = Reference(compbench.Status.OPTIMAL, 2.0, "resource-dp in this run", solver="resource-dp")
    assert not verdict(answer, "ok", own, solver="hook-dp").compared
    records = [{"instance": "a", "solver": solver, "n": 0, "status": "optimal", "objective": 0.0, "validity": "ok",
                "kept": [], "heads": []} for solver in ("hook-dp", "pruned-dp", "signature-dp")]
    assert [j.compared for j in judge_records(records[:2], {})] == [False, False]  # no second opinion
    assert [j.compared for j in judge_records(records, {})] == [True] * 3
    # a run file is judged by the implementation it recorded, not by what is installed where it is read
    mine = {**records[2], "solver": "my-chart", "implementation": "compressive chart"}  # a plug-in not here
    assert [j.compared for j in judge_records([records[0], mine], {})] == [False, False]
    assert not verdict(answer, "ok", own, solver="my-chart", implementation="compressive chart").compared


def test_bench_that_compared_nothing_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    assert main(["bench", "--sizes", "6", "--per-size", "2", "--solvers", "hook-dp", "--time-limit", "30",
                 "--out", str(run)]) == 1  # hook-dp takes free length only: every answer unsupported
    assert "nothing was compared" in capsys.readouterr().out


def test_workers_import_the_parents_compbench_from_a_folder_holding_a_clone(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            capsys: pytest.CaptureFixture) -> None:
    clone = tmp_path / "compbench"  # a clone's folder: no __init__.py, so it would import as an empty namespace
    (clone / "docs").mkdir(parents=True)
    (clone / "README.md").write_text("a clone\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "gen:gaussian:4:2", "--solvers", "brute-force", "--time-limit", "30"]) == 0
    assert "compared: 2 of 2 instances" in capsys.readouterr().out


def test_report_refuses_runs_with_different_time_limits(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    runs = []
    for limit in ("5", "10"):
        runs.append(tmp_path / f"run-{limit}.jsonl")
        assert main(["bench", "--sizes", "5", "--per-size", "1", "--solvers", "brute-force", "--time-limit", limit,
                     "--out", str(runs[-1])]) == 0
    capsys.readouterr()
    assert main(["report", *map(str, runs), "--out", str(tmp_path / "report")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "mix time limits" in err


def test_a_plugin_that_ends_its_process_cannot_end_solve_silently(plugins: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """A third-party solver runs in a worker even without --time-limit: os._exit(0) or (5) under it is an error
    answer, printed, with exit status 1."""
    instance = tmp_path / "n6.json"
    compbench.io.write_instances(instance, [compbench.generate("gaussian", 6, length=3)])
    for solver, code in (("hard-exits", 5), ("exits", None)):
        assert main(["solve", str(instance), "--solver", solver]) == 1
        out = capsys.readouterr().out
        assert "error" in out and (code is None or f"exit status {code}" in out), out


def test_solve_enforces_the_memory_limit_without_a_time_limit(plugins: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    instance = tmp_path / "n6.json"
    compbench.io.write_instances(instance, [compbench.generate("gaussian", 6, length=3)])
    assert main(["solve", str(instance), "--solver", "resource-dp", "--memory-limit", "10"]) == 2
    assert "--memory-limit must be 64..1073741824 MiB, got 10" in capsys.readouterr().err
    assert main(["solve", str(instance), "--solver", "allocates", "--memory-limit", "300"]) == 1
    assert "MemoryError" in capsys.readouterr().out


def test_a_keyboard_interrupt_raised_by_a_plugin_is_its_error(plugins: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    main(["bench", "--sizes", "5", "--per-size", "1", "--solvers", "interrupts,brute-force", "--time-limit", "30",
          "--memory-limit", "2048", "--out", str(run)])
    (record,) = [r for r in read_records(run) if r["type"] == "result" and r["solver"] == "interrupts"]
    assert record["status"] == "error" and "raised KeyboardInterrupt" in record["message"]
    assert "memory" not in record["message"]


def test_an_unreachable_dask_scheduler_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    from compbench.harness import sweep

    monkeypatch.setattr(sweep, "DASK_CONNECT_SECONDS", 1)
    assert main(["bench", "--sizes", "5", "--per-size", "1", "--solvers", "brute-force", "--executor", "dask",
                 "--scheduler", "tcp://127.0.0.1:1", "--out", str(tmp_path / "run.jsonl")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in line
