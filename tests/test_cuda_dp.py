"""cuda-dp and device="cuda" inference (solvers/cuda/hook.py) in numba's CUDA simulator, against brute force and
the CPU kernels.  The simulator is chosen when numba.cuda is first imported, so these tests run in a pytest of their
own with it on (.ci/run does):

    NUMBA_ENABLE_CUDASIM=1 python -m pytest -q tests/test_cuda_dp.py

In the main run (no simulator) without a GPU only the last test runs: cuda-dp answers ``unsupported`` with a one-line
reason; on a machine with a GPU they all run on it (and a small batch's sentences get teams of several blocks, which
the simulator cannot run).  The simulator runs each thread in Python: the instances are tiny (n <= 6, then a few of
n = 9)."""

from __future__ import annotations

import doctest
import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compbench
from compbench import Length, ProblemBatch, Status
from compbench.testing import check_solver, problems
from compbench_solvers.cuda import runtime
from tests.test_marginals import brute_force_marginals

REASON = runtime.unavailable()
needs_kernels = pytest.mark.skipif(REASON is not None, reason=f"the GPU kernels cannot run here: {REASON}; run "
                                   "NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/test_cuda_dp.py")
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
batches = st.lists(problems(max_n=5), min_size=1, max_size=4)
small_batches = st.lists(problems(max_n=4), min_size=1, max_size=3)  # brute-force marginals try (n+2)^n head lists


def cpu_answer(problem):
    """resource-dp's answer (hook-dp's chart and tie rule; every length mode)."""
    return compbench.get_solver("resource-dp").solve(problem)


def assert_same_answers(got, problems_):
    for p, solution in zip(problems_, got, strict=True):
        expected = cpu_answer(p)
        assert solution.status == expected.status, (p.id, solution, expected)
        if expected.status == Status.OPTIMAL:
            assert solution.objective == expected.objective, p.id  # bit-identical: the same sums in the same order
            assert np.array_equal(solution.heads, expected.heads), (p.id, solution.heads, expected.heads)


@needs_kernels
@pytest.mark.parametrize("name", ["hook", "solver"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(f"compbench_solvers.cuda.{name}"), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@needs_kernels
def test_conformance_kit() -> None:
    check_solver("cuda-dp", max_n=5, max_examples=40, seed=0)


@needs_kernels
@SETTINGS
@given(batch=batches)
def test_a_batch_equals_the_cpu_kernels_exactly(batch) -> None:
    """One launch per root mode for a padded batch of mixed sizes, lengths and root modes: the trees and objectives
    of resource-dp (ties broken the same way: the same derivation)."""
    assert_same_answers(compbench.get_solver("cuda-dp").solve_many(batch), batch)


@needs_kernels
@SETTINGS
@given(batch=small_batches)
def test_log_partition_and_marginals_match_brute_force_and_the_cpu(batch) -> None:
    log_z = compbench.log_partition_many(batch, device="cuda")
    got = compbench.marginals_many(batch, device="cuda")
    cpu = compbench.marginals_many(batch)
    for p, value, m, c in zip(batch, log_z, got, cpu, strict=True):
        expected_z, token, arc, bigram, _ = brute_force_marginals(p)
        for answer in (value, m.log_partition, c.log_partition):
            assert answer == pytest.approx(expected_z, rel=1e-9, abs=1e-9)
        for name, expected in (("token", token), ("arc", arc), ("bigram", bigram)):
            np.testing.assert_allclose(getattr(m, name), expected, atol=1e-9, err_msg=name)
            np.testing.assert_allclose(getattr(m, name), getattr(c, name), rtol=1e-9, atol=1e-12, err_msg=name)
        assert m.sibling is None


@needs_kernels
def test_a_padded_batch_equals_its_sentences_one_at_a_time() -> None:
    from compbench_solvers.cuda import hook

    ps = [compbench.generate("gaussian", n, seed=n, length=length) for n, length in
          ((6, None), (2, 1), (0, None), (5, Length(2, 4)), (4, 3))]
    batch = ProblemBatch.from_problems(ps)
    heads, value = hook.decode(batch.arc_scores, batch.token_scores, batch.bigram_scores, batch.sizes,
                               batch.min_length, batch.max_length)
    log_z, token, arc, bigram = hook.marginals(batch.arc_scores, batch.token_scores, batch.bigram_scores,
                                               batch.sizes, batch.min_length, batch.max_length)
    for b, p in enumerate(ps):
        one = ProblemBatch.from_problems([p])
        alone = hook.decode(one.arc_scores, one.token_scores, one.bigram_scores, one.sizes, one.min_length,
                            one.max_length)
        assert np.array_equal(heads[b, :p.n + 1], alone[0][0]) and value[b] == alone[1][0]
        assert (heads[b, p.n + 1:] == -1).all() and heads[b, 0] == -1
        m = hook.marginals(one.arc_scores, one.token_scores, one.bigram_scores, one.sizes, one.min_length,
                           one.max_length)
        n = p.n
        assert log_z[b] == pytest.approx(m[0][0], rel=1e-12)
        np.testing.assert_allclose(token[b, :n], m[1][0], atol=1e-12)
        np.testing.assert_allclose(arc[b, :n + 1, :n + 1], m[2][0], atol=1e-12)
        np.testing.assert_allclose(bigram[b, :n + 2, :n + 2], m[3][0], atol=1e-12)
        # the padding holds zeros
        assert not token[b, n:].any() and not arc[b, n + 1:].any() and not arc[b, :, n + 1:].any()
        assert not bigram[b, n + 2:].any() and not bigram[b, :, n + 2:].any()


@needs_kernels
def test_numpy_scores_in_chunks_on_streams_give_the_answers_of_one_launch(monkeypatch) -> None:
    """Scores from numpy are copied and launched in chunks (the costliest first, each at its own width, each on a
    stream of its own): the same heads and objectives as one launch over the batch already on the GPU."""
    from numba import cuda

    from compbench_solvers.cuda import hook

    ps = [compbench.generate("gaussian", n, seed=n, length=length) for n, length in
          ((6, None), (2, 1), (0, None), (5, Length(2, 4)), (4, 3), (6, 2), (3, None))]
    batch = ProblemBatch.from_problems(ps)
    bounds = (batch.sizes, batch.min_length, batch.max_length)
    scores = (batch.arc_scores, batch.token_scores, batch.bigram_scores)
    heads, value = (a.copy_to_host() for a in hook.decode(*(cuda.to_device(a) for a in scores), *bounds))
    fours, none = np.array([4, 4, 4, 4, 4]), np.zeros(5, np.int64)
    assert [c.tolist() for c in hook.host_chunks(fours, none, none)] == [[0, 1, 2, 3, 4]]
    monkeypatch.setattr(hook, "CHUNK", 2)
    assert [c.tolist() for c in hook.host_chunks(fours, none, none)] == [[0, 1], [2, 3], [4]]
    assert [c.tolist() for c in hook.host_chunks(fours, none, np.array([0, 0, 3, 0, 2]))] == [[2, 4], [0, 1], [3]]
    counting, cap = hook.count_plans(*bounds)
    chunks = hook.host_chunks(batch.sizes, cap, np.zeros(len(ps), np.int64))
    assert len(chunks) >= 3 and sorted(np.concatenate(chunks).tolist()) == list(range(len(ps)))
    for shared_bytes, pinned in ((hook.SHARED_BYTES, True), (0, True), (hook.SHARED_BYTES, False)):
        monkeypatch.setattr(hook, "SHARED_BYTES", shared_bytes)  # the shared and the global kernels
        monkeypatch.setattr(hook, "PINNED_STAGING", pinned)  # through our pinned buffers, or straight from numpy
        got_heads, got_value = hook.decode(*scores, *bounds)
        assert np.array_equal(got_heads, heads) and np.array_equal(got_value, value)
    pinned = runtime.pinned

    def poisoned(shape: tuple, dtype, slot: int, use: str) -> np.ndarray:
        """A staging buffer full of +inf, which any max it reached would keep (NaN and -inf would be dropped like
        the -inf padding of the batch the answers above came from): what the staging leaves of it (the padding) is
        never read."""
        buffer = pinned(shape, dtype, slot, use)
        buffer.fill(np.inf)
        return buffer

    monkeypatch.setattr(hook, "PINNED_STAGING", True)
    monkeypatch.setattr(runtime, "pinned", poisoned)
    monkeypatch.setattr(runtime, "STAGE_BYTES", 1)  # each chunk staged in parts on every core
    for shared_bytes in (hook.SHARED_BYTES, 0):  # the shared and the global kernels
        monkeypatch.setattr(hook, "SHARED_BYTES", shared_bytes)
        got_heads, got_value = hook.decode(*scores, *bounds)
        assert np.array_equal(got_heads, heads) and np.array_equal(got_value, value)
    assert_same_answers(compbench.get_solver("cuda-dp").solve_many(ps), ps)


@needs_kernels
@pytest.mark.parametrize("single_root", [False, True])
def test_the_chart_in_global_memory_gives_the_same_answers(monkeypatch, single_root) -> None:
    """Shared memory too small for any chart: every launch takes the global work areas, a few blocks looping over
    the sentences."""
    from compbench_solvers.cuda import hook

    ps = [compbench.generate("gaussian", n, seed=n, length=length, single_root=single_root)
          for n, length in ((5, None), (3, 2), (6, Length(1, 4)), (4, None), (2, 0))]
    shared = compbench.get_solver("cuda-dp").solve_many(ps)
    z_shared = compbench.log_partition_many(ps, device="cuda")
    monkeypatch.setattr(hook, "SHARED_BYTES", 0)
    # room for three work areas of the largest sentence's inside and outside charts (n = 6, kept words up to 4)
    monkeypatch.setattr(hook, "WORK_BYTES", 3 * 8 * 2 * hook.ITEMS * 28 * 5)
    plan = hook._plan(np.array([5, 3, 6, 4, 2]), np.array([0, 2, 1, 0, 0]), np.array([5, 2, 4, 4, 0]), hook.SUM)
    assert not plan.shared and plan.blocks == 3
    assert_same_answers(compbench.get_solver("cuda-dp").solve_many(ps), ps)
    for a, b in zip(shared, ps):
        assert a.objective == cpu_answer(b).objective
    got = compbench.marginals_many(ps, device="cuda")
    for p, m, z in zip(ps, got, z_shared):
        assert m.log_partition == pytest.approx(z, rel=1e-12)
        c = compbench.marginals(p)
        np.testing.assert_allclose(m.arc, c.arc, atol=1e-12)
        np.testing.assert_allclose(m.bigram, c.bigram, atol=1e-12)


@needs_kernels
def test_team_sizes_give_a_sentence_its_share_of_the_gpu() -> None:
    from compbench_solvers.cuda import hook

    sizes, cap = np.array([168, 96, 25, 25, 25]), np.array([10, 13, 0, 11, 3])
    team = hook.team_sizes(sizes, cap, 132)
    share = hook.chart_cost(sizes, cap).sum() / 132
    assert team.tolist()[2:] == [0, 0, 0] and team[0] > team[1] >= 2 and team.sum() <= 132
    assert np.all(team[:2] <= hook.chart_cost(sizes, cap)[:2] / share)
    assert not hook.team_sizes(np.full(4096, 25), np.full(4096, 11), 132).any()  # a uniform batch: one block each
    assert not hook.team_sizes(sizes, cap, 1).any()  # one multiprocessor: no teams
    assert hook.team_sizes(np.array([20]), np.array([0]), 132).tolist() == [6]  # no more blocks than its work needs


def tied_problems(single_root: bool) -> list:
    """Random problems of every length mode, and two whose scores are all 0 (or -inf): there each item's value is
    reached by many offers, so a wrong merge of threads' partial results picks another tree."""
    ps = [compbench.generate("gaussian", n, seed=n + 7, length=length, single_root=single_root)
          for n, length in ((6, None), (3, 2), (5, Length(1, 4)), (4, None), (2, 0), (6, 3))]
    for n, length in ((5, 3), (6, Length(2, 4))):
        zero = compbench.generate("gaussian", n, seed=n, length=length, single_root=single_root)
        arcs = np.where(np.isfinite(zero.arc_scores), 0.0, -np.inf)
        ps.append(zero.replace(token_scores=np.zeros(n), arc_scores=arcs,
                               bigram_scores=np.where(zero.bigram_scores > 1.5, -np.inf, 0.0)))
    return ps


@needs_kernels
@pytest.mark.parametrize("shared_bytes", [None, 0])
def test_threads_sharing_a_units_offers_in_one_block_give_the_same_answers(monkeypatch, shared_bytes) -> None:
    """BLOCK_GROUP > 1: the one-block kernels (the chart in shared memory, then in global memory) share a unit's
    offers among idle threads as teams do."""
    from compbench_solvers.cuda import hook

    monkeypatch.setattr(hook, "BLOCK_GROUP", 32)
    if shared_bytes is not None:
        monkeypatch.setattr(hook, "SHARED_BYTES", shared_bytes)
    for single_root in (False, True):
        ps = tied_problems(single_root)
        assert_same_answers(compbench.get_solver("cuda-dp").solve_many(ps), ps)


@needs_kernels
@pytest.mark.parametrize("single_root", [False, True])
def test_teams_of_blocks_give_the_same_answers(monkeypatch, single_root) -> None:
    """Sentences parsed by a team (the cooperative kernel: the grid's barrier between phases, a unit's offers spread
    over up to 32 threads and merged).  The simulator runs one block at a time, so its teams have one block each:
    the merge, the rounds and the barrier steps are what it checks; teams of several blocks are checked on a GPU
    (bench_gpu_compressive.py checks every answer against the CPU's first)."""
    from compbench_solvers.cuda import hook

    ps = tied_problems(single_root)
    picked = np.array([1, 0, 1, 1, 0, 1, 1, 1])
    monkeypatch.setattr(hook, "team_sizes", lambda sizes, cap, blocks: picked[:len(sizes)].copy())
    assert_same_answers(compbench.get_solver("cuda-dp").solve_many(ps), ps)
    batch = ProblemBatch.from_problems(ps)
    heads, value = hook.decode(*hook.batch_arguments(batch)[:6], single_root=single_root)
    from numba import cuda  # the scores already on the GPU: the teams and the others on two streams

    on_gpu = [cuda.to_device(a) for a in hook.batch_arguments(batch)[:3]]
    got = hook.decode(*on_gpu, *hook.batch_arguments(batch)[3:6], single_root=single_root)
    assert np.array_equal(got[0].copy_to_host(), heads) and np.array_equal(got[1].copy_to_host(), value)
    monkeypatch.setattr(hook, "team_sizes", lambda sizes, cap, blocks: np.zeros(len(sizes), np.int64))
    heads_blocks, value_blocks = hook.decode(*hook.batch_arguments(batch)[:6], single_root=single_root)
    assert np.array_equal(heads, heads_blocks) and np.array_equal(value, value_blocks)


@needs_kernels
def test_larger_sentences_against_the_cpu_kernels() -> None:
    ps = [compbench.generate("gaussian", 9, seed=s, length=length, single_root=s % 2 == 1)
          for s, length in enumerate((None, 4, Length(3, 6), 7))]
    assert_same_answers(compbench.get_solver("cuda-dp").solve_many(ps), ps)
    np.testing.assert_allclose(compbench.log_partition_many(ps, device="cuda"), compbench.log_partition_many(ps),
                               rtol=1e-12)


@needs_kernels
def test_log_space_holds_at_a_low_temperature() -> None:
    """Scores 300 times larger (the CPU's scaled chart leaves its range and falls back to log space): the same log Z
    and marginals."""
    p = compbench.generate("gaussian", 5, seed=3, length=2)
    cold = p.replace(token_scores=300 * p.token_scores, arc_scores=300 * p.arc_scores,
                     bigram_scores=300 * p.bigram_scores)
    got, expected = compbench.marginals_many([cold], device="cuda")[0], compbench.marginals(cold)
    assert got.log_partition == pytest.approx(expected.log_partition, rel=1e-12)
    np.testing.assert_allclose(got.arc, expected.arc, atol=1e-9)


@needs_kernels
def test_what_the_gpu_path_refuses() -> None:
    second = compbench.generate("gaussian", 3, seed=0, second_order=True)
    assert compbench.get_solver("cuda-dp").solve(second).status == Status.UNSUPPORTED
    with pytest.raises(ValueError, match="second-order"):
        compbench.marginals_many([second], device="cuda")
    with pytest.raises(ValueError, match="device='tpu'"):
        compbench.log_partition_many([second], device="tpu")
    batch = ProblemBatch.from_problems([second])
    assert [s.status for s in compbench.get_solver("cuda-dp").solve_many(batch)] == [Status.UNSUPPORTED]


@needs_kernels
def test_a_chart_too_big_for_the_work_areas_is_refused_in_one_line(monkeypatch) -> None:
    """Any chart got a work area of its own size, so one of n = 3000 went to the allocator (a raw 'Unable to
    allocate 252 GiB' error); it is unsupported by cuda-dp (its batch-mates solved) and a MemoryError in one line
    from the device="cuda" functions, as on the CPU."""
    from compbench_solvers.cuda import hook

    small, large = compbench.generate("gaussian", 4, seed=0, length=2), compbench.generate("gaussian", 9, seed=0,
                                                                                           length=4)
    sizes, lo, hi = (np.array([p.n for p in (small, large)]), np.array([2, 4]), np.array([2, 4]))
    _, cap = hook.count_plans(sizes, lo, hi)
    floats, ints = hook._chart_values(sizes, cap, hook.MAX)
    monkeypatch.setattr(hook, "WORK_BYTES", int(8 * floats[0] + 4 * ints[0]))  # the small chart fits, not the large
    first, second = compbench.get_solver("cuda-dp").solve_many([small, large])
    assert first.status == Status.OPTIMAL and second.status == Status.UNSUPPORTED
    assert "the GPU chart for n = 9 needs" in second.message and "\n" not in second.message
    with pytest.raises(MemoryError, match="the GPU chart for n = 9 needs"):
        compbench.log_partition_many([large], device="cuda")


def test_without_a_gpu_cuda_dp_is_unsupported_with_a_one_line_reason() -> None:
    """In a process without the simulator: the reason, and every answer unsupported with it (how the harness and
    ``compbench solvers`` show it)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    code = ("import json, compbench\n"
            "s = compbench.get_solver('cuda-dp')\n"
            "p = compbench.generate('gaussian', 3, seed=0)\n"
            "a = s.solve(p); b = s.solve_many(compbench.ProblemBatch.from_problems([p, p]))\n"
            "print(json.dumps([s.unavailable(), a.status.value, a.message, [x.status.value for x in b]]))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    reason, status, message, batch = json.loads(out.stdout.strip().splitlines()[-1])
    if reason is None:
        pytest.skip("a CUDA GPU is visible here")
    assert "\n" not in reason and reason.startswith(("numba-cuda is not installed", "no CUDA GPU", "the CUDA driver"))
    assert status == "unsupported" and message == f"cuda-dp: {reason}"
    assert batch == ["unsupported", "unsupported"]


@needs_kernels
def test_capped_registers_give_the_same_answers(monkeypatch) -> None:
    """runtime.REGISTER_CAP (numba's max_registers) changes how many blocks a multiprocessor holds, never an answer:
    cuda-dp's and the plain parser's with it equal the defaults' (on a GPU: the simulator has no registers)."""
    if runtime.simulated():
        pytest.skip("numba's CUDA simulator has no registers to cap (the GPU tests run this on a GPU)")
    from compbench_solvers.cuda import eisner

    ps = [compbench.generate("gaussian", n, seed=n, length=length) for n, length in
          ((9, None), (7, 3), (5, Length(1, 4)), (8, None))]
    arcs = np.random.default_rng(3).standard_normal((3, 11, 11))
    expected = compbench.get_solver("cuda-dp").solve_many(ps)
    plain = [runtime.to_host(a) for a in (*eisner.tree_map(arcs), eisner.tree_log_partition(arcs))]
    monkeypatch.setattr(runtime, "REGISTER_CAP", True)
    got = compbench.get_solver("cuda-dp").solve_many(ps)
    assert [(s.status, s.objective, s.heads.tolist()) for s in got] == [
        (s.status, s.objective, s.heads.tolist()) for s in expected]
    assert_same_answers(got, ps)
    for a, b in zip(plain, (*eisner.tree_map(arcs), eisner.tree_log_partition(arcs))):
        np.testing.assert_array_equal(a, runtime.to_host(b))


@needs_kernels
def test_marginals_of_scores_near_the_limit_are_probabilities_on_the_gpu() -> None:
    from tests.test_marginals import sure_problem

    got = compbench.marginals_many([sure_problem()], device="cuda")[0]
    for part in (got.token, got.arc, got.bigram):
        assert np.all((0.0 <= part) & (part <= 1.0))
