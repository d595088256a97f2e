#!/usr/bin/env bash
# Regenerates every shipped instance set (byte for byte: the generator is seeded) and, beside each, its certified
# optima (x.jsonl -> x.solu.json: two exact methods agreed; their creation date changes).  Run from the repo root:
#   bash instances/generate.sh
set -euo pipefail
cd "$(dirname "$0")"
for kind in gaussian integer-ties forbidden distance; do
  compbench generate --kind "$kind" --n 8 --count 30 --seed 1 --out "small-$kind-n8.jsonl" --force
  compbench generate --kind "$kind" --n 25 --count 10 --seed 1 --out "$kind-n25.jsonl" --force
done
compbench generate --kind gaussian --n 8 --count 30 --seed 2 --single-root --force \
  --out small-gaussian-n8-single-root.jsonl
compbench generate --kind integer-ties --n 8 --count 30 --seed 3 --free --out small-integer-ties-n8-free.jsonl --force
# The example of the specification is written by hand: only its certified optima are generated.
compbench certify ex1.json
