"""A/A pairs: how often ``compbench compare`` calls two benches of the same code and settings different.

    .venv/bin/python benchmarks/bench_aa.py --pairs 5 --dir /tmp/compbench-aa --out reports/performance/aa.txt

Each A/A pair is two ``compbench bench`` runs of the same settings, one right after the other on this machine (free
length, ``--sizes 6:10:2 --per-size 3``, ``--repeats 3``, ``--jobs 1``, the solvers of ``--solvers`` and
``exec:DIR/solver.py``), then ``compbench compare A B --json``: every verdict but ``same`` is a false verdict.  The
slowed pair is the last A/A pair's B run against one more run in which the exec program sleeps ``--sleep`` seconds
(50 ms) before it answers (``COMPBENCH_AA_SLEEP`` in its environment: the solver's name, ``exec:DIR/solver.py``, is
the same in both runs, and compare matches solvers by name); it should come out ``slower``.

The exec program (written to ``DIR/solver.py``, a fixed path, so its name is the same in every run) answers with
``compbench solve FILE --solver resource-dp --json`` and keeps each answer in ``DIR/cache/``, keyed by the SHA-256 of
the instance file it was given: after one priming bench of the exec program alone (not timed), each solve it makes
in the pairs is a Python start-up, a lookup and the sleep (about 0.05 s without it), so that 50 ms is an effect
of about 2x.
(Calling ``compbench solve`` every time costs 0.4-0.8 s here, and 50 ms more is a 1.1x effect, below the minimum
effect the rule calls slower.)  Its answers are judged like any solver's: a wrong one would be invalid or
contradicted.

Besides the rule compare applies (``--min-effect`` of the compare command), the false verdicts and the slowed
verdict are recounted from each comparison's interval and noise under the alternative rules of ``--rules`` (a
minimum effect, optionally ``xK``: K times the measured noise), to judge whether another rule would do better.
The report goes to ``--out`` and to stdout; the run files stay in ``DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
SLEEP_VARIABLE = "COMPBENCH_AA_SLEEP"

PROGRAM = '''#!{python}
"""compbench's resource-dp behind a cache of its answers (benchmarks/bench_aa.py wrote it); sleeps
${variable} seconds before it answers."""
import hashlib, json, os, subprocess, sys, time

path = sys.argv[1]
with open(path, "rb") as f:
    key = hashlib.sha256(f.read()).hexdigest()
cached = os.path.join({cache!r}, key + ".json")
try:
    with open(cached) as f:
        answer = f.read()
except FileNotFoundError:
    done = subprocess.run([sys.executable, "-m", "compbench", "solve", path, "--solver", "resource-dp", "--json",
                           "--quiet"], capture_output=True, text=True, cwd={root!r})
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:] or f"compbench solve exited with status {{done.returncode}}")
    answer = done.stdout.strip().splitlines()[-1]
    json.loads(answer)
    with open(cached + ".tmp", "w") as f:
        f.write(answer)
    os.replace(cached + ".tmp", cached)
time.sleep(float(os.environ.get("{variable}") or 0))
print(answer)
'''


def rule_verdict(row: dict, noise: float | None, min_effect: float, times_noise: float) -> str:
    """compbench.harness.comparison.timing_verdict under threshold max(min_effect, times_noise * noise)."""
    threshold = max(min_effect, times_noise * (noise or 0.0))
    return "slower" if row["low"] > threshold else "faster" if row["high"] < 1.0 / threshold else "same"


def parse_rule(text: str) -> tuple[float, float]:
    """``1.25`` (minimum effect 1.25, the noise as measured) or ``1.25x2`` (and twice the noise)."""
    effect, _, times = text.partition("x")
    return float(effect), float(times or 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5, help="A/A pairs (default 5)")
    parser.add_argument("--dir", default="/tmp/compbench-aa", help="the exec program, its cache and the run files")
    parser.add_argument("--out", default=str(ROOT / "reports" / "performance" / "aa.txt"))
    parser.add_argument("--solvers", default="resource-dp,signature-dp,hook-dp,brute-force")
    parser.add_argument("--sizes", default="6:10:2")
    parser.add_argument("--per-size", default="3")
    parser.add_argument("--repeats", default="3")
    parser.add_argument("--time-limit", default="3")
    parser.add_argument("--sleep", type=float, default=0.05, help="the slowed run's sleep in seconds (default 0.05)")
    parser.add_argument("--rules", default="1.25,1.5,1.25x1.5,1.25x2",
                        help="alternative rules to recount: MIN_EFFECT[xNOISE_FACTOR], comma-separated")
    args = parser.parse_args()
    started = time.perf_counter()
    folder = Path(args.dir).absolute()
    (folder / "cache").mkdir(parents=True, exist_ok=True)
    program = folder / "solver.py"
    program.write_text(PROGRAM.format(python=sys.executable, cache=str(folder / "cache"), root=str(ROOT),
                                      variable=SLEEP_VARIABLE))
    program.chmod(0o755)
    exec_name = f"exec:{program}"
    settings = ["--free", "--sizes", args.sizes, "--per-size", args.per_size, "--time-limit", args.time_limit,
                "--jobs", "1", "--quiet"]
    lines: list[str] = [f"$ .venv/bin/python benchmarks/bench_aa.py {shlex.join(sys.argv[1:])}", machine_line()]

    def say(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    def bench(name: str, solvers: str, repeats: str, sleep: float = 0.0) -> Path:
        out = folder / f"{name}.jsonl"
        out.unlink(missing_ok=True)
        env = {**os.environ, SLEEP_VARIABLE: repr(sleep)}
        subprocess.run([sys.executable, "-m", "compbench", "bench", *settings, "--solvers", solvers, "--repeats",
                        repeats, "--out", str(out)], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        return out

    def compare(a: Path, b: Path) -> dict:
        done = subprocess.run([sys.executable, "-m", "compbench", "compare", str(a), str(b), "--json"], cwd=ROOT,
                              capture_output=True, text=True)
        if done.returncode not in (0, 1):
            sys.exit(f"compare {a} {b} failed: {done.stderr}")
        return json.loads(done.stdout)

    solvers = f"{args.solvers},{exec_name}"
    bench("prime", exec_name, "1")  # fills the exec program's cache; not timed
    print(lines[0], flush=True)
    print(lines[1], flush=True)
    say(f"bench {shlex.join(settings)} --solvers {solvers} --repeats {args.repeats}; each A/A pair: two such runs, one "
        "after the other, then compare A B --json")
    comparisons: list[dict] = []
    last = None
    for pair in range(1, args.pairs + 1):
        a = bench(f"pair{pair}-a", solvers, args.repeats)
        b = bench(f"pair{pair}-b", solvers, args.repeats)
        result = compare(a, b)
        comparisons.append(result)
        say(f"pair {pair}: threshold {result['threshold']:.3f} (noise {result['noise'] or 0:.3f}, min effect "
            f"{result['min_effect']:g})")
        for row in result["solvers"]:
            say(f"  {row['solver']:<32} B/A {row['ratio']:.3f} [{row['low']:.3f}, {row['high']:.3f}] "
                f"{row['verdict']}")
        last = b
    slowed = bench("slowed", solvers, args.repeats, sleep=args.sleep)
    slowed_result = compare(last, slowed)
    say(f"slowed pair: pair {args.pairs}'s B against a run whose exec program sleeps {args.sleep:g} s "
        f"({SLEEP_VARIABLE}={args.sleep:g}): threshold {slowed_result['threshold']:.3f} (noise "
        f"{slowed_result['noise'] or 0:.3f})")
    for row in slowed_result["solvers"]:
        say(f"  {row['solver']:<32} B/A {row['ratio']:.3f} [{row['low']:.3f}, {row['high']:.3f}] {row['verdict']}")
    rows = [row for result in comparisons for row in result["solvers"]]
    false = [row for row in rows if row["verdict"] != "same"]
    exec_row = next(row for row in slowed_result["solvers"] if row["solver"] == exec_name)
    others = [row["verdict"] for row in slowed_result["solvers"] if row["solver"] != exec_name]
    say(f"false verdicts (compare's rule): {len(false)} of {len(rows)} comparisons ({args.pairs} A/A pairs x "
        f"{len(rows) // max(1, args.pairs)} solvers)")
    say(f"slowed exec solver: {exec_row['verdict']}, B/A {exec_row['ratio']:.3f} [{exec_row['low']:.3f}, "
        f"{exec_row['high']:.3f}]; the other solvers: {sum(v == 'same' for v in others)} of {len(others)} same")
    say("the rules recounted from the same comparisons (threshold max(min effect, K x noise)):")
    say("| min effect | K | false verdicts | slowed exec verdict |")
    say("|---|---|---|---|")
    for text in args.rules.split(","):
        effect, times = parse_rule(text)
        wrong = sum(rule_verdict(row, result["noise"], effect, times) != "same"
                    for result in comparisons for row in result["solvers"])
        say(f"| {effect:g} | {times:g} | {wrong} of {len(rows)} | "
            f"{rule_verdict(exec_row, slowed_result['noise'], effect, times)} |")
    say(machine_line("at the end") + f", {time.perf_counter() - started:.0f} s in all")
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
