"""What both GPU kernel modules (:mod:`.eisner`, plain parsing; :mod:`.hook`, compressive parsing) compile from one
home: the CPU's log-space ⊕ as device functions, the integer types of their hot loops, and filling a batch row.

Defined without a GPU (numba-cuda must be installed); the entry points ask :func:`.runtime.cuda` before a launch.
"""

from __future__ import annotations

import numba

from ..compressive.marginals import log_add, log_merge
from ..jit import GPU_KERNEL_SOURCES, share_stamp
from . import runtime

cuda = runtime.import_numba_cuda()
device = cuda.jit(device=True)

from numba.cuda.core import caching  # noqa: E402  (numba-cuda's own cache, imported with it above)

share_stamp(tuple(caching.CacheImpl._locator_classes), GPU_KERNEL_SOURCES)  # hook.py's cached kernels compile these
# functions (and the copies jit.with_globals makes): numba checks a cached kernel against its own file only

int32 = numba.int32  # the places of the hot loops: numba's integers are 64-bit (two registers each, several
# instructions an add)
uint32 = numba.uint32  # a place as an index: numba adds the length to a negative signed index, not to an unsigned one

log_add_device = device(log_add)  # log(exp(a) + exp(b)) (compbench_solvers.compressive.marginals)
log_merge_device = device(log_merge)  # ⊕ of running log-sum-exps, one exp each (the same module)


@device
def fill(array, b, value, rank, members):
    """array[b, :] = value, by ``members`` threads (this one ``rank``).  A strided ``while`` loop: numba's range with
    a step that is not a constant divides by it, in 64 bits (a subroutine call on a GPU)."""
    k = rank
    while k < array.shape[1]:
        array[b, k] = value
        k += members
