"""Corpus readers, gold alignment, splits, the learned model and the train/evaluate commands.

Most tests write a tiny corpus of their own (same layout and formats as the real ones); the last ones read the
shared corpora in ../shared/data when that directory exists.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

import compbench
from compbench.cli import main
from compbench.compression.accuracy import System, evaluate_systems, format_table, token_prf
from compbench.compression.features import BigramLM
from compbench.compression.model import CompressionModel
from compbench.compression.perceptron import latent_gold_heads, train_perceptron
from compbench.corpora import CORPORA, CorpusError, CorpusFormat, Sentence, read_corpus, split_corpus
from compbench.corpora.align import align_text, align_tokens
from compbench.learning.features import DIM
from compbench.learning.tagger import PosTagger, StructuredTagger, load_tagger, trigram_viterbi

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
NEEDS_SHARED = pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared corpora not found at {SHARED}")

VOCABULARY = {"the": "DT", "a": "DT", "cat": "NN", "dog": "NN", "sat": "VBD", "ran": "VBD", "on": "IN",
              "mat": "NN", "very": "RB", "big": "JJ", "red": "JJ", ",": ",", "(": "-LRB-", ")": "-RRB-"}
CONTENT = {"cat", "dog", "sat", "ran", "mat"}


def sentences(count: int, seed: int, max_n: int = 8) -> list[list[str]]:
    rng = random.Random(seed)
    words = sorted(VOCABULARY)
    return [[rng.choice(words) for _ in range(rng.randint(3, max_n))] for _ in range(count)]


def compress(tokens: list[str]) -> list[str]:
    """The rule the tiny corpus follows: keep the content words (or the first word)."""
    return [t for t in tokens if t in CONTENT] or tokens[:1]


def write_clarke_lapata(directory: Path, documents: int = 10, per_document: int = 6, annotators: int = 1) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for d, tokens in enumerate(sentences(documents * per_document, seed=1)):
        doc, i = divmod(d, per_document)
        summaries = [" ".join(compress(tokens))] * annotators
        lines.append(json.dumps({"id": f"doc{doc}.1.{i}", "text": " ".join(tokens), "summaries": summaries}))
    (directory / "part.shared.jsonl").write_text("\n".join(lines) + "\n")
    return directory


def write_google(directory: Path, count: int = 40, extra_rows: list[tuple[str, str, str, str]] = ()) -> Path:
    """Google's layout: eval_data*.csv plus line-parallel test_words/test_pos/test_dep files."""
    directory.mkdir(parents=True, exist_ok=True)
    rows = []
    for tokens in sentences(count, seed=2):
        text = " ".join(tokens)
        kept = " ".join(compress(tokens))
        rows.append((text, kept[0].upper() + kept[1:], " ".join(VOCABULARY[t] for t in tokens),
                     " ".join("ROOT" if i == 0 else "dep" for i in range(len(tokens)))))
    rows.extend(extra_rows)
    with (directory / "eval_data.part.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["original", "compressed"])
        writer.writerows((text, compressed) for text, compressed, _, _ in rows)
    (directory / "test_words.part.txt").write_text("".join(r[0] + "\n" for r in rows))
    (directory / "test_pos.part.txt").write_text("".join(r[2] + "\n" for r in rows))
    (directory / "test_dep.part.txt").write_text("".join(r[3] + "\n" for r in rows))
    return directory


# --- alignment -------------------------------------------------------------------------------------------------

def test_align_tokens_takes_the_earliest_match_and_rejects_non_subsequences():
    assert align_tokens("the the cat sat".split(), "the cat".split()).tolist() == [1, 3]
    assert align_tokens("a b c".split(), []).tolist() == []
    assert align_tokens("a b c".split(), "c b".split()) is None
    assert align_tokens("a b".split(), "a b b".split()) is None


def test_align_text_ignores_case_and_needs_token_boundaries():
    kept, stray = align_text("The mayor said Aaron left .".split(), "Aaron left.")
    assert kept.tolist() == [4, 5, 6] and stray == 0
    # "a" must not match the start of "Aaron"
    assert align_text("a Aaron .".split(), "Aaron.")[0].tolist() == [2, 3]
    assert align_text("Aaron .".split(), "A Aaron.") is None


def test_align_text_counts_stray_punctuation_and_rejects_rewrites():
    kept, stray = align_text("Smith , who won , left today .".split(), "Smith, who won left.")
    assert kept.tolist() == [1, 2, 3, 4, 6, 8] and stray == 0
    kept, stray = align_text("Smith left today .".split(), "Smith, left.")
    assert kept.tolist() == [1, 2, 4] and stray == 1
    assert align_text("They do n't care .".split(), "They don't care.") is None  # contraction rewritten
    assert align_text("it plans to grow .".split(), "Cairn plans to grow.") is None


# --- readers and splits ----------------------------------------------------------------------------------------

def test_clarke_lapata_reader_and_document_split(tmp_path):
    corpus = read_corpus("clarke-lapata-broadcast", write_clarke_lapata(tmp_path, annotators=3))
    assert corpus.report["sentences"] == 60 and corpus.report["documents"] == 10
    assert corpus.report["unaligned"] == 0
    first = corpus.sentences[0]
    assert len(first.golds) == 3 and [first.tokens[k - 1] for k in first.golds[0]] == compress(first.tokens)
    parts = split_corpus(corpus)
    documents = {name: {s.document for s in part} for name, part in parts.items()}
    assert documents["test"] == {"doc4.1", "doc9.1"} and documents["dev"] == {"doc2.1"}
    assert not documents["train"] & (documents["dev"] | documents["test"])
    assert sum(map(len, parts.values())) == 60


def test_google_reader_reports_unaligned_rows_and_splits_by_line_order(tmp_path):
    rewrite = ("They do n't care .", "They don't care.", "PRP VBP RB VB .", "nsubj aux neg ROOT p")
    corpus = read_corpus("google", write_google(tmp_path, count=39, extra_rows=[rewrite]))
    assert corpus.report["sentences"] == 40 and corpus.report["unaligned"] == 1
    assert corpus.report["unaligned_lines"] == [40]
    assert not corpus.sentences[-1].aligned and corpus.sentences[0].pos is not None
    parts = split_corpus(corpus)
    assert [s.id for s in parts["test"]] == [f"google.{i}" for i in range(1, 5)]
    assert [s.id for s in parts["dev"]] == [f"google.{i}" for i in range(5, 9)]
    assert len(parts["train"]) == 32


def test_a_new_corpus_is_one_entry_of_the_registry(tmp_path, monkeypatch):
    def read(directory: Path) -> tuple[list[Sentence], dict]:
        sentences = [Sentence(f"toy.{i}", f"doc{i}", ["a", "b"], [np.array([2])]) for i in range(10)]
        return sentences, {"sentences": len(sentences), "unaligned": 0}

    monkeypatch.setitem(CORPORA, "toy", CorpusFormat("toy", read, lambda s: {"train": s[2:], "dev": s[1:2],
                                                                               "test": s[:1]}))
    corpus = read_corpus("toy", tmp_path)
    assert corpus.name == "toy" and [len(part) for part in split_corpus(corpus).values()] == [8, 1, 1]
    model = tmp_path / "toy.npz"
    assert main(["train", "--corpus", "toy", "--data", str(tmp_path), "--out", str(model), "--objective",
                 "perceptron", "--solver", "brute-force", "--epochs", "1"]) == 0
    assert model.exists()


def test_readers_name_the_missing_or_broken_file(tmp_path):
    with pytest.raises(CorpusError, match="eval_data"):
        read_corpus("google", tmp_path)
    write_google(tmp_path / "g", count=3)
    (tmp_path / "g" / "test_pos.part.txt").write_text("DT\n")
    with pytest.raises(CorpusError, match="line-parallel"):
        read_corpus("google", tmp_path / "g")
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(CorpusError, match="line 1"):
        read_corpus("clarke-lapata-written", tmp_path)
    with pytest.raises(CorpusError, match="unknown corpus"):
        read_corpus("ziff-davis", tmp_path)


# --- model, perceptron, accuracy -------------------------------------------------------------------------------

def test_token_prf():
    assert token_prf(np.array([1, 2]), np.array([2, 3])) == (0.5, 0.5, 0.5)
    assert token_prf(np.array([], dtype=int), np.array([], dtype=int)) == (1.0, 1.0, 1.0)
    assert token_prf(np.array([1]), np.array([2]))[2] == 0.0


def _random_model(tmp_path, second_order: bool, seed: int):
    """The tiny corpus and a model with random weights."""
    corpus = read_corpus("clarke-lapata-written", write_clarke_lapata(tmp_path))
    weights = np.random.default_rng(seed).normal(size=DIM + 1)
    return corpus, CompressionModel(weights=weights, second_order=second_order)


@pytest.mark.parametrize("second_order", [False, True])
@pytest.mark.parametrize("parsed", [False, True])
def test_features_of_a_structure_score_its_objective(tmp_path, second_order, parsed):
    # the perceptron's update is right only if w . phi(heads) (+ the LM weight times the LM total) is the objective
    corpus, model = _random_model(tmp_path, second_order, seed=1)
    solver = compbench.get_solver("resource-dp")
    for sentence in corpus.sentences[:8]:
        if parsed:  # an input parse: a right-branching chain
            sentence.heads = np.arange(-1, sentence.n)
        features = model.features(sentence)
        assert features.arc.shape[-1] == (18 if parsed else 12)
        problem = model.problem(sentence, len(sentence.golds[0]), features)
        assert problem.second_order == second_order
        heads = solver.solve(problem).heads
        ids, lm_total = model.phi(features, heads)
        assert model.weights[ids].sum() + model.weights[-1] * lm_total == pytest.approx(
            compbench.objective(problem, heads))


@pytest.mark.parametrize("second_order", [False, True])
def test_latent_gold_tree_keeps_exactly_the_gold_tokens(tmp_path, second_order):
    corpus, model = _random_model(tmp_path, second_order, seed=0)
    solver = compbench.get_solver("brute-force")
    for sentence in corpus.sentences[:10]:
        gold = sentence.golds[0]
        problem = model.problem(sentence, len(gold))
        heads = latent_gold_heads(solver, problem, gold)
        solution = compbench.Solution("optimal", heads)
        assert solution.kept.tolist() == gold.tolist()
        value = compbench.evaluate(problem, solution)
        # no other tree over the same tokens scores higher: forbid every other token and solve the full problem
        token = problem.token_scores.copy()
        token[np.setdiff1d(np.arange(1, sentence.n + 1), gold) - 1] = -np.inf
        best = solver.solve(problem.replace(token_scores=token))
        assert value == pytest.approx(best.objective)


def tiny_split_and_model(directory: Path):
    """The tiny corpus's split, and an untrained model whose LM knows its training compressions."""
    parts = split_corpus(read_corpus("clarke-lapata-written", write_clarke_lapata(directory)))
    return parts, CompressionModel(lm=BigramLM.fit([[s.tokens[k - 1] for k in s.golds[0]] for s in parts["train"]]))


def test_evaluation_counts_answers_solved_after_a_batch_raised(tmp_path):
    parts, model = tiny_split_and_model(tmp_path)
    broken = compbench.get_solver("resource-dp")

    def raising(problems, **options):
        raise RuntimeError("planted")

    broken._solve_batch = raising
    summary = evaluate_systems(model, parts["test"], [System("batch", compbench.get_solver("resource-dp")),
                                                      System("fallback", broken)])
    assert summary["batch"]["batch_fallbacks"] == 0 < summary["fallback"]["batch_fallbacks"]
    assert summary["fallback"]["batch_fallbacks"] == sum(summary["fallback"]["statuses"].values())
    assert summary["fallback"]["f1_per_sentence"] == summary["batch"]["f1_per_sentence"]
    assert "fallback: " in format_table(summary) and "batch: " not in format_table(summary)


def test_training_learns_the_tiny_rule_and_beats_first_m(tmp_path):
    parts, model = tiny_split_and_model(tmp_path)
    solver = compbench.get_solver("brute-force")
    history = train_perceptron(model, parts["train"], parts["dev"], solver, epochs=3, log=lambda line: None)
    assert [h["epoch"] for h in history] == [1, 2, 3] and model.info["chosen_epoch"] in (1, 2, 3)
    systems = [System("first-m"), System("joint", solver), System("tree-only", solver, "tree-only")]
    summary = evaluate_systems(model, parts["test"], systems)
    assert summary["joint"]["f1"] >= 0.75 > summary["first-m"]["f1"] + 0.2
    assert summary["joint"]["compression_rate"] == pytest.approx(summary["first-m"]["compression_rate"])
    per_sentence = summary["joint"]["f1_per_sentence"]
    assert len(per_sentence) == summary["joint"]["sentences"] and np.mean(per_sentence) == pytest.approx(
        summary["joint"]["f1"], abs=1e-6)
    # the sentences come in the split's order whatever else is evaluated: files of one split pair up
    assert evaluate_systems(model, parts["test"], [System("first-m")])["first-m"]["f1_per_sentence"] == summary[
        "first-m"]["f1_per_sentence"]
    model.save(tmp_path / "model.npz")
    loaded = CompressionModel.load(tmp_path / "model.npz")
    sentence = parts["test"][0]
    for ours, theirs in zip(model.scores(model.features(sentence)), loaded.scores(loaded.features(sentence))):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs)


def test_pos_tagger_learns_a_tiny_tag_set():
    data = [(tokens, [VOCABULARY[t] for t in tokens]) for tokens in sentences(60, seed=3)]
    tagger = PosTagger.fit(data, epochs=3)
    held_out = sentences(10, seed=4)
    predicted = [tag for tokens in held_out for tag in tagger.tag(tokens)]
    truth = [VOCABULARY[t] for tokens in held_out for t in tokens]
    assert np.mean(np.array(predicted) == np.array(truth)) > 0.95


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_trigram_viterbi_is_the_best_of_all_tag_sequences(n: int) -> None:
    rng = np.random.default_rng(n)
    tags = 3
    for _ in range(20):
        emission, pair = rng.normal(size=(n, tags)), rng.normal(size=(n, tags + 1, tags))
        triple = rng.normal(size=(tags + 1, tags + 1, tags))

        def score(sequence: tuple[int, ...]) -> float:
            previous = before = -1
            total = 0.0
            for i, t in enumerate(sequence):
                total += emission[i, t] + pair[i, previous + 1, t] + triple[previous + 1, before + 1, t]
                previous, before = t, previous
            return total

        best = max(itertools.product(range(tags), repeat=n), key=score)
        assert trigram_viterbi(emission, pair, triple, candidates=tags).tolist() == list(best)
        pruned = trigram_viterbi(emission, pair, triple, candidates=2)  # a sequence over each word's 2 best tags
        assert len(pruned) == n and score(tuple(pruned)) <= score(best) + 1e-12


def test_structured_tagger_learns_a_tiny_tag_set_and_round_trips() -> None:
    data = [(tokens, [VOCABULARY[t] for t in tokens]) for tokens in sentences(60, seed=3)]
    tagger = StructuredTagger.fit(data, epochs=3, lexicon=data[:10])
    assert tagger.lexicon and set(tagger.lexicon) <= set(tagger.classes)
    held_out = sentences(10, seed=4)
    predicted = [tagger.tag(tokens) for tokens in held_out]
    truth = [[VOCABULARY[t] for t in tokens] for tokens in held_out]
    assert np.mean(np.array(sum(predicted, [])) == np.array(sum(truth, []))) > 0.95
    loaded = load_tagger(tagger.arrays())
    assert isinstance(loaded, StructuredTagger) and [loaded.tag(tokens) for tokens in held_out] == predicted
    assert (loaded.classes, loaded.lexicon) == (tagger.classes, tagger.lexicon)
    assert isinstance(load_tagger(PosTagger.fit(data, epochs=1).arrays()), PosTagger)


def test_an_older_greedy_rich_tagger_is_refused() -> None:
    arrays = {"tagger_weights": np.zeros((4, 2), np.float32), "tagger_tags": np.array(["DT", "NN"]),
              "tagger_rich": np.array(True)}
    with pytest.raises(ValueError, match="older version"):
        load_tagger(arrays)


def test_commands_train_build_instances_and_evaluate(tmp_path, capsys):
    data = write_google(tmp_path / "google", count=40)
    model, instances, report = tmp_path / "m.npz", tmp_path / "set.jsonl", tmp_path / "acc.json"
    common = ["--corpus", "google", "--data", str(data)]
    assert main(["train", *common, "--out", str(model), "--solver", "brute-force", "--epochs", "2"]) == 0
    assert main(["build-instances", *common, "--model", str(model), "--out", str(instances)]) == 0
    problems = list(compbench.read_instances(instances))
    assert len(problems) == 4 and all(len(p.extra["gold"][0]) == p.length.min for p in problems)
    assert main(["evaluate", *common, "--model", str(model), "--solvers", "brute-force", "--json-out", str(report),
                 "--length", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "joint (brute-force)" in out and "first-m" in out and "bigram-only" in out
    record = json.loads(report.read_text())
    assert record["length"] == 0.5 and record["systems"]["first-m"]["sentences"] == 4
    assert main(["plot", str(report), "--out", str(tmp_path / "plots")]) == 0  # the harness's accuracy plot
    assert all((tmp_path / "plots" / f"accuracy.{ext}").stat().st_size > 1000 for ext in ("png", "svg"))
    assert main(["evaluate", *common, "--model", str(tmp_path / "missing.npz")]) == 2
    capsys.readouterr()
    assert main(["evaluate", *common, "--model", str(model), "--solvers", "brute-force,brute-force"]) == 2
    assert "'joint (brute-force)' would be two rows of one name" in capsys.readouterr().err
    assert main(["evaluate", *common, "--model", str(model), "--max-n", "1"]) == 2  # no sentence of one token
    assert "no aligned sentence of the test split is that short" in capsys.readouterr().err
    assert main(["evaluate", *common, "--model", str(model), "--solvers", "brute-force",
                 "--time-limit", "1e-9"]) == 1  # no decode in time: no F1 to speak of
    assert "joint (brute-force) answered no sentence (4 failed: timeout 4): its F1 measures nothing" in \
        capsys.readouterr().out
    crf = tmp_path / "crf.npz"
    assert main(["train", *common, "--out", str(crf), "--objective", "crf", "--epochs", "1"]) == 0
    assert CompressionModel.load(crf).info["objective"] == "crf"


def test_training_whose_dev_sentences_are_all_longer_than_max_n_chooses_no_epoch(tmp_path):
    """Every dev F1 was None under --max-n, and the last epoch was written as 'chosen on dev'."""
    from compbench.compression.training import TrainingError

    corpus = read_corpus("google", write_google(tmp_path / "google", count=40))
    parts = split_corpus(corpus)
    max_n = min(s.n for s in parts["train"] if s.aligned)
    dev = [s for s in parts["dev"] if s.aligned and s.n > max_n]
    assert dev
    with pytest.raises(TrainingError, match=f"no aligned dev sentence of at most {max_n} tokens"):
        train_perceptron(CompressionModel(), parts["train"], dev, compbench.get_solver("brute-force"), epochs=1,
                         max_n=max_n, log=lambda line: None)


# --- the shared corpora ----------------------------------------------------------------------------------------

@NEEDS_SHARED
@pytest.mark.parametrize("name, directory, sentences_here", [
    ("clarke-lapata-written", "clarke-lapata-written", 1281),
    ("clarke-lapata-broadcast", "clarke-lapata-broadcast", 1078),
])
def test_shared_clarke_lapata_aligns_completely(name, directory, sentences_here):
    corpus = read_corpus(name, SHARED / directory)
    assert corpus.report["sentences"] == sentences_here and corpus.report["unaligned"] == 0
    parts = split_corpus(corpus)
    assert not {s.document for s in parts["train"]} & {s.document for s in parts["test"]}


@NEEDS_SHARED
def test_shared_google_aligns_most_sentences_and_trains_on_a_few_short_ones():
    corpus = read_corpus("google", SHARED / "google-sentence-compression")
    assert corpus.report["sentences"] == 9000
    assert corpus.report["unaligned"] == len(corpus.report["unaligned_lines"]) < 200
    for sentence in corpus.sentences[:200]:
        if sentence.aligned:
            words = [sentence.tokens[k - 1].lower() for k in sentence.golds[0]]
            assert words and all(w for w in words)
    parts = split_corpus(corpus)
    short = [s for s in parts["train"] if s.n <= 10 and s.aligned][:20]
    model = CompressionModel()
    train_perceptron(model, short, [], compbench.get_solver("brute-force"), epochs=1, log=lambda line: None)
    assert np.any(model.weights)


def assert_finite_difference_gradient(loss, weights: np.ndarray, gradient: np.ndarray, indices: list[int]) -> None:
    """``gradient`` of ``loss(weights)`` at each of ``indices`` equals the central finite difference."""
    eps = 1e-6
    for index in indices:
        up, down = weights.copy(), weights.copy()
        up[index] += eps
        down[index] -= eps
        assert gradient[index] == pytest.approx((loss(up) - loss(down)) / (2 * eps), abs=1e-5)


def test_crf_gradient_is_the_finite_difference_of_its_loss(tmp_path):
    from compbench.compression.crf import sentence_loss

    corpus = read_corpus("clarke-lapata-written", write_clarke_lapata(tmp_path))
    sentence = next(s for s in corpus.sentences if s.aligned and s.n >= 5)
    gold = sentence.golds[0]
    model = CompressionModel(lm=BigramLM.fit([["cat", "sat"]]))
    features = model.features(sentence)
    rng = np.random.default_rng(0)
    weights = np.zeros(DIM + 1)
    weights[np.unique(features.arc)] = rng.normal(0, 0.3, len(np.unique(features.arc)))
    weights[DIM] = 0.5
    loss, gradient = sentence_loss(model, features, sentence, gold, weights)
    assert loss > 0
    assert_finite_difference_gradient(lambda w: sentence_loss(model, features, sentence, gold, w)[0], weights,
                                      gradient, [int(features.token[0, 2]), int(features.arc[0, 2, 0]),
                                                 int(features.bigram[0, 1, 1]), DIM])


def test_crf_training_learns_the_tiny_rule(tmp_path):
    from compbench.compression.crf import train_crf

    parts, model = tiny_split_and_model(tmp_path)
    solver = compbench.get_solver("resource-dp")
    history = train_crf(model, parts["train"], parts["dev"], solver, epochs=3, log=lambda line: None)
    assert history[-1]["mean_loss"] < history[0]["mean_loss"]
    summary = evaluate_systems(model, parts["test"], [System("first-m"), System("joint", solver)])
    assert summary["joint"]["f1"] >= 0.75 > summary["first-m"]["f1"] + 0.2
    assert model.info["objective"] == "crf"


def test_mbr_keeps_the_tokens_of_highest_marginal_a_tree_can_hold():
    from compbench.compression.accuracy import mbr_problem

    p = compbench.generate("gaussian", n=9, seed=2, length=4)
    marginal = compbench.marginals(p).token
    solution = compbench.get_solver("resource-dp").solve(mbr_problem(p))
    assert sorted(solution.kept) == sorted(np.argsort(-marginal)[:4] + 1)
    assert compbench.evaluate(p, solution.heads) > -np.inf  # valid under the original problem


def test_parse_features_mark_the_input_arcs_and_ancestors():
    from compbench.compression.features import ancestor_distances, sentence_features

    heads = np.array([-1, 2, 0, 2, 3])  # 2 is the root's child; 1 and 3 depend on 2; 4 on 3
    assert ancestor_distances(heads)[:, 4].tolist() == [3, 0, 2, 1, 0]
    words = "a b c d".split()
    plain = sentence_features(words)
    parsed = sentence_features(words, heads=heads)
    assert parsed.arc.shape[-1] == plain.arc.shape[-1] + 6
    fidelity = parsed.arc[..., plain.arc.shape[-1]]  # the first parse template: is h -> k an input arc
    is_input_arc = np.zeros((5, 5), bool)
    is_input_arc[heads[1:], np.arange(1, 5)] = True
    assert len(np.unique(fidelity[:, 1:][is_input_arc[:, 1:]])) == 1  # one feature for every input arc
    assert not np.isin(fidelity[:, 1:][~is_input_arc[:, 1:]], fidelity[is_input_arc]).any()  # another for the rest


def test_dropped_span_features_see_what_a_bigram_drops():
    from compbench.compression.features import sentence_features
    from compbench.learning.features import code, distance_bucket, mix

    # positions: 0 <s>, 1 he, 2 said, 3 ",", 4 sadly, 5 ",", 6 it, 7 rained, 8 </s>
    words, tags = "he said , sadly , it rained".split(), "PRP VBD , RB , PRP VBD".split()
    span = sentence_features(words, tags).bigram[..., -5:]  # the dropped-span templates: the last bigram columns
    content = span[..., 2]  # a verb in the span, a punctuation mark in it, its length
    assert content[2, 6] == mix(53, 0, 1, distance_bucket(3))  # ", sadly ,": punctuation, no verb
    assert content[1, 3] == mix(53, 1, 0, distance_bucket(1))  # "said": a verb
    assert content[3, 5] == content[5, 7] == mix(53, 0, 0, distance_bucket(1))  # "sadly", "it"
    assert all(content[k, k + 1] == mix(53, 2, 2, distance_bucket(0)) for k in range(8))  # adjacent: nothing dropped
    closed = span[..., 4]  # is the last dropped word punctuation, with a's tag
    assert closed[2, 6] == mix(55, 1, code("VBD")) != closed[2, 5] == mix(55, 0, code("VBD"))
    assert span[2, 6, 0] == mix(51, code(","), code("PRP"))  # the last dropped tag with b's


def test_train_with_a_parser_keeps_it_and_reports_syntactic_f1(tmp_path, capsys):
    from compbench.parser import ParserModel

    data = write_google(tmp_path / "google", count=40)
    parser = tmp_path / "parser.npz"
    ParserModel().save(parser)  # untrained (it still parses: some projective tree), with the corpus's own tags
    model = tmp_path / "m.npz"
    common = ["--corpus", "google", "--data", str(data)]
    assert main(["train", *common, "--out", str(model), "--objective", "perceptron", "--epochs", "1",
                 "--parser", str(parser)]) == 0
    loaded = CompressionModel.load(model)
    assert loaded.parser is not None and loaded.info["parser"] == "parser.npz"
    capsys.readouterr()
    report = tmp_path / "acc.json"
    assert main(["evaluate", *common, "--model", str(model), "--json-out", str(report)]) == 0
    assert "synF1" in capsys.readouterr().out
    systems = json.loads(report.read_text())["systems"]
    assert all(0.0 <= row["syntactic_f1"] <= 1.0 for row in systems.values())
    assert main(["train", *common, "--out", str(tmp_path / "x.npz"), "--parser", str(data / "missing.npz")]) == 2
    with np.load(parser) as stored:  # a damaged embedded parser is named as the parser's, not the model's own info
        inner = {**dict(stored), "info": np.array(json.dumps({"kind": "parser", "universal_tags": "yes"}))}
    np.savez(tmp_path / "inner.npz", **inner)
    with np.load(model) as stored:
        outer = {**dict(stored), "parser_npz": np.frombuffer((tmp_path / "inner.npz").read_bytes(), np.uint8)}
    np.savez(tmp_path / "bad.npz", **outer)
    capsys.readouterr()
    assert main(["evaluate", *common, "--model", str(tmp_path / "bad.npz")]) == 2
    assert "the parser it embeds: info.universal_tags: expected true or false" in capsys.readouterr().err


@pytest.mark.parametrize("line, says", [
    (b'{"id": 7, "text": "a b", "summaries": ["a"]}', "line 1: expected a string id and text"),
    (b'{"id": "d.1", "text": ["a"], "summaries": ["a"]}', "line 1: expected a string id and text"),
    (b'{"id": "d.1", "text": "a b", "summaries": "a"}', "list of string summaries"),
    (b'{"id": "d.1", "text": "caf\xe9 au lait", "summaries": ["a"]}', "cannot read it as UTF-8 text"),
    (b"[" * 100_000 + b"]" * 100_000, "RecursionError"),  # a RecursionError traceback
])
def test_a_malformed_clarke_lapata_record_is_one_line_naming_the_file(tmp_path: Path, line: bytes,
                                                                       says: str) -> None:
    (tmp_path / "bnc.jsonl").write_bytes(line + b"\n")
    with pytest.raises(CorpusError, match=says) as raised:
        read_corpus("clarke-lapata-written", tmp_path)
    assert str(tmp_path / "bnc.jsonl") in str(raised.value)


def test_corpus_lines_are_line_feeds_and_odd_records_are_read_as_they_are(tmp_path: Path) -> None:
    """U+2028 in a JSON string (split as a line: 'Unterminated string'), a BOM (kept in Google's first token, or
    refused), an empty sentence (scored F1 1 as a perfect compression: now unaligned), a CSV row short of its
    compressed field (an AttributeError traceback), a superscript digit as a CoNLL-U HEAD (a ValueError
    traceback)."""
    from compbench.parser.conllu import parse_conllu

    cl = tmp_path / "cl"
    cl.mkdir()
    records = [{"id": "d.1", "text": "a\u2028b c", "summaries": ["c"]}, {"id": "d.2", "text": "", "summaries": [""]}]
    (cl / "bnc.jsonl").write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                                              for r in records).encode())
    first, empty = read_corpus("clarke-lapata-written", cl).sentences
    assert first.tokens == ["a", "b", "c"] and first.aligned and not empty.aligned  # U+2028 is white space
    google = write_google(tmp_path / "google", count=3)
    words = google / "test_words.part.txt"
    words.write_bytes(b"\xef\xbb\xbf" + words.read_bytes())
    assert read_corpus("google", google).sentences[0].tokens[0][0] != "\ufeff"
    (google / "eval_data.part.csv").write_text("original,compressed\nonly one field\n" * 1 + "a,b\n" * 2)
    with pytest.raises(CorpusError, match="row 1: no 'compressed' field"):
        read_corpus("google", google)
    with pytest.raises(CorpusError, match="HEAD"):
        parse_conllu("1\ta\t_\tNOUN\t_\t_\t\u00b2\tnsubj\t_\t_\n\n", "t.conllu")


def test_training_needs_aligned_train_and_dev_sentences(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = write_clarke_lapata(tmp_path / "cl", documents=2)  # documents 0 and 1: train only, no dev
    assert main(["train", "--corpus", "clarke-lapata-written", "--data", str(data), "--out",
                 str(tmp_path / "m.npz"), "--epochs", "1"]) == 2
    assert "has no aligned sentence in its dev split" in capsys.readouterr().err
    assert not (tmp_path / "m.npz").exists()


def test_a_damaged_compression_model_is_refused_in_one_line_naming_the_part(tmp_path, capsys):
    """From a hunt: a 0-d weight index crashed its own message, members that are no names and an info.kind list
    raised TypeErrors, the LM's arrays were read unchecked (cut short: IndexError; keys reversed: silently other
    words' counts), a file whose info names a parser or tagger it lacks scored without it (F1 0.875 -> 0.815), a
    subtree model without its parser failed after the corpus was read, second_order "false" counted as true."""
    data = write_google(tmp_path / "google", count=40)
    model = tmp_path / "m.npz"
    common = ["--corpus", "google", "--data", str(data)]
    assert main(["train", *common, "--out", str(model), "--solver", "brute-force", "--epochs", "1"]) == 0
    with np.load(model) as stored:
        arrays = dict(stored)
    info = json.loads(str(arrays["info"]))
    cases = [("weight_index", np.array(3), "weight_index: expected"),
             ("members", np.array([1, 2]), "damaged: members: expected a list of names"),
             ("info", {"kind": ["joint"]}, "unknown model kind ['joint']"),
             ("info", {"second_order": "false"}, "info.second_order: expected true or false"),
             ("info", {"parser": "p.npz"}, "info.parser names 'p.npz', but the file holds no parser"),
             ("info", {"pos": "tagger"}, "info.pos says its tags came from its tagger"),
             ("info", {"kind": "subtree"}, "subtree deletion needs the parser it was trained with"),
             ("lm_unigram_counts", arrays["lm_unigram_counts"][:-3], "lm_unigram_counts: expected a list of"),
             ("lm_bigram_keys", arrays["lm_bigram_keys"][::-1], "lm_bigram_keys: expected increasing integers"),
             ("lm_bigram_counts", -arrays["lm_bigram_counts"], "lm_bigram_counts: expected counts")]
    for member, value, says in cases:
        damaged = dict(arrays)
        damaged[member] = np.array(json.dumps({**info, **value})) if member == "info" else value
        np.savez(tmp_path / "bad.npz", **damaged)
        capsys.readouterr()
        assert main(["evaluate", *common, "--model", str(tmp_path / "bad.npz")]) == 2, member
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert says in line and str(tmp_path / "bad.npz") in line, line
