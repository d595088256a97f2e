"""compbench.files: a staging folder that an interrupt cannot leave behind, and what a killed process left."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from compbench import files


def test_a_staging_folder_is_removed_even_when_an_interrupt_cuts_its_removal_short(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    real_rmtree, calls = shutil.rmtree, []

    def interrupted_once(path, ignore_errors=False):
        calls.append(path)
        if len(calls) == 1:  # the first removal stops half way, as Ctrl-C would cut it
            (Path(path) / "a").unlink()
            raise KeyboardInterrupt
        real_rmtree(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(files.shutil, "rmtree", interrupted_once)
    with pytest.raises(KeyboardInterrupt):  # the interrupt goes on once the folder is gone
        with files.staging_folder(tmp_path, ".staging-") as folder:
            (folder / "a").write_text("x")
            (folder / "b").write_text("y")
    assert folder.name.startswith(".staging-") and len(calls) == 2
    assert list(tmp_path.iterdir()) == []
    with files.staging_folder(tmp_path, ".staging-") as folder:  # an ordinary exit removes it too
        (folder / "c").write_text("z")
    assert list(tmp_path.iterdir()) == []


def test_what_a_killed_write_left_is_removed_by_the_next(tmp_path: Path) -> None:
    """SIGKILL runs no cleanup: the next write of the same file (or export into the same folder) removes the
    temporary file (folder) of a process that no longer runs, and leaves those of a running one."""
    import os
    import signal
    import subprocess
    import sys

    killed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    dead, alive = killed.pid, os.getppid()
    for pid in (dead, alive):
        (tmp_path / f".out.json.partial-{pid}-0a1b2c3d.json").write_text("half")
        (tmp_path / f".staging-{pid}-0a1b2c3d").mkdir()
        (tmp_path / f".staging-{pid}-0a1b2c3d" / "model.npz").write_text("half")
    with files.atomic_output(tmp_path / "out.json") as partial:
        partial.write_text("{}")
    with files.staging_folder(tmp_path, ".staging-"):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".out.json.partial-{alive}-0a1b2c3d.json",
                                                          f".staging-{alive}-0a1b2c3d", "out.json"]


def test_a_damaged_compressed_model_is_one_line(tmp_path: Path) -> None:
    """A flipped byte in a compressed member raised zlib.error with a traceback (evaluate, train --out)."""
    import zlib

    from compbench.cli.common import UsageError, read_model

    path = tmp_path / "model.npz"
    np.savez_compressed(path, info=np.array('{"kind": "x"}'), weights=np.random.default_rng(0).random(5000))
    raw = path.read_bytes()

    def load(p):
        with np.load(p) as data:
            return data["weights"].sum()

    said = set()
    for position in range(100, len(raw) - 100, 97):  # every kind of damage a flipped byte makes
        damaged = bytearray(raw)
        damaged[position] ^= 0xFF
        path.write_bytes(bytes(damaged))
        try:
            load(path)
        except zlib.error:
            with pytest.raises(UsageError, match="not a model file"):
                read_model(load, str(path), "model")
            said.add("zlib")
        except Exception:
            pass
    assert said == {"zlib"}


def test_a_model_file_is_read_whole_or_refused(tmp_path: Path) -> None:
    """A member lost to damage (its name's byte flipped) was read as 'not there': a parser without its tagger scored
    with gold tags; negative weight indices wrapped around; an info that is a list crashed."""
    import zipfile

    from compbench.compression.baselines import load_model
    from compbench.learning.model_file import save_arrays
    from tests.test_corpora import tiny_split_and_model

    _, model = tiny_split_and_model(tmp_path)
    path = tmp_path / "model.npz"
    model.save(path)
    assert np.array_equal(load_model(path).weights, model.weights)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files if name != "members"}
    lost = tmp_path / "lost.npz"
    with zipfile.ZipFile(path) as whole, zipfile.ZipFile(lost, "w") as damaged:
        for item in whole.infolist():
            name = item.filename.replace("weight_value", "weight_vAlue")
            damaged.writestr(name, whole.read(item))
    with pytest.raises(ValueError, match="damaged: members weight_value missing; members weight_vAlue not its own"):
        load_model(lost)
    for change, says in (({"weight_index": np.array([-1]), "weight_value": np.array([1.0])},
                          "weight_index: expected"),
                         ({"weight_index": np.array([0]), "weight_value": np.array([np.nan])}, "weight_value: expected"),
                         ({"info": np.array("[1, 2]")}, "info: expected a JSON object, got list")):
        save_arrays(tmp_path / "changed.npz", {**arrays, **change})
        with pytest.raises(ValueError, match=says):
            load_model(tmp_path / "changed.npz")


def test_a_crash_report_reads_only_the_end_of_a_flooded_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver that wrote 1.5 GB to stderr before dying had all of it read into the parent's memory."""
    import tempfile

    from compbench.harness import worker

    process = worker.SolveProcess()
    flood = tempfile.TemporaryFile()
    flood.write(b"noise\n" * 2_000_000 + b"the last words\n")
    read_sizes = []
    real_read = flood.read
    monkeypatch.setattr(flood, "read", lambda *size: read_sizes.append(flood.seek(0, 1)) or real_read(*size),
                        raising=False)
    process._stderr, process._stderr_start = flood, 0
    assert process._stderr_tail() == "the last words"
    assert read_sizes[0] >= flood.seek(0, 2) - 1_000_000  # read from its last megabyte, not from its start
    process._stderr = None
    flood.close()


def test_a_set_cut_short_between_its_renames_keeps_what_the_old_readme_links(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Stale files go only after every new file is in: an interrupt in between left the old README without the
    figure it links."""
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "gap.png").write_text("old gap")
    (tmp_path / "README.md").write_text("old README linking plots/gap.png")
    renames = []
    real_replace = os.replace

    def interrupted(source, target):
        renames.append(target)
        if len(renames) == 2:
            raise KeyboardInterrupt
        real_replace(source, target)

    monkeypatch.setattr(files.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        with files.replaced_together(tmp_path, stale=["plots/gap.png"], last="README.md") as staging:
            (staging / "plots").mkdir()
            (staging / "plots" / "profile.png").write_text("new profile")
            (staging / "README.md").write_text("new README")
    assert (tmp_path / "README.md").read_text().startswith("old") and (tmp_path / "plots" / "gap.png").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # the staging folder removed
