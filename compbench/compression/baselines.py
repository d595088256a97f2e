"""The seeds' baselines (issue 17), trained on the same data as the joint model and decoded exactly:

* ``bigram`` — McDonald (2006): a compression scored by its tokens and the bigrams of its kept sequence only
  (token, bigram and bigram-LM features; no arc features, no tree), **trained as such** (by the same perceptron or
  CRF objective as the joint model, on these features alone).  Decoded by :func:`chain_decode`, an exact chain DP
  over (last kept word, count) in O(n^2 m) (:class:`ChainSolver`).
* ``chain-crf`` — a linear-chain CRF labelling each token keep/delete from features of the token and its
  neighbours plus label-transition features, trained by forward-backward in log space (:func:`forward_backward`)
  with AdaGrad + L2 as the joint CRF, decoded by an exact Viterbi that keeps exactly m tokens
  (:func:`viterbi_count`, O(n m)).
* :func:`subtree_deletion` — keep m tokens so that what is kept of an *input* dependency tree stays a tree of its
  arcs (a kept token's input head is kept, or is the root): an exact tree-knapsack DP, scored per token.

>>> token = np.array([1.0, -5.0, 2.0]); bigram = np.zeros((5, 5))
>>> chain_decode(token, bigram, 2)[0].tolist()
[1, 3]
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from typing import Any, Callable

import numpy as np

from ..corpora import Sentence
from ..learning.features import DIM, code, mix
from ..learning.model_file import read_info
from ..learning.training import AdaGrad, AveragedWeights
from ..problem import Length, Problem, Solution, Status
from ..solver import Capabilities, Solver, SolverError
from .accuracy import System
from .features import BigramLM, SentenceFeatures, is_punct, sentence_features
from .model import CompressionModel
from .training import Batch, train_on_batches

MODEL_KINDS = ("joint", "bigram", "chain-crf", "subtree")
NEG_INF = -np.inf


# --------------------------------------------------------------------------------------------------------------
# bigram-only (McDonald 2006)

def chain_decode(token: np.ndarray, bigram: np.ndarray, m: int) -> tuple[np.ndarray, float]:
    """The m tokens maximizing ``sum token[k-1] + sum bigram[a, b]`` over the kept sequence 0 < k1 < .. < km < n+1
    (``bigram`` (n+2, n+2), 0 = ``<s>``, n+1 = ``</s>``): DP over (last kept word j, count c), O(n^2 m).
    Returns (kept, objective); kept is empty and the objective -inf when no finite choice exists."""
    n = len(token)
    if not 0 <= m <= n:
        raise ValueError(f"cannot keep {m} of {n} tokens")
    best = np.full((m + 1, n + 1), NEG_INF)  # best[c, j]: c kept, the last one j (j = 0: none yet)
    back = np.zeros((m + 1, n + 1), dtype=np.int64)
    best[0, 0] = 0.0
    with np.errstate(invalid="ignore"):
        for j in range(1, n + 1):
            top = min(m, j)
            candidates = best[:top, :j] + bigram[:j, j][None, :]  # (c-1, i)
            i = np.argmax(candidates, axis=1)
            best[1:top + 1, j] = candidates[np.arange(top), i] + token[j - 1]
            back[1:top + 1, j] = i
        final = best[m, :] + bigram[: n + 1, n + 1]
    last = int(np.argmax(final))
    objective = float(final[last])
    if not np.isfinite(objective) or (m == 0 and last != 0):
        return np.zeros(0, dtype=np.int64), NEG_INF
    kept = []
    j, c = last, m
    while c > 0:
        kept.append(j)
        j, c = int(back[c, j]), c - 1
    return np.array(kept[::-1], dtype=np.int64), objective


def flat_heads(n: int, kept: np.ndarray) -> np.ndarray:
    """A projective single-root tree over ``kept``: the first kept token under the root, the others under it."""
    heads = np.full(n + 1, -1, dtype=np.int64)
    if len(kept):
        heads[kept] = kept[0]
        heads[kept[0]] = 0
    return heads


class ChainSolver(Solver):
    """Exact decoder of problems whose arc scores are all 0 (a bigram-only model): the tree does not change the
    objective, so the best kept sequence (:func:`chain_decode`) with any tree over it is optimal."""

    name = "bigram-chain"
    description = "exact chain DP over (last kept word, count) for problems with zero arc scores"
    exact = True
    complexity = "O(n^2 m)"
    supports = Capabilities(lengths=frozenset({"exact"}), single_root=True)

    def _solve(self, problem: Problem, *, time_limit, all_lengths, **options: Any) -> Solution:
        arc = problem.arc_scores
        n = problem.n
        used = ~np.eye(n + 1, dtype=bool)
        used[:, 0] = False
        if np.any(arc[used] != 0.0):
            raise SolverError("bigram-chain decodes only problems whose arc scores are all 0")
        kept, objective = chain_decode(problem.token_scores, problem.bigram_scores, problem.length.min)
        if not np.isfinite(objective):
            return Solution(Status.INFEASIBLE, message="no finite kept sequence of that length")
        return Solution(Status.OPTIMAL, heads=flat_heads(n, kept), objective=objective, bound=objective)


class BigramModel(CompressionModel):
    """The joint model's token and bigram (and LM) features without any arc feature: its problems have zero arc
    scores, and training it (perceptron or CRF) fits a bigram-only model."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.info["kind"] = "bigram"
        if self.second_order:
            raise ValueError("a bigram-only model has no second-order (sibling) features")

    def features(self, sentence: Sentence, lm: BigramLM | None = None) -> SentenceFeatures:
        f = super().features(sentence, lm)
        return SentenceFeatures(f.token, np.zeros(f.arc.shape[:2] + (0,), dtype=np.int64), f.bigram, f.lm, None)


# --------------------------------------------------------------------------------------------------------------
# linear-chain CRF keep/delete labeller

CONTEXT_OFFSETS = (-2, -1, 1, 2)


@dataclass
class ChainFeatures:
    """``unary`` (n, F): feature ids firing when token k+1 is kept (deleting scores 0); ``transition``
    (n+1, 2, 2, G): ids of the label pair (y_{i-1}, y_i) at position i = 1..n+1 (row i-1), labels 0 delete,
    1 keep, the boundaries 0 and n+1 labelled keep."""

    unary: np.ndarray
    transition: np.ndarray


def chain_features(tokens: list[str], pos: list[str] | None, dep: list[str] | None) -> ChainFeatures:
    """The project's token features of each token and (shifted templates) of its neighbours within 2, plus label
    transitions alone and conjoined with the two tokens' tags, labels and punctuation."""
    n = len(tokens)
    own = sentence_features(tokens, pos, dep).token  # (n, 14)
    pad = np.full((2, own.shape[1]), -1, dtype=np.int64)
    padded = np.concatenate([pad, own, pad])
    parts = [own]
    for offset in CONTEXT_OFFSETS:
        shifted = padded[2 + offset: 2 + offset + n]
        boundary = np.full_like(shifted, code(f"boundary{offset}"))
        parts.append(mix(100 + offset, np.where(shifted >= 0, shifted, boundary)))
    unary = np.concatenate(parts, axis=1)
    tags = ["<s>"] + list(pos if pos is not None else ["-"] * n) + ["</s>"]
    labels = ["<s>"] + list(dep if dep is not None else ["-"] * n) + ["</s>"]
    words = ["<s>"] + list(tokens) + ["</s>"]
    tag = np.array([code(t) for t in tags], dtype=np.int64)
    lab = np.array([code(t) for t in labels], dtype=np.int64)
    punct = np.array([is_punct(w) for w in words], dtype=np.int64)
    i = np.arange(1, n + 2)[:, None, None]
    a = np.arange(2)[None, :, None]
    b = np.arange(2)[None, None, :]
    shape = (n + 1, 2, 2)
    transition = np.stack([np.broadcast_to(f, shape) for f in (
        mix(110, a, b) + 0 * i, mix(111, a, b, tag[i - 1], tag[i]), mix(112, a, b, tag[i]),
        mix(113, a, b, lab[i - 1], lab[i]), mix(114, a, b, punct[i - 1], punct[i]), mix(115, a, b, lab[i]))],
        axis=-1)
    return ChainFeatures(unary, np.ascontiguousarray(transition))


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    top = np.max(x, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - safe), axis=axis, keepdims=True)) + safe
    return np.squeeze(out, axis=axis)


@dataclass
class ChainPosterior:
    log_partition: float
    keep: np.ndarray  # (n,) p(token k+1 kept)
    pair: np.ndarray  # (n+1, 2, 2) p(y_{i-1} = a, y_i = b), i = 1..n+1


def forward_backward(unary: np.ndarray, transition: np.ndarray) -> ChainPosterior:
    """log Z and the marginals of p(y) ∝ exp(sum_k unary[k] y_k + sum_i transition[i-1, y_{i-1}, y_i]) over
    y in {0, 1}^n with y_0 = y_{n+1} = 1, in log space."""
    n = len(unary)
    emit = np.stack([np.zeros(n), unary], axis=1)  # (n, 2)
    alpha = np.full((n + 2, 2), NEG_INF)
    alpha[0, 1] = 0.0
    for i in range(1, n + 1):
        alpha[i] = _logsumexp(alpha[i - 1][:, None] + transition[i - 1], axis=0) + emit[i - 1]
    alpha[n + 1, 1] = _logsumexp(alpha[n] + transition[n, :, 1], axis=0)
    beta = np.full((n + 2, 2), NEG_INF)
    beta[n + 1, 1] = 0.0
    beta[n] = transition[n, :, 1]
    for i in range(n - 1, -1, -1):
        beta[i] = _logsumexp(transition[i] + (emit[i] + beta[i + 1])[None, :], axis=1)
    log_z = float(alpha[n + 1, 1])
    # pair (i-1, i) for i = 1..n+1: alpha[i-1, a] + T[i-1, a, b] + emit_i(b) + beta[i, b]
    emit_full = np.vstack([emit, np.zeros((1, 2))])
    with np.errstate(invalid="ignore"):
        scores = alpha[:-1, :, None] + transition + (emit_full + beta[1:])[:, None, :] - log_z
        pair = np.where(np.isfinite(scores), np.exp(scores), 0.0)
    keep = pair[:-1, :, 1].sum(axis=1)
    return ChainPosterior(log_z, keep, pair)


def forward_backward_count(unary: np.ndarray, transition: np.ndarray, m: int) -> ChainPosterior:
    """:func:`forward_backward` restricted to the labellings keeping exactly m tokens: the same recursions over
    (position, label, count) in log space, O(n m).  log Z is -inf when m is out of range."""
    n = len(unary)
    if not 0 <= m <= n:
        return ChainPosterior(NEG_INF, np.zeros(n), np.zeros((n + 1, 2, 2)))
    alpha = np.full((n + 1, 2, m + 2), NEG_INF)  # alpha[i, y, c]: after position i, count c (index m+1 unused)
    alpha[0, 1, 0] = 0.0
    for i in range(1, n + 1):
        t = transition[i - 1]
        alpha[i, 0, :m + 1] = _logsumexp(alpha[i - 1, :, :m + 1] + t[:, 0][:, None], axis=0)
        alpha[i, 1, 1:m + 1] = _logsumexp(alpha[i - 1, :, :m] + t[:, 1][:, None], axis=0) + unary[i - 1]
    beta = np.full((n + 1, 2, m + 2), NEG_INF)  # beta[i, y, c]: the rest, given label y and count c at i
    beta[n, :, m] = transition[n, :, 1]
    for i in range(n, 0, -1):
        t = transition[i - 1]
        beta[i - 1, :, :m + 1] = np.logaddexp(t[:, 0][:, None] + beta[i, 0, None, :m + 1],
                                              t[:, 1][:, None] + unary[i - 1] + beta[i, 1, None, 1:m + 2])
    log_z = float(_logsumexp(alpha[n, :, m] + transition[n, :, 1], axis=0))
    pair = np.zeros((n + 1, 2, 2))
    if np.isfinite(log_z):
        with np.errstate(invalid="ignore"):
            for i in range(1, n + 1):
                t = transition[i - 1]
                stay = alpha[i - 1, :, :m + 1] + t[:, 0][:, None] + beta[i, 0, None, :m + 1]
                grow = alpha[i - 1, :, :m + 1] + t[:, 1][:, None] + unary[i - 1] + beta[i, 1, None, 1:m + 2]
                pair[i - 1, :, 0] = np.exp(_logsumexp(stay, axis=1) - log_z)
                pair[i - 1, :, 1] = np.exp(_logsumexp(grow, axis=1) - log_z)
            pair[n, :, 1] = np.exp(alpha[n, :, m] + transition[n, :, 1] - log_z)
    return ChainPosterior(log_z, pair[:-1, :, 1].sum(axis=1), pair)


def viterbi_count(unary: np.ndarray, transition: np.ndarray, m: int) -> tuple[np.ndarray, float]:
    """The best labelling keeping exactly m tokens: Viterbi over (position, label, count), O(n m).
    Returns (kept tokens 1-based, score); empty and -inf when m is out of range."""
    n = len(unary)
    if not 0 <= m <= n:
        return np.zeros(0, dtype=np.int64), NEG_INF
    delta = np.full((2, m + 1), NEG_INF)  # delta[y, c] after position i
    delta[1, 0] = 0.0
    back = np.zeros((n + 1, 2, m + 1), dtype=np.int64)
    for i in range(1, n + 1):
        t = transition[i - 1]
        new = np.full((2, m + 1), NEG_INF)
        # delete: count unchanged
        cand = delta + t[:, 0][:, None]
        back[i, 0] = np.argmax(cand, axis=0)
        new[0] = np.max(cand, axis=0)
        # keep: count + 1
        cand = delta[:, :-1] + t[:, 1][:, None]
        back[i, 1, 1:] = np.argmax(cand, axis=0)
        new[1, 1:] = np.max(cand, axis=0) + unary[i - 1]
        delta = new
    final = delta[:, m] + transition[n, :, 1]
    y = int(np.argmax(final))
    score = float(final[y])
    if not np.isfinite(score):
        return np.zeros(0, dtype=np.int64), NEG_INF
    kept, c = [], m
    for i in range(n, 0, -1):
        previous = int(back[i, y, c])
        if y == 1:
            kept.append(i)
            c -= 1
        y = previous
    return np.array(kept[::-1], dtype=np.int64), score


def chain_as_problem(unary: np.ndarray, transition: np.ndarray, length: Length | int | None = None) -> Problem:
    """The same objective as token and bigram scores (arc scores 0): consecutive kept a < b pay the transitions
    between them (keep-keep, or keep-delete, delete-delete.., delete-keep), a kept token its unary score.  Its
    optimum at length m is :func:`viterbi_count`'s (the tests check it)."""
    n = len(unary)
    i = np.arange(n + 2)
    dd = np.concatenate([[0.0], np.cumsum(transition[:, 0, 0])])  # dd[i] = sum of T_dd at positions 1..i
    A, B = i[:, None], i[None, :]
    with np.errstate(invalid="ignore"):
        Ac, Bc = np.minimum(A, n), np.clip(B, 1, n + 1)
        inner = dd[np.clip(B - 1, 0, n + 1)] - dd[np.clip(A + 1, 0, n + 1)]  # T_dd at a+2..b-1
        gap = transition[Ac, 1, 0] + inner + transition[Bc - 1, 0, 1]
        bigram = np.where(B == A + 1, transition[Bc - 1, 1, 1], gap)
    bigram = np.where(B > A, bigram, NEG_INF)
    if isinstance(length, int):
        length = Length.exact(length)
    return Problem(np.asarray(unary, dtype=np.float64), np.zeros((n + 1, n + 1)), bigram, length=length)


class ChainCRFModel(CompressionModel):
    """The keep/delete labeller: hashed weights over :func:`chain_features` (the LM and ``weights[DIM]`` unused);
    the tagger (optional) tags sentences without POS, as for the joint model."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.info["kind"] = "chain-crf"

    def features(self, sentence: Sentence, lm: BigramLM | None = None) -> ChainFeatures:  # type: ignore[override]
        return chain_features(sentence.tokens, self.pos(sentence), sentence.dep)

    def potentials(self, features: ChainFeatures, weights: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        w = self.weights if weights is None else weights
        return w[features.unary].sum(-1), w[features.transition].sum(-1)

    def problem(self, sentence: Sentence, length, features=None, weights=None, part: str = "joint") -> Problem:
        """The equivalent bigram problem (:func:`chain_as_problem`), so that any exact solver decodes it too."""
        unary, transition = self.potentials(features or self.features(sentence), weights)
        p = chain_as_problem(unary, transition, length)
        gold = [[int(k) for k in g] for g in sentence.golds if g is not None]
        return p.replace(tokens=tuple(sentence.tokens), id=sentence.id, extra={"gold": gold})

    def decode(self, sentence: Sentence, m: int, features: ChainFeatures | None = None) -> np.ndarray:
        unary, transition = self.potentials(features or self.features(sentence))
        return viterbi_count(unary, transition, m)[0]


def chain_loss(model: ChainCRFModel, features: ChainFeatures, gold: np.ndarray, weights: np.ndarray,
               length: str = "free") -> tuple[float, np.ndarray, np.ndarray]:
    """Negative log-likelihood of the gold labelling and its gradient as (ids, values) (repeats allowed);
    ``length="gold"`` normalizes over the labellings of the gold's length only (as the decoder's)."""
    unary, transition = model.potentials(features, weights)
    if length == "gold":
        posterior = forward_backward_count(unary, transition, len(gold))
    else:
        posterior = forward_backward(unary, transition)
    n = len(unary)
    y = np.zeros(n + 2, dtype=np.int64)
    y[0] = y[n + 1] = 1
    y[gold] = 1
    gold_score = float(unary[gold - 1].sum() + transition[np.arange(n + 1), y[:-1], y[1:]].sum())
    gold_pair = np.zeros((n + 1, 2, 2))
    gold_pair[np.arange(n + 1), y[:-1], y[1:]] = 1.0
    F, G = features.unary.shape[1], features.transition.shape[-1]
    keep_diff = posterior.keep - y[1:-1]
    ids = np.concatenate([features.unary.ravel(), features.transition.ravel()])
    values = np.concatenate([np.repeat(keep_diff, F), np.repeat((posterior.pair - gold_pair).ravel(), G)])
    return posterior.log_partition - gold_score, ids, values


def train_chain_crf(model: ChainCRFModel, train: list[Sentence], dev: list[Sentence], *, epochs: int = 8,
                    batch_size: int = 8, max_n: int | None = 60, seed: int = 0, l2: float = 1e-4,
                    learning_rate: float = 0.2, length: str = "free", progress: Callable | None = None,
                    log: Callable[[str], None] = print) -> list[dict]:
    """AdaGrad + L2 on the CRF loss, minibatches and the best-dev-F1 epoch as for the joint CRF
    (:func:`compbench.compression.training.train_on_batches`), dev decoded by count-constrained Viterbi.
    ``length``: ``free`` (the standard CRF over all labellings) or ``gold`` (over those of the gold length)."""
    if length not in ("free", "gold"):
        raise ValueError(f"length must be 'free' or 'gold', got {length!r}")
    weights = model.weights.copy()
    adagrad = AdaGrad(DIM + 1, learning_rate)
    cache: dict[str, ChainFeatures] = {}

    def train_epoch(batches: list[Batch], lms: dict[str, BigramLM]) -> tuple[np.ndarray, dict, str]:
        total, counted = 0.0, 0
        for batch in batches:
            ids, values = [], []
            for sentence, gold in batch:
                if sentence.id not in cache:
                    cache[sentence.id] = model.features(sentence)
                loss, i, v = chain_loss(model, cache[sentence.id], gold, weights, length)
                total, counted = total + loss, counted + 1
                ids.append(i)
                values.append(v)
            gradient = np.bincount(np.concatenate(ids), weights=np.concatenate(values), minlength=DIM + 1)
            weights[:] += adagrad.step(slice(None), gradient + l2 * len(batch) * weights)
        mean = total / max(counted, 1)
        return weights.copy(), {"mean_loss": mean, "examples": counted}, f"mean loss {mean:.4f} over {counted} examples"

    # before the epochs: a training interrupted after one writes them too
    model.info.update(objective="crf", l2=l2, learning_rate=learning_rate, crf_length=length)
    history = train_on_batches(model, train, dev, System("chain-crf", decode=model.decode), train_epoch,
                               epochs=epochs, batch_size=batch_size, max_n=max_n, seed=seed, progress=progress,
                               log=log)
    return history


# --------------------------------------------------------------------------------------------------------------
# subtree deletion over an input parse

def subtree_deletion(token: np.ndarray, heads: np.ndarray, m: int) -> tuple[np.ndarray, float]:
    """The m tokens of highest total ``token`` score whose kept part of the input tree ``heads`` (heads[k] of
    token k = 1..n, 0 = root; ``heads[0]`` ignored) is closed upwards: every kept token's input head is kept or is
    the root.  Exact tree-knapsack DP, O(n^2).  Returns (kept, score); empty and -inf when impossible."""
    n = len(token)
    heads = np.asarray(heads, dtype=np.int64)
    if len(heads) != n + 1:
        raise ValueError(f"heads must have n + 1 = {n + 1} entries")
    children: list[list[int]] = [[] for _ in range(n + 1)]
    for k in range(1, n + 1):
        children[int(heads[k])].append(k)
    # iterative post-order from the root (0); a cycle leaves tokens unreached
    order, stack = [], [0]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(children[v])
    if len(order) != n + 1:
        raise ValueError("heads do not form a tree rooted at 0")
    table: dict[int, np.ndarray] = {}  # table[v][c]: best with v kept and c kept in v's subtree (v included)
    choice: dict[int, list[np.ndarray]] = {}  # per child: the count given to it at each total
    for v in reversed(order):
        best = np.array([0.0]) if v == 0 else np.array([NEG_INF, float(token[v - 1])])  # index: tokens kept
        splits = []
        for c in children[v]:
            child = np.concatenate([[0.0], table.pop(c)[1:]])  # index 0: c's subtree left out
            size = len(best) + len(child) - 1
            merged = np.full(size, NEG_INF)
            arg = np.zeros(size, dtype=np.int64)
            for a in range(len(best)):
                if not np.isfinite(best[a]):
                    continue
                cand = best[a] + child
                better = cand > merged[a:a + len(child)]
                merged[a:a + len(child)][better] = cand[better]
                arg[a:a + len(child)][better] = np.arange(len(child))[better]
            splits.append(arg)
            best = merged
        table[v] = best
        choice[v] = splits
    root = table[0]
    if m >= len(root) or not np.isfinite(root[m]):
        return np.zeros(0, dtype=np.int64), NEG_INF
    kept = []
    stack = [(0, m)]
    while stack:
        v, c = stack.pop()
        if v > 0:
            kept.append(v)
        for child, arg in zip(reversed(children[v]), reversed(choice[v])):
            given = int(arg[c])
            c -= given
            if given:
                stack.append((child, given))
    return np.array(sorted(kept), dtype=np.int64), float(root[m])


class SubtreeModel(CompressionModel):
    """Subtree deletion: the joint model's token features (with the parse features of its parser) and nothing else,
    decoded by :func:`subtree_deletion` over the sentence's input parse, so that what is kept of the parse stays a
    tree of its arcs.  Needs a parser."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.info["kind"] = "subtree"
        if self.second_order:
            raise ValueError("subtree deletion has no second-order (sibling) features")
        if self.parser is None:  # refused up front, not after the corpus is read
            raise ValueError("subtree deletion needs the parser it was trained with (train --parser), and holds none")

    def token_features(self, sentence: Sentence) -> np.ndarray:
        """(n, F) token feature indices; parses the sentence (``sentence.heads``) when it has no parse yet."""
        return super().features(sentence).token

    def decode(self, sentence: Sentence, m: int, features: np.ndarray | None = None,
               weights: np.ndarray | None = None) -> np.ndarray:
        """The m kept tokens of highest total score whose kept part of the input parse is closed upwards."""
        features = self.token_features(sentence) if features is None else features
        scores = (self.weights if weights is None else weights)[features].sum(-1)
        return subtree_deletion(scores, sentence.heads, m)[0]


def train_subtree(model: SubtreeModel, train: list[Sentence], dev: list[Sentence], *, epochs: int = 8,
                  batch_size: int = 8, max_n: int | None = 60, seed: int = 0, progress: Callable | None = None,
                  log: Callable[[str], None] = print) -> list[dict]:
    """The averaged perceptron on token features, decoding by subtree deletion at the gold length; the update moves
    toward the gold kept tokens (which need not be a subtree of the parse) and away from the prediction."""
    weights = AveragedWeights(DIM + 1)
    cache: dict[str, np.ndarray] = {}

    def train_epoch(batches: list[Batch], lms: dict[str, BigramLM]) -> tuple[np.ndarray, dict, str]:
        mistakes = examples = 0
        for batch in batches:
            delta = np.zeros(DIM + 1)
            for sentence, gold in batch:
                examples += 1
                if sentence.id not in cache:
                    cache[sentence.id] = model.token_features(sentence)
                features = cache[sentence.id]
                predicted = model.decode(sentence, len(gold), features, weights.current)
                if np.array_equal(predicted, gold):
                    continue
                mistakes += 1
                np.add.at(delta, features[gold - 1].ravel(), 1.0)
                np.add.at(delta, features[predicted - 1].ravel(), -1.0)
            moved = np.flatnonzero(delta)  # the rest stays as it is
            weights.add(moved, delta[moved])
            weights.next_step()
        return weights.average(), {"mistakes": mistakes, "examples": examples}, f"{mistakes}/{examples} mistakes"

    # before the epochs: a training interrupted after one writes them too
    model.info.update(objective="perceptron")
    history = train_on_batches(model, train, dev, System("subtree deletion", decode=model.decode), train_epoch,
                               epochs=epochs, batch_size=batch_size, max_n=max_n, seed=seed, progress=progress,
                               log=log)
    return history


# --------------------------------------------------------------------------------------------------------------
# model files and evaluation rows

def chain_decoder(model: ChainCRFModel) -> Callable[[Sentence, int], np.ndarray]:
    """``decode(sentence, m)`` by count-constrained Viterbi, the features computed once per sentence."""
    last: dict[str, Any] = {}

    def decode(sentence: Sentence, m: int) -> np.ndarray:
        if last.get("id") != sentence.id:
            last.update(id=sentence.id, potentials=model.potentials(model.features(sentence)))
        return viterbi_count(*last["potentials"], m)[0]

    return decode


def systems_of(model: CompressionModel, main: bool, label: str = "") -> list[System]:
    """The evaluation rows of a bigram or chain-CRF model (a joint model's rows are built by the command)."""
    kind = model_kind(model)
    suffix = f" [{label}]" if label else ""
    if kind == "bigram":
        return [System(f"bigram model (bigram-chain){suffix}", ChainSolver(), "joint", None if main else model)]
    if kind == "chain-crf":
        return [System(f"chain CRF (viterbi){suffix}", model=None if main else model, decode=chain_decoder(model))]
    if kind == "subtree":
        return [System(f"subtree deletion{suffix}", model=None if main else model, decode=model.decode)]
    raise ValueError(f"no baseline rows for a {kind!r} model")


def load_model(path: str | PathLike) -> CompressionModel:
    """A model file of any kind (``info["kind"]``; files without it are joint models)."""
    with np.load(path) as data:
        kind = read_info(data).get("kind", "joint")
    cls = {"joint": CompressionModel, "bigram": BigramModel, "chain-crf": ChainCRFModel,
           "subtree": SubtreeModel}.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown model kind {kind!r}")
    return cls.load(path)


def model_kind(model: CompressionModel) -> str:
    return model.info.get("kind", "joint")
