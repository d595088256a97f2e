"""The dependency parser: CoNLL-U reading and writing, decoding on the chart, training, and the commands.

The tests write a tiny treebank of their own; the last ones read the UD English EWT treebank in
../shared/data/ud-english-ewt when that directory exists.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import compbench
from compbench.cli import main
from compbench.corpora import CorpusError
from compbench.learning.tagger import OutdatedModelError, StructuredTagger
from compbench.parser import ParserModel, decode, format_conllu, parse_conllu, parse_problem, read_conllu
from compbench.cli.parser import jackknife_tags, tagger_training
from compbench.parser.features import FEATURES, PAD, SIZE, ArcFeatures, arc_features, build_vocabulary
from compbench.parser.train import (attachment_score, cost_augmented, passive_aggressive_step, train_crf,
                                    train_online)
from tests.test_corpora import write_google

EWT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ud-english-ewt"
NEEDS_EWT = pytest.mark.skipif(not EWT.is_dir(), reason=f"UD English EWT treebank not found at {EWT}")

TINY = """\
# sent_id = t1
# text = I don't know.
1\tI\tI\tPRON\tPRP\t_\t4\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tknow\tknow\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = t2
1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_
1.1\tyou\tyou\tPRON\tPRP\t_\t_\t_\t1:nsubj\t_
2\thome\thome\tADV\tRB\t_\t1\tadvmod\t_\t_

"""


def test_reader_keeps_the_basic_tree_and_writes_it_back() -> None:
    first, second = parse_conllu(TINY, "tiny.conllu")
    assert first.words == ["I", "do", "n't", "know", "."] and first.id == "t1"
    assert first.heads.tolist() == [-1, 4, 4, 4, 0, 4]
    assert first.xpos == ["PRP", "VBP", "RB", "VB", "."] and first.upos[4] == "PUNCT"
    assert second.words == ["Go", "home"] and second.heads.tolist() == [-1, 0, 1]  # the empty node 1.1 is skipped
    written = format_conllu([first, second])
    assert "2-3\tdon't" in written and "1.1\t" not in written
    assert [s.heads.tolist() for s in parse_conllu(written)] == [[-1, 4, 4, 4, 0, 4], [-1, 0, 1]]


@pytest.mark.parametrize("bad, line, what", [
    ("1\ta\ta\tX\tX\t_\t0\troot\t_\n", 1, "10 tab-separated columns"),
    ("1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n3\tb\tb\tX\tX\t_\t1\tdep\t_\t_\n", 2, "expected word ID 2"),
    ("1\ta\ta\tX\tX\t_\tzero\troot\t_\t_\n", 1, "HEAD must be"),
    ("1\ta\ta\tX\tX\t_\t2\tdep\t_\t_\n2\tb\tb\tX\tX\t_\t1\tdep\t_\t_\n", 2, "not a tree"),
    ("1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2\tb\tb\tX\tX\t_\t0\troot\t_\t_\n", 2, "2 words have HEAD 0"),
    ("1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2\tb\tb\tX\tX\t_\t21\tdep\t_\t_\n", 2, "HEAD 21 is outside"),
    ("1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2\tb\tb\tX\tX\t_\t99999999999999999999\tdep\t_\t_\n", 2,
     "HEAD 99999999999999999999 is outside"),
    ("1-3\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1-2\tb\t_\t_\t_\t_\t_\t_\t_\t_\n", 2, "multiword-token range"),
    ("1-5\tab\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n", 1,
     "range '1-5' (the sentence has 1 words)"),  # beyond the sentence
    ("1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_\n", 2,
     "range '2-3' (the sentence has 1 words)"),  # after the last word
    ("1-3\tabc\t_\t_\t_\t_\t_\t_\t_\t_\n1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n"
     "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_\n", 3, "range '2-3'"),  # overlapping the one before
])
def test_reader_refuses_malformed_lines_in_one_line(bad: str, line: int, what: str) -> None:
    with pytest.raises(CorpusError) as error:
        parse_conllu(TINY + bad, "bad.conllu")
    message = str(error.value)
    assert message.startswith(f"bad.conllu: line {TINY.count(chr(10)) + line}: ") and what in message
    assert "\n" not in message


def projective_trees(n: int):
    """Every heads array (n+1 entries) of a projective tree over 1..n with one root word, by enumeration."""
    for choice in itertools.product(range(n + 1), repeat=n):
        heads = np.array([-1, *choice])
        if any(heads[k] == k for k in range(1, n + 1)) or sum(h == 0 for h in choice) != 1:
            continue
        arcs = [(min(h, m), max(h, m)) for m, h in enumerate(choice, start=1)]
        crossing = any(a < c < b < d for (a, b), (c, d) in itertools.permutations(arcs, 2))
        reaches_root = all(_reaches_root(heads, k) for k in range(1, n + 1))
        if reaches_root and not crossing:
            yield heads


def _reaches_root(heads: np.ndarray, k: int) -> bool:
    for _ in range(len(heads)):
        k = heads[k]
        if k == 0:
            return True
    return False


def arc_total(arc_scores: np.ndarray, heads: np.ndarray) -> float:
    """The first-order score of the tree ``heads``."""
    return sum(arc_scores[heads[m], m] for m in range(1, len(heads)))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_decoding_on_the_chart_is_the_best_projective_tree(n: int) -> None:
    trees = list(projective_trees(n))
    solver = compbench.get_solver("hook-dp")
    brute = compbench.get_solver("brute-force")
    for seed in range(12):
        rng = np.random.default_rng(seed)
        scores = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(float) if seed % 2 else rng.standard_normal(
            (n + 1, n + 1))
        value = lambda heads: arc_total(scores, heads)  # noqa: E731
        best = max(value(t) for t in trees)
        heads = decode(solver, scores)
        assert any(np.array_equal(heads, t) for t in trees) and np.isclose(value(heads), best)
        assert np.isclose(brute.solve(parse_problem(scores)).objective, best)
        # the tree-CRF's log Z over the same problem sums over exactly these trees
        log_z = np.logaddexp.reduce([value(t) for t in trees])
        assert np.isclose(compbench.log_partition(parse_problem(scores)), log_z)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_cost_augmented_decoding_maximizes_score_plus_hamming_loss(n: int) -> None:
    trees = list(projective_trees(n))
    solver = compbench.get_solver("hook-dp")
    for seed in range(8):
        rng = np.random.default_rng(seed)
        scores = rng.standard_normal((n + 1, n + 1))
        gold = trees[seed % len(trees)]
        loss_augmented = lambda heads: arc_total(scores, heads) + 0.7 * np.sum(heads[1:] != gold[1:])  # noqa
        heads = decode(solver, cost_augmented(scores, gold, 0.7))
        assert np.isclose(loss_augmented(heads), max(loss_augmented(t) for t in trees))


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_second_order_decoding_is_the_best_projective_tree(n: int) -> None:
    trees = list(projective_trees(n))
    solver = compbench.get_solver("hook-dp")
    for seed in range(6):
        rng = np.random.default_rng(seed)
        arc, sibling = rng.standard_normal((n + 1, n + 1)), rng.standard_normal((n + 1, n + 1, n + 1))
        value = lambda heads: arc_total(arc, heads) + sum(sibling[t] for t in compbench.sibling_pairs(heads))  # noqa
        heads = decode(solver, arc, sibling)
        assert np.isclose(value(heads), max(value(t) for t in trees))


def test_tree_counts_match_the_catalan_like_numbers() -> None:
    # projective trees with one root word over n words: 1, 2, 7, 30, 143 (the enumeration the test above trusts)
    assert [len(list(projective_trees(n))) for n in range(1, 6)] == [1, 2, 7, 30, 143]


def test_features_cover_every_pair_and_between_words() -> None:
    f = arc_features("the big cat sat on the mat".split(), "DT JJ NN VBD IN DT NN".split())
    assert f.fixed.shape[:2] == (8, 8) and f.between.shape == (8, 8, 8, 2)  # tags and coarse tags
    inside = f.between[4, :, :, 0] != PAD  # head 4 ("sat"): words strictly between it and each modifier
    assert np.array_equal(inside, f.between[4, :, :, 1] != PAD)
    assert inside[:, 1].tolist() == [False, False, True, True, False, False, False, False]
    assert not inside[:, 5].any()
    vocabulary = build_vocabulary([["the", "the", "cat"]])  # "cat" is rare: backed off
    backed = arc_features(["the", "cat"], ["DT", "NN"], vocabulary)
    assert not np.array_equal(backed.fixed, arc_features(["the", "cat"], ["DT", "NN"]).fixed)


NOUNS = ["cat", "dog", "mat", "man", "park"]
VERBS = ["saw", "liked", "found"]
ADJECTIVES = ["big", "red", "old"]


def tiny_sentence(rng: random.Random, number: int) -> str:
    """A sentence of a tiny grammar (NP V NP [P NP] .) as CoNLL-U, with UD-style heads."""
    words: list[tuple[str, str, str, int | str, str]] = []  # form, upos, xpos, head (int or a key), label

    def noun_phrase(label: str, head: str) -> str:
        key = f"np{len(words)}"
        words.append(("the", "DET", "DT", key, "det"))
        if rng.random() < 0.5:
            words.append((rng.choice(ADJECTIVES), "ADJ", "JJ", key, "amod"))
        words.append((rng.choice(NOUNS), "NOUN", "NN", head, label))
        return key

    subject = noun_phrase("nsubj", "verb")
    words.append((rng.choice(VERBS), "VERB", "VBD", 0, "root"))
    keys = {subject: len(words) - 1, "verb": len(words)}
    obj = noun_phrase("obj", "verb")
    keys[obj] = len(words)
    if rng.random() < 0.5:
        words.append(("in", "ADP", "IN", f"pp{len(words)}", "case"))
        case = len(words)
        pp = noun_phrase("obl", "verb")
        keys[pp] = len(words)
        keys[f"pp{case - 1}"] = len(words)
    words.append((".", "PUNCT", ".", "verb", "punct"))
    lines = [f"# sent_id = tiny-{number}"]
    for i, (form, upos, xpos, head, label) in enumerate(words, start=1):
        lines.append(f"{i}\t{form}\t{form}\t{upos}\t{xpos}\t_\t{keys.get(head, head)}\t{label}\t_\t_")
    return "\n".join(lines) + "\n\n"


def write_treebank(directory: Path, sizes: dict[str, int] = {"train": 40, "dev": 10, "test": 10}) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    for split, count in sizes.items():
        text = "".join(tiny_sentence(rng, i) for i in range(count))
        (directory / f"tiny-ud-{split}.conllu").write_text(text)
    return directory


def test_tiny_grammar_makes_trees(tmp_path: Path) -> None:
    sentences = read_conllu(write_treebank(tmp_path) / "tiny-ud-train.conllu")
    assert len(sentences) == 40 and all(s.heads is not None for s in sentences)


def train_mira(*args, **kwargs) -> list[dict]:
    return train_online(*args, max_step=1.0, **kwargs)


@pytest.mark.parametrize("train", [train_online, train_mira, train_crf])
def test_training_fits_a_tiny_treebank(tmp_path: Path, train) -> None:
    sentences = read_conllu(write_treebank(tmp_path) / "tiny-ud-train.conllu")
    model = ParserModel(vocabulary=build_vocabulary([s.words for s in sentences]))
    history = train(model, sentences, sentences, epochs=6, log=lambda line: None)
    predicted = [model.parse(s.words, s.xpos) for s in sentences]
    assert attachment_score(sentences, predicted) == 1.0
    assert max(h["dev_uas"] for h in history) == 1.0 and model.info["chosen_epoch"] >= 1


def crf_step(features: ArcFeatures, heads: np.ndarray, weights: np.ndarray, squares: np.ndarray,
             learning_rate: float, l2: float) -> None:
    """One AdaGrad step on -log p(gold tree) + l2/2 |w|^2 over the weights the sentence touches, written out arc by
    arc: each arc's own features weighted by its marginal, minus the gold tree's."""
    posterior = compbench.tree_marginals(features.scores(weights)[0], single_root=True).arc
    gradient, touched = np.zeros_like(weights), []
    for h, m in zip(*np.nonzero(posterior > 1e-12)):
        one_arc = heads.copy()
        one_arc[m] = h
        ids = features.of_arcs(one_arc, np.array([m]))
        np.add.at(gradient, ids, posterior[h, m])
        touched.append(ids)
    gold = features.of_arcs(heads, np.arange(1, len(heads)))
    np.add.at(gradient, gold, -1.0)
    touched = np.unique(np.concatenate([*touched, gold]))
    gradient[touched] += l2 * weights[touched]
    squares[touched] += gradient[touched] ** 2
    weights[touched] -= learning_rate * gradient[touched] / np.sqrt(squares[touched])


def test_crf_keeps_the_average_of_its_steps(tmp_path: Path) -> None:
    """Two epochs over one sentence: the model keeps the mean of the weights before, between and after the two
    AdaGrad steps (the second one moved by the l2 term too)."""
    sentence = max(read_conllu(write_treebank(tmp_path) / "tiny-ud-train.conllu"), key=lambda s: s.n)
    model = ParserModel()
    train_crf(model, [sentence], [], epochs=2, learning_rate=0.2, l2=0.5, log=lambda line: None)
    features = model.features(sentence.words, sentence.xpos)
    weights, squares, seen = np.zeros(SIZE + 1), np.full(SIZE + 1, 1e-8), []
    for _ in range(2):
        crf_step(features, sentence.heads, weights, squares, 0.2, 0.5)
        seen.append(weights.copy())
    assert np.abs(seen[0]).max() == pytest.approx(0.2)  # a first step moves each weight by at most the rate
    assert np.allclose(model.weights, (seen[0] + seen[1]) / 3)


@pytest.mark.parametrize("loss, margin, squared, max_step, expected", [
    (2.0, 0.5, 3.0, 1.0, 0.5),  # the step that closes the gap
    (2.0, -1.0, 3.0, 1.0, 1.0),  # the gold tree losing: a larger step
    (2.0, -4.0, 3.0, 1.0, 1.0),  # clipped at max_step
    (2.0, 2.0, 3.0, 1.0, 0.0),  # already winning by the loss: no move
    (2.0, 2.5, 3.0, 1.0, 0.0),  # winning by more (a non-projective gold tree can): no move, never a negative one
    (1.0, 0.0, 0.0, 1.0, 0.0),  # no difference in features
])
def test_passive_aggressive_step(loss: float, margin: float, squared: float, max_step: float, expected: float) -> None:
    assert passive_aggressive_step(loss, margin, squared, max_step) == pytest.approx(expected)


@pytest.mark.parametrize("second_order", [False, True])
@pytest.mark.parametrize("cost", [1.0, 0.5])
def test_one_mira_step_makes_the_gold_tree_win_by_its_loss(tmp_path: Path, cost: float, second_order: bool) -> None:
    sentence = max(read_conllu(write_treebank(tmp_path) / "tiny-ud-train.conllu"), key=lambda s: s.n)

    def margin(model: ParserModel, predicted: np.ndarray) -> float:
        """The gold tree's score minus the predicted one's under the step itself: one step from zero leaves the
        averaged weights at half the step's.  In second order the step must have moved sibling weights too."""
        arc, sibling = model.features(sentence.words, sentence.xpos).scores(2 * model.weights)
        siblings = lambda heads: sum(sibling[t] for t in compbench.sibling_pairs(heads))  # noqa: E731
        sibling_margin = 0.0 if sibling is None else siblings(sentence.heads) - siblings(predicted)
        assert (sibling_margin != 0) == second_order
        return arc_total(arc, sentence.heads) - arc_total(arc, predicted) + sibling_margin

    model = ParserModel(info={"second_order": second_order})
    zeros = np.zeros((sentence.n + 1,) * 2)
    predicted = decode(model.solver, cost_augmented(zeros, sentence.heads, cost),
                       np.zeros((sentence.n + 1,) * 3) if second_order else None)
    loss = cost * np.sum(predicted[1:] != sentence.heads[1:])
    train_online(model, [sentence], [], epochs=1, cost=cost, max_step=100.0, log=lambda line: None)
    assert loss > 0 and np.isclose(margin(model, predicted), loss)
    model = ParserModel(info={"second_order": second_order})
    train_online(model, [sentence], [], epochs=1, cost=cost, max_step=1e-3, log=lambda line: None)  # clipped
    assert 0 < margin(model, predicted) < loss
    with pytest.raises(ValueError, match="cost > 0"):
        train_online(model, [sentence], [], epochs=1, cost=0.0, max_step=1.0, log=lambda line: None)


def test_second_order_training_fits_a_tiny_treebank(tmp_path: Path) -> None:
    sentences = read_conllu(write_treebank(tmp_path) / "tiny-ud-train.conllu")
    model = ParserModel(vocabulary=build_vocabulary([s.words for s in sentences]), info={"second_order": True})
    train_mira(model, sentences, sentences, epochs=4, log=lambda line: None)
    assert model.features(sentences[0].words, sentences[0].xpos).sibling is not None
    assert attachment_score(sentences, [model.parse(s.words, s.xpos) for s in sentences]) == 1.0


def test_commands_train_parse_and_evaluate(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    treebank = write_treebank(tmp_path / "tb")
    model = tmp_path / "models" / "parser.npz"
    assert main(["parser", "train", "--treebank", str(treebank), "--out", str(model), "--epochs", "4"]) == 0
    assert model.is_file() and "epoch" in capsys.readouterr().out

    tokens = tmp_path / "in.txt"
    tokens.write_text("the dog saw the big cat .\nthe man found the mat in the park .\n")
    assert main(["parser", "parse", "--model", str(model), "--format", "tokens", str(tokens)]) == 0
    parsed = parse_conllu(capsys.readouterr().out)
    assert [s.heads.tolist() for s in parsed] == [[-1, 2, 3, 0, 6, 6, 3, 3], [-1, 2, 3, 0, 5, 3, 8, 8, 3, 3]]
    assert parsed[0].xpos == ["DT", "NN", "VBD", "DT", "JJ", "NN", "."]
    assert parsed[0].upos == ["DET", "NOUN", "VERB", "DET", "ADJ", "NOUN", "PUNCT"]  # the treebank has UPOS
    assert parsed[0].deprels == ["det", "nsubj", "root", "det", "amod", "obj", "punct"]

    conllu = treebank / "tiny-ud-test.conllu"
    assert main(["parser", "parse", "--model", str(model), str(conllu)]) == 0
    reparsed = parse_conllu(capsys.readouterr().out)
    assert [s.heads.tolist() for s in reparsed] == [s.heads.tolist() for s in read_conllu(conllu)]
    assert main(["parser", "parse", "--model", str(model), str(treebank)]) == 2  # it said 'no such file'
    assert "is a directory, expected a file" in capsys.readouterr().err
    with_bom = tmp_path / "with-bom.txt"  # CoNLL-U under another suffix: a BOM made it read as tokens
    with_bom.write_bytes(b"\xef\xbb\xbf" + conllu.read_bytes())
    assert main(["parser", "parse", "--model", str(model), str(with_bom)]) == 0
    assert [s.n for s in parse_conllu(capsys.readouterr().out)] == [s.n for s in read_conllu(conllu)]

    assert main(["parser", "evaluate", "--model", str(model), "--treebank", str(treebank), "--split", "test"]) == 0
    out = capsys.readouterr().out
    assert "UAS (all words)    100.00" in out and "tagging accuracy   100.00" in out and "sentences/s" in out
    assert "LAS (all words)    100.00" in out and "UPOS accuracy      100.00" in out
    bare = tmp_path / "bare"  # the test split without its gold tags and labels: no figure against them
    bare.mkdir()
    rows = [line.split("\t") for line in conllu.read_text().splitlines()]
    (bare / "tiny-ud-test.conllu").write_text("\n".join(
        "\t".join([c[0], c[1], "_", "_", "_", "_", c[6], "_", "_", "_"]) if len(c) == 10 else "\t".join(c)
        for c in rows) + "\n")
    assert main(["parser", "evaluate", "--model", str(model), "--treebank", str(bare), "--split", "test"]) == 0
    out = capsys.readouterr().out
    assert "tagging accuracy   - (no gold XPOS in the split)" in out and "UPOS accuracy      - (no gold UPOS" in out
    assert "UAS (no PUNCT)     - (every word is punctuation)" not in out and "LAS (all words)    - (no gold" in out
    assert "UAS (all words)    100.00" in out and "UAS (no PUNCT)     - (no gold UPOS" in out


def test_universal_tags_are_the_coarse_tags_when_the_treebank_has_them(tmp_path: Path) -> None:
    sentence = read_conllu(write_treebank(tmp_path, {"train": 1}) / "tiny-ud-train.conllu")[0]
    by_ptb, by_upos = arc_features(sentence.words, sentence.xpos), arc_features(
        sentence.words, sentence.xpos, universal_tags=sentence.upos)
    assert by_ptb.fixed.shape == by_upos.fixed.shape and not np.array_equal(by_ptb.fixed, by_upos.fixed)
    assert np.array_equal(by_ptb.between[..., 0], by_upos.between[..., 0])  # the PTB tags in between
    assert not np.array_equal(by_ptb.between[..., 1], by_upos.between[..., 1])  # and the coarse ones
    universal = ParserModel(info={"universal_tags": True})
    with pytest.raises(ValueError, match="universal"):
        universal.features(sentence.words, sentence.xpos)
    plain = ParserModel()  # a model from before universal tags reads the PTB tags only, as it was trained
    assert np.array_equal(plain.features(sentence.words, sentence.xpos, sentence.upos).fixed, by_ptb.fixed)
    model = ParserModel(info={"universal_tags": True})
    model.tagger = StructuredTagger.fit([(sentence.words, [f"{x}|{u}" for x, u in zip(sentence.xpos, sentence.upos)])]
                                        * 3, epochs=3)
    assert model.tag(sentence.words) == (sentence.xpos, sentence.upos)


def test_a_model_file_reads_with_the_feature_set_it_was_trained_with(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    sentences = read_conllu(write_treebank(tmp_path, {"train": 20}) / "tiny-ud-train.conllu")
    model = ParserModel(vocabulary=build_vocabulary([s.words for s in sentences]))
    train_online(model, sentences, [], epochs=2, max_step=1.0, log=lambda line: None)
    assert model.info["features"] == FEATURES == 2
    path = tmp_path / "p.npz"
    model.save(path)
    with np.load(path) as data:
        arrays = dict(data)
    info = json.loads(str(arrays["info"]))
    assert ParserModel.load(path).features(sentences[0].words, sentences[0].xpos).between.shape[-1] == 2
    del info["features"]  # a file from before the feature sets had a number: no coarse in-between template
    np.savez(path, **{**arrays, "info": np.array(json.dumps(info))})
    older, s = ParserModel.load(path), sentences[0]
    assert older.features(s.words, s.xpos).between.shape[-1] == 1
    first = arc_features(s.words, s.xpos, older.vocabulary, version=1).scores(older.weights)[0]
    assert np.array_equal(older.features(s.words, s.xpos).scores(older.weights)[0], first)
    for unread in (FEATURES + 1, 0, "2"):
        info["features"] = unread
        np.savez(path, **{**arrays, "info": np.array(json.dumps(info))})
        with pytest.raises(OutdatedModelError, match="does not read"):
            ParserModel.load(path)
    assert main(["parser", "parse", "--model", str(path), str(tmp_path / "tiny-ud-train.conllu")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "feature set '2'" in error and "Traceback" not in error


def test_train_reads_a_tagger_lexicon(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    treebank = write_treebank(tmp_path / "tb", {"train": 20, "dev": 5, "test": 5})
    google, out = write_google(tmp_path / "google", count=30), tmp_path / "p.npz"
    common = ["parser", "train", "--treebank", str(treebank), "--out", str(out), "--epochs", "1", "--tagger-epochs",
              "2", "--label-epochs", "0", "--tagger-lexicon"]
    assert main([*common, str(google)]) == 0
    capsys.readouterr()
    model = ParserModel.load(out)
    assert model.tagger.lexicon and model.info["tagger_lexicon_sentences"] == 24  # the corpus's training part
    assert model.info["features"] == FEATURES
    assert main([*common[:-1], "--feature-set", "1", "--folds", "2", "--jobs", "2"]) == 0  # as models before set 2
    capsys.readouterr()
    older = ParserModel.load(out)
    assert older.info["features"] == 1 and older.info["train_tags"] == "jackknifed, 2 folds"
    assert older.features(["a", "b"], ["DT", "NN"], ["DET", "NOUN"]).between.shape[-1] == 1
    assert main([*common, str(tmp_path / "no-such-dir")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "no-such-dir" in error


@pytest.mark.parametrize("universal", [False, True])
def test_jackknifed_tags_come_from_the_other_folds_in_any_number_of_processes(tmp_path: Path, universal: bool
                                                                              ) -> None:
    train = read_conllu(write_treebank(tmp_path, {"train": 12}) / "tiny-ud-train.conllu")
    model = ParserModel(info={"universal_tags": universal})
    tagged = jackknife_tags(model, train, folds=3, epochs=2, seed=0)
    assert [s.words for s in tagged] == [s.words for s in train] and [s.heads.tolist() for s in tagged] == [
        s.heads.tolist() for s in train]
    for fold in range(3):  # sentence i is tagged by the tagger of the sentences of the other folds
        fold_model = ParserModel(info={"universal_tags": universal})
        rest = [s for i, s in enumerate(train) if i % 3 != fold]
        fold_model.tagger = StructuredTagger.fit(tagger_training(model, rest), epochs=2, seed=0)
        for s, t in zip(train[fold::3], tagged[fold::3]):
            xpos, upos = fold_model.tag(s.words)
            assert t.xpos == xpos and t.upos == (upos if universal else s.upos)
    in_two = jackknife_tags(model, train, folds=3, epochs=2, seed=0, jobs=2)
    assert [(s.xpos, s.upos) for s in in_two] == [(s.xpos, s.upos) for s in tagged]


def test_tagger_seeds_average_the_taggers_of_each_seed_in_any_number_of_processes(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    treebank = write_treebank(tmp_path / "tb", {"train": 12, "dev": 3, "test": 3})
    common = ["parser", "train", "--treebank", str(treebank), "--epochs", "1", "--tagger-epochs", "2",
              "--label-epochs", "0", "--seed", "3", "--tagger-seeds", "2"]
    assert main([*common, "--out", str(tmp_path / "one.npz")]) == 0
    assert main([*common, "--out", str(tmp_path / "two.npz"), "--jobs", "2"]) == 0
    assert "the mean of 2 seeds" in capsys.readouterr().err
    one, two = ParserModel.load(tmp_path / "one.npz"), ParserModel.load(tmp_path / "two.npz")
    training = tagger_training(one, read_conllu(treebank / "tiny-ud-train.conllu"))
    seeds = [StructuredTagger.fit(training, epochs=2, seed=seed).weights.astype(np.float64) for seed in (3, 4)]
    assert np.array_equal(one.tagger.weights, ((seeds[0] + seeds[1]) / 2).astype(np.float32))
    assert not np.array_equal(seeds[0], seeds[1])  # the seeds differ, so the mean is not one of them
    assert np.array_equal(two.tagger.weights, one.tagger.weights) and one.info["tagger_seeds"] == 2
    assert main([*common, "--out", str(tmp_path / "folds.npz"), "--folds", "2", "--jobs", "2"]) == 0
    folds = ParserModel.load(tmp_path / "folds.npz")  # the fold taggers do not touch the final one
    assert np.array_equal(folds.tagger.weights, one.tagger.weights)
    assert folds.info["train_tags"] == "jackknifed, 2 folds"
    assert "/12 sentences with a mistake" in capsys.readouterr().err
    trained_on = []  # what the parser learns from with --gold-copies: each sentence with gold, then jackknifed tags
    monkeypatch.setattr("compbench.parser.train.train_online", lambda model, train, *rest, **options: (
        trained_on.extend(train), train_online(model, train, *rest, **options)))
    assert main([*common, "--out", str(tmp_path / "both.npz"), "--folds", "2", "--gold-copies"]) == 0
    assert "/24 sentences with a mistake" in capsys.readouterr().err
    both = ParserModel.load(tmp_path / "both.npz")
    assert both.info["train_tags"] == "jackknifed, 2 folds, and gold"
    treebank_train = read_conllu(treebank / "tiny-ud-train.conllu")
    jackknifed = jackknife_tags(ParserModel(info={"universal_tags": both.universal}), treebank_train, folds=2,
                                epochs=2, seed=3)
    assert [s.xpos for s in trained_on] == [s.xpos for s in treebank_train] + [s.xpos for s in jackknifed]
    assert [s.xpos for s in treebank_train] != [s.xpos for s in jackknifed]  # the two copies differ
    assert not np.array_equal(both.weights, folds.weights)
    other = StructuredTagger.fit([(["a"], ["DT"])], epochs=1)
    with pytest.raises(ValueError, match="cannot be averaged"):
        StructuredTagger.averaged([one.tagger, other])


def exit_status(argv: list[str]) -> int:
    """main's exit status, an argument's type error (argparse's exit) included."""
    try:
        return main(argv)
    except SystemExit as exit:
        return int(exit.code)


def test_commands_refuse_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    treebank = write_treebank(tmp_path / "tb", {"train": 5, "dev": 2, "test": 2})
    with open(treebank / "tiny-ud-dev.conllu", "a") as handle:
        handle.write("1\tbroken line\n")
    out = tmp_path / "p.npz"
    assert main(["parser", "train", "--treebank", str(treebank), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "tiny-ud-dev.conllu: line" in error and "Traceback" not in error
    assert not out.exists()
    treebank = write_treebank(tmp_path / "tb2", {"train": 5, "dev": 2, "test": 2})
    perceptron = ["--objective", "perceptron"]
    for options in (["--cost", "-1", *perceptron], ["--cost", "inf", *perceptron], ["--cost", "nan", *perceptron],
                    ["--cost", "1", "--objective", "crf"], ["--cost", "1"], ["--max-step", "0"],
                    ["--max-step", "inf"], ["--max-step", "1", *perceptron], ["--epochs", "0"], ["--folds", "0"],
                    ["--jobs", "0"], ["--tagger-seeds", "0"], ["--gold-copies"], ["--l2", "0.1"],
                    ["--learning-rate", "0.1", *perceptron], ["--l2", "-1", "--objective", "crf"],
                    ["--learning-rate", "0", "--objective", "crf"], ["--l2", "nan", "--objective", "crf"],
                    ["--learning-rate", "inf", "--objective", "crf"], ["--l2", "inf", "--objective", "crf"]):
        assert exit_status(["parser", "train", "--treebank", str(treebank), "--out", str(out), *options]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and options[0] in error and not out.exists()
    not_a_model = tmp_path / "x.npz"
    np.savez(not_a_model, a=np.zeros(1))
    assert main(["parser", "parse", "--model", str(not_a_model), str(treebank / "tiny-ud-test.conllu")]) == 2
    assert "not a parser model" in capsys.readouterr().err
    older = tmp_path / "older.npz"  # a model whose tagger is the greedy rich one of an older version
    np.savez(older, info=np.array(json.dumps({"kind": "parser"})), weight_index=np.zeros(0, np.int64),
             weight_value=np.zeros(0, np.float32), tagger_weights=np.zeros((4, 2), np.float32),
             tagger_tags=np.array(["DT", "NN"]), tagger_rich=np.array(True))
    assert main(["parser", "parse", "--model", str(older), str(treebank / "tiny-ud-test.conllu")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "older version" in error and "Traceback" not in error


@NEEDS_EWT
def test_ewt_treebank_reads_as_its_release() -> None:
    counts = {split: read_conllu(EWT / f"en_ewt-ud-{split}.conllu") for split in ("train", "dev", "test")}
    assert {split: len(s) for split, s in counts.items()} == {"train": 12544, "dev": 2001, "test": 2077}
    assert all(s.heads is not None and s.n == len(s.xpos) for ss in counts.values() for s in ss)


@NEEDS_EWT
def test_ewt_parser_learns_from_a_slice() -> None:
    train = read_conllu(EWT / "en_ewt-ud-train.conllu")[:400]
    dev = read_conllu(EWT / "en_ewt-ud-dev.conllu")[:100]
    model = ParserModel(vocabulary=build_vocabulary([s.words for s in train]))
    history = train_online(model, train, dev, epochs=2, log=lambda line: None)
    assert history[-1]["dev_uas"] > 0.6  # gold tags, 400 sentences: far from the full model, far above chance


@pytest.mark.parametrize("second_order", [False, True])
def test_parse_many_answers_in_order_across_its_batches(monkeypatch, second_order):
    """parse_many cuts a set into batches of CHUNK sentences: every sentence gets the tree that one solve of its own
    problem gives, in order, whatever the batch boundaries (CHUNK = 2 over 5 sentences of different lengths)."""
    import compbench.parser.model as parser_model

    monkeypatch.setattr(parser_model, "CHUNK", 2)
    rng = np.random.default_rng(0)
    model = ParserModel(weights=rng.normal(0, 1, SIZE + 1), info={"second_order": second_order})
    sentences = [([f"w{k}" for k in range(n)], ["NN"] * n, None) for n in (3, 7, 1, 5, 4)]
    expected = [model.solver.solve(parse_problem(*model.features(words, tags).scores(model.weights))).heads
                for words, tags, _ in sentences]
    got = model.parse_many(iter(sentences))
    assert len(got) == len(sentences)
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a, b)
    assert [h.tolist() for _, _, h in model.tag_and_parse_many(sentences)] == [h.tolist() for h in expected]


@pytest.mark.parametrize("command", [["parser", "train", "--treebank", "{tb}", "--out", "{tmp}/model.npz"],
                                     ["parser", "evaluate", "--model", "{tmp}/model.npz", "--treebank", "{tb}"]])
def test_a_treebank_without_words_is_refused(tmp_path: Path, command: list[str],
                                             capsys: pytest.CaptureFixture) -> None:
    tb = write_treebank(tmp_path / "tb", {"train": 0, "dev": 0, "test": 0})
    (tmp_path / "model.npz").write_bytes(b"")
    assert main([a.format(tb=tb, tmp=tmp_path) for a in command]) == 2
    assert "no sentence with words in it" in capsys.readouterr().err
    assert (tmp_path / "model.npz").read_bytes() == b""  # no model written


def test_a_byte_order_mark_is_read_as_none(tmp_path: Path) -> None:
    from compbench.parser.conllu import read_conllu

    (tmp_path / "bom.conllu").write_bytes(b"\xef\xbb\xbf" + TINY.encode())
    assert [s.words for s in read_conllu(tmp_path / "bom.conllu")] == [s.words for s in parse_conllu(TINY)]


def test_an_interrupt_ends_the_taggers_processes_at_once() -> None:
    """SIGTERM in parser train --jobs N waited for every tagger to finish its training (50 s on a slice of EWT)."""
    script = """
import os, signal, threading, time, multiprocessing
from compbench.cli import _interrupt
from compbench.cli.parser import in_processes
signal.signal(signal.SIGTERM, _interrupt)  # as compbench's main installs it: the forked workers inherit it
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGTERM)).start()
started = time.monotonic()
try:
    in_processes(time.sleep, [(60,)] * 4, jobs=2)  # more calls than workers: one waits in the queue
except KeyboardInterrupt:
    time.sleep(0.5)
    print(round(time.monotonic() - started), len(multiprocessing.active_children()))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    elapsed, alive = map(int, result.stdout.split())
    assert elapsed < 10 and alive == 0, result.stderr


def test_an_xpos_holding_the_pair_separator_comes_back_whole() -> None:
    """CoNLL-U allows "|" in an XPOS: "N|sg" with UPOS NOUN came back as XPOS "N", UPOS "sg|NOUN"."""
    from compbench.parser.model import ParserModel, paired_tags

    class Tagger:
        def tag(self, words):
            return paired_tags(["N|sg", "DT"], ["NOUN", "DET"])

    model = ParserModel(tagger=Tagger(), info={"universal_tags": True})
    assert model.tag(["cats", "the"]) == (["N|sg", "DT"], ["NOUN", "DET"])


def test_the_labeler_puts_root_exactly_on_the_arcs_from_the_root() -> None:
    """An unconstrained argmax wrote root on an arc whose head is not 0 (3 of 898 words): invalid UD."""
    from compbench.parser.labels import LABEL_DIM, ArcLabeler

    weights = np.zeros((LABEL_DIM, 2), np.float32)
    weights[:, 1] = 1.0  # every arc's best label is root
    labeler = ArcLabeler(["nsubj", "root"], weights)
    assert labeler.label(["a", "b", "c"], ["DT", "NN", "VB"], np.array([-1, 3, 3, 0])) == ["nsubj", "nsubj", "root"]
    weights[:, 1] = -1.0  # and none: the arc from the root is still root
    assert labeler.label(["a", "b"], ["DT", "NN"], np.array([-1, 0, 1])) == ["root", "nsubj"]


def test_parser_train_refuses_a_train_split_without_xpos_and_more_folds_than_sentences(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A fold without sentences crashed (argmax of an empty sequence); a treebank without XPOS trained a tagger of
    "_" with a dev accuracy of 100; without DEPREL the labeler learned "_" (it is now not trained); a dev split
    without XPOS scored the tagger 0.00."""
    treebank = write_treebank(tmp_path / "tb", {"train": 2, "dev": 2, "test": 2})
    argv = ["parser", "train", "--treebank", str(treebank), "--out", str(tmp_path / "p.npz"), "--epochs", "1",
            "--tagger-epochs", "1", "--label-epochs", "1"]
    assert main([*argv, "--folds", "3"]) == 2
    assert "--folds 3: more folds than the 2 sentences of the train split" in capsys.readouterr().err
    for split in ("train", "dev"):
        path = treebank / f"tiny-ud-{split}.conllu"
        lines = [line.split("\t") for line in path.read_text().splitlines()]
        path.write_text("\n".join("\t".join(c[:7] + ["_"] + c[8:]) if len(c) == 10 else "\t".join(c)
                                   for c in lines) + "\n")
    assert main(argv) == 0
    assert "arc labeler: not trained, the train split has no DEPREL" in capsys.readouterr().err
    path = treebank / "tiny-ud-dev.conllu"  # dev without XPOS: no dev accuracy (it was 0.00 against "_")
    lines = [line.split("\t") for line in path.read_text().splitlines()]
    path.write_text("\n".join("\t".join(c[:4] + ["_"] + c[5:]) if len(c) == 10 else "\t".join(c)
                               for c in lines) + "\n")
    assert main(argv) == 0
    assert "dev accuracy - (no gold XPOS in dev)" in capsys.readouterr().err
    path = treebank / "tiny-ud-train.conllu"
    lines = [line.split("\t") for line in path.read_text().splitlines()]
    path.write_text("\n".join("\t".join(c[:4] + ["_"] + c[5:]) if len(c) == 10 else "\t".join(c)
                               for c in lines) + "\n")
    assert main(argv) == 2
    assert "its train split has no XPOS" in capsys.readouterr().err


def test_a_parser_model_with_a_damaged_tagger_or_labeler_is_refused_in_one_line(tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture) -> None:
    """Only the arc weights were checked: a tagger cut short raised IndexError, NaN or too few labeler columns
    labelled every arc alike, universal_tags true over a tagger of plain tags would cut tags that are no pairs."""
    treebank = write_treebank(tmp_path / "tb", {"train": 6, "dev": 2, "test": 2})
    model = tmp_path / "p.npz"
    assert main(["parser", "train", "--treebank", str(treebank), "--out", str(model), "--epochs", "1",
                 "--tagger-epochs", "1", "--label-epochs", "1"]) == 0
    capsys.readouterr()
    with np.load(model) as data:
        arrays = dict(data)
    info = json.loads(str(arrays["info"]))
    tokens = tmp_path / "in.txt"
    tokens.write_text("the dog saw the cat .\n")
    for member, value, says in [
            ("tagger_weights", arrays["tagger_weights"][:10], "tagger_weights: expected a"),
            ("labeler_weights", np.full_like(arrays["labeler_weights"], np.nan), "labeler_weights: expected finite"),
            ("labeler_weights", arrays["labeler_weights"][:, :3], "labeler_weights: expected a"),
            ("info", np.array(json.dumps({**info, "universal_tags": True})), "info.universal_tags"),
            # (a hunt's) a 0-d tag list, labels or class words: tracebacks; a 0-d, unsorted or text vocabulary: a
            # traceback at parse time, or other words' weights silently; universal_tags false over pairs: pairs
            # printed as XPOS; members that are not names: a traceback
            ("tagger_tags", np.array("NN"), "tagger_tags: expected a list of strings"),
            ("labeler_labels", np.array("det"), "labeler_labels: expected a list of strings"),
            ("tagger_class_words", np.array(3), "tagger_class_words: expected a list of integers"),
            ("tagger_class_codes", arrays["tagger_class_codes"][:-1], "tagger_class_codes: expected a list of"),
            ("vocabulary", arrays["vocabulary"][::-1], "vocabulary: expected increasing integers"),
            ("vocabulary", arrays["vocabulary"].astype(str), "vocabulary: expected a list of integers"),
            ("universal", np.array(json.dumps({**info, "universal_tags": False})), "info.universal_tags: false, but"),
            ("members", np.array([1, 2]), "damaged: members: expected a list of names")]:
        if member == "info":  # a tagger of plain tags in a model that reads pairs
            damaged = {**arrays, "tagger_tags": np.array([t.split("|")[0] for t in arrays["tagger_tags"]])}
        elif member == "universal":  # pairs in a model that reads plain tags
            damaged, member = dict(arrays), "info"
        else:
            damaged = dict(arrays)
        damaged[member] = value
        np.savez(tmp_path / "bad.npz", **damaged)
        assert main(["parser", "parse", "--model", str(tmp_path / "bad.npz"), "--format", "tokens",
                     str(tokens)]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert says in line and str(tmp_path / "bad.npz") in line, line


def test_a_parser_of_xpos_holding_a_bar_loads(tmp_path: Path) -> None:
    """A treebank without UPOS whose every XPOS holds '|' ("NN|x") trains a parser of plain tags: the check that
    universal_tags false holds no XPOS|UPOS pairs refused it at load (a review); a pair ends in a UPOS tag."""
    from compbench.parser.model import ParserModel

    treebank = write_treebank(tmp_path / "tb", {"train": 6, "dev": 2, "test": 2})
    for path in treebank.glob("*.conllu"):
        lines = [line.split("\t") for line in path.read_text().splitlines()]
        path.write_text("\n".join("\t".join(c[:3] + ["_", c[4] + "|x"] + c[5:]) if len(c) == 10 else "\t".join(c)
                                  for c in lines) + "\n")
    model = tmp_path / "p.npz"
    assert main(["parser", "train", "--treebank", str(treebank), "--out", str(model), "--epochs", "1",
                 "--tagger-epochs", "1", "--label-epochs", "1"]) == 0
    loaded = ParserModel.load(model)
    assert not loaded.universal and all(t.endswith("|x") for t in loaded.tagger.tags)
