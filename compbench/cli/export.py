"""``compbench export``: one model file per instance (MPS or LP, named rows and columns) for any MIP solver."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from .. import progress
from ..files import staging_folder
from .common import UsageError, load_solver, output_directory, stdout_to_stderr

# The ILP solver whose model each formulation writes, and the exact DP that certifies each instance's optimum.
EXPORTERS = {"joint": "ilp-highs", "dp": "ilp-dp-highs"}
CERTIFIER = "resource-dp"


def cmd_export(args: argparse.Namespace) -> int:
    from ..harness.sweep import SpecError, source_problems, unique_ids
    from ..problem import Status

    try:
        problems = unique_ids(source_problems(args.set))
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    if not problems:
        raise UsageError(f"{args.set}: no instances in the file")
    out = output_directory(args.out, "exported models")
    if (out / "index.json").exists() and not args.force:
        raise UsageError(f"{out / 'index.json'} exists (pass --force to overwrite the export)")
    old = exported_files(out)  # before any work: an index.json that is not an export's is refused
    names = file_names(problems, args.format)
    foreign = [name for name in names if (out / name).exists() and name not in old]
    if foreign and not args.force:  # a file of no export: never replaced unasked
        raise UsageError(f"{out / foreign[0]} exists and no export's index names it (pass --force to overwrite it)")
    exporter, certifier = load_solver(EXPORTERS[args.formulation]), load_solver(CERTIFIER)
    reason = exporter.unavailable()
    if reason:
        raise UsageError(f"{exporter.name} cannot run here: {reason}")
    with stdout_to_stderr():
        optima = certifier.solve_many(problems)  # one batch through the compiled chart
    for problem, optimum in zip(problems, optima):
        if optimum.status not in (Status.OPTIMAL, Status.INFEASIBLE):
            raise UsageError(f"{args.set}: id {problem.id}: {CERTIFIER} gave no proven optimum ({optimum.status}: "
                             f"{optimum.message})")
    with staging_folder(out, STAGING) as staging:  # in DIR: the final renames stay on its file system
        index = []
        for problem, optimum, name in zip(progress.bar(problems, "export", unit="instance"), optima, names):
            try:
                with stdout_to_stderr():
                    scale, offset = exporter.export(problem, staging / name)
                check_model_file(staging / name)
            except MemoryError:
                raise UsageError(f"{args.set}: id {problem.id}: its model does not fit in memory (n = {problem.n}); "
                                 "export smaller instances") from None
            except (OSError, ValueError) as exc:
                raise UsageError(f"{out / name}: cannot write the model ({exc}); nothing of this export was "
                                 "kept") from None
            index.append({"id": problem.id, "file": name, "objective_scale": scale, "objective_offset": offset,
                          "optimum": optimum.objective if optimum.status == Status.OPTIMAL else None,
                          "objective_rounding": written_rounding(problem)})
        try:
            (staging / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
            check_size(staging / "index.json", len(json.dumps(index, indent=1)) + 1)
            replace_export(staging, out, [entry["file"] for entry in index], old)
        except OSError as exc:
            raise UsageError(f"{out}: cannot write the export ({exc.strerror or exc}); its index was not "
                             "written") from None
    print(f"wrote {len(index)} {args.formulation} models as {args.format.upper()} files and index.json to {out} "
          f"(objective = objective_scale x the file's optimum + objective_offset; optimum certified by {CERTIFIER})")
    return 0


STAGING = ".export-partial-"  # the folder in DIR where an export is written before it replaces the last one
MODEL_ENDS = {".mps": b"ENDATA", ".lp": b"end"}  # the last line of a whole model file, as HiGHS writes it


def check_model_file(path: Path) -> None:
    """A written model file must end with its format's last line (HiGHS reports success on a write that a full disk
    or a file-size limit cut short): ValueError naming what is wrong."""
    if not path.is_file() or path.stat().st_size == 0:
        raise ValueError("the file is empty")
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - 64))
        last = f.read().rstrip().rsplit(b"\n", 1)[-1].strip()
    if last.lower() != MODEL_ENDS[path.suffix].lower():
        raise ValueError(f"the file was cut short: it ends in {last[-40:]!r}, not {MODEL_ENDS[path.suffix]!r}")


def file_names(problems: list, suffix: str) -> list[str]:
    """One model file name per problem, its id made safe for a file name, distinct even where case is not (a name
    another problem's id already took gets that problem's place in the list)."""
    from ..harness.check import safe_file_name

    names: list[str] = []
    taken: set[str] = set()
    for place, problem in enumerate(problems):
        name, more = f"{safe_file_name(problem.id)}.{suffix}", 0
        while name.lower() in taken or name.lower() == "index.json":
            more += 1
            name = f"{safe_file_name(problem.id)}-{place}{'-' * (more - 1)}.{suffix}"
        taken.add(name.lower())
        names.append(name)
    return names


WRITTEN_DIGITS = 15  # HiGHS writes each coefficient with this many significant digits (%.15g)


def written_rounding(problem) -> float:
    """How far any solution's value in the written file can be from its value in the instance, in the instance's
    units: each score rounded to WRITTEN_DIGITS significant digits, all of them at most (half a unit of the last)."""
    import numpy as np

    from ..problem import SCORE_FIELDS

    scores = [getattr(problem, name) for name in SCORE_FIELDS]
    total = sum(float(np.abs(s[np.isfinite(s)]).sum()) for s in scores if s is not None)
    return total * 0.5 * 10.0 ** (1 - WRITTEN_DIGITS)


def check_size(path: Path, size: int) -> None:
    if path.stat().st_size != size:
        raise OSError(f"{path.name} holds {path.stat().st_size} of {size} bytes")


def exported_files(out: Path) -> list[str]:
    """The model files the ``index.json`` of an earlier export in ``out`` names (none without one); an index.json
    that is not an export's (a list of objects, each ``file`` a plain file name of ``out``) is a
    :class:`UsageError`, and the folder is left as it is."""
    index = out / "index.json"
    if not index.exists():
        return []
    try:
        entries = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{index}: not the index of an export ({exc}); it is left as it is (choose another --out)") \
            from None
    names = [entry.get("file") if isinstance(entry, dict) else None for entry in entries] \
        if isinstance(entries, list) else [None]
    bad = [name for name in names if not isinstance(name, str) or name in ("", ".", "..")
           or Path(name).name != name]  # a plain file name of DIR, never a path out of it
    if bad:
        raise UsageError(f"{index}: not the index of an export (file {bad[0]!r} is not a model file name of "
                         f"{out}); it is left as it is (choose another --out)")
    return names


def replace_export(staging: Path, out: Path, files: list[str], old: list[str]) -> None:
    """Move a finished export from ``staging`` into ``out``: the old ``index.json`` goes first (then the models it
    named, ``old``) and the new one comes last, so that at any moment ``out`` holds no index, or an index of
    exactly the models beside it."""
    (out / "index.json").unlink(missing_ok=True)
    for name in old:
        if name not in files:
            (out / name).unlink(missing_ok=True)
    for name in files:
        os.replace(staging / name, out / name)
    os.replace(staging / "index.json", out / "index.json")


def register(subparsers: argparse._SubParsersAction) -> None:
    export = subparsers.add_parser(
        "export", help="write each instance's ILP as an MPS or LP file for any MIP solver, with index.json",
        description="Write one model file per instance (named rows and columns; a minimization, readable by HiGHS, "
                    "CBC, SCIP, Gurobi and CPLEX) and DIR/index.json: a list of {id, file, objective_scale, "
                    "objective_offset, optimum, objective_rounding} such that the instance's objective is "
                    "objective_scale x (the model's objective value) + objective_offset, within objective_rounding "
                    f"(15 significant digits a coefficient); optimum is certified by {CERTIFIER} (null: infeasible).")
    export.add_argument("set", metavar="SET", help="instance file (.json, .jsonl, .npz) or generator spec gen:...")
    export.add_argument("--formulation", choices=sorted(EXPORTERS), default="joint",
                        help="joint: tree + bigram chain + projectivity; dp: the hook-trick chart's hypergraph flow "
                             "(default joint)")
    export.add_argument("--format", choices=("mps", "lp"), default="mps", help="file format (default mps)")
    export.add_argument("--out", required=True, metavar="DIR", help="output directory")
    export.add_argument("--force", action="store_true", help="overwrite an earlier export in DIR")
    export.set_defaults(func=cmd_export)
