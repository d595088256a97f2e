"""Run files: what their header records, resume refusals, output faults (full disk, read-only directory, a second
writer), Dask's share of memory, the demo's output directory, and the edges a new user hits (one line, exit 2)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import compbench
from compbench.cli import main
from compbench.harness import runfiles
from compbench.harness.runfiles import RecordWriter, RunFileError, read_records
from compbench.harness.sweep import make_tasks, run_sweep, source_problems

BENCH = ["bench", "--sizes", "4", "--per-size", "1", "--kinds", "gaussian", "--solvers", "brute-force",
         "--time-limit", "5", "--memory-limit", "2048"]


def one_error_line(capsys: pytest.CaptureFixture) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_the_header_records_what_results_depend_on(tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    run_sweep(make_tasks(source_problems("gen:gaussian:4:1"), ["brute-force"], 30), run)
    header, result, verdict, end = read_records(run)
    assert [r["type"] for r in (header, result, verdict, end)] == ["environment", "result", "verdict", "end"]
    assert (verdict["verdict"], verdict["solved"]) == ("ok", False)  # brute force alone, no reference: unchecked
    assert header["compbench"] == compbench.__version__ == header["packages"]["compbench"]
    assert header["git"] is None or len(header["git"]["commit"]) == 40  # this checkout's commit, when run from one
    assert {"numpy", "numba", "highspy", "pulp", "ortools", "gurobipy"} <= set(header["packages"])
    assert header["packages"]["highspy"] and header["packages"]["numba"]
    assert header["cpu"] and header["cpu_count"] >= 1 and header["memory_mb"] > 0
    assert len(header["load_average"]) == 3 and len(end["load_average"]) == 3
    assert header["settings"]["sizes"] == [4] and header["settings"]["slots"] == 1
    assert end["counts"] == {"optimal": 1} and end["interrupted"] is False
    assert header["solver_distributions"]["brute-force"] == {"distribution": "compbench",
                                                             "version": compbench.__version__}
    assert header["solver_distributions"]["ilp-highs"]["distribution"] == "compbench"  # from the ilp* provider


def test_the_header_records_exec_programs_and_a_quoted_command(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "my solver.sh"
    program.write_text("#!/bin/sh\nexit 1\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["compbench", "bench", "--solvers", "exec:my solver.sh,exec:gone", "--out", "a&b"])
    header = runfiles.environment({"solvers": ["exec:my solver.sh", "exec:gone", "brute-force"]})
    assert header["command"] == "compbench bench --solvers 'exec:my solver.sh,exec:gone' --out 'a&b'"
    assert header["programs"] == {
        "exec:my solver.sh": {"path": str(program), "sha256": hashlib.sha256(program.read_bytes()).hexdigest()},
        "exec:gone": {"path": None, "sha256": None}}


def test_the_git_commit_is_fast_and_silent_without_git_or_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capfd: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git program
    started = time.monotonic()
    revision = runfiles.source_revision()
    assert revision is None or not (Path(compbench.__file__).parent.parent / ".git").exists()
    monkeypatch.setattr(compbench, "__file__", str(tmp_path / "site" / "compbench" / "__init__.py"))  # no checkout
    assert runfiles.source_revision() is None
    assert time.monotonic() - started < 10 and capfd.readouterr() == ("", "")


@pytest.mark.parametrize("field, value, says", [
    ("instance", ["x"], "instance: expected a string"), ("repeat", "x", "repeat: expected an integer"),
    ("n", "x", "n: expected an integer"), ("solver", None, "solver: expected a string"),
    ("packages", "x", "packages: expected an object"), ("command", [1], "command: expected a string"),
    ("git", "x", "git: expected {commit, dirty}"), ("memory_mb", "a", "memory_mb: expected a number"),
    ("solver_distributions", {"resource-dp": {"name": 5}}, "solver_distributions.resource-dp.distribution"),
    ("reference solver", [1], "solver: expected a string")])
def test_a_damaged_record_is_one_line_and_the_file_is_kept(field: str, value: Any, says: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """bench --resume crashed with a traceback on a result or environment record of the wrong type (after
    appending records), report on an environment or reference field of the wrong type."""
    run, bench = tmp_path / "run.jsonl", [*BENCH, "--per-size", "2"]
    assert main([*bench, "--out", str(run)]) == 0
    records = [r for r in read_records(run) if r["type"] not in ("verdict", "end")]
    records.remove([r for r in records if r["type"] == "result"][-1])  # one answer to go
    kind = {"instance": "result", "repeat": "result", "n": "result", "solver": "result"}.get(field, "environment")
    if field == "reference solver":
        kind, field = "reference", "solver"
    target = next(r for r in records if r["type"] == kind)
    target[field] = value
    run.write_text("".join(json.dumps(r) + "\n" for r in records))
    before = run.read_bytes()
    capsys.readouterr()
    assert main([*bench, "--out", str(run), "--resume"]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"compbench: error: {run}: {kind} record") and says in line, line
    assert run.read_bytes() == before  # nothing written
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 2
    assert says in one_error_line(capsys) and not (tmp_path / "report").exists()


@pytest.mark.parametrize("change", [["--solvers", "brute-force,hook-dp"], ["--sizes", "4,5"],
                                    ["--kinds", "gaussian,forbidden"], ["--time-limit", "6"],
                                    ["--memory-limit", "4096"], "version"])
def test_resume_refuses_a_different_run(change: list[str] | str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    assert main([*BENCH, "--out", str(run)]) == 0
    capsys.readouterr()
    command = [*BENCH, "--out", str(run), "--resume"]
    if change == "version":
        records = read_records(run)
        records[0]["compbench"] = "0.0.1"
        run.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        command += change
    before = run.read_bytes()
    assert main(command) == 2
    line = one_error_line(capsys)
    field = "compbench" if change == "version" else change[0][2:].replace("-", "_")
    assert line.startswith(f"compbench: error: {run}: ") and f"{field} " in line and "--force" in line, line
    assert run.read_bytes() == before  # nothing written
    assert main(command + ["--force"]) == 0  # mixed on purpose
    if run.read_bytes() == before:  # every answer recorded (a limit or the version differs): nothing appended
        assert change == "version" or change[0] in ("--time-limit", "--memory-limit")
    elif change != "version":  # the latest part is the one compared
        assert main([*BENCH, "--out", str(run), "--resume"]) == 2


def fake_disk(run: Path, room: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes to ``run`` fail once ``room`` more bytes are written: a short write, then ENOSPC."""
    real_write = os.write
    left = [room]

    def write(fd: int, data: bytes) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target != str(run):
            return real_write(fd, data)
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = real_write(fd, bytes(data[: left[0]]))
        left[0] -= written
        return written

    monkeypatch.setattr(os, "write", write)


@pytest.mark.parametrize("room", [0, 3000])
def test_a_full_disk_never_leaves_a_cut_off_line(room: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    fake_disk(run, room, monkeypatch)
    with pytest.raises(RunFileError, match=f"{run}: cannot write .*No space left on device"):
        run_sweep(make_tasks(source_problems("gen:gaussian:4:3"), ["brute-force"], 30), run)
    text = run.read_text()
    assert text == "" or text.endswith("\n")
    assert all(json.loads(line) for line in text.splitlines())
    pandas = pytest.importorskip("pandas")
    if text:
        assert len(pandas.read_json(run, lines=True)) == len(text.splitlines())
    run.unlink()
    fake_disk(run, room, monkeypatch)
    assert main([*BENCH, "--out", str(run)]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"compbench: error: {run}: cannot write") and "No space left on device" in line, line


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_a_read_only_directory_is_one_line(code: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture) -> None:
    # simulated (the tests may run as root, whom permissions do not stop): opening the run file fails
    run = tmp_path / "ro" / "run.jsonl"
    real_open = os.open

    def refuse(path: object, *args: object, **kwargs: object) -> int:
        if str(path).startswith(str(run.parent)):
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    for command in ([*BENCH, "--out", str(run)], ["check", "gen:gaussian:4:1", "--solvers", "brute-force",
                                                  "--out", str(run)]):
        assert main(command) == 2
        line = one_error_line(capsys)
        assert line == f"compbench: error: {run}: cannot write the run file ({os.strerror(code)})", line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_really_read_only_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    directory = tmp_path / "ro"
    directory.mkdir(mode=0o555)
    assert main([*BENCH, "--out", str(directory / "run.jsonl")]) == 2
    assert str(directory / "run.jsonl") in one_error_line(capsys)


def test_one_writer_per_run_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    assert main([*BENCH, "--out", str(run)]) == 0
    capsys.readouterr()
    before = run.read_bytes()
    holder = RecordWriter(run)  # another command writing it
    try:
        for command in ([*BENCH, "--out", str(run), "--resume"], [*BENCH, "--out", str(run), "--resume", "--force"],
                        ["check", "gen:gaussian:4:1", "--solvers", "brute-force", "--out", str(run)]):
            assert main(command) == 2
            assert "another compbench command is writing this run file" in one_error_line(capsys)
    finally:
        holder.close()
    assert run.read_bytes() == before
    assert main([*BENCH, "--out", str(run), "--resume"]) == 0  # free again


def test_dask_shares_memory_by_the_clusters_threads_and_leaves_no_scratch(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    distributed = pytest.importorskip("distributed")
    from compbench.limits import default_memory_limit

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the cluster's workers put their solve processes' scratch here
    run = tmp_path / "run.jsonl"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        assert main(["bench", "--sizes", "4,5", "--per-size", "2", "--solvers", "brute-force", "--time-limit", "20",
                     "--executor", "dask", "--scheduler", cluster.scheduler_address, "--out", str(run)]) == 0
        left = [p.name for p in scratch.glob("compbench-worker-*")]
        assert left == [], left  # closed while the cluster still runs
    header = read_records(run)[0]
    assert header["settings"]["slots"] == 2 and list(header["settings"]["workers"].values()) == [2]
    assert header["settings"]["memory_limit"] == default_memory_limit(2)
    assert {r["status"] for r in read_records(run) if r["type"] == "result"} == {"optimal"}


def test_demo_writes_where_nothing_tracked_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl"))
    assert main(["demo", "--quick", "--solvers", "brute-force", "--sizes", "4", "--time-limit", "20"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "compbench-demo" in lines[0] and "compbench-demo" in lines[-1], (lines[0], lines[-1])
    assert (tmp_path / "compbench-demo" / "README.md").is_file()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "mpl") == ["compbench-demo"]


def test_plot_and_report_refuse_what_is_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    instances = tmp_path / "set.jsonl"
    compbench.write_instances(instances, source_problems("gen:gaussian:4:1"))
    text, binary, empty_run = tmp_path / "notes.txt", tmp_path / "data.bin", tmp_path / "empty.jsonl"
    text.write_text("hello\n")
    binary.write_bytes(bytes(range(256)))
    empty_run.write_text(json.dumps(runfiles.environment({})) + "\n")
    for command in ("plot", "report"):
        for path, why in ((instances, "not a run file"), (text, "not a run file"), (binary, "not a run file"),
                          (empty_run, "an empty run")):
            assert main([command, str(path), "--out", str(tmp_path / "out")]) == 2
            line = one_error_line(capsys)
            assert line.startswith(f"compbench: error: {path}: {why}"), line
    assert not (tmp_path / "out").exists()


def test_out_naming_an_existing_file_or_directory(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    assert main([*BENCH, "--out", str(run)]) == 0
    capsys.readouterr()
    for command in ("plot", "report", "demo"):
        extra = [str(run)] if command != "demo" else ["--quick", "--solvers", "brute-force"]
        assert main([command, *extra, "--out", str(run)]) == 2
        what = {"plot": "plots"}.get(command, command)
        assert one_error_line(capsys) == f"compbench: error: {run}: is a file, expected a directory for the {what}"
    for command in ([*BENCH, "--out", str(tmp_path)], ["check", "gen:gaussian:4:1", "--out", str(tmp_path)]):
        assert main(command) == 2
        line = one_error_line(capsys)
        assert line == f"compbench: error: {tmp_path}: is a directory, expected a file for the run file", line


@pytest.mark.parametrize("limit", ["0", "-1", "nan", "inf"])
@pytest.mark.parametrize("command", [["solve", "x.json"], ["check", "gen:gaussian:4:1"], ["bench", "--out", "x"],
                                     ["demo"], ["evaluate", "--model", "m"]])
def test_time_limit_must_be_positive_everywhere(command: list[str], limit: str,
                                                capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command[0], "--time-limit", limit, *command[1:]])
    assert exited.value.code == 2
    line = one_error_line(capsys)
    assert line.startswith(f"compbench {command[0]}: error: argument --time-limit:") and limit in line, line



@pytest.mark.parametrize("name, content", [
    ("instance.json", json.dumps(compbench.io.problem_to_dict(compbench.generate("gaussian", 4, length=2))).encode()),
    ("notes.txt", b"my notes\nno newline at the end"),
    ("instances.npz", None),
])
def test_out_refuses_a_file_that_is_not_a_run_file_and_leaves_it_as_it_was(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture,
                                                                           name: str, content: bytes | None) -> None:
    target = tmp_path / name
    if content is None:
        compbench.io.write_instances(target, [compbench.generate("gaussian", 4, length=2)])
    else:
        target.write_bytes(content)
    before = target.read_bytes()
    assert main(["check", "gen:gaussian:4:1", "--solvers", "brute-force", "--time-limit", "30",
                 "--out", str(target)]) == 2
    assert "not a run file" in one_error_line(capsys) and target.read_bytes() == before


def test_out_appends_only_to_a_run_of_the_same_command_and_settings(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "check.jsonl"
    check = ["check", "gen:gaussian:4:1", "--time-limit", "30", "--out", str(run)]
    assert main([*check, "--solvers", "brute-force"]) == 0
    assert main([*check, "--solvers", "brute-force", "--resume"]) == 0  # the same check again: appended
    before = run.read_bytes()
    capsys.readouterr()
    assert main([*check, "--solvers", "resource-dp", "--resume"]) == 2
    assert "a run of other settings" in one_error_line(capsys) and run.read_bytes() == before
    bench = tmp_path / "bench.jsonl"
    assert main(BENCH + ["--out", str(bench)]) == 0
    before = bench.read_bytes()
    capsys.readouterr()
    assert main(BENCH + ["--out", str(bench), "--resume", "--length-ratio", "0.75"]) == 2  # same ids, other m
    assert "another instance than here" in one_error_line(capsys) and bench.read_bytes() == before
    assert main(["check", "gen:gaussian:4:1", "--solvers", "brute-force", "--time-limit", "30", "--out",
                 str(bench), "--resume"]) == 2  # a bench's run file is not a check's
    assert "a run of other settings" in one_error_line(capsys) and bench.read_bytes() == before


def test_a_run_file_records_its_format_and_an_unknown_one_is_refused(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    assert main(BENCH + ["--out", str(run)]) == 0
    records = read_records(run)
    assert records[0]["format"] == runfiles.RUN_FORMAT
    run.write_text(run.read_text().replace(runfiles.RUN_FORMAT, "compbench-run/99"))
    capsys.readouterr()
    assert main(BENCH + ["--out", str(run), "--resume"]) == 2
    assert "compbench-run/99" in one_error_line(capsys)


def test_a_run_file_deleted_during_the_run_is_an_error(tmp_path: Path) -> None:
    run = tmp_path / "out" / "run.jsonl"
    writer = RecordWriter(run)
    writer.write({"type": "environment", "format": runfiles.RUN_FORMAT})
    (tmp_path / "out" / "run.jsonl").unlink()
    (tmp_path / "out").rmdir()
    with pytest.raises(RunFileError, match="deleted during the run"):
        writer.write({"type": "result"})
    writer.close()


@pytest.mark.parametrize("command", ["report", "plot", "compare"])
@pytest.mark.parametrize("change, says", [
    (lambda r: {k: v for k, v in r.items() if k != "instance"}, "instance: expected a string"),
    (lambda r: {**r, "seconds": {"total": "fast"}}, "seconds.total: expected a number"),
    (lambda r: {**r, "seconds": {"total": float("nan")}}, "seconds.total: expected a number of seconds"),
    (lambda r: {**r, "seconds": {"total": -1.0}}, "seconds.total: expected a number of seconds"),
    (lambda r: {k: v for k, v in r.items() if k != "seconds"}, "seconds.total: missing"),
    (lambda r: {**r, "status": "winning"}, "status: expected one of"),
    (lambda r: {**r, "n": -3}, "n: expected a size >= 0"),
    (lambda r: {**r, "time_limit": float("inf")}, "time_limit: expected a number of seconds in (0, 1e+09]"),
    (lambda r: {**r, "time_limit": "5"}, "time_limit: expected a number of seconds in (0, 1e+09]"),
    (lambda r: {**r, "objective": "high"}, "objective: expected a number"),
    (lambda r: {**r, "kept": "abc"}, "kept: expected a list of integers"),  # compare said "agrees"
    (lambda r: {**r, "kept": [2, 1], "heads": [0, 2]}, "kept: expected increasing token positions"),
    (lambda r: {**r, "kept": [1, 2], "heads": [0]}, "heads: expected one head per kept token (2)"),
    (lambda r: {**r, "heads": [0, True]}, "heads: expected a list of integers"),
    (lambda r: {**r, "validity": 1}, "validity: expected a string"),
    (lambda r: {**r, "kind": 3}, "kind: expected a string, got 3"),  # these four raised tracebacks in the report
    (lambda r: {**r, "peak_memory_mb": "x"}, "peak_memory_mb: expected a number of MiB"),
    (lambda r: {**r, "time_limit": 1e308}, "time_limit: expected a number of seconds in (0, 1e+09]"),
    (lambda r: {**r, "seconds": {"total": 1e308}}, "seconds.total: expected a number of seconds in 0..1e+09"),
])
def test_readers_refuse_a_malformed_record_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture, command: str,
                                                       change, says: str) -> None:
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    assert main(BENCH + ["--out", str(good)]) == 0
    records = [json.loads(line) for line in good.read_text().splitlines()]
    bad.write_text("".join(json.dumps(change(r) if r["type"] == "result" else r) + "\n" for r in records))
    capsys.readouterr()
    argv = [command, str(bad), str(good)] if command == "compare" else [command, str(bad), "--out",
                                                                        str(tmp_path / "out")]
    assert main(argv) == 2
    assert says in one_error_line(capsys)


@pytest.mark.parametrize("command", ["report", "plot"])
def test_runs_holding_other_instances_under_one_id_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                               command: str) -> None:
    """Two benches of other length ratios name their instances alike: read together, each run's answers were judged
    against the other's reference (correct solvers disqualified) and one run's results dropped."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(BENCH + ["--out", str(a)]) == 0
    assert main(BENCH + ["--length-ratio", "0.3", "--out", str(b)]) == 0
    capsys.readouterr()
    assert main([command, str(a), str(b), "--out", str(tmp_path / "out")]) == 2
    assert f"{b} and {a} hold different instances under the id 'gaussian-n4-s0-0'" in one_error_line(capsys)
    assert main([command, str(a), str(a), "--out", str(tmp_path / "out")]) == 0  # the same instances: one set
    records = [json.loads(line) for line in a.read_text().splitlines()]
    b.write_text("".join(json.dumps({**r, "objective": r["objective"] + 1} if r["type"] == "reference" else r) + "\n"
                         for r in records))  # the same instances, another reference optimum: the last file's won
    capsys.readouterr()
    assert main([command, str(a), str(b), "--out", str(tmp_path / "out")]) == 2
    assert "hold different reference optima for 'gaussian-n4-s0-0'" in one_error_line(capsys)


@pytest.mark.parametrize("change, says", [
    (lambda r: {**r, "settings": "x"}, "environment record: settings: expected an object, got 'x'"),
    (lambda r: {**r, "programs": {"exec:x": 5}}, "environment record: programs.exec:x: expected an object"),
    (lambda r: {**r, "load_average": ["high"]}, "environment record: load_average: expected a list of numbers"),
])
def test_readers_refuse_a_malformed_environment_record(tmp_path: Path, capsys: pytest.CaptureFixture, change,
                                                       says: str) -> None:
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    assert main(BENCH + ["--out", str(good)]) == 0
    records = [json.loads(line) for line in good.read_text().splitlines()]
    bad.write_text("".join(json.dumps(change(r) if r["type"] == "environment" else r) + "\n" for r in records))
    capsys.readouterr()
    assert main(["report", str(bad), "--out", str(tmp_path / "out")]) == 2  # an AttributeError before
    assert f"{bad}: {says}" in one_error_line(capsys)


@pytest.mark.parametrize("change, says", [
    (lambda r: {**r, "objective": "abc"}, "objective: expected a number, got 'abc'"),  # the reference was dropped
    (lambda r: {**r, "objective": None}, "objective: expected a finite number with status optimal"),
    (lambda r: {**r, "status": "timeout"}, "status: expected optimal or infeasible"),
])
def test_readers_refuse_a_malformed_reference_record(tmp_path: Path, capsys: pytest.CaptureFixture, change,
                                                     says: str) -> None:
    """A reference record the judgement cannot read is refused, not left out (its answers were then judged against
    the best answer in the run, and the instance counted as not compared)."""
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    assert main(BENCH + ["--out", str(good)]) == 0
    records = [json.loads(line) for line in good.read_text().splitlines()]
    assert any(r["type"] == "reference" for r in records)
    bad.write_text("".join(json.dumps(change(r) if r["type"] == "reference" else r) + "\n" for r in records))
    capsys.readouterr()
    assert main(["report", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert f"{bad}: reference record of " in (line := one_error_line(capsys)) and says in line


@pytest.mark.parametrize("command", [["report", "{run}", "--out", "{tmp}/report"], ["plot", "{run}", "--out",
                                     "{tmp}/plots"], ["generate", "--n", "30", "--count", "300", "--out",
                                                      "{tmp}/big.jsonl", "--no-certify"]])
def test_a_write_refused_by_a_file_size_limit_is_one_line_naming_the_file(tmp_path: Path, command: list[str]) -> None:
    import resource
    import subprocess
    import sys

    run = tmp_path / "run.jsonl"
    assert main(BENCH + ["--out", str(run)]) == 0
    argv = [part.format(run=run, tmp=tmp_path) for part in command]
    limit = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (20 << 10, 20 << 10))  # noqa: E731
    done = subprocess.run([sys.executable, "-m", "compbench", *argv], capture_output=True, text=True,
                          preexec_fn=limit, timeout=300)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"compbench: error: {tmp_path}/") and "cannot write it (File too large)" in line
    assert not list(tmp_path.rglob(".*.partial*"))  # no temporary file left behind


def test_check_out_is_a_new_run_file_or_resumed_without_solving_twice(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "check.jsonl"
    check = ["check", "gen:gaussian:5:3", "--solvers", "resource-dp,brute-force", "--time-limit", "30",
             "--repro-dir", str(tmp_path / "r"), "--out", str(run)]
    assert main(check) == 0
    assert main(check) == 2  # the same file again: refused, not appended a second time
    assert "use --resume" in one_error_line(capsys)
    records = [json.loads(line) for line in run.read_text().splitlines()]
    kept = [r for r in records if r["type"] == "environment"] + [r for r in records if r["type"] == "result"][:2]
    run.write_text("".join(json.dumps(r) + "\n" for r in kept) + '{"type": "result", "inst')  # killed while writing
    assert main([*check, "--resume"]) == 0
    assert "compared: 3 of 3 instances" in capsys.readouterr().out
    records = read_records(run)
    results = [r for r in records if r["type"] == "result"]
    assert len(results) == 6 and results[:2] == kept[1:]  # the two recorded answers were not solved again
    assert len({(r["instance"], r["solver"]) for r in results}) == 6
    assert sum(r["type"] == "reference" for r in records) == 3
    assert records[-1]["type"] == "end" and not records[-1]["interrupted"] and records[-1]["counts"] == {"optimal": 4}
    # a finished check resumed: judged again from its answers, nothing solved, the file left byte for byte
    before = run.read_bytes()
    assert main([*check, "--resume"]) == 0
    assert "compared: 3 of 3 instances" in capsys.readouterr().out and run.read_bytes() == before
    # a file with an answer twice (an older compbench appended reruns): judged once; its references not written again
    run.write_text(run.read_text() + json.dumps(results[0]) + "\n")
    assert main([*check, "--resume"]) == 0
    out = capsys.readouterr().out
    assert "compared: 3 of 3 instances" in out and re.search(r"resource-dp( +\d+){8} +3\n", out), out
    assert sum(r["type"] == "reference" for r in read_records(run)) == 3
    # a damaged recorded answer: one line naming the file and the field, the file left as it was
    run.write_text(run.read_text() + json.dumps({**results[0], "status": "winning"}) + "\n")
    before = run.read_bytes()
    assert main([*check, "--resume"]) == 2
    assert f"{run}: result record of " in one_error_line(capsys) and run.read_bytes() == before


def test_a_cut_last_line_is_named_and_a_directory_is_no_run_file(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    run = tmp_path / "run.jsonl"
    assert main(BENCH + ["--out", str(run)]) == 0
    run.write_bytes(run.read_bytes() + b'{"type": "result", "instance": "x", "solver": "y"')
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    assert f"{run}: its last line is cut short" in one_error_line(capsys)
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "report")]) == 2
    assert f"{tmp_path}: is a directory, expected a run file" in one_error_line(capsys)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # it said "no such run file"
    assert main(["report", str(fifo), "--out", str(tmp_path / "report")]) == 2
    assert f"{fifo}: not a regular file (a pipe or a device)" in one_error_line(capsys)


def test_an_error_answer_without_times_is_read(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # the harness records a crashed worker's answer without seconds: report, plot and compare take it
    run = tmp_path / "run.jsonl"
    assert main(BENCH + ["--out", str(run)]) == 0
    records = [json.loads(line) for line in run.read_text().splitlines()]
    crashed = [{**{k: v for k, v in r.items() if k not in ("seconds", "heads", "kept", "bound")}, "status": "error",
                "objective": None,
                "message": "the worker died"} if r["type"] == "result" else r for r in records]
    run.write_text("".join(json.dumps(r) + "\n" for r in crashed))
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0


def test_resume_refuses_other_instances_and_a_checks_run_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """bench --resume --seed 1 added the new seed's instances to the old ones ("compared 8 of 4 instances"), and a
    check's run file was taken over by bench and pooled with its answers."""
    run = tmp_path / "run.jsonl"
    assert main([*BENCH, "--out", str(run)]) == 0
    capsys.readouterr()
    before = run.read_bytes()
    assert main([*BENCH, "--out", str(run), "--resume", "--seed", "1"]) == 2
    assert "instance(s) this command does not make" in one_error_line(capsys) and run.read_bytes() == before
    checked = tmp_path / "check.jsonl"
    assert main(["check", "gen:gaussian:4:2", "--solvers", "brute-force,resource-dp", "--out", str(checked)]) == 0
    capsys.readouterr()
    before = checked.read_bytes()
    assert main([*BENCH, "--out", str(checked), "--resume"]) == 2
    assert "it is the run file of a check of gen:gaussian:4:2" in one_error_line(capsys)
    assert checked.read_bytes() == before


def test_check_resume_refuses_an_edited_instance_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The instance file changed since the check began: resuming would file a second instance under the same id
    (bench refused this already; check appended it without a word)."""
    import dataclasses

    import compbench

    instances, run = tmp_path / "set.jsonl", tmp_path / "check.jsonl"
    problems = [compbench.generate("gaussian", n=4, seed=s) for s in range(2)]
    compbench.write_instances(instances, problems)
    check = ["check", str(instances), "--solvers", "resource-dp,brute-force", "--time-limit", "30", "--out", str(run)]
    assert main(check) == 0
    token = problems[0].token_scores.copy()
    token[0] += 1.0
    edited = dataclasses.replace(problems[0], token_scores=token)
    compbench.write_instances(instances, [edited, problems[1]])
    capsys.readouterr()
    before = run.read_bytes()
    assert main([*check, "--resume"]) == 2
    assert f"instance {edited.id} there is another instance than here" in one_error_line(capsys)
    assert run.read_bytes() == before


def test_report_does_not_write_over_a_readme_of_its_own_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """report --out . in a project replaced the project's README.md; an earlier report's folder is rewritten."""
    run, folder = tmp_path / "run.jsonl", tmp_path / "notes"
    assert main(BENCH + ["--out", str(run)]) == 0
    folder.mkdir()
    (folder / "README.md").write_text("my notes\n")
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(folder)]) == 2
    assert "README.md exists and is not an earlier report's" in one_error_line(capsys)
    assert (folder / "README.md").read_text() == "my notes\n" and sorted(p.name for p in folder.iterdir()) == [
        "README.md"]
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0  # its own earlier report


def test_a_record_cut_by_a_file_size_limit_says_so_and_leaves_the_file_whole(tmp_path: Path) -> None:
    """A short write always said 'No space left on device'; at a file size limit it is 'File too large'."""
    run = tmp_path / "run.jsonl"
    script = f"""
import resource
from compbench.harness.runfiles import RecordWriter, RunFileError
writer = RecordWriter({str(run)!r})
writer.write({{"type": "environment"}})
resource.setrlimit(resource.RLIMIT_FSIZE, (100, resource.RLIM_INFINITY))  # Python ignores SIGXFSZ: an OSError
try:
    writer.write({{"type": "result", "message": "x" * 300}})
except RunFileError as exc:
    print(exc)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "cannot write a record (File too large); the records before it are kept" in result.stdout, result.stderr
    assert run.read_text() == '{"type": "environment"}\n'


def test_a_fifo_as_out_is_refused_not_waited_on(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """bench --out FIFO waited for a reader forever, and its interrupt read the FIFO again: only SIGKILL ended it."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    assert main([*BENCH, "--out", str(fifo)]) == 2
    assert f"{fifo}: not a regular file (a pipe or a device)" in one_error_line(capsys)


def test_certified_optima_go_beside_the_file_a_link_names(tmp_path: Path) -> None:
    """generate --force --out LINK wrote the instances through the link and their optima beside the link: the real
    file's optima stayed the old set's."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link.jsonl"
    link.symlink_to(real / "a.jsonl")
    for seed in ("1", "2"):
        assert main(["generate", "--n", "4", "--count", "1", "--seed", seed, "--out", str(link), "--force"]) == 0
    assert (real / "a.solu.json").exists() and not (tmp_path / "link.solu.json").exists()
    assert main(["check", str(real / "a.jsonl"), "--solvers", "resource-dp"]) == 0
