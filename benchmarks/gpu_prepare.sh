#!/usr/bin/env bash
# What benchmarks/gpu_lease.sh needs beside the checkout, made here before a lent GPU machine is asked for (that
# machine reaches no registry, and every session's checkout starts without these; docs/gpu.md):
#   .whl/       wheels for its Python 3.12 (supar, torch-struct, highspy at this venv's version, numba-cuda 0.30.4 in
#               case its own does not import, pytest and hypothesis with their needs)
#   .gpu-site/  compbench itself, installed without its dependencies (the machine has numpy, numba, matplotlib)
#   .gpu-data/  google-test.npz: Google's test split at its gold lengths, scored by a model trained here (scores
#               only, no text; bench_gpu_compressive.py --make-google)
# The three are ignored through .git/info/exclude, so they travel only when a call names them in carry:
#     benchmarks/gpu_prepare.sh ../shared/data/google-sentence-compression      # about 3 minutes on 2 cores
#     run(command="bash benchmarks/gpu_lease.sh $OUT tests plain", carry=[".whl", ".gpu-site", ".gpu-data"])
# A second call remakes only what is missing (.gpu-site/ too: gpu_lease.sh copies the checkout's code over it and
# refuses to run when pyproject.toml, whose entry points the install holds, changed).  PYTHON (default
# .venv/bin/python) trains the model; EPOCHS (default 2) is its perceptron's passes (the DP's cost hardly depends on
# the scores, so a short training does for timing).
set -euo pipefail
corpus=${1:?the directory of the Google compression corpus}
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
for path in /.whl/ /.gpu-site/ /.gpu-data/; do
    grep -qxF "$path" .git/info/exclude 2>/dev/null || echo "$path" >> .git/info/exclude
done
if [[ ! -d .whl ]]; then
    highspy=$("$python" -c "import importlib.metadata as m; print(m.version('highspy'))")
    mkdir -p .whl.tmp
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d .whl.tmp supar==1.1.4 torch-struct==0.5 "highspy==$highspy" \
        numba-cuda==0.30.4 pytest pluggy iniconfig pygments hypothesis sortedcontainers packaging
    mv .whl.tmp .whl
fi
if [[ ! -d .gpu-site ]]; then
    rm -rf .gpu-site.tmp
    python3 -m pip install -q --no-deps --no-compile --target .gpu-site.tmp .
    cp pyproject.toml .gpu-site.tmp/  # gpu_lease.sh copies the checkout's code over it, and checks that this is current
    mv .gpu-site.tmp .gpu-site
fi
if [[ ! -f .gpu-data/google-test.npz ]]; then
    mkdir -p .gpu-data
    "$python" -m compbench train --corpus google --data "$corpus" --out .gpu-data/google-model.npz \
        --objective perceptron --epochs "${EPOCHS:-2}" --quiet
    "$python" benchmarks/bench_gpu_compressive.py --make-google "$corpus" --model .gpu-data/google-model.npz \
        --google .gpu-data/google-test.npz
    rm .gpu-data/google-model.npz
fi
du -sh .whl .gpu-site .gpu-data | tr '\n' ' '
echo "(at most 64 MiB travel in one call, the checkout included)"
