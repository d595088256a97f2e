"""``compbench certify``: the certified optima of an instance file, written beside it (MIPLIB's ``.solu`` file)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..limits import CERTIFY_SECONDS
from .common import UsageError, number_in, output_path, positive_seconds


def solu_table(path: Path) -> dict[str, Any] | None:
    """The table of a file of certified optima (a JSON object of certify's format), or None for anything else."""
    from ..harness.references import SOLU_FORMAT

    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.stat().st_size < 64 << 20 else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == SOLU_FORMAT else None


def solu_target(path: str, out: str | None = None) -> Path:
    """Where the certified optima of instance file ``path`` go, checked before any work: ``out``, or beside it
    (``x.jsonl`` -> ``x.solu.json``) unless that file holds the optima of another instance file (``x.json``'s);
    an existing file is replaced only when it holds certified optima."""
    from ..harness.references import solu_path

    if path.startswith("gen:"):  # a spec names no file to certify beside (it wrote ./gen:....solu.json)
        raise UsageError(f"{path}: certify takes an instance file (compbench generate writes one, with its optima)")
    target = Path(out or solu_path(path))
    if target.resolve() == Path(path).resolve():
        raise UsageError(f"{target}: is the instance file itself; choose another --out for its optima")
    existing = solu_table(target) if target.is_file() else None  # read once: whether it may be replaced, and whose
    target = output_path(target, what="reference optima", replaces=lambda _: existing is not None)
    owner = (existing or {}).get("instances") if out is None else None
    if isinstance(owner, str) and owner != Path(path).name:
        raise UsageError(f"{target}: holds the certified optima of {owner}, not of {Path(path).name} (write "
                         "them elsewhere with certify --out, or rename one of the files)")
    return target


def certify_file(path: str, out: str | None = None, jobs: int = 1,
                 time_limit: float | None = None) -> tuple[Path, list[str], int]:
    """Certify the optima of the instance file ``path`` and write them beside it (or to ``out``, replaced); returns
    the file written, a line per instance that could not be certified, and how many were."""
    from ..harness.references import certify, write_solu
    from .harness import problems_of

    target = solu_target(path, out)
    table = certify(problems_of(path), jobs=jobs, time_limit=time_limit or CERTIFY_SECONDS)
    missing = [f"not certified: {entry['instance']}: {entry['why']}" for entry in table["optima"]
               if entry["status"] is None]
    return write_solu(target, table, path), missing, len(table["optima"]) - len(missing)


def cmd_certify(args: argparse.Namespace) -> int:
    written, missing, certified = certify_file(args.file, args.out, args.jobs, args.time_limit)  # the file read once
    for line in missing:
        print(line)
    print(f"certify: {certified} optima certified by two exact methods, {len(missing)} not; wrote {written}")
    return 1 if missing else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    certify = subparsers.add_parser(
        "certify", help="certified optima of an instance file, written beside it (x.jsonl -> x.solu.json)",
        description="Solve every instance of FILE with two independent exact methods (the resource-constrained DP "
                    "and the signature DP, else an ILP, else brute force), each in a worker under --time-limit, and "
                    "write the optima they agree on beside the file, with the methods, their versions and the date "
                    "(MIPLIB's .solu file).  check and bench judge every answer against it.  Exit status: 0 when every "
                    "instance is certified, 1 when some are not (the file holds the others), 2 on bad input.")
    certify.add_argument("file", help="instance file (.json, .jsonl or .npz)")
    certify.add_argument("--out", metavar="FILE.solu.json", help="where to write (default beside FILE)")
    certify.add_argument("--jobs", type=number_in(int, 1), default=1, metavar="N",
                         help="solves run at the same time (default 1)")
    certify.add_argument("--time-limit", type=positive_seconds, default=CERTIFY_SECONDS, metavar="S",
                         help=f"limit per method and instance (default {CERTIFY_SECONDS:g})")
    certify.set_defaults(func=cmd_certify)
