"""The CUDA side of compbench: numba's CUDA target (the ``numba-cuda`` package, ``pip install compbench[gpu]``),
found once, and arrays moved to and from the GPU.

Every GPU entry point asks :func:`unavailable` first (a one-line reason, or None) and takes its arrays through
:func:`on_device`: a numpy array is copied to the GPU (the copy is part of the measured time), an array that
already lives there (anything with ``__cuda_array_interface__``: a torch tensor, a CuPy array, a numba device
array) is used in place, without a copy.  :func:`result` makes a result where the caller wants it (a kept work area
for numpy input, a new array of the input's library for GPU input) and :func:`returned_like` gives it back as the
kind of array the caller passed.  With ``NUMBA_ENABLE_CUDASIM=1`` numba runs the same kernels on the CPU in its
simulator: how the tests and CI check them without a GPU (slowly: keep those instances tiny).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

INSTALL = "pip install 'compbench[gpu]'"


def simulated() -> bool:
    """Whether numba's CUDA simulator stands in for a GPU (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def import_numba_cuda() -> ModuleType:
    """``numba.cuda`` itself, GPU or not (kernels can be defined without one, not launched); an ImportError when
    numba-cuda is missing (numba < 0.61 has a CUDA target of its own under that name, which the kernels are not
    written for).  Modules that define kernels import it through here, entry points ask :func:`cuda`."""
    if importlib.util.find_spec("numba_cuda") is None:
        raise ImportError("no module named 'numba_cuda'")
    if not hasattr(np, "row_stack"):
        # numba-cuda 0.30.4 calls np.row_stack, which numpy 2.5 removed; np.vstack is the same function.
        np.row_stack = np.vstack  # type: ignore[attr-defined]
    from numba import cuda

    return cuda


@functools.cache
def _load() -> tuple[ModuleType | None, str | None]:
    try:
        cuda = import_numba_cuda()
    except ImportError as exc:
        return None, f"numba-cuda is not installed ({exc}; install it with: {INSTALL})"
    if not simulated():
        try:
            available = cuda.is_available()
        except Exception as exc:  # a broken driver is a reason, not a crash
            return None, f"the CUDA driver cannot be used ({type(exc).__name__}: {exc})"
        if not available:
            return None, "no CUDA GPU is visible (set NUMBA_ENABLE_CUDASIM=1 to run the kernels in numba's simulator)"
    return cuda, None


def unavailable() -> str | None:
    """Why the GPU path cannot run here (one line), or None when it can (a GPU, or the simulator)."""
    return _load()[1]


def cuda() -> ModuleType:
    """``numba.cuda``, or a RuntimeError with :func:`unavailable`'s reason."""
    module, reason = _load()
    if module is None:
        raise RuntimeError(reason)
    return module


def on_gpu(array: Any) -> bool:
    """Whether ``array`` already lives on the GPU (it has ``__cuda_array_interface__``; under the simulator, a
    device array of the simulator's own)."""
    return hasattr(array, "__cuda_array_interface__") or (simulated() and type(array).__name__ == "FakeCUDAArray")


def on_device(array: Any, use: str, dtype: Any = np.float64) -> Any:
    """``array`` as a numba device array of ``dtype``: a GPU array of that dtype in place (no copy), a numpy array
    (or anything numpy takes) copied into the kept device array of ``use`` (:func:`staged_to_device`; no allocation,
    nor a free that waits for the GPU, per call; a launch's inputs need a use each). A GPU array of another dtype is
    a TypeError (converting it on the GPU is the caller's choice, not a silent copy)."""
    cu = cuda()
    if on_gpu(array):
        device = array if simulated() else cu.as_cuda_array(array)
        if device.dtype != np.dtype(dtype):
            raise TypeError(f"expected a GPU array of {np.dtype(dtype)}, got {device.dtype}")
        return device
    return staged_to_device(np.ascontiguousarray(array, dtype=dtype), use)


def library(array: Any) -> str:
    """The library an array comes from: "torch", "cupy", "numba", "numpy", ... (its type's top-level module)."""
    return type(array).__module__.split(".")[0]


def returned_like(reference: Any, array: Any) -> Any:
    """A result as the kind of array ``reference`` is: numpy for numpy input (:func:`staged_to_host`),
    otherwise ``array`` itself when :func:`result` made it in ``reference``'s library, else that library's view of
    the same memory (torch, CuPy), or the numba device array itself."""
    if not on_gpu(reference):
        return staged_to_host(array)
    module = library(reference)
    if library(array) == module:
        return array
    if module == "torch":
        import torch

        return torch.as_tensor(array, device=reference.device)
    if module == "cupy":
        import cupy

        return cupy.asarray(array)
    return array


def _caller_stream(reference: Any) -> tuple[int, int] | None:
    """(device, stream handle) of the caller's current stream in ``reference``'s library (torch, CuPy), or None for
    another input (numpy, numba's device arrays: numba's default stream is theirs)."""
    module = library(reference)
    if module == "torch":
        import torch

        return reference.device.index, torch.cuda.current_stream(reference.device).cuda_stream
    if module == "cupy":
        import cupy

        return reference.device.id, cupy.cuda.get_current_stream(reference.device.id).ptr
    return None


@contextlib.contextmanager
def ordered(reference: Any) -> Iterator[None]:
    """Launches on numba's default stream (the kept work areas are never used by two launches at once) ordered
    after the work the caller queued on its current stream and before what it queues next, as its library's own
    operations are: with a torch or CuPy stream other than the default one, numba's default stream waits for an
    event recorded on it, and it for one recorded after the launches (the default stream needs none: the legacy
    default stream and every blocking stream wait for each other, which torch's side streams, non-blocking, do not).
    A GPU array on another device than numba's current one is a ValueError (the work areas live on one)."""
    caller = _caller_stream(reference) if on_gpu(reference) and not simulated() else None
    if caller is None:
        yield
        return
    cu = cuda()
    device, handle = caller
    if device is not None and device != cu.get_current_device().id:
        raise ValueError(f"the scores are on GPU {device}, numba's current device is "
                         f"{cu.get_current_device().id}: select it with numba.cuda.select_device({device})")
    if not handle:
        yield
        return
    stream, default = cu.external_stream(handle), cu.default_stream()
    ready = cu.event()
    ready.record(stream)
    ready.wait(default)
    try:
        yield
    finally:  # also when a launch failed: what was queued writes the caller's arrays
        done = cu.event()
        done.record(default)
        done.wait(stream)


def result(reference: Any, shape: tuple[int, ...], dtype: Any, use: str) -> Any:
    """An array for a result of a launch whose input is ``reference`` (a kernel takes any GPU array as an argument):
    for numpy input the kept work area of ``use`` (:func:`returned_like` copies it back before the call returns: no
    allocation per call, nor a free that can wait for the GPU); for GPU input a new array of the input's library
    (torch, CuPy: from its caching allocator, which the caller's own arrays come from, on the input's device;
    anything else: a numba device array), which the caller keeps.  A numba device array for a torch caller costs a
    cudaMalloc, and later a cudaFree that waits for the whole GPU, every call: at n = 10 about 0.4-0.9 ms a result
    array by the last GPU run (reports/gpu/gpu_plain.txt: tree_map and tree_marginals, with two results each,
    against tree_log_partition, with one; not measured apart yet)."""
    if not on_gpu(reference):
        return work_area(shape, dtype, use=use)
    module = library(reference)
    if module == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=reference.device)
    if module == "cupy":
        import cupy

        with reference.device:
            return cupy.empty(shape, dtype)
    return cuda().device_array(shape, dtype)


def to_host(array: Any) -> np.ndarray:
    """A result as a numpy array, wherever it lives: a torch tensor, a numba device array or a CuPy array copied
    back (CuPy refuses ``np.asarray``), anything else through ``np.asarray``."""
    if hasattr(array, "detach"):
        return array.detach().cpu().numpy()
    if hasattr(array, "copy_to_host"):
        return array.copy_to_host()
    if library(array) == "cupy":
        return array.get()
    return np.asarray(array)


_WORK_AREAS: dict[tuple[str, str, int], Any] = {}  # the last device array of each use, dtype and slot, used again
# by a launch of the same shape


def work_area(shape: tuple[int, ...], dtype: Any, slot: int = 0, use: str = "work") -> Any:
    """A device array the launches keep (a chart or work area a kernel writes and nobody reads after it, a copy of
    numpy input (:func:`on_device`), or a staging buffer of ``hook._decode_from_host``): the previous launch's of
    this use and slot when its shape is the same (a batch launched again costs no allocation, nor the free that can
    wait for the GPU), else a new one that replaces it.  Launches on the default stream take slot 0 and run in
    order; the chunks of ``hook._decode_from_host``, on streams of their own at once, take one slot each and are
    waited for before it returns, so one array is never used by two launches at once."""
    key = (use, np.dtype(dtype).name, slot)
    area = _WORK_AREAS.get(key)
    if area is None or area.shape != shape:
        area = _WORK_AREAS[key] = cuda().device_array(shape, dtype)
    return area


STAGE_BYTES = 1 << 20  # the least a thread stages, and the least :func:`staged_to_device` stages at all
_PINNED: dict[tuple[str, int], np.ndarray] = {}  # the staging buffers (bytes), kept like the work areas


def pinned(shape: tuple[int, ...], dtype: Any, slot: int = 0, use: str = "staging") -> np.ndarray:
    """A page-locked host buffer of ``shape`` and ``dtype`` (a copy between it and the GPU is asynchronous and at the
    bus's full speed, unlike one from pageable memory, which the driver stages through a buffer of its own on one
    thread): a view of the kept buffer of this use and slot, made larger when it is too small.  Kept buffers hold
    page-locked memory until the process ends, each as much as the most one call asked of it."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if not nbytes:  # nothing to page-lock (and a view of nothing has strides a copy to the GPU refuses)
        return np.empty(shape, dtype)
    buffer = _PINNED.get((use, slot))
    if buffer is None or buffer.nbytes < nbytes:
        buffer = _PINNED[(use, slot)] = cuda().pinned_array(nbytes, np.uint8)
    return buffer[:nbytes].view(dtype).reshape(shape)


def copy_in_parts(destination: np.ndarray, source: np.ndarray) -> None:
    """``destination[...] = source`` (one shape) on every core, in parts of the first axis of at least
    :data:`STAGE_BYTES` (numpy's copies let go of the GIL): memory, not one thread, sets the pace."""
    from compbench.solver import cores

    from ..compressive.batch import run_in_parts

    jobs = cores(None)
    parts = max(1, min(jobs, len(source), source.nbytes // STAGE_BYTES))
    bounds = np.linspace(0, len(source), parts + 1).astype(np.int64)

    def run(pieces: np.ndarray) -> None:
        for k in pieces:
            np.copyto(destination[bounds[k]:bounds[k + 1]], source[bounds[k]:bounds[k + 1]])

    run_in_parts(run, np.arange(parts), np.ones(parts), jobs, parts=parts)


def staged_to_device(values: np.ndarray, use: str, slot: int = 0) -> Any:
    """A C-contiguous numpy array in the kept device array of ``use`` (:func:`work_area`), copied before this
    returns (so the kept buffer is free again): from :data:`STAGE_BYTES` on through the kept page-locked buffer of
    ``use`` (:func:`pinned`, filled on every core), else straight from numpy's memory."""
    area = work_area(values.shape, values.dtype, slot, use)
    if not values.size:  # (an empty array's strides may differ from the area's, which the copy refuses)
        return area
    if values.nbytes < STAGE_BYTES:
        area.copy_to_device(values)
        return area
    buffer = pinned(values.shape, values.dtype, slot, use)
    copy_in_parts(buffer, values)
    area.copy_to_device(buffer)  # (on the default stream: synchronous)
    return area


def staged_to_host(array: Any) -> np.ndarray:
    """A device array as a new numpy array: from :data:`STAGE_BYTES` on through a kept page-locked buffer (the
    copy at the bus's full speed, then on every core into the new array), else straight."""
    if array.nbytes < STAGE_BYTES or not array.size:
        return array.copy_to_host()
    buffer = pinned(array.shape, array.dtype, use="results")
    array.copy_to_host(buffer)
    out = np.empty(array.shape, array.dtype)
    copy_in_parts(out, buffer)
    return out


_FILLED: dict[str, tuple[Any, Any]] = {}  # use -> (the work area, the value it holds everywhere)


def filled(shape: tuple[int, ...], value: Any, dtype: Any, use: str) -> Any:
    """A kept device array (:func:`work_area` of ``use``, which only this function writes) holding ``value``
    everywhere: copied to the GPU when its shape or value changes, not every call (a copy from host memory waits for
    the GPU)."""
    area = work_area(shape, dtype, use=use)
    held = _FILLED.get(use)
    if held is None or held[0] is not area or held[1] != value:
        if area.size:  # (an empty array's strides may differ from the area's, which the copy refuses)
            area.copy_to_device(np.full(shape, value, dtype))
        _FILLED[use] = (area, value)
    return area


def kept_copy(values: np.ndarray, use: str, slot: int = 0, stream: Any = 0) -> Any:
    """A launch's small host array (sentence sizes, parameters, an order) copied into a kept device array
    (:func:`work_area`: no allocation per launch), on ``stream``."""
    area = work_area(values.shape, values.dtype, slot, use)
    area.copy_to_device(np.ascontiguousarray(values), stream=stream)
    return area


class Multiprocessor(NamedTuple):
    """What one multiprocessor of a GPU holds at once (CUDA's device attributes of these names)."""

    registers: int  # MAX_REGISTERS_PER_MULTIPROCESSOR (32-bit), split evenly among its 4 warp schedulers
    threads: int  # MAX_THREADS_PER_MULTIPROCESSOR
    blocks: int  # MAX_BLOCKS_PER_MULTIPROCESSOR
    shared: int  # MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, bytes
    reserved: int  # RESERVED_SHARED_MEMORY_PER_BLOCK, bytes each block takes beside its own


H100 = Multiprocessor(65536, 2048, 32, 233472, 1024)
H100_MULTIPROCESSORS = 132  # an H100 SXM's (80 GB): the GPU the benchmarks' figures without a GPU are for
SCHEDULERS = 4  # warp schedulers (sub-partitions) of a multiprocessor since compute capability 7.0: a warp's
# registers come from its scheduler's quarter of the file
REGISTER_UNIT = 256  # registers are given to a warp in units of this many
SHARED_UNIT = 128  # and shared memory to a block in units of this many bytes (compute capability 8.0 and up)


def multiprocessors() -> int:
    """The GPU's streaming multiprocessors (1 in the simulator)."""
    return int(getattr(cuda().get_current_device(), "MULTIPROCESSOR_COUNT", 1))


@functools.cache
def multiprocessor() -> Multiprocessor:
    """This GPU's multiprocessor (an H100's under the simulator)."""
    if simulated():
        return H100
    device = cuda().get_current_device()
    return Multiprocessor(*(int(getattr(device, name)) for name in (
        "MAX_REGISTERS_PER_MULTIPROCESSOR", "MAX_THREADS_PER_MULTIPROCESSOR", "MAX_BLOCKS_PER_MULTIPROCESSOR",
        "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", "RESERVED_SHARED_MEMORY_PER_BLOCK")))


def _limits(registers: int, threads: int, shared: int, sm: Multiprocessor) -> dict[str, int]:
    """The blocks of a kernel one multiprocessor could hold by each of its limits, by the rules of CUDA's occupancy
    calculator (cuda_occupancy.h): ``registers`` a thread, ``threads`` a block, ``shared`` bytes a block."""
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // REGISTER_UNIT) * REGISTER_UNIT
    return {"registers": SCHEDULERS * (sm.registers // SCHEDULERS // per_warp) // warps,
            "threads": sm.threads // (32 * warps), "blocks": sm.blocks,
            "shared memory": sm.shared // (-(-(shared + sm.reserved) // SHARED_UNIT) * SHARED_UNIT)}


def resident_blocks(registers: int, threads: int, shared: int, sm: Multiprocessor = H100) -> tuple[int, str]:
    """How many blocks of a kernel one multiprocessor runs at once, and what limits them (every limit reached, joined
    by "and"): ``registers`` a thread, ``threads`` a block, ``shared`` bytes a block (static and dynamic)."""
    limits = _limits(registers, threads, shared, sm)
    fewest = min(limits.values())
    return fewest, " and ".join(name for name, value in limits.items() if value == fewest)


def register_cap(threads: int, shared: int, sm: Multiprocessor = H100) -> int:
    """The most registers a thread of a kernel may use without their limiting its resident blocks below what its
    threads, the block count and its shared memory allow: a multiple of 8 up to 255, at least 64 (below, the
    kernels spill)."""
    others = min(value for name, value in _limits(8, threads, shared, sm).items() if name != "registers")
    return next((cap for cap in range(248, 64, -8) if _limits(cap, threads, shared, sm)["registers"] >= others), 64)


REGISTER_CAP = False  # each kernel launched compiled with at most register_cap(...) registers a thread (numba's
# max_registers; more resident blocks where the registers limit them, at the cost of spills): an experiment switch
# that gpu_profile.py and bench_gpu_compressive.py time beside the default (reports/gpu/kernel_resources.md shows
# which kernels it changes); which is faster is still to be measured on a GPU


def capped(kernel: Any, threads: int, shared: int, always: bool = False) -> Any:
    """``kernel`` (a numba CUDA dispatcher) as launched with blocks of ``threads`` threads and ``shared`` bytes of
    shared memory each: itself, or with :data:`REGISTER_CAP` (or ``always``: a kernel capped by default) its copy
    compiled with at most :func:`register_cap` registers a thread (once per process: not in numba's cache, whose
    index does not tell the two apart).  The simulator has no registers: the kernel itself."""
    if not (REGISTER_CAP or always) or simulated():
        return kernel
    return with_max_registers(kernel, register_cap(threads, shared, multiprocessor()))


@functools.cache
def with_max_registers(kernel: Any, registers: int) -> Any:
    """A copy of ``kernel`` compiled with at most ``registers`` registers a thread (numba's ``max_registers``), once
    per process."""
    return cuda().jit(max_registers=registers)(kernel.py_func)
