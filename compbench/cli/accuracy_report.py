"""``compbench accuracy-report``: regenerate the accuracy report: train every system on the three corpora, evaluate
each on dev and test at the gold length and at a fixed rate, and write the tables (into the report's README.md,
between its two marker lines), the figure and the record of the commands with their times.

One command (about an hour on one core), resumable as ``make`` is: a step runs when one of its outputs is missing or
older than one of its inputs or when its command is not the one it last ran with, and every finished step is
recorded at once in ``runs.json`` (command, wall-clock seconds, date, commit), so an interrupted run loses only the
step it was in.  Delete or retrain a model and the steps that read it run again.  Paths are relative to the
directory it runs in (the project's: ``reports/models``, ``reports/accuracy``), where its steps run too.

Usage:
    compbench accuracy-report --data ../shared/data
    compbench accuracy-report --data ../shared/data --corpora google --systems bigram chain-crf
    compbench accuracy-report --data ../shared/data --summary-only

Systems (every one trained on the corpus's own train split, the epoch chosen on its dev split):
    first-m                the first m tokens (no training)
    bigram                 McDonald (2006): token and bigram features only, CRF, exact chain DP
    chain-crf              keep/delete linear-chain CRF, Viterbi with a count
    subtree                subtree deletion over our parser's parse, perceptron
    joint-crf              the joint model (tokens, arcs, bigrams), CRF, no input parse
    joint-perceptron       the same model, averaged perceptron (the objective of the next row)
    joint-parsed           joint, perceptron, + the input parse's features (our parser; its labels on C&L)
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .. import progress
from ..files import atomic_output
from .common import UsageError

if TYPE_CHECKING:
    import numpy as np

CORPORA = {  # name: (data directory, fixed rate, epochs (CRF, perceptron, subtree), label in tables)
    "clarke-lapata-written": ("clarke-lapata-written", 0.7, (4, 30, 10), "C&L written"),
    "clarke-lapata-broadcast": ("clarke-lapata-broadcast", 0.7, (4, 8, 10), "C&L broadcast"),
    "google": ("google-sentence-compression", 0.45, (3, 10, 6), "Google"),
}
GOOGLE = "google-sentence-compression"
PARSER = "ewt-first.npz"
# (system, label in tables and figure, how evaluate names it in the JSON file that holds it)
SYSTEMS = [
    ("first-m", "first-m", "first-m"),
    ("chain-crf", "chain CRF (keep/delete)", "chain CRF (viterbi)"),
    ("bigram", "bigram model (McDonald 2006)", "bigram model (bigram-chain)"),
    ("subtree", "subtree deletion (our parse)", "subtree deletion"),
    ("joint-crf", "joint, CRF", "joint (resource-dp)"),
    ("joint-perceptron", "joint, perceptron", "joint (resource-dp)"),
    ("joint-parsed", "joint + parse features, perceptron", "joint (resource-dp)"),
]


def compbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "compbench", *args]


Step = tuple[str, list[str], list[Path], list[Path]]  # name, command, inputs, outputs


def steps(data: Path, models: Path, out: Path, corpora: list[str], systems: list[str]) -> list[Step]:
    """The steps in the order they must run (the evaluations that hold one of the chosen ``systems``)."""
    parser = models / PARSER
    treebank = str(data / "ud-english-ewt")
    treebank_files = data_files(data / "ud-english-ewt")  # a step runs again when its data changed too
    train_parser = compbench("parser", "train", "--treebank", treebank, "--out", str(parser), "--epochs", "10",
                             "--folds", "4", "--jobs", "2")
    found: list[Step] = [("parser", train_parser, treebank_files, [parser])]
    found += [(f"parser-evaluate-{split}", compbench("parser", "evaluate", "--model", str(parser), "--treebank",
                                                      treebank, "--split", split), [parser, *treebank_files],
               [out / f"parser-{split}.txt"]) for split in ("dev", "test")]
    for corpus in corpora:
        directory, rate, (crf_epochs, perceptron_epochs, subtree_epochs), _ = CORPORA[corpus]
        common = ["--corpus", corpus, "--data", str(data / directory)]
        tags = [] if corpus == "google" else ["--tagger-data", str(data / GOOGLE)]
        corpus_files = data_files(data / directory) + ([] if corpus == "google" else data_files(data / GOOGLE))
        model = {system: models / f"{corpus}-{system}.npz" for system, _, _ in SYSTEMS[1:]}
        train = {
            "bigram": ["--model-kind", "bigram", "--objective", "crf", "--epochs", str(crf_epochs)],
            "chain-crf": ["--model-kind", "chain-crf", "--epochs", "8", "--l2", "1e-3"],
            "subtree": ["--model-kind", "subtree", "--epochs", str(subtree_epochs), "--parser", str(parser)],
            "joint-crf": ["--objective", "crf", "--epochs", str(crf_epochs)],
            "joint-perceptron": ["--objective", "perceptron", "--epochs", str(perceptron_epochs)],
            "joint-parsed": ["--objective", "perceptron", "--epochs", str(perceptron_epochs), "--parser", str(parser)],
        }
        for system, options in train.items():
            if system in systems:
                found.append((f"{corpus}/{system}", compbench("train", *common, *tags, "--out", str(model[system]),
                                                              *options),
                              [*([parser] if "--parser" in options else []), *corpus_files], [model[system]]))
        for split in ("dev", "test"):
            for length in ("gold", str(rate)):
                for main, baselines in (("joint-parsed", ("bigram", "chain-crf", "subtree")),
                                        ("joint-crf", ()), ("joint-perceptron", ())):
                    if not {main, *baselines} & set(systems):
                        continue
                    target = out / f"{corpus}-{split}-{'gold' if length == 'gold' else 'ratio' + length}-{main}.json"
                    extra = [a for b in baselines for a in ("--baseline", str(model[b]))]
                    found.append((f"{corpus}/evaluate-{main}-{split}-{length}",
                                  compbench("evaluate", *common, "--model", str(model[main]), *extra, "--split", split,
                                            "--length", length, "--json-out", str(target)),
                                  [model[main], *(model[b] for b in baselines), *corpus_files], [target]))
    return found


def data_files(directory: Path) -> list[Path]:
    """The files of a corpus or treebank directory (none when it is missing: the step then fails naming it)."""
    try:
        return sorted(p for p in directory.iterdir() if p.is_file())
    except OSError:
        return []


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def shown(command: list[str]) -> str:
    """The command as typed from the project's directory (this one): ``compbench ...`` with paths relative to it."""
    relative = [os.path.relpath(a) if a.startswith("/") else a for a in command[3:]]
    return "compbench " + " ".join(relative)


def stale(inputs: list[Path], outputs: list[Path]) -> bool:
    """Whether a step must run: an output is missing or older than an input, or an input is missing (the step
    then fails naming it, rather than leaving a result that no longer has its input)."""
    if not all(p.exists() for p in outputs):
        return True
    oldest = min(p.stat().st_mtime for p in outputs)
    return any(not p.exists() or p.stat().st_mtime > oldest for p in inputs)


def must_run(name: str, command: list[str], inputs: list[Path], outputs: list[Path], done: dict) -> bool:
    """Whether a step runs: it is :func:`stale`, its command differs from the one ``done`` (``runs.json``) holds
    for it in more than ``--jobs`` (how many processes, not what they compute), or the files it read are not the
    ones it recorded (:func:`input_files`: a corpus copied in with its old dates, or a part of it removed)."""
    options = lambda text: re.sub(r" --jobs \d+", "", text)  # noqa: E731
    recorded = done.get(name, {}).get("inputs")  # none in a record of an older version: its dates decide
    return (stale(inputs, outputs) or options(done.get(name, {}).get("command", "")) != options(shown(command))
            or recorded is not None and recorded != input_files(inputs))


def input_files(inputs: list[Path]) -> list[list]:
    """What a step reads: each input's path, size and modification time in nanoseconds (None for a missing one)."""
    out: list[list] = []
    for path in inputs:
        try:
            status = path.stat()
            out.append([str(path), status.st_size, status.st_mtime_ns])
        except OSError:
            out.append([str(path), None, None])
    return out


def run(plan: list[Step], record: Path) -> None:
    """Run the steps that :func:`must_run` in order, recording each one in ``record`` as it finishes; a progress
    bar counts them (a step that an earlier one made stale joins the count when it is reached)."""
    done = read_record(record)
    steps_bar = progress.bar(total=sum(must_run(*step, done) for step in plan), desc="accuracy-report", unit="step")
    for name, command, inputs, outputs in plan:
        if not must_run(name, command, inputs, outputs, done):
            continue
        if steps_bar.total is not None and steps_bar.n >= steps_bar.total:
            steps_bar.total += 1
        steps_bar.set_postfix_str(name)
        progress.echo(f"[{datetime.datetime.now():%H:%M:%S}] {name}")
        start, read = time.perf_counter(), input_files(inputs)
        finished = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if finished.returncode != 0:
            steps_bar.close()
            last = (finished.stderr.strip().splitlines() or ["(no message)"])[-1]
            sys.exit(f"compbench accuracy-report: step {name} failed (exit {finished.returncode}): {last}")
        if name.startswith("parser-evaluate"):
            write_whole(outputs[0], finished.stdout)
        done[name] = {"command": shown(command), "seconds": round(seconds, 1),
                      "finished": f"{datetime.datetime.now():%Y-%m-%d %H:%M}", "commit": commit(), "inputs": read}
        write_whole(record, json.dumps(done, indent=1) + "\n")  # after every step
        progress.echo(f"    {seconds:.0f} s")
        steps_bar.update(1)
    steps_bar.close()


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (an interrupted run leaves the file as it was)."""
    with atomic_output(path) as partial:
        partial.write_text(text, encoding="utf-8")


def read_record(record: Path) -> dict[str, dict]:
    """The steps ``runs.json`` records (empty when it is missing): step name -> command, seconds, finished, commit;
    :class:`UsageError` names the file and the field of anything else."""
    from ..problem import is_finite_number

    if not record.exists():
        return {}
    try:
        done = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{record}: cannot read the record of the steps ({exc})") from None
    if not isinstance(done, dict):
        raise UsageError(f"{record}: expected an object of steps, got {type(done).__name__}")
    for name, step in done.items():
        if not (isinstance(step, dict) and is_finite_number(step.get("seconds")) and all(
                isinstance(step.get(key), str) for key in ("command", "finished", "commit"))):
            raise UsageError(f"{record}: {name}: expected command, finished and commit (strings) and seconds (a "
                             f"number), got {step!r}"[:300])
    return done


def result(out: Path, corpus: str, split: str, length: str, system: str, key: str):
    """One field of one system's record in the evaluation file that holds it (None when that file or the field is
    missing): a finite number, or for ``f1_per_sentence`` a list of them; :class:`UsageError` names the file and
    the field of anything else (:func:`~compbench.harness.accuracy_plot.malformed_accuracy`)."""
    from ..harness.accuracy_plot import malformed_accuracy, read_accuracy

    main = system if system in ("joint-crf", "joint-perceptron") else "joint-parsed"
    path = out / f"{corpus}-{split}-{length}-{main}.json"
    if not path.exists():
        return None
    data = read_accuracy(path)
    if data is None:
        raise UsageError(f"{path}: not an evaluation file of compbench evaluate --json-out (no object of systems)")
    bad = malformed_accuracy(data)
    if bad:
        raise UsageError(f"{path}: {bad}")
    name = next(n for s, _, n in SYSTEMS if s == system)
    return data["systems"].get(name, {}).get(key)


def f1_of(out: Path, corpus: str, split: str, length: str, system: str, key: str = "f1") -> float | None:
    """One system's figure (token F1 unless ``key`` names another)."""
    value = result(out, corpus, split, length, system, key)
    return None if value is None else float(value)


def per_sentence(out: Path, corpus: str, split: str, length: str, system: str) -> np.ndarray | None:
    """Each sentence's F1 for one system, in the split's order (None when the file or the list is missing)."""
    import numpy as np

    values = result(out, corpus, split, length, system, "f1_per_sentence")
    return None if values is None else np.asarray(values, dtype=float)


def interval(values: np.ndarray) -> float:
    """Half the width of the normal 95% confidence interval of the mean of ``values``."""
    import numpy as np

    return 1.96 * float(np.std(values, ddof=1)) / np.sqrt(len(values)) if len(values) > 1 else float("nan")


CHANGES = [  # (what the change is, system with it, system without it)
    ("joint inference: the joint CRF over the bigram model (both CRF, same token and bigram features)", "joint-crf",
     "bigram"),
    ("the input parse's features (both joint, perceptron)", "joint-parsed", "joint-perceptron"),
    ("the CRF objective over the perceptron (joint, no parse)", "joint-crf", "joint-perceptron"),
    ("joint + parse over the bigram model", "joint-parsed", "bigram"),
    ("joint + parse over subtree deletion (both over the same parse)", "joint-parsed", "subtree"),
    ("joint + parse over the chain CRF", "joint-parsed", "chain-crf"),
]


def summary(out: Path, record: Path, corpora: list[str]) -> str:
    """The report's tables (markdown): token F1 per system, corpus, split and length; syntactic F1; times."""
    import numpy as np

    done = read_record(record)
    show = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    header = lambda first: [f"| {first} | " + " | ".join(CORPORA[c][3] for c in corpora) + " |",  # noqa: E731
                            "|---|" + "---|" * len(corpora)]
    lines = []
    for split in ("test", "dev"):
        lines += [f"Token F1 on the **{split}** split, at the gold length / at the fixed rate (0.7 C&L, 0.45 Google):",
                  "", *header("system")]
        for system, label, _ in SYSTEMS:
            cells = [f"{show(f1_of(out, c, split, 'gold', system))} / "
                     f"{show(f1_of(out, c, split, f'ratio{CORPORA[c][1]}', system))}" for c in corpora]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["What each change bought: the paired difference of token F1 on **test** at the gold length, in points,"
              " with its 95% confidence interval over the test sentences (a difference whose interval holds 0 is not"
              " measurably different from none):", "",
              *header("change")]
    for what, with_it, without in CHANGES:
        cells = []
        for c in corpora:
            a, b = per_sentence(out, c, "test", "gold", with_it), per_sentence(out, c, "test", "gold", without)
            cells.append("-" if a is None or b is None else
                         f"{100 * np.mean(a - b):+.1f} ± {100 * interval(a - b):.1f}")
        lines.append(f"| {what} | " + " | ".join(cells) + " |")
    lines.append("")
    lines += ["Syntactic F1 (dependency F1 between our parser's parses of the system's and the gold compression), "
              "test, gold length:", "", *header("system")]
    for system, label, _ in SYSTEMS:
        if system in ("joint-crf", "joint-perceptron"):
            continue  # models without a parser: their evaluation has no parse to compare
        lines.append(f"| {label} | " + " | ".join(show(f1_of(out, c, "test", "gold", system, "syntactic_f1"))
                                                 for c in corpora) + " |")
    lines += ["", "Training time (s, wall clock, the whole `compbench train` command):", "",
              *header("system")]
    for system, label, _ in SYSTEMS[1:]:
        cells = [str(round(done[f"{c}/{system}"]["seconds"])) if f"{c}/{system}" in done else "-" for c in corpora]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "The commands the script ran, in the order they finished, each with its wall-clock time and the "
              "commit it ran at (from `runs.json`):", "", "<details><summary>commands</summary>", "", "```sh"]
    lines += [f"{step['command']}    # {step['seconds']:.0f} s, {step['finished']}, {step['commit']}"
              for step in sorted(done.values(), key=lambda step: step["finished"])]
    lines += ["```", "", "</details>"]
    return "\n".join(lines) + "\n"


BEGIN, END = "<!-- tables of compbench accuracy-report -->", "<!-- end of the tables -->"


def write_between_markers(path: Path, text: str) -> None:
    """Put ``text`` between the two marker lines of ``path`` (appended with the markers when both are missing)."""
    old = path.read_text() if path.exists() else ""
    head, begin, rest = old.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if begin and end:
        new = f"{head}{BEGIN}\n{text}{END}{tail}"
    elif begin or END in old:
        raise UsageError(f"{path}: one marker line without the other, or the end before the begin")
    else:
        new = f"{old}\n{BEGIN}\n{text}{END}\n"
    write_whole(path, new)


def figure(out: Path, corpora: list[str]) -> None:
    """Bars of test token F1 at the gold length, every system on every corpus."""
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.5, 4))
    width = 0.8 / len(SYSTEMS)
    colours = plt.get_cmap("tab10")
    for i, (system, label, _) in enumerate(SYSTEMS):
        values = [f1_of(out, c, "test", "gold", system) for c in corpora]
        errors = [interval(v) if (v := per_sentence(out, c, "test", "gold", system)) is not None else np.nan
                  for c in corpora]
        x = np.arange(len(corpora)) + (i - (len(SYSTEMS) - 1) / 2) * width
        bars = ax.bar(x, [np.nan if v is None else v for v in values], width, label=label, color=colours(i),
                      yerr=errors, error_kw={"elinewidth": 0.7, "capsize": 1.5, "ecolor": "0.25"})
        ax.bar_label(bars, ["" if v is None else f"{v:.3f}" for v in values], fontsize=6, rotation=90, padding=6)
    sentences = [f1_of(out, c, "test", "gold", "first-m", "sentences") for c in corpora]
    ax.set_xticks(np.arange(len(corpora)), [f"{CORPORA[c][3]}\n({'-' if k is None else int(k)} test sentences)"
                                            for c, k in zip(corpora, sentences)])
    ax.set_ylim(0.5, 0.97)
    ax.set_ylabel("token F1 (macro), gold length")
    ax.axhline(0.8, color="grey", lw=0.8, ls="--", label="0.80: the goal on written\n(Qian & Liu's F1)")
    ax.set_title("Token F1 on our test splits, every system trained on each corpus's train split\n"
                 "(bars: mean over test sentences; whiskers: 95% confidence interval of the mean)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="system", title_fontsize=8)
    with atomic_output(out / "f1-gold-length.png") as partial:
        fig.savefig(partial, dpi=120, bbox_inches="tight", format="png")
    plt.close(fig)


def cmd_accuracy_report(args: argparse.Namespace) -> int:
    record = args.out / "runs.json"
    if args.summary_only:
        if not any(next(args.out.glob(f"{corpus}-*.json"), None) for corpus in args.corpora):
            raise UsageError(f"--out {args.out}: no evaluation results of {', '.join(args.corpora)} in it to "
                             "summarize (run accuracy-report without --summary-only first)")
    else:
        needed = ["ud-english-ewt", *{CORPORA[c][0] for c in args.corpora}, GOOGLE]
        missing = [name for name in dict.fromkeys(needed) if not (args.data / name).is_dir()]
        if missing:
            raise UsageError(f"--data {args.data}: no {', '.join(missing)} directory in it")
        for folder in (args.models, args.out):
            folder.mkdir(parents=True, exist_ok=True)
        lock = open(args.out / "runs.lock", "w")
        try:  # one run at a time: two would train the same parser and write the same record
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"another run holds {args.out / 'runs.lock'}; wait for it to end") from None
        run(steps(args.data.resolve(), args.models.resolve(), args.out.resolve(), args.corpora, args.systems), record)
    readme = args.out / "README.md"
    tables = summary(args.out, record, args.corpora)
    figure(args.out, args.corpora)  # before the tables go in: a figure it cannot read leaves both as they were
    write_between_markers(readme, tables)
    print(f"wrote the tables into {readme} and {args.out / 'f1-gold-length.png'}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("accuracy-report", help="train and evaluate every system on the three corpora "
                                                           "and write the accuracy report (resumable)",
                                   description="Train every system on the three corpora, evaluate each on dev and "
                                               "test at the gold length and at a fixed rate, and write the report's "
                                               "tables, figure and record of commands; a step runs again only when "
                                               "an input or its command changed.")
    parser.add_argument("--data", type=Path, required=True, help="the shared data directory (corpora and treebank)")
    parser.add_argument("--models", type=Path, default=Path("reports") / "models")
    parser.add_argument("--out", type=Path, default=Path("reports") / "accuracy")
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA), default=list(CORPORA))
    parser.add_argument("--systems", nargs="+", choices=[s for s, _, _ in SYSTEMS[1:]],
                        default=[s for s, _, _ in SYSTEMS[1:]], help="train and evaluate only these")
    parser.add_argument("--summary-only", action="store_true", help="write the tables and figure from what exists")
    parser.set_defaults(func=cmd_accuracy_report)
