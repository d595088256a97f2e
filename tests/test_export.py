"""compbench export: what HiGHS reads back from the written files has the certified optimum of every instance."""

from __future__ import annotations

import itertools
import json
import math
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import highspy
import numpy as np
import pytest

import compbench
from compbench import Length
from compbench.cli import main

LENGTHS = {"exact": 3, "range": Length(2, 4), "free": None}


def export_set(tmp_path: Path) -> Path:
    """Every kind (forbidden: −∞ scores), both root modes, every length mode, and an infeasible instance."""
    problems = [compbench.generate(kind, 6, seed=seed, length=length, single_root=single_root, index=i)
                for i, (kind, single_root, length, seed) in enumerate(itertools.product(
                    ("forbidden", "gaussian", "integer-ties"), (False, True), LENGTHS.values(), (1,)))]
    blocked = compbench.generate("gaussian", 4, seed=2, length=4)
    problems.append(blocked.replace(token_scores=np.array([0.0, -np.inf, 0.0, 0.0]), id="infeasible"))
    path = tmp_path / "set.jsonl"
    compbench.write_instances(path, problems)
    return path


def read_back(path: Path) -> tuple[str, float]:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.setOptionValue("mip_rel_gap", 0.0)
    h.run()
    return h.modelStatusToString(h.getModelStatus()), h.getInfo().objective_function_value


@pytest.mark.parametrize("formulation, fmt", list(itertools.product(("joint", "dp"), ("mps", "lp"))))
def test_exported_models_have_the_certified_optimum(tmp_path: Path, formulation: str, fmt: str) -> None:
    instances = export_set(tmp_path)
    out = tmp_path / "out"
    assert main(["export", str(instances), "--formulation", formulation, "--format", fmt, "--out", str(out)]) == 0
    index = json.loads((out / "index.json").read_text())
    problems = {p.id: p for p in compbench.read_instances(instances)}
    assert [entry["id"] for entry in index] == list(problems)
    for entry in index:
        expected = compbench.get_solver("brute-force").solve(problems[entry["id"]])
        status, value = read_back(out / entry["file"])
        if expected.status == compbench.Status.INFEASIBLE:
            assert entry["optimum"] is None and status == "Infeasible", entry
            continue
        assert status == "Optimal" and math.isclose(entry["optimum"], expected.objective, abs_tol=1e-9)
        assert math.isclose(entry["objective_scale"] * value + entry["objective_offset"], entry["optimum"],
                            rel_tol=1e-7, abs_tol=1e-7), entry
    text = (out / index[0]["file"]).read_text()
    assert ("one_head(" if formulation == "joint" else "skip(") in text  # readable row names


def test_export_refuses_to_overwrite_and_bad_sets_in_one_line(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["export", "gen:gaussian:4:1", "--out", str(out)]) == 0
    assert main(["export", "gen:gaussian:4:1", "--out", str(out)]) == 2
    assert "index.json exists (pass --force" in capsys.readouterr().err
    assert main(["export", "gen:gaussian:4:1", "--out", str(out), "--force"]) == 0
    assert main(["export", str(tmp_path / "missing.jsonl"), "--out", str(out), "--force"]) == 2
    capsys.readouterr()
    for index in ('[{"file": 5}]', '[{"file": ""}]', '[{"file": "../x.mps"}]', '{"file": "a.mps"}', "not json"):
        (out / "index.json").write_text(index)  # not an export's: --force raised a TypeError and lost both exports
        assert main(["export", "gen:gaussian:4:1", "--out", str(out), "--force"]) == 2
        assert "index.json: not the index of an export" in capsys.readouterr().err
        assert (out / "index.json").read_text() == index


def test_export_edges_names_files_of_no_export_and_rounding(tmp_path: Path, capsys) -> None:
    """An n = 0 infeasible problem's dp model (no column: HiGHS warned) aborted the export; two ids of one file name
    lost an earlier export; a file of no export was overwritten unasked; LP files read by CBC lost their integrality
    ('bin' and 'gen' sections); coefficients near 1e12 map back only within their 15 written digits."""
    problems = [compbench.Problem(np.zeros(0), np.full((1, 1), -np.inf), np.full((2, 2), -np.inf), id="allinf0"),
                compbench.generate("gaussian", 3, seed=1, length=2).replace(id="a/b")]
    problems.append(problems[1].replace(id=f"A_b-{__import__('hashlib').sha1(b'a/b').hexdigest()[:10]}"))
    big = compbench.generate("gaussian", 1, seed=1, length=1)
    problems.append(big.replace(token_scores=np.array([-591824244363.9456]), id="cancelling",
                                arc_scores=np.array([[-np.inf, 591824244364.5394], [-np.inf, -np.inf]])))
    path = tmp_path / "edges.jsonl"
    compbench.write_instances(path, problems)
    out = tmp_path / "out"
    out.mkdir()
    (out / "allinf0.lp").write_text("my own model\n")
    assert main(["export", str(path), "--formulation", "dp", "--format", "lp", "--out", str(out)]) == 2
    assert "allinf0.lp exists and no export's index names it" in capsys.readouterr().err
    assert (out / "allinf0.lp").read_text() == "my own model\n"
    assert main(["export", str(path), "--formulation", "dp", "--format", "lp", "--out", str(out), "--force"]) == 0
    index = json.loads((out / "index.json").read_text())
    assert len({entry["file"].lower() for entry in index}) == 4 and index[0]["optimum"] is None
    for entry in index:
        text = (out / entry["file"]).read_text()
        assert "\nbin\n" not in text and "\ngen\n" not in text and "\nsemi\n" not in text
        status, value = read_back(out / entry["file"])
        if entry["optimum"] is None:
            assert status == "Infeasible"
            continue
        mapped = entry["objective_scale"] * value + entry["objective_offset"]
        assert status == "Optimal" and abs(mapped - entry["optimum"]) <= entry["objective_rounding"] + 1e-9, entry
    assert "binaries" in (out / index[1]["file"]).read_text()


def _export_in_a_child(argv: list[str], file_size_limit: int | None = None) -> subprocess.CompletedProcess:
    """``compbench export ARGV`` in a child process (optionally under a file-size limit, RLIMIT_FSIZE)."""
    def limit() -> None:
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run([sys.executable, "-m", "compbench", "export", *argv], capture_output=True, text=True,
                          preexec_fn=limit, timeout=300)


def test_a_model_cut_short_by_a_file_size_limit_fails_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "models"
    done = _export_in_a_child(["gen:gaussian:30:2", "--out", str(out)], file_size_limit=200 << 10)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "cut short" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == []  # no model, no index, no staging folder


def test_an_interrupted_export_force_leaves_the_old_export_or_the_new_one_whole(tmp_path: Path) -> None:
    """SIGINT while `export --force` replaces an export: DIR holds the old export whole, or the new one whole, or no
    index; never an index naming models that are not there (the two sets' files have different names)."""
    out = tmp_path / "models"
    assert _export_in_a_child(["gen:gaussian:6:3", "--out", str(out)]).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    child = subprocess.Popen([sys.executable, "-m", "compbench", "export", "gen:gaussian:6:3:7", "--out", str(out),
                              "--force"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while child.poll() is None and not any(p.name.startswith(".export-partial-") for p in out.iterdir()):
        time.sleep(0.002)
    child.send_signal(signal.SIGINT)
    child.communicate(timeout=60)
    after = {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}
    assert not any(p.name.startswith(".export-partial-") for p in out.iterdir())  # the staging folder is gone
    if after.get("index.json") == before["index.json"]:
        assert after == before
    elif "index.json" in after:  # the new export, whole, and none of the old models left
        assert all(entry["file"] in after and "s7" in entry["id"] for entry in json.loads(after["index.json"]))
        assert not any("s0" in name for name in after)


def test_a_model_too_big_for_memory_is_refused_before_it_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture) -> None:
    from compbench_solvers.ilp.backends import driver

    monkeypatch.setattr(driver, "BYTES_PER_NONZERO", 1 << 40)  # every model "needs" terabytes
    assert main(["export", "gen:gaussian:6:1", "--out", str(tmp_path / "models")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "the joint model for n = 6 needs about" in line and "nothing of this export was kept" in line
    assert list((tmp_path / "models").iterdir()) == []
