"""The command line: solve (text, --json, curve), solvers, generate, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

import compbench
from compbench.cli import _command, build_parser, main
from tests.test_core import _issue_example

ENV = {**os.environ, "MPLCONFIGDIR": "/tmp/compbench-mpl"}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "compbench", *args], capture_output=True, text=True, env=ENV,
                          timeout=300)


@pytest.fixture
def example(tmp_path: Path) -> Path:
    path = tmp_path / "ex1.json"
    compbench.write_instance(path, _issue_example())
    return path


def test_solve_json_prints_exactly_the_documented_object(example: Path) -> None:
    result = run("solve", str(example), "--solver", "brute-force", "--json")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert set(record) == {"instance", "solver", "status", "objective", "kept", "heads", "bound", "seconds"}
    assert record["instance"] == "ex1" and record["solver"] == "brute-force" and record["status"] == "optimal"
    # Hand-checked in test_core: keep "Production closed", closed is the root's modifier, value 5.35.
    assert record["kept"] == [1, 3] and record["heads"] == [3, 0] and math.isclose(record["objective"], 5.35)
    assert math.isclose(record["bound"], 5.35) and record["seconds"]["total"] >= 0


def test_solve_text_shows_words_tree_and_curve(example: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["solve", str(example), "--solver", "brute-force", "--all-lengths"]) == 0
    out = capsys.readouterr().out
    assert "kept     2 of 3: Production closed" in out
    assert "Production<-closed  closed<-ROOT" in out
    assert "curve" in out and "Production was closed" in out


def test_length_overrides(example: Path, capsys: pytest.CaptureFixture) -> None:
    for args, count in ((["--length", "1"], 1), (["--min-length", "3", "--max-length", "3"], 3)):
        assert main(["solve", str(example), "--solver", "brute-force", "--json", *args]) == 0
        assert len(json.loads(capsys.readouterr().out)["kept"]) == count
    assert main(["solve", str(example), "--solver", "brute-force", "--json", "--free"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "optimal"


def test_generate_then_solve_every_instance(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "g.jsonl"
    assert main(["generate", "--kind", "integer-ties", "--n", "6", "--count", "3", "--seed", "4",
                 "--out", str(out)]) == 0
    problems = list(compbench.read_instances(out))
    assert [p.n for p in problems] == [6, 6, 6] and problems[0].length.min == 3
    capsys.readouterr()
    assert main(["solve", str(out), "--solver", "brute-force", "--json"]) == 0
    assert [json.loads(line)["status"] for line in capsys.readouterr().out.splitlines()] == ["optimal"] * 3


def test_solvers_lists_brute_force(capsys: pytest.CaptureFixture) -> None:
    assert main(["solvers", "--json"]) == 0
    names = {info["name"] for info in json.loads(capsys.readouterr().out)}
    assert "brute-force" in names


@pytest.mark.parametrize("args, message", [
    (["solve", "{missing}"], "cannot read"),
    (["solve", "{bad}"], "line 1: malformed JSON"),
    (["solve", "{example}", "--solver", "no-such-solver"], "no solver named 'no-such-solver'"),
    (["solve", "{example}", "--solver", "brute-force", "--length", "9"], "id ex1: length: 9 is outside 0..3"),
    (["solve", "{example}", "--min-length", "1"], "--min-length and --max-length go together"),
    (["generate", "--n", "5", "--length-ratio", "2", "--out", "{tmp}/x.jsonl"],
     "argument --length-ratio: must be a number in 0..1, got 2"),
    (["generate", "--n", "5", "--seed", "-1", "--out", "{tmp}/x.jsonl"], "argument --seed: must be an integer >= 0"),
    (["bench", "--sizes", "4", "--length-ratio", "nan", "--out", "{tmp}/r.jsonl"], "--length-ratio: must be a number"),
    (["bench", "--sizes", "4", "--skip-larger-after", "nan", "--out", "{tmp}/r.jsonl"], "--skip-larger-after: must"),
    (["bench", "--sizes", "4", "--grace", "-1", "--out", "{tmp}/r.jsonl"], "argument --grace: must be a number in 0..1e+06"),
    (["bench", "--sizes", "4", "--per-size", "0", "--out", "{tmp}/r.jsonl"], "--per-size: must be an integer >= 1"),
    (["bench", "--sizes", "4", "--solvers", "brute-force,brute-force", "--out", "{tmp}/r.jsonl"],
     "--solvers names brute-force more than once"),
    (["generate", "--n", "5", "--out", "{tmp}/gen.txt"], "gen.txt: unknown file type for the instances"),
    (["solve", "{example}", "--length", "2", "--min-length", "0", "--max-length", "3"], "one length condition each"),
    (["solve", "{example}", "--solver", "ilp-highs[tighten=true][x=1]"], "bad solver name"),
    (["solve", "{example}", "--time-limit", "1e7"], "argument --time-limit: must be a number of seconds in (0, 1e+06]"),
    (["check", "{example}", "--solvers", "resource-dp", "--memory-limit", "99999999999999999999"],
     "--memory-limit must be 64..1073741824 MiB"),
    (["bench", "--sizes", "4", "--kinds", "gaussian,gaussian", "--solvers", "resource-dp", "--out", "{tmp}/r.jsonl"],
     "kind gaussian given twice"),
    (["bench", "--sizes", "99999999", "--solvers", "resource-dp", "--out", "{tmp}/r.jsonl"], "not enough memory"),
    (["generate", "--n", "4", "--out", ""], "--out: an empty path"),
    (["solve", "{example}", "--solver", "ilp-highs[tighten=3]"], "'ilp-highs[tighten=3]': tighten must be true or false"),
    (["check", "gen:gaussian:1-5:1", "--solvers", "brute-force,resource-dp[bogus=1]"],
     "'resource-dp[bogus=1]': unknown options: bogus (takes: memory_limit)"),
    (["bench", "--sizes", "4", "--solvers", "bisection[max_iterations=0]", "--out", "{tmp}/r.jsonl"],
     "max_iterations must be a positive integer, got 0"),
    (["solve", "{example}", "--all-lengths", "--time-limit", "1"], "--time-limit and --memory-limit cannot be held"),
    (["check", "gen:gaussian:1-8:-2", "--solvers", "resource-dp"], "COUNT must be >= 1 and SEED >= 0"),
    (["check", "gen:gaussian:5:2:0:nan", "--solvers", "resource-dp"], "LENGTH is a ratio in 0..1"),
    (["plot", "{accuracy}", "--out", "{tmp}/p"], "accuracy.json: systems.a.compression_rate: expected a number"),
    (["certify", "gen:gaussian:4:1"], "gen:gaussian:4:1: certify takes an instance file"),
    (["report", "{bad}", "--shift", "0"], "argument --shift: must be a number in (0, 1e+06], got 0"),
    (["bench", "--instances", "{example}", "--sizes", "4", "--free", "--solvers", "resource-dp", "--out", "{tmp}/r"],
     "takes its instances as they are: --sizes, --free would be ignored"),
    (["demo", "--quick", "--sizes", "6:4", "--solvers", "resource-dp", "--out", "{tmp}/demo"], "6:4"),  # before the work
    (["train", "--data", "{tmp}", "--out", "{tmp}/m.npz", "--epochs", "0"], "--epochs: must be an integer >= 1"),
    # a writer replaces a file of its own kind only (a typo in --out overwrote an instance file with a model)
    (["train", "--corpus", "google", "--data", "{tmp}", "--out", "{example}"],
     "ex1.json exists and holds no compression model: it is left as it is"),
    (["parser", "train", "--treebank", "{tmp}", "--out", "{example}"], "exists and holds no parser model"),
    (["evaluate", "--corpus", "google", "--data", "{tmp}", "--model", "{tmp}/m.npz", "--json-out", "{example}"],
     "exists and holds no evaluation results"),
    (["certify", "{example}", "--out", "{bad}"], "bad.jsonl exists and holds no reference optima"),
    (["build-instances", "--corpus", "google", "--data", "{tmp}", "--model", "{tmp}/m.npz", "--out", "{example}"],
     "ex1.json exists (pass --force to overwrite it)"),
    (["train", "--data", "{tmp}", "--out", "{tmp}/m.npz", "--learning-rate", "0"], "must be a number > 0, got 0"),
    (["train", "--data", "{tmp}", "--out", "{tmp}/m.npz", "--l2", "nan"], "--l2: must be a number >= 0, got nan"),
    (["train", "--data", "{tmp}", "--out", "{tmp}/m.npz", "--max-n", "0"], "--max-n: must be an integer >= 1"),
    (["parser", "train", "--treebank", "{tmp}", "--out", "{tmp}/p.npz", "--tagger-epochs", "0"],
     "--tagger-epochs: must be an integer >= 1"),
    (["parser", "train", "--treebank", "{tmp}", "--out", "{tmp}/p.npz", "--max-step", "inf"],
     "--max-step: must be a number > 0, got inf"),
])
def test_bad_input_is_one_line_exit_2_no_traceback(tmp_path: Path, example: Path, args: list[str],
                                                   message: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    accuracy = tmp_path / "accuracy.json"  # an evaluate --json-out file without a rate: plot raised a KeyError
    accuracy.write_text('{"systems": {"a": {"f1": 0.5}}}')
    args = [a.format(missing=tmp_path / "none.json", bad=bad, example=example, tmp=tmp_path, accuracy=accuracy)
            for a in args]
    result = run(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def _commands(parser) -> set[str]:
    return set(next(a for a in parser._actions if a.dest == "command").choices)


def test_a_command_builds_only_the_parsers_up_to_its_own() -> None:
    every = _commands(build_parser())
    assert _commands(build_parser("solve")) == {"solve", "solvers", "warm-up", "generate"} < every
    assert _commands(build_parser("accuracy-report")) == _commands(build_parser("no-such-command")) == every
    assert _command(["--quiet", "solve", "x.json", "--solver", "hook-dp"]) == "solve"
    # the top-level help, the version and a missing command list every command
    assert _command(["-h", "solve"]) is _command(["--version"]) is _command(["--quiet"]) is None


def test_version_and_broken_pipe_end_quietly() -> None:
    assert run("--version").stdout.strip() == f"compbench {compbench.__version__}"
    piped = subprocess.run(f"{sys.executable} -m compbench solvers --json | head -1", shell=True, capture_output=True,
                           text=True, env=ENV, timeout=300)
    assert piped.stdout.strip() == "[" and "Traceback" not in piped.stderr and "Error" not in piped.stderr


def test_generate_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    out = tmp_path / "set.jsonl"
    assert run("generate", "--n", "4", "--out", str(out)).returncode == 0
    before = out.read_text()
    refused = run("generate", "--n", "5", "--out", str(out))
    assert refused.returncode == 2 and refused.stderr.strip() == f"compbench: error: {out} exists (pass --force to " \
                                                                 "overwrite it)"
    assert out.read_text() == before
    assert run("generate", "--n", "5", "--out", str(out), "--force").returncode == 0
    assert out.read_text() != before and not list(tmp_path.glob(".*partial*"))


def test_output_path_checked_before_work(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run("train", "--corpus", "google", "--data", str(tmp_path), "--out", str(blocker / "models" / "m.npz"))
    assert result.returncode == 2 and "cannot create its directory" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_solver_spec_with_options_runs_from_the_command_line(example: Path) -> None:
    result = run("solve", str(example), "--solver", "ilp-highs[tighten=true,settings.presolve=on]", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "optimal"
    bad = run("solve", str(example), "--solver", "ilp-highs[tighten]")
    assert bad.returncode == 2 and "expected key=value" in bad.stderr


def test_warm_up_reports_each_solver() -> None:
    result = run("warm-up", "--solvers", "brute-force,ilp-highs[tighten=true]")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == ["warm-up brute-force", "warm-up ilp-highs[tighten=true]",
                                                      "warm-up"]
    assert lines[-1].startswith("warm-up: 2 in ")  # the total


@pytest.mark.parametrize("content", [b"", b"not a zip file\n"])
@pytest.mark.parametrize("command", [["parser", "parse", "--model", "{model}", "{text}"],
                                     ["build-instances", "--corpus", "google", "--data", "{tmp}", "--model",
                                      "{model}", "--out", "{tmp}/out.jsonl"]])
def test_a_damaged_model_file_is_one_line_naming_it(tmp_path: Path, content: bytes, command: list[str]) -> None:
    model, text = tmp_path / "model.npz", tmp_path / "sentence.txt"
    model.write_bytes(content)
    text.write_text("The cat sat .\n")
    result = run(*[a.format(model=model, text=text, tmp=tmp_path) for a in command])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"compbench: error: {model}: not a ") and "model file" in line  # before the corpus is read


def test_warm_up_fails_for_a_solver_that_cannot_answer() -> None:
    bad = "ilp-highs[settings.presolve=banana]"  # a setting HiGHS refuses when it runs
    result = run("warm-up", "--solvers", f"brute-force,{bad}")
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("warm-up brute-force: ") and "FAILED" not in lines[0]
    assert f"FAILED: error: {bad}: HiGHS refused the setting presolve = 'banana'" in lines[1]
    assert lines[-1].endswith(f"1 failed: {bad}")


def test_warm_up_fails_for_an_answer_without_a_solution(tmp_path: Path) -> None:
    """A program answering 'feasible' and nothing else passed the warm-up: it checks nothing."""
    program = tmp_path / "feasible.sh"
    program.write_text("#!/bin/sh\necho '{\"status\": \"feasible\"}'\n")
    program.chmod(0o755)
    result = run("warm-up", "--solvers", f"exec:{program}")
    assert result.returncode == 1
    assert "FAILED: feasible without a solution to a problem that has one" in result.stdout


def test_certified_optima_stay_with_their_instance_file(tmp_path: Path) -> None:
    instances = tmp_path / "set.jsonl"
    assert run("generate", "--n", "5", "--count", "2", "--out", str(instances)).returncode == 0
    before = instances.read_bytes(), (tmp_path / "set.solu.json").read_bytes()
    refused = run("certify", str(instances), "--out", str(instances))  # the instances are not overwritten
    assert refused.returncode == 2 and "is the instance file itself" in refused.stderr
    refused = run("generate", "--n", "4", "--out", str(tmp_path / "set.json"))  # set.solu.json is set.jsonl's
    assert refused.returncode == 2 and "holds the certified optima of set.jsonl, not of set.json" in refused.stderr
    assert (instances.read_bytes(), (tmp_path / "set.solu.json").read_bytes()) == before
    assert not (tmp_path / "set.json").exists()


def test_solve_judges_instances_of_one_id_each_by_its_own_certified_optimum(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "dup.jsonl"
    compbench.write_instances(path, [compbench.generate("gaussian", 6, seed=s, length=3).replace(id="dup")
                                     for s in range(2)])
    assert main(["certify", str(path)]) == 0
    assert main(["solve", str(path), "--solver", "brute-force"]) == 0  # each its own optimum, not the last one's
    out = capsys.readouterr().out
    assert "dup#0" in out and "dup#1" in out


def test_solve_blames_a_certified_optimum_that_a_valid_tree_beats(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """A .solu.json whose optimum is 1 too low: solve said the right answer 'disagrees' with it (check sets such a
    certificate aside); it now says the certificate is refuted, still with exit status 1."""
    path = tmp_path / "low.jsonl"
    compbench.write_instances(path, [compbench.generate("gaussian", 6, seed=0, length=3)])
    assert main(["certify", str(path)]) == 0
    solu = tmp_path / "low.solu.json"
    optima = json.loads(solu.read_text())
    optima["optima"][0]["objective"] -= 1.0
    solu.write_text(json.dumps(optima))
    capsys.readouterr()
    assert main(["solve", str(path), "--solver", "resource-dp"]) == 1
    err = capsys.readouterr().err
    assert "refutes the certified optimum" in err and "the certificate is wrong" in err and "disagrees" not in err


def test_a_failed_write_of_instances_leaves_the_file_that_was_there(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    problem = compbench.generate("gaussian", 4, seed=1, length=2)
    compbench.write_instances(path, [problem] * 3)
    before = path.read_bytes()
    with pytest.raises(ValueError):
        compbench.write_instances(path, [problem, problem.replace(extra={"note": float("nan")})])
    with pytest.raises(compbench.InstanceError, match="extra.length: a field of the instance format"):
        compbench.write_instances(path, [problem.replace(extra={"length": 4})])  # it would be read back as another
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["set.jsonl"]


def test_generate_refuses_a_set_larger_than_memory_up_front(tmp_path: Path) -> None:
    """--count 1e11 grew to 10 GB over ten minutes before any message."""
    result = run("generate", "--n", "5", "--count", "100000000000", "--out", str(tmp_path / "g.jsonl"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "count: 100000000000 instance(s) of n = 5 need about" in line and "memory available" in line
    assert not (tmp_path / "g.jsonl").exists()


def test_a_write_through_a_symbolic_link_writes_its_target(tmp_path: Path) -> None:
    from compbench.files import atomic_output

    target, link = tmp_path / "target.jsonl", tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert run("generate", "--n", "5", "--out", str(link), "--no-certify").returncode == 0
    assert link.is_symlink() and len(list(compbench.read_instances(target))) == 1  # the link kept, its target written
    with pytest.raises(OSError, match="dangling.jsonl"):  # a dangling link's missing folder: named as given
        (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "none" / "t.jsonl")
        with atomic_output(tmp_path / "dangling.jsonl") as partial:
            partial.write_text("x")


def test_a_repro_is_whole_or_not_there_when_the_disk_fills(tmp_path: Path) -> None:
    script = f"""
import resource
import compbench
from compbench.agreement import Reference
from compbench.harness.check import write_repro
resource.setrlimit(resource.RLIMIT_FSIZE, (2048, resource.RLIM_INFINITY))  # Python ignores SIGXFSZ: an OSError
problem = compbench.generate("gaussian", 12, seed=1, length=4)
try:
    write_repro(__import__("pathlib").Path({str(tmp_path)!r}), problem, "x", "invalid", {{"status": "optimal"}}, None)
except OSError as exc:
    print("refused", exc.errno)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.startswith("refused"), result.stderr
    assert list(tmp_path.iterdir()) == []  # no truncated file (it had left 4096 bytes of JSON)


def test_two_writes_of_one_file_write_their_own_temporary_files(tmp_path: Path) -> None:
    from compbench.files import atomic_output

    with atomic_output(tmp_path / "x.jsonl") as first, atomic_output(tmp_path / "x.jsonl") as second:
        assert first != second and first.suffix == second.suffix == ".jsonl"
        first.write_text("first\n")
        second.write_text("second\n")
    assert (tmp_path / "x.jsonl").read_text() in ("first\n", "second\n")
    assert [p.name for p in tmp_path.iterdir()] == ["x.jsonl"]


def test_generate_refuses_a_ratio_with_free_and_report_a_baseline_with_no_results(tmp_path: Path) -> None:
    result = run("generate", "--n", "4", "--length-ratio", "0.5", "--free", "--out", str(tmp_path / "x.jsonl"))
    assert result.returncode == 2 and "--length-ratio and --free are two length conditions" in result.stderr
    assert not (tmp_path / "x.jsonl").exists()
    out = tmp_path / "run.jsonl"
    assert run("bench", "--sizes", "4", "--solvers", "resource-dp,brute-force", "--out", str(out)).returncode == 0
    for command in ("report", "plot"):
        result = run(command, str(out), "--baseline", "nosuch", "--out", str(tmp_path / command))
        assert result.returncode == 2 and "--baseline nosuch: no result of it in the run files" in result.stderr
        assert "brute-force, resource-dp" in result.stderr and not (tmp_path / command).exists()


def test_a_writer_replaces_a_file_of_its_own_kind(tmp_path: Path) -> None:
    """Models, parsers, evaluation results and certified optima are written over their own kind (a retrained model
    replaces the old one, as accuracy-report's steps do), never over another file."""
    import numpy as np

    from compbench.cli.common import UsageError, model_info, output_path
    from compbench.harness.accuracy_plot import read_accuracy
    from compbench.cli.certify import solu_table

    model, parser, other = tmp_path / "model.npz", tmp_path / "parser.npz", tmp_path / "other.npz"
    np.savez(model, info=np.array(json.dumps({"kind": "bigram"})), weight_index=np.zeros(0, np.int64))
    np.savez(parser, info=np.array(json.dumps({"kind": "parser"})))
    np.savez(other, meta=np.array("[]"))
    assert model_info(model) == {"kind": "bigram"} and model_info(other) is None
    assert model_info(tmp_path / "missing.npz") is None
    is_parser = lambda path: (model_info(path) or {}).get("kind") == "parser"  # noqa: E731
    assert output_path(parser, what="parser model", replaces=is_parser) == parser
    for path in (model, other):
        with pytest.raises(UsageError, match="holds no parser model"):
            output_path(path, what="parser model", replaces=is_parser)
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"corpus": "google", "systems": {}}))
    assert read_accuracy(results) is not None and read_accuracy(tmp_path / "missing.json") is None
    results.write_text("[1, 2]")
    assert read_accuracy(results) is None
    solu = tmp_path / "set.solu.json"
    solu.write_text(json.dumps({"format": "compbench-solu/1", "optima": []}))
    assert solu_table(solu) is not None and solu_table(results) is None
