"""``exec:PATH``: a program as a solver.  The programs here are written into tmp_path and do not import compbench."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

import compbench
from compbench.agreement import judge
from compbench.cli import main
from compbench.harness.runfiles import read_records

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "instances" / "ex1.json"

# Keeps token 1 under the root; reports the time limit it was given in its stats.
TRIVIAL = r'''#!/usr/bin/env python3
import json, os, sys

p = json.load(open(sys.argv[1]))
s = p["scores"]
n = len(s["arc"]) - 1
num = lambda x: float("-inf") if x is None else x
value = num((s.get("token") or [0.0] * n)[0]) + num(s["arc"][0][1])
value += num(s["bigram"][0][1]) + num(s["bigram"][1][n + 1])
print("trivial: done", file=sys.stderr)
print(json.dumps({"status": "feasible", "objective": value, "kept": [1], "heads": [0],
                  "stats": {"limit": os.environ.get("COMPBENCH_TIME_LIMIT")}}))
'''

# Every head assignment, for n <= 6: the optimum, all scores (sibling ones included), both root modes, every length.
BRUTE_FORCE = r'''#!/usr/bin/env python3
import itertools, json, math, sys

p = json.load(open(sys.argv[1]))
s = p["scores"]
n = len(s["arc"]) - 1
if n > 6:
    print(json.dumps({"status": "unsupported", "message": f"n = {n} > 6"}))
    sys.exit()
num = lambda x: -math.inf if x is None else x
token = [num(x) for x in s.get("token") or [0.0] * n]
sibling = {(h, a, k): num(v) for h, a, k, v in s.get("sibling", [])}
length = p["length"]
lo, hi = (0, n) if length is None else (length, length) if isinstance(length, int) else (length["min"], length["max"])


def descends(heads, j, h):
    while j != 0:
        j = heads[j]
        if j == h:
            return True
    return h == 0


def is_tree(heads, kept):
    for k in kept:
        node, steps = k, 0
        while node != 0:
            node, steps = heads[node], steps + 1
            if steps > n:
                return False
    return all(descends(heads, j, heads[k]) for k in kept for j in kept if min(heads[k], k) < j < max(heads[k], k))


def value(heads, kept):
    total = sum(token[k - 1] + num(s["arc"][heads[k]][k]) for k in kept)
    sequence = [0, *kept, n + 1]
    total += sum(num(s["bigram"][a][b]) for a, b in zip(sequence, sequence[1:]))
    for h in (0, *kept):
        modifiers = [k for k in kept if heads[k] == h]
        for side in ([k for k in modifiers if k > h], [k for k in reversed(modifiers) if k < h]):
            total += sum(sibling.get((h, a, k), 0.0) for a, k in zip((h, *side), side))
    return total


best = None
for size in range(lo, hi + 1):
    for kept in itertools.combinations(range(1, n + 1), size):
        for choice in itertools.product((0, *kept), repeat=size):
            heads = dict(zip(kept, choice))
            if any(h == k for k, h in heads.items()) or (p["single_root"] and kept and choice.count(0) != 1):
                continue
            if is_tree(heads, kept):
                v = value(heads, kept)
                if v > -math.inf and (best is None or v > best[0]):
                    best = (v, list(kept), [heads[k] for k in kept])
if best is None:
    print(json.dumps({"status": "infeasible"}))
else:
    print(json.dumps({"status": "optimal", "objective": best[0], "kept": best[1], "heads": best[2]}))
'''

# Hangs with a child of its own (a shell script); writes its pid and its child's first.
HANG = '''#!/bin/sh
sleep 120 &
echo "$$ $!" > "$(dirname "$0")/pids"
sleep 120
'''


def program(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def python_program(directory: Path, name: str, body: str) -> Path:
    return program(directory, name, "#!/usr/bin/env python3\nimport json, os, signal, sys\n" + body + "\n")


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def group_members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` still running (a zombie waiting for its reaper is not)."""
    members = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid and not gone(process.pid):
                members.append(process.pid)
        except (ProcessLookupError, psutil.Error):
            continue
    return members


def test_a_program_answers_through_the_api(tmp_path: Path) -> None:
    solver = compbench.get_solver(f"exec:{program(tmp_path, 'trivial', TRIVIAL)}")
    problem = compbench.read_instance(EXAMPLE).replace(length=compbench.Length.exact(1))
    solution = solver.solve(problem, time_limit=20)
    assert solution.status == compbench.Status.FEASIBLE and solution.kept.tolist() == [1]
    assert judge(problem, solution) == "ok"
    assert solution.stats["limit"] == "20.0" and set(solution.seconds) == {"setup", "solve", "total"}
    assert solver.solve(problem).stats["limit"] is None  # no limit: the variable is absent
    assert solver.exact and solver.info()["program"] == str(tmp_path / "trivial")


def test_an_exec_solver_solves_a_batch_in_processes(tmp_path: Path) -> None:
    """An exec: solver pickles, and solve_many(jobs=2) runs its program from two worker processes (its parents)."""
    path = program(tmp_path, "parent", TRIVIAL.replace('"limit": os.environ.get("COMPBENCH_TIME_LIMIT")',
                                                     '"parent": os.getppid()'))
    solver = compbench.get_solver(f"exec:{path}")
    batch = [compbench.generate("gaussian", 4, seed=seed) for seed in range(4)]
    copy = pickle.loads(pickle.dumps(solver))
    assert copy.name == solver.name and copy.program == solver.program
    many = solver.solve_many(batch, jobs=2)
    parents = {s.stats["parent"] for s in many}
    assert len(parents) == 2 and os.getpid() not in parents
    assert [(s.status, s.objective) for s in many] == [(a.status, a.objective) for a in map(solver.solve, batch)]


def test_a_relative_path_resolves_against_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    program(tmp_path, "trivial", TRIVIAL)
    monkeypatch.chdir(tmp_path)
    solver = compbench.get_solver("exec:./trivial")
    assert solver.name == "exec:./trivial" and solver.program == tmp_path / "trivial"


def test_a_missing_or_non_executable_program_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text(TRIVIAL)
    for path, why in ((tmp_path / "missing", "no such program"), (tmp_path / "plain", "not executable"),
                      (tmp_path, "a directory")):
        with pytest.raises(KeyError, match=why):
            compbench.get_solver(f"exec:{path}")
        result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(EXAMPLE), "--solver", f"exec:{path}"],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and why in result.stderr and len(result.stderr.splitlines()) == 1


FAILURES = [  # (program body, status, what the message says)
    ("print('dying', file=sys.stderr); sys.exit(3)", "error", "exited with status 3; stderr: dying"),
    ("print('segfault ahead', file=sys.stderr); sys.stderr.flush(); os.kill(os.getpid(), signal.SIGSEGV)", "error",
     "killed by signal 11 (SIGSEGV); stderr: segfault ahead"),
    ("print('the answer is 42'); print('debug', file=sys.stderr)", "error", "stdout is not one JSON object"),
    ("pass", "error", "printed nothing on stdout; no stderr"),
    ("print(json.dumps([1, 2]))", "error", "stdout is a JSON list, not an object"),
    ("print(json.dumps({'objective': 1.0}))", "error", "the answer has no status"),
    ("print(json.dumps({'status': 'best'}))", "error", "status 'best' is not one of optimal"),
    ("print(json.dumps({'status': 'feasible', 'objective': 1.0, 'kept': [1, 2], 'heads': [0]}))", "error",
     "do not describe tokens of 1..3"),
    ("print(json.dumps({'status': 'feasible', 'objective': 1.0, 'kept': [7], 'heads': [0]}))", "error",
     "do not describe tokens of 1..3"),
    ("print(json.dumps({'status': 'feasible', 'objective': 1.0, 'kept': [1]}))", "error", "gives kept without heads"),
    ("print(json.dumps({'status': 'feasible', 'objective': 1.0, 'kept': [1], 'heads': [0.5]}))", "error",
     "heads must be a list of integers"),
    ("print(json.dumps({'status': 'feasible', 'objective': 1.0, 'kept': [2, 1], 'heads': [0, 0]}))", "error",
     "is not increasing"),
    ("print(json.dumps({'status': 'feasible', 'objective': 'lots', 'kept': [1], 'heads': [0]}))", "error",
     "objective: expected a number, got 'lots'"),
    ("print(json.dumps({'status': 'feasible', 'kept': [1], 'heads': [0]}))", "error", "without its objective"),
    ("print(json.dumps({'status': 'unsupported', 'message': 'no sibling scores'}))", "unsupported",
     "no sibling scores"),
    ("print(json.dumps({'status': 'optimal', 'objective': 1.0, 'kept': [1, 3], 'heads': [0, -1]}))", "error",
     "the head -1 of kept token 3 is neither the root (0) nor a kept token"),
    ("print(json.dumps({'status': 'optimal', 'objective': 1.0, 'kept': [1, 3], 'heads': [0, 2]}))", "error",
     "the head 2 of kept token 3 is neither the root (0) nor a kept token"),
    ("print('{\"status\": \"feasible\", \"bound\": NaN}')", "error", "bound nan is not a finite number"),
    ("print('{\"status\": \"timeout\", \"objective\": NaN}')", "error", "objective nan is not a number"),
    ("print('{\"status\": \"feasible\", \"objective\": \"nan\"}')", "error", "objective 'nan' is not a number"),
    ("print(json.dumps({'status': 'feasible', 'bound': float('inf')}))", "error", "bound inf is not a finite number"),
]


@pytest.mark.parametrize(("body", "status", "says"), FAILURES, ids=[f[2][:30] for f in FAILURES])
def test_each_failure_is_classified_and_named(tmp_path: Path, body: str, status: str, says: str) -> None:
    path = python_program(tmp_path, "faulty", body)
    solution = compbench.get_solver(f"exec:{path}").solve(compbench.read_instance(EXAMPLE), time_limit=30)
    assert solution.status.value == status and says in solution.message
    if status == "error":
        assert solution.message.startswith(f"exec:{path}: ")
    if "debug" in body:
        assert solution.message.endswith("stderr: debug")


def test_a_program_that_cannot_be_started_is_an_error(tmp_path: Path) -> None:
    path = program(tmp_path, "no-shebang", "print('hi')\n")
    solution = compbench.get_solver(f"exec:{path}").solve(compbench.read_instance(EXAMPLE))
    assert solution.status.value == "error" and "cannot be run (Exec format error)" in solution.message


def test_a_hang_is_killed_at_the_limit_with_its_process_group(tmp_path: Path) -> None:
    solver = compbench.get_solver(f"exec:{program(tmp_path, 'hang.sh', HANG)}")
    started = time.monotonic()
    solution = solver.solve(compbench.read_instance(EXAMPLE), time_limit=1.0)
    assert time.monotonic() - started < 4.0
    assert solution.status.value == "timeout" and "killed after" in solution.message
    assert "time limit 1 s + 0.5 s grace" in solution.message
    shell, child = map(int, (tmp_path / "pids").read_text().split())
    assert gone(shell) and gone(child)
    assert group_members(shell) == []  # the program led its own process group: nothing of it is left running


def test_a_hang_under_the_worker_is_killed_with_it(tmp_path: Path) -> None:
    """``solve --time-limit``: the program runs inside the worker's process group; its overrun is still a timeout
    and leaves nothing running.  (It answers the worker's warm-up on a tiny problem, then hangs.)"""
    path = python_program(tmp_path, "hangs-later", textwrap.dedent('''
        if len(json.load(open(sys.argv[1]))["scores"]["arc"]) <= 5:
            print(json.dumps({"status": "unsupported"}))
            sys.exit()
        child = __import__("subprocess").Popen(["sleep", "120"])
        open(os.path.join(os.path.dirname(sys.argv[0]), "pids"), "w").write(f"{os.getpid()} {child.pid}")
        print("hanging", file=sys.stderr, flush=True)
        signal.pause()
    '''))
    problem = compbench.generate("gaussian", 6, seed=0, length=3)
    instance = tmp_path / "n6.json"
    compbench.write_instance(instance, problem)
    result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(instance), "--solver", f"exec:{path}",
                             "--time-limit", "3", "--json"], capture_output=True, text=True, timeout=120)
    record = json.loads(result.stdout)  # 3 s: time for the program to start and say so on a loaded machine
    assert record["status"] == "timeout" and "stderr: hanging" in record["message"], record
    assert all(gone(int(pid)) for pid in (tmp_path / "pids").read_text().split())


def test_brute_force_program_agrees_with_brute_force_in_check(tmp_path: Path) -> None:
    path = program(tmp_path, "bf", BRUTE_FORCE)
    status = main(["check", "gen:gaussian+integer-ties+forbidden:3-5:1:0:mixed", "--solvers",
                   f"exec:{path},brute-force", "--time-limit", "30", "--repro-dir", str(tmp_path / "repro"),
                   "--out", str(tmp_path / "check.jsonl")])
    assert status == 0
    results = [r for r in read_records(tmp_path / "check.jsonl") if r["type"] == "result"]
    mine = [r for r in results if r["solver"] == f"exec:{path}"]
    assert len(mine) == len(results) // 2 and all(r["validity"] == "ok" for r in mine)
    assert {r["status"] for r in mine} <= {"optimal", "infeasible"}


def test_brute_force_program_passes_the_conformance_kit(tmp_path: Path) -> None:
    from compbench.testing import check_solver

    check_solver(f"exec:{program(tmp_path, 'bf', BRUTE_FORCE)}", max_n=4, max_examples=25, seed=0, exact=True)


def test_sibling_scores_reach_the_program(tmp_path: Path) -> None:
    """A second-order problem is run, not refused: the program gets scores.sibling (the nonzero triples) and, with
    them, finds the optimum the built-in brute force finds."""
    solver = compbench.get_solver(f"exec:{program(tmp_path, 'bf', BRUTE_FORCE)}")
    assert solver.supports.second_order and not solver.supports.all_lengths
    oracle = compbench.get_solver("brute-force")
    for seed in range(4):
        problem = compbench.generate("gaussian", 4, seed=seed, length=None if seed % 2 else 2, second_order=True,
                                     single_root=seed >= 2)
        solution, best = solver.solve(problem), oracle.solve(problem)
        assert solution.status.value == best.status.value == "optimal", solution.message
        assert judge(problem, solution) == "ok" and solution.objective == pytest.approx(best.objective)
    seen = python_program(tmp_path, "seen", "p = json.load(open(sys.argv[1]))\n"
                                            "print(json.dumps({'status': 'unsupported', "
                                            "'message': ' '.join(p['scores'])}))")
    answer = compbench.get_solver(f"exec:{seen}").solve(compbench.generate("gaussian", 4, seed=0, second_order=True))
    assert answer.status.value == "unsupported" and answer.message == "token arc bigram sibling"


def test_bench_records_an_exec_solver_under_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program(tmp_path, "bf", BRUTE_FORCE)
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "--instances", "gen:gaussian:4-5:1", "--solvers", "exec:./bf,brute-force",
                 "--time-limit", "30", "--out", "run.jsonl"]) == 0
    results = [r for r in read_records(tmp_path / "run.jsonl") if r["type"] == "result"]
    mine = [r for r in results if r["solver"] == "exec:./bf"]
    assert len(mine) == 2 and all(r["status"] == "optimal" and r["validity"] == "ok" for r in mine)
    assert len(results) == 4
    assert main(["report", "run.jsonl", "--out", "report"]) == 0
    readme = (tmp_path / "report" / "README.md").read_text()
    assert "| exec:./bf | yes |" in readme
    sha256 = hashlib.sha256((tmp_path / "bf").read_bytes()).hexdigest()
    assert f"| exec:./bf | program `{tmp_path / 'bf'}` | `{sha256}` |" in readme  # the program the name resolved to


def test_the_readme_exec_example_runs(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    blocks = [block for block in re.findall(r"```python\n(.*?)```", readme, flags=re.S)
              if block.startswith("#!/usr/bin/env python3")]
    assert len(blocks) == 1, "README.md has one exec example (a python block starting with a #! line)"
    assert "compbench" not in blocks[0]
    path = program(tmp_path, "my-solver", blocks[0])
    result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(EXAMPLE), "--solver", f"exec:{path}",
                             "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "feasible"
    solver = compbench.get_solver(f"exec:{path}")
    for seed in range(6):  # valid (or honestly unsupported / none found) on every kind of problem
        for problem in (compbench.generate("forbidden", 5, seed=seed, length=2, single_root=seed % 2 == 0),
                        compbench.generate("gaussian", 4, seed=seed, length=None, second_order=seed % 3 == 0)):
            solution = solver.solve(problem)
            assert solution.status.value in ("feasible", "unsupported") and judge(problem, solution) == "ok"
    # the conformance kit holds a program to its claims: this one proves nothing and declines sibling scores (it
    # failed 'status feasible, expected optimal' and 'unsupported'), and with exact=True it must prove
    from compbench.testing import assert_conforms, check_solver

    check_solver(f"exec:{path}", max_n=4, max_examples=15, seed=1)
    with pytest.raises(AssertionError, match="status feasible, expected optimal"):
        assert_conforms(solver, compbench.generate("gaussian", 4, seed=0, length=2), exact=True)
    # held to proofs, a program still declines what it lacks; one that declines everything solves nothing
    assert_conforms(solver, compbench.generate("gaussian", 3, seed=0, second_order=True), exact=True)
    never = program(tmp_path, "never", '#!/bin/sh\necho \'{"status": "unsupported"}\'\n')
    with pytest.raises(AssertionError, match="gave no solution on any of the"):
        check_solver(f"exec:{never}", max_n=4, max_examples=20, seed=0)


def test_the_memory_limit_holds_under_the_worker(tmp_path: Path) -> None:
    path = python_program(tmp_path, "greedy-for-memory", "block = bytearray(1 << 30)\nprint('{}')")
    result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(EXAMPLE), "--solver", f"exec:{path}",
                             "--time-limit", "20", "--memory-limit", "300", "--json"],
                            capture_output=True, text=True, timeout=120)
    record = json.loads(result.stdout)
    assert record["status"] == "error" and "exited with status 1 (its address space is capped at 300 MiB)" in \
        record["message"] and record["message"].endswith("MemoryError")


def test_a_lying_program_alone_is_caught_by_the_certified_optima(tmp_path: Path, capsys: pytest.CaptureFixture
                                                                 ) -> None:
    """TRIVIAL keeps token 1 and (here) claims it optimal: run alone on a free-length set that ships certified
    optima, every claim that is not the optimum is a FAIL against the certified value, and the exit status is 1."""
    path = program(tmp_path, "liar", TRIVIAL.replace('"status": "feasible"', '"status": "optimal"'))
    status = main(["check", str(ROOT / "instances" / "small-integer-ties-n8-free.jsonl"), "--solvers", f"exec:{path}",
                   "--time-limit", "30", "--repro-dir", str(tmp_path / "repro")])
    out = capsys.readouterr().out
    assert status == 1
    assert out.count(f"FAIL exec:{path}") >= 20 and "certified, small-integer-ties-n8-free.solu.json" in out
    assert "compared: 30 of 30 instances" in out


def test_a_bound_below_the_answers_own_value_or_nan_is_invalid() -> None:
    from compbench.agreement import validate

    problem = compbench.read_instance(EXAMPLE)  # the optimum 5.35 keeps "Production closed"
    best = compbench.get_solver("resource-dp").solve(problem)
    assert validate(problem, best) == "ok"
    best.bound = best.objective - 1.0
    assert validate(problem, best).startswith("invalid: bound 4.35")
    best.bound = float("nan")
    assert validate(problem, best) == "invalid: the bound is NaN"
    best.bound, best.objective = None, None
    assert validate(problem, best) == "invalid: a solution without its objective"


def test_endless_output_is_cut_at_the_cap_without_a_time_limit(tmp_path: Path) -> None:
    """`yes` prints forever: the capture stops at its cap in memory (nothing on disk), the program is killed there
    and the answer is an error naming the cap, with no time limit to end it."""
    path = program(tmp_path, "endless", "#!/bin/sh\nexec yes\n")
    started = time.perf_counter()
    solution = compbench.get_solver(f"exec:{path}").solve(compbench.read_instance(EXAMPLE))
    assert solution.status.value == "error" and "printed more than 64 MiB on stdout (killed there)" in solution.message
    assert time.perf_counter() - started < 30


def test_a_missing_interpreter_is_named(tmp_path: Path) -> None:
    path = program(tmp_path, "no-interpreter", "#!/no/such/python3\nprint('hi')\n")
    solution = compbench.get_solver(f"exec:{path}").solve(compbench.read_instance(EXAMPLE))
    assert solution.status.value == "error"
    assert "its #! interpreter '/no/such/python3' was not found" in solution.message


def test_an_answer_with_a_huge_integer_or_deep_nesting_is_an_error_in_one_line(tmp_path: Path) -> None:
    for name, body in (("huge", "print(json.dumps({'status': 'feasible', 'objective': 1.0, 'kept': [10 ** 30], "
                                "'heads': [0]}))"),
                       ("deep", "print('[' * 100000 + ']' * 100000)")):
        path = python_program(tmp_path, name, body)
        solution = compbench.get_solver(f"exec:{path}").solve(compbench.read_instance(EXAMPLE))
        assert solution.status.value == "error" and "\n" not in solution.message, solution.message


def test_a_run_is_timed_to_its_exit_not_to_a_poll() -> None:
    """wait_for wakes when the program exits: Popen.wait(timeout) looks at 63.5, 113.5, 163.5, 213.5 ms (its sleeps
    double up to 50 ms), so a 0.17 s program was timed at 0.2135 s or later.  The least of five runs, below that
    first poll (a loaded machine can take tens of milliseconds to start a program)."""
    from compbench.external import wait_for

    times = []
    for _ in range(5):
        started = time.perf_counter()  # before the start: Popen returns once the program runs, maybe asleep already
        process = subprocess.Popen(["sleep", "0.17"])
        assert wait_for(process, 5.0) == 0
        times.append(time.perf_counter() - started)
    assert 0.17 <= min(times) < 0.2135
    process = subprocess.Popen(["sleep", "5"])
    started = time.perf_counter()
    assert wait_for(process, 0.2) is None and time.perf_counter() - started < 1.0  # still running at the timeout
    process.kill()
    assert process.wait() != 0


def test_an_answer_with_a_key_twice_is_an_error(tmp_path: Path) -> None:
    path = program(tmp_path, "twice", "#!/bin/sh\ncat > /dev/null\n"
                   "echo '{\"status\": \"infeasible\", \"status\": \"optimal\"}'\n")
    answer = compbench.get_solver(f"exec:{path}").solve(compbench.read_instance(EXAMPLE))
    assert answer.status == compbench.Status.ERROR and "key 'status' appears twice" in answer.message


def test_an_infeasible_answer_as_solve_json_prints_it_is_taken(tmp_path: Path) -> None:
    """compbench solve --json writes an infeasible problem's bound as "-inf"; an exec program passing that output
    on was an error ('bound '-inf' is not a finite number')."""
    path = program(tmp_path, "wrap.sh", f'#!/bin/sh\nexec {sys.executable} -m compbench solve "$1" --solver '
                                        'resource-dp --json\n')
    n = 2
    problem = compbench.Problem(np.zeros(n), np.full((n + 1, n + 1), -np.inf), np.zeros((n + 2, n + 2)), length=n)
    solution = compbench.get_solver(f"exec:{path}").solve(problem)
    assert solution.status == compbench.Status.INFEASIBLE, solution.message
    assert judge(problem, solution) == "ok"


def test_an_infinite_time_limit_is_none(tmp_path: Path) -> None:
    """time_limit=inf, which every built-in solver takes as none, made every exec solve an error (select's
    timestamp out of range) and would have set COMPBENCH_TIME_LIMIT=inf."""
    solver = compbench.get_solver(f"exec:{program(tmp_path, 'trivial', TRIVIAL)}")
    problem = compbench.read_instance(EXAMPLE).replace(length=compbench.Length.exact(1))
    for limit in (float("inf"), 1e300):
        solution = solver.solve(problem, time_limit=limit)
        assert solution.status == compbench.Status.FEASIBLE and solution.stats["limit"] is None, solution.message


def test_a_child_holding_the_pipes_or_a_large_answer_costs_no_time_under_the_worker(tmp_path: Path) -> None:
    """Under the worker (solve --time-limit) a program that left a child holding stdout and stderr had its answer
    read a second a pipe later: killed at the limit + grace, a timeout; a valid answer of 48 MB took the worker
    half a minute to read (each 64 KiB searched the whole buffer again).  Both answers now come in time."""
    problem = compbench.read_instance(EXAMPLE).replace(length=compbench.Length.exact(1))
    instance = tmp_path / "ex1.json"
    compbench.write_instance(instance, problem)
    forks = TRIVIAL.replace("print(json.dumps(", 'open(sys.argv[0] + ".pid", "w").write(str(__import__("subprocess")'
                                                '.Popen(["sleep", "60"]).pid))\nprint(json.dumps(', 1)
    large = TRIVIAL.replace('"limit": os.environ.get("COMPBENCH_TIME_LIMIT")', '"pad": "x" * (48 << 20)')
    for name, text, limit in (("large", large, "8"), ("forks", forks, "1")):
        path = program(tmp_path, name, text)
        result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(instance), "--solver",
                                 f"exec:{path}", "--time-limit", limit, "--json"], capture_output=True, timeout=120)
        record = json.loads(result.stdout)
        assert record["status"] == "feasible", (name, record.get("message"))
    os.kill(int(Path(f"{tmp_path / 'forks'}.pid").read_text()), 9)


def test_stats_nested_deep_are_cut_not_the_answer(tmp_path: Path) -> None:
    """An answer whose stats nest 500 levels (valid JSON) became an error in the worker (RecursionError while
    recording it): its stats are cut at compbench.records.STATS_DEPTH and the answer stands."""
    problem = compbench.read_instance(EXAMPLE).replace(length=compbench.Length.exact(1))
    instance = tmp_path / "ex1.json"
    compbench.write_instance(instance, problem)
    path = program(tmp_path, "deep", TRIVIAL.replace('"limit": os.environ.get("COMPBENCH_TIME_LIMIT")',
                                                     '"deep": json.loads("[" * 500 + "]" * 500)'))
    result = subprocess.run([sys.executable, "-m", "compbench", "solve", str(instance), "--solver", f"exec:{path}",
                             "--json"], capture_output=True, timeout=120)
    record = json.loads(result.stdout)
    assert record["status"] == "feasible", record.get("message")
    from compbench.records import json_safe

    assert "cut: nested deeper than 32 levels" in json.dumps(json_safe({"deep": json.loads("[" * 500 + "]" * 500)}))
