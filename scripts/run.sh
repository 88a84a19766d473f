#!/usr/bin/env bash
# run.sh — the README's first command: install what is missing, build, run the default job
# on the bundled Cora dataset: train GraphSAGE and print its test accuracy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh
bash scripts/build.sh "$root/build"
echo "== cgnn info data/cora"
./build/cgnn info data/cora
echo "== cgnn train: GraphSAGE on Cora (examples/cora_graphsage.yaml)"
./build/cgnn train --job_name=cora_graphsage --task_config_uri=examples/cora_graphsage.yaml
echo "== outputs"
ls -l out/cora_graphsage out/cora_graphsage/tensorboard
cat out/cora_graphsage/eval_metrics.json
