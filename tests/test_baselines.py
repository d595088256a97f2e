"""The seeds' baselines (issue 17): the bigram-only model trained as such with its chain DP, the keep/delete
linear-chain CRF (forward-backward, Viterbi with a count) and subtree deletion over an input parse, each against
brute force on tiny inputs, plus training and the train/evaluate commands on tiny inline corpora."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import compbench
from compbench.cli import main
from compbench.compression.accuracy import System, evaluate_systems
from compbench.compression.baselines import (BigramModel, ChainCRFModel, ChainSolver, chain_as_problem,
                                             chain_decode, chain_features, forward_backward, load_model,
                                             subtree_deletion, train_chain_crf, viterbi_count)
from compbench.compression.features import BigramLM
from compbench.compression.perceptron import train_perceptron
from compbench.learning.features import DIM
from compbench.problem import Length, Problem, Status
from tests.test_corpora import (assert_finite_difference_gradient, tiny_split_and_model, write_clarke_lapata,
                                write_google)


def kept_sets(n: int, m: int):
    return [np.array(c, dtype=np.int64) for c in itertools.combinations(range(1, n + 1), m)]


def sequence_score(token: np.ndarray, bigram: np.ndarray, kept: np.ndarray) -> float:
    n = len(token)
    sequence = np.concatenate([[0], kept, [n + 1]])
    return float(token[kept - 1].sum() + bigram[sequence[:-1], sequence[1:]].sum())


def labelling_score(unary: np.ndarray, transition: np.ndarray, kept: np.ndarray) -> float:
    n = len(unary)
    y = np.zeros(n + 2, dtype=np.int64)
    y[[0, n + 1]] = 1
    y[kept] = 1
    return float(unary[kept - 1].sum() + transition[np.arange(n + 1), y[:-1], y[1:]].sum())


# --- bigram-only -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_chain_decode_is_the_brute_force_optimum(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    token, bigram = rng.normal(size=n), rng.normal(size=(n + 2, n + 2))
    if seed % 2:
        token[rng.integers(n)] = -np.inf  # a forbidden token
    for m in range(n + 1):
        kept, objective = chain_decode(token, bigram, m)
        scores = [sequence_score(token, bigram, k) for k in kept_sets(n, m)]
        best = max(scores)
        if not np.isfinite(best):
            assert len(kept) == 0 and objective == -np.inf
            continue
        assert len(kept) == m and np.all(np.diff(kept) > 0)
        assert objective == pytest.approx(best) and sequence_score(token, bigram, kept) == pytest.approx(best)


@pytest.mark.parametrize("single_root", [False, True])
def test_chain_solver_agrees_with_resource_dp_on_zero_arc_problems(single_root):
    rng = np.random.default_rng(7)
    reference = compbench.get_solver("resource-dp")
    for _ in range(10):
        n = int(rng.integers(1, 9))
        m = int(rng.integers(1, n + 1))
        p = Problem(rng.normal(size=n), np.zeros((n + 1, n + 1)), rng.normal(size=(n + 2, n + 2)),
                    length=Length.exact(m), single_root=single_root)
        ours, theirs = ChainSolver().solve(p), reference.solve(p)
        assert ours.status == Status.OPTIMAL and ours.objective == pytest.approx(theirs.objective)
        assert compbench.objective(p, ours.heads) == pytest.approx(ours.objective)  # a valid tree over the kept set
    arcs = Problem(np.zeros(3), np.ones((4, 4)), np.zeros((5, 5)), length=Length.exact(2))
    assert ChainSolver().solve(arcs).status == Status.ERROR  # arc scores matter: not its problem


def test_bigram_model_has_no_arc_features_and_learns_the_tiny_rule(tmp_path):
    parts, joint = tiny_split_and_model(tmp_path)
    model = BigramModel(lm=joint.lm)
    features = model.features(parts["train"][0])
    assert features.arc.shape[-1] == 0 and features.sibling is None
    problem = model.problem(parts["train"][0], Length.exact(1))
    assert np.all(problem.arc_scores[np.isfinite(problem.arc_scores)] == 0)
    solver = ChainSolver()
    train_perceptron(model, parts["train"], parts["dev"], solver, epochs=3, log=lambda line: None)
    assert model.info["kind"] == "bigram" and np.any(model.weights[:DIM] != 0)
    summary = evaluate_systems(model, parts["test"], [System("first-m"), System("bigram", solver)])
    assert summary["bigram"]["f1"] >= 0.75 > summary["first-m"]["f1"] + 0.2
    model.save(tmp_path / "bigram.npz")
    assert isinstance(load_model(tmp_path / "bigram.npz"), BigramModel)


class KeepsAll(compbench.Solver):
    name, description, exact = "keeps-all", "every token in a chain", False

    def _solve(self, problem, *, time_limit, all_lengths, **options):
        heads = np.arange(-1, problem.n)  # token k under k - 1: projective, every token kept
        value = compbench.objective(problem.replace(length=None), heads)  # its value, the length aside
        return compbench.Solution(compbench.Status.FEASIBLE, heads=heads, objective=value)


def test_an_answer_off_its_length_is_not_scored(tmp_path):
    """A plug-in keeping every token whatever the length (a chain, valid but for its length) was scored at rate 1
    with nothing failed: evaluate validates each answer, as the harness does."""
    parts, joint = tiny_split_and_model(tmp_path)
    summary = evaluate_systems(joint, parts["test"], [System("keeps-all", KeepsAll())])["keeps-all"]
    assert summary["failed"] == summary["sentences"] == summary["statuses"]["invalid"] > 0
    assert summary["compression_rate"] == 0.0 and summary["answered_sentences"] == 0


# --- linear-chain CRF ------------------------------------------------------------------------------------------

def random_potentials(rng, n):
    return rng.normal(size=n), rng.normal(size=(n + 1, 2, 2))


def enumerated_posterior(unary, transition, labellings):
    """log Z, keep marginals (n,) and label-pair marginals (n+1, 2, 2) over ``labellings`` (kept sets), by
    enumeration; the boundaries 0 and n+1 count as kept."""
    n = len(unary)
    scores = np.array([labelling_score(unary, transition, k) for k in labellings])
    log_z = np.log(np.exp(scores - scores.max()).sum()) + scores.max()
    keep, pair = np.zeros(n), np.zeros((n + 1, 2, 2))
    for k, p in zip(labellings, np.exp(scores - log_z)):
        keep[k - 1] += p
        y = np.zeros(n + 2, dtype=np.int64)
        y[[0, n + 1]] = 1
        y[k] = 1
        pair[np.arange(n + 1), y[:-1], y[1:]] += p
    return log_z, keep, pair


def assert_posterior(posterior, expected) -> None:
    log_z, keep, pair = expected
    assert posterior.log_partition == pytest.approx(log_z)
    np.testing.assert_allclose(posterior.keep, keep, atol=1e-10)
    np.testing.assert_allclose(posterior.pair, pair, atol=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_forward_backward_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    unary, transition = random_potentials(rng, n)
    labellings = [k for m in range(n + 1) for k in kept_sets(n, m)]
    assert_posterior(forward_backward(unary, transition), enumerated_posterior(unary, transition, labellings))


@pytest.mark.parametrize("seed", range(5))
def test_forward_backward_with_a_count_matches_enumeration(seed):
    from compbench.compression.baselines import forward_backward_count

    rng = np.random.default_rng(50 + seed)
    n = int(rng.integers(1, 7))
    unary, transition = random_potentials(rng, n)
    for m in range(n + 1):
        assert_posterior(forward_backward_count(unary, transition, m),
                         enumerated_posterior(unary, transition, kept_sets(n, m)))
    assert forward_backward_count(unary, transition, n + 1).log_partition == -np.inf


@pytest.mark.parametrize("seed", range(5))
def test_viterbi_with_a_count_is_the_brute_force_optimum_and_equals_its_bigram_problem(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 8))
    unary, transition = random_potentials(rng, n)
    for m in range(n + 1):
        kept, score = viterbi_count(unary, transition, m)
        best = max(labelling_score(unary, transition, k) for k in kept_sets(n, m))
        assert len(kept) == m and score == pytest.approx(best)
        assert labelling_score(unary, transition, kept) == pytest.approx(best)
        problem = chain_as_problem(unary, transition, m)
        for k in kept_sets(n, m):  # the equivalent token + bigram objective scores every kept set the same
            assert sequence_score(problem.token_scores, problem.bigram_scores, k) == pytest.approx(
                labelling_score(unary, transition, k))
        assert chain_decode(problem.token_scores, problem.bigram_scores, m)[1] == pytest.approx(best)
    assert viterbi_count(unary, transition, n + 1)[1] == -np.inf


@pytest.mark.parametrize("length", ["free", "gold"])
def test_chain_crf_gradient_is_the_finite_difference_of_its_loss(length):
    from compbench.compression.baselines import chain_loss

    tokens = "the big cat sat on the mat .".split()
    features = chain_features(tokens, ["DT", "JJ", "NN", "VBD", "IN", "DT", "NN", "."], None)
    model = ChainCRFModel()
    rng = np.random.default_rng(0)
    weights = np.zeros(DIM + 1)
    touched = np.unique(np.concatenate([features.unary.ravel(), features.transition.ravel()]))
    weights[touched] = rng.normal(0, 0.3, len(touched))
    gold = np.array([3, 4, 8])
    loss, ids, values = chain_loss(model, features, gold, weights, length)
    gradient = np.bincount(ids, weights=values, minlength=DIM + 1)
    assert loss > 0
    assert_finite_difference_gradient(lambda w: chain_loss(model, features, gold, w, length)[0], weights, gradient,
                                      [int(features.unary[2, 1]), int(features.unary[0, 20]),
                                       int(features.transition[3, 1, 0, 1])])


@pytest.mark.parametrize("length", ["free", "gold"])
def test_chain_crf_learns_the_tiny_rule(tmp_path, length):
    parts, _ = tiny_split_and_model(tmp_path)
    model = ChainCRFModel()
    history = train_chain_crf(model, parts["train"], parts["dev"], epochs=3, length=length, log=lambda line: None)
    assert model.info["crf_length"] == length
    assert history[-1]["mean_loss"] < history[0]["mean_loss"]
    from compbench.compression.baselines import chain_decoder
    summary = evaluate_systems(model, parts["test"], [System("first-m"), System("crf", decode=chain_decoder(model)),
                                                      System("crf as a problem", compbench.get_solver("resource-dp"))])
    assert summary["crf"]["f1"] >= 0.75 > summary["first-m"]["f1"] + 0.2
    assert summary["crf as a problem"]["f1"] == pytest.approx(summary["crf"]["f1"])  # the same optimum
    model.save(tmp_path / "crf.npz")
    assert isinstance(load_model(tmp_path / "crf.npz"), ChainCRFModel)


# --- subtree deletion ------------------------------------------------------------------------------------------

def random_heads(rng, n):
    order = rng.permutation(n) + 1
    heads = np.zeros(n + 1, dtype=np.int64)
    heads[0] = -1
    for i, k in enumerate(order):
        heads[k] = 0 if i == 0 or rng.random() < 0.15 else order[rng.integers(i)]
    return heads


@pytest.mark.parametrize("seed", range(8))
def test_subtree_deletion_is_the_brute_force_optimum(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    token, heads = rng.normal(size=n), random_heads(rng, n)
    for m in range(n + 1):
        kept, score = subtree_deletion(token, heads, m)
        closed = [k for k in kept_sets(n, m) if all(heads[t] == 0 or heads[t] in k for t in k)]
        if not closed:
            assert score == -np.inf and len(kept) == 0
            continue
        best = max(float(token[k - 1].sum()) for k in closed)
        assert score == pytest.approx(best) and len(kept) == m
        assert all(heads[t] == 0 or heads[t] in kept for t in kept)
        assert float(token[kept - 1].sum()) == pytest.approx(best)


def test_subtree_deletion_rejects_a_cycle():
    with pytest.raises(ValueError):
        subtree_deletion(np.zeros(2), np.array([-1, 2, 1]), 1)


# --- commands --------------------------------------------------------------------------------------------------

def test_train_kinds_and_evaluate_them_beside_the_joint_model(tmp_path, capsys):
    data = write_google(tmp_path / "google", count=40)
    common = ["--corpus", "google", "--data", str(data)]
    joint, bigram, crf = tmp_path / "joint.npz", tmp_path / "bigram.npz", tmp_path / "crf.npz"
    assert main(["train", *common, "--out", str(joint), "--objective", "perceptron", "--epochs", "1"]) == 0
    assert main(["train", *common, "--out", str(bigram), "--model-kind", "bigram", "--objective", "perceptron",
                 "--epochs", "2"]) == 0
    assert main(["train", *common, "--out", str(crf), "--model-kind", "chain-crf", "--epochs", "2"]) == 0
    assert "kind" not in load_model(joint).info  # the joint model's file is as before
    assert load_model(bigram).info["kind"] == "bigram" and load_model(crf).info["kind"] == "chain-crf"
    capsys.readouterr()
    report = tmp_path / "acc.json"
    assert main(["evaluate", *common, "--model", str(joint), "--baseline", str(bigram), "--baseline", str(crf),
                 "--json-out", str(report), "--length", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "joint (resource-dp)" in out and "bigram model (bigram-chain)" in out and "chain CRF (viterbi)" in out
    record = json.loads(report.read_text())
    assert set(record["baselines"]) == {str(bigram), str(crf)}
    assert all(row["sentences"] == 4 and row["failed"] == 0 for row in record["systems"].values())
    for model in (bigram, crf):  # each kind decodes itself as --model, and writes instances (arc scores 0)
        assert main(["evaluate", *common, "--model", str(model)]) == 0
        assert "first-m" in capsys.readouterr().out
        instances = tmp_path / f"{model.stem}.jsonl"
        assert main(["build-instances", *common, "--model", str(model), "--out", str(instances)]) == 0
        problems = list(compbench.read_instances(instances))
        assert len(problems) == 4 and all(np.all(p.arc_scores[np.isfinite(p.arc_scores)] == 0) for p in problems)
    assert main(["evaluate", *common, "--model", str(joint), "--baseline", str(joint)]) == 2
    capsys.readouterr()
    assert main(["evaluate", *common, "--model", str(joint), "--baseline", str(bigram), "--baseline",
                 str(bigram)]) == 2  # one row for both: each sentence scored twice into it
    assert "would be two rows of one name" in capsys.readouterr().err
    assert main(["train", *common, "--out", str(tmp_path / "x.npz"), "--model-kind", "bigram",
                 "--second-order"]) == 2


class ClaimsAllOptimal(KeepsAll):
    name, exact = "claims-all-optimal", True

    def _solve(self, problem, *, time_limit, all_lengths, **options):
        answer = super()._solve(problem, time_limit=time_limit, all_lengths=all_lengths)
        answer.status = compbench.Status.OPTIMAL
        return answer


def test_training_that_cannot_give_a_model_writes_none(tmp_path, capsys):
    """A solver that takes no exact length or cannot run here, no example under --max-n, a solver whose optimal
    claims are invalid trees: one line and exit 2, nothing written (a model 'chosen on dev' at F1 0, or learnt from
    invalid trees, was written)."""
    from compbench.compression.training import TrainingError, train_on_batches
    from compbench.solver import SolverError

    data = write_google(tmp_path / "google", count=40)
    common = ["--corpus", "google", "--data", str(data)]
    out = tmp_path / "x.npz"
    for extra, says in ((["--solver", "hook-dp"], "train: solver hook-dp cannot decode compressions of a given "
                                                  "length here: it takes no exact length"),
                        (["--max-n", "1"], "--max-n 1: no aligned sentence of the train split is that short")):
        assert main(["train", *common, "--out", str(out), "--epochs", "1", *extra]) == 2
        assert says in capsys.readouterr().err and not out.exists()
    model = tmp_path / "joint.npz"
    assert main(["train", *common, "--out", str(model), "--objective", "perceptron", "--epochs", "1"]) == 0
    assert main(["evaluate", *common, "--model", str(model), "--solvers", "resource-dp,hook-dp"]) == 2
    assert "evaluate: solver hook-dp cannot decode" in capsys.readouterr().err
    parts, joint = tiny_split_and_model(tmp_path / "tiny")
    with pytest.raises(SolverError, match="claims-all-optimal gave an invalid: keeps"):
        train_perceptron(joint, parts["train"], parts["dev"], ClaimsAllOptimal(), epochs=1, log=lambda line: None)
    with pytest.raises(TrainingError, match="no dev sentence was decoded by joint"):  # every dev answer invalid
        train_on_batches(joint, parts["train"], parts["dev"], System("joint", KeepsAll(), "joint"),
                         lambda batches, lms: (joint.weights, {}, ""), epochs=1, batch_size=8, max_n=None, seed=0,
                         progress=None, log=lambda line: None)


def test_clarke_lapata_baselines_tag_with_their_own_tagger(tmp_path, capsys):
    data = write_clarke_lapata(tmp_path / "cl")
    google = write_google(tmp_path / "google", count=40)
    common = ["--corpus", "clarke-lapata-written", "--data", str(data), "--tagger-data", str(google)]
    crf = tmp_path / "crf.npz"
    assert main(["train", *common, "--out", str(crf), "--model-kind", "chain-crf", "--epochs", "1"]) == 0
    model = load_model(crf)
    assert model.tagger is not None and model.info["pos"] == "tagger"


def test_a_tagger_corpus_without_train_sentences_is_one_line(tmp_path, capsys):
    """A Google corpus whose CSV holds its header only: argmax of an empty sequence, a traceback."""
    data = write_clarke_lapata(tmp_path / "cl")
    google = write_google(tmp_path / "google", count=0)
    assert main(["train", "--corpus", "clarke-lapata-written", "--data", str(data), "--tagger-data", str(google),
                 "--out", str(tmp_path / "x.npz"), "--epochs", "1"]) == 2
    assert "no tagged sentence in the Google corpus's train split" in capsys.readouterr().err


def test_subtree_deletion_model_trains_over_the_parse_and_keeps_subtrees(tmp_path, capsys):
    from compbench.corpora import read_corpus, split_corpus
    from compbench.parser import ParserModel

    data = write_google(tmp_path / "google", count=40)
    common = ["--corpus", "google", "--data", str(data)]
    parser = tmp_path / "parser.npz"
    ParserModel().save(parser)
    subtree = tmp_path / "subtree.npz"
    assert main(["train", *common, "--out", str(subtree), "--model-kind", "subtree", "--epochs", "2"]) == 2
    assert main(["train", *common, "--out", str(subtree), "--model-kind", "subtree", "--epochs", "2",
                 "--parser", str(parser)]) == 0
    model = load_model(subtree)
    assert model.info["kind"] == "subtree" and model.parser is not None
    for sentence in split_corpus(read_corpus("google", data))["test"]:
        kept = model.decode(sentence, 3)
        assert len(kept) == 3
        assert all(sentence.heads[k] == 0 or sentence.heads[k] in kept for k in kept)  # closed upwards
    capsys.readouterr()
    assert main(["evaluate", *common, "--model", str(subtree)]) == 0
    assert "subtree deletion" in capsys.readouterr().out
    assert main(["build-instances", *common, "--model", str(subtree), "--out", str(tmp_path / "x.jsonl")]) == 2


def test_a_baseline_reads_the_sentence_as_read_not_what_the_evaluated_model_added(tmp_path):
    from compbench.compression.model import CompressionModel
    from compbench.corpora import read_corpus, split_corpus
    from compbench.parser import ParserModel

    test = split_corpus(read_corpus("google", write_google(tmp_path / "google", count=40)))["test"]
    evaluated = CompressionModel(parser=ParserModel())  # its parser fills in each sentence's heads
    seen = []

    class Baseline(BigramModel):  # records the sentence each of its rows is given
        def problem(self, sentence, length, features=None, weights=None, part="joint"):
            seen.append(("problem", sentence.heads, sentence.pos))
            return super().problem(sentence, length, features, weights, part)

    baseline = Baseline()

    def decode(sentence, m):
        seen.append(("decode", sentence.heads, sentence.pos))
        return np.arange(1, m + 1)

    systems = [System("joint", compbench.get_solver("resource-dp")),
               System("bigram", ChainSolver(), model=baseline), System("decoded", model=baseline, decode=decode)]
    evaluate_systems(evaluated, test, systems)
    assert all(s.heads is not None for s in test)  # the evaluated model parsed the sentences it was given
    assert {kind for kind, _, _ in seen} == {"problem", "decode"}
    assert all(heads is None and pos is not None for _, heads, pos in seen)  # the corpus's POS, no parse


def test_an_interrupted_training_keeps_its_finished_epochs(tmp_path, capsys, monkeypatch):
    """Ctrl-C after an epoch finished lost it (the old file stayed, nothing of the run was kept): the best finished
    epoch is written, its info saying so, and the command ends as interrupted; before any epoch, nothing is."""
    from compbench.compression import training

    data = write_google(tmp_path / "google", count=40)
    out = tmp_path / "m.npz"
    real, calls = training.evaluate_systems, []

    def interrupting(*args, **kwargs):  # the dev score after each epoch; Ctrl-C at the given one
        calls.append(1)
        if len(calls) == stop_at:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "evaluate_systems", interrupting)
    command = ["train", "--corpus", "google", "--data", str(data), "--out", str(out), "--epochs", "3",
               "--objective", "perceptron"]
    stop_at = 1
    assert main(command) == 130 and not out.exists()
    calls.clear()
    stop_at = 2
    assert main(command) == 130
    assert "interrupted after epoch 1 of 3: wrote" in capsys.readouterr().err
    model = load_model(out)
    assert model.info["interrupted"] == "after epoch 1 of 3" and model.info["chosen_epoch"] == 1
    saves = []

    def interrupted_save(self, path):  # Ctrl-C in the final write, after every epoch: the epochs are still kept
        saves.append(path)
        if len(saves) == 1:
            raise KeyboardInterrupt
        return real_save(self, path)

    real_save = type(model).save
    monkeypatch.setattr(type(model), "save", interrupted_save)
    calls.clear()
    stop_at = 0
    assert main(command) == 130 and len(saves) == 2
    assert "interrupted after its 3 epochs: wrote" in capsys.readouterr().err
    assert load_model(out).info["interrupted"] == "after its 3 epochs"
