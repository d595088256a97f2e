#!/usr/bin/env bash
# The GPU benchmarks in one call on a lent machine with a CUDA GPU and no network (docs/gpu.md): what travelled in
# .whl/ (supar, torch-struct, highspy; numba-cuda in case the machine's own does not import) is installed under
# /tmp/site, compbench from .gpu-site/ (a plain install made beforehand: pip install --no-deps --target .gpu-site .),
# then bench_gpu.py (plain parsing against supar and torch-struct), bench_gpu_compressive.py and bench_gpu_curve.py
# write into $1, each under a time limit of its own so that the whole call fits a short lease.
set -uo pipefail
out=${1:?the output folder}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/supar-*.whl \
    .whl/torch_struct-*.whl .whl/highspy-*.whl || exit 2
export PYTHONPATH="$PWD/.gpu-site:/tmp/site"
if ! python3 -c "import numba.cuda" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/numba_cuda-*.whl || exit 2
fi
{
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
    python3 -c "import sys, numpy, numba, torch; from numba import cuda; print(sys.version.split()[0], 'numpy',
numpy.__version__, 'numba', numba.__version__, 'torch', torch.__version__, 'cuda available', cuda.is_available())"
    python3 -m pip show numba-cuda 2>/dev/null | head -2
    nproc
} 2>&1 | tee "$out/machine.txt"
cd benchmarks
# the CPU kernels compile in the background while the GPU's do (numba caches them for the benchmarks' processes)
python3 -c "
import numpy as np, compbench
for name in ('hook-dp', 'resource-dp'):
    compbench.get_solver(name).warm_up()
compbench.tree_marginals_many(np.zeros((2, 4, 4)), jobs=1)
compbench.marginals_many([compbench.generate('gaussian', 4, seed=0)] * 2, jobs=1)
" > "$out/cpu_warmup.log" 2>&1 &
timeout 250 python3 bench_gpu.py --budget 170 --repeats 3 --row-seconds 0.8 --out "$out/gpu_plain.txt" \
    2>&1 | tee "$out/gpu_plain.log"
timeout 170 python3 bench_gpu_compressive.py --google ../.gpu-data/google-test.npz --repeats 5 --cpu-repeats 2 \
    --out "$out/gpu_compressive.md" 2>&1 | tee "$out/gpu_compressive.log"
timeout 110 python3 bench_gpu_curve.py --batch 1024 --ilp-count 16 --ilp-limit 10 --out "$out/gpu_curve.json" \
    2>&1 | tee "$out/gpu_curve.log"
