"""``compbench parser train``, ``compbench parser parse`` and ``compbench parser evaluate``.

A treebank directory holds CoNLL-U files whose names contain ``train``, ``dev`` and ``test`` (as UD releases:
``en_ewt-ud-train.conllu``, ...).
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

from .. import progress
from ..parser.defaults import FEATURES, L2, LEARNING_RATE
from ..files import atomic_output
from .common import UsageError, keeping_finished_epochs, model_info, number_in, output_path, read_model

if TYPE_CHECKING:
    from ..parser.conllu import TreeSentence
    from ..parser.model import ParserModel

SPLITS = ("train", "dev", "test")
T = TypeVar("T")
COST = 1.0  # the perceptron's default loss-augmented cost (0: the plain perceptron)
MAX_STEP = 1.0  # MIRA's default largest step (PA-I's C); EWT dev: the same UAS with 0.1


def read_split(directory: str, split: str) -> list[TreeSentence]:
    """The sentences of the one ``*{split}*.conllu`` file in ``directory``, every one with heads."""
    from ..corpora import CorpusError
    from ..parser.conllu import read_conllu

    folder = Path(directory)
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a directory")
    found = sorted(folder.glob(f"*{split}*.conllu"))
    if len(found) != 1:
        raise UsageError(f"{folder}: expected one *{split}*.conllu file, found {len(found)}")
    progress.stage(f"reading {found[0]}")
    try:
        sentences = read_conllu(found[0])
    except CorpusError as exc:
        raise UsageError(str(exc)) from None
    for s in sentences:
        if s.heads is None:
            raise UsageError(f"{found[0]}: sentence {s.id or '(no id)'} has no heads")
    if not any(s.words for s in sentences):  # nothing to train on or to score
        raise UsageError(f"{found[0]}: no sentence with words in it")
    return sentences


def with_tags(sentences: list[TreeSentence], tagged: list[tuple[list[str], list[str] | None]]) -> list[TreeSentence]:
    """Copies of ``sentences`` carrying the (XPOS, UPOS or None) of ``tagged`` (UPOS kept when None)."""
    out = []
    for sentence, (xpos, upos) in zip(sentences, tagged):
        copied = copy.copy(sentence)
        copied.xpos = list(xpos)
        if upos is not None:
            copied.upos = list(upos)
        out.append(copied)
    return out


def objective_number(args: argparse.Namespace, option: str, objective: str, default: float, why: str = "") -> float:
    """The value of a number option that only ``objective`` reads (its range checked by its argparse type):
    refused with another objective (``why`` says why), ``default`` when not given."""
    value = getattr(args, option)
    if value is not None and args.objective != objective:
        raise UsageError(f"--{option.replace('_', '-')} goes with --objective {objective}{why}")
    return default if value is None else value


def cmd_train(args: argparse.Namespace) -> int:
    from ..learning.tagger import StructuredTagger
    from ..parser.features import build_vocabulary
    from ..parser.labels import ArcLabeler
    from ..parser.model import ParserModel
    from ..parser.train import train_crf, train_online

    if args.second_order and args.objective == "crf":
        raise UsageError("--second-order goes with --objective perceptron or mira")
    cost = objective_number(args, "cost", "perceptron", COST, why=(
        " (the tree-CRF has no loss-augmented decoding; MIRA's loss is the number of wrong heads: a cost would only "
        "scale its weights)"))
    max_step = objective_number(args, "max_step", "mira", MAX_STEP)
    learning_rate = objective_number(args, "learning_rate", "crf", LEARNING_RATE)
    l2 = objective_number(args, "l2", "crf", L2)
    if args.gold_copies and args.folds < 2:
        raise UsageError("--gold-copies goes with --folds 2 or more (without folds the parser trains on the gold "
                         "tags)")
    out = output_path(args.out, what="parser model",  # before the training, not after it
                      replaces=lambda path: (model_info(path) or {}).get("kind") == "parser")
    train, dev = read_split(args.treebank, "train"), read_split(args.treebank, "dev")
    if not has_gold(train, "xpos"):  # a tagger of "_" and features of nothing
        raise UsageError(f"{args.treebank}: its train split has no XPOS (column 5 is _ throughout): the tagger and "
                         "the features read it")
    if args.folds > len(train):  # a fold without sentences would train its tagger on nothing
        raise UsageError(f"--folds {args.folds}: more folds than the {len(train)} sentences of the train split")
    lexicon = tagger_lexicon(args.tagger_lexicon)
    universal = all(u != "_" for s in train for u in s.upos)  # the treebank has UPOS: the features read it
    model = ParserModel(vocabulary=build_vocabulary([s.words for s in train]), info={
        "features": args.feature_set, "second_order": args.second_order, "objective": args.objective,
        "epochs": args.epochs, "seed": args.seed, "tagger_seeds": args.tagger_seeds,
        **({"cost": cost} if args.objective != "crf" else {}),
        **({"max_step": max_step} if args.objective == "mira" else {}),
        **({"learning_rate": learning_rate, "l2": l2} if args.objective == "crf" else {}), "universal_tags": universal,
        "train_sentences": len(train), "tagger_lexicon_sentences": len(lexicon),
        "train_tags": (f"jackknifed, {args.folds} folds" + (", and gold" if args.gold_copies else "")
                       if args.folds > 1 else "gold")})
    start = time.perf_counter()
    training = tagger_training(model, train)
    seeds = (f"{args.tagger_seeds} seeds, {min(args.jobs, args.tagger_seeds)} at a time" if args.tagger_seeds > 1
             else "1 seed")
    progress.stage(f"training the POS tagger on {len(train)} sentences: {args.tagger_epochs} epochs, {seeds}")
    inner = progress.bar if args.jobs == 1 or args.tagger_seeds == 1 else None  # no bars from worker processes
    taggers = in_processes(StructuredTagger.fit, [(training, args.tagger_epochs, args.seed + k, lexicon, inner)
                                                  for k in range(args.tagger_seeds)], args.jobs, "tagger seeds")
    model.tagger = StructuredTagger.averaged(taggers)
    del taggers
    model.info["tagger_seconds"] = time.perf_counter() - start
    dev_tagged = with_tags(dev, [model.tag(s.words) for s in dev])
    model.info["dev_tagging"] = tagging_accuracy(dev, [s.xpos for s in dev_tagged])
    progress.log(f"POS tagger{f' (the mean of {args.tagger_seeds} seeds)' if args.tagger_seeds > 1 else ''}: "
         f"trained on {len(train)} sentences in {model.info['tagger_seconds']:.1f} s, dev accuracy "
         f"{percent(model.info['dev_tagging'], 'no gold XPOS in dev')}"
         + (f" (UPOS {percent(tagging_accuracy(dev, [s.upos for s in dev_tagged], 'upos'), 'no gold in dev')})"
            if universal else ""))
    if args.folds > 1:
        progress.stage(f"jackknifing the training tags: a tagger for each of {args.folds} folds, "
                       f"{min(args.jobs, args.folds)} at a time")
        start = time.perf_counter()
        jackknifed = jackknife_tags(model, train, args.folds, args.tagger_epochs, args.seed, lexicon, args.jobs)
        train = train + jackknifed if args.gold_copies else jackknifed
        progress.log(f"jackknifed training tags ({args.folds} folds, {args.jobs} at a time): "
             f"{time.perf_counter() - start:.1f} s" + ("; with the gold-tagged copies" if args.gold_copies else ""))
    progress.stage(f"training the parser ({args.objective}): {args.epochs} epochs over {len(train)} sentences, the "
                   "best on dev kept")
    start = time.perf_counter()
    common = dict(epochs=args.epochs, seed=args.seed, log=progress.log, progress=progress.bar)
    with keeping_finished_epochs(model, out):  # interrupted after an epoch: the best so far, written
        if args.objective == "crf":
            train_crf(model, train, dev_tagged, learning_rate=learning_rate, l2=l2, **common)
        else:
            train_online(model, train, dev_tagged, cost=cost, max_step=max_step if args.objective == "mira" else None,
                         **common)
        model.info["train_seconds"] = time.perf_counter() - start
        if args.label_epochs > 0 and not has_gold(train, "deprels"):
            progress.log("arc labeler: not trained, the train split has no DEPREL (column 8 is _ throughout)")
        elif args.label_epochs > 0:
            progress.stage(f"training the arc labeler: {args.label_epochs} epochs")
            start = time.perf_counter()
            model.labeler = ArcLabeler.fit(train, model.vocabulary, epochs=args.label_epochs, seed=args.seed)
            dev_labels = [model.labeler.label(s.words, t.xpos, s.heads) for s, t in zip(dev, dev_tagged)]
            accuracy = tagging_accuracy(dev, dev_labels, column="deprels")
            model.info.update(labeler_seconds=time.perf_counter() - start, dev_label_accuracy=accuracy)
            progress.log(f"arc labeler: trained in {model.info['labeler_seconds']:.1f} s, dev accuracy on the gold "
                         f"arcs {percent(accuracy, 'no gold DEPREL in dev')}")
        with atomic_output(out) as partial:
            model.save(partial)
    print(f"wrote {out}: epoch {model.info['chosen_epoch']} chosen on dev (UAS "
          f"{100 * model.info['history'][model.info['chosen_epoch'] - 1]['dev_uas']:.2f} with predicted tags), "
          f"trained in {model.info['train_seconds']:.1f} s")
    return 0


def tagger_lexicon(directory: str | None) -> list[tuple[list[str], list[str]]]:
    """The (tokens, PTB tags) of the Google corpus's training part in ``directory`` (none without one): the tag
    classes of its words are features of the tagger."""
    from ..corpora import CorpusError, read_corpus, split_corpus

    if directory is None:
        return []
    progress.stage(f"reading the Google corpus in {directory} for the tagger's lexicon")
    try:
        return [(s.tokens, s.pos) for s in split_corpus(read_corpus("google", directory))["train"]]
    except CorpusError as exc:
        raise UsageError(str(exc)) from None


def jackknife_tags(model: ParserModel, train: list[TreeSentence], folds: int, epochs: int, seed: int,
                   lexicon: list[tuple[list[str], list[str]]] = (), jobs: int = 1) -> list[TreeSentence]:
    """Copies of the training sentences tagged by a tagger of ``model``'s kind trained on the other folds (sentence i
    is in fold i % folds), so that the parser learns from tags as wrong as the ones it will see; ``jobs`` folds'
    taggers train at once, in separate processes (the same tags for any ``jobs``)."""
    held_out = [range(fold, len(train), folds) for fold in range(folds)]
    inner = progress.bar if jobs == 1 else None  # no bars from worker processes
    work = [(model.universal, tagger_training(model, [s for i, s in enumerate(train) if i % folds != fold]),
             [train[i].words for i in held_out[fold]], epochs, seed, lexicon, inner) for fold in range(folds)]
    fold_tags = in_processes(_fold_tags, work, jobs, "jackknife folds")
    tagged: list[tuple[list[str], list[str] | None]] = [([], None) for _ in train]
    for indices, tags in zip(held_out, fold_tags):
        for i, sentence_tags in zip(indices, tags):
            tagged[i] = sentence_tags
    return with_tags(train, tagged)


def in_processes(function: Callable[..., T], work: list[tuple], jobs: int, desc: str = "") -> list[T]:
    """``function(*arguments)`` for each tuple of ``work``, in order, ``jobs`` at a time in separate processes (in
    this one when ``jobs`` is 1 or there is one call): the taggers' training, about 2 GB each.  With ``desc``, a
    progress bar counts the calls that are done (when there are several).

    >>> in_processes(pow, [(2, 3), (3, 2)], jobs=1)
    [8, 9]
    """
    def done(results):
        return progress.bar(results, desc, total=len(work), unit="tagger") if desc and len(work) > 1 else results

    if jobs == 1 or len(work) < 2:
        return list(done(function(*arguments) for arguments in work))
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(min(jobs, len(work)))
    try:
        try:
            results = list(done(pool.map(function, *zip(*work))))
        except BrokenProcessPool:
            raise UsageError(f"--jobs {jobs}: a tagger's process died (out of memory? each takes about 2 GB); "
                             f"try fewer jobs") from None
    except BaseException:  # an interrupt (Ctrl-C, SIGTERM) ends the running taggers too, not after their training
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:  # SIGKILL: a worker forked under the CLI's SIGTERM handler would catch SIGTERM
            process.kill()
        raise
    pool.shutdown()
    return results


def _fold_tags(universal: bool, training: list[tuple[list[str], list[str]]], sentences: list[list[str]],
               epochs: int, seed: int, lexicon: list[tuple[list[str], list[str]]], bar: Callable | None = None
               ) -> list[tuple[list[str], list[str] | None]]:
    """The (XPOS, UPOS or None) of ``sentences`` by a tagger trained on ``training``, for :func:`jackknife_tags`
    (``bar``: the training's progress)."""
    from ..learning.tagger import StructuredTagger
    from ..parser.model import ParserModel

    model = ParserModel(info={"universal_tags": universal})
    model.tagger = StructuredTagger.fit(training, epochs=epochs, seed=seed, lexicon=lexicon, progress=bar)
    return [model.tag(words) for words in sentences]


def tagger_training(model: ParserModel, sentences: list[TreeSentence]) -> list[tuple[list[str], list[str]]]:
    """The (words, tags) ``model``'s tagger learns: the PTB tags, or the (XPOS, UPOS) pairs when it reads both."""
    from ..parser.model import paired_tags

    return [(s.words, paired_tags(s.xpos, s.upos) if model.universal else s.xpos) for s in sentences]


def has_gold(sentences: list[TreeSentence], column: str) -> bool:
    """Whether the sentences give a gold value in ``column`` (``xpos``, ``upos``, ``deprels``): not ``_``
    throughout, nor no word."""
    return any(v != "_" for s in sentences for v in getattr(s, column))


def tagging_accuracy(sentences: list[TreeSentence], tags: list[list[str]], column: str = "xpos") -> float | None:
    """The share of words whose tag equals their XPOS (or another ``column``: ``upos``, ``deprels``); None when the
    sentences have no gold tag there (:func:`has_gold`)."""
    if not has_gold(sentences, column):
        return None
    right = sum(a == b for s, t in zip(sentences, tags) for a, b in zip(getattr(s, column), t))
    return right / sum(s.n for s in sentences)


def percent(share: float | None, missing: str = "no gold tags") -> str:
    """A share as a percentage with two decimals, or ``- (missing)`` for none."""
    return f"- ({missing})" if share is None else f"{100 * share:.2f}"


def _load_model(path: str) -> ParserModel:
    from ..parser.model import ParserModel

    return read_model(ParserModel.load, path, "parser model")


def _is_conllu(path: Path) -> bool:
    if path.suffix == ".conllu":
        return True
    try:
        with path.open(encoding="utf-8-sig") as handle:  # a byte-order mark is no part of the first line
            first = next((line for line in handle if line.strip()), "")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc})") from None
    return first.startswith("#") or "\t" in first


def parse_sentences(model: ParserModel, sentences: list[TreeSentence]) -> list[TreeSentence]:
    """Copies of ``sentences`` with the model's tags (XPOS, and UPOS when the model reads them), heads and labels
    (DEPREL; ``_`` without a labeler)."""
    out = []
    parses = model.tag_and_parse_many((s.words, s.xpos, s.upos)
                                      for s in progress.bar(sentences, "sentences", unit="sentence"))
    for sentence, (xpos, upos, heads) in zip(sentences, parses):
        (parsed,) = with_tags([sentence], [(xpos, upos)])
        parsed.heads = heads
        parsed.deprels = model.labels(parsed.words, parsed.xpos, parsed.heads)
        out.append(parsed)
    return out


def cmd_parse(args: argparse.Namespace) -> int:
    from ..corpora import CorpusError
    from ..parser.conllu import format_conllu, read_conllu, read_tokens

    model = _load_model(args.model)
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: {'is a directory, expected a file' if path.is_dir() else 'no such file'}")
    try:
        conllu = _is_conllu(path) if args.format == "auto" else args.format == "conllu"
        sentences = read_conllu(path) if conllu else read_tokens(path)
    except CorpusError as exc:
        raise UsageError(str(exc)) from None
    sys.stdout.write(format_conllu(parse_sentences(model, sentences)))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from ..parser.train import attachment_score

    sentences = read_split(args.treebank, args.split)
    model = _load_model(args.model)
    model.parse(["a"], ["DT"], universal_tags=["DET"])  # compile or load the chart's kernels before the clock starts
    start = time.perf_counter()
    tagged = [model.tag(s.words, s.xpos, s.upos) for s in progress.bar(sentences, "tagging", unit="sentence")]
    tagging = time.perf_counter() - start
    heads = model.parse_many((s.words, xpos, upos) for s, (xpos, upos)
                             in progress.bar(list(zip(sentences, tagged)), "parsing", unit="sentence"))
    parsing = time.perf_counter() - start - tagging
    labels = [model.labels(s.words, xpos, h) for s, (xpos, _), h in zip(sentences, tagged, heads)]
    total = time.perf_counter() - start
    words = sum(s.n for s in sentences)
    print(f"{args.split}: {len(sentences)} sentences, {words} words, predicted tags")
    print(f"{'tagging accuracy':<19}"
          + percent(tagging_accuracy(sentences, [xpos for xpos, _ in tagged]), "no gold XPOS in the split"))
    if model.universal:
        print(f"{'UPOS accuracy':<19}" + percent(tagging_accuracy(sentences, [upos for _, upos in tagged], "upos"),
                                                 "no gold UPOS in the split"))
    print(f"{'UAS (all words)':<19}{percent(attachment_score(sentences, heads))}")
    if not has_gold(sentences, "upos"):
        print(f"{'UAS (no PUNCT)':<19}{percent(None, 'no gold UPOS to find the punctuation by')}")
    elif all(u == "PUNCT" for s in sentences for u in s.upos):
        print(f"{'UAS (no PUNCT)':<19}{percent(None, 'every word is punctuation')}")
    else:
        print(f"{'UAS (no PUNCT)':<19}{percent(attachment_score(sentences, heads, punctuation=False))}")
    if model.labeler is not None:
        las = attachment_score(sentences, heads, labels=labels) if has_gold(sentences, "deprels") else None
        print(f"{'LAS (all words)':<19}{percent(las, 'no gold DEPREL in the split')}")
    print(f"speed              {len(sentences) / total:.0f} sentences/s tagging, parsing and labelling, "
          f"{len(sentences) / parsing:.0f} sentences/s parsing only (features and decoding), one process")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("parser", help="train, run and evaluate the dependency parser (CoNLL-U)")
    commands = group.add_subparsers(dest="parser_command", required=True, metavar="COMMAND")

    train = commands.add_parser("train", help="train the POS tagger, the parser and the arc labeler on a "
                                              "treebank's train split, choosing the parser's epoch on dev")
    train.add_argument("--treebank", required=True, metavar="DIR", help="directory of *train*/*dev*.conllu files")
    train.add_argument("--out", required=True, metavar="PARSER", help="model file (.npz)")
    train.add_argument("--epochs", type=number_in(int, 1), default=10,
                       help="passes over train; the best on dev is kept (default %(default)s)")
    train.add_argument("--objective", choices=("mira", "perceptron", "crf"), default="mira",
                       help="averaged passive-aggressive updates (1-best MIRA, default), averaged perceptron or "
                            "tree-CRF (AdaGrad on the log-likelihood)")
    train.add_argument("--second-order", action="store_true", help="add sibling features (perceptron and MIRA "
                                                                     "only; the chart decodes them in the same O(n^3))")
    train.add_argument("--feature-set", type=int, choices=range(1, FEATURES + 1), default=FEATURES, metavar="K",
                       help=f"the arc features' version (default {FEATURES}: the in-between template over coarse tags "
                            f"too; 1: as models from before it)")
    train.add_argument("--learning-rate", type=number_in(float, 0, open_low=True),
                       help=f"CRF: AdaGrad step size (default {LEARNING_RATE:g})")
    train.add_argument("--l2", type=number_in(float, 0), help=f"CRF: the l2 penalty's weight (default {L2:g})")
    train.add_argument("--cost", type=number_in(float, 0), help=f"perceptron: decode each training sentence with "
                       f"this added to every non-gold arc's score (loss-augmented; 0: the plain perceptron; default "
                       f"{COST:g}; MIRA always decodes with 1, its loss being the number of wrong heads)")
    train.add_argument("--max-step", type=number_in(float, 0, open_low=True),
                       help=f"MIRA: the largest step of one update (the C of passive-aggressive PA-I; default "
                            f"{MAX_STEP:g}, which on EWT never clips: the steps are about 0.004)")
    train.add_argument("--tagger-epochs", type=number_in(int, 1), default=15,
                       help="POS tagger training passes (default 15)")
    train.add_argument("--tagger-lexicon", metavar="GOOGLE_DIR", help="Google compression corpus directory: the "
                       "tag classes of the words of its training part (Google's PTB tags) become tagger features")
    train.add_argument("--folds", type=number_in(int, 1), default=1, help="train the parser on tags from taggers "
                       "trained on the other folds (default 1: on the gold tags)")
    train.add_argument("--gold-copies", action="store_true", help="with --folds: train on a gold-tagged copy of "
                       "every sentence beside its jackknifed copy (twice the time an epoch)")
    train.add_argument("--tagger-seeds", type=number_in(int, 1), default=1, metavar="K",
                       help="the tagger is the mean of K taggers trained with seeds SEED..SEED+K-1 (default 1)")
    train.add_argument("--jobs", type=number_in(int, 1), default=1, metavar="N",
                       help="taggers (seeds, --folds) trained at once, one process each (default 1; each takes "
                            "about 2 GB, and this process keeps about 0.4 GB per seed's tagger)")
    train.add_argument("--label-epochs", type=number_in(int, 0), default=5,
                       help="arc labeler (DEPREL) training passes (default 5; 0: no labels)")
    train.add_argument("--seed", type=number_in(int, 0), default=0, help="shuffling seed (default 0)")
    train.set_defaults(func=cmd_train)

    parse = commands.add_parser("parse", help="parse a CoNLL-U file or one tokenized sentence per line; CoNLL-U "
                                              "on stdout")
    parse.add_argument("file", help="CoNLL-U (.conllu, or lines with tabs) or plain text, one sentence a line")
    parse.add_argument("--model", required=True, metavar="PARSER", help="model file from compbench parser train")
    parse.add_argument("--format", choices=("auto", "conllu", "tokens"), default="auto",
                       help="input format (default auto: CoNLL-U when the name ends in .conllu or the first line is "
                            "a comment or has tabs)")
    parse.set_defaults(func=cmd_parse)

    evaluate = commands.add_parser("evaluate", help="UAS, LAS and tagging accuracy on a treebank split, predicted tags")
    evaluate.add_argument("--model", required=True, metavar="PARSER", help="model file from compbench parser train")
    evaluate.add_argument("--treebank", required=True, metavar="DIR", help="directory of *{split}*.conllu files")
    evaluate.add_argument("--split", choices=SPLITS, default="test", help="which split (default test)")
    evaluate.set_defaults(func=cmd_evaluate)
