"""``compbench export``: one model file per instance (MPS or LP, named rows and columns) for any MIP solver."""

from __future__ import annotations

import argparse
import json

from .. import progress
from ..files import atomic_output
from .common import UsageError, load_solver, output_directory, stdout_to_stderr

# The ILP solver whose model each formulation writes, and the exact DP that certifies each instance's optimum.
EXPORTERS = {"joint": "ilp-highs", "dp": "ilp-dp-highs"}
CERTIFIER = "resource-dp"


def cmd_export(args: argparse.Namespace) -> int:
    from ..harness.check import safe_file_name
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
    index = []
    for problem, optimum in zip(progress.bar(problems, "export", unit="instance"), optima):
        name = f"{safe_file_name(problem.id)}.{args.format}"
        with stdout_to_stderr():
            scale, offset = exporter.export(problem, out / name)
        index.append({"id": problem.id, "file": name, "objective_scale": scale, "objective_offset": offset,
                      "optimum": optimum.objective if optimum.status == Status.OPTIMAL else None})
    with atomic_output(out / "index.json") as partial:
        partial.write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(index)} {args.formulation} models as {args.format.upper()} files and index.json to {out} "
          f"(objective = objective_scale x the file's optimum + objective_offset; optimum certified by {CERTIFIER})")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    export = subparsers.add_parser(
        "export", help="write each instance's ILP as an MPS or LP file for any MIP solver, with index.json",
        description="Write one model file per instance (named rows and columns; a minimization, readable by HiGHS, "
                    "CBC, SCIP, Gurobi and CPLEX) and DIR/index.json: a list of {id, file, objective_scale, "
                    "objective_offset, optimum} such that the instance's objective is objective_scale x (the model's "
                    f"objective value) + objective_offset; optimum is certified by {CERTIFIER} (null: infeasible).")
    export.add_argument("set", metavar="SET", help="instance file (.json, .jsonl, .npz) or generator spec gen:...")
    export.add_argument("--formulation", choices=sorted(EXPORTERS), default="joint",
                        help="joint: tree + bigram chain + projectivity; dp: the hook-trick chart's hypergraph flow "
                             "(default joint)")
    export.add_argument("--format", choices=("mps", "lp"), default="mps", help="file format (default mps)")
    export.add_argument("--out", required=True, metavar="DIR", help="output directory")
    export.add_argument("--force", action="store_true", help="overwrite an earlier export in DIR")
    export.set_defaults(func=cmd_export)
