#!/usr/bin/env bash
# run.sh — the README's first command: install what is missing, build, run the default job
# on the bundled Cora dataset.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh "$root/build"
echo "== cgnn info data/cora"
./build/cgnn info data/cora
echo "== cgnn bench sample (short sampling run on Cora)"
./build/cgnn bench sample --dataset data/cora --fanouts 10,5 --batch 128 --batches 10 --reps 3
