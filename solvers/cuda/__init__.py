"""The hook-trick chart on the GPU (numba's CUDA target): see :mod:`.runtime` for what it needs."""
