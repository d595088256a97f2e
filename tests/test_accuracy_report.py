"""The accuracy report's command (compbench accuracy-report): which steps are stale, and where its tables go."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compbench.cli import accuracy_report as report
from compbench.cli import main
from compbench.cli.common import UsageError


def touch(path: Path, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    os.utime(path, (mtime, mtime))
    return path


def test_a_model_over_the_parser_is_stale_when_the_parser_is_newer(tmp_path: Path) -> None:
    models, out = tmp_path / "models", tmp_path / "out"
    plan = {name: (inputs, outputs) for name, _, inputs, outputs
            in report.steps(tmp_path / "data", models, out, ["google"], [s for s, _, _ in report.SYSTEMS[1:]])}
    every_output = [p for _, outputs in plan.values() for p in outputs]
    for path in every_output:
        touch(path, 2000.0)
    assert not any(report.stale(*plan[name]) for name in plan)
    touch(models / report.PARSER, 3000.0)  # the parser retrained: what reads it must run again
    stale = {name for name in plan if report.stale(*plan[name])}
    assert {"google/subtree", "google/joint-parsed", "parser-evaluate-dev", "parser-evaluate-test"} <= stale
    assert not stale & {"google/bigram", "google/chain-crf", "google/joint-crf", "google/joint-perceptron"}
    touch(models / "google-bigram.npz", 3000.0)  # a baseline retrained: the evaluations that hold it run again
    assert report.stale(*plan["google/evaluate-joint-parsed-test-gold"])
    assert not report.stale(*plan["google/evaluate-joint-crf-test-gold"])
    every_output[0].unlink()
    assert report.stale(*plan[next(n for n, (_, o) in plan.items() if every_output[0] in o)])
    (models / "google-chain-crf.npz").unlink()  # an input gone: the step runs (and names it) instead of standing
    assert report.stale(*plan["google/evaluate-joint-parsed-test-gold"])


def test_a_step_runs_again_when_its_data_changes(tmp_path: Path) -> None:
    """The corpora and the treebank were no input of any step: a changed corpus mixed old models and dev results
    with test results on the new file."""
    data = tmp_path / "data"
    corpus = touch(data / "clarke-lapata-written" / "written.jsonl", 1000.0)
    treebank = touch(data / "ud-english-ewt" / "en_ewt-ud-train.conllu", 1000.0)
    touch(data / report.GOOGLE / "google.csv", 1000.0)
    plan = {name: (inputs, outputs) for name, _, inputs, outputs
            in report.steps(data, tmp_path / "models", tmp_path / "out", ["clarke-lapata-written"],
                            ["joint-perceptron"])}
    for inputs, outputs in plan.values():
        for path in outputs:
            touch(path, 2000.0)
        for path in inputs:
            if not path.exists():
                touch(path, 1500.0)
    assert not any(report.stale(*plan[name]) for name in plan)
    touch(corpus, 3000.0)
    stale = {name for name in plan if report.stale(*plan[name])}
    assert stale == {name for name in plan if name.startswith("clarke-lapata-written/")} and stale
    touch(corpus, 1000.0)
    touch(treebank, 3000.0)
    assert {name for name in plan if report.stale(*plan[name])} == {"parser", "parser-evaluate-dev",
                                                                   "parser-evaluate-test"}
    touch(treebank, 1000.0)
    steps = {name: (command, inputs, outputs) for name, command, inputs, outputs in report.steps(
        data, tmp_path / "models", tmp_path / "out", ["clarke-lapata-written"], ["joint-perceptron"])}
    done = {name: {"command": report.shown(command), "inputs": report.input_files(inputs)}
            for name, (command, inputs, _) in steps.items()}
    assert not any(report.must_run(name, *steps[name], done) for name in steps)
    corpus.write_text("another corpus, copied in with its old date")  # tar -x, cp -p, rsync -t
    os.utime(corpus, (1000.0, 1000.0))
    assert not any(report.stale(*plan[name]) for name in plan)  # the dates alone say nothing
    steps = {name: (command, inputs, outputs) for name, command, inputs, outputs in report.steps(
        data, tmp_path / "models", tmp_path / "out", ["clarke-lapata-written"], ["joint-perceptron"])}
    assert {name for name in steps if report.must_run(name, *steps[name], done)} == {
        name for name in steps if name.startswith("clarke-lapata-written/")}


def test_a_step_runs_again_when_its_options_change_but_not_its_number_of_jobs(tmp_path: Path) -> None:
    plan = {name: (command, inputs, outputs) for name, command, inputs, outputs
            in report.steps(tmp_path / "data", tmp_path / "models", tmp_path / "out", ["google"],
                         [s for s, _, _ in report.SYSTEMS[1:]])}
    for _, _, outputs in plan.values():
        for path in outputs:
            touch(path, 2000.0)
    done = {name: {"command": report.shown(command)} for name, (command, _, _) in plan.items()}
    assert not any(report.must_run(name, *plan[name], done) for name in plan)
    parser = plan["parser"][0]
    assert "--jobs" in parser and report.must_run("parser", [*parser, "--seed", "1"], *plan["parser"][1:], done)
    jobs = parser.index("--jobs") + 1
    assert not report.must_run("parser", [*parser[:jobs], "1", *parser[jobs + 1:]], *plan["parser"][1:], done)
    assert report.must_run("parser", *plan["parser"], {})  # never recorded: it runs


def test_retraining_a_baseline_alone_evaluates_it_again(tmp_path: Path) -> None:
    names = [name for name, *_ in report.steps(tmp_path, tmp_path, tmp_path, ["google"], ["bigram"])]
    assert "google/bigram" in names and "google/evaluate-joint-parsed-test-gold" in names
    assert "google/joint-parsed" not in names and "google/evaluate-joint-crf-test-gold" not in names


@pytest.mark.parametrize("before", ["", "# Report\n\nprose\n"])
def test_tables_go_between_the_markers_and_replace_the_old_ones(tmp_path: Path, before: str) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(before)
    report.write_between_markers(readme, "| old |\n")
    readme.write_text(readme.read_text() + "\nafter\n")
    report.write_between_markers(readme, "| new |\n")
    text = readme.read_text()
    assert text.startswith(before) and text.endswith("\nafter\n")
    assert "| new |" in text and "| old |" not in text and text.count(report.BEGIN) == 1


@pytest.mark.parametrize("broken", [f"{report.BEGIN}\nno end\n", f"{report.END}\n{report.BEGIN}\n"])
def test_a_lone_or_misordered_marker_is_refused(tmp_path: Path, broken: str) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(broken)
    with pytest.raises(UsageError, match="marker"):
        report.write_between_markers(readme, "| table |\n")
    assert readme.read_text() == broken


def test_the_command_writes_the_tables_from_what_exists(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    summarize = ["accuracy-report", "--data", str(tmp_path / "none"), "--models", str(tmp_path / "models"),
                 "--out", str(out), "--corpora", "google", "--summary-only"]
    assert main(summarize) == 2  # nothing to summarize: no table of dashes
    assert "no evaluation results of google in it" in capsys.readouterr().err and not out.exists()
    out.mkdir()
    (out / "google-test-gold-joint-parsed.json").write_text(
        '{"systems": {"first-m": {"f1": 0.5, "compression_rate": 0.4}}}')
    assert main(summarize) == 0
    text = (out / "README.md").read_text()
    assert report.BEGIN in text and "| first-m | 0.500 / - |" in text and (out / "f1-gold-length.png").exists()
    (out / "google-test-gold-joint-parsed.json").write_text('{"systems": ')
    assert main(summarize) == 2
    assert "google-test-gold-joint-parsed.json: not an evaluation file" in capsys.readouterr().err
    assert main(["accuracy-report", "--data", str(tmp_path / "none"), "--models", str(tmp_path / "models"),
                 "--out", str(out)]) == 2
    assert "no ud-english-ewt" in capsys.readouterr().err


@pytest.mark.parametrize("evaluation, runs, says", [
    ('{"systems": {"first-m": {"f1": "abc"}}}', None, "systems.first-m.f1: expected a number, got 'abc'"),
    ('{"systems": {"first-m": {"f1": 0.5, "compression_rate": 0.4, "f1_per_sentence": [0.5, null]}}}', None,
     "systems.first-m.f1_per_sentence: expected a list of numbers"),
    ('{"systems": {"first-m": {"f1": true}}}', None, "systems.first-m.f1: expected a number, got True"),
    ('{"systems": {"first-m": {"f1": 0.5, "compression_rate": 0.4}}}', '{"google/bigram": {"seconds": 3}}',
     "runs.json: google/bigram: expected command"),
    ('{"systems": {"first-m": {"f1": 0.5, "compression_rate": 0.4}}}', '[1, 2',
     "runs.json: cannot read the record of the steps"),
    ('{"systems": {"first-m": {"f1": 0.5}}}', None, "systems.first-m.compression_rate: expected a number beside f1"),
    ('[1, 2]', None, "not an evaluation file"),
    ('{"systems": {"a": {"f1": 0.5, "compression_rate": 0.4, "failed": 1, "answered_f1": 0.3}}}', None,
     "systems.a.answered_sentences: expected a number beside failed and answered_f1"),
])
def test_a_damaged_result_is_one_line_naming_the_file_and_the_field(tmp_path: Path, capsys, evaluation: str,
                                                                     runs: str | None, says: str) -> None:
    """A figure the tables read is a number (a string raised ValueError with a traceback), and the README and the
    figure are left as they were."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "google-test-gold-joint-parsed.json").write_text(evaluation)
    if runs is not None:
        (out / "runs.json").write_text(runs)
    (out / "README.md").write_text("before\n")
    assert main(["accuracy-report", "--data", str(tmp_path), "--out", str(out), "--corpora", "google",
                 "--summary-only"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and says in error[0] and "Traceback" not in error[0]
    assert (out / "README.md").read_text() == "before\n" and not (out / "f1-gold-length.png").exists()
