#!/usr/bin/env bash
# test_train_weighted_part.sh CGNN — weighted sampling (trainerArgs.sampling_weight) on a
# partitioned graph: Cora with an edge weight feature, 2 parts (cgnn partition copies the edge
# features per part) on 2 ranks, trains the same model and metrics byte for byte as the
# replicated run with the same seed assignment (global) and as the weighted single-process run's
# sampling (the draws are keyed by original ids, the weights follow the edges); and differs from
# the uniform run. Server-client mode is refused (exit 2 naming the key).
set -u
CGNN=${1:?usage: test_train_weighted_part.sh path/to/cgnn}
TMP_PREFIX=cgnn-wpart
source "$(dirname "$0")/mpi_test_lib.sh"
run() { # run NP NAME
  timeout -k 10 300 "${MPIRUN[@]}" -np "$1" "$CGNN" train --task_config_uri="$TMP/$2.yaml" >"$TMP/$2.out" 2>"$TMP/$2.err"
}
same() { # same A B
  cmp -s "$TMP/$1/model.safetensors" "$TMP/$2/model.safetensors" && cmp -s "$TMP/$1/eval_metrics.json" "$TMP/$2/eval_metrics.json"
}

mkdir -p "$TMP/cora"
for f in data/cora/*.npy; do ln -s "$SRC/$f" "$TMP/cora/"; done
/usr/bin/python3 -c "
import numpy as np, sys
d = sys.argv[1]
E = np.load(d + '/edges.npy').shape[1]
r = np.random.default_rng(0)
w = r.random(E).astype(np.float32); w[r.random(E) < 0.3] = 0
np.save(d + '/w.npy', w)
" "$TMP/cora" || { echo "FAIL: fixture"; exit 1; }
{
  sed -n '/^tasks:/q;p' data/cora/metadata.yaml
  printf '  - domain: edge\n    name: w\n    format: numpy\n    path: w.npy\n'
  sed -n '/^tasks:/,$p' data/cora/metadata.yaml
} > "$TMP/cora/metadata.yaml"
part "$TMP/cora" 2 metis cora2
[[ -f $TMP/cora2/part0/edge-w.npy && -f $TMP/cora2/part1/edge-w.npy ]] && ok || bad "the parts have no edge feature w: $(ls -R "$TMP/cora2" | head -20)"

NC=(-e 's/num_epochs: "200"/num_epochs: "3"/' -e 's/main_sample_batch_size: "140"/main_sample_batch_size: "32"/'
    -e 's/    seed: "0"/    seed: "0"\n    seed_assignment: global/')
W=(-e 's/^\(    gnn_model_class_path: .*\)$/\1\n    sampling_weight: w/')
config w_rep cora_graphsage "$TMP/cora" "${NC[@]}" "${W[@]}"
config w_par cora_graphsage "$TMP/cora2" "${NC[@]}" "${W[@]}"
config u_par cora_graphsage "$TMP/cora2" "${NC[@]}"
run 2 w_rep && ok || bad "w_rep failed: $(tail -3 "$TMP/w_rep.err")"
run 2 w_par && ok || bad "w_par failed: $(tail -3 "$TMP/w_par.err")"
run 2 u_par && ok || bad "u_par failed: $(tail -3 "$TMP/u_par.err")"
same w_rep w_par && ok || bad "weighted on 2 parts differs from replicated: $(grep '^test:' "$TMP/w_rep.out") vs $(grep '^test:' "$TMP/w_par.out")"
same w_par u_par && bad "weighted on parts trained the uniform model" || ok
grep -q "weighted sampling: draw weights from edge feature 'w'" "$TMP/w_par.err" && ok || bad "w_par: no weighted log line"

echo "test_train_weighted_part: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
