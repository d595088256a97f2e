"""compbench.files: a staging folder that an interrupt cannot leave behind."""

from __future__ import annotations

import shutil
from pathlib import Path

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
