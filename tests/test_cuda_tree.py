"""Plain parsing on the GPU (compbench_solvers/cuda/eisner.py) against brute-force enumeration of projective trees and
against the CPU kernels.

Without a GPU these run in numba's CUDA simulator, which must be switched on before numba.cuda is first imported,
so they run as a pytest invocation of their own (.ci/run):

    NUMBA_ENABLE_CUDASIM=1 python -m pytest -q tests/test_cuda_tree.py

In the main run (no simulator, no GPU) the kernel tests skip with that reason; the missing-GPU error and the
placement rule are tested there too.  The simulator interprets every thread in Python: instances stay tiny.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import types

import numpy as np
import pytest

import compbench
from compbench import Problem
from compbench_solvers.cuda import runtime

REASON = runtime.unavailable()
needs_kernels = pytest.mark.skipif(REASON is not None, reason=f"the GPU kernels cannot run here: {REASON}; run "
                                   "NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/test_cuda_tree.py")


def projective_trees(n: int, single_root: bool) -> list[np.ndarray]:
    """Every projective dependency tree over tokens 1..n (heads, heads[0] = -1): every head vector whose heads lead
    to the root without a cycle and whose arcs do not cross (the root is position 0)."""
    found = []
    for choice in itertools.product(range(n + 1), repeat=n):
        heads = np.array((-1, *choice))
        if single_root and n > 0 and int((heads[1:] == 0).sum()) != 1:  # n = 0: the empty tree, as the CPU chart
            continue
        if all(_reaches_root(heads, m) for m in range(1, n + 1)) and not _crossing(heads):
            found.append(heads)
    return found


def _reaches_root(heads: np.ndarray, m: int) -> bool:
    for _ in range(len(heads)):
        m = int(heads[m])
        if m == 0:
            return True
    return False


def _crossing(heads: np.ndarray) -> bool:
    arcs = [(min(h, m), max(h, m)) for m, h in enumerate(heads.tolist()) if m > 0]
    return any(a < c < b < d for (a, b), (c, d) in itertools.permutations(arcs, 2))


def brute_force(arc: np.ndarray, single_root: bool) -> tuple[list[np.ndarray], np.ndarray]:
    n = len(arc) - 1
    trees = projective_trees(n, single_root)
    return trees, np.array([sum(arc[t[m], m] for m in range(1, n + 1)) for t in trees], dtype=np.float64)


def tie_batch(seed: int, sizes: list[int]) -> np.ndarray:
    """Padded arc scores with many ties (a few integer values), some -inf arcs, sentence 1 without any tree."""
    rng = np.random.default_rng(seed)
    N = max(sizes) + 1
    arc = rng.integers(-1, 2, (len(sizes), N, N)).astype(np.float64)
    arc[rng.random(arc.shape) < 0.15] = -np.inf
    arc[1] = -np.inf
    return arc


@needs_kernels
@pytest.mark.parametrize("single_root", [False, True])
def test_brute_force_on_tiny_padded_batches(single_root):
    from compbench_solvers.cuda import eisner

    sizes = [5, 3, 0, 1, 4, 2]
    arc = tie_batch(3 + single_root, sizes)
    heads, scores = eisner.tree_map(arc, sizes, single_root)
    log_z = eisner.tree_log_partition(arc, sizes, single_root)
    log_z2, marginals = eisner.tree_marginals(arc, sizes, single_root)
    assert heads.dtype == np.int64 and heads.shape == (6, 6) and scores.shape == log_z.shape == (6,)
    for b, n in enumerate(sizes):
        block = arc[b, :n + 1, :n + 1]
        trees, values = brute_force(block, single_root)
        assert (heads[b, n + 1:] == -1).all() and (marginals[b, n + 1:] == 0).all()
        assert (marginals[b, :, n + 1:] == 0).all()
        if not np.isfinite(values).any():  # no tree (sentence 1): -inf, heads -1, marginals 0
            assert scores[b] == log_z[b] == log_z2[b] == -np.inf
            assert (heads[b] == -1).all() and (marginals[b] == 0).all()
            continue
        best = values.max()
        assert scores[b] == best
        assert any(np.array_equal(heads[b, :n + 1], t) for t, v in zip(trees, values) if v == best)
        expected = np.logaddexp.reduce(values)
        assert np.isclose(log_z[b], expected, rtol=1e-12, atol=1e-12) and log_z2[b] == log_z[b]
        mu = np.zeros((n + 1, n + 1))
        for t, v in zip(trees, values):
            mu[t[1:], np.arange(1, n + 1)] += np.exp(v - expected)
        np.testing.assert_allclose(marginals[b, :n + 1, :n + 1], mu, rtol=1e-9, atol=1e-12)


@needs_kernels
@pytest.mark.parametrize("single_root", [False, True])
def test_sums_out_of_the_scaled_range_are_done_again_in_log_space(monkeypatch, single_root):
    """log Z and the marginals are summed in REAL (scaled probabilities) and kept when REAL's values stayed in SAFE's
    range; otherwise the block does its sentence again in LOG, and eisner.summed_in_log_space() counts it; so does
    a sentence past eisner.REAL_WORDS words (where the number of trees no longer bounds what underflows), lowered
    to 2.
    Sentence 0's largest arcs into tokens 1 and 2 are in no tree together, 1,000 above the rest: its scaled Z
    underflows (REAL alone would say log Z = -inf).  Then, in the simulator, which reads the module's globals as it
    runs, SAFE lowered to 2: sentence 1's arcs are all 0, so its values count trees, above 2, as no sentence small
    enough for the simulator reaches SAFE itself; and REAL_WORDS lowered to 2."""
    from compbench_solvers.cuda import eisner

    sizes = [4, 3, 2]
    arc = np.random.default_rng(17 + single_root).standard_normal((3, 5, 5))
    arc[0, 2, 1] = arc[0, 1, 2] = 1000.0
    arc[1] = 0.0
    cases = [(eisner.SAFE, eisner.REAL_WORDS)]
    if runtime.simulated():  # a compiled kernel keeps the values its module's globals had when it was compiled
        cases += [(2.0, eisner.REAL_WORDS), (eisner.SAFE, 2)]
    for safe, words in cases:
        monkeypatch.setattr(eisner, "SAFE", safe)
        monkeypatch.setattr(eisner, "REAL_WORDS", words)
        before = eisner.summed_in_log_space()
        log_z = eisner.tree_log_partition(arc, sizes, single_root)
        log_z2, marginals = eisner.tree_marginals(arc, sizes, single_root)
        redone = eisner.summed_in_log_space() - before
        if safe == 2.0:
            assert redone >= 4  # sentences 0 and 1, by log Z and by the marginals
        elif words == 2:
            assert redone == 4  # sentences 0 and 1, over 2 words, by log Z and by the marginals
        else:
            assert redone == 2  # sentence 0 alone, by log Z and by the marginals
        for b, n in enumerate(sizes):
            trees, values = brute_force(arc[b, :n + 1, :n + 1], single_root)
            expected = np.logaddexp.reduce(values)
            assert np.isclose(log_z[b], expected, rtol=1e-12) and np.isclose(log_z2[b], expected, rtol=1e-12)
            mu = np.zeros((n + 1, n + 1))
            for t, v in zip(trees, values):
                mu[t[1:], np.arange(1, n + 1)] += np.exp(v - expected)
            np.testing.assert_allclose(marginals[b, :n + 1, :n + 1], mu, rtol=1e-9, atol=1e-12)


def cpu_trees(arcs: list[np.ndarray], single_root: bool) -> list:
    """The CPU chart's best trees (resource-dp at length n, as benchmarks/bench_peers.py measures it)."""
    problems = [Problem(np.zeros(len(a) - 1), a, np.zeros((len(a) + 1, len(a) + 1)), length=len(a) - 1,
                        single_root=single_root) for a in arcs]
    return compbench.get_solver("resource-dp").solve_many(problems, jobs=1)


@needs_kernels
@pytest.mark.parametrize("single_root", [False, True])
def test_same_answers_as_the_cpu_kernels(single_root):
    """Mixed sizes up to n = 8 with ties: the same trees (the CPU's tie rule), log Z and marginals to 1e-9, through
    compbench's API with device="cuda" (a list of matrices: padded into one launch)."""
    from compbench_solvers.cuda import eisner

    sizes = [8, 6, 7, 2]
    padded = tie_batch(11 + single_root, sizes)
    padded[1] = np.random.default_rng(5).standard_normal(padded[1].shape)  # one without ties
    arcs = [padded[b, :n + 1, :n + 1] for b, n in enumerate(sizes)]
    heads, scores = eisner.tree_map(padded, sizes, single_root)
    for b, solution in enumerate(cpu_trees(arcs, single_root)):
        assert solution.status.value == "optimal"
        np.testing.assert_array_equal(heads[b, :sizes[b] + 1], solution.heads)
        assert scores[b] == solution.objective
    log_z = compbench.tree_log_partition_many(arcs, single_root, device="cuda")
    assert isinstance(log_z, np.ndarray)
    np.testing.assert_allclose(log_z, compbench.tree_log_partition_many(arcs, single_root), rtol=1e-9)
    for gpu, cpu in zip(compbench.tree_marginals_many(arcs, single_root, device="cuda"),
                        compbench.tree_marginals_many(arcs, single_root)):
        assert np.isclose(gpu.log_partition, cpu.log_partition, rtol=1e-9)
        np.testing.assert_allclose(gpu.arc, cpu.arc, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(gpu.token, cpu.token)
        np.testing.assert_array_equal(gpu.bigram, cpu.bigram)


@needs_kernels
def test_gpu_arrays_in_gpu_arrays_out_and_every_chart_placement(monkeypatch):
    """A GPU array is used in place and the answers come back on the GPU; the charts in global memory (with the
    blocks of 256 threads that large n gets), and the marginals' inside charts in shared memory beside outside
    charts in global memory, give the same answers."""
    from compbench_solvers.cuda import eisner

    sizes = [4, 3]
    arc = tie_batch(7, sizes)
    arc[1] = np.random.default_rng(2).standard_normal(arc[1].shape)
    device_arc = runtime.cuda().to_device(arc)
    log_z = compbench.tree_log_partition_many(device_arc, device="cuda")
    assert runtime.on_gpu(log_z)
    reference = compbench.tree_log_partition_many(arc)
    np.testing.assert_allclose(log_z.copy_to_host(), reference, rtol=1e-12)
    marginals = compbench.tree_marginals_many(device_arc, device="cuda")
    assert runtime.on_gpu(marginals[0].arc) and np.isclose(marginals[1].log_partition, reference[1], rtol=1e-12)
    expected = [eisner.tree_map(arc, sizes), eisner.tree_log_partition(arc, sizes), eisner.tree_marginals(arc, sizes)]
    N = arc.shape[1]
    need = eisner.placement(N, 4)[0]
    for shared_bytes in (eisner.REDUCTION_BYTES + eisner.FLAG_BYTES + 8 * need, 0):  # outside charts global; then all
        monkeypatch.setattr(eisner, "SHARED_BYTES", shared_bytes)
        if not shared_bytes:
            monkeypatch.setattr(eisner, "threads_for", lambda N: eisner.GLOBAL_THREADS)
        assert eisner.placement(N, 4) == ((need, 0) if shared_bytes else (0, 0))
        got = [eisner.tree_map(arc, sizes), eisner.tree_log_partition(arc, sizes), eisner.tree_marginals(arc, sizes)]
        for a, b in zip(np.hstack([np.ravel(x) for x in expected[0]]), np.hstack([np.ravel(x) for x in got[0]])):
            assert a == b
        np.testing.assert_array_equal(got[1], expected[1])
        np.testing.assert_allclose(got[2][1], expected[2][1], rtol=1e-12, atol=1e-15)


@needs_kernels
def test_more_positions_than_threads(monkeypatch):
    """A block of 32 threads over 38 positions (as blocks of 256 threads over sentences past 255 words): a thread
    fills two columns of the charts, their scales among them, with the answers of the CPU kernels."""
    from compbench_solvers.cuda import eisner

    monkeypatch.setattr(eisner, "threads_for", lambda N: 32)
    arc = np.random.default_rng(5).standard_normal((1, 38, 38))
    heads, score = eisner.tree_map(arc)
    log_z = eisner.tree_log_partition(arc)
    log_z2, marginals = eisner.tree_marginals(arc)
    expected = compbench.tree_marginals_many(arc)[0]
    solution = cpu_trees([arc[0]], False)[0]
    np.testing.assert_array_equal(heads[0], solution.heads)
    assert score[0] == solution.objective
    assert np.isclose(log_z[0], expected.log_partition, rtol=1e-12) and log_z2[0] == log_z[0]
    np.testing.assert_allclose(marginals[0], expected.arc, rtol=1e-9, atol=1e-12)


def test_placement_switch(monkeypatch):
    """The charts' shared/global switch as docs/gpu.md states it (N = n+1): inside charts in shared memory up to
    n = 52, the marginals' outside charts beside them up to n = 36 (in global memory with OUTSIDE_IN_SHARED off, a
    placement the test above runs)."""
    from compbench_solvers.cuda import eisner

    assert eisner.placement(53, 2)[0] > 0 and eisner.placement(54, 2) == (0, 0)
    assert eisner.placement(37, 4)[1] > 0 and eisner.placement(38, 4)[1] == 0 and eisner.placement(38, 4)[0] > 0
    assert eisner.placement(101, 4) == (0, 0)
    for N in (11, 26, 51):
        inside, outside = eisner.placement(N, 4)
        assert 8 * (inside + outside) + eisner.REDUCTION_BYTES + eisner.FLAG_BYTES <= 48 * 1024
    monkeypatch.setattr(eisner, "OUTSIDE_IN_SHARED", False)
    assert eisner.placement(26, 4) == (eisner.placement(26, 2)[0], 0) and eisner.placement(26, 2)[0] > 0


@needs_kernels
def test_numpy_input_is_checked_as_on_the_cpu():
    """single_root="False" gave the single-root answer, strings, bools and complex numbers were converted, jobs=0
    passed: numpy input is refused on the GPU path as on the CPU path, with the same one-line errors."""
    bad = [({"arc_scores": np.zeros((1, 4, 4)), "single_root": "False"}, "single_root: expected true or false"),
           ({"arc_scores": [np.array([["0", "5"], ["5", "0"]])]}, "arc_scores[0]"),
           ({"arc_scores": np.zeros((1, 3, 3), bool)}, "arc_scores"),
           ({"arc_scores": np.zeros((1, 3, 3), complex)}, "arc_scores"),
           ({"arc_scores": np.full((1, 3, 3), np.nan)}, "arc_scores"),
           ({"arc_scores": np.zeros((1, 3, 4))}, "arc_scores"),
           ({"arc_scores": np.zeros((1, 3, 3)), "jobs": 0}, "jobs: expected None or an integer >= 1")]
    for call in (compbench.tree_log_partition_many, compbench.tree_marginals_many):
        for kwargs, says in bad:
            errors = []
            for device in ("cpu", "cuda"):
                with pytest.raises((ValueError, TypeError)) as error:
                    call(**kwargs, device=device)
                errors.append(f"{type(error.value).__name__}: {error.value}")
            assert says in errors[1] and errors[0] == errors[1], (kwargs, errors)


@needs_kernels
def test_numpy_input_takes_what_the_cpu_takes_in_the_entries_it_ignores():
    """A mask of -1e30 or a NaN in column 0 and on the diagonal (ignored: read as -inf) was refused on both paths;
    it is taken, in a list and in one array, with the CPU's answers."""
    arc = np.zeros((4, 4))
    np.fill_diagonal(arc, -1e30)
    arc[:, 0] = np.nan
    for arcs in ([arc], arc[None]):
        cpu = compbench.tree_marginals_many(arcs)[0]
        assert compbench.tree_log_partition_many(arcs, device="cuda")[0] == pytest.approx(np.log(12))
        gpu = compbench.tree_marginals_many(arcs, device="cuda")[0]
        assert gpu.log_partition == pytest.approx(cpu.log_partition) and np.allclose(gpu.arc, cpu.arc)
    from compbench_solvers.cuda import eisner  # the kernels' own entry points, a sentence's padding ignored too

    padded = np.full((2, 5, 5), np.nan)
    padded[:, :4, :4] = arc
    assert eisner.tree_log_partition(padded, sizes=np.array([3, 3])) == pytest.approx([np.log(12)] * 2)
    assert eisner.tree_map(padded, sizes=np.array([3, 2]))[1][0] == 0.0
    padded[0, 1, 2] = np.nan
    with pytest.raises(compbench.ProblemError, match=r"arc_scores: NaN at index \(0, 1, 2\)"):
        eisner.tree_marginals(padded, sizes=np.array([3, 3]))


@needs_kernels
def test_the_kernels_entry_points_refuse_what_is_no_real_number() -> None:
    """eisner.tree_map parsed strings ('5' as 5) and complex numbers (their real part, with a warning); a size past
    int64 was named wrapped (-1) by hook.decode."""
    from compbench_solvers.cuda import eisner, hook

    for arcs in (np.array([[["0", "5"], ["5", "0"]]]), np.full((1, 3, 3), 1 + 5j), np.zeros((1, 3, 3), bool)):
        with pytest.raises(compbench.ProblemError, match="arc_scores: expected real numbers"):
            eisner.tree_map(arcs)
    with pytest.raises(ValueError, match="sizes: 18446744073709551615 is out of range"):
        hook.decode(np.zeros((2, 4, 4)), sizes=np.array([2**64 - 1, 2], np.uint64))
    for call in (hook.decode, hook.log_partition, hook.marginals):  # hook's entry points too (ranges unchecked there)
        with pytest.raises(compbench.ProblemError, match="arc_scores: expected real numbers"):
            call(np.full((1, 3, 3), "5"))
        with pytest.raises(compbench.ProblemError, match="token_scores: expected real numbers"):
            call(np.zeros((1, 3, 3)), np.full((1, 2), 1j))


@needs_kernels
def test_the_kernel_modules_check_their_flags_and_take_an_empty_batch():
    """The kernel modules' own entry points refuse single_root="False" as compbench's functions do (it gave the
    single-root answer); an empty batch of any shape has no answers on either device; the marginals' log Z comes
    back on the host (a numba device array has no tolist)."""
    from compbench_solvers.cuda import eisner, hook, inference

    arc, token, bigram = np.zeros((1, 4, 4)), np.zeros((1, 3)), np.zeros((1, 5, 5))
    calls = [lambda flag: eisner.tree_map(arc, single_root=flag),
             lambda flag: eisner.tree_log_partition(arc, single_root=flag),
             lambda flag: eisner.tree_marginals(arc, single_root=flag),
             lambda flag: hook.decode(arc, token, bigram, single_root=flag),
             lambda flag: hook.log_partition(arc, token, bigram, single_root=flag),
             lambda flag: hook.marginals(arc, token, bigram, single_root=flag)]
    for call in calls:
        with pytest.raises(compbench.ProblemError, match="single_root: expected true or false, got 'False'"):
            call("False")
    with pytest.raises(compbench.ProblemError, match="teams: expected true or false"):
        hook.decode(arc, token, bigram, teams="no")
    for call in (compbench.tree_log_partition_many, compbench.tree_marginals_many):
        assert [len(call(np.zeros((0, 0, 0)), device=device)) for device in ("cpu", "cuda")] == [0, 0]
    log_z, arcs = inference.tree_many(runtime.cuda().to_device(np.zeros((2, 4, 4))), False, True)
    assert type(log_z) is np.ndarray and np.allclose(np.exp(log_z), 12) and runtime.on_gpu(arcs[0])


def test_results_come_to_the_host_from_every_gpu_library():
    """A CuPy array refuses np.asarray: to_host had no way for it (tree_marginals_many reads log Z on the host)."""
    class CupyLike:  # CuPy's documented behaviour: .get() copies to the host, implicit conversion refused
        def __init__(self, values):
            self.values = np.asarray(values)

        def get(self):
            return self.values.copy()

        def __array__(self, *args, **kwargs):
            raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()`")

    CupyLike.__module__ = "cupy._core.core"
    host = runtime.to_host(CupyLike([1.5, 2.0]))
    assert type(host) is np.ndarray and host.tolist() == [1.5, 2.0]


def test_a_missing_gpu_is_a_one_line_reason(monkeypatch):
    """device="cuda" without a GPU (nor the simulator): a RuntimeError whose one line is runtime.unavailable()'s."""
    reason = REASON or "no CUDA GPU is visible (a stand-in reason)"
    monkeypatch.setattr(runtime, "unavailable", lambda: reason)
    for call in (compbench.tree_log_partition_many, compbench.tree_marginals_many):
        with pytest.raises(RuntimeError) as error:
            call(np.zeros((1, 3, 3)), device="cuda")
        message = str(error.value)
        assert reason in message and "\n" not in message
    with pytest.raises(ValueError, match="device='tpu'"):
        compbench.tree_log_partition_many(np.zeros((1, 3, 3)), device="tpu")


def test_numba_without_numba_cuda_is_a_one_line_reason(monkeypatch):
    """numba < 0.61 answers ``from numba import cuda`` with a CUDA target of its own, which the kernels are not
    written for: without the numba-cuda package the GPU path is unavailable and says why, not broken at import."""
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest, **options: None if name == "numba_cuda"
                        else find_spec(name, *rest, **options))
    runtime._load.cache_clear()
    try:
        assert runtime.unavailable().startswith("numba-cuda is not installed")
        with pytest.raises(ImportError):
            runtime.import_numba_cuda()
    finally:
        monkeypatch.undo()
        runtime._load.cache_clear()
    assert runtime.unavailable() == REASON


@needs_kernels
def test_results_are_the_callers_own_across_calls():
    """numpy input: the results are host copies of kept device arrays, so a second call leaves the first call's
    results as they were; GPU input: each call's results are new device arrays (the caller keeps them).  The kept
    default sizes follow the batch's width."""
    from compbench_solvers.cuda import eisner

    rng = np.random.default_rng(5)
    first, second = rng.standard_normal((2, 3, 4, 4))
    log_z, marginals = eisner.tree_marginals(first)
    kept = log_z.copy(), marginals.copy()
    eisner.tree_marginals(second)
    np.testing.assert_array_equal(log_z, kept[0])
    np.testing.assert_array_equal(marginals, kept[1])
    device_first = eisner.tree_log_partition(runtime.cuda().to_device(first))
    device_second = eisner.tree_log_partition(runtime.cuda().to_device(second))
    np.testing.assert_allclose(device_first.copy_to_host(), eisner.tree_log_partition(first), rtol=1e-12)
    assert not np.array_equal(device_first.copy_to_host(), device_second.copy_to_host())
    wider = rng.standard_normal((3, 5, 5))  # the same batch size, one more token: the kept sizes change with it
    np.testing.assert_allclose(eisner.tree_log_partition(wider), compbench.tree_log_partition_many(wider), rtol=1e-12)


class StandInTensor:
    """What runtime reads of a torch tensor (this machine has no torch: the GPU benchmarks and
    test_torch_tensors_in_torch_tensors_out check real ones)."""

    __module__ = "torch"
    __cuda_array_interface__ = {"version": 2}

    def __init__(self, shape, dtype, device):
        self.shape, self.dtype, self.device = tuple(shape), dtype, device


def stand_in_torch(monkeypatch, stream: int = 0) -> types.ModuleType:
    """A torch module of stand-ins in sys.modules: dtypes, empty, and a current stream of handle ``stream``."""
    torch = types.ModuleType("torch")
    torch.float64, torch.int64 = "torch.float64", "torch.int64"
    torch.empty = lambda shape, dtype, device: StandInTensor(shape, dtype, device)
    torch.cuda = types.SimpleNamespace(current_stream=lambda device: types.SimpleNamespace(cuda_stream=stream))
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


@needs_kernels
def test_numpy_scores_and_results_go_through_kept_pinned_buffers(monkeypatch):
    """From runtime.STAGE_BYTES on, numpy scores go to the GPU through a kept page-locked buffer filled on every
    core, and results come back through one: with STAGE_BYTES = 1 (every array staged, in parts of one row) and
    each buffer poisoned with NaN when handed out, the answers are the direct copies' bit for bit, and a result is
    the caller's own array (a second call leaves it as it was)."""
    from compbench_solvers.cuda import eisner

    sizes = [5, 3, 4]
    arc = tie_batch(23, sizes)
    arc[1] = np.random.default_rng(4).standard_normal(arc[1].shape)
    calls = [eisner.tree_map, eisner.tree_log_partition, eisner.tree_marginals]

    def flat(answer) -> np.ndarray:
        return np.hstack([np.ravel(x) for x in (answer if isinstance(answer, tuple) else (answer,))])

    expected = [flat(call(arc, sizes)) for call in calls]
    pinned = runtime.pinned

    def poisoned(shape, dtype, slot=0, use="staging"):
        buffer = pinned(shape, dtype, slot, use)
        buffer.fill(np.nan if buffer.dtype.kind == "f" else -7)
        return buffer

    monkeypatch.setattr(runtime, "pinned", poisoned)
    monkeypatch.setattr(runtime, "STAGE_BYTES", 1)
    got = [call(arc, sizes) for call in calls]
    for want, have in zip(expected, got):
        np.testing.assert_array_equal(flat(have), want)
    kept = got[2][1].copy()
    eisner.tree_marginals(np.random.default_rng(6).standard_normal(arc.shape), sizes)
    np.testing.assert_array_equal(got[2][1], kept)


def test_a_gpu_callers_results_come_from_its_own_library(monkeypatch):
    """GPU input: each result is a new array of the input's library (torch's caching allocator, on the input's
    device), handed back as it is; numba's own device arrays only for numba input."""
    torch = stand_in_torch(monkeypatch)
    reference = StandInTensor((2, 5, 5), torch.float64, types.SimpleNamespace(index=1))
    heads = runtime.result(reference, (2, 5), np.int64, "heads")
    value = runtime.result(reference, (2,), np.float64, "value")
    assert (heads.shape, heads.dtype, heads.device) == ((2, 5), "torch.int64", reference.device)
    assert (value.shape, value.dtype, value.device) == ((2,), "torch.float64", reference.device)
    assert runtime.returned_like(reference, heads) is heads and runtime.library(heads) == "torch"


def test_launches_follow_the_callers_stream(monkeypatch):
    """runtime.ordered: with torch's default stream nothing is added (the legacy default stream orders itself);
    with a side stream, numba's default stream waits for an event recorded on it before the launches, and it for
    one recorded on the default stream after them; scores on another device than numba's current one are a
    one-line ValueError.  A stand-in numba.cuda records the calls."""
    calls = []

    class Event:
        def record(self, stream):
            calls.append(("record", stream))

        def wait(self, stream):
            calls.append(("wait", stream))

    cuda = types.SimpleNamespace(external_stream=lambda handle: f"stream {handle}", default_stream=lambda: "default",
                                 event=Event, get_current_device=lambda: types.SimpleNamespace(id=0))
    monkeypatch.setattr(runtime, "cuda", lambda: cuda)
    monkeypatch.setattr(runtime, "simulated", lambda: False)
    for stream, expected in ((0, []), (7, [("record", "stream 7"), ("wait", "default"), ("launch", None),
                                           ("record", "default"), ("wait", "stream 7")])):
        torch = stand_in_torch(monkeypatch, stream)
        calls.clear()
        with runtime.ordered(StandInTensor((1, 3, 3), torch.float64, types.SimpleNamespace(index=0))):
            calls.append(("launch", None))
        assert calls == (expected or [("launch", None)])
    calls.clear()  # a launch that fails: what was queued before it still orders the caller's stream
    with pytest.raises(RuntimeError, match="a launch failed"):
        with runtime.ordered(StandInTensor((1, 3, 3), torch.float64, types.SimpleNamespace(index=0))):
            raise RuntimeError("a launch failed")
    assert calls == [("record", "stream 7"), ("wait", "default"), ("record", "default"), ("wait", "stream 7")]
    with pytest.raises(ValueError, match="on GPU 1, numba's current device is 0") as error:
        with runtime.ordered(StandInTensor((1, 3, 3), torch.float64, types.SimpleNamespace(index=1))):
            pass
    assert "\n" not in str(error.value)
    with runtime.ordered(np.zeros((1, 3, 3))):  # numpy input: numba's default stream is its own
        pass


def test_torch_tensors_in_torch_tensors_out() -> None:
    """On a GPU with torch: scores as torch tensors give torch tensors on their device (runtime.result: torch's
    allocator), with the answers numpy input gets, for plain parsing and for cuda-dp's decode and sums, also from a
    side stream (runtime.ordered)."""
    torch = pytest.importorskip("torch", reason="needs torch (the GPU benchmarks' machine has it)")
    if REASON is not None or runtime.simulated() or not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU that torch sees (the simulator has no torch tensors)")
    from compbench_solvers.cuda import eisner, hook

    arc = np.random.default_rng(9).standard_normal((5, 7, 7))
    tensor = torch.as_tensor(arc, device="cuda")
    for function in (eisner.tree_map, eisner.tree_log_partition, eisner.tree_marginals):
        expected, got = function(arc), function(tensor)
        for want, have in zip(expected if isinstance(expected, tuple) else (expected,),
                              got if isinstance(got, tuple) else (got,)):
            assert isinstance(have, torch.Tensor) and have.device == tensor.device
            np.testing.assert_allclose(have.cpu().numpy(), want, rtol=1e-12, atol=1e-15)
    side = torch.cuda.Stream()  # a side stream (non-blocking): the scores made there, the result read there
    with torch.cuda.stream(side):
        log_z = eisner.tree_log_partition(tensor * 1.0) + 0.0
    side.synchronize()
    np.testing.assert_allclose(log_z.cpu().numpy(), eisner.tree_log_partition(arc), rtol=1e-12)
    batch = compbench.ProblemBatch.from_problems([compbench.generate("gaussian", n, seed=n) for n in (6, 3, 5)])
    scores = (batch.arc_scores, batch.token_scores, batch.bigram_scores)
    on_gpu = [torch.as_tensor(a, device="cuda") for a in scores]
    for function in (hook.decode, hook.log_partition, hook.marginals):
        expected, got = function(*scores, batch.sizes), function(*on_gpu, batch.sizes)
        for want, have in zip(expected if isinstance(expected, tuple) else (expected,),
                              got if isinstance(got, tuple) else (got,)):
            assert isinstance(have, torch.Tensor) and have.device == on_gpu[0].device
            np.testing.assert_allclose(have.cpu().numpy(), want, rtol=1e-12, atol=1e-15)
