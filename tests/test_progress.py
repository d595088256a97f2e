"""Progress on stderr (compbench.progress): never on stdout, silenced by --quiet, early in long commands; and a command
line that starts without numpy and numba."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import compbench
from compbench import progress
from compbench.cli import main

from .test_parser import write_treebank

BAR_MARKS = ("\r", "it/s", "instance/s", "%|", "instances:")


def imported_modules(*argv: str) -> set[str]:
    """The modules ``python -m compbench ARGV`` imports (from -X importtime)."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "compbench", *argv], capture_output=True,
                            text=True, timeout=300)
    return {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}


def test_help_imports_neither_numpy_nor_numba() -> None:
    modules = imported_modules("--help")
    assert "compbench.cli" in modules
    assert not {"numpy", "numba", "tqdm", "matplotlib"} & modules


def test_solve_imports_only_what_it_needs() -> None:
    modules = imported_modules("solve", str(Path(__file__).parent.parent / "instances" / "ex1.json"))
    assert "numba" in modules  # the DP's kernels
    assert not {"matplotlib", "compbench_solvers.ilp.catalog", "compbench.harness.check", "compbench.harness.plots",
                "compbench.compression.accuracy"} & modules


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bars and stage lines show at once off a terminal (as they do after LOG_DELAY / STAGE_DELAY seconds)."""
    monkeypatch.setattr(progress, "LOG_DELAY", 0.0)
    monkeypatch.setattr(progress, "STAGE_DELAY", 0.0)
    monkeypatch.delenv(progress.QUIET, raising=False)


def three_instances(tmp_path: Path) -> Path:
    path = tmp_path / "three.jsonl"
    compbench.write_instances(path, compbench.generate_set("gaussian", 5, 3, seed=0, length_ratio=0.5))
    return path


def test_a_bar_goes_to_stderr_and_never_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture, logged) -> None:
    assert main(["solve", str(three_instances(tmp_path)), "--json"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 3 and not any(mark in captured.out for mark in BAR_MARKS)
    lines = captured.err.splitlines()  # off a terminal: whole lines, the first and the last
    assert lines[0].startswith("instances: 0/3") and lines[-1].startswith("instances: 3/3"), lines
    assert "\r" not in captured.err


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_silences_progress(tmp_path: Path, capsys: pytest.CaptureFixture, logged, where: str) -> None:
    argv = ["solve", str(three_instances(tmp_path)), "--json"]
    assert main(["--quiet", *argv] if where == "before" else [*argv, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and len(captured.out.splitlines()) == 3
    assert not progress.quiet()  # the switch ends with the command


def test_quiet_reaches_the_processes_a_command_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(progress.QUIET, raising=False)
    with progress.quieted():
        child = subprocess.run([sys.executable, "-c", "from compbench import progress; print(progress.quiet())"],
                               capture_output=True, text=True, timeout=120)
    assert child.stdout.strip() == "True"


def test_parser_training_shows_the_tagger_before_the_first_epoch(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                  logged) -> None:
    treebank = write_treebank(tmp_path / "tb", {"train": 12, "dev": 3, "test": 3})
    assert main(["parser", "train", "--treebank", str(treebank), "--out", str(tmp_path / "p.npz"), "--epochs", "1",
                 "--tagger-epochs", "2", "--tagger-seeds", "2", "--folds", "2", "--label-epochs", "1"]) == 0
    captured = capsys.readouterr()
    err = captured.err
    first_epoch = err.index("epoch 1:")
    for early in ("compbench: training the POS tagger", "tagger, 2 epochs: ", "tagger seeds: 2/2",
                  "compbench: jackknifing", "jackknife folds: 2/2"):
        assert 0 <= err.find(early) < first_epoch, (early, err)
    assert "wrote" in captured.out and not any(mark in captured.out for mark in BAR_MARKS)


def test_a_quick_error_is_one_line_without_stage_lines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    treebank = tmp_path / "none"
    treebank.mkdir()
    assert main(["parser", "train", "--treebank", str(treebank), "--out", str(tmp_path / "p.npz")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_quick_command_off_a_terminal_prints_no_progress(capsys: pytest.CaptureFixture) -> None:
    """warm-up drew its bar at once ('warm-up: 0/2 (0%) ...') through the postfix it set: a command that ends
    within the bars' delay prints no progress line."""
    from compbench import progress

    bar = progress.bar(total=2, desc="quick", unit="step")
    bar.set_postfix_str("resource-dp")
    bar.update(2)
    bar.close()
    assert "quick" not in capsys.readouterr().err
