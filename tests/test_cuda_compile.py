"""Every GPU kernel compiled for a real GPU without one: PTX for an H100 (compute capability 9.0) through numba's
CUDA typing and lowering and NVIDIA's NVVM, which numba's simulator (Python threads) never runs.  A kernel that
only the simulator has run can still fail there (a shared array whose size is not a constant, a type numba's CUDA
target lacks): this is where it shows without a GPU.

It needs NVVM and NVRTC (the ``nvidia-nvvm`` and ``nvidia-cuda-nvrtc`` wheels: .ci/run installs them) and the real
CUDA target, so it skips with the reason without them and under the simulator.  numba compiles a device function
for the current device's compute capability; with no device, the test hands it 9.0
(``benchmarks/kernel_resources.ptx_compiler``).  NVIDIA's assembler (ptxas, the ``nvidia-cuda-nvcc`` wheel) then
assembles the kernels of the benchmarks' rows for sm_90, as ``benchmarks/kernel_resources.py`` reports them: none may
spill registers to memory at its settings, except a kernel launched capped (the plain sums'), and that never in its
loops over candidates.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import kernel_resources  # noqa: E402  (benchmarks/: the one home of compiling a kernel without a GPU)

CC = kernel_resources.CC  # an H100's compute capability


@pytest.fixture(scope="module")
def compile_ptx():
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        pytest.skip("numba's CUDA simulator is on: it compiles nothing")
    pytest.importorskip("numba_cuda", reason="needs numba-cuda (pip install 'compbench[gpu]')")
    from compbench_solvers.cuda import runtime

    cuda = runtime.import_numba_cuda()
    try:
        cuda.compile_ptx(lambda x: None, "(float64[:],)", cc=CC)
    except Exception as exc:  # NVVM or NVRTC missing: a DynamicLibNotFoundError, or numba's own
        pytest.skip(f"NVVM/NVRTC not found ({type(exc).__name__}); pip install nvidia-nvvm nvidia-cuda-nvrtc")
    with kernel_resources.ptx_compiler(CC) as ptx_of:
        yield ptx_of


def test_the_compressive_kernels_compile(compile_ptx) -> None:
    from compbench_solvers.cuda import hook

    arguments, n = kernel_resources.compressive_arguments, 9
    for (counted, grouped), kernels in hook.DECODERS.items():  # every copy (tests/test_cuda_dp.py runs them)
        compile_ptx(kernels[True], *arguments("decode_shared", n))
        compile_ptx(kernels[False], *arguments("decode_global", n))
    for kernels in hook.INFERRERS.values():
        compile_ptx(kernels[True], *arguments("infer_shared", n))
        compile_ptx(kernels[False], *arguments("infer_global", n))
    team_args = arguments("decode_team", n)
    ptx = compile_ptx(hook._decode_team, *team_args)
    assert "cudaCGSynchronize" in ptx  # the grid's barrier: launched cooperatively
    import numba.cuda.dispatcher as dispatcher  # the types team_blocks() compiles for are the launches' own

    assert tuple(dispatcher.typeof(a, dispatcher.Purpose.argument) for a in team_args) == hook.team_signature()


@pytest.mark.parametrize("task", ["map", "log_z", "marginals"])
def test_the_plain_parsing_kernels_compile(compile_ptx, task) -> None:
    from compbench_solvers.cuda import eisner

    N = 10
    inside, outside = eisner.placement(N, 4 if task == "marginals" else 2)
    for shared in (True, False):  # the charts in shared memory, and in global memory
        kernel = eisner._kernel(task, shared and bool(inside), shared and bool(outside), eisner.threads_for(N))
        compile_ptx(kernel, *kernel_resources.plain_arguments(task, N))


def test_the_benchmark_rows_kernels_assemble_for_an_h100_without_spills(compile_ptx) -> None:
    try:
        ptxas = kernel_resources.find_ptxas(None)
    except SystemExit as exc:
        pytest.skip(str(exc))
    rows = kernel_resources.rows(ptxas)
    assert len(rows) == 19 and all(row["registers"] > 0 for row in rows)
    spilling = [(row["row"], row["spills"]) for row in rows if row["spills"] != (0, 0) and "uncapped" not in row]
    assert not spilling, f"registers spilled to memory (bytes stored, loaded): {spilling}"
    assert any("uncapped" in row for row in rows), "the plain sums' kernels are launched capped (eisner.CAPPED_SUMS)"
    if rows[0]["divisions"] is None:
        pytest.skip("no nvdisasm (pip install nvidia-cuda-nvdisasm): the machine code's divisions are not counted")
    # a kernel launched capped may spill a few registers, never inside the loops over candidates
    in_loops = [(row["row"], row["loop_spills"]) for row in rows if row["loop_spills"]]
    assert not in_loops, f"spill instructions in the candidate loops: {in_loops}"
    # a loop whose step is not a constant (numba's range) or an index by division brings back the 64-bit division
    # subroutine, whose registers the whole kernel then holds: the plain kernels and cuda-dp's free-length copies
    # have none (counted charts divide a unit into its span and count)
    dividing = [(row["row"], row["divisions"]) for row in rows if row["divisions"]
                and (row["kernel"].startswith("eisner") or "_free" in row["kernel"])]
    assert not dividing, f"64-bit integer divisions in the machine code: {dividing}"
    assert any(row["divisions"] for row in rows), "the count finds the counted decoders' divisions"


def test_resident_blocks_and_the_register_cap_of_an_h100() -> None:
    """The occupancy arithmetic kernel_resources.py and runtime.capped share (CUDA's occupancy calculator's rules),
    on two rows its H100 table had before their kernels shed registers: the plain MAP at n = 10 (32 threads, 78
    registers, 2,560 bytes of shared memory) and cuda-dp's free-length MAP at n = 25 (64 threads, 160 registers,
    27,000 bytes)."""
    pytest.importorskip("numba_cuda", reason="needs numba-cuda (pip install 'compbench[gpu]')")
    from compbench_solvers.cuda import runtime

    assert runtime.resident_blocks(78, 32, 2560) == (24, "registers")  # 6 warps on each of 4 schedulers
    assert runtime.register_cap(32, 2560) == 64
    assert runtime.resident_blocks(64, 32, 2560) == (32, "registers and blocks")
    assert runtime.resident_blocks(160, 64, 27000) == (6, "registers")
    assert runtime.resident_blocks(160, 64, 37152) == (6, "registers and shared memory")
    assert runtime.register_cap(64, 27000) == 128
    assert runtime.resident_blocks(128, 64, 27000) == (8, "registers and shared memory")
    assert runtime.register_cap(256, 0) == 64  # never below 64, where kernels spill
    assert runtime.resident_blocks(64, 256, 48 * 1024) == (4, "registers and shared memory")


def test_register_cap_launches_a_copy_compiled_with_max_registers(monkeypatch) -> None:
    pytest.importorskip("numba_cuda", reason="needs numba-cuda (pip install 'compbench[gpu]')")
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        pytest.skip("numba's CUDA simulator is on: it has no registers to cap")
    from compbench_solvers.cuda import eisner, hook, runtime

    kernel = eisner._kernel("map", True, False, 32)
    assert runtime.capped(kernel, 32, 2560) is kernel  # the switch is off by default
    assert not eisner.capped_by_default("map") and eisner.capped_by_default("marginals")
    monkeypatch.setattr(runtime, "REGISTER_CAP", True)
    monkeypatch.setattr(runtime, "cuda", runtime.import_numba_cuda)  # no GPU needed to define a kernel
    monkeypatch.setattr(runtime, "multiprocessor", lambda: runtime.H100)
    capped = runtime.capped(kernel, 32, 2560)
    assert capped is not kernel and capped.py_func is kernel.py_func
    assert capped.targetoptions["max_registers"] == 64
    assert runtime.capped(hook.DECODERS[False, False][True], 64, 27000).targetoptions["max_registers"] == 128
    monkeypatch.setattr(runtime, "REGISTER_CAP", False)
    sums = eisner._kernel("marginals", True, True, 32)
    assert runtime.capped(sums, 32, 2560, always=True).targetoptions["max_registers"] == 64
    assert hook.team_kernel() is hook._decode_team  # the teams' copy: one block a multiprocessor by default
    monkeypatch.setattr(hook, "TEAM_BLOCKS_A_MULTIPROCESSOR", 2)
    assert hook.team_kernel().targetoptions["max_registers"] == 128
