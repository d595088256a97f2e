#!/usr/bin/env bash
# The GPU benchmarks in one call on a lent machine with a CUDA GPU and no network (docs/gpu.md): what travelled in
# .whl/ (supar, torch-struct, highspy; numba-cuda in case the machine's own does not import; pytest and hypothesis
# for the tests) is installed under /tmp/site, compbench from .gpu-site/, Google's scores read from .gpu-data/ (all
# three made beforehand by benchmarks/gpu_prepare.sh, and named in the call's carry: [".whl", ".gpu-site",
# ".gpu-data"]), then the parts named after the output folder (all by default), each writing into
# it under a time limit of its own so that the whole call fits a short lease:
#   tests        tests/test_cuda_dp.py and test_cuda_tree.py on the GPU (against brute force and the CPU kernels;
#                small batches, so their costliest sentences get teams of several blocks, which the simulator cannot run)
#   plain        bench_gpu.py: plain parsing against supar and torch-struct
#   compressive  bench_gpu_compressive.py: cuda-dp and device="cuda" against the CPU, Google's test split
#   curve        bench_gpu_curve.py: sentences per second against n beside the CPU DP and the ILP
#   profile      gpu_profile.py: each workload's copies and kernels on a timeline (torch's profiler) into OUT/profile,
#                and Nsight Compute's counters of the kernels whose rows missed their goals (ncu-*.txt there)
#     benchmarks/gpu_lease.sh OUT tests plain               # up to 6.7 minutes,
#     benchmarks/gpu_lease.sh OUT compressive curve         # up to 5.6 minutes,
#     benchmarks/gpu_lease.sh OUT profile                   # up to 6.5 minutes: one call's limit is 10 minutes and a
#                                                           # session's device time 15, starts included: the first
#                                                           # two, in that order (every kernel changed since the
#                                                           # last GPU run: reports/gpu/kernel_resources.md; the
#                                                           # tests run the new chart layouts, the plain sums'
#                                                           # scaled probabilities and torch-allocated results on
#                                                           # the GPU first), unless a part has newer questions
set -uo pipefail
out=${1:?the output folder}
shift
parts=" ${*:-tests plain compressive curve profile} "
wants() { [[ "$parts" == *" $1 "* ]]; }
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/supar-*.whl \
    .whl/torch_struct-*.whl .whl/highspy-*.whl || exit 2
# the code as it is in this checkout (.gpu-site may be older than it; its metadata, the entry points, may not)
cmp -s pyproject.toml .gpu-site/pyproject.toml || { echo "pyproject.toml changed since gpu_prepare.sh: rerun it"; exit 2; }
cp -r compbench/. .gpu-site/compbench/ && cp -r solvers/. .gpu-site/compbench_solvers/ || exit 2
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
# where numba finds NVVM, NVRTC and the static cudadevrt (which the teams' cooperative kernel links with)
python3 -c "from numba.cuda.cudadrv import libs; libs.test()" > "$out/cuda_libs.txt" 2>&1
if wants tests; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/pytest-*.whl \
        .whl/pluggy-*.whl .whl/iniconfig-*.whl .whl/pygments-*.whl .whl/hypothesis-*.whl .whl/sortedcontainers-*.whl \
        .whl/packaging-*.whl 2>&1 | tail -2
    timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_dp.py tests/test_cuda_tree.py 2>&1 \
        | tail -15 | tee "$out/gpu_tests.log"
fi
cd benchmarks
# the compressive benchmarks' CPU kernels compile in the background meanwhile (numba caches them for their processes);
# bench_gpu.py compiles the ones it needs itself, in a process of its own, while it compiles its GPU kernels
python3 -c "
import numpy as np, compbench
compbench.get_solver('hook-dp').warm_up()
compbench.marginals_many([compbench.generate('gaussian', 4, seed=0)] * 2, jobs=1)
" > "$out/cpu_warmup.log" 2>&1 &
wants plain && timeout 250 python3 bench_gpu.py --budget 210 --out "$out/gpu_plain.txt" 2>&1 \
    | tee "$out/gpu_plain.log"
wants compressive && timeout 240 python3 bench_gpu_compressive.py --google ../.gpu-data/google-test.npz --repeats 5 \
    --cpu-repeats 2 --out "$out/gpu_compressive.md" 2>&1 | tee "$out/gpu_compressive.log"
wants curve && timeout 95 python3 bench_gpu_curve.py --batch 1024 --ilp-count 16 --ilp-limit 8 \
    --out "$out/gpu_curve.json" 2>&1 | tee "$out/gpu_curve.log"
if wants profile; then
    mkdir -p "$out/profile"
    timeout 150 python3 gpu_profile.py --google ../.gpu-data/google-test.npz --trace "$out/profile" \
        > "$out/profile.log" 2>&1
    tail -3 "$out/profile.log"
    ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
    [[ -n "$ncu" ]] || echo "no ncu on this machine: no counters"
    [[ -n "$ncu" ]] && for workload in compressive-free-n25-gpu compressive-free-n25-gpu-capped plain-map-n10-gpu \
            plain-logz-n25-gpu plain-marginals-n25-gpu plain-marginals-n100-gpu; do  # one process each: apart
        timeout 40 "$ncu" --clock-control none --section LaunchStats --section Occupancy --section SpeedOfLight \
            --section MemoryWorkloadAnalysis --section WarpStateStats python3 gpu_profile.py --workload "$workload" \
            > "$out/profile/ncu-$workload.txt" 2>&1
        echo "ncu $workload: exit status $?"
    done
fi
