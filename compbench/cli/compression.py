"""``compbench train``, ``compbench build-instances`` and ``compbench evaluate`` on a corpus directory."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

from .. import progress
from ..files import atomic_output
from .common import (DEFAULT_SOLVER, INSTANCE_SUFFIXES, Later, UsageError, keeping_finished_epochs, length_decoder,
                     load_solver, model_info, number_in, output_path, positive_seconds, read_model, stdout_to_stderr)


def _corpus(args: argparse.Namespace):
    from ..corpora import CorpusError, read_corpus

    progress.stage(f"reading the {args.corpus} corpus in {args.data}")
    try:
        corpus = read_corpus(args.corpus, args.data)
    except CorpusError as exc:
        raise UsageError(str(exc)) from None
    report = corpus.report
    print(f"{corpus.name}: {report['sentences']} sentences, {report['unaligned']} sentences with a gold "
          f"compression that could not be aligned (left out of training and scoring)"
          + (f", {report['aligned_with_stray_punctuation']} aligned with stray punctuation skipped"
             if "aligned_with_stray_punctuation" in report else ""), file=sys.stderr)
    return corpus


def _length(text: str) -> str | float:
    if text == "gold":
        return "gold"
    try:
        ratio = float(text)
    except ValueError:
        raise UsageError(f"--length must be 'gold' or a ratio in 0..1, got {text!r}") from None
    if not 0.0 <= ratio <= 1.0:
        raise UsageError(f"--length ratio must lie in 0..1, got {ratio}")
    return ratio


@contextlib.contextmanager
def _training_errors():
    """A training that cannot give a model (no example, no dev decode, a solver's unusable answer) ends in one line
    (exit 2), nothing written."""
    from ..compression.training import TrainingError
    from ..solver import SolverError

    try:
        yield
    except (TrainingError, SolverError) as exc:
        raise UsageError(f"train: {exc}") from None


def cmd_train(args: argparse.Namespace) -> int:
    from ..compression.baselines import (BigramModel, ChainCRFModel, ChainSolver, SubtreeModel, train_chain_crf,
                                         train_subtree)
    from ..compression.crf import train_crf
    from ..compression.features import BigramLM
    from ..compression.model import CompressionModel
    from ..compression.perceptron import train_perceptron
    from ..corpora import CORPORA, read_corpus, split_corpus
    from ..learning.tagger import PosTagger

    out = output_path(args.out, what="compression model",  # before the training, not after it
                      replaces=lambda path: (model_info(path) or {"kind": "parser"}).get("kind") != "parser")
    parser = _parser(args.parser)
    corpus = _corpus(args)
    parts = split_corpus(corpus)
    for name in ("train", "dev"):  # the epoch is chosen on dev
        _aligned(parts[name], corpus, name, args.data)
        if args.max_n is not None and not any(s.aligned and s.n <= args.max_n for s in parts[name]):
            raise UsageError(f"--max-n {args.max_n}: no aligned sentence of the {name} split is that short")
    solver = length_decoder(args.solver, "train") if args.model_kind == "joint" else load_solver(args.solver)
    tagger = None
    if args.tagger_data:
        progress.stage(f"reading the Google corpus in {args.tagger_data} for the POS tagger")
        google = read_corpus("google", args.tagger_data)
        tagged = [(s.tokens, s.pos) for s in split_corpus(google)["train"] if s.tokens]
        if not tagged:
            raise UsageError(f"--tagger-data {args.tagger_data}: no tagged sentence in the Google corpus's train "
                             "split to train the POS tagger on")
        start = time.perf_counter()
        tagger = PosTagger.fit(tagged, epochs=args.tagger_epochs, progress=progress.bar)
        progress.log(f"POS tagger: trained on {len(tagged)} Google sentences in {time.perf_counter() - start:.1f} s")
    train = parts["train"]
    lm = BigramLM.fit([[s.tokens[k - 1] for k in g] for s in train if s.aligned for g in s.golds])
    kind = args.model_kind
    if kind != "joint" and args.second_order:
        raise UsageError(f"--second-order applies to the joint model only, not --model-kind {kind}")
    if kind == "chain-crf" and parser is not None:
        raise UsageError("--parser is not used by --model-kind chain-crf (its features have no parse)")
    if kind == "subtree" and parser is None:
        raise UsageError("--model-kind subtree deletes subtrees of an input parse: give --parser PARSER")
    model_class = {"joint": CompressionModel, "bigram": BigramModel, "chain-crf": ChainCRFModel,
                   "subtree": SubtreeModel}[kind]
    model = model_class(lm=lm, tagger=tagger, second_order=args.second_order, parser=parser, info={
        "corpus": corpus.name, "solver": args.solver, "epochs": args.epochs, "batch_size": args.batch_size,
        "max_n": args.max_n, "pos": "gold" if CORPORA[corpus.name].gold_pos else ("tagger" if tagger else "none"),
        "split": {k: len(v) for k, v in parts.items()}, "unaligned": corpus.report["unaligned"],
        "parser": Path(args.parser).name if args.parser else None})
    progress.stage(f"training the {kind} model: {args.epochs} epochs over {len(train)} sentences, the best on dev kept")
    start = time.perf_counter()
    with keeping_finished_epochs(model, out):  # interrupted after an epoch: the best so far is written
        with stdout_to_stderr(), _training_errors():
            common = dict(epochs=args.epochs, batch_size=args.batch_size, max_n=args.max_n, seed=args.seed,
                          progress=progress.bar, log=progress.log)
            if kind == "subtree":
                train_subtree(model, train, parts["dev"], **common)
            elif kind == "chain-crf":
                train_chain_crf(model, train, parts["dev"], l2=args.l2, learning_rate=args.learning_rate,
                                length=args.crf_length, **common)
            elif kind == "bigram":
                solver = ChainSolver()  # exact for zero arc scores, and the decoder evaluate uses for this kind
                model.info["solver"] = solver.name
                if args.objective == "crf":
                    train_crf(model, train, parts["dev"], solver, l2=args.l2, learning_rate=args.learning_rate,
                              **common)
                else:
                    train_perceptron(model, train, parts["dev"], solver, **common)
            elif args.objective == "crf":
                train_crf(model, train, parts["dev"], solver, l2=args.l2, learning_rate=args.learning_rate,
                          **common)
            else:
                train_perceptron(model, train, parts["dev"], solver, **common)
        model.info["train_seconds"] = time.perf_counter() - start
        with atomic_output(out) as partial:
            model.save(partial)
    print(f"wrote {out}: epoch {model.info['chosen_epoch']} chosen on dev, trained in "
          f"{model.info['train_seconds']:.1f} s")
    return 0


def _parser(path: str | None):
    """The parser file the user named, or None."""
    if path is None:
        return None
    from ..parser import ParserModel

    return read_model(ParserModel.load, path, "parser")


def _load_model(path: str):
    from ..compression.baselines import load_model

    return read_model(load_model, path, "model")


def _split(corpus, name: str, data: str = ""):
    """The sentences of split ``name`` (``all``: every one), refused without an aligned one (:func:`_aligned`)."""
    from ..corpora import split_corpus

    return _aligned(corpus.sentences if name == "all" else split_corpus(corpus)[name], corpus, name, data)


def _aligned(sentences: list, corpus, name: str, data: str = "") -> list:
    """``sentences``, the split ``name`` of ``corpus``; one without a sentence aligned to its compression is refused
    (nothing to build, score or train on)."""
    if not any(s.aligned for s in sentences):
        raise UsageError(f"{data or corpus.name}: the {corpus.name} corpus has no aligned sentence in its {name} "
                         "split")
    return sentences


def cmd_build_instances(args: argparse.Namespace) -> int:
    from ..compression.accuracy import target_lengths
    from ..compression.baselines import model_kind
    from ..io import write_instances
    from ..problem import Length

    out = output_path(args.out, force=args.force, what="instances", suffixes=INSTANCE_SUFFIXES)
    model = _load_model(args.model)  # before the corpus, which takes longer to read
    corpus = _corpus(args)
    length = _length(args.length)
    if model_kind(model) == "chain-crf":
        print("note: a chain-CRF model's instances are its equivalent bigram problems (arc scores 0)", file=sys.stderr)
    if model_kind(model) == "subtree":
        raise UsageError("a subtree-deletion model has no compression problems of its own (it decodes over the "
                         "input parse)")
    problems = []
    sentences = [sentence for sentence in _split(corpus, args.split, args.data) if sentence.aligned]
    model.parse_all(sentences, progress.bar)  # with a parse-feature model: the parses in batches
    for sentence in progress.bar(sentences, "instances", unit="sentence"):
        m = target_lengths(sentence, length)[0]
        problems.append(model.problem(sentence, Length.exact(m)))
    write_instances(out, problems)  # whole or not at all
    print(f"wrote {len(problems)} instances of {corpus.name} ({args.split} split) to {out}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    import platform

    from ..compression.accuracy import System, evaluate_systems, format_table
    from ..compression.baselines import model_kind, systems_of

    from ..harness.accuracy_plot import read_accuracy

    out = output_path(args.json_out, what="evaluation results",
                      replaces=lambda path: read_accuracy(path) is not None) if args.json_out else None
    model = _load_model(args.model)  # before the corpus, which takes longer to read
    corpus = _corpus(args)
    length = _length(args.length)
    systems = [System("first-m")]
    if model_kind(model) == "joint":
        names = args.solvers.split(",")
        solvers = [length_decoder(name, "evaluate") for name in names]
        baseline = solvers[0]
        systems += [System(f"bigram-only ({names[0]})", baseline, "bigram-only"),
                    System(f"tree-only ({names[0]})", baseline, "tree-only")]
        systems += [System(f"joint ({name})", solver, "joint") for name, solver in zip(names, solvers)]
        if args.mbr:
            systems.append(System(f"joint, MBR ({names[0]})", baseline, "mbr"))
    else:
        if args.mbr:
            raise UsageError("--mbr needs a joint model")
        systems += systems_of(model, main=True)
    baselines = {}  # each file read once: its info recorded is that of the model that ran
    for path in args.baseline or []:
        other = baselines[path] = _load_model(path)
        if model_kind(other) == "joint":
            raise UsageError(f"{path}: --baseline takes bigram, chain-crf or subtree models (pass a joint model as "
                             "--model)")
        systems += systems_of(other, main=False)
    labels = [system.label for system in systems]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:  # one row per label: a system twice scored each sentence twice into it, two models mixed theirs
        raise UsageError(f"--solvers and --baseline: {twice[0]!r} would be two rows of one name (a solver or a "
                         "baseline's kind given twice)")
    sentences = [s for s in _split(corpus, args.split, args.data) if args.max_n is None or s.n <= args.max_n]
    if not any(s.aligned for s in sentences):  # nothing to score: every F1 would be over no sentence
        raise UsageError(f"--max-n {args.max_n}: no aligned sentence of the {args.split} split is that short")
    with stdout_to_stderr():
        for solver in {id(s.solver): s.solver for s in systems if s.solver is not None}.values():
            solver.warm_up()  # kernels compiled or loaded before the clock: no system's first solve pays for them
        summary = evaluate_systems(model, sentences, systems, length, args.time_limit,
                                   progress=lambda sentences: progress.bar(sentences, "sentences", unit="sentence"))
    print(f"{corpus.name}, {args.split} split, length {length}, {len(sentences)} sentences"
          + (f" with n <= {args.max_n}" if args.max_n else ""))
    print(format_table(summary))
    silent = [label for label, row in summary.items() if row["sentences"] and not row["answered_sentences"]]
    for label in silent:  # an F1 of 0 from no answer at all is no measurement
        print(f"evaluate: {label} answered no sentence ({_row_failures(summary[label])}): its F1 measures nothing")
    record = {"corpus": corpus.name, "split": args.split, "length": length, "max_n": args.max_n,
              "model": model.info, "baselines": {path: other.info for path, other in baselines.items()},
              "alignment": {k: v for k, v in corpus.report.items() if not isinstance(v, list)},
              "systems": summary, "python": platform.python_version(), "machine": platform.machine()}
    if out is not None:
        with atomic_output(out) as partial:
            partial.write_text(json.dumps(record, indent=1))
        print(f"wrote {out}")
    return 1 if silent else 0


def _row_failures(row: dict) -> str:
    """A system's failed decodes and their statuses, for the line that says it answered nothing."""
    statuses = ", ".join(f"{status} {count}" for status, count in sorted((row.get("statuses") or {}).items()))
    return f"{row['failed']} failed" + (f": {statuses}" if statuses else "")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", required=True, choices=Later("compbench.corpora", "CORPORA"), metavar="NAME",
                        help="which corpus the directory holds: %(choices)s")
    parser.add_argument("--data", required=True, metavar="DIR", help="the corpus directory (files found by prefix)")


def register(subparsers: argparse._SubParsersAction) -> None:
    train = subparsers.add_parser("train", help="train a compression model on a corpus's train split")
    _common(train)
    train.add_argument("--out", required=True, metavar="MODEL", help="model file (.npz)")
    train.add_argument("--model-kind", choices=Later("compbench.compression.baselines", "MODEL_KINDS"),
                       metavar="KIND", default="joint", help="joint (default): tokens, arcs and bigrams decoded jointly; bigram: McDonald (2006), "
                            "token and bigram features only, trained as such, decoded by an exact chain DP; "
                            "chain-crf: a keep/delete linear-chain CRF decoded by Viterbi with a count (its "
                            "--objective is always crf); subtree: subtree deletion over the input parse of "
                            "--parser, token features, the averaged perceptron")
    train.add_argument("--solver", default=DEFAULT_SOLVER, help=f"exact decoder (default {DEFAULT_SOLVER})")
    train.add_argument("--epochs", type=number_in(int, 1), default=8,
                       help="passes over the train split; the epoch with the best dev F1 is kept (default %(default)s)")
    train.add_argument("--second-order", action="store_true",
                       help="add sibling features (second-order scores; decoded by a second-order solver)")
    train.add_argument("--batch-size", type=number_in(int, 1), default=8, help="sentences per update (default 8)")
    train.add_argument("--objective", choices=("crf", "perceptron"), default="crf",
                       help="CRF (default): conditional log-likelihood of the gold compression with its tree latent, "
                            "by inside-outside and AdaGrad; or the averaged structured perceptron (several times "
                            "faster per epoch)")
    train.add_argument("--l2", type=number_in(float, 0), default=1e-4,
                       help="CRF: L2 regularization per example (default 1e-4)")
    train.add_argument("--learning-rate", type=number_in(float, 0, open_low=True), default=0.2,
                       help="CRF: AdaGrad step size (default 0.2)")
    train.add_argument("--crf-length", choices=("free", "gold"), default="free",
                       help="chain-crf: normalize over all keep/delete labellings (free, default) or over those "
                            "of the gold compression's length (gold, as decoded)")
    train.add_argument("--max-n", type=number_in(int, 1), default=60,
                       help="leave longer sentences out of training (default 60)")
    train.add_argument("--tagger-data", metavar="DIR", help="Google corpus directory: train a POS tagger on its "
                                                            "train split and tag this corpus with it")
    train.add_argument("--tagger-epochs", type=number_in(int, 1), default=4,
                       help="POS tagger training passes (default 4)")
    train.add_argument("--seed", type=number_in(int, 0), default=0, help="shuffling seed (default 0)")
    train.add_argument("--parser", metavar="PARSER", help="a parser file (compbench parser train): every sentence is "
                                                          "parsed once and the parse features are added; the model "
                                                          "file keeps the parser, evaluate also reports syntactic F1")
    train.set_defaults(func=cmd_train)

    build = subparsers.add_parser("build-instances", help="write instances with a model's learned scores")
    _common(build)
    build.add_argument("--model", required=True, help="model file written by compbench train")
    build.add_argument("--out", required=True, metavar="SET", help="instance file (.jsonl, .json or .npz)")
    build.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    build.add_argument("--length", default="gold", help="'gold' (first annotator's length) or a ratio R")
    build.add_argument("--split", default="test", choices=("train", "dev", "test", "all"),
                       help="which part of the corpus (default test)")
    build.set_defaults(func=cmd_build_instances)

    evaluate = subparsers.add_parser("evaluate", help="token F1 of solvers and baselines against gold compressions")
    _common(evaluate)
    evaluate.add_argument("--model", required=True, help="model file written by compbench train")
    evaluate.add_argument("--solvers", default=DEFAULT_SOLVER, help="comma-separated; the first also runs the "
                                                                    "bigram-only and tree-only baselines "
                                                                    "(joint models)")
    evaluate.add_argument("--baseline", action="append", metavar="MODEL",
                          help="a bigram, chain-crf or subtree model file (compbench train --model-kind) to "
                               "report beside --model; repeatable")
    evaluate.add_argument("--length", default="gold", help="'gold' or a ratio R (m = round(R n))")
    evaluate.add_argument("--split", default="test", choices=("train", "dev", "test", "all"),
                          help="which part of the corpus (default test)")
    evaluate.add_argument("--max-n", type=number_in(int, 1), help="only sentences with at most this many tokens")
    evaluate.add_argument("--time-limit", type=positive_seconds, metavar="S", help="per solve")
    evaluate.add_argument("--json-out", metavar="FILE", help="also write the results as JSON (for compbench plot)")
    evaluate.add_argument("--mbr", action="store_true", help="add minimum-Bayes-risk decoding of the joint model "
                                                               "(the kept set of highest expected token F1 under the "
                                                               "posterior marginals, by the first solver)")
    evaluate.set_defaults(func=cmd_evaluate)
